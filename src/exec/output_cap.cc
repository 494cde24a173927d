#include "exec/output_cap.h"

#include <algorithm>
#include <cstring>

#include <fmt/format.h>

namespace sbx {

namespace {

bool continuation(char c) { return (static_cast<unsigned char>(c) & 0xC0) == 0x80; }

// The length of the UTF-8 sequence that c starts (0: not a lead byte).
std::size_t sequence_length(char c) {
    const auto u = static_cast<unsigned char>(c);
    if (u >= 0xC2 && u <= 0xDF) return 2;
    if (u >= 0xE0 && u <= 0xEF) return 3;
    if (u >= 0xF0 && u <= 0xF4) return 4;
    return 0;
}

// Whether s reads as UTF-8 text (sequences cut off at either end allowed):
// only then is a cut moved off a sequence, so that binary data is cut
// byte-exact.
bool looks_like_text(std::string_view s) {
    std::size_t start = 0;  // the window may begin inside a sequence
    while (start < 3 && start < s.size() && continuation(s[start])) ++start;
    for (std::size_t i = start; i < s.size();) {
        const char c = s[i];
        if (c == '\0') return false;
        if (static_cast<unsigned char>(c) < 0x80) {
            ++i;
            continue;
        }
        const std::size_t n = sequence_length(c);
        if (n == 0) return false;
        for (std::size_t k = 1; k < n && i + k < s.size(); ++k)
            if (!continuation(s[i + k])) return false;
        i += n;
    }
    return true;
}

// The newlines in s, eight bytes at a time (every byte of a capped stream
// passes here; std::count is a byte at a time).
std::uint64_t newlines(std::string_view s) {
    constexpr std::uint64_t kOnes = 0x0101010101010101ULL, kLow7 = 0x7F7F7F7F7F7F7F7FULL, kNl = kOnes * '\n';
    const char* p = s.data();
    std::size_t n = s.size();
    std::uint64_t count = 0;
    while (n >= 8) {
        std::uint64_t lanes = 0;  // per byte: the newlines seen there, at most 255
        const std::size_t words = std::min<std::size_t>(n / 8, 255);
        for (std::size_t w = 0; w < words; ++w) {
            std::uint64_t x;
            std::memcpy(&x, p + 8 * w, 8);
            x ^= kNl;  // a newline is now a zero byte: its high bit ends up set, exactly
            lanes += (~(((x & kLow7) + kLow7) | x) >> 7) & kOnes;
        }
        lanes = (lanes & 0x00FF00FF00FF00FFULL) + ((lanes >> 8) & 0x00FF00FF00FF00FFULL);
        count += (lanes * 0x0001000100010001ULL) >> 48;
        p += 8 * words;
        n -= 8 * words;
    }
    for (std::size_t i = 0; i < n; ++i) count += p[i] == '\n' ? 1 : 0;
    return count;
}

std::string plural(std::uint64_t n, const char* what) { return fmt::format("{} {}{}", n, what, n == 1 ? "" : "s"); }

}  // namespace

OutputCap::OutputCap(OutputCaps caps) : caps_(caps) {
    if (unlimited()) return;
    auto limit = [](std::uint64_t cap) { return cap == 0 ? kNone : cap; };
    switch (caps.keep) {
        case Keep::Head:
            head_max_bytes_ = limit(caps.max_bytes);
            head_max_lines_ = limit(caps.max_lines);
            break;
        case Keep::Both:
            head_max_bytes_ = caps.max_bytes == 0 ? kNone : caps.max_bytes / 2;
            head_max_lines_ = caps.max_lines == 0 ? kNone : caps.max_lines / 2;
            break;
        case Keep::Tail:
            head_max_bytes_ = 0;
            head_max_lines_ = 0;
            break;
    }
}

// The head walks line by line; the cut falls on the first byte of the line
// that would exceed the line budget, or where the byte budget ends.
std::size_t OutputCap::take_head(std::string_view chunk) {
    std::size_t limit = chunk.size();
    if (head_max_bytes_ != kNone)
        limit = static_cast<std::size_t>(std::min<std::uint64_t>(limit, head_max_bytes_ - head_bytes_));
    const char* data = chunk.data();
    std::size_t p = 0;
    bool line_full = false;
    while (p < limit) {
        if (at_line_start_) {
            if (head_lines_ >= head_max_lines_) {
                line_full = true;
                break;
            }
            ++head_lines_;
            at_line_start_ = false;
        }
        const void* nl = std::memchr(data + p, '\n', limit - p);
        if (nl == nullptr) {
            p = limit;
            break;
        }
        p = static_cast<std::size_t>(static_cast<const char*>(nl) - data) + 1;
        at_line_start_ = true;
    }
    // Cut by the byte budget inside a UTF-8 sequence that began in this
    // chunk: the sequence goes to the tail whole.
    if (!line_full && p < chunk.size() && p > 0 && continuation(chunk[p])) {
        std::size_t i = p;
        while (i > 0 && p - i < 3 && continuation(chunk[i - 1])) --i;
        const std::size_t lead = i > 0 ? i - 1 : 0;
        const std::size_t from = lead > kTextWindow ? lead - kTextWindow : 0;
        if (i > 0 && sequence_length(chunk[lead]) > p - lead &&
            looks_like_text(chunk.substr(from, lead - from + kTextWindow))) {
            const std::size_t cut = i - 1;
            // The line lost its first byte: it is no longer shown.
            if ((cut == 0 ? head_bytes_ == 0 || head_last_ == '\n' : chunk[cut - 1] == '\n')) {
                --head_lines_;
                at_line_start_ = true;
            }
            p = cut;
            line_full = true;  // the head ends here
        }
    }
    head_bytes_ += p;
    if (p > 0) head_last_ = chunk[p - 1];
    if (line_full || p < chunk.size() || head_bytes_ == head_max_bytes_ ||
        (at_line_start_ && head_lines_ >= head_max_lines_))
        close_head();
    return p;
}

// The tail gets what the head left of the budget.
void OutputCap::close_head() {
    head_open_ = false;
    if (caps_.keep == Keep::Head) return;  // no tail: the rest is omitted
    tail_max_bytes_ = caps_.max_bytes == 0 ? kTailLimitBytes : caps_.max_bytes - head_bytes_;
    tail_max_lines_ = caps_.max_lines == 0 ? kNone : caps_.max_lines - head_lines_;
}

std::size_t OutputCap::admit(std::string_view chunk) {
    if (chunk.empty()) return 0;
    total_ += chunk.size();
    const std::uint64_t nl = newlines(chunk);
    newlines_ += nl;
    last_ = chunk.back();
    if (unlimited()) {
        head_bytes_ += chunk.size();
        head_last_ = last_;
        return chunk.size();
    }
    std::size_t shown = 0;
    if (head_open_) shown = take_head(chunk);
    if (shown < chunk.size()) {
        const std::string_view rest = chunk.substr(shown);
        to_tail(rest, shown == 0 ? nl : newlines(rest));
    }
    return shown;
}

std::uint64_t OutputCap::ring_lines() const {
    const std::string_view t = tail();
    if (t.empty()) return 0;
    std::uint64_t n = ring_newlines_ + (t.back() == '\n' ? 0 : 1);
    // The rest of the head's last line is not a line of its own.
    if (dropped_ == 0 && !head_ends_line()) --n;
    return n;
}

void OutputCap::drop(std::size_t n) {
    if (n == 0) return;
    const std::string_view gone = tail().substr(0, n);
    const std::uint64_t nl = newlines(gone);
    gap_newlines_ += nl;
    ring_newlines_ -= nl;
    gap_last_ = gone.back();
    remember_gap(gone);
    dropped_ += n;
    ring_start_ += n;
}

void OutputCap::to_tail(std::string_view data, std::uint64_t data_newlines) {
    if (data.size() > tail_max_bytes_) {
        // Only the end of this chunk can be kept: what came before goes, and
        // the chunk's own front goes without being copied.
        drop(tail().size());
        const std::size_t skip = data.size() - static_cast<std::size_t>(tail_max_bytes_);
        const std::string_view gone = data.substr(0, skip);
        data.remove_prefix(skip);
        const std::uint64_t kept = newlines(data);
        gap_newlines_ += data_newlines - kept;
        data_newlines = kept;
        gap_last_ = gone.back();
        remember_gap(gone);
        dropped_ += skip;
        ring_.clear();
        ring_start_ = 0;
    }
    ring_.append(data);
    ring_newlines_ += data_newlines;
    if (tail().size() > tail_max_bytes_) drop(tail().size() - static_cast<std::size_t>(tail_max_bytes_));
    // Whole lines go from the front while there are too many.
    while (ring_lines() > tail_max_lines_) {
        const std::string_view t = tail();
        const std::size_t nl = t.find('\n');
        drop(nl == std::string_view::npos ? t.size() : nl + 1);
    }
    // Not on a continuation byte of a sequence that was dropped.
    if (dropped_ > 0 && static_cast<unsigned char>(gap_last_) >= 0x80) {
        std::size_t n = 0;
        const std::string_view t = tail();
        while (n < 3 && n < t.size() && continuation(t[n])) ++n;
        if (n > 0 && looks_like_text(gap_context_ + std::string(t.substr(0, kTextWindow)))) drop(n);
    }
    // Now and then, not at every chunk: the buffer stays under twice the budget.
    if (ring_start_ > 0 && ring_start_ >= ring_.size() / 2) {
        ring_.erase(0, ring_start_);
        ring_start_ = 0;
    }
}

void OutputCap::remember_gap(std::string_view gone) {
    if (gone.size() >= kTextWindow) {
        gap_context_.assign(gone.substr(gone.size() - kTextWindow));
        return;
    }
    gap_context_.append(gone);
    if (gap_context_.size() > kTextWindow) gap_context_.erase(0, gap_context_.size() - kTextWindow);
}

std::uint64_t OutputCap::total_lines() const {
    if (total_ == 0) return 0;
    return newlines_ + (last_ == '\n' ? 0 : 1);
}

// The lines of which no byte was shown: the lines that start in the gap
// [head_bytes_, head_bytes_ + dropped_), but for one that goes on into the tail.
Omission OutputCap::omitted() const {
    Omission o;
    o.bytes = dropped_;
    if (dropped_ == 0) return o;
    const std::uint64_t starts = (head_ends_line() ? 1 : 0) + gap_newlines_ - (gap_last_ == '\n' ? 1 : 0);
    const bool into_tail = head_bytes_ + dropped_ < total_ && gap_last_ != '\n';
    o.lines = starts - (starts > 0 && into_tail ? 1 : 0);
    return o;
}

std::string omission_note(Stream s, const Omission& o) {
    const char* name = s == Stream::Stdout ? "stdout" : "stderr";
    const std::string what = o.lines == 0 ? fmt::format("{} (no whole line)", plural(o.bytes, "byte"))
                                          : fmt::format("{} ({})", plural(o.lines, "line"), plural(o.bytes, "byte"));
    return fmt::format("sbx: {}: omitted {} here; to see all output run without --cap-live\n", name, what);
}

const char* keep_name(Keep k) {
    switch (k) {
        case Keep::Head: return "head";
        case Keep::Tail: return "tail";
        case Keep::Both: return "both";
    }
    return "both";
}

}  // namespace sbx
