#include "policy/units.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <limits>
#include <optional>

#include <fmt/format.h>

#include "util/ascii.h"
#include "util/error.h"

namespace sbx {

namespace {

// Splits "512M" into the number "512" and the suffix "m".
std::pair<std::string_view, std::string> split_number(std::string_view text) {
    std::size_t i = 0;
    while (i < text.size() && (std::isdigit(static_cast<unsigned char>(text[i])) || text[i] == '.')) ++i;
    return {text.substr(0, i), ascii_lower(text.substr(i))};
}

std::optional<double> to_double(std::string_view digits) {
    if (digits.empty() || digits.front() == '.' || digits.back() == '.' ||
        std::count(digits.begin(), digits.end(), '.') > 1)
        return std::nullopt;
    // Digits and one inner '.' only (checked above), read by hand: Apple's
    // libc++ has no std::from_chars for double, and strtod follows the locale.
    // All the digits as one whole number, divided once by the power of ten
    // of the fraction: "0.3" is 3 / 10, as close to 0.3 as a double gets.
    double mantissa = 0, divisor = 1;
    bool after_point = false;
    for (char c : digits) {
        if (c == '.') {
            after_point = true;
            continue;
        }
        mantissa = mantissa * 10 + (c - '0');
        if (after_point) divisor *= 10;
    }
    return mantissa / divisor;
}

// A negative number is named as such, not as garbage: "-5" is a number the
// user meant, only below zero.
void refuse_negative(std::string_view text, const std::string& what, std::string_view instead) {
    if (text.size() > 1 && text.front() == '-' && (std::isdigit(static_cast<unsigned char>(text[1])) || text[1] == '.'))
        throw Error(fmt::format("{}: '{}' is negative; give {}", what, text, instead));
}

}  // namespace

std::uint64_t parse_count(std::string_view text, const std::string& what) {
    refuse_negative(text, what, "a whole number, 0 or more");
    std::uint64_t v = 0;
    auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
    if (ec == std::errc::result_out_of_range) throw Error(fmt::format("{}: '{}' is too large", what, text));
    if (text.empty() || ec != std::errc() || ptr != text.data() + text.size())
        throw Error(fmt::format("{}: '{}' is not a whole number", what, text));
    return v;
}

std::uint64_t parse_size(std::string_view text, const std::string& what) {
    refuse_negative(text, what, "a size such as 4096, 100k, 512M, 2G");
    auto [digits, suffix] = split_number(text);
    auto value = to_double(digits);
    if (!suffix.empty() && suffix.back() == 'b') suffix.pop_back();
    if (suffix.size() == 2 && suffix.back() == 'i') suffix.pop_back();
    int shift = -1;
    if (suffix.empty()) shift = 0;
    else if (suffix == "k") shift = 10;
    else if (suffix == "m") shift = 20;
    else if (suffix == "g") shift = 30;
    else if (suffix == "t") shift = 40;
    if (!value || shift < 0)
        throw Error(fmt::format("{}: '{}' is not a size (examples: 4096, 100k, 512M, 2G)", what, text));
    double bytes = std::ldexp(*value, shift);
    if (bytes >= 18446744073709551616.0) throw Error(fmt::format("{}: '{}' is too large", what, text));
    return static_cast<std::uint64_t>(bytes);
}

std::chrono::milliseconds parse_duration(std::string_view text, const std::string& what) {
    refuse_negative(text, what, "a duration such as 500ms, 10s, 2m, 1h");
    auto [digits, suffix] = split_number(text);
    auto value = to_double(digits);
    double ms_per_unit = -1;
    if (suffix.empty() || suffix == "s") ms_per_unit = 1000;
    else if (suffix == "ms") ms_per_unit = 1;
    else if (suffix == "m") ms_per_unit = 60'000;
    else if (suffix == "h") ms_per_unit = 3'600'000;
    if (!value || ms_per_unit < 0)
        throw Error(
            fmt::format("{}: '{}' is not a duration (examples: 500ms, 10s, 2m, 1h; a bare number is "
                        "seconds)",
                        what, text));
    double ms = *value * ms_per_unit;
    if (ms > 1e15) throw Error(fmt::format("{}: '{}' is too long", what, text));
    // Only a zero duration is zero (to --timeout: no timeout); a positive one
    // below a millisecond is one millisecond.
    return std::chrono::milliseconds(std::max<std::int64_t>(std::llround(ms), ms > 0 ? 1 : 0));
}

}  // namespace sbx
