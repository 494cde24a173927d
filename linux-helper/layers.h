// The command process's own layers, the last of the order (SPEC section 5):
// its directory, capabilities, no_new_privs, Landlock, seccomp.  Applied in
// the process that then execs the command: the command under pid 1, or the
// helper itself where it has no pid 1 of its own.
#pragma once

#include <string>

#include "policy/policy.h"
#include "seccomp.h"
#include "util/fd.h"

namespace sbx::helper {

// Which of the layers' variants apply (HelperPlan::layers, helper_plan.h).
struct ProcessLayers {
    // In the sandbox's mount namespace: its read-only view is in place
    // (apply_landlock's with_mount_layer), stdin, stdout and stderr are
    // opened again in it (inherited_fds.h), root keeps the ownership
    // capabilities (caps.h).
    bool mount_layer = false;
    // --no-proc, in a mount namespace of the sandbox's: /proc becomes an
    // empty read-only directory first, once stdin, stdout and stderr have
    // been opened again (which reads /proc/self/fd, still the host's /proc).
    bool hide_proc = false;
    Watch watch = Watch::None;      // what the seccomp filter tells pid 1 (seccomp.h)
    bool socket_files = true;       // a UNIX socket may be bound to a path (apply_landlock, landlock.h)
    bool transparent = false;       // TCP through the proxy's SOCKS5 listener (transparent.h)
    bool private_terminal = false;  // --private-terminal (inherited_fds.h)
};

// Starts the command in cwd, then applies capabilities, no_new_privs,
// Landlock and seccomp in that order; returns the seccomp listener (invalid
// when there is none).  Throws StepError.
Fd apply_process_layers(const CanonicalPolicy& policy, const std::string& cwd, const ProcessLayers& layers);

}  // namespace sbx::helper
