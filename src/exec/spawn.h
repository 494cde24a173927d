// Spawn and wait with a deadline: the one way sbx starts a process and waits
// for it (the supervisor's command, the approver program, doctor's namespace
// probe).  On Linux the child starts as posix_spawn starts one: on a stack of
// its own inside this process's memory (CLONE_VM), with this process
// suspended (CLONE_VFORK) until it has exec'd or exited, so that no page
// tables are copied and none torn down again; it is watched through a pidfd.
// The portable backend (macOS, -Dsupervisor=portable) forks and waits with
// waitpid.
#pragma once

#include <poll.h>
#include <signal.h>
#include <sys/types.h>

#include <chrono>
#include <cstddef>
#include <optional>
#include <utility>

#include "util/fd.h"

namespace sbx::exec {

using Clock = std::chrono::steady_clock;

// How a process ended: the signal that killed it, else its exit status.
struct ExitStatus {
    int code = 0;               // the exit status, or 128+N when killed by signal N
    std::optional<int> signal;  // N
};
// From waitid's siginfo (CLD_EXITED, CLD_KILLED, CLD_DUMPED).
ExitStatus exit_status_of(const siginfo_t& info);

// poll(2)'s timeout for a wait until `until` from `now`: -1 without one, 0
// once it has passed, else the milliseconds left rounded up (so that a wait
// that returns early is never taken for the deadline), at most 1000 s (the
// caller polls again).
int poll_timeout(Clock::time_point now, std::optional<Clock::time_point> until);

// poll(2) until an event or `until` (retried on EINTR with the time left):
// poll's result, 0 at the deadline, -1 with errno on another failure.
int poll_until(pollfd* fds, nfds_t n, std::optional<Clock::time_point> until);

// A child started by spawn(), watched through its pidfd (the portable
// backend has none: it waits with waitpid).  Unless it was reaped (or
// released), it is killed with its process group when the object goes, and
// reaped.
class Child {
public:
    Child(pid_t pid, Fd pidfd) : pid_(pid), pidfd_(std::move(pidfd)) {}
    Child(Child&& other) noexcept;
    Child& operator=(Child&&) = delete;
    Child(const Child&) = delete;
    Child& operator=(const Child&) = delete;
    ~Child();

    pid_t pid() const { return pid_; }
    // Readable (POLLIN) once the child has ended; -1 in the portable
    // backend, where its end comes as a SIGCHLD (exec/backend.h).
    int pidfd() const { return pidfd_.get(); }

    // The child's end once it has exited (reaped then), else nullopt at once.
    std::optional<siginfo_t> try_wait();
    // The same, waiting for it until `until` (nullopt: as long as it takes).
    std::optional<siginfo_t> wait_until(std::optional<Clock::time_point> until);
    // Whether it has stopped since this was last asked (a stop report,
    // taken; it is not reaped).
    bool take_stop();
    // SIGKILL to its process group (when it leads one) and to itself.
    void kill_group() const;
    // Left as it is (not killed nor reaped at the end): a process that did
    // not die within the caller's bound.
    void release() { reaped_ = true; }

private:
    pid_t pid_;
    Fd pidfd_;
    bool reaped_ = false;
};

// Starts entry(arg) in a child that shares this process's memory and runs on
// a stack of its own (64 KiB: enough for execve, execvp's PATH search and a
// few frames) until it execs or exits; spawn() returns only then
// (spawn_linux.cc).  The portable backend forks (spawn_portable.cc): the
// child has a copy of the memory, and spawn() returns at once.  The child
// makes only async-signal-safe calls (raw syscalls, execve, _exit), writes
// no memory of this process's but its own stack, and never returns from
// entry without _exit.  Its signal dispositions are its own copy (no
// CLONE_SIGHAND); SIGCHLD is what its end sends.  Throws Error ("cannot
// start WHAT: clone: ...", "cannot watch WHAT: pidfd_open: ...") when it
// cannot be started or watched; nothing is left running then.
Child spawn(const char* what, int (*entry)(void*), void* arg);

// The same with any callable, called by reference: spawn(what, fn) with
// fn = [&] { ...; _exit(0); }.
template <class F>
Child spawn(const char* what, F& fn) {
    return spawn(
        what, [](void* f) -> int { return (*static_cast<F*>(f))(); }, &fn);
}

}  // namespace sbx::exec
