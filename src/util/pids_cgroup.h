// Where a pids cgroup for this process would go: the hierarchy with the pids
// controller (cgroup v2 with it, or v1's pids hierarchy) and this process's
// own cgroup directory in it, as /proc/self/cgroup and /proc/self/mountinfo
// say.  The helper makes root's --limit-procs cgroup there
// (linux-helper/cgroup.h); sbx doctor reports it.
#pragma once

#include <algorithm>
#include <fstream>
#include <iterator>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "util/path.h"

namespace sbx::cgroup {

// Whether word is one of the items of a list separated by commas or white space.
inline bool lists(std::string_view text, std::string_view word) {
    std::size_t start = 0;
    while (start <= text.size()) {
        const std::size_t end = std::min(text.find_first_of(", \n\t", start), text.size());
        if (text.substr(start, end - start) == word) return true;
        start = end + 1;
    }
    return false;
}

// A small file's text ("" when it cannot be read).
inline std::string read_text(const std::string& path) {
    std::ifstream in(path);
    std::ostringstream text;
    text << in.rdbuf();
    return text.str();
}

// The directory of this process's cgroup in the hierarchy that has the pids
// controller, and whether that hierarchy is cgroup v2.
struct Place {
    std::string dir;
    bool v2 = false;
};

inline std::optional<Place> find_pids_cgroup() {
    // "0::/path" (v2) and "N:ctl,ctl:/path" (v1), from /proc/self/cgroup.
    std::string v2_path, v1_path;
    std::istringstream cgroups(read_text("/proc/self/cgroup"));
    for (std::string line; std::getline(cgroups, line);) {
        const auto a = line.find(':'), b = line.find(':', a + 1);
        if (a == std::string::npos || b == std::string::npos) continue;
        const std::string controllers = line.substr(a + 1, b - a - 1), path = line.substr(b + 1);
        if (line.compare(0, a, "0") == 0 && controllers.empty()) v2_path = path;
        else if (lists(controllers, "pids")) v1_path = path;
    }
    // mountinfo: ID PARENT MAJ:MIN ROOT MOUNTPOINT OPTIONS ... - FSTYPE SOURCE SUPEROPTIONS
    std::istringstream mounts(read_text("/proc/self/mountinfo"));
    for (std::string line; std::getline(mounts, line);) {
        std::istringstream in(line);
        const std::vector<std::string> fields{std::istream_iterator<std::string>(in),
                                              std::istream_iterator<std::string>()};
        const auto dash = std::find(fields.begin(), fields.end(), "-");
        if (fields.size() < 5 || dash == fields.end() || fields.end() - dash < 4) continue;
        const std::string& root = fields[3];
        const std::string& mountpoint = fields[4];
        const std::string& type = dash[1];
        const std::string& options = dash[3];
        const bool v2 = type == "cgroup2";
        const std::string& path = v2 ? v2_path : v1_path;
        if (path.empty()) continue;
        if (v2 ? !lists(read_text(mountpoint + "/cgroup.controllers"), "pids")
               : !(type == "cgroup" && lists(options, "pids")))
            continue;
        // The cgroup's path relative to the mount's root.
        std::string relative = path;
        if (root != "/") {
            if (!path_within(path, root)) continue;  // component-wise: /a/bc is not within /a/b
            relative = path.substr(root.size());
        }
        return Place{mountpoint + (relative == "/" ? "" : relative), v2};
    }
    return std::nullopt;
}

}  // namespace sbx::cgroup
