// The supervisor's portable backend (exec/backend.h), POSIX only: what macOS
// runs, and what Linux runs with -Dsupervisor=portable.  The signals reach
// the poll loop through a self-pipe that their handlers write; there is no
// timer to wake a stopped sbx, no splice, no subreaper.
#include <dirent.h>
#include <fcntl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <cstring>

#include <fmt/format.h>

#include "exec/backend.h"
#include "util/error.h"
#include "util/signal_set.h"

namespace sbx::exec {

const char* const kSupervisorBackend = "portable";

namespace {

constexpr std::array kHandled{SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGCONT, SIGCHLD};

// The self-pipe's write end, for the handlers: the one piece of global state
// a signal handler needs (set and cleared by SignalWatch, of which only one
// exists at a time).
volatile sig_atomic_t g_signal_pipe = -1;
// The WakeTimer's process, whose SIGCONT is the deadline's and no fg or bg.
volatile sig_atomic_t g_timer_pid = 0;

constexpr unsigned char kFromTimer = 0x80;  // above every signal number

extern "C" void on_signal(int signo, siginfo_t* info, void*) {
    const int saved = errno;
    unsigned char byte = static_cast<unsigned char>(signo);
    if (signo == SIGCONT && info != nullptr && g_timer_pid > 0 && info->si_pid == g_timer_pid) byte |= kFromTimer;
    if (g_signal_pipe >= 0) (void)!::write(g_signal_pipe, &byte, 1);  // full: the loop has some to read anyway
    errno = saved;
}

bool set_flags(int fd) {
    return ::fcntl(fd, F_SETFD, FD_CLOEXEC) == 0 && ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) | O_NONBLOCK) == 0;
}

}  // namespace

// SIGTTOU is blocked, SIGPIPE ignored; the watched signals (SIGCHLD with its
// stops, for job control) go to on_signal.
SignalWatch::SignalWatch(bool terminal) : terminal_(terminal) {
    int fds[2];
    if (::pipe(fds) != 0) throw Error(fmt::format("cannot create the signals' pipe: {}", std::strerror(errno)));
    fd_ = Fd(fds[0]);
    write_end_ = Fd(fds[1]);
    if (!set_flags(fds[0]) || !set_flags(fds[1]))
        throw Error(fmt::format("cannot set up the signals' pipe: {}", std::strerror(errno)));
    const sigset_t block = signal_set({SIGTTOU});
    if (::sigprocmask(SIG_BLOCK, &block, &old_mask_) != 0)
        throw Error(fmt::format("cannot block signals: {}", std::strerror(errno)));
    g_signal_pipe = write_end_.get();
    struct sigaction ign {};
    ign.sa_handler = SIG_IGN;
    ::sigaction(SIGPIPE, &ign, &old_actions_[0]);
    struct sigaction handled {};
    handled.sa_sigaction = on_signal;
    handled.sa_flags = SA_RESTART | SA_SIGINFO;
    sigfillset(&handled.sa_mask);
    for (std::size_t i = 0; i < kHandled.size(); ++i) ::sigaction(kHandled[i], &handled, &old_actions_[i + 1]);
    if (terminal) {
        ::sigaction(SIGWINCH, &handled, &old_actions_[kHandled.size() + 1]);
        ::sigaction(SIGTSTP, &handled, &old_actions_[kHandled.size() + 2]);
    }
}

SignalWatch::~SignalWatch() {
    if (terminal_) {
        ::sigaction(SIGWINCH, &old_actions_[kHandled.size() + 1], nullptr);
        ::sigaction(SIGTSTP, &old_actions_[kHandled.size() + 2], nullptr);
    }
    for (std::size_t i = 0; i < kHandled.size(); ++i) ::sigaction(kHandled[i], &old_actions_[i + 1], nullptr);
    ::sigaction(SIGPIPE, &old_actions_[0], nullptr);
    g_signal_pipe = -1;
    ::sigprocmask(SIG_SETMASK, &old_mask_, nullptr);
}

std::optional<SignalEvent> SignalWatch::next() {
    unsigned char byte = 0;
    while (true) {
        const ssize_t n = ::read(fd_.get(), &byte, 1);
        if (n == 1) return SignalEvent{byte & ~kFromTimer, (byte & kFromTimer) != 0};
        if (n < 0 && errno == EINTR) continue;
        return std::nullopt;
    }
}

// A process of its own that sleeps until the time and sends sbx SIGCONT
// (POSIX has timer_create, macOS has not): in a process group of its own and
// deaf to the terminal's stop signals, so that the job's ^Z, or sbx's own
// SIGTSTP to its group, does not stop it with sbx.  It ends after its one
// SIGCONT, when sbx is gone, or when it is replaced (SIGKILL).
namespace {

// Ends the timer's process, unless it has ended and was reaped already (by
// the supervisor's reaping of its children: its pid may be another's now).
void end_timer_process(pid_t pid) {
    g_timer_pid = 0;
    if (pid <= 0 || ::waitpid(pid, nullptr, WNOHANG) != 0) return;  // reaped now, or before
    ::kill(pid, SIGKILL);
    ::waitpid(pid, nullptr, 0);
}

}  // namespace

WakeTimer::WakeTimer() = default;

WakeTimer::~WakeTimer() { end_timer_process(static_cast<pid_t>(reinterpret_cast<std::intptr_t>(id_))); }

bool WakeTimer::at(std::chrono::steady_clock::time_point t) {
    using namespace std::chrono;
    end_timer_process(static_cast<pid_t>(reinterpret_cast<std::intptr_t>(id_)));
    id_ = nullptr;
    const pid_t parent = ::getpid();
    const int ceiling = open_fd_ceiling();
    const auto wait_us = std::max<std::int64_t>(duration_cast<microseconds>(t - steady_clock::now()).count(), 0);
    sigset_t all, saved;
    sigfillset(&all);
    ::sigprocmask(SIG_SETMASK, &all, &saved);
    const pid_t pid = ::fork();
    if (pid == 0) {
        // It holds none of sbx's files: a pipe's reader would wait for it
        // (the exec status pipe, the command's output, sbx's stdout).
        const int null = ::open("/dev/null", O_RDWR);
        for (int fd = 0; fd <= 2 && null >= 0; ++fd) ::dup2(null, fd);
        for (int fd = 3; fd <= ceiling; ++fd) ::close(fd);
        ::setpgid(0, 0);
        struct sigaction dfl {};
        dfl.sa_handler = SIG_DFL;
        struct sigaction ign {};
        ign.sa_handler = SIG_IGN;
        for (int s = 1; s < NSIG; ++s)
            ::sigaction(s, s == SIGTSTP || s == SIGTTIN || s == SIGTTOU ? &ign : &dfl, nullptr);
        sigset_t none;
        sigemptyset(&none);
        ::sigprocmask(SIG_SETMASK, &none, nullptr);
        timespec left{static_cast<time_t>(wait_us / 1'000'000), static_cast<long>(wait_us % 1'000'000) * 1000};
        while (::nanosleep(&left, &left) != 0 && errno == EINTR) {
        }
        if (::getppid() == parent) ::kill(parent, SIGCONT);
        ::_exit(0);
    }
    if (pid > 0) {
        ::setpgid(pid, pid);  // (either side may run first)
        g_timer_pid = pid;
        id_ = reinterpret_cast<void*>(static_cast<std::intptr_t>(pid));
    }
    ::sigprocmask(SIG_SETMASK, &saved, nullptr);
    return pid > 0;
}

bool become_subreaper() { return false; }

// SIGTSTP's handler (the relay's SignalWatch) is set aside while it is sent.
void stop_self(bool whole_job) {
    struct sigaction dfl {
    }, old{};
    dfl.sa_handler = SIG_DFL;
    ::sigaction(SIGTSTP, &dfl, &old);
    ::kill(whole_job ? 0 : ::getpid(), SIGTSTP);
    ::sigaction(SIGTSTP, &old, nullptr);
}

void child_dies_with_parent() {}

void cloexec_from_3(int ceiling) {
    for (int fd = 3; fd <= ceiling; ++fd) ::fcntl(fd, F_SETFD, FD_CLOEXEC);
}

int open_fd_ceiling() {
    int highest = 2;
    DIR* dir = ::opendir("/dev/fd");
    if (dir == nullptr) return static_cast<int>(std::min(::sysconf(_SC_OPEN_MAX), 65536L));
    while (const dirent* d = ::readdir(dir)) highest = std::max(highest, std::atoi(d->d_name));
    ::closedir(dir);
    return highest;
}

ssize_t splice_pipe(int, int, std::size_t, bool) {
    errno = EINVAL;
    return -1;
}

void grow_pipe(int) {}

}  // namespace sbx::exec
