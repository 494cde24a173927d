// The process structure.  After the helper has entered its namespaces it
// forks pid 1 of the new pid namespace, in a process group of its own; pid 1
// forks the command (so that the command is not a pid 1 that ignores SIGINT
// and SIGTERM) as the leader of a third process group (in the terminal's
// foreground when the helper was), forwards SIGINT, SIGTERM, SIGHUP and
// SIGQUIT sent to it to that group, reaps orphans, serves seccomp user notifications for network
// `limited`, and exits when the command exits: the kernel then kills whatever
// is left in the namespace (a double-forked setsid grandchild included).  The
// helper forwards the same signals to pid 1 and ends the way the command
// ended.  A signal sent to the helper, or to its process group, thus reaches
// the command once; signals from the terminal reach the command's group
// directly, and neither the helper nor pid 1 forwards those (SI_KERNEL).
#pragma once

#include <functional>
#include <optional>

#include "inherited_fds.h"
#include "namespaces.h"
#include "status.h"
#include "util/fd.h"

namespace sbx::helper {

struct TransparentTcp;  // transparent.h

class Recorder;

// The command to exec, and where a failure of the helper's is told.
struct Command {
    char* const* argv;
    const Status& status;
    Recorder* recorder = nullptr;           // pid 1's denial recorder (recorder.h), if any
    bool host_unix_sockets = false;         // the host's pathname UNIX sockets reachable (network.h UnixMediator)
    TransparentTcp* transparent = nullptr;  // --transparent-tcp (transparent.h): pid 1 serves its resolver
    // If set, run in pid 1 once the command has ended and every other
    // process of the sandbox has been killed and reaped (git_view.h's write_back).
    std::function<void()> ended;
};

// What run_under_pid1 runs at each stage, in the process named.
struct Pid1Hooks {
    // In pid 1, first: the sandbox's setup inside its namespaces (user id
    // maps first when user, then mounts and a fresh /proc, loopback).
    std::function<void(bool user)> setup;
    // In the command's process, before it execs: its own layers (cwd,
    // capabilities, no_new_privs, Landlock, seccomp, in that order,
    // layers.h); returns the seccomp listener (invalid when there is none).
    // Throws Error.
    std::function<Fd()> prepare;
    // In pid 1, should the helper die first (SIGKILL): the helper's cleanup,
    // from inside the sandbox, once the rest of the sandbox is killed.
    std::function<void()> abandoned;
    // In the helper once pid 1 exists, with its pid, before anything can
    // reap it (the bridge to Codex's proxy and the host watch start there,
    // managed_network.h, host_watch.h: no thread before the fork).  May be
    // empty.
    std::function<void(pid_t pid1)> forked;
};

// Forks pid 1 into the namespaces of request (namespaces.h); pid 1 runs
// hooks.setup, then forks the command, which runs hooks.prepare and execs
// argv.  Returns the command's wait status (or pid 1's, when it failed
// before the command ran), or nullopt, without forking, when user namespaces
// are unavailable.  Should the helper die first, pid 1 kills the rest of the
// sandbox, runs hooks.abandoned and ends.  While the sandbox runs, the
// helper copies what the command writes to relays (inherited_fds.h) to the
// caller's files, and the rest once it has ended.
std::optional<int> run_under_pid1(const NamespaceRequest& request, const Pid1Hooks& hooks, OutputRelays& relays,
                                  const Command& command);

// execvp, then exit 127 (not found) or 126 (cannot be executed), told
// through command.status.
[[noreturn]] void exec_command(const Command& command);

// Ends the helper as the wait status says: the same exit code, or the same
// signal (re-raised without a core dump; 128+N if it does not kill).
[[noreturn]] void exit_like(int wait_status);

}  // namespace sbx::helper
