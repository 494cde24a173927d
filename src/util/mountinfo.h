// A line of /proc/self/mountinfo ("ID PARENT MAJ:MIN ROOT MOUNTPOINT
// OPTIONS ... - FSTYPE SOURCE SUPEROPTIONS"), read by sbx (doctor's cgroup
// probe) and by the helper (sbx learn's view).  Header only: both include it.
#pragma once

#include <algorithm>
#include <sstream>
#include <string>
#include <string_view>

namespace sbx::mountinfo {

// The kernel's escapes in mountinfo's paths undone: \040 (space), \011
// (tab), \012 (newline), \134 (backslash).
inline std::string unescape(std::string_view s) {
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

// The line's mount point (its fifth field), unescaped; "" when it has fewer
// fields.
inline std::string mount_point(const std::string& line) {
    std::istringstream fields(line);
    std::string field;
    for (int i = 0; i < 5; ++i)
        if (!(fields >> field)) return {};
    return unescape(field);
}

}  // namespace sbx::mountinfo
