// ASCII case, whatever the locale: host names, units, proxy URLs, HTTP
// header names, and the words the denial notes look for are ASCII.  The one
// case conversion of sbx and the helper.
#pragma once

#include <algorithm>
#include <string>
#include <string_view>

namespace sbx {

// c with A-Z turned into a-z; every other byte as it is.
constexpr char ascii_lower(char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; }

// s with A-Z turned into a-z; every other byte as it is.
inline std::string ascii_lower(std::string_view s) {
    std::string out(s);
    for (auto& c : out) c = ascii_lower(c);
    return out;
}

// Whether a and b are the same but for ASCII case.
constexpr bool equal_ignoring_case(std::string_view a, std::string_view b) {
    return a.size() == b.size() &&
           std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) { return ascii_lower(x) == ascii_lower(y); });
}

}  // namespace sbx
