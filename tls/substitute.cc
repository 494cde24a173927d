#include "substitute.h"

#include <algorithm>
#include <cstring>

namespace sbx::tls {

Substituter::Substituter(std::vector<std::pair<std::string, std::string>> pairs) : pairs_(std::move(pairs)) {
    std::erase_if(pairs_, [](const auto& p) { return p.first.empty() || p.first.size() != p.second.size(); });
    for (const auto& p : pairs_) longest_ = std::max(longest_, p.first.size());
}

std::size_t Substituter::scan(std::string& buf, std::size_t start) const {
    for (const auto& [from, to] : pairs_)
        for (auto at = buf.find(from, start); at != std::string::npos; at = buf.find(from, at + from.size()))
            std::memcpy(buf.data() + at, to.data(), to.size());
    // The longest suffix after start that is a proper prefix of some `from`.
    const std::size_t most = std::min(buf.size() - std::min(start, buf.size()), longest_ > 0 ? longest_ - 1 : 0);
    for (std::size_t n = most; n > 0; --n) {
        const std::string_view tail = std::string_view(buf).substr(buf.size() - n);
        for (const auto& p : pairs_)
            if (p.first.size() > n && std::string_view(p.first).starts_with(tail)) return buf.size() - n;
    }
    return buf.size();
}

std::string Substituter::feed(std::string_view chunk) {
    std::string text = std::move(held_);
    held_.clear();
    text.append(chunk);
    const std::size_t ready = scan(text, 0);
    held_.assign(text, ready, std::string::npos);
    text.resize(ready);
    return text;
}

std::string Substituter::flush() {
    std::string out = std::move(held_);
    held_.clear();
    return out;
}

}  // namespace sbx::tls
