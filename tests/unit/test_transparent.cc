// Transparent TCP's pure parts (linux-helper/transparent.h): the resolver's
// answers, the synthetic addresses, the SOCKS5 request and replies, which
// connects go through the proxy, and which proxy variable names the SOCKS5
// listener; and the handshake against a SOCKS5 peer on a socket pair.  The
// whole path is tested end to end in tests/integration/transparent-tcp.sh.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <catch2/catch.hpp>

#include <cerrno>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "managed_network.h"
#include "transparent.h"
#include "util/fd.h"

using namespace sbx::helper;

namespace {

using Bytes = std::vector<std::uint8_t>;

// A query for name of type, id 0x1234, RD set.
Bytes query(const std::string& name, std::uint16_t type, std::uint16_t klass = 1) {
    Bytes q{0x12, 0x34, 0x01, 0x00, 0, 1, 0, 0, 0, 0, 0, 0};
    std::size_t start = 0;
    while (start <= name.size()) {
        const auto dot = name.find('.', start);
        const auto label = name.substr(start, dot == std::string::npos ? std::string::npos : dot - start);
        q.push_back(static_cast<std::uint8_t>(label.size()));
        q.insert(q.end(), label.begin(), label.end());
        if (dot == std::string::npos) break;
        start = dot + 1;
    }
    q.push_back(0);
    q.insert(q.end(), {static_cast<std::uint8_t>(type >> 8), static_cast<std::uint8_t>(type),
                       static_cast<std::uint8_t>(klass >> 8), static_cast<std::uint8_t>(klass)});
    return q;
}

int rcode(const Bytes& answer) { return answer.at(3) & 0x0f; }
int answers(const Bytes& answer) { return answer.at(6) << 8 | answer.at(7); }
// The RDATA of the only answer, as text.
std::string address_of(const Bytes& answer) {
    char text[INET6_ADDRSTRLEN] = {};
    const bool v4 = answer[answer.size() - 5] == 4 && answer[answer.size() - 6] == 0;
    inet_ntop(v4 ? AF_INET : AF_INET6, answer.data() + answer.size() - (v4 ? 4 : 16), text, sizeof text);
    return text;
}

// An IPv4 or IPv6 socket address (by the text's form).
sockaddr_storage address(const char* text, std::uint16_t port) {
    sockaddr_storage s{};
    if (std::strchr(text, ':') == nullptr) {
        auto& in = reinterpret_cast<sockaddr_in&>(s);
        in.sin_family = AF_INET;
        in.sin_port = htons(port);
        inet_pton(AF_INET, text, &in.sin_addr);
    } else {
        auto& in6 = reinterpret_cast<sockaddr_in6&>(s);
        in6.sin6_family = AF_INET6;
        in6.sin6_port = htons(port);
        inet_pton(AF_INET6, text, &in6.sin6_addr);
    }
    return s;
}

}  // namespace

TEST_CASE("the resolver: A and AAAA get the name's synthetic address, the same each time") {
    SyntheticNames names;
    const auto a = dns_answer(query("Example.COM", 1), names);
    REQUIRE(a);
    CHECK(a->at(0) == 0x12);
    CHECK(a->at(1) == 0x34);
    CHECK((a->at(2) & 0x80) != 0);  // a response
    CHECK((a->at(2) & 0x01) != 0);  // RD as asked
    CHECK(rcode(*a) == 0);
    CHECK(answers(*a) == 1);
    CHECK(address_of(*a) == "198.18.0.1");
    // The question is copied as asked (case included: 0x20 randomisation).
    const Bytes q = query("Example.COM", 1);
    CHECK(std::equal(q.begin() + 12, q.end(), a->begin() + 12));
    const auto aaaa = dns_answer(query("example.com", 28), names);
    REQUIRE(aaaa);
    CHECK(address_of(*aaaa) == "fdc0:de00::1");
    CHECK(address_of(*dns_answer(query("other.example", 1), names)) == "198.18.0.2");
    CHECK(names.name_of(SyntheticNames::v4(2)) == "other.example");
    CHECK(names.name_of(SyntheticNames::v6(1)) == "example.com");
    CHECK(!names.name_of(SyntheticNames::v4(3)));
    in_addr elsewhere{};
    inet_pton(AF_INET, "192.0.2.1", &elsewhere);
    CHECK(!names.name_of(elsewhere));
}

TEST_CASE("the resolver: localhost is the loopback; other types, bad names, classes and opcodes") {
    SyntheticNames names;
    CHECK(address_of(*dns_answer(query("localhost", 1), names)) == "127.0.0.1");
    CHECK(address_of(*dns_answer(query("a.localhost", 28), names)) == "::1");
    const auto mx = dns_answer(query("example.com", 15), names);
    CHECK(rcode(*mx) == 0);
    CHECK(answers(*mx) == 0);
    CHECK(rcode(*dns_answer(query("bad!name", 1), names)) == 3);        // NXDOMAIN
    CHECK(rcode(*dns_answer(query("example.com", 1, 3), names)) == 5);  // CHAOS: REFUSED
    Bytes op = query("example.com", 1);
    op[2] |= 0x10;  // opcode 2 (STATUS)
    CHECK(rcode(*dns_answer(op, names)) == 4);
    Bytes twice = query("example.com", 1);
    twice[5] = 2;
    CHECK(rcode(*dns_answer(twice, names)) == 1);  // FORMERR
    Bytes cut = query("example.com", 1);
    cut.resize(cut.size() - 3);
    CHECK(rcode(*dns_answer(cut, names)) == 1);
    Bytes pointer = query("example.com", 1);
    pointer[12] = 0xc0;
    CHECK(rcode(*dns_answer(pointer, names)) == 1);
    CHECK(!dns_answer(Bytes{1, 2, 3}, names));  // no header: nothing to answer to
    Bytes response = query("example.com", 1);
    response[2] |= 0x80;
    CHECK(!dns_answer(response, names));
    CHECK(!names.name_of(SyntheticNames::v4(1)));  // nothing above assigned a name
}

TEST_CASE("which connects go through the proxy, and as what") {
    SyntheticNames names;
    dns_answer(query("example.com", 1), names);
    const auto by_name = transparent_target(address("198.18.0.1", 22), sizeof(sockaddr_in), names);
    REQUIRE(by_name);
    CHECK(by_name->name == "example.com");
    CHECK(by_name->port == 22);
    CHECK(socks5_request(*by_name) ==
          Bytes{5, 1, 0, 3, 11, 'e', 'x', 'a', 'm', 'p', 'l', 'e', '.', 'c', 'o', 'm', 0, 22});
    CHECK(transparent_target(address("fdc0:de00::1", 443), sizeof(sockaddr_in6), names)->name == "example.com");
    CHECK(transparent_target(address("::ffff:198.18.0.1", 443), sizeof(sockaddr_in6), names)->name == "example.com");
    const auto by_address = transparent_target(address("192.0.2.7", 80), sizeof(sockaddr_in), names);
    REQUIRE(by_address);
    CHECK(by_address->name.empty());
    CHECK(socks5_request(*by_address) == Bytes{5, 1, 0, 1, 192, 0, 2, 7, 0, 80});
    const auto by_v6 = transparent_target(address("2001:db8::1", 80), sizeof(sockaddr_in6), names);
    REQUIRE(by_v6);
    CHECK(socks5_request(*by_v6).size() == 4 + 16 + 2);
    // The sandbox's own loopback, the unspecified address, short or other addresses: as they are.
    CHECK(!transparent_target(address("127.0.0.1", 80), sizeof(sockaddr_in), names));
    CHECK(!transparent_target(address("127.3.2.1", 80), sizeof(sockaddr_in), names));
    CHECK(!transparent_target(address("0.0.0.0", 80), sizeof(sockaddr_in), names));
    CHECK(!transparent_target(address("::1", 80), sizeof(sockaddr_in6), names));
    CHECK(!transparent_target(address("::", 80), sizeof(sockaddr_in6), names));
    CHECK(!transparent_target(address("::ffff:127.0.0.1", 80), sizeof(sockaddr_in6), names));
    CHECK(!transparent_target(address("192.0.2.7", 80), sizeof(sockaddr_in) - 1, names));
    sockaddr_storage unspecified{};
    CHECK(!transparent_target(unspecified, sizeof unspecified, names));
}

TEST_CASE("SOCKS5 replies: 0x02 (not allowed) is EPERM, as a sandbox denial") {
    CHECK(socks5_errno(0) == 0);
    CHECK(socks5_errno(2) == EPERM);
    CHECK(socks5_errno(3) == ENETUNREACH);
    CHECK(socks5_errno(4) == EHOSTUNREACH);
    CHECK(socks5_errno(5) == ECONNREFUSED);
    CHECK(socks5_errno(1) == ECONNREFUSED);
}

TEST_CASE("the SOCKS5 listener among the proxy variables") {
    const std::vector<std::uint16_t> ports{3128, 1080};
    CHECK(socks_proxy_port({"HTTP_PROXY=http://127.0.0.1:3128", "ALL_PROXY=socks5h://127.0.0.1:1080"}, ports) == 1080);
    CHECK(socks_proxy_port({"all_proxy=SOCKS5://localhost:1080"}, ports) == 1080);
    CHECK(!socks_proxy_port({"HTTP_PROXY=http://127.0.0.1:3128", "HTTPS_PROXY=http://127.0.0.1:3128"}, ports));
    CHECK(!socks_proxy_port({"ALL_PROXY=socks5h://127.0.0.1:9999"}, ports));  // not bridged
    CHECK(!socks_proxy_port({"ALL_PROXY=socks5h://192.0.2.1:1080"}, ports));  // not the loopback
    CHECK(!socks_proxy_port({"NOT_A_PROXY=socks5h://127.0.0.1:1080"}, ports));
}

TEST_CASE("the handshake reads each reply exactly: what the target sends next stays for the command") {
    int pair[2];
    REQUIRE(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair) == 0);
    sbx::Fd ours(pair[0]), proxy(pair[1]);
    SocksTarget target;
    target.name = "example.com";
    target.port = 22;
    std::thread peer([&] {
        std::uint8_t buffer[64];
        (void)::read(proxy.get(), buffer, 3);
        (void)::write(proxy.get(), "\x05\x00", 2);
        (void)::read(proxy.get(), buffer, 18);
        // The reply (a domain-name bound address) and the target's first bytes at once.
        const char reply[] = "\x05\x00\x00\x03\x04host\x00\x16SSH-2.0-x\r\n";
        (void)::write(proxy.get(), reply, sizeof reply - 1);
    });
    CHECK(socks5_handshake(ours.get(), target, [] { return true; }) == 0);
    peer.join();
    char rest[32] = {};
    CHECK(::read(ours.get(), rest, sizeof rest) == 11);
    CHECK(std::string(rest) == "SSH-2.0-x\r\n");

    REQUIRE(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair) == 0);
    sbx::Fd ours2(pair[0]), proxy2(pair[1]);
    std::thread refuser([&] {
        std::uint8_t buffer[64];
        (void)::read(proxy2.get(), buffer, 3);
        (void)::write(proxy2.get(), "\x05\x00", 2);
        (void)::read(proxy2.get(), buffer, 18);
        (void)::write(proxy2.get(), "\x05\x02\x00\x01\x00\x00\x00\x00\x00\x00", 10);
    });
    CHECK(socks5_handshake(ours2.get(), target, [] { return true; }) == EPERM);
    refuser.join();

    REQUIRE(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair) == 0);
    sbx::Fd ours3(pair[0]), proxy3(pair[1]);
    std::thread closer([&] {
        std::uint8_t buffer[8];
        (void)::read(proxy3.get(), buffer, 3);
        proxy3.reset();  // closes without answering (a proxy over its cap)
    });
    CHECK(socks5_handshake(ours3.get(), target, [] { return true; }) == ECONNREFUSED);
    closer.join();
}
