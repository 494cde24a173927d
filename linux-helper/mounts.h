// Layer 3: the filesystem view, built in pid 1.  The placeholders made on
// the host beforehand, for the protected paths that do not exist yet, are
// placeholders.h (ProtectedPaths).
//
// In pid 1, in its new mount namespace (build_filesystem_view):
//   1. every mount private (nothing propagates to or from the host); without
//      a readable "/", the root is replaced by one holding only the entries
//      (root_view.h);
//   2. a detached clone of each writable root is taken while it is still
//      writable (clone_writable_roots);
//   3. the whole tree is made read-only in one mount_setattr call (skipped
//      when "/" itself is writable: root:write narrowed by other entries;
//      make_view_read_only);
//   4. the clones are attached back over their paths, so submounts of a
//      writable root (a tmpfs /tmp) come back as they were; with them,
//      parents first, the pins: every directory between a writable root and
//      a root nested in it, and every directory and symlink on the literal
//      path from a root down to a protected path below its top (`gitdir:
//      sub/gd`, `.codex -> link/cfg`, a carve-out docs/api) is mounted on
//      itself (still writable), so that it cannot be renamed or removed
//      (EBUSY) and recreated (plan_pins, attach_roots_and_pins);
//   5. every protected path is bound read-only on top of itself; a placeholder
//      is covered by a read-only empty directory of mode 0555 (or 0000 where
//      the path is denied) from a small private tmpfs made once (Covers); a
//      symlink (a user's `.codex -> elsewhere`) is pinned by a mount on the
//      link itself (open_tree without following it), so that it can be
//      neither removed, renamed nor replaced, and its target is bound
//      read-only too (a dangling one is pinned as it is, unless what it names
//      could be created in a writable root: refused); under git_write a
//      repository's .git gets the git view instead (git_view.h;
//      protect_entries);
//   6. every denied path that exists is covered, parents first: a directory
//      by an empty read-only directory of mode 0000, a file (or any other
//      non-directory) by an empty read-only file of mode 0000.  A denied
//      directory with writable roots below it (holes) is covered instead by
//      a read-only skeleton of mode-0111 directories leading to each hole,
//      and each hole, cloned before the cover, is attached back there
//      (plan_denials, which opens each in the view, then cover_denials).
//
// No path is resolved again by name: the host opens each root and each
// protected path's directory once (openat2 RESOLVE_NO_SYMLINKS); pid 1 opens
// them again the same way, checks dev/ino, and works through the fds; a
// denied path is opened the same way, so a symlink planted on its way is
// refused (125), never followed.
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

#include "git_view.h"
#include "placeholders.h"
#include "policy/policy.h"
#include "util/fd.h"

namespace sbx::helper {

// In pid 1's new mount namespace: the whole view.  Under git_write, each
// protected .git directory gets the git view (git_view.h) instead of a
// read-only bind: returned, for their write_back once the sandbox has ended.
std::vector<GitView> build_filesystem_view(const CanonicalPolicy&, const ProtectedPaths&);

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
