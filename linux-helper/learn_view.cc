#include "learn_view.h"

#include <algorithm>
#include <array>
#include <sstream>
#include <string_view>

#include "util/mountinfo.h"
#include "util/path.h"

namespace sbx::helper {

namespace {

constexpr std::array<std::string_view, 3> kLeft{"/proc", "/dev", "/sys"};

struct Planner {
    std::vector<std::string> mounts;  // below "/", outside the left ones
    const std::function<std::vector<HostEntry>(const std::string&)>& list;
    std::vector<LearnItem> items;

    bool has_mount_below(const std::string& dir) const {
        return std::any_of(mounts.begin(), mounts.end(), [&](const std::string& m) { return path_below(m, dir); });
    }

    void plan(const std::string& dir) {
        // Never "/" itself: a mount over the root is not the process's root.
        if (dir != "/" && !has_mount_below(dir)) {
            items.push_back({LearnItem::Kind::Overlay, dir});
            return;
        }
        if (dir != "/") items.push_back({LearnItem::Kind::Directory, dir});
        for (const HostEntry& e : list(dir)) {
            const std::string path = child_path(dir, e.name);
            if (learn_view_leaves(path)) continue;
            switch (e.type) {
                case HostEntry::Type::Directory: plan(path); break;
                case HostEntry::Type::Symlink: items.push_back({LearnItem::Kind::Symlink, path, e.target}); break;
                case HostEntry::Type::Other: items.push_back({LearnItem::Kind::ReadOnly, path}); break;
            }
        }
    }
};

}  // namespace

bool learn_view_leaves(const std::string& path) {
    return std::any_of(kLeft.begin(), kLeft.end(), [&](std::string_view left) { return path_within(path, left); });
}

std::vector<LearnItem> plan_learning_view(const std::vector<std::string>& mount_points,
                                          const std::function<std::vector<HostEntry>(const std::string&)>& list,
                                          const std::vector<std::string>& tops) {
    Planner p{{}, list, {}};
    for (const auto& m : mount_points)
        if (m != "/" && !learn_view_leaves(m)) p.mounts.push_back(m);
    for (const auto& top : learning_tops(tops))
        if (!learn_view_leaves(top)) p.plan(top);
    return p.items;
}

std::vector<std::string> learning_tops(const std::vector<std::string>& writable) {
    std::vector<std::string> out;
    for (const auto& dir : writable) {
        const bool inside = std::any_of(writable.begin(), writable.end(),
                                        [&](const std::string& other) { return path_below(dir, other); });
        if (!inside && std::find(out.begin(), out.end(), dir) == out.end()) out.push_back(dir);
    }
    return out;
}

std::vector<std::string> mount_points_of(const std::string& text) {
    std::vector<std::string> out;
    std::istringstream lines(text);
    for (std::string line; std::getline(lines, line);)
        if (std::string point = mountinfo::mount_point(line); !point.empty()) out.push_back(std::move(point));
    return out;
}

}  // namespace sbx::helper
