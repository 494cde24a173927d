#include <catch2/catch.hpp>

#include "policy/units.h"
#include "util/error.h"

using namespace sbx;
using namespace std::chrono_literals;

TEST_CASE("sizes") {
    CHECK(parse_size("4096", "x") == 4096u);
    CHECK(parse_size("100k", "x") == 102400u);
    CHECK(parse_size("512M", "x") == 512u << 20);
    CHECK(parse_size("2G", "x") == 2ull << 30);
    CHECK(parse_size("2GiB", "x") == 2ull << 30);
    CHECK(parse_size("1.5K", "x") == 1536u);
    CHECK(parse_size("1t", "x") == 1ull << 40);
    for (const char* bad : {"", "M", "-1", "1X", "1..5", "12 M", "99999999999T"})
        CHECK_THROWS_WITH(parse_size(bad, "--limit-memory"), Catch::StartsWith("--limit-memory: '"));
}

TEST_CASE("counts") {
    CHECK(parse_count("0", "x") == 0u);
    CHECK(parse_count("64", "x") == 64u);
    for (const char* bad : {"", "1.5", "ten", "3 ", "-"})
        CHECK_THROWS_WITH(parse_count(bad, "--limit-procs"), Catch::EndsWith("is not a whole number"));
}

TEST_CASE("a negative number is called negative, with what to give instead") {
    CHECK_THROWS_WITH(parse_count("-3", "--limit-procs"),
                      "--limit-procs: '-3' is negative; give a whole number, 0 or more");
    CHECK_THROWS_WITH(parse_size("-1M", "--limit-memory"),
                      "--limit-memory: '-1M' is negative; give a size such as 4096, 100k, 512M, 2G");
    CHECK_THROWS_WITH(parse_duration("-1.5", "--timeout"),
                      "--timeout: '-1.5' is negative; give a duration such as 500ms, 10s, 2m, 1h");
    CHECK_THROWS_WITH(parse_count("99999999999999999999", "--max-output-bytes"),
                      "--max-output-bytes: '99999999999999999999' is too large");
}

TEST_CASE("durations") {
    CHECK(parse_duration("500ms", "t") == 500ms);
    CHECK(parse_duration("10s", "t") == 10s);
    CHECK(parse_duration("10", "t") == 10s);
    CHECK(parse_duration("1.5", "t") == 1500ms);
    CHECK(parse_duration("2m", "t") == 120s);
    CHECK(parse_duration("1h", "t") == 3600s);
    CHECK(parse_duration("0", "t") == 0ms);
    CHECK(parse_duration("0ms", "t") == 0ms);
    CHECK(parse_duration("0.1ms", "t") == 1ms);
    CHECK(parse_duration("0.0001", "t") == 1ms);
    for (const char* bad : {"", "s", "10x", "-1", "1e3", "ms10"})
        CHECK_THROWS_WITH(parse_duration(bad, "--timeout"), Catch::StartsWith("--timeout: '"));
}
