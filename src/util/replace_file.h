// A file's whole content replaced at once: written to a temporary file
// beside it, synced, renamed over it, the directory synced.  A reader sees
// the old content or the new, never a part; a failure leaves the old (and
// no temporary file).  Header only: sbx's approval store, sbx trust and sbx
// learn --write-policy use it.
#pragma once

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>
#include <string_view>

#include <fmt/format.h>

#include "util/error.h"
#include "util/fd.h"
#include "util/path.h"

namespace sbx {

// Throws Error "WHAT PATH: cannot ...: REASON".
inline void replace_file(const std::string& path, std::string_view text, mode_t mode, std::string_view what) {
    auto failed = [&](std::string_view doing, int err) {
        return Error(fmt::format("{} {}: cannot {}: {}", what, path, doing, std::strerror(err)));
    };
    std::string tmp = path + ".tmp.XXXXXX";
    Fd tmp_fd(::mkostemp(tmp.data(), O_CLOEXEC));
    if (!tmp_fd.valid()) throw failed("create a temporary file beside it", errno);
    try {
        if (::fchmod(tmp_fd.get(), mode) != 0) throw failed("chmod " + tmp, errno);
        if (!write_all(tmp_fd.get(), text)) throw failed("write " + tmp, errno);
        if (::fsync(tmp_fd.get()) != 0) throw failed("sync " + tmp, errno);
        tmp_fd.reset();
        if (::rename(tmp.c_str(), path.c_str()) != 0) throw failed("replace it", errno);
    } catch (...) {
        ::unlink(tmp.c_str());
        throw;
    }
    Fd dir_fd(::open(parent_path(path).c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    if (dir_fd.valid()) (void)::fsync(dir_fd.get());
}

}  // namespace sbx
