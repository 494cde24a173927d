// Layer 3: the filesystem view.
//
// In the helper, on the host (ProtectedPaths): every protected path inside a
// writable root that does not exist yet gets a placeholder, so that it can be
// masked: a symlink to /dev/null/sbx-protected-path, which resolves to
// nothing and under which nothing can be created (ENOTDIR), and which git
// takes for "no repository here".  (An empty directory would do as well, but
// creating and removing a directory costs about 4 ms on ext4; a symlink costs
// 40 us.)
//
// In pid 1, in its new mount namespace (build_filesystem_view):
//   1. every mount private (nothing propagates to or from the host);
//   2. a detached clone of each writable root is taken while it is still
//      writable;
//   3. the whole tree is made read-only in one mount_setattr call;
//   4. the clones are attached back over their paths, so submounts of a
//      writable root (a tmpfs /tmp) come back as they were; with them,
//      parents first, the pins: every directory between a writable root and
//      a root nested in it, and every directory and symlink on the literal
//      path from a root down to a protected path below its top (`gitdir:
//      sub/gd`, `.codex -> link/cfg`) is mounted on itself (still writable),
//      so that it cannot be renamed or removed (EBUSY) and recreated;
//   5. every protected path is bound read-only on top of itself; a symlink
//      (a placeholder, or a user's `.codex -> elsewhere`) is pinned by a mount
//      on the link itself (open_tree without following it), so that it can
//      be neither removed, renamed nor replaced, and a user's link's target
//      is bound read-only too (a dangling one is pinned as it is, unless
//      what it names could be created in a writable root: refused).
//
// No path is resolved again by name: the host opens each root and each
// protected path's directory once (openat2 RESOLVE_NO_SYMLINKS); pid 1 opens
// them again the same way, checks dev/ino, and works through the fds.
//
// Placeholders are shared by concurrent runs through flock on the directory
// that holds them: every run holds LOCK_SH on it while it runs; at the end
// each run tries LOCK_EX|LOCK_NB, and the one that gets it removes the
// placeholders there.  LOCK_SH is never waited for long (anyone can lock
// /tmp): after about a second the run is refused, naming the holder.  One left behind by a killed helper is recognised by
// its target, reused, and removed by the next run.
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

#include "fd.h"
#include "policy/policy.h"

namespace sbx::helper {

// Which file a path named when it was opened: checked again when it is used.
struct Identity {
    dev_t dev = 0;
    ino_t ino = 0;
    bool operator==(const Identity&) const = default;
};

// Opens an absolute path that has no symlinks without following any
// (openat2 RESOLVE_NO_SYMLINKS; a last symlink with O_PATH|O_NOFOLLOW is
// opened itself): a component swapped for a symlink meanwhile gives ELOOP
// instead of another file.  An invalid Fd with errno set on failure.
Fd open_exact(const std::string& path, int flags);

class ProtectedPaths {
public:
    struct Entry {
        std::string path;
        bool placeholder = false;
        Identity parent;  // the directory that holds it
    };
    struct Root {
        std::string path;
        Identity id;
    };

    ProtectedPaths() = default;
    // Finds the protected paths inside the writable roots and makes the
    // placeholders for the missing ones.
    explicit ProtectedPaths(const CanonicalPolicy&);
    ProtectedPaths(ProtectedPaths&&) noexcept = default;
    ProtectedPaths& operator=(ProtectedPaths&&) noexcept = default;
    // Removes the placeholders of every directory no other run holds.
    ~ProtectedPaths();
    // The same, from pid 1 inside the sandbox once nothing else runs there
    // (pinned: each placeholder's pin is unmounted first).
    void remove_placeholders(bool pinned) const;

    const std::vector<Entry>& entries() const { return entries_; }
    // The writable roots that exist, as opened on the host.
    const std::vector<Root>& roots() const { return roots_; }

private:
    struct Directory {
        std::string path;
        Fd lock;  // LOCK_SH while this run uses its placeholders
        Identity id;
    };
    const Directory& lock_directory(const std::string& path);

    std::vector<Root> roots_;
    std::vector<Entry> entries_;
    std::vector<Directory> directories_;
};

// The target that marks a placeholder symlink.
inline constexpr const char* kPlaceholderTarget = "/dev/null/sbx-protected-path";

// In pid 1's new mount namespace: the whole view.
void build_filesystem_view(const CanonicalPolicy&, const ProtectedPaths&);

// Makes every mount private, without touching the view (external-sandbox
// with network limited, where only /proc changes).
void make_mounts_private();

// Mounts a fresh /proc for the current pid namespace (unless !fresh_proc:
// --no-proc, where the command hides /proc instead, namespaces.h) and, where
// the host has a /dev/mqueue directory, a fresh mqueue for the current IPC
// namespace (called in pid 1): read-only where the policy sandboxes the
// filesystem (Landlock refuses writes there as well; this keeps a second
// layer on /proc too), writable under external-sandbox, whose filesystem is
// the outer sandbox's business.
void mount_namespace_filesystems(bool read_only, bool fresh_proc = true);

}  // namespace sbx::helper
