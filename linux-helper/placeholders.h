// Layer 3, the host's part: the placeholders of the filesystem view (the
// view itself, built in pid 1, is mounts.h).
//
// Every path that must hold still inside a writable root but does not exist
// yet (a protected name, a read-only carve-out, a denied path; for a deeper
// path its first missing component) gets a placeholder on the host, before
// pid 1 builds the view, so that it can be masked: an empty directory of
// mode 0000 owned by the helper's euid (mkdirat), recognisable
// as ours by those three marks.  (A directory, not a symlink: inside the
// sandbox it shows as an empty directory, which git ignores and which Codex's
// own helper accepts beside it; a symlink made git list it and made Codex
// refuse "crosses writable symlink".)
//
// Placeholders are shared by concurrent runs through flock on the directory
// that holds them: every run holds LOCK_SH on it while it runs; at the end
// each run tries LOCK_EX|LOCK_NB, and the one that gets it removes the
// placeholders there (rmdir, which removes only an empty directory).  LOCK_SH
// is never waited for long (anyone can lock /tmp): after about a second the
// run is refused, naming the holder.  One left behind by a killed helper (or
// by another run of the same user) is recognised by its marks, reused, and
// removed by the next run; an older sbx's placeholder symlink (to
// /dev/null/sbx-protected-path) is still recognised, pinned and removed.
#pragma once

#include <sys/stat.h>

#include <string>
#include <vector>

#include "mount_ops.h"
#include "policy/policy.h"
#include "util/fd.h"

namespace sbx::helper {

class ProtectedPaths {
public:
    struct Entry {
        std::string path;
        bool placeholder = false;  // an empty mode-0 directory of ours, made or reused
        bool legacy = false;       // an older sbx's placeholder symlink (pinned, removed the same)
        Identity parent;           // the directory that holds it
    };
    struct Root {
        std::string path;
        Identity id;
    };

    ProtectedPaths() = default;
    // Finds the protected paths (protected names and read-only carve-outs)
    // and the denied paths inside the writable roots, and makes the
    // placeholders for the missing ones.  Refuses (Error) a deny of "/" and
    // a denied or carved-out path whose way crosses a symlink inside a
    // writable root.
    explicit ProtectedPaths(const CanonicalPolicy&);
    ProtectedPaths(ProtectedPaths&&) noexcept = default;
    ProtectedPaths& operator=(ProtectedPaths&&) noexcept = default;
    // Removes the placeholders of every directory no other run holds.
    ~ProtectedPaths();
    // The same, from pid 1 inside the sandbox once nothing else runs there
    // (pinned: each placeholder's pin is unmounted first).
    void remove_placeholders(bool pinned) const;

    // The protected paths and placeholders, parents first.
    const std::vector<Entry>& entries() const { return entries_; }
    // The writable roots that exist, as opened on the host.
    const std::vector<Root>& roots() const { return roots_; }

private:
    struct Directory {
        std::string path;
        Fd lock;  // LOCK_SH while this run uses its placeholders
        Identity id;
    };
    // The directory, locked; nullptr (errno set) when it is missing
    // (ENOENT, ENOTDIR); refuses a symlink on its way.
    const Directory* lock_directory(const std::string& path);
    void add(const std::string& target, bool denied);

    std::vector<Root> roots_;
    std::vector<Entry> entries_;
    std::vector<Directory> directories_;
};

// The target that marked the placeholder symlinks of older versions.
inline constexpr const char* kLegacyPlaceholderTarget = "/dev/null/sbx-protected-path";

// The marks of a placeholder of ours: a directory of mode 0000 owned by the
// euid (empty: rmdir removes nothing else).
bool is_our_placeholder(const struct stat& st);

// An older version's placeholder: a symlink to kLegacyPlaceholderTarget.
bool is_legacy_placeholder(const Fd& dir, const std::string& name);

}  // namespace sbx::helper
