// The supervisor's Linux backend (exec/backend.h): the signals blocked and
// read through a signalfd, a POSIX timer that wakes a stopped sbx at its
// deadline, splice, big pipes, a child subreaper, close_range.
#include <fcntl.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstdint>
#include <cstring>

#include <fmt/format.h>

#include "exec/backend.h"
#include "util/error.h"
#include "util/signal_fd.h"
#include "util/signal_set.h"

namespace sbx::exec {

const char* const kSupervisorBackend = "linux";

namespace {

constexpr std::array kWatched{SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGCONT, SIGCHLD};

}  // namespace

// The watched signals and SIGTTOU are blocked (SIGCONT still continues sbx;
// the signalfd tells of it); SIGCHLD is made default so that the child is
// not auto-reaped.
SignalWatch::SignalWatch(bool terminal) : terminal_(terminal) {
    sigset_t block = signal_set(kWatched);
    if (terminal) {
        sigaddset(&block, SIGWINCH);
        sigaddset(&block, SIGTSTP);
    }
    sigaddset(&block, SIGTTOU);
    if (::sigprocmask(SIG_BLOCK, &block, &old_mask_) != 0)
        throw Error(fmt::format("cannot block signals: {}", std::strerror(errno)));
    struct sigaction ign {};
    ign.sa_handler = SIG_IGN;
    ::sigaction(SIGPIPE, &ign, &old_actions_[0]);
    struct sigaction dfl {};
    dfl.sa_handler = SIG_DFL;
    ::sigaction(SIGCHLD, &dfl, &old_actions_[1]);
    sigdelset(&block, SIGTTOU);
    fd_ = open_signalfd(block, SFD_NONBLOCK);
    if (!fd_.valid()) {
        const int err = errno;
        ::sigaction(SIGCHLD, &old_actions_[1], nullptr);
        ::sigaction(SIGPIPE, &old_actions_[0], nullptr);
        ::sigprocmask(SIG_SETMASK, &old_mask_, nullptr);
        throw Error(fmt::format("cannot create a signalfd: {}", std::strerror(err)));
    }
}

SignalWatch::~SignalWatch() {
    fd_.reset();
    ::sigaction(SIGCHLD, &old_actions_[1], nullptr);
    ::sigaction(SIGPIPE, &old_actions_[0], nullptr);
    ::sigprocmask(SIG_SETMASK, &old_mask_, nullptr);
}

std::optional<SignalEvent> SignalWatch::next() {
    std::optional<SignalEvent> event;
    read_signals(
        fd_.get(),
        [&](const signalfd_siginfo& si) {
            event = SignalEvent{static_cast<int>(si.ssi_signo), si.ssi_signo == SIGCONT && si.ssi_code == SI_TIMER};
        },
        1);
    return event;
}

// steady_clock is CLOCK_MONOTONIC (libstdc++ on Linux), as the timer's.
WakeTimer::WakeTimer() {
    sigevent ev{};
    ev.sigev_notify = SIGEV_SIGNAL;
    ev.sigev_signo = SIGCONT;
    timer_t id{};
    if (::timer_create(CLOCK_MONOTONIC, &ev, &id) != 0)
        throw Error(fmt::format("cannot create the deadline's timer: {}", std::strerror(errno)));
    id_ = id;
}

WakeTimer::~WakeTimer() { ::timer_delete(static_cast<timer_t>(id_)); }

bool WakeTimer::at(std::chrono::steady_clock::time_point t) {
    using namespace std::chrono;
    const auto ns = std::max<std::int64_t>(duration_cast<nanoseconds>(t.time_since_epoch()).count(), 1);
    itimerspec spec{};
    spec.it_value.tv_sec = static_cast<time_t>(ns / 1'000'000'000);
    spec.it_value.tv_nsec = static_cast<long>(ns % 1'000'000'000);
    return ::timer_settime(static_cast<timer_t>(id_), TIMER_ABSTIME, &spec, nullptr) == 0;
}

// SIGTSTP is blocked (watched): sent, it waits; unblocked, it is taken at
// once with its default action.
void stop_self(bool whole_job) {
    ::kill(whole_job ? 0 : ::getpid(), SIGTSTP);
    const sigset_t tstp = signal_set({SIGTSTP});
    ::sigprocmask(SIG_UNBLOCK, &tstp, nullptr);
    ::sigprocmask(SIG_BLOCK, &tstp, nullptr);
}

bool become_subreaper() { return ::prctl(PR_SET_CHILD_SUBREAPER, 1) == 0; }

void child_dies_with_parent() { ::prctl(PR_SET_PDEATHSIG, SIGKILL); }

void cloexec_from_3(int ceiling) {
    if (::close_range(3, ~0U, CLOSE_RANGE_CLOEXEC) == 0) return;
    for (int fd = 3; fd <= std::max(ceiling, 65535); ++fd) ::fcntl(fd, F_SETFD, FD_CLOEXEC);
}

int open_fd_ceiling() { return -1; }

ssize_t splice_pipe(int in, int out, std::size_t len, bool nonblocking) {
    return ::splice(in, nullptr, out, nullptr, len, SPLICE_F_MOVE | (nonblocking ? SPLICE_F_NONBLOCK : 0U));
}

// Best effort; an unprivileged user is capped by /proc/sys/fs/pipe-max-size.
void grow_pipe(int fd) { ::fcntl(fd, F_SETPIPE_SZ, 1 << 20); }

}  // namespace sbx::exec
