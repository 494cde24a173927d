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
//   4. the clones are attached back over their paths (parents first), so
//      submounts of a writable root (a tmpfs /tmp) come back as they were;
//   5. every protected path is bound read-only on top of itself; a symlink
//      (a placeholder, or a user's `.codex -> elsewhere`) is pinned by a mount
//      on the link itself (open_tree without following it), so that it can
//      be neither removed, renamed nor replaced, and a user's link's target
//      is bound read-only too.
//
// Placeholders are shared by concurrent runs through flock on the directory
// that holds them: every run holds LOCK_SH on it while it runs; at the end
// each run tries LOCK_EX|LOCK_NB, and the one that gets it removes the
// placeholders there.  One left behind by a killed helper is recognised by
// its target, reused, and removed by the next run.
#pragma once

#include <string>
#include <vector>

#include "fd.h"
#include "policy/policy.h"

namespace sbx::helper {

class ProtectedPaths {
public:
    struct Entry {
        std::string path;
        bool placeholder = false;
    };

    ProtectedPaths() = default;
    // Finds the protected paths inside the writable roots and makes the
    // placeholders for the missing ones.
    explicit ProtectedPaths(const CanonicalPolicy&);
    ProtectedPaths(ProtectedPaths&&) noexcept = default;
    ProtectedPaths& operator=(ProtectedPaths&&) noexcept = default;
    // Removes the placeholders of every directory no other run holds.
    ~ProtectedPaths();

    const std::vector<Entry>& entries() const { return entries_; }

private:
    struct Directory {
        std::string path;
        Fd lock;  // LOCK_SH while this run uses its placeholders
    };
    const Directory& lock_directory(const std::string& path);

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

// Mounts a fresh /proc for the current pid namespace (called in pid 1).
void mount_proc();

}  // namespace sbx::helper
