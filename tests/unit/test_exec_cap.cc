// The output cap's arithmetic: byte-exact cuts, line counting, partial lines.
#include <catch2/catch.hpp>

#include <string>

#include "exec/output_cap.h"

using sbx::OutputCap;
using sbx::OutputCaps;

namespace {

// Feeds the chunks and returns the concatenation of what was shown.
std::string feed(OutputCap& cap, std::initializer_list<std::string> chunks) {
    std::string shown;
    for (const auto& c : chunks) shown += c.substr(0, cap.admit(c));
    return shown;
}

}  // namespace

TEST_CASE("byte cap cuts exactly at the cap, across chunks") {
    OutputCap cap(OutputCaps{10, 0});
    CHECK(feed(cap, {"abcdef", "ghijkl", "mn"}) == "abcdefghij");
    CHECK(cap.shown_bytes() == 10);
    CHECK(cap.total() == 14);
    CHECK(cap.truncated());
    CHECK(cap.full());
}

TEST_CASE("output exactly at the byte cap is not truncated") {
    OutputCap cap(OutputCaps{6, 0});
    CHECK(feed(cap, {"abc", "def"}) == "abcdef");
    CHECK_FALSE(cap.truncated());
    CHECK(cap.full());
}

TEST_CASE("line cap keeps whole lines and cuts at the first byte of the next") {
    OutputCap cap(OutputCaps{0, 2});
    CHECK(feed(cap, {"one\ntw", "o\nthree\n"}) == "one\ntwo\n");
    CHECK(cap.shown_lines() == 2);
    CHECK(cap.truncated());
    CHECK(cap.full());
}

TEST_CASE("a partial last line counts as a line and is shown") {
    OutputCap cap(OutputCaps{0, 2});
    CHECK(feed(cap, {"one\ntwo"}) == "one\ntwo");
    CHECK(cap.shown_lines() == 2);
    CHECK_FALSE(cap.truncated());
    CHECK_FALSE(cap.full());  // the second line may still grow
    CHECK(feed(cap, {" more\nthree"}) == " more\n");
    CHECK(cap.truncated());
}

TEST_CASE("a partial line cut by the byte cap counts as a line") {
    OutputCap cap(OutputCaps{6, 5});
    CHECK(feed(cap, {"ab\ncdefgh\n"}) == "ab\ncde");
    CHECK(cap.shown_lines() == 2);
    CHECK(cap.shown_bytes() == 6);
}

TEST_CASE("the stricter of the two caps wins") {
    OutputCap lines_first(OutputCaps{100, 1});
    CHECK(feed(lines_first, {"x\ny\n"}) == "x\n");
    OutputCap bytes_first(OutputCaps{3, 100});
    CHECK(feed(bytes_first, {"x\ny\nz\n"}) == "x\ny");
}

TEST_CASE("binary data with NUL bytes is counted like any other") {
    OutputCap cap(OutputCaps{5, 0});
    const std::string bin("\0\1\2\n\0\xff\xfe", 7);
    CHECK(bin.substr(0, cap.admit(bin)) == std::string("\0\1\2\n\0", 5));
}

TEST_CASE("unlimited shows everything and counts lines") {
    OutputCap cap(OutputCaps{0, 0});
    CHECK(cap.unlimited());
    CHECK(feed(cap, {"a\nb\nc"}) == "a\nb\nc");
    CHECK(cap.shown_lines() == 3);
    CHECK_FALSE(cap.truncated());
    cap.admit_unseen(100);
    CHECK(cap.total() == 105);
}

TEST_CASE("discarded bytes are counted, not shown") {
    OutputCap cap(OutputCaps{1, 0});
    CHECK(feed(cap, {"ab"}) == "a");
    cap.discard(1000);
    CHECK(cap.total() == 1002);
    CHECK(cap.shown_bytes() == 1);
}
