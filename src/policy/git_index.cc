#include "policy/git_index.h"

#include <cstdint>

#include "util/ascii.h"

namespace sbx {
namespace {

constexpr std::uint32_t kGitlinkType = 0160000;
constexpr std::uint32_t kTypeMask = 0170000;

std::uint32_t be32(std::string_view b, std::size_t at) {
    return (std::uint32_t(std::uint8_t(b[at])) << 24) | (std::uint32_t(std::uint8_t(b[at + 1])) << 16) |
           (std::uint32_t(std::uint8_t(b[at + 2])) << 8) | std::uint32_t(std::uint8_t(b[at + 3]));
}

std::uint16_t be16(std::string_view b, std::size_t at) {
    return std::uint16_t((std::uint16_t(std::uint8_t(b[at])) << 8) | std::uint8_t(b[at + 1]));
}

std::string hex(std::string_view bytes) {
    static constexpr char digits[] = "0123456789abcdef";
    std::string out;
    for (unsigned char c : bytes) {
        out += digits[c >> 4];
        out += digits[c & 15];
    }
    return out;
}

// Reads the entries and extensions with one hash size; nullopt where the
// bytes do not fit.
std::optional<GitIndex> parse_with(std::string_view b, std::size_t hash_size) {
    GitIndex out;
    out.version = be32(b, 4);
    out.entries = be32(b, 8);
    out.hash_size = hash_size;
    // ctime, mtime (8 each), dev, ino, mode, uid, gid, size (4 each), the
    // object id, then 16 bits of flags.
    const std::size_t fixed = 40 + hash_size + 2;
    const std::size_t end = b.size() - hash_size;  // the trailing checksum
    std::size_t at = 12;
    std::string previous;
    for (std::size_t i = 0; i < out.entries; ++i) {
        const std::size_t start = at;
        if (at + fixed > end) return std::nullopt;
        const std::uint32_t mode = be32(b, at + 24);
        const std::uint16_t flags = be16(b, at + 40 + hash_size);
        at += fixed;
        if (flags & 0x4000) {  // extended flags (version 3 and up)
            if (out.version < 3 || at + 2 > end) return std::nullopt;
            at += 2;
        }
        std::string path;
        if (out.version == 4) {
            // A varint: how many bytes to drop from the previous path's end,
            // then the rest of this one, NUL-terminated.
            std::size_t drop = 0;
            if (at >= end) return std::nullopt;
            unsigned char c = std::uint8_t(b[at++]);
            drop = c & 0x7f;
            while (c & 0x80) {
                if (at >= end || drop > previous.size()) return std::nullopt;
                c = std::uint8_t(b[at++]);
                drop = ((drop + 1) << 7) | (c & 0x7f);
            }
            if (drop > previous.size()) return std::nullopt;
            const std::size_t nul = b.find('\0', at);
            if (nul == std::string_view::npos || nul >= end) return std::nullopt;
            path = previous.substr(0, previous.size() - drop);
            path.append(b.substr(at, nul - at));
            at = nul + 1;
        } else {
            const std::size_t nul = b.find('\0', at);
            if (nul == std::string_view::npos || nul >= end) return std::nullopt;
            path = std::string(b.substr(at, nul - at));
            // 1 to 8 NULs pad the entry to a multiple of 8 bytes.
            at = start + ((nul - start + 8) & ~std::size_t(7));
            if (at > end) return std::nullopt;
        }
        if ((mode & kTypeMask) == kGitlinkType) out.gitlinks.push_back(path);
        previous = std::move(path);
    }
    // Extensions: a 4-byte signature and a 32-bit size each.
    while (at < end) {
        if (at + 8 > end) return std::nullopt;
        const std::string_view signature = b.substr(at, 4);
        const std::size_t size = be32(b, at + 4);
        at += 8;
        if (size > end - at) return std::nullopt;
        if (signature == "link") {
            if (size < hash_size) return std::nullopt;
            out.shared_index = hex(b.substr(at, hash_size));
        }
        at += size;
    }
    return out;
}

}  // namespace

std::optional<GitIndex> parse_git_index(std::string_view bytes) {
    if (bytes.size() < 12 || bytes.substr(0, 4) != "DIRC") return std::nullopt;
    const std::uint32_t version = be32(bytes, 4);
    if (version < 2 || version > 4) return std::nullopt;
    for (std::size_t hash_size : {std::size_t(20), std::size_t(32)}) {
        if (bytes.size() < 12 + hash_size) continue;
        if (auto index = parse_with(bytes, hash_size)) return index;
    }
    return std::nullopt;
}

bool plain_index_path(std::string_view path) {
    if (path.empty() || path.front() == '/' || path.back() == '/') return false;
    std::size_t at = 0;
    while (at <= path.size()) {
        std::size_t slash = path.find('/', at);
        if (slash == std::string_view::npos) slash = path.size();
        const std::string_view part = path.substr(at, slash - at);
        if (part.empty() || part == "." || part == ".." || ascii_lower(part) == ".git") return false;
        at = slash + 1;
    }
    return true;
}

}  // namespace sbx
