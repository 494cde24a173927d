// Lexical path arithmetic, the one home of it for sbx and its helper: no
// filesystem access, so the same answer on every platform and in tests.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace sbx {

// rel against base, joined and normalised lexically ("a/./b/../c" -> "a/c",
// "/.." -> "/", no empty components, no trailing '/').
std::string join_path(const std::string& base, const std::string& rel);

// The entry `name` (one component, not normalised) of the directory `dir`.
std::string child_path(const std::string& dir, std::string_view name);

// The directory holding an absolute, normalised path ("/" for "/x" and "/";
// "/" also for a path without a '/').
std::string parent_path(const std::string& path);

// path is root or lies below it, component-wise (/a/bc is not within /a/b);
// both absolute and normalised.  Every absolute path is within "/".
bool path_within(std::string_view path, std::string_view root);

// path lies strictly below root (every absolute path but "/" below "/").
bool path_below(std::string_view path, std::string_view root);

// The number of components of an absolute, normalised path ("/" has 0).
std::size_t path_depth(std::string_view path);

}  // namespace sbx
