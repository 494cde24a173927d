#include "learn_view.h"

#include <algorithm>
#include <array>
#include <sstream>
#include <string_view>

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

// The kernel's escapes in mountinfo: \040 (space), \011 (tab), \012
// (newline), \134 (backslash).
std::string unescape(std::string_view s) {
    std::string out;
    for (std::size_t i = 0; i < s.size(); ++i) {
        const bool octal =
            s[i] == '\\' && i + 3 < s.size() &&
            std::all_of(s.begin() + static_cast<std::ptrdiff_t>(i) + 1, s.begin() + static_cast<std::ptrdiff_t>(i) + 4,
                        [](char c) { return c >= '0' && c <= '7'; });
        if (!octal) {
            out += s[i];
            continue;
        }
        out += static_cast<char>((s[i + 1] - '0') * 64 + (s[i + 2] - '0') * 8 + (s[i + 3] - '0'));
        i += 3;
    }
    return out;
}

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

std::vector<std::string> mount_points_of(const std::string& mountinfo) {
    std::vector<std::string> out;
    std::istringstream lines(mountinfo);
    for (std::string line; std::getline(lines, line);) {
        std::istringstream fields(line);
        std::string field;
        for (int i = 0; i < 5 && fields >> field; ++i) {
        }
        if (fields) out.push_back(unescape(field));
    }
    return out;
}

}  // namespace sbx::helper
