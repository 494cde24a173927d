#include "denial/read_groups.h"

#include <algorithm>
#include <map>

#include "denial/explain.h"
#include "denial/fix.h"
#include "util/path.h"

namespace sbx {

std::string too_wide_to_group(const std::string& dir, const Environment& env) {
    if (std::string why = too_open(dir, env, "readable"); !why.empty()) return why;
    if (path_depth(dir) < 2) return dir + " is a directory at the top of the tree";
    const auto& system = system_directories();
    if (std::find(system.begin(), system.end(), dir) != system.end()) return dir + " is a system directory";
    if (dir == "/var/tmp" || (env.tmpdir && dir == *env.tmpdir)) return dir + " is a shared temporary directory";
    return {};
}

PolicyDelta group_reads(PolicyDelta change, const Environment& env) {
    std::map<std::string, std::size_t> in_directory;
    for (const auto& path : change.read_only)
        if (path != "/") ++in_directory[parent_path(path)];
    std::vector<std::string> groups;
    for (const auto& [dir, count] : in_directory)
        if (count >= kReadGroupAt && too_wide_to_group(dir, env).empty()) groups.push_back(dir);
    std::vector<std::string> out;
    for (const auto& path : change.read_only) {
        const auto group =
            std::find_if(groups.begin(), groups.end(), [&](const std::string& dir) { return path_within(path, dir); });
        const std::string& shown = group == groups.end() ? path : *group;
        if (std::find(out.begin(), out.end(), shown) == out.end()) out.push_back(shown);
    }
    const auto& roots = change.writable_roots;
    const std::vector<std::string> all = out;
    std::erase_if(out, [&](const std::string& path) {
        return std::any_of(all.begin(), all.end(), [&](const std::string& other) { return path_below(path, other); }) ||
               std::any_of(roots.begin(), roots.end(),
                           [&](const std::string& root) { return path_within(path, root); });
    });
    change.read_only = std::move(out);
    return change;
}

}  // namespace sbx
