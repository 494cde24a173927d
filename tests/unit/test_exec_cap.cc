// The output cap's arithmetic: the head, the tail and what was omitted,
// byte-exact, with lines cut mid-way, UTF-8, CRLF, zero caps and each keep
// mode; a property test checks every count against a brute-force reading.
#include <catch2/catch.hpp>

#include <algorithm>
#include <random>
#include <string>
#include <vector>

#include "exec/output_cap.h"

using sbx::Keep;
using sbx::OutputCap;
using sbx::OutputCaps;
using sbx::Stream;

namespace {

struct Shown {
    std::string head, tail;
    std::string all() const { return head + tail; }
};

Shown feed(OutputCap& cap, const std::vector<std::string>& chunks) {
    Shown s;
    for (const auto& c : chunks) s.head += c.substr(0, cap.admit(c));
    s.tail = std::string(cap.tail());
    return s;
}

Shown run(OutputCaps caps, const std::vector<std::string>& chunks) {
    OutputCap cap(caps);
    return feed(cap, chunks);
}

std::string numbered(int from, int to, const char* prefix) {
    std::string s;
    for (int i = from; i <= to; ++i) s += prefix + std::to_string(i) + "\n";
    return s;
}

// The lines of s of which no byte lies in the head or the tail.
std::uint64_t lines_unshown(const std::string& s, std::size_t head, std::size_t tail) {
    std::uint64_t n = 0;
    std::size_t start = 0;
    while (start < s.size()) {
        std::size_t end = s.find('\n', start);
        end = end == std::string::npos ? s.size() : end + 1;  // [start, end)
        const bool shown = start < head || end > s.size() - tail;
        if (!shown) ++n;
        start = end;
    }
    return n;
}

std::uint64_t lines_of(const std::string& s) { return lines_unshown(s, 0, 0); }

}  // namespace

TEST_CASE("head: the byte cap cuts exactly at the cap, across chunks") {
    OutputCap cap(OutputCaps{10, 0, Keep::Head});
    const Shown s = feed(cap, {"abcdef", "ghijkl", "mn"});
    CHECK(s.head == "abcdefghij");
    CHECK(s.tail.empty());
    CHECK(cap.shown_bytes() == 10);
    CHECK(cap.total() == 14);
    CHECK(cap.truncated());
    CHECK(cap.omitted().bytes == 4);
    CHECK(cap.omitted().lines == 0);  // the only line has bytes shown
}

TEST_CASE("output exactly at the byte cap is not truncated, whatever is kept") {
    for (Keep k : {Keep::Head, Keep::Tail, Keep::Both}) {
        OutputCap cap(OutputCaps{6, 0, k});
        CHECK(feed(cap, {"abc", "def"}).all() == "abcdef");
        CHECK_FALSE(cap.truncated());
    }
}

TEST_CASE("head: the line cap keeps whole lines and cuts at the first byte of the next") {
    OutputCap cap(OutputCaps{0, 2, Keep::Head});
    CHECK(feed(cap, {"one\ntw", "o\nthree\n"}).head == "one\ntwo\n");
    CHECK(cap.shown_lines() == 2);
    CHECK(cap.omitted().lines == 1);
    CHECK(cap.omitted().bytes == 6);
}

TEST_CASE("a partial last line counts as a line and is shown") {
    OutputCap cap(OutputCaps{0, 2, Keep::Head});
    CHECK(feed(cap, {"one\ntwo"}).head == "one\ntwo");
    CHECK_FALSE(cap.truncated());
    CHECK(feed(cap, {" more\nthree"}).head == " more\n");
    CHECK(cap.truncated());
    CHECK(cap.omitted().lines == 1);
}

TEST_CASE("the stricter of the two caps wins") {
    CHECK(run(OutputCaps{100, 1, Keep::Head}, {"x\ny\n"}).head == "x\n");
    CHECK(run(OutputCaps{3, 100, Keep::Head}, {"x\ny\nz\n"}).head == "x\ny");
}

TEST_CASE("both: 400 ok lines and the summary keep the summary") {
    const std::string text = numbered(1, 400, "ok ") + "=== 1 failed, 400 passed ===\n";
    OutputCap cap(OutputCaps{});  // the defaults: 10240 bytes, 256 lines, both
    const Shown s = feed(cap, {text});
    CHECK(s.head == numbered(1, 128, "ok "));
    CHECK(s.tail == numbered(274, 400, "ok ") + "=== 1 failed, 400 passed ===\n");
    CHECK(cap.shown_lines() == 256);
    CHECK(cap.omitted().lines == 145);
    CHECK(cap.omitted().bytes == numbered(129, 273, "ok ").size());
    CHECK(cap.total_lines() == 401);
}

TEST_CASE("both: a stream within the whole budget is shown whole") {
    // 200 lines: more than the head's half, less than the budget.
    const std::string text = numbered(1, 200, "line ");
    const Shown s = run(OutputCaps{}, {text});
    CHECK(s.head == numbered(1, 128, "line "));
    CHECK(s.all() == text);
    // One long line and short ones, within the budget: the head cut mid-line
    // by bytes, the rest of that line is not a line of the tail's own.
    const std::string long_first = std::string(6000, 'a') + "\n" + numbered(1, 255, "");
    OutputCap cap(OutputCaps{10240, 256, Keep::Both});
    CHECK(feed(cap, {long_first}).all() == long_first);
    CHECK_FALSE(cap.truncated());
    CHECK(cap.shown_lines() == 256);
}

TEST_CASE("both: a line cut mid-way by the byte cap") {
    OutputCap cap(OutputCaps{10, 0, Keep::Both});
    const Shown s = feed(cap, {std::string(20, 'a') + "\n"});
    CHECK(s.head == "aaaaa");
    CHECK(s.tail == "aaaa\n");
    CHECK(cap.omitted().bytes == 11);
    CHECK(cap.omitted().lines == 0);  // the line shows at both ends
    CHECK(cap.shown_lines() == 1);
    CHECK(sbx::omission_note(Stream::Stdout, cap.omitted()) ==
          "sbx: stdout: omitted 11 bytes (no whole line) here; to see all output run without --cap-live\n");
}

TEST_CASE("no trailing newline") {
    OutputCap cap(OutputCaps{0, 2, Keep::Both});
    const Shown s = feed(cap, {"a\nb\nc"});
    CHECK(s.head == "a\n");
    CHECK(s.tail == "c");
    CHECK(cap.omitted().lines == 1);
    CHECK(cap.omitted().bytes == 2);
    CHECK(cap.total_lines() == 3);
}

TEST_CASE("CRLF lines stay whole") {
    const std::string text = "one\r\ntwo\r\nthree\r\nfour\r\n";
    OutputCap cap(OutputCaps{0, 2, Keep::Both});
    const Shown s = feed(cap, {text.substr(0, 4), text.substr(4, 7), text.substr(11)});
    CHECK(s.head == "one\r\n");
    CHECK(s.tail == "four\r\n");
    CHECK(cap.omitted().lines == 2);
    CHECK(cap.omitted().bytes == 12);
}

TEST_CASE("tail only") {
    OutputCap cap(OutputCaps{0, 3, Keep::Tail});
    std::vector<std::string> chunks;
    for (int i = 1; i <= 10; ++i) chunks.push_back(std::to_string(i) + "\n");
    const Shown s = feed(cap, chunks);
    CHECK(s.head.empty());
    CHECK(s.tail == "8\n9\n10\n");
    CHECK(cap.omitted().lines == 7);
    CHECK(cap.omitted().bytes == 14);
    // By bytes, mid-line.
    CHECK(run(OutputCaps{4, 0, Keep::Tail}, {"hello\nworld\n"}).tail == "rld\n");
}

TEST_CASE("zero and tiny caps") {
    // Both caps 0: no cap at all.
    OutputCap none(OutputCaps{0, 0, Keep::Both});
    CHECK(feed(none, {"a\nb\n", "c"}).head == "a\nb\nc");
    CHECK(none.unlimited());
    CHECK_FALSE(none.truncated());
    CHECK(none.shown_lines() == 3);
    none.admit_unseen(100);
    CHECK(none.total() == 105);
    // One byte, both: the head's half is 0, the tail has the byte.
    const Shown one = run(OutputCaps{1, 0, Keep::Both}, {"abc"});
    CHECK(one.head.empty());
    CHECK(one.tail == "c");
    // One line, both: the last line.
    const Shown line = run(OutputCaps{0, 1, Keep::Both}, {"x\ny\nz\n"});
    CHECK(line.head.empty());
    CHECK(line.tail == "z\n");
}

TEST_CASE("UTF-8 is not split where the sequence is in view") {
    // é is C3 A9: a cut at 5 would fall between its bytes.
    const std::string text =
        "abcd\xC3\xA9"
        "fgh";
    const Shown head = run(OutputCaps{5, 0, Keep::Head}, {text});
    CHECK(head.head == "abcd");
    // The tail does not start on a continuation byte.
    const Shown tail = run(OutputCaps{4, 0, Keep::Tail}, {text});
    CHECK(tail.tail == "fgh");
    // A 4-byte sequence (U+1F600) at the head's cut.
    const std::string emoji =
        "ab\xF0\x9F\x98\x80"
        "cd";
    OutputCap cap(OutputCaps{8, 0, Keep::Both});
    const Shown both = feed(cap, {emoji});
    CHECK(both.head == "ab");
    CHECK(both.all() == emoji);
    // Binary data (not UTF-8 text around the cut) is cut byte-exact.
    const std::string bin("\xff\x01\x02\xC3\xA9\x03", 6);
    CHECK(run(OutputCaps{4, 0, Keep::Head}, {bin}).head == bin.substr(0, 4));
    CHECK(run(OutputCaps{2, 0, Keep::Tail}, {bin}).tail == bin.substr(4));
    // A line made only of the sequence that the head gives back is not shown.
    OutputCap lines(OutputCaps{5, 0, Keep::Head});
    feed(lines, {"abc\n\xC3\xA9\n"});
    CHECK(lines.shown_bytes() == 4);
    CHECK(lines.omitted().lines == 1);
}

TEST_CASE("binary data with NUL bytes is counted like any other") {
    const std::string bin("\0\1\2\n\0\xff\xfe", 7);
    CHECK(run(OutputCaps{5, 0, Keep::Head}, {bin}).head == std::string("\0\1\2\n\0", 5));
}

TEST_CASE("the tail stays within the cap however much passes") {
    OutputCap cap(OutputCaps{10240, 256, Keep::Both});
    const std::string chunk(65536, 'x');
    for (int i = 0; i < 2000; ++i) cap.admit(chunk);
    CHECK(cap.tail().size() == 5120);
    CHECK(cap.total() == 2000ULL * 65536);
    CHECK(cap.omitted().bytes == cap.total() - 10240);
    // Lines only: the tail's own limit.
    OutputCap lines(OutputCaps{0, 40, Keep::Both});
    const std::string line = std::string(65535, 'x') + "\n";
    for (int i = 0; i < 100; ++i) lines.admit(line);
    CHECK(lines.tail().size() == OutputCap::kTailLimitBytes);
}

TEST_CASE("the omission note: counts, singular and plural") {
    using sbx::Omission;
    CHECK(sbx::omission_note(Stream::Stdout, Omission{1, 1}) ==
          "sbx: stdout: omitted 1 line (1 byte) here; to see all output run without --cap-live\n");
    CHECK(sbx::omission_note(Stream::Stderr, Omission{312, 44}) ==
          "sbx: stderr: omitted 44 lines (312 bytes) here; to see all output run without --cap-live\n");
    CHECK(sbx::omission_note(Stream::Stdout, Omission{1, 0}) ==
          "sbx: stdout: omitted 1 byte (no whole line) here; to see all output run without --cap-live\n");
}

TEST_CASE("property: head, tail and counts agree with a brute-force reading") {
    std::mt19937 rng(1234);
    auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
    for (int round = 0; round < 3000; ++round) {
        std::string s;
        const int len = pick(0, 120);
        for (int i = 0; i < len; ++i) s += pick(0, 4) == 0 ? '\n' : static_cast<char>('a' + pick(0, 25));
        OutputCaps caps{static_cast<std::uint64_t>(pick(0, 3) == 0 ? 0 : pick(1, 40)),
                        static_cast<std::uint64_t>(pick(0, 3) == 0 ? 0 : pick(1, 12)), static_cast<Keep>(pick(0, 2))};
        std::vector<std::string> chunks;
        for (std::size_t p = 0; p < s.size();) {
            const std::size_t n = std::min<std::size_t>(static_cast<std::size_t>(pick(1, 17)), s.size() - p);
            chunks.push_back(s.substr(p, n));
            p += n;
        }
        INFO("round " << round << " caps " << caps.max_bytes << "/" << caps.max_lines << "/"
                      << sbx::keep_name(caps.keep) << " text '" << s << "'");
        OutputCap cap(caps);
        const Shown got = feed(cap, chunks);
        const Shown whole = run(caps, {s});
        CHECK(got.head == whole.head);  // the chunking changes nothing
        CHECK(got.tail == whole.tail);
        REQUIRE(got.head.size() + got.tail.size() <= s.size());
        CHECK(s.compare(0, got.head.size(), got.head) == 0);
        CHECK(s.compare(s.size() - got.tail.size(), got.tail.size(), got.tail) == 0);
        const std::uint64_t omitted = s.size() - got.head.size() - got.tail.size();
        CHECK(cap.omitted().bytes == omitted);
        CHECK(cap.truncated() == (omitted > 0));
        CHECK(cap.omitted().lines == lines_unshown(s, got.head.size(), got.tail.size()));
        CHECK(cap.total_lines() == lines_of(s));
        CHECK(cap.shown_lines() == lines_of(s) - lines_unshown(s, got.head.size(), got.tail.size()));
        // Within the budget, and nothing omitted when the text fits in it.
        if (caps.max_bytes != 0) CHECK(got.head.size() + got.tail.size() <= caps.max_bytes);
        if (caps.max_lines != 0) CHECK(cap.shown_lines() <= caps.max_lines);
        const bool fits = (caps.max_bytes == 0 || s.size() <= caps.max_bytes) &&
                          (caps.max_lines == 0 || lines_of(s) <= caps.max_lines);
        if (fits) CHECK(got.all() == s);
        if (caps.keep == Keep::Head) CHECK(got.tail.empty());
        if (caps.keep == Keep::Tail && !(caps.max_bytes == 0 && caps.max_lines == 0)) CHECK(got.head.empty());
        if (caps.keep == Keep::Both && caps.max_bytes != 0) CHECK(got.head.size() <= caps.max_bytes / 2);
    }
}

TEST_CASE("lines are counted exactly whatever the bytes around them") {
    std::mt19937 rng(99);
    const char bytes[] = {'\n', '\x8a', '\x0b', '\x09', '\x00', '\xff', 'a', '\x7f'};
    for (int round = 0; round < 200; ++round) {
        std::string s;
        const int len = std::uniform_int_distribution<int>(0, 3000)(rng);
        for (int i = 0; i < len; ++i) s += bytes[std::uniform_int_distribution<int>(0, 7)(rng)];
        OutputCap cap(OutputCaps{0, 0, Keep::Both});
        cap.admit(s);
        const auto nl = static_cast<std::uint64_t>(std::count(s.begin(), s.end(), '\n'));
        CHECK(cap.total_lines() == (s.empty() ? 0 : nl + (s.back() == '\n' ? 0 : 1)));
    }
}
