// Layer 2: namespaces (user, mount, pid, IPC, network).  The helper stays in the host's namespaces; its child,
// made with clone(2) into the new ones, is pid 1 of the new pid namespace and
// builds the sandbox's view there.  (The helper staying outside is what lets
// it remove its placeholders (placeholders.h) afterwards without unmounting them.)
#pragma once

#include <sys/types.h>

#include <functional>

namespace sbx::helper {

struct NamespaceRequest {
    bool mount = true;
    bool pid = true;
    bool ipc = true;  // SysV IPC and POSIX message queues of its own
    bool net = false;
};

struct Fork {
    pid_t pid = -1;        // 0 in the child
    bool entered = false;  // false: user namespaces are unavailable (no child)
    bool user = false;     // the child is in a new user namespace
};

// Forks a child into new namespaces; when the caller is not root (or root
// without CAP_SYS_ADMIN), also into a new user namespace, in which the child
// must call map_ids() first.  Returns entered = false only when a user
// namespace cannot be created; any other failure throws Error.
Fork fork_into_namespaces(const NamespaceRequest&);

// In the child: maps the caller's uid and gid (as they were before the fork)
// to themselves, and denies setgroups.
void map_ids(uid_t uid, gid_t gid);

// --no-proc, in the command's process of a sandbox with a mount namespace of
// its own, before the capabilities are dropped: an empty read-only tmpfs
// (mode 0555) over /proc, so that neither the host's processes nor a /proc of
// the sandbox's pid namespace is visible (the pid namespace stays private).
void hide_proc();

// Runs fn with the effective capability set empty, then restores it (the
// permitted set is kept): what fn opens, it opens as the command would.
void without_effective_capabilities(const std::function<void()>& fn);

}  // namespace sbx::helper
