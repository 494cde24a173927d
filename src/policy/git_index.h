// What sbx reads in a git index (gitformat-index(5)): the gitlinks (the
// submodules the index names, mode 160000), and whether it is a split index
// (its "link" extension names a shared index file beside it).  Pure: the
// caller reads the file.
//
// The gitlinks matter because the host's `git status` in a superproject runs
// `git status` in each populated submodule, with the configuration of the
// git directory that the submodule's `.git` names: a `.git` a sandboxed
// command rewrote would run its `core.fsmonitor` on the host.  So each
// gitlink's `.git` is protected where the repository's own `.git` is
// (policy.cc), and an index written inside the sandbox may bring no new
// gitlink back to the host (the --git-write option).
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace sbx {

struct GitIndex {
    unsigned version = 0;               // 2, 3 or 4
    std::size_t hash_size = 0;          // 20 (SHA-1) or 32 (SHA-256)
    std::size_t entries = 0;            // how many entries the header counts
    std::vector<std::string> gitlinks;  // their paths, in index order
    // A split index: the hex name of the shared index it extends
    // ("sharedindex.<hex>" beside it); "" when none.
    std::string shared_index;
    bool operator==(const GitIndex&) const = default;
};

// The index in bytes, or nullopt when they are not a whole, well-formed index
// of version 2 to 4 (the hash size is the one with which the entries, the
// extensions and the trailing checksum fill the bytes exactly; the checksum
// itself is not verified).
std::optional<GitIndex> parse_git_index(std::string_view bytes);

// A gitlink's path is one git itself would write: relative, no empty, "."
// or ".." component, and no component ".git" in any case.
bool plain_index_path(std::string_view path);

}  // namespace sbx
