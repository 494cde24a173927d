// Transparent TCP (--transparent-tcp, CODEX-HELPER.md section 9): programs
// that ignore the proxy variables (ssh, database clients, a raw Python
// socket) get their TCP carried through the proxy's SOCKS5 listener all the
// same, without a TUN device or a TCP stack.
//
// In the sandbox's private network namespace (network.h) pid 1 runs a
// resolver on 127.0.0.53:53 (UDP), named by a read-only /etc/resolv.conf of
// its own, that answers every name with a synthetic address (198.18.0.0/15,
// fdc0:de00::/64) standing for that name.  Every connect() already goes to
// pid 1 (the UnixMediator, network.h): a TCP connect to any address but the
// sandbox's loopback is made instead to the SOCKS5 listener on 127.0.0.1
// (the bridge to Codex's proxy, or sbx's allowlist proxy), on the command's
// own socket, followed by a SOCKS5 CONNECT to the name the synthetic address
// stands for (or to the address itself, for an address the command got
// elsewhere) and the port; the command's connect returns once the proxy has
// answered, 0 or the errno for its refusal (EPERM for "not allowed by
// ruleset").  The proxy decides every connection; the host's loopback stays
// out of reach, and UDP other than to the resolver finds no route.
#pragma once

#include <netinet/in.h>
#include <sys/socket.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "util/fd.h"

namespace sbx::helper {

// The names the resolver has answered, each with its index (from 1); the
// synthetic addresses are 198.18.0.0 + index and fdc0:de00:: + index.
// Shared by the resolver's thread and the mediator's; at most kMax names.
class SyntheticNames {
public:
    static constexpr std::uint32_t kMax = 65536;

    // The index of name (lower case, no trailing dot), given on first use;
    // nullopt once kMax names are taken.
    std::optional<std::uint32_t> assign(const std::string& name);
    // The name a synthetic address stands for; nullopt for any other address.
    std::optional<std::string> name_of(const in_addr&) const;
    std::optional<std::string> name_of(const in6_addr&) const;

    static in_addr v4(std::uint32_t index);
    static in6_addr v6(std::uint32_t index);

private:
    std::optional<std::string> name_at(std::uint32_t index) const;

    mutable std::mutex mutex_;
    std::unordered_map<std::string, std::uint32_t> index_;
    std::vector<std::string> names_;  // names_[index - 1]
};

// The answer to one DNS query (a UDP payload): A and AAAA (and ANY, as A)
// get the name's synthetic address, localhost and *.localhost the
// loopback's; other types of a valid name get no record (NOERROR);
// malformed queries FORMERR, other opcodes NOTIMP, other classes REFUSED, a
// name that is not a host name (RFC 952/1123 letters, digits, '-', '_')
// NXDOMAIN.  nullopt: not a query (nothing is sent back).
std::optional<std::vector<std::uint8_t>> dns_answer(std::span<const std::uint8_t> query, SyntheticNames& names);

// Where a transparent connect goes: a name (synthetic address) or an
// address, and a port.
struct SocksTarget {
    std::string name;  // empty: the address
    sockaddr_storage address{};
    std::uint16_t port = 0;
};

// The SOCKS5 CONNECT request for target (RFC 1928: VER 5, CMD 1, RSV 0,
// ATYP 3 with the name, or 1 / 4 with the address; the port).
std::vector<std::uint8_t> socks5_request(const SocksTarget& target);

// The errno a SOCKS5 reply code stands for (0 for success): 0x02 "not
// allowed by ruleset" is EPERM, what a sandbox denial says.
int socks5_errno(std::uint8_t reply);

// The target of a TCP connect to address (as the command gave it), when it
// has to go through the proxy: nullopt for the sandbox's own loopback (and
// the unspecified address, which the kernel takes for it) and for an
// address that is not AF_INET/AF_INET6 of the right length.
std::optional<SocksTarget> transparent_target(const sockaddr_storage& address, socklen_t length,
                                              const SyntheticNames& names);

// On socket (a TCP socket connected to the SOCKS5 listener): the greeting
// (no authentication), then the CONNECT for target, each reply read
// exactly, so that nothing the target sends after it is consumed.  Returns
// 0 or the errno for the command.  alive() is asked about once a second
// while the proxy has not answered; false ends the wait (ECONNABORTED).
int socks5_handshake(int socket, const SocksTarget& target, const std::function<bool()>& alive);

// The transparent TCP of one sandbox: the SOCKS5 port on the sandbox's
// 127.0.0.1, the names, and the resolver's socket.
struct TransparentTcp {
    std::uint16_t socks_port = 0;
    std::shared_ptr<SyntheticNames> names = std::make_shared<SyntheticNames>();
    Fd resolver;  // UDP, 127.0.0.53:53 (bind_resolver)

    // In the sandbox's network namespace, before capabilities are dropped:
    // binds the resolver's socket.  Throws Error naming the step.
    void bind_resolver();
    // In the sandbox's mount namespace, once the view is built: a read-only
    // /etc/resolv.conf (the file it resolves to) naming only 127.0.0.53.
    // Throws Error naming the step and the fix when there is none to cover.
    static void install_resolv_conf();
    // In pid 1, once the command runs: answers queries on a thread of its own
    // until pid 1 ends.
    void serve_resolver();
};

}  // namespace sbx::helper
