#include "walk.h"

#include <limits.h>
#include <unistd.h>

#include "util/path.h"

namespace sbx::helper {

std::string walk_path(const std::string& dir, std::string_view target, const WalkVisitor& visit, int depth) {
    std::string cur = !target.empty() && target[0] == '/' ? std::string("/") : dir;
    bool found = true;
    for_each_component(target, [&](std::string_view name) {
        if (name == "..") {
            cur = parent_path(cur);
            return true;
        }
        const std::string next = child_path(cur, name);
        struct stat st {};
        if (::lstat(next.c_str(), &st) != 0) return found = false;
        if (!S_ISLNK(st.st_mode)) {
            if (visit.other) visit.other(next, st);
            cur = next;
            return true;
        }
        char link[PATH_MAX];
        const ssize_t n = ::readlink(next.c_str(), link, sizeof link);
        if (n <= 0 || static_cast<std::size_t>(n) >= sizeof link) return found = false;
        const std::string_view text(link, static_cast<std::size_t>(n));
        visit.link(next, text, depth);
        cur = walk_path(cur, text, visit, depth + 1);
        return found = !cur.empty();
    });
    return found ? cur : std::string();
}

}  // namespace sbx::helper
