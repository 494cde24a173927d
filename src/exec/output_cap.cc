#include "exec/output_cap.h"

#include <algorithm>
#include <cstring>

namespace sbx {

std::size_t OutputCap::admit(std::string_view chunk) {
    total_ += chunk.size();
    std::size_t limit = chunk.size();
    if (caps_.max_bytes != 0) {
        const std::uint64_t room = caps_.max_bytes - std::min(shown_bytes_, caps_.max_bytes);
        limit = static_cast<std::size_t>(std::min<std::uint64_t>(limit, room));
    }
    // Walk line by line; the cut falls on the first byte of the line that
    // would exceed max_lines.
    const char* data = chunk.data();
    std::size_t p = 0;
    while (p < limit) {
        if (at_line_start_) {
            if (caps_.max_lines != 0 && lines_ >= caps_.max_lines) break;
            ++lines_;
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
    shown_bytes_ += p;
    return p;
}

bool OutputCap::full() const {
    if (caps_.max_bytes != 0 && shown_bytes_ >= caps_.max_bytes) return true;
    return caps_.max_lines != 0 && lines_ >= caps_.max_lines && at_line_start_;
}

}  // namespace sbx
