#include "net/domain.h"

#include <arpa/inet.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cstring>

#include <fmt/format.h>

#include "util/ascii.h"
#include "util/error.h"

namespace sbx::net {
namespace {

// A host name: dot-separated labels of letters, digits, '-' and '_'.
bool valid_name(std::string_view name) {
    if (name.empty() || name.size() > 253) return false;
    std::size_t label = 0;
    for (std::size_t i = 0; i <= name.size(); ++i) {
        if (i == name.size() || name[i] == '.') {
            if (label == 0 || label > 63) return false;
            label = 0;
            continue;
        }
        const char c = name[i];
        if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '_') return false;
        ++label;
    }
    return true;
}

// An address pattern: the address and the prefix length (128 for one address).
struct Range {
    Address base;
    unsigned bits = 128;
};

std::optional<Range> parse_range(std::string_view text) {
    Range r;
    const auto slash = text.find('/');
    const auto a = parse_address(text.substr(0, slash));
    if (!a) return std::nullopt;
    r.base = *a;
    if (slash != std::string_view::npos) {
        const std::string_view n = text.substr(slash + 1);
        unsigned bits = 0;
        const auto [end, ec] = std::from_chars(n.data(), n.data() + n.size(), bits);
        if (n.empty() || ec != std::errc() || end != n.data() + n.size() || bits > (a->v4 ? 32U : 128U))
            return std::nullopt;
        r.bits = a->v4 ? bits + 96 : bits;
    }
    for (unsigned i = r.bits; i < 128; ++i) r.base.bytes[i / 8] &= static_cast<std::uint8_t>(~(0x80U >> (i % 8)));
    return r;
}

bool in_range(const Range& r, const Address& a) {
    if (r.base.v4 != a.v4) return false;
    for (unsigned i = 0; i < r.bits; ++i) {
        const unsigned mask = 0x80U >> (i % 8);
        if ((r.base.bytes[i / 8] & mask) != (a.bytes[i / 8] & mask)) return false;
    }
    return true;
}

// A pattern's parts: what it names (a name, *.NAME, an address, a range)
// and its port, if it has one ("example.com:443", "[::1]:8080",
// "10.0.0.0/8:22"; an IPv6 address with a port is bracketed).  bad_port:
// a port that is not 1-65535.
struct Parts {
    std::string_view what;
    std::optional<std::uint16_t> port;
    bool bad_port = false;
};

Parts split_port(std::string_view p) {
    Parts parts{p, std::nullopt, false};
    std::size_t colon = std::string_view::npos;
    if (p.starts_with('[')) {
        const auto close = p.find(']');
        if (close == std::string_view::npos || close + 1 == p.size()) return parts;
        parts.what = p.substr(0, close + 1);
        if (p[close + 1] != ':') {
            parts.bad_port = true;
            return parts;
        }
        colon = close + 1;
    } else if (const auto slash = p.find('/'); slash != std::string_view::npos) {
        colon = p.find(':', slash);
    } else if (std::count(p.begin(), p.end(), ':') == 1) {
        colon = p.find(':');
    }
    if (colon == std::string_view::npos) return parts;
    parts.what = p.substr(0, colon);
    const std::string_view digits = p.substr(colon + 1);
    unsigned port = 0;
    const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), port);
    if (digits.empty() || ec != std::errc() || end != digits.data() + digits.size() || port < 1 || port > 65535)
        parts.bad_port = true;
    else parts.port = static_cast<std::uint16_t>(port);
    return parts;
}

// A deny pattern's reason, after the first '=' ("github.com:22=use an
// https remote"): the pattern and the reason ("" without one).
std::pair<std::string_view, std::string_view> split_reason(std::string_view p) {
    const auto equals = p.find('=');
    if (equals == std::string_view::npos) return {p, {}};
    return {p.substr(0, equals), p.substr(equals + 1)};
}

// Whether a pattern's port (none: any) admits the request's (0: not known,
// which only a pattern without a port admits).
bool port_admits(const std::optional<std::uint16_t>& pattern, std::uint16_t port) {
    return !pattern || *pattern == port;
}

bool name_matches(const std::string& pattern, const std::string& host) {
    if (pattern.starts_with("*.")) {
        const std::string_view base = std::string_view(pattern).substr(1);  // ".example.com"
        return host.size() > base.size() && host.ends_with(base);
    }
    return pattern == host;
}

// The first pattern of list that matches host (a name) or covers address,
// on port.
const std::string* find_name(const std::vector<std::string>& list, const std::string& host, std::uint16_t port) {
    for (const auto& p : list) {
        const Parts parts = split_port(split_reason(p).first);
        if (!parse_range(parts.what) && name_matches(std::string(parts.what), host) && port_admits(parts.port, port))
            return &p;
    }
    return nullptr;
}

const std::string* find_address(const std::vector<std::string>& list, const Address& a, std::uint16_t port) {
    for (const auto& p : list) {
        const Parts parts = split_port(split_reason(p).first);
        if (auto r = parse_range(parts.what); r && in_range(*r, a) && port_admits(parts.port, port)) return &p;
    }
    return nullptr;
}

Decision deny(const std::string& entry) {
    const auto [pattern, reason] = split_reason(entry);
    if (!reason.empty())
        return {false, fmt::format("deny-domain {} ({})", pattern, reason), "",
                fmt::format("--deny-domain {} refuses it: {}", pattern, reason)};
    return {false, fmt::format("deny-domain {}", pattern), "",
            fmt::format("--deny-domain {} refuses it (drop that pattern to allow it)", pattern)};
}

}  // namespace

std::optional<Address> parse_address(std::string_view text) {
    if (text.size() >= 2 && text.front() == '[' && text.back() == ']') text = text.substr(1, text.size() - 2);
    const std::string s(text);
    Address a;
    in_addr v4{};
    if (::inet_pton(AF_INET, s.c_str(), &v4) == 1) {
        a.v4 = true;
        a.bytes[10] = a.bytes[11] = 0xff;
        std::memcpy(&a.bytes[12], &v4, 4);
        return a;
    }
    in6_addr v6{};
    if (::inet_pton(AF_INET6, s.c_str(), &v6) != 1) return std::nullopt;
    std::memcpy(a.bytes.data(), &v6, 16);
    // An IPv4-mapped address is that IPv4 address.
    static constexpr std::uint8_t kMapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
    a.v4 = std::memcmp(a.bytes.data(), kMapped, 12) == 0;
    return a;
}

std::string to_string(const Address& a) {
    char text[INET6_ADDRSTRLEN] = {};
    if (a.v4) ::inet_ntop(AF_INET, &a.bytes[12], text, sizeof text);
    else ::inet_ntop(AF_INET6, a.bytes.data(), text, sizeof text);
    return text;
}

std::string_view special_range(const Address& a) {
    // First match wins: the metadata endpoints before the ranges around them.
    static const std::pair<const char*, const char*> kRanges[] = {
        {"168.63.129.16/32", "cloud-metadata"},  // Azure's wire server
        {"192.0.0.192/32", "cloud-metadata"},    // Oracle Cloud's
        {"fd00:ec2::/32", "cloud-metadata"},     // AWS's IPv6 endpoint (fd00:ec2::254)
        {"0.0.0.0/8", "unspecified"},
        {"127.0.0.0/8", "loopback"},
        {"10.0.0.0/8", "private"},
        {"172.16.0.0/12", "private"},
        {"192.168.0.0/16", "private"},
        {"169.254.0.0/16", "link-local"},
        {"100.64.0.0/10", "shared"},
        {"224.0.0.0/4", "multicast"},
        {"240.0.0.0/4", "reserved"},
        {"::/128", "unspecified"},
        {"::1/128", "loopback"},
        {"fe80::/10", "link-local"},
        {"fc00::/7", "unique-local"},
        {"ff00::/8", "multicast"},
        {"64:ff9b:1::/48", "nat64"},  // local-use NAT64: where its IPv4 address sits varies
        {"2001::/32", "teredo"},      // its IPv4 addresses obfuscated
    };
    for (const auto& [range, name] : kRanges)
        if (in_range(*parse_range(range), a)) return name;
    // IPv4 carried in IPv6: the embedded address decides.
    static const std::pair<const char*, std::size_t> kEmbedding[] = {
        {"64:ff9b::/96", 12},  // NAT64, RFC 6052
        {"2002::/16", 2},      // 6to4, RFC 3056
        {"::/96", 12},         // IPv4-compatible (deprecated)
    };
    for (const auto& [range, at] : kEmbedding) {
        if (!in_range(*parse_range(range), a)) continue;
        Address embedded;
        embedded.v4 = true;
        embedded.bytes[10] = embedded.bytes[11] = 0xff;
        std::copy_n(a.bytes.begin() + static_cast<std::ptrdiff_t>(at), 4, embedded.bytes.begin() + 12);
        return special_range(embedded);
    }
    return "";
}

std::string normalize_host(std::string_view host) {
    std::string h = ascii_lower(host);
    if (h.size() >= 2 && h.front() == '[' && h.back() == ']') h = h.substr(1, h.size() - 2);
    if (h.size() > 1 && h.back() == '.') h.pop_back();
    return h;
}

namespace {

// What a pattern names, in its one spelling; bad() throws.
template <typename Bad>
std::string normalize_base(std::string_view what, Bad bad) {
    const std::string p = normalize_host(what);
    if (p.empty()) return bad("is empty; give a name (example.com), *.NAME, an address or a range");
    if (auto r = parse_range(p)) {
        const std::string base = to_string(r->base);
        if (p.find('/') == std::string::npos) return base;
        return fmt::format("{}/{}", base, r->base.v4 ? r->bits - 96 : r->bits);
    }
    if (p == "*" || p == "*.") return bad("would allow every name; use -n full for the whole network");
    const std::string_view name = p.starts_with("*.") ? std::string_view(p).substr(2) : std::string_view(p);
    if (name.find(':') != std::string_view::npos)
        return bad("is not a host name, *.NAME, an IP address or an address range (a port goes last: HOST:PORT)");
    if (name.find('*') != std::string_view::npos)
        return bad("has a '*' other than a leading '*.' (write *.example.com)");
    if (!valid_name(name)) return bad("is not a host name, *.NAME, an IP address or an address range");
    return p;
}

}  // namespace

std::string normalize_pattern(std::string_view entry, std::string_view source, bool reason_allowed) {
    const auto [pattern, reason] = split_reason(entry);
    auto bad = [&](std::string_view why) -> std::string {
        throw Error(fmt::format("{}: '{}' {}", source, entry, why));
    };
    if (pattern.size() < entry.size()) {
        if (!reason_allowed) return bad("has a reason (=TEXT); reasons are for deny patterns");
        if (reason.empty() || reason.size() > 200 ||
            std::any_of(reason.begin(), reason.end(), [](char c) { return c < 0x20 || c > 0x7e; }))
            return bad("has a reason that is not 1 to 200 printable ASCII characters");
        return normalize_pattern(pattern, source) + "=" + std::string(reason);
    }
    const Parts parts = split_port(pattern);
    if (parts.bad_port) return bad("has a port that is not 1-65535 (write HOST:PORT, [IPv6]:PORT, RANGE:PORT)");
    std::string what = normalize_base(parts.what, bad);
    if (!parts.port) return what;
    if (what.find(':') != std::string::npos && what.find('/') == std::string::npos) what = "[" + what + "]";
    return fmt::format("{}:{}", what, *parts.port);
}

Decision decide_host(const DomainRules& rules, std::string_view requested, std::uint16_t port) {
    const std::string host = normalize_host(requested);
    if (auto a = parse_address(host)) {
        if (const auto* p = find_address(rules.deny, *a, port)) return deny(*p);
        if (const auto* p = find_address(rules.allow, *a, port)) return {true, "allow-domain " + *p};
        const std::string text = to_string(*a);
        return {false, fmt::format("no allow-domain names the address {}", text), text, "", true};
    }
    if (const auto* p = find_name(rules.deny, host, port)) return deny(*p);
    if (const auto* p = find_name(rules.allow, host, port)) return {true, "allow-domain " + *p};
    return {false, fmt::format("no allow-domain matches {}", host), host, "", true};
}

Decision decide_address(const DomainRules& rules, std::string_view host, const Address& a,
                        const std::vector<Address>& own, std::uint16_t port) {
    const std::string text = to_string(a);
    if (const auto* p = find_address(rules.deny, a, port)) return deny(*p);
    std::string_view range = special_range(a);
    if (range.empty() && std::find(own.begin(), own.end(), a) != own.end()) range = "host-interface";
    if (range.empty()) return {true, ""};
    if (const auto* p = find_address(rules.allow, a, port)) return {true, "allow-domain " + *p};
    return {false, fmt::format("{} resolves to {}, a {} address", normalize_host(host), text, range), text};
}

std::pair<std::string, std::uint16_t> sample_of(const std::string& normalised_pattern) {
    const Parts parts = split_port(split_reason(normalised_pattern).first);
    std::string what(parts.what);
    if (what.size() >= 2 && what.front() == '[' && what.back() == ']') what = what.substr(1, what.size() - 2);
    if (what.starts_with("*.")) what = "sbx-probe" + what.substr(1);
    if (const auto slash = what.find('/'); slash != std::string::npos) what.resize(slash);
    return {what, parts.port.value_or(0)};
}

std::map<std::string, std::string> proxy_environment(std::uint16_t port) {
    const std::string http = fmt::format("http://127.0.0.1:{}", port);
    const std::string socks = fmt::format("socks5h://127.0.0.1:{}", port);
    const std::string no_proxy = "localhost,127.0.0.1,::1";
    return {
        {"HTTP_PROXY", http},
        {"HTTPS_PROXY", http},
        {"ALL_PROXY", socks},
        {"NO_PROXY", no_proxy},
        {"http_proxy", http},
        {"https_proxy", http},
        {"all_proxy", socks},
        {"no_proxy", no_proxy},
        // npm (and yarn 1, which reads npm's settings), where an .npmrc would
        // otherwise say otherwise; yarn 2 and later; pip; cargo; Node's own
        // fetch and http (Node 24 and later read the variables only with this).
        {"npm_config_proxy", http},
        {"npm_config_https_proxy", http},
        {"npm_config_noproxy", no_proxy},
        {"YARN_HTTP_PROXY", http},
        {"YARN_HTTPS_PROXY", http},
        {"PIP_PROXY", http},
        {"CARGO_HTTP_PROXY", http},
        {"NODE_USE_ENV_PROXY", "1"},
        // git over http(s) reads http_proxy/https_proxy through libcurl;
        // GIT_PROXY_COMMAND would be for git:// (not set: it needs a program).
    };
}

}  // namespace sbx::net
