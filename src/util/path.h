// Lexical path arithmetic, the one home of it for sbx and its helper: no
// filesystem access, so the same answer on every platform and in tests.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

namespace sbx {

// Calls visit(component) for each component of a path in order, without
// empty ones and "." (".." is the caller's to interpret): "/a//./b/../c"
// gives a, b, .., c, as views into `path`.  A visit that returns bool
// stops the walk by returning false.  No allocation.
template <class Visit>
void for_each_component(std::string_view path, Visit&& visit) {
    while (!path.empty()) {
        const auto slash = path.find('/');
        const std::string_view part = path.substr(0, slash);
        path = slash == std::string_view::npos ? std::string_view{} : path.substr(slash + 1);
        if (part.empty() || part == ".") continue;
        if constexpr (std::is_same_v<decltype(visit(part)), bool>) {
            if (!visit(part)) return;
        } else {
            visit(part);
        }
    }
}

// rel against base, joined and normalised lexically ("a/./b/../c" -> "a/c",
// "/.." -> "/", no empty components, no trailing '/').
std::string join_path(const std::string& base, const std::string& rel);

// The entry `name` (one component, not normalised) of the directory `dir`.
std::string child_path(const std::string& dir, std::string_view name);

// The directory holding an absolute, normalised path ("/" for "/x" and "/";
// "/" also for a path without a '/').
std::string parent_path(const std::string& path);

// The last component of a path ("c" for "/a/b/c"; the whole of a path
// without a '/'; "" for "/" and for a path that ends in '/').
std::string base_name(const std::string& path);

// path is root or lies below it, component-wise (/a/bc is not within /a/b);
// both absolute and normalised.  Every absolute path is within "/".
bool path_within(std::string_view path, std::string_view root);

// path lies strictly below root (every absolute path but "/" below "/").
bool path_below(std::string_view path, std::string_view root);

// The files execvp tries for argv0, in order: argv0 itself when it contains
// a '/', else argv0 in each directory of search_path (a PATH value; an empty
// element is the current directory).
std::vector<std::string> exec_candidates(const std::string& argv0, std::string_view search_path);

// sbx's own state directory (its session approvals live in its sessions/):
// $XDG_STATE_HOME/sbx when that is absolute, else $HOME/.local/state/sbx
// when $HOME is absolute (both normalised), else "".  Pure: the caller
// passes the two variables (nullptr when unset).
std::string sbx_state_directory(const char* xdg_state_home, const char* home);

// The number of components of an absolute, normalised path ("/" has 0).
std::size_t path_depth(std::string_view path);

}  // namespace sbx
