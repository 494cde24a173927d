// Process plumbing for the supervisor: owned fds, the child's environment and
// executable candidates, and the kill of every descendant.
#pragma once

#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#include <cstdint>
#include <map>
#include <optional>
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

// The variables --clear-env keeps.
const std::vector<std::string>& kept_env_names();

// The child's environment ("NAME=value" entries): `base` (sbx's environ), or
// with clear_env only kept_env_names(); minus env_remove; plus env_add.
std::vector<std::string> child_environment(const ExecPlan&, const char* const* base);

// The paths execve tries for argv0, in order: argv0 itself when it contains
// a '/', else each directory of PATH taken from `env` (the child's
// environment; the default search path when PATH is unset).
std::vector<std::string> exec_candidates(const std::string& argv0, const std::vector<std::string>& env);

// The file execve would run for argv0 (the first of exec_candidates that is
// an executable regular file, a relative one taken from cwd): absolute, its
// symlinks resolved; nullopt when there is none.
std::optional<std::string> find_program(const std::string& argv0, const std::vector<std::string>& env,
                                        const std::string& cwd);

// A CLOEXEC stream socket pair (read: one end, write: the other).  Throws Error.
Pipe make_socketpair();

// One process of the process table: its parent and its state ('Z' a
// zombie, 'T' or 't' stopped, another letter running or asleep).
struct ProcEntry {
    pid_t pid;
    pid_t ppid;
    char state;
    pid_t pgid;
    std::uint64_t start;  // when it started (with pid, it names one process)
};
// Every process this user can see (proc_linux.cc: /proc; proc_macos.cc:
// libproc's proc_listallpids and proc_pidinfo).
std::vector<ProcEntry> process_table();
// The descendants of `ancestor` in a table (PPid chains).
std::vector<ProcEntry> descendant_entries_of(pid_t ancestor, const std::vector<ProcEntry>& all);
std::vector<ProcEntry> descendant_entries(pid_t ancestor);

// Every live or zombie descendant of `ancestor`, from the process table (PPid chains).
std::vector<pid_t> descendants_of(pid_t ancestor);

// SIGSTOP to every descendant of `ancestor` and every member of process
// group `group` (0: none), again for those forked
// meanwhile, until no new one appears (16 rounds at most): none can fork,
// nor be orphaned out of reach, while they are killed one by one.  Without
// a subreaper (the portable backend), a descendant whose parent dies is
// reparented outside sbx's tree and cannot be found again.
// Also stopped: the processes of `seen` (pid -> start, remember_descendants)
// that still run, wherever they are now.  Returns them all (for
// kill_all_descendants' `also`).
using SeenProcesses = std::map<pid_t, std::uint64_t>;
std::vector<pid_t> stop_descendants(pid_t ancestor, pid_t group, const SeenProcesses& seen = {});
// Whether the calling process has a child, living or not yet reaped.
bool has_children();
// Adds the descendants of `ancestor` and the members of `group` to `seen`:
// without a subreaper, a descendant orphaned during the run is no longer
// one at its end, and this is how it is still found (the portable backend
// calls it every 100 ms).
void remember_descendants(pid_t ancestor, pid_t group, SeenProcesses& seen);

// A file description of sbx's own, with O_NONBLOCK, on the pipe or terminal
// that fd writes to, so that a reader who stops reading never blocks the loop
// (the deadline and the signals stay served); the caller's description keeps
// its flags.  Invalid where it cannot be had (a regular file, which does not
// stall; a socket; no /proc; a pipe of another user; macOS, where opening
// /dev/fd/N duplicates the fd): writes there block.
Fd nonblocking_copy(int fd);

// Whether the files processes have open can be seen (Linux: /proc/PID/fd;
// macOS: no), so that a stream given to the command itself is drained as a
// pipe would be: sbx waits while a process of the command still has it open
// (the Linux backend, whose subreaper keeps every such process in its tree).
bool open_files_visible();
// Whether process pid has `file` (its st_dev and st_ino) open: one of its fds
// is that file, or its fds cannot be read (another user's process; macOS).
// A process that is gone or a zombie has none.
bool has_open(pid_t pid, const struct stat& file);

// Whether pid still runs the file at path (it has not exec'd something
// else).  Linux only (the helper); false elsewhere.
bool still_runs(pid_t pid, const std::string& path);

// Whether a descendant of `ancestor` has yet to act on a stop signal (Linux:
// /proc's signal masks; macOS cannot tell, and says no)
// (SIGSTOP, SIGTSTP, SIGTTIN, SIGTTOU) sent to it: one is pending, not
// blocked by a thread that is not stopped.  Such a process is still running
// (woken by the signal, not yet scheduled) and, until it has acted on it, a
// read of the terminal it was blocked in still returns what is typed.
bool stop_signal_in_flight(pid_t ancestor);

// SIGKILL to every descendant of this process and reap those that are its
// own children, until none is left or `budget_ms` has passed; `skip_reap`
// (the main child, reaped through its pidfd) is killed but not waited for.
// `also` (stop_descendants' list) are killed too wherever they are now (an
// orphan reparented out of sbx's tree) and waited for until they are gone
// or zombies.  Returns the number of them still alive at the end.
std::size_t kill_all_descendants(pid_t skip_reap, int budget_ms, const std::vector<pid_t>& also = {});

}  // namespace sbx::exec
