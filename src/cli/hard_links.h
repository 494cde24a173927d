// Files that a policy's --deny and --read-only entries name but that have
// other names too (st_nlink > 1).  The sandbox enforces paths (the mount
// view, Landlock, Seatbelt): another name of such a file, in a place the
// command may read or write, gives the command what the entry withholds.
// Such a link cannot be made inside the sandbox (the denied file is masked,
// the read-only one is on another mount: link(2) fails with EXDEV), but one
// made before the run, by the host or by an earlier run under another
// policy, would stay open; so `sbx run` refuses the policy instead.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <string>
#include <vector>

#include "policy/policy.h"

namespace sbx::cli {

struct LinkedFile {
    std::string path;   // the file, as the entry reaches it
    std::string entry;  // the entry's rule ("entry /x deny (--deny)")
    nlink_t links = 0;  // its st_nlink
};

// The files of every --deny entry and of every read entry below a writable
// root (a --read-only carve-out), directories walked (without following
// symlinks, on one filesystem) up to `max_entries` entries in all; the
// protected names are not looked at (sbx makes them, and a repository's
// objects are often hard-linked by git clone).  `truncated` is set when the
// walk stopped at the bound.
struct LinkedFiles {
    std::vector<LinkedFile> files;
    bool truncated = false;
};
LinkedFiles linked_files(const CanonicalPolicy&, std::size_t max_entries = 10000);

// Throws Error (one line: the first file, its count, how to find the other
// names) when linked_files finds any.
void refuse_linked_files(const CanonicalPolicy&);

}  // namespace sbx::cli
