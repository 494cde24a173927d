// The view of a policy that does not read the whole filesystem (no `:root`
// read or write entry; CODEX-HELPER.md 4.1 and 4.2): an empty root that holds
// only /dev, /proc and the entries.
//
// In pid 1's mount namespace, once its mounts are private (make_mounts_private:
// pivot_root refuses shared ones), before anything else of the view:
//   1. every host path the view needs is cloned (open_tree, recursive) while
//      the host's root is still there: each entry's path opened without
//      following symlinks (open_exact), read entries' clones made read-only;
//      the host's null zero full random urandom tty (read-only), and the
//      inherited terminal (clone_inherited_terminal);
//   2. a tmpfs (the new root) is mounted over the host's /proc (any directory
//      would do: nothing below it is used again); in it, parents first: the
//      directories leading to each entry (mode 0755, empty), a mount point
//      for each clone (an empty directory or file) with the clone on it, the
//      symlinks met on the way to an entry (ResolvedEntry::given: /bin ->
//      usr/bin), and /dev, a tmpfs of its own holding the host's device
//      nodes, a devpts of its own (new_private_devpts) with /dev/ptmx a link
//      to pts/ptmx, the inherited terminal at /dev/console,
//      fd/stdin/stdout/stderr links to /proc/self/fd
//      and a private empty writable /dev/shm (a tmpfs; the host's only where
//      an entry names /dev/shm);
//   3. a fresh proc on /proc: mounted here, while the host's proc is still
//      visible (in a user namespace the kernel mounts proc only where one is
//      fully visible already; pid 1's own mount of /proc then stacks over it);
//   4. /dev's tmpfs and the root tmpfs made read-only (no new names at the
//      top, nor in /dev); pivot_root into the new root; the old root detached.
//
// Entries that decide their own path (decide_path) are mounted: read entries
// read-only, write entries writable, each at its own path with the same
// dev/ino as on the host (later steps re-open and check them).  One inside
// a mounted entry of the same access is there already (the clones are
// recursive).  Deny entries are left as they are (inside a mounted entry:
// present, for the caller to mask; elsewhere: absent; a directory that only
// leads to a nested entry: mode 0111).  Missing paths are skipped.
#pragma once

#include <initializer_list>
#include <string>
#include <utility>

#include "policy/policy.h"
#include "util/fd.h"

namespace sbx::helper {

// Replaces "/" with a new root that holds only /dev, /proc (a fresh proc of
// the current pid namespace) and the resolved entries' paths: read entries
// read-only, write entries writable (same paths, same dev/ino as on the host,
// so later steps can re-open and check them), denied ones as they are (the
// caller masks them), with the symlinks on the way recreated
// (ResolvedEntry::given: /bin -> usr/bin).  The working directory is "/".
void enter_entries_root(const CanonicalPolicy&);

// A devpts instance of the sandbox's own (mode 0620, ptmxmode 0666, the tty
// group's where it is mapped), nosuid and noexec, detached: none of the
// host's ptys is in it, and its ptmx opens new ones in it.
Fd new_private_devpts();

// The view that keeps the host's root (the policy reads "/"): a private
// devpts over /dev/pts, its ptmx over a /dev/ptmx device node, and the
// inherited terminal at /dev/console (clone_inherited_terminal).  Called
// once the view is read-only.
void attach_private_terminals();

// A filesystem of its own (type, with its string options), detached
// (fsopen, fsmount with the MOUNT_ATTR_* attributes); what names it in errors.
Fd new_filesystem(const char* type, std::initializer_list<std::pair<const char*, const char*>> options,
                  unsigned attributes, const std::string& what);

// A fresh, empty, writable tmpfs (mode 1777, nosuid, nodev), detached, for
// what (/dev/shm).
Fd new_private_tmpfs(const std::string& what);

}  // namespace sbx::helper
