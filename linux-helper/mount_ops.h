// The fd-based mount primitives the view is built with (mounts.h,
// git_view.h): each works on what a directory fd and a name designate, never
// on a path resolved again, and fails (StepError, step "mounts") naming the
// path it was given for the message.
#pragma once

#include <string>

#include "mounts.h"
#include "util/fd.h"

namespace sbx::helper {

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
