// What the supervisor needs from the system beyond POSIX, in one of two
// backends chosen by meson (-Dsupervisor=linux|portable, meson_options.txt):
// backend_linux.cc (signalfd, a POSIX timer that wakes a stopped sbx, splice,
// big pipes, a child subreaper, close_range) and backend_portable.cc (POSIX
// only: a self-pipe written by signal handlers, a sleeping process as the
// timer, read/write, no subreaper), which macOS builds and Linux can build too, so that the
// integration tests run the code macOS runs.  The spawn itself is split the
// same way (spawn_linux.cc, spawn_portable.cc).
#pragma once

#include <signal.h>
#include <sys/types.h>

#include <chrono>
#include <optional>

#include "util/fd.h"

namespace sbx::exec {

// "linux" or "portable": the backend this build has (sbx doctor shows it).
extern const char* const kSupervisorBackend;

// One signal sbx received while it supervised.
struct SignalEvent {
    int signo = 0;
    bool timer = false;  // the WakeTimer's own SIGCONT (no fg/bg of the job)
};

// The signals the supervisor forwards and follows (SIGINT, SIGTERM, SIGHUP,
// SIGQUIT, SIGCONT, SIGCHLD; with `terminal`, the relay's SIGWINCH and
// SIGTSTP too), read through one fd that polls readable when one arrived;
// SIGTTOU blocked, SIGPIPE ignored (a closed stream is seen as
// EPIPE), SIGCHLD not auto-reaped.  All of it is restored on destruction.
// Only one may exist at a time (the portable backend's handlers write to
// its pipe).
class SignalWatch {
public:
    explicit SignalWatch(bool terminal = false);
    ~SignalWatch();
    SignalWatch(const SignalWatch&) = delete;
    SignalWatch& operator=(const SignalWatch&) = delete;

    int fd() const { return fd_.get(); }
    // The next signal received, nullopt when none is waiting.
    std::optional<SignalEvent> next();
    // The mask the caller had, for the command.
    const sigset_t& old_mask() const { return old_mask_; }

private:
    Fd fd_;
    Fd write_end_;  // portable: the handlers' end of the self-pipe
    sigset_t old_mask_{};
    struct sigaction old_actions_[9]{};
    bool terminal_ = false;
};

// A timer that sends sbx SIGCONT at a time of steady_clock, so that a
// deadline holds while sbx is stopped (a SIGCONT continues a stopped process
// even when blocked).  Linux: a POSIX timer (timer_create).  Portable
// (macOS has no timer_create): a forked process that sleeps until then and
// sends the SIGCONT (a child of sbx's, in a group of its own, killed and
// reaped when replaced or destroyed).
class WakeTimer {
public:
    WakeTimer();
    ~WakeTimer();
    WakeTimer(const WakeTimer&) = delete;
    WakeTimer& operator=(const WakeTimer&) = delete;
    // Fires once at t (at once if t has passed); replaces an earlier time.
    // False when it cannot be armed.
    bool at(std::chrono::steady_clock::time_point t);

private:
    void* id_ = nullptr;  // Linux: the timer_t; portable: the process's pid
};

// sbx stops as a job stops at ^Z (SIGTSTP's default action, which a group
// orphaned from its shell does not take: then it returns at once), and with
// whole_job its process group does too; the SignalWatch's SIGTSTP is not
// seen by the loop for it.  It returns once continued.
void stop_self(bool whole_job);

// sbx becomes a child subreaper (orphaned descendants are reparented to it,
// so that the kill at the end finds them); the portable backend cannot, and
// says false.
bool become_subreaper();

// In the command's child, before anything else: a child that sbx leaves
// behind dies with it (Linux: PR_SET_PDEATHSIG; portable: nothing).
// Async-signal-safe.
void child_dies_with_parent();

// Every fd from 3 up closes at exec.  `ceiling` is open_fd_ceiling()'s
// answer, taken in the parent before the spawn.  Async-signal-safe.
void cloexec_from_3(int ceiling);
// The highest fd open in this process (portable: listed in /dev/fd), or -1
// where cloexec_from_3 needs none (Linux: close_range).
int open_fd_ceiling();

// Moves up to `len` bytes from pipe `in` to `out` without copying them
// through sbx (Linux: splice); -1 with errno EINVAL where it cannot
// (portable), and the caller reads and writes instead.
ssize_t splice_pipe(int in, int out, std::size_t len, bool nonblocking);

// A bigger pipe buffer (fewer wakeups), best effort; nothing in the portable
// backend.
void grow_pipe(int fd);

}  // namespace sbx::exec
