// What both backends' spawns share (spawn_linux.cc, spawn_portable.cc).
#include "exec/spawn.h"

#include <signal.h>

#include <algorithm>
#include <cerrno>

namespace sbx::exec {

ExitStatus exit_status_of(const siginfo_t& info) {
    if (info.si_code == CLD_KILLED || info.si_code == CLD_DUMPED)
        return ExitStatus{128 + info.si_status, info.si_status};
    return ExitStatus{info.si_status, std::nullopt};
}

int poll_timeout(Clock::time_point now, std::optional<Clock::time_point> until) {
    if (!until) return -1;
    if (*until <= now) return 0;
    const auto ms = std::chrono::ceil<std::chrono::milliseconds>(*until - now).count();
    return static_cast<int>(std::min<long long>(ms, 1'000'000));
}

int poll_until(pollfd* fds, nfds_t n, std::optional<Clock::time_point> until) {
    while (true) {
        const int r = ::poll(fds, n, poll_timeout(Clock::now(), until));
        if (r >= 0 || errno != EINTR) return r;
    }
}

Child::Child(Child&& other) noexcept
    : pid_(other.pid_), pidfd_(std::move(other.pidfd_)), reaped_(std::exchange(other.reaped_, true)) {}

void Child::kill_group() const {
    ::kill(-pid_, SIGKILL);
    ::kill(pid_, SIGKILL);
}

}  // namespace sbx::exec
