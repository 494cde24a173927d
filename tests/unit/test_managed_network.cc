// --managed-network's JSON and the proxy variables it needs (pure), and the
// bridge's cap on its connections in one process; the bridge itself is tested
// end to end in tests/integration/helper-managed-network.sh.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <catch2/catch.hpp>

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "error_of.h"
#include "loopback.h"
#include "managed_network.h"
#include "util/fd.h"
#include "util/fd_pass.h"

using namespace sbx::helper;
using sbx::test::connect_to;
using sbx::test::error_of;
using sbx::test::loopback_listener;

TEST_CASE("managed network: Codex 0.169's JSON") {
    const ManagedNetwork n = parse_managed_network(
        R"({"loopbackPorts":[33423,37243],"allowLocalBinding":false,"allowUnixSockets":[],"dangerouslyAllowAllUnixSockets":false})");
    CHECK(n.loopback_ports == std::vector<std::uint16_t>{33423, 37243});
    CHECK_FALSE(n.allow_local_binding);
    CHECK(n.allow_unix_sockets.empty());
    CHECK_FALSE(n.all_unix_sockets);
}

TEST_CASE("managed network: absent keys take their defaults, unknown keys are ignored, ports once") {
    CHECK(parse_managed_network("{}").loopback_ports.empty());
    const ManagedNetwork n =
        parse_managed_network(R"({"loopbackPorts":[3128,3128,1080],"allowLocalBinding":true,"future":{"x":1}})");
    CHECK(n.loopback_ports == std::vector<std::uint16_t>{3128, 1080});
    CHECK(n.allow_local_binding);
}

TEST_CASE("managed network: malformed JSON and wrong types are refused, naming what is wrong") {
    const std::string fix =
        R"(; pass the JSON Codex sends, such as {"loopbackPorts":[3128],"allowLocalBinding":false})";
    CHECK(error_of([] { parse_managed_network("nope"); }) == "arguments: --managed-network: not valid JSON" + fix);
    CHECK(error_of([] { parse_managed_network("[1]"); }) == "arguments: --managed-network: not a JSON object" + fix);
    CHECK(error_of([] { parse_managed_network(R"({"loopbackPorts":"x"})"); }) ==
          "arguments: --managed-network: loopbackPorts is not an array" + fix);
    for (const char* bad : {R"({"loopbackPorts":[70000]})", R"({"loopbackPorts":[0]})", R"({"loopbackPorts":[-1]})",
                            R"({"loopbackPorts":[80.5]})", R"({"loopbackPorts":["80"]})"})
        CHECK(error_of([&] { parse_managed_network(bad); }).find("is not a port number (1-65535)") !=
              std::string::npos);
    CHECK(error_of([] { parse_managed_network(R"({"allowLocalBinding":"no"})"); }) ==
          "arguments: --managed-network: allowLocalBinding is not true or false" + fix);
    CHECK(error_of([] { parse_managed_network(R"({"allowUnixSockets":[1]})"); }) ==
          "arguments: --managed-network: allowUnixSockets: 1 is not a path" + fix);
}

TEST_CASE("managed network: UNIX socket allowances are read as Codex sends them") {
    const ManagedNetwork listed = parse_managed_network(R"({"allowUnixSockets":["/run/docker.sock","/tmp/x"]})");
    CHECK(listed.allow_unix_sockets == std::vector<std::string>{"/run/docker.sock", "/tmp/x"});
    CHECK_FALSE(listed.all_unix_sockets);
    CHECK(parse_managed_network(R"({"dangerouslyAllowAllUnixSockets":true})").all_unix_sockets);
}

TEST_CASE("managed network: the proxy variables Codex reads, in any case") {
    for (const char* name : {"HTTP_PROXY", "https_proxy", "ALL_PROXY", "all_proxy", "WSS_PROXY", "npm_config_proxy",
                             "NPM_CONFIG_HTTPS_PROXY", "YARN_HTTP_PROXY", "PIP_PROXY", "DOCKER_HTTPS_PROXY",
                             "BUNDLE_HTTP_PROXY", "ftp_proxy"})
        CHECK(is_proxy_variable(name));
    for (const char* name : {"NO_PROXY", "no_proxy", "PROXY", "HTTP_PROXYX", "CODEX_NETWORK_PROXY_ACTIVE", ""})
        CHECK_FALSE(is_proxy_variable(name));
}

TEST_CASE("managed network: loopback proxy URLs and their ports") {
    CHECK(loopback_proxy_port("http://127.0.0.1:3128") == 3128);
    CHECK(loopback_proxy_port("http://127.0.0.1:3128/") == 3128);
    CHECK(loopback_proxy_port("localhost:8080") == 8080);
    CHECK(loopback_proxy_port("HTTP://LocalHost:8080") == 8080);
    CHECK(loopback_proxy_port("socks5h://user:pw@127.0.0.1:1081") == 1081);
    CHECK(loopback_proxy_port("http://127.0.0.1") == 80);
    CHECK(loopback_proxy_port("https://127.0.0.1") == 443);
    CHECK(loopback_proxy_port("socks5://localhost") == 1080);
    CHECK_FALSE(loopback_proxy_port("http://example.com:3128"));
    CHECK_FALSE(loopback_proxy_port("http://[::1]:3128"));  // the bridge listens on 127.0.0.1 only
    CHECK_FALSE(loopback_proxy_port("http://127.0.0.2:3128"));
    CHECK_FALSE(loopback_proxy_port("http://127.0.0.1:x"));
    CHECK_FALSE(loopback_proxy_port("http://127.0.0.1:70000"));
    CHECK_FALSE(loopback_proxy_port("http://127.0.0.1:"));
}

TEST_CASE("managed network: the bridged ports and the three refusals") {
    ManagedNetwork n;
    n.loopback_ports = {33423, 37243};
    CHECK(bridged_ports(n, {"PATH=/bin", "HTTP_PROXY=http://127.0.0.1:33423"}) ==
          std::vector<std::uint16_t>{33423, 37243});
    CHECK(bridged_ports(n, {"all_proxy= socks5h://localhost:37243 ", "NO_PROXY=localhost"}) ==
          std::vector<std::uint16_t>{33423, 37243});
    // Without loopbackPorts: the ports the variables name.
    CHECK(bridged_ports(ManagedNetwork{}, {"HTTP_PROXY=http://127.0.0.1:3128", "HTTPS_PROXY=http://127.0.0.1:3128",
                                           "ALL_PROXY=socks5h://127.0.0.1:1080"}) ==
          std::vector<std::uint16_t>{3128, 1080});

    const std::string fix =
        "; set HTTP_PROXY (and HTTPS_PROXY, ALL_PROXY) to http://127.0.0.1:PORT of Codex's proxy, as Codex does";
    CHECK(error_of([&] {
              bridged_ports(n, {"PATH=/bin", "HTTP_PROXY=", "NO_PROXY=localhost"});
          }) ==
          "network: --managed-network: no proxy variable (HTTP_PROXY, HTTPS_PROXY, ALL_PROXY...) is set, so the "
          "command would have no way out" +
              fix);
    CHECK(error_of([&] { bridged_ports(n, {"HTTP_PROXY=http://example.com:33423"}); }) ==
          "network: --managed-network: no proxy variable (HTTP_PROXY, HTTPS_PROXY, ALL_PROXY...) names a proxy on "
          "127.0.0.1 or localhost, and the command may reach nothing else" +
              fix);
    CHECK(error_of([&] {
              bridged_ports(n, {"HTTP_PROXY=http://127.0.0.1:33423", "https_proxy=http://127.0.0.1:5555"});
          }) ==
          "network: --managed-network: https_proxy names 127.0.0.1:5555, which is not one of loopbackPorts; point the "
          "proxy variables at Codex's proxy (a port listed in loopbackPorts)");
}

namespace {

// A listener on the host's 127.0.0.1 (any port), and its port.
// What one read gives within 10 s ("<eof>" when the peer closed; "<none>"
// when nothing came).
std::string read_some(int fd) {
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, 10'000) != 1) return "<none>";
    char buffer[256];
    const ssize_t n = ::read(fd, buffer, sizeof buffer);
    return n > 0 ? std::string(buffer, static_cast<std::size_t>(n)) : "<eof>";
}

}  // namespace

TEST_CASE("managed network: the bridge relays at most its cap of connections at once, closes one more at once") {
    std::uint16_t proxy_port = 0, sandbox_port = 0;
    sbx::Fd proxy = loopback_listener(proxy_port);         // Codex's proxy, on the host
    sbx::Fd in_sandbox = loopback_listener(sandbox_port);  // what pid 1 would hand out
    ProxyBridge bridge({proxy_port}, sbx::RelayCap{2, std::nullopt});
    REQUIRE(sbx::send_fd(bridge.sandbox_channel(), in_sandbox.get()));
    bridge.start();

    sbx::Fd first = connect_to(sandbox_port), second = connect_to(sandbox_port);
    sbx::Fd first_far(::accept4(proxy.get(), nullptr, nullptr, SOCK_CLOEXEC));
    sbx::Fd second_far(::accept4(proxy.get(), nullptr, nullptr, SOCK_CLOEXEC));
    REQUIRE((first_far.valid() && second_far.valid()));
    REQUIRE(sbx::write_all(first.get(), "one"));
    // The bridge's two relays reach the proxy in either order: first's far
    // end is the one "one" arrives on.
    pollfd arrived[2] = {{first_far.get(), POLLIN, 0}, {second_far.get(), POLLIN, 0}};
    REQUIRE(::poll(arrived, 2, 10'000) >= 1);
    if (!(arrived[0].revents & POLLIN)) std::swap(first_far, second_far);
    CHECK(read_some(first_far.get()) == "one");
    REQUIRE(sbx::write_all(second_far.get(), "two"));
    CHECK(read_some(second.get()) == "two");

    sbx::Fd third = connect_to(sandbox_port);
    CHECK(read_some(third.get()) == "<eof>");

    // One relay ends (both ends close): a new connection is relayed once its
    // threads have ended (polled, with a bound).
    first.reset();
    first_far.reset();
    bool relayed = false;
    for (int i = 0; i < 500 && !relayed; ++i) {
        sbx::Fd next = connect_to(sandbox_port);
        pollfd p[2] = {{next.get(), POLLIN, 0}, {proxy.get(), POLLIN, 0}};
        REQUIRE(::poll(p, 2, 10'000) >= 1);
        if (p[1].revents & POLLIN) {
            sbx::Fd far(::accept4(proxy.get(), nullptr, nullptr, SOCK_CLOEXEC));
            REQUIRE(sbx::write_all(next.get(), "next"));
            relayed = read_some(far.get()) == "next";
        } else {
            CHECK(read_some(next.get()) == "<eof>");  // still over the cap: closed
            ::usleep(10'000);
        }
    }
    CHECK(relayed);
}  // the bridge ends: the live relays are shut down, every thread joined
