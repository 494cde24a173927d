// A word as a POSIX shell reads it back unchanged: as it is when it holds
// only characters no shell treats specially, else in single quotes (a single
// quote inside as '\'').  For the command lines sbx prints for a person to
// read or copy: the approver's prompt, the fix of a denial.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace sbx {

inline std::string shell_word(std::string_view w) {
    if (!w.empty() && w.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                          "0123456789_./:=+,@%-") == std::string_view::npos)
        return std::string(w);
    std::string out = "'";
    for (char c : w) out += c == '\'' ? std::string_view("'\\''") : std::string_view(&c, 1);
    return out + "'";
}

// Words as one line a shell reads back into them, each by shell_word.
inline std::string shell_line(const std::vector<std::string>& words) {
    std::string out;
    for (const auto& w : words) out += (out.empty() ? "" : " ") + shell_word(w);
    return out;
}

}  // namespace sbx
