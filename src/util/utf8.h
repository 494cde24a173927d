// UTF-8 as RFC 3629 defines it (no overlong forms, no surrogates, nothing
// above U+10FFFF): the only text JSON strings hold.  For the output's
// sanitizing (report/report.cc) and the policy's paths (policy/policy.cc).
#pragma once

#include <cstddef>
#include <string_view>

namespace sbx {

// Length of the valid UTF-8 sequence at s[i], 0 when invalid; `valid_prefix`
// gets how many of its bytes were valid (the maximal subpart), and
// `incomplete` is set when the input ended inside a valid prefix.
inline std::size_t utf8_sequence(std::string_view s, std::size_t i, std::size_t& valid_prefix, bool& incomplete) {
    const auto b = static_cast<unsigned char>(s[i]);
    incomplete = false;
    valid_prefix = 1;
    if (b < 0x80) return 1;
    std::size_t len;
    unsigned char lo = 0x80, hi = 0xBF;
    if (b >= 0xC2 && b <= 0xDF) len = 2;
    else if (b >= 0xE0 && b <= 0xEF) {
        len = 3;
        if (b == 0xE0) lo = 0xA0;
        if (b == 0xED) hi = 0x9F;
    } else if (b >= 0xF0 && b <= 0xF4) {
        len = 4;
        if (b == 0xF0) lo = 0x90;
        if (b == 0xF4) hi = 0x8F;
    } else {
        return 0;
    }
    for (std::size_t k = 1; k < len; ++k) {
        if (i + k >= s.size()) {
            incomplete = true;
            return 0;
        }
        const auto c = static_cast<unsigned char>(s[i + k]);
        if (c < lo || c > hi) return 0;
        lo = 0x80;
        hi = 0xBF;
        valid_prefix = k + 1;
    }
    return len;
}

inline bool valid_utf8(std::string_view s) {
    for (std::size_t i = 0; i < s.size();) {
        std::size_t prefix;
        bool incomplete;
        const std::size_t len = utf8_sequence(s, i, prefix, incomplete);
        if (len == 0) return false;
        i += len;
    }
    return true;
}

}  // namespace sbx
