// Parsing of the sizes and durations that flags and policy files take.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>

namespace sbx {

// "4096", "100k", "512M", "2G", "1T" (binary multiples; optional trailing
// "B"/"iB", any case).  Throws Error("<what>: ...") on anything else.
std::uint64_t parse_size(std::string_view text, const std::string& what);

// A whole non-negative number.  Throws Error("<what>: ...") naming what is
// wrong: negative, too large, or not a number.
std::uint64_t parse_count(std::string_view text, const std::string& what);

// "500ms", "10s", "2m", "1h"; a bare number is seconds (fractions allowed:
// "1.5").  Zero only for a zero duration: "0.1ms" is 1ms.  Throws
// Error("<what>: ...").
std::chrono::milliseconds parse_duration(std::string_view text, const std::string& what);

}  // namespace sbx
