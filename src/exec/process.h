// Process plumbing for the supervisor: owned fds, the child's environment and
// executable candidates, and the kill of every descendant.
#pragma once

#include <sys/types.h>
#include <unistd.h>

#include <string>
#include <utility>

#include <vector>
#include "util/fd.h"

#include "platform/plan.h"

namespace sbx::exec {

using Fd = ::sbx::Fd;

// A CLOEXEC pipe whose ends are both >= 3 (so that dup2 onto 0..2 in the
// child never collides).  Throws Error.
struct Pipe {
    Fd read;
    Fd write;
};
Pipe make_pipe();

// The child's environment ("NAME=value" entries): `base` (sbx's environ), or
// with clear_env only kept_env_names(); minus env_remove; plus env_add.
std::vector<std::string> child_environment(const ExecPlan&, const char* const* base);

// The paths execve tries for argv0, in order: argv0 itself when it contains
// a '/', else each directory of PATH taken from `env` (the child's
// environment; the default search path when PATH is unset).
std::vector<std::string> exec_candidates(const std::string& argv0, const std::vector<std::string>& env);

// Every live or zombie descendant of `ancestor`, from /proc (PPid chains).
std::vector<pid_t> descendants_of(pid_t ancestor);

// Whether a descendant of `ancestor` has yet to act on a stop signal
// (SIGSTOP, SIGTSTP, SIGTTIN, SIGTTOU) sent to it: one is pending, not
// blocked by a thread that is not stopped.  Such a process is still running
// (woken by the signal, not yet scheduled) and, until it has acted on it, a
// read of the terminal it was blocked in still returns what is typed.
bool stop_signal_in_flight(pid_t ancestor);

// SIGKILL to every descendant of this process and reap those that are its
// own children, until none is left or `budget_ms` has passed; `skip_reap`
// (the main child, reaped through its pidfd) is killed but not waited for.
// Returns the number of descendants still present at the end.
std::size_t kill_all_descendants(pid_t skip_reap, int budget_ms);

}  // namespace sbx::exec
