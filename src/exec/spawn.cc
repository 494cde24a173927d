#include "exec/spawn.h"

#include <sched.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <memory>

#include <fmt/format.h>

#include "util/clone_stack.h"
#include "util/error.h"

namespace sbx::exec {

namespace {

// Big enough for execve, execvp's PATH search and a few frames of the
// caller's (ASan's frames included).
constexpr std::size_t kChildStack = 64 * 1024;

struct Start {
    int (*entry)(void*);
    void* arg;
    CloneStack* stack;  // ASan's view of the child's stack (empty without ASan)
};

int start_entry(void* p) {
    const auto& start = *static_cast<const Start*>(p);
    start.stack->in_child();
    return start.entry(start.arg);
}

std::optional<siginfo_t> wait_pidfd(int pidfd, int options) {
    siginfo_t info{};
    while (::waitid(static_cast<idtype_t>(P_PIDFD), static_cast<id_t>(pidfd), &info, WEXITED | options) != 0) {
        if (errno != EINTR) return std::nullopt;
    }
    if (info.si_pid == 0) return std::nullopt;
    return info;
}

}  // namespace

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

Child::~Child() {
    if (reaped_) return;
    kill_group();
    wait_pidfd(pidfd_.get(), 0);
}

std::optional<siginfo_t> Child::try_wait() {
    if (reaped_) return std::nullopt;
    auto info = wait_pidfd(pidfd_.get(), WNOHANG);
    if (info) reaped_ = true;
    return info;
}

std::optional<siginfo_t> Child::wait_until(std::optional<Clock::time_point> until) {
    if (reaped_) return std::nullopt;
    if (!until) {
        auto info = wait_pidfd(pidfd_.get(), 0);
        if (info) reaped_ = true;
        return info;
    }
    pollfd p{pidfd_.get(), POLLIN, 0};
    poll_until(&p, 1, until);
    return try_wait();
}

void Child::kill_group() const {
    ::kill(-pid_, SIGKILL);
    ::kill(pid_, SIGKILL);
}

Child spawn(const char* what, int (*entry)(void*), void* arg) {
    auto stack = std::make_unique_for_overwrite<char[]>(kChildStack);
    CloneStack clone_stack(stack.get(), kChildStack);
    Start start{entry, arg, &clone_stack};
    clone_stack.before_clone();
    const pid_t pid = ::clone(start_entry, stack.get() + kChildStack, CLONE_VM | CLONE_VFORK | SIGCHLD, &start);
    const int saved = errno;
    clone_stack.after_clone();
    if (pid < 0) throw Error(fmt::format("cannot start {}: clone: {}", what, std::strerror(saved)));
    Fd pidfd(static_cast<int>(::syscall(SYS_pidfd_open, pid, 0)));
    if (!pidfd.valid()) {
        const int err = errno;
        ::kill(pid, SIGKILL);
        ::waitpid(pid, nullptr, 0);
        throw Error(fmt::format("cannot watch {}: pidfd_open: {}", what, std::strerror(err)));
    }
    return Child(pid, std::move(pidfd));
}

}  // namespace sbx::exec
