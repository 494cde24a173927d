// spawn() on Linux: clone(CLONE_VM | CLONE_VFORK) and a pidfd (exec/spawn.h).
#include <sched.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <memory>

#include <fmt/format.h>

#include "exec/spawn.h"
#include "util/clone_stack.h"
#include "util/error.h"

namespace sbx::exec {

namespace {

// Big enough for execve, execvp's PATH search and a few frames of the
// caller's (ASan's frames included).
constexpr std::size_t kChildStack = 64 * 1024;

std::optional<siginfo_t> wait_pidfd(int pidfd, int options) {
    siginfo_t info{};
    while (::waitid(static_cast<idtype_t>(P_PIDFD), static_cast<id_t>(pidfd), &info, options) != 0) {
        if (errno != EINTR) return std::nullopt;
    }
    if (info.si_pid == 0) return std::nullopt;
    return info;
}

}  // namespace

Child::~Child() {
    if (reaped_) return;
    kill_group();
    wait_pidfd(pidfd_.get(), WEXITED);
}

std::optional<siginfo_t> Child::try_wait() {
    if (reaped_) return std::nullopt;
    auto info = wait_pidfd(pidfd_.get(), WEXITED | WNOHANG);
    if (info) reaped_ = true;
    return info;
}

std::optional<siginfo_t> Child::wait_until(std::optional<Clock::time_point> until) {
    if (reaped_) return std::nullopt;
    if (!until) {
        auto info = wait_pidfd(pidfd_.get(), WEXITED);
        if (info) reaped_ = true;
        return info;
    }
    pollfd p{pidfd_.get(), POLLIN, 0};
    poll_until(&p, 1, until);
    return try_wait();
}

bool Child::take_stop() {
    if (reaped_) return false;
    const auto info = wait_pidfd(pidfd_.get(), WSTOPPED | WNOHANG);
    return info && info->si_code == CLD_STOPPED;
}

Child spawn(const char* what, int (*entry)(void*), void* arg) {
    auto stack = std::make_unique_for_overwrite<char[]>(kChildStack);
    const pid_t pid = clone_on_stack(stack.get(), kChildStack, CLONE_VM | CLONE_VFORK | SIGCHLD, entry, arg);
    const int saved = errno;
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
