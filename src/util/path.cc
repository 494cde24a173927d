#include "util/path.h"

#include <algorithm>
#include <vector>

namespace sbx {

std::string join_path(const std::string& base, const std::string& rel) {
    const bool rel_absolute = !rel.empty() && rel.front() == '/';
    const std::string whole = rel_absolute || base.empty() ? rel : base + "/" + rel;
    const bool absolute = !whole.empty() && whole.front() == '/';
    std::vector<std::string_view> parts;
    for_each_component(whole, [&](std::string_view part) {
        if (part == ".." && !parts.empty() && parts.back() != "..") {
            parts.pop_back();
        } else if (part != ".." || !absolute) {
            parts.push_back(part);
        }
    });
    std::string out = absolute ? "/" : "";
    for (std::size_t i = 0; i < parts.size(); ++i) out.append(i ? "/" : "").append(parts[i]);
    return out.empty() ? "." : out;
}

std::string child_path(const std::string& dir, std::string_view name) {
    std::string out = dir == "/" ? std::string() : dir;
    return out.append("/").append(name);
}

std::string base_name(const std::string& path) { return path.substr(path.rfind('/') + 1); }

std::string parent_path(const std::string& path) {
    const auto slash = path.rfind('/');
    return slash == 0 || slash == std::string::npos ? std::string("/") : path.substr(0, slash);
}

bool path_within(std::string_view path, std::string_view root) {
    if (root == "/") return !path.empty() && path.front() == '/';
    return path.starts_with(root) && (path.size() == root.size() || path[root.size()] == '/');
}

bool path_below(std::string_view path, std::string_view root) { return path != root && path_within(path, root); }

std::vector<std::string> exec_candidates(const std::string& argv0, std::string_view search_path) {
    if (argv0.empty()) return {};
    if (argv0.find('/') != std::string::npos) return {argv0};
    std::vector<std::string> out;
    while (true) {
        const auto colon = search_path.find(':');
        const std::string_view dir = search_path.substr(0, colon);
        out.push_back(child_path(dir.empty() ? "." : std::string(dir), argv0));
        if (colon == std::string_view::npos) break;
        search_path.remove_prefix(colon + 1);
    }
    return out;
}

std::size_t path_depth(std::string_view path) {
    return path == "/" ? 0 : static_cast<std::size_t>(std::count(path.begin(), path.end(), '/'));
}

std::string sbx_state_directory(const char* xdg_state_home, const char* home) {
    if (xdg_state_home != nullptr && xdg_state_home[0] == '/') return join_path(xdg_state_home, "sbx");
    if (home != nullptr && home[0] == '/') return join_path(home, ".local/state/sbx");
    return "";
}

}  // namespace sbx
