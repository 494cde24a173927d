// The per-stream output cap: how much of each chunk is shown.  Pure, so the
// byte-exact arithmetic is unit-tested without processes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "exec/supervisor.h"

namespace sbx {

class OutputCap {
public:
    explicit OutputCap(OutputCaps caps) : caps_(caps) {}

    // Accounts for the next chunk of the stream and returns how many of its
    // leading bytes are shown.  A line counts when its first byte is shown,
    // so a partial line at the cap counts as a line.
    std::size_t admit(std::string_view chunk);

    // Accounts for n bytes that are shown without being looked at (the
    // uncapped splice path); lines are not counted then.
    void admit_unseen(std::uint64_t n) {
        total_ += n;
        shown_bytes_ += n;
    }

    // Accounts for n bytes that are discarded (cap already reached).
    void discard(std::uint64_t n) { total_ += n; }

    // True when no further byte of the stream can be shown.
    bool full() const;
    bool unlimited() const { return caps_.max_bytes == 0 && caps_.max_lines == 0; }

    std::uint64_t total() const { return total_; }
    std::uint64_t shown_bytes() const { return shown_bytes_; }
    std::uint64_t shown_lines() const { return lines_; }
    bool truncated() const { return total_ > shown_bytes_; }

private:
    OutputCaps caps_;
    std::uint64_t total_ = 0;
    std::uint64_t shown_bytes_ = 0;
    std::uint64_t lines_ = 0;
    bool at_line_start_ = true;
};

}  // namespace sbx
