// Small RAII helpers for the approval module's own I/O (the session store and
// the approver).
#pragma once

#include <sys/file.h>
#include <unistd.h>

#include <utility>

#include "util/fd.h"

namespace sbx::approval::posix {

using Fd = ::sbx::Fd;

// Holds flock(LOCK_EX) on an open file until destroyed.
class FileLock {
public:
    explicit FileLock(int fd) : fd_(fd) {}
    FileLock(const FileLock&) = delete;
    FileLock& operator=(const FileLock&) = delete;
    ~FileLock() { ::flock(fd_, LOCK_UN); }

private:
    int fd_;
};

}  // namespace sbx::approval::posix
