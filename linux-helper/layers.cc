#include "layers.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>

#include "caps.h"
#include "inherited_fds.h"
#include "landlock.h"
#include "namespaces.h"
#include "step_error.h"
#include "util/landlock_abi.h"
#include "util/path.h"

namespace sbx::helper {

Fd apply_process_layers(const CanonicalPolicy& policy, const std::string& cwd, const ProcessLayers& layers) {
    const bool mount_layer = layers.mount_layer;
    if (::chdir(cwd.c_str()) != 0) {
        if (errno == ENOENT && mount_layer && !policy.reads_root())
            fail("cwd", "the command's directory " + cwd + " is not in the sandbox: no entry of the policy includes it",
                 "add an entry that reads it (a path or :project_roots entry), or start the command in a directory "
                 "the entries include");
        fail_errno("cwd", "chdir " + cwd, "pass an existing --command-cwd");
    }
    if (layers.hide_proc) {
        // Without effective capabilities, as the command would open them.
        if (mount_layer) without_effective_capabilities(reopen_stdio_in_view);
        hide_proc();
    }
    // Root keeps what sets owners and modes (caps.h) only where every mount
    // outside the writable roots is read-only.
    drop_capabilities(mount_layer && ::geteuid() == 0 ? ownership_capabilities() : 0);
    // In the view, with the capabilities the command keeps, before Landlock
    // (a terminal reopened after it would lose its ioctls): as the command
    // would open them.
    if (mount_layer && !layers.hide_proc) reopen_stdio_in_view();
    // Only the sandbox's own ptys within reach (a terminal device opened
    // inside gets no ioctl from Landlock ABI 5 on, but in /dev/pts): they may
    // be resized (seccomp_rules.h).  Not where a writable root holds /dev
    // (its devices would get their ioctls from that root's rule).
    const bool dev_writable = std::any_of(policy.writable.begin(), policy.writable.end(),
                                          [](const WritableRoot& root) { return path_within("/dev", root.path); });
    const Terminals terminals =
        mount_layer && !dev_writable && landlock_abi() >= 5 && !reaches_host_terminal(layers.private_terminal)
            ? Terminals::Own
            : Terminals::Host;
    set_no_new_privs();
    apply_landlock(policy, mount_layer, layers.socket_files);
    return install_seccomp(policy, layers.watch, layers.transparent, terminals);
}

}  // namespace sbx::helper
