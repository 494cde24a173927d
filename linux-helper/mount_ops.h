// The fd-based primitives the view is built with (mounts.h, root_view.h,
// git_view.h), below both views (so neither includes the other): each works on what a directory fd and a name
// designate, never on a path resolved again, and fails (StepError, step "mounts") naming the path it was given for the
// message.
#pragma once

#include <sys/types.h>

#include <string>

#include "util/fd.h"

namespace sbx::helper {

// Which file a path named when it was opened: checked again when it is used.
struct Identity {
    dev_t dev = 0;
    ino_t ino = 0;
    bool operator==(const Identity&) const = default;
};

// Refuses (StepError) a path that is not what the host opened: renamed, or a
// symlink on its way, while the sandbox was set up.
[[noreturn]] void fail_changed(const std::string& path);

// Opens an absolute path that has no symlinks without following any
// (openat2 RESOLVE_NO_SYMLINKS; a last symlink with O_PATH|O_NOFOLLOW is
// opened itself): a component swapped for a symlink meanwhile gives ELOOP
// instead of another file.  An invalid Fd with errno set on failure.
Fd open_exact(const std::string& path, int flags);

// The file fd is open on.
Identity identity_of(const Fd& fd, const std::string& path);

// A detached clone of what name names in dir (dir itself for ""), without
// following a last symlink; flags: AT_RECURSIVE for its submounts too.
Fd clone_at(const Fd& dir, const std::string& name, const std::string& path, unsigned flags);

// Makes a mount (fd, or path relative to it) read-only; flags as for
// mount_setattr (AT_EMPTY_PATH, AT_RECURSIVE).
void set_readonly(int fd, const char* path, unsigned flags);

// Mounts tree on what name names in dir (dir itself for ""); a last symlink
// is not followed.
void attach_at(const Fd& tree, const Fd& dir, const std::string& name, const std::string& path);

// What name names in dir, bound read-only on itself, submounts included.
void bind_readonly_at(const Fd& dir, const std::string& name, const std::string& path);

}  // namespace sbx::helper
