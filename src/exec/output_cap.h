// The per-stream output cap: which bytes of a stream are shown, the head
// (live) and the tail (at the end), and what was omitted between them.
// Pure, so the byte-exact arithmetic is unit-tested without processes.
//
// The budget is caps.max_bytes bytes and caps.max_lines lines (0: no limit
// of that kind; both 0: everything is shown).  A line counts when one of its
// bytes is shown, so a line cut by the byte cap counts as a line.
//   Keep::Head  the first bytes of the stream, up to the budget.
//   Keep::Tail  the last bytes, up to the budget.
//   Keep::Both  the head gets the first half of the budget (max_bytes / 2
//               bytes, max_lines / 2 lines, rounded down); the tail gets what
//               the head left, so that a stream within the whole budget is
//               shown whole, and what is shown never exceeds the budget.
// The head is cut where the budget ends (at a line end under the line cap,
// mid-line under the byte cap), but not inside a UTF-8 sequence when the
// sequence began in the same chunk; the tail starts after whole lines under
// the line cap, mid-line under the byte cap, but not on a UTF-8 continuation
// byte.  The tail is a bounded buffer: at most the byte budget, or
// kTailLimitBytes when only lines are capped.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "exec/supervisor.h"

namespace sbx {

// What a capped stream did not show: the bytes, and the lines of which no
// byte was shown.
struct Omission {
    std::uint64_t bytes = 0;
    std::uint64_t lines = 0;
};

class OutputCap {
public:
    // The most the tail keeps when only the line cap is set.
    static constexpr std::size_t kTailLimitBytes = 256 * 1024;

    explicit OutputCap(OutputCaps caps);

    // Accounts for the next chunk of the stream and returns how many of its
    // leading bytes are shown now (the head); the rest goes to the tail or
    // is omitted.
    std::size_t admit(std::string_view chunk);

    // Accounts for n bytes that are shown without being looked at (the
    // uncapped splice path); lines are not counted then.
    void admit_unseen(std::uint64_t n) {
        total_ += n;
        head_bytes_ += n;
        unseen_ = true;
    }

    bool unlimited() const { return caps_.max_bytes == 0 && caps_.max_lines == 0; }

    // The tail: shown once the stream has ended, after the omission note.
    std::string_view tail() const { return std::string_view(ring_).substr(ring_start_); }

    std::uint64_t total() const { return total_; }
    std::uint64_t total_lines() const;
    std::uint64_t shown_bytes() const { return total_ - dropped_; }
    std::uint64_t shown_lines() const { return total_lines() - omitted().lines; }
    Omission omitted() const;
    bool truncated() const { return dropped_ > 0; }
    // Whether the last byte of the head is a newline (or the head is empty):
    // where the omission note goes when the tail is shown right after.
    bool head_ends_line() const { return head_bytes_ == 0 || head_last_ == '\n'; }

private:
    std::size_t take_head(std::string_view chunk);
    void close_head();
    void to_tail(std::string_view data, std::uint64_t data_newlines);
    void drop(std::size_t n);  // n bytes from the tail's front into the gap
    void remember_gap(std::string_view gone);
    std::uint64_t ring_lines() const;

    OutputCaps caps_;
    static constexpr std::uint64_t kNone = UINT64_MAX;  // no limit
    // How much text around a cut is looked at to tell UTF-8 from binary.
    static constexpr std::size_t kTextWindow = 64;
    // Head: what is shown live.
    bool head_open_ = true;
    std::uint64_t head_max_bytes_ = kNone, head_max_lines_ = kNone;
    std::uint64_t head_bytes_ = 0, head_lines_ = 0;
    bool at_line_start_ = true;
    char head_last_ = '\n';
    // Tail: a buffer from ring_start_, at most tail_max_bytes_ and
    // tail_max_lines_ (not counting the rest of the head's last line while
    // nothing was dropped).
    std::uint64_t tail_max_bytes_ = 0, tail_max_lines_ = 0;
    std::string ring_;
    std::size_t ring_start_ = 0;
    std::uint64_t ring_newlines_ = 0;
    // The gap between head and tail: bytes dropped, their newlines, the last.
    std::uint64_t dropped_ = 0, gap_newlines_ = 0;
    char gap_last_ = '\n';
    std::string gap_context_;  // the gap's last kTextWindow bytes (is it text?)
    // The whole stream.
    std::uint64_t total_ = 0, newlines_ = 0;
    char last_ = '\n';
    bool unseen_ = false;
};

// The note at the omission point of a capped live stream (--cap-live):
// "sbx: stdout: omitted 3 lines (21 bytes) here; to see all output run
// without --cap-live\n" (singular for 1; "omitted 5 bytes (no whole line)"
// when only parts of lines were omitted).
std::string omission_note(Stream, const Omission&);

// The name of a keep mode ("head", "tail", "both").
const char* keep_name(Keep);

}  // namespace sbx
