// Network by name (--allow-domain, --deny-domain): the patterns, the
// decisions the allowlist proxy (net/proxy.h) makes by name and then by
// address, and the environment that points the command's tools at it.
// Pure: unit-tested in tests/unit/test_net.cc.
//
// A pattern is one of
//   example.com        that name exactly
//   *.example.com      every name below example.com, not example.com itself
//   192.0.2.7, ::1     that address (an IP literal; "[::1]" is accepted)
//   10.0.0.0/8, fd00::/8   every address in that range
// each with an optional port: example.com:443, *.example.com:8443,
// [::1]:8080, 10.0.0.0/8:22 (issue 36); without one, every port.  A deny
// pattern with a port refuses that port only (deny github.com:22 with allow
// github.com: https passes, ssh does not).  A deny pattern may carry a
// reason, "github.com:22=use an https remote", which the refusal shows.
// Names are compared in lower case without a final dot.  deny-domain wins
// over allow-domain.  A name passes when an allow pattern matches it and no
// deny pattern does; an IP literal only when an address or range pattern
// covers it.  A name that passed is resolved by sbx, and an address in a
// special range (special_range: loopback, private, link-local, shared
// 100.64/10, unique-local, unspecified, the clouds' metadata endpoints, IPv4
// embedded in IPv6 in such a range) or assigned to one of the host's own
// interfaces is used only when an allow pattern covers that address (DNS
// rebinding); an address a deny pattern covers is never used.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace sbx::net {

// The port the proxy listens on in the sandbox's own loopback (HTTP and
// SOCKS5 on the same port: the first byte tells them apart).
inline constexpr std::uint16_t kProxyPort = 3128;

// A pattern checked and written in its one spelling (lower case, no final
// dot, no brackets, a range's address masked); throws Error naming source
// for anything else ("": empty, "*", a port, a bad label).
// reason_allowed (deny patterns): "PATTERN=REASON" keeps its reason (1 to
// 200 printable ASCII characters), shown to the command with the refusal.
std::string normalize_pattern(std::string_view pattern, std::string_view source, bool reason_allowed = false);

// A host as a request names it, normalised as the patterns are ("[::1]" ->
// "::1", "Example.COM." -> "example.com").
std::string normalize_host(std::string_view host);

// An IPv4 or IPv6 address as 16 bytes (IPv4 as ::ffff:a.b.c.d).
struct Address {
    std::array<std::uint8_t, 16> bytes{};
    bool v4 = false;
    bool operator==(const Address&) const = default;
};
std::optional<Address> parse_address(std::string_view text);
std::string to_string(const Address&);

// The special range an address is in ("loopback", "private", "link-local",
// "unspecified", "shared", "unique-local", "multicast", "reserved",
// "cloud-metadata" for the metadata endpoints outside link-local
// (168.63.129.16, 192.0.0.192, fd00:ec2::/32), "nat64" and "teredo" for
// translation prefixes whose IPv4 address cannot be told), or "" for a
// public address.  An IPv6 address that embeds an IPv4 one (NAT64
// 64:ff9b::/96, 6to4 2002::/16, IPv4-compatible ::/96; IPv4-mapped addresses
// are IPv4 already) is in the range of the address it embeds.
std::string_view special_range(const Address&);

struct DomainRules {
    std::vector<std::string> allow;  // normalised patterns
    std::vector<std::string> deny;
    bool empty() const { return allow.empty() && deny.empty(); }
};

struct Decision {
    bool allowed = false;
    // The rule that decided, as the proxy's refusal and `sbx check` name it:
    // "allow-domain *.example.com", "deny-domain evil.com",
    // "no allow-domain matches host", "127.0.0.1 is loopback".
    std::string rule;
    // For a refusal that one more allow pattern lifts: that pattern (the
    // host's name, or the address), which denial/fix.h's fix_of makes the
    // fix (--allow-domain PATTERN); else empty, and no_fix says why none is
    // suggested ("--deny-domain x refuses it (...)").
    std::string allow{};
    std::string no_fix{};
    // Refused only because no allow-domain names the host (no deny-domain,
    // no refused address): what an approver may be asked about (proxy.h).
    bool unlisted = false;
};

// The decision by name (or IP literal) for a request to host on port (0:
// not known; then only patterns without a port apply).
Decision decide_host(const DomainRules&, std::string_view host, std::uint16_t port = 0);

// The decision for one address host resolved to (host passed decide_host).
// own: the addresses of the host's own interfaces (a service bound to
// 0.0.0.0 answers there as on the loopback), refused like a special range.
Decision decide_address(const DomainRules&, std::string_view host, const Address&, const std::vector<Address>& own = {},
                        std::uint16_t port = 0);

// A host one pattern admits, with the pattern's port (0: any): how a
// policy checks that the allowlist admits a secret's host ("*.example.com"
// -> "sbx-probe.example.com", "10.0.0.0/8:22" -> {"10.0.0.0", 22}).
std::pair<std::string, std::uint16_t> sample_of(const std::string& normalised_pattern);

// The variables the command gets so that its tools use the proxy at
// 127.0.0.1:port (listed in sbx(1)).
std::map<std::string, std::string> proxy_environment(std::uint16_t port);

}  // namespace sbx::net
