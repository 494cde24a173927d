// ASCII case, whatever the locale: host names, units, and the words the
// denial notes look for are ASCII.
#pragma once

#include <string>
#include <string_view>

namespace sbx {

// s with A-Z turned into a-z; every other byte as it is.
inline std::string ascii_lower(std::string_view s) {
    std::string out(s);
    for (auto& c : out)
        if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
    return out;
}

}  // namespace sbx
