// Walking a path on the host as the kernel resolves it, component by
// component, following symlinks: the one walker of the view (root_view.cc:
// the symlinks on the way to an entry) and of the pins (mounts.cc: what lies
// on the way to a protected path).
#pragma once

#include <sys/stat.h>

#include <functional>
#include <string>
#include <string_view>

namespace sbx::helper {

struct WalkVisitor {
    // A symlink at `path` with its text, met `depth` symlinks deep (0: on the
    // walked path itself), before it is followed.  May throw to refuse.
    std::function<void(const std::string& path, std::string_view text, int depth)> link;
    // A component that is not a symlink (optional).
    std::function<void(const std::string& path, const struct stat&)> other;
};

// Walks `target` from the directory `dir` (a path without symlinks; an
// absolute target starts at "/"): ".." goes to the lexical parent.  Returns
// where it leads, or "" where a component is missing or a link cannot be read.
std::string walk_path(const std::string& dir, std::string_view target, const WalkVisitor& visit, int depth = 0);

}  // namespace sbx::helper
