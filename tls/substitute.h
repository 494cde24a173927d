// The streaming replacement sbx-tls makes in each direction of a
// terminated connection (issue 36): several (from, to) pairs of the same
// length, so that what it replaces never changes a message's framing.
// Pure: tests/unit/test_tls_substitute.cc.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace sbx::tls {

class Substituter {
public:
    // Each pair's two strings have the same, non-zero length.
    explicit Substituter(std::vector<std::pair<std::string, std::string>> pairs);

    // In place: every `from` in buf that starts at or after `start` (the
    // bytes before it are final) replaced; returns how many bytes of buf are
    // final now: the rest is a suffix that could begin a `from`.  The relay
    // reads into the end of one buffer and writes from its start, so that
    // no byte is copied on its way through.
    std::size_t scan(std::string& buf, std::size_t start) const;

    // The same over a stream of chunks, for the tests: the bytes of chunk
    // (after what is held) that are final, a possible prefix held back.
    std::string feed(std::string_view chunk);
    // What is held, as it is (the source ended or went quiet).
    std::string flush();
    bool holding() const { return !held_.empty(); }

private:
    std::vector<std::pair<std::string, std::string>> pairs_;
    std::size_t longest_ = 0;
    std::string held_;
};

}  // namespace sbx::tls
