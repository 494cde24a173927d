// Blocked signals read through a signalfd: sbx's supervisor (its Linux
// backend's SignalWatch, exec/backend_linux.cc) and the helper (SignalRelay,
// linux-helper/process.cc) watch theirs so.  The signals must be blocked
// beforehand (util/signal_set.h).  Linux only, header only.
#pragma once

#include <signal.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include <cstddef>

#include "util/fd.h"

namespace sbx {

// A signalfd reading set, close-on-exec (and flags); invalid, with errno
// set, when it cannot be made.
inline Fd open_signalfd(const sigset_t& set, int flags = 0) { return Fd(::signalfd(-1, &set, SFD_CLOEXEC | flags)); }

// One read of fd: up to max (at most 8) of the signals pending, each given
// to each in the order received.  Returns how many were read: 0 when none
// was pending or the read failed.
template <class Each>
std::size_t read_signals(int fd, Each&& each, std::size_t max = 8) {
    signalfd_siginfo info[8];
    if (max > 8) max = 8;
    const ssize_t n = ::read(fd, info, max * sizeof info[0]);
    if (n <= 0) return 0;
    const std::size_t count = static_cast<std::size_t>(n) / sizeof info[0];
    for (std::size_t i = 0; i < count; ++i) each(info[i]);
    return count;
}

}  // namespace sbx
