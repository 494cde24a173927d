// The allowlist proxy's runtime (net/proxy.h) in one process: the test plays
// the helper (a listening socket on the host's loopback, sent over the
// proxy's channel) and the command (a client of that socket).
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstring>
#include <string>

#include "loopback.h"
#include "net/proxy.h"
#include "util/fd.h"
#include "util/fd_pass.h"

using namespace sbx;
using namespace sbx::net;
using sbx::test::connect_to;

namespace {

// Listens on 127.0.0.1 (any port), hands the socket to the proxy; the port.
std::uint16_t hand_listener(int channel) {
    std::uint16_t port = 0;
    const Fd listener = test::loopback_listener(port);
    REQUIRE(send_fd(channel, listener.get()));
    return port;
}

std::string read_all(int fd) {
    std::string out;
    char buffer[4096];
    ssize_t n;
    while ((n = ::read(fd, buffer, sizeof buffer)) > 0) out.append(buffer, static_cast<std::size_t>(n));
    return out;
}

}  // namespace

TEST_CASE("the proxy refuses by name: HTTP 403 with the rule, SOCKS reply 2, each recorded once") {
    AllowlistProxy proxy(DomainRules{{"example.invalid"}, {}});
    const std::uint16_t port = hand_listener(proxy.helper_channel());

    Fd http = connect_to(port);
    REQUIRE(write_all(http.get(), "CONNECT evil.invalid:443 HTTP/1.1\r\nHost: evil.invalid:443\r\n\r\n"));
    const std::string answer = read_all(http.get());
    CHECK(answer.starts_with("HTTP/1.1 403 Forbidden\r\n"));
    CHECK(answer.find("\r\nX-Sbx-Denied: no allow-domain matches evil.invalid\r\n") != std::string::npos);
    CHECK(
        answer.ends_with("\r\n\r\nsbx: connect to evil.invalid:443 refused: no allow-domain matches evil.invalid; "
                         "allow with --allow-domain evil.invalid\n"));

    Fd again = connect_to(port);  // the same refusal: one denial
    REQUIRE(write_all(again.get(), "GET http://EVIL.invalid:443/x HTTP/1.1\r\n\r\n"));
    CHECK(read_all(again.get()).starts_with("HTTP/1.1 403 Forbidden\r\n"));

    Fd socks = connect_to(port);
    const std::string greeting("\x05\x01\x00", 3);
    const std::string request = std::string("\x05\x01\x00\x03\x0b", 5) + "bad.invalid" + std::string("\x00\x50", 2);
    REQUIRE(write_all(socks.get(), greeting + request));
    const std::string reply = read_all(socks.get());
    CHECK(reply.substr(0, 2) == std::string("\x05\x00", 2));
    REQUIRE(reply.size() >= 4);
    CHECK(reply[3] == 0x02);

    Fd bad = connect_to(port);
    REQUIRE(write_all(bad.get(), "GET /x HTTP/1.1\r\n\r\n"));
    CHECK(read_all(bad.get()).starts_with("HTTP/1.1 400 Bad Request\r\n"));

    const auto denials = proxy.finish();
    REQUIRE(denials.size() == 2);
    CHECK(denials[0] ==
          ProxyDenial{"evil.invalid", 443,
                      Fix{"no allow-domain matches evil.invalid", {.allow_domains = {"evil.invalid"}}, ""}});
    CHECK(denials[1] ==
          ProxyDenial{"bad.invalid", 80,
                      Fix{"no allow-domain matches bad.invalid", {.allow_domains = {"bad.invalid"}}, ""}});
}

TEST_CASE("the proxy ends cleanly with a connection still open and no listener ever sent") {
    {
        AllowlistProxy idle(DomainRules{{"example.invalid"}, {}});
        CHECK(idle.finish().empty());
    }
    AllowlistProxy proxy(DomainRules{{"example.invalid"}, {}});
    const std::uint16_t port = hand_listener(proxy.helper_channel());
    Fd first = connect_to(port);  // answered: the proxy has the listener
    REQUIRE(write_all(first.get(), "GET / HTTP/1.0\r\n\r\n"));
    CHECK(read_all(first.get()).starts_with("HTTP/1.1 400 Bad Request\r\n"));
    // Accepted or still queued, these end with the proxy: shut down, or
    // reset when the listener closes.
    Fd silent = connect_to(port);  // sends nothing: its thread waits for the head
    Fd partial = connect_to(port);
    REQUIRE(write_all(partial.get(), "CONNECT a.example.invalid"));
    CHECK(proxy.finish().empty());  // returns: the waiting connections were shut down
    CHECK(read_all(silent.get()).empty());
}

TEST_CASE("the relays' cap: 64 connections, or half of --limit-procs (at least one)") {
    CHECK(relay_cap(std::nullopt) == RelayCap{64, std::nullopt});
    CHECK(relay_cap(8) == RelayCap{4, 8});
    CHECK(relay_cap(9) == RelayCap{4, 9});
    CHECK(relay_cap(1) == RelayCap{1, 1});
    CHECK(relay_cap(3) == RelayCap{1, 3});
    CHECK(relay_cap(128) == RelayCap{64, 128});
    CHECK(relay_cap(1'000'000) == RelayCap{64, 1'000'000});
}

namespace {

// A host listener for the tunnels' far end (never accepted: the kernel
// completes the connections).
struct Upstream {
    std::uint16_t port = 0;
    Fd listener = test::loopback_listener(port);
};

// The proxy's answer to a CONNECT to 127.0.0.1:port, up to the end of its head.
std::string tunnel(int client, std::uint16_t port) {
    REQUIRE(write_all(client, "CONNECT 127.0.0.1:" + std::to_string(port) + " HTTP/1.1\r\n\r\n"));
    std::string head;
    char c;
    while (head.find("\r\n\r\n") == std::string::npos && ::read(client, &c, 1) == 1) head += c;
    return head;
}

}  // namespace

TEST_CASE("the proxy serves at most its cap of connections at once; one more is refused at once, and recorded") {
    AllowlistProxy proxy(DomainRules{{"127.0.0.1"}, {}}, RelayCap{2, std::nullopt});
    const std::uint16_t port = hand_listener(proxy.helper_channel());
    Upstream upstream;

    Fd first = connect_to(port), second = connect_to(port);
    CHECK(tunnel(first.get(), upstream.port) == "HTTP/1.1 200 Connection established\r\n\r\n");
    CHECK(tunnel(second.get(), upstream.port) == "HTTP/1.1 200 Connection established\r\n\r\n");

    Fd third = connect_to(port);
    const std::string refused = tunnel(third.get(), upstream.port) + read_all(third.get());
    CHECK(refused.starts_with("HTTP/1.1 503 Service Unavailable\r\n"));
    CHECK(refused.find("\r\nX-Sbx-Denied: sbx's proxy serves at most 2 connections at once\r\n") != std::string::npos);
    CHECK(
        refused.ends_with("\r\n\r\nsbx: connection refused: sbx's proxy serves at most 2 connections at once; no "
                          "flag suggested: open fewer connections at once\n"));

    // One tunnel ends (both ends close): its threads end, and a new
    // connection is served once they have (polled, with a bound).
    first.reset();
    Fd far(::accept4(upstream.listener.get(), nullptr, nullptr, SOCK_CLOEXEC));
    REQUIRE(far.valid());
    far.reset();
    bool served = false;
    for (int i = 0; i < 500 && !served; ++i) {
        Fd next = connect_to(port);
        served = tunnel(next.get(), upstream.port) == "HTTP/1.1 200 Connection established\r\n\r\n";
        if (!served) ::usleep(10'000);
    }
    CHECK(served);

    const auto denials = proxy.finish();  // returns: the live tunnels were shut down
    REQUIRE(denials.size() == 1);
    CHECK(denials[0] ==
          ProxyDenial{"127.0.0.1", kProxyPort,
                      Fix{"sbx's proxy serves at most 2 connections at once", {}, "open fewer connections at once"}});
}

TEST_CASE("under --limit-procs the proxy's refusal names it") {
    AllowlistProxy proxy(DomainRules{{"127.0.0.1"}, {}}, relay_cap(3));
    const std::uint16_t port = hand_listener(proxy.helper_channel());
    Upstream upstream;
    Fd first = connect_to(port);
    CHECK(tunnel(first.get(), upstream.port) == "HTTP/1.1 200 Connection established\r\n\r\n");
    Fd second = connect_to(port);
    CHECK(tunnel(second.get(), upstream.port).starts_with("HTTP/1.1 503 Service Unavailable\r\n"));
    const auto denials = proxy.finish();
    REQUIRE(denials.size() == 1);
    CHECK(denials[0].fix.rule ==
          "sbx's proxy serves at most 1 connection at once: two threads each, counted against --limit-procs 3");
    CHECK(denials[0].fix.text() ==
          "no flag suggested: open fewer connections at once, or raise --limit-procs by two per connection");
}
