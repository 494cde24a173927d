// spawn() with POSIX only (exec/spawn.h): fork, and waitpid to watch the
// child (macOS, and Linux with -Dsupervisor=portable).
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <thread>

#include <fmt/format.h>

#include "exec/spawn.h"
#include "util/error.h"

namespace sbx::exec {

namespace {

std::optional<siginfo_t> wait_pid(pid_t pid, int options) {
    siginfo_t info{};
    while (::waitid(P_PID, static_cast<id_t>(pid), &info, options) != 0) {
        if (errno != EINTR) return std::nullopt;
    }
    if (info.si_pid == 0) return std::nullopt;
    return info;
}

// The forked child runs no handler of sbx's: the caught signals go back to
// their default (as exec would make them), the ignored ones stay ignored.
void default_handlers() {
    for (int s = 1; s < NSIG; ++s) {
        struct sigaction old {};
        if (::sigaction(s, nullptr, &old) != 0) continue;
        if (!(old.sa_flags & SA_SIGINFO) && (old.sa_handler == SIG_DFL || old.sa_handler == SIG_IGN)) continue;
        struct sigaction dfl {};
        dfl.sa_handler = SIG_DFL;
        ::sigaction(s, &dfl, nullptr);
    }
}

}  // namespace

Child::~Child() {
    if (reaped_) return;
    kill_group();
    wait_pid(pid_, WEXITED);
}

std::optional<siginfo_t> Child::try_wait() {
    if (reaped_) return std::nullopt;
    auto info = wait_pid(pid_, WEXITED | WNOHANG);
    if (info) reaped_ = true;
    return info;
}

// No fd tells of the child's end here: waitpid, polled with a short backoff
// (1 ms growing to 10 ms) until the deadline.
std::optional<siginfo_t> Child::wait_until(std::optional<Clock::time_point> until) {
    if (reaped_) return std::nullopt;
    if (!until) {
        auto info = wait_pid(pid_, WEXITED);
        if (info) reaped_ = true;
        return info;
    }
    auto pause = std::chrono::milliseconds(1);
    while (true) {
        if (auto info = try_wait()) return info;
        const auto now = Clock::now();
        if (now >= *until) return std::nullopt;
        std::this_thread::sleep_for(std::min<Clock::duration>(pause, *until - now));
        pause = std::min(pause * 2, std::chrono::milliseconds(10));
    }
}

bool Child::take_stop() {
    if (reaped_) return false;
    const auto info = wait_pid(pid_, WSTOPPED | WNOHANG);
    return info && info->si_code == CLD_STOPPED;
}

Child spawn(const char* what, int (*entry)(void*), void* arg) {
    // No handler of sbx's may run in the child before it has reset them.
    sigset_t all, old;
    sigfillset(&all);
    ::sigprocmask(SIG_SETMASK, &all, &old);
    const pid_t pid = ::fork();
    if (pid == 0) {
        default_handlers();
        ::sigprocmask(SIG_SETMASK, &old, nullptr);
        ::_exit(entry(arg));
    }
    const int saved = errno;
    ::sigprocmask(SIG_SETMASK, &old, nullptr);
    if (pid < 0) throw Error(fmt::format("cannot start {}: fork: {}", what, std::strerror(saved)));
    return Child(pid, Fd());
}

}  // namespace sbx::exec
