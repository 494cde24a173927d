// sbx-tls's streaming replacement (tls/substitute.h): whole, split at every
// point, several pairs, held only while a prefix could still match.
#include <catch2/catch.hpp>

#include "substitute.h"

using sbx::tls::Substituter;
using Pairs = std::vector<std::pair<std::string, std::string>>;

namespace {

// text fed in pieces cut at the given points, then flushed.
std::string through(Substituter& s, const std::string& text, std::vector<std::size_t> cuts) {
    std::string out;
    std::size_t from = 0;
    cuts.push_back(text.size());
    for (const std::size_t cut : cuts) {
        out += s.feed(std::string_view(text).substr(from, cut - from));
        from = cut;
    }
    return out + s.flush();
}

}  // namespace

TEST_CASE("a sentinel is replaced wherever the stream is cut") {
    const std::string text = "GET / HTTP/1.1\r\nAuthorization: Bearer SENTINEL12\r\n\r\n";
    const std::string want = "GET / HTTP/1.1\r\nAuthorization: Bearer realvalue0\r\n\r\n";
    for (std::size_t cut = 0; cut <= text.size(); ++cut) {
        Substituter s(Pairs{{"SENTINEL12", "realvalue0"}});
        CHECK(through(s, text, {cut}) == want);
    }
    for (std::size_t a = 0; a <= text.size(); a += 3)
        for (std::size_t b = a; b <= text.size(); b += 5) {
            Substituter s(Pairs{{"SENTINEL12", "realvalue0"}});
            CHECK(through(s, text, {a, b}) == want);
        }
}

TEST_CASE("only a suffix that could begin a sentinel is held, and flush gives it back unchanged") {
    Substituter s(Pairs{{"SENTINEL12", "realvalue0"}});
    CHECK(s.feed("abc SENT") == "abc ");
    CHECK(s.holding());
    CHECK(s.flush() == "SENT");
    CHECK(!s.holding());
    CHECK(s.feed("no prefix here x") == "no prefix here x");
    CHECK(!s.holding());
    CHECK(s.feed("SSENTINEL12S") == "Srealvalue0");  // the last S could begin another
    CHECK(s.flush() == "S");
}

TEST_CASE("several pairs, each replaced, lengths kept; pairs of unequal length are dropped") {
    Substituter s(Pairs{{"AAAAAAAA", "11111111"}, {"BBBBBBBB", "22222222"}, {"short", "longer!"}});
    const std::string out = through(s, "x AAAAAAAA y BBBBBBBB z AAAAAAAAshort", {7, 20});
    CHECK(out == "x 11111111 y 22222222 z 11111111short");
    Substituter none(Pairs{});
    CHECK(none.feed("anything") == "anything");
}
