// sbx learn --reads: the files a command read, as --read-only flags no
// wider than a careful person would write.  A tool reads many files of its
// own (its modules, its data): where several lie in one directory, that
// directory is the flag, as a person would write it; never a directory
// nothing was read from directly, and never one whose opening gives away
// more than the tool's own (the top of the tree, a shared temporary
// directory, $HOME).  Pure.
#pragma once

#include <cstddef>
#include <string>

#include "denial/policy_delta.h"
#include "policy/policy.h"

namespace sbx {

// A directory is the flag where this many of the paths lie directly in it.
inline constexpr std::size_t kReadGroupAt = 3;

// Why --read-only DIR may not stand for the paths read in it, or "": too_open
// (denial/fix.h: /, $HOME or above it, ~/.ssh, ~/.gnupg), a directory at the
// top of the tree (/opt, /var), a system directory itself (/var/lib), /var/tmp
// and $TMPDIR.
std::string too_wide_to_group(const std::string& dir, const Environment& env);

// `change` with its read_only paths grouped: each directory holding
// kReadGroupAt or more of them directly (a file read, a directory listed or
// run from) in their place, unless too_wide_to_group; then a path within
// another one dropped, and one within a writable root of the change (it is
// read there).  The rest of the change as it is.
PolicyDelta group_reads(PolicyDelta change, const Environment& env);

}  // namespace sbx
