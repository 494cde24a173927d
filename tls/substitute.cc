#include "substitute.h"

#include <algorithm>
#include <cstring>

namespace sbx::tls {

Substituter::Substituter(std::vector<std::pair<std::string, std::string>> pairs) : pairs_(std::move(pairs)) {
    std::erase_if(pairs_, [](const auto& p) { return p.first.empty() || p.first.size() != p.second.size(); });
    for (const auto& p : pairs_) longest_ = std::max(longest_, p.first.size());
}

std::string Substituter::feed(std::string_view chunk) {
    std::string text = std::move(held_);
    held_.clear();
    text.append(chunk);
    for (const auto& [from, to] : pairs_)
        for (auto at = text.find(from); at != std::string::npos; at = text.find(from, at + from.size()))
            std::memcpy(text.data() + at, to.data(), to.size());
    // The longest suffix that is a proper prefix of some `from`.
    std::size_t hold = 0;
    for (std::size_t n = std::min(text.size(), longest_ - (longest_ > 0 ? 1 : 0)); n > 0 && hold == 0; --n) {
        const std::string_view tail = std::string_view(text).substr(text.size() - n);
        for (const auto& p : pairs_)
            if (p.first.size() > n && std::string_view(p.first).starts_with(tail)) {
                hold = n;
                break;
            }
    }
    held_.assign(text, text.size() - hold, hold);
    text.resize(text.size() - hold);
    return text;
}

std::string Substituter::flush() {
    std::string out = std::move(held_);
    held_.clear();
    return out;
}

}  // namespace sbx::tls
