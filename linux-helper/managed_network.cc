#include "managed_network.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <system_error>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "network.h"
#include "step_error.h"
#include "util/ascii.h"
#include "util/fd_pass.h"
#include "util/relay_server.h"
#include "util/relay_threads.h"
#include "util/splice_pump.h"

namespace sbx::helper {
namespace {

constexpr const char* kStep = "arguments";
constexpr const char* kFixJson =
    R"(pass the JSON Codex sends, such as {"loopbackPorts":[3128],"allowLocalBinding":false})";

[[noreturn]] void bad_json(std::string_view reason) {
    fail(kStep, fmt::format("--managed-network: {}", reason), kFixJson);
}

// Codex's list (linux-sandbox's proxy routing), compared without case.
constexpr std::string_view kProxyVariables[] = {
    "HTTP_PROXY",
    "HTTPS_PROXY",
    "WS_PROXY",
    "WSS_PROXY",
    "ALL_PROXY",
    "FTP_PROXY",
    "YARN_HTTP_PROXY",
    "YARN_HTTPS_PROXY",
    "NPM_CONFIG_HTTP_PROXY",
    "NPM_CONFIG_HTTPS_PROXY",
    "NPM_CONFIG_PROXY",
    "BUNDLE_HTTP_PROXY",
    "BUNDLE_HTTPS_PROXY",
    "PIP_PROXY",
    "DOCKER_HTTP_PROXY",
    "DOCKER_HTTPS_PROXY",
};

std::string_view trim(std::string_view s) {
    while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
    while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
    return s;
}

std::uint16_t default_port(std::string_view scheme) {
    if (equal_ignoring_case(scheme, "https")) return 443;
    for (std::string_view socks : {"socks5", "socks5h", "socks4", "socks4a"})
        if (equal_ignoring_case(scheme, socks)) return 1080;
    return 80;
}

}  // namespace

ManagedNetwork parse_managed_network(std::string_view json) {
    const auto doc = nlohmann::json::parse(json, nullptr, /*allow_exceptions=*/false);
    if (doc.is_discarded()) bad_json("not valid JSON");
    if (!doc.is_object()) bad_json("not a JSON object");
    ManagedNetwork network;
    if (auto it = doc.find("loopbackPorts"); it != doc.end()) {
        if (!it->is_array()) bad_json("loopbackPorts is not an array");
        for (const auto& port : *it) {
            if (!port.is_number_unsigned() || port.get<std::uint64_t>() < 1 || port.get<std::uint64_t>() > 65535)
                bad_json(fmt::format("loopbackPorts: {} is not a port number (1-65535)", port.dump()));
            const auto value = static_cast<std::uint16_t>(port.get<std::uint64_t>());
            if (std::find(network.loopback_ports.begin(), network.loopback_ports.end(), value) ==
                network.loopback_ports.end())
                network.loopback_ports.push_back(value);
        }
    }
    auto flag = [&](const char* key, bool& out) {
        if (auto it = doc.find(key); it != doc.end()) {
            if (!it->is_boolean()) bad_json(fmt::format("{} is not true or false", key));
            out = it->get<bool>();
        }
    };
    flag("allowLocalBinding", network.allow_local_binding);
    flag("dangerouslyAllowAllUnixSockets", network.all_unix_sockets);
    if (auto it = doc.find("allowUnixSockets"); it != doc.end()) {
        if (!it->is_array()) bad_json("allowUnixSockets is not an array");
        for (const auto& path : *it) {
            if (!path.is_string()) bad_json(fmt::format("allowUnixSockets: {} is not a path", path.dump()));
            network.allow_unix_sockets.push_back(path.get<std::string>());
        }
    }
    return network;
}

bool is_proxy_variable(std::string_view name) {
    return std::any_of(std::begin(kProxyVariables), std::end(kProxyVariables),
                       [&](std::string_view known) { return equal_ignoring_case(name, known); });
}

std::optional<std::uint16_t> loopback_proxy_port(std::string_view url) {
    std::string_view scheme = "http";
    if (const auto colon = url.find("://"); colon != std::string_view::npos) {
        scheme = url.substr(0, colon);
        url.remove_prefix(colon + 3);
    }
    url = url.substr(0, url.find_first_of("/?#"));  // the authority
    if (const auto at = url.rfind('@'); at != std::string_view::npos) url.remove_prefix(at + 1);
    std::string_view host = url;
    std::optional<std::uint16_t> port;
    if (const auto colon = url.rfind(':'); colon != std::string_view::npos) {
        host = url.substr(0, colon);
        const std::string_view digits = url.substr(colon + 1);
        unsigned value = 0;
        const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
        if (digits.empty() || ec != std::errc() || end != digits.data() + digits.size() || value < 1 || value > 65535)
            return std::nullopt;
        port = static_cast<std::uint16_t>(value);
    }
    if (host != "127.0.0.1" && !equal_ignoring_case(host, "localhost")) return std::nullopt;
    return port ? *port : default_port(scheme);
}

std::vector<std::uint16_t> bridged_ports(const ManagedNetwork& network,
                                         const std::vector<std::string_view>& environment) {
    bool any_set = false;
    std::vector<std::uint16_t> named;
    for (std::string_view entry : environment) {
        const auto equals = entry.find('=');
        if (equals == std::string_view::npos || !is_proxy_variable(entry.substr(0, equals))) continue;
        const std::string_view value = trim(entry.substr(equals + 1));
        if (value.empty()) continue;
        any_set = true;
        const auto port = loopback_proxy_port(value);
        if (!port) continue;
        const auto& allowed = network.loopback_ports;
        if (!allowed.empty() && std::find(allowed.begin(), allowed.end(), *port) == allowed.end())
            fail("network",
                 fmt::format("--managed-network: {} names 127.0.0.1:{}, which is not one of loopbackPorts",
                             entry.substr(0, equals), *port),
                 "point the proxy variables at Codex's proxy (a port listed in loopbackPorts)");
        if (std::find(named.begin(), named.end(), *port) == named.end()) named.push_back(*port);
    }
    if (named.empty())
        fail("network",
             any_set ? "--managed-network: no proxy variable (HTTP_PROXY, HTTPS_PROXY, ALL_PROXY...) names a proxy "
                       "on 127.0.0.1 or localhost, and the command may reach nothing else"
                     : "--managed-network: no proxy variable (HTTP_PROXY, HTTPS_PROXY, ALL_PROXY...) is set, so the "
                       "command would have no way out",
             "set HTTP_PROXY (and HTTPS_PROXY, ALL_PROXY) to http://127.0.0.1:PORT of Codex's proxy, as Codex "
             "does");
    return network.loopback_ports.empty() ? named : network.loopback_ports;
}

std::optional<std::uint16_t> socks_proxy_port(const std::vector<std::string_view>& environment,
                                              const std::vector<std::uint16_t>& ports) {
    for (std::string_view entry : environment) {
        const auto equals = entry.find('=');
        if (equals == std::string_view::npos || !is_proxy_variable(entry.substr(0, equals))) continue;
        const std::string_view value = trim(entry.substr(equals + 1));
        const auto colon = value.find("://");
        if (colon == std::string_view::npos) continue;
        const std::string_view scheme = value.substr(0, colon);
        if (!equal_ignoring_case(scheme, "socks5h") && !equal_ignoring_case(scheme, "socks5") &&
            !equal_ignoring_case(scheme, "socks"))
            continue;
        const auto port = loopback_proxy_port(value);
        if (port && std::find(ports.begin(), ports.end(), *port) != ports.end()) return port;
    }
    return std::nullopt;
}

struct ProxyBridge::State {
    std::vector<std::uint16_t> ports;
    RelayCap cap;
    Fd ours, theirs;              // the socket pair: ours receives the listeners
    Fd stop, stopper;             // a pipe: its write end closed when the helper ends
    LiveConnections connections;  // shut down at the end

    void run();
    void relay(Fd client, std::uint16_t port);
};

namespace {

// The host's 127.0.0.1:port, connected (loopback: at once or never).
Fd connect_host_loopback(std::uint16_t port) {
    Fd s(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
    sockaddr_in v4 = loopback_v4(port);
    if (!s.valid()) return s;
    int rc;
    while ((rc = ::connect(s.get(), reinterpret_cast<sockaddr*>(&v4), sizeof v4)) != 0 && errno == EINTR) {
    }
    if (rc != 0) return Fd();
    const int one = 1;
    ::setsockopt(s.get(), IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    return s;
}

}  // namespace

void ProxyBridge::State::relay(Fd client, std::uint16_t port) {
    Fd upstream = connect_host_loopback(port);
    if (!upstream.valid()) return;  // no proxy there: the command's connection closes
    tune_loopback_leg(client.get());
    const LiveSocket live_client(connections, std::move(client));
    const LiveSocket live_upstream(connections, std::move(upstream));
    if (!live_client.valid() || !live_upstream.valid()) return;  // stopping
    splice_both_ways(live_client.get(), live_upstream.get());
}

void ProxyBridge::State::run() {
    // The listeners, one message each, in the order of ports.
    std::vector<Fd> listeners;
    while (listeners.size() < ports.size()) {
        pollfd p[2] = {{stop.get(), POLLIN, 0}, {ours.get(), POLLIN, 0}};
        if (::poll(p, 2, -1) < 0) {
            if (errno == EINTR) continue;
            return;
        }
        if (p[0].revents) return;
        Fd listener = receive_fd(ours.get());
        if (!listener.valid()) return;  // pid 1 ended without sending them
        // Non-blocking: a connection gone between poll and accept does not
        // hold this thread (the accepted sockets block, as accept4 makes them).
        ::fcntl(listener.get(), F_SETFL, ::fcntl(listener.get(), F_GETFL) | O_NONBLOCK);
        listeners.push_back(std::move(listener));
    }
    ours.reset();
    // Each connection's thread, at most cap.connections at once (two threads
    // each while relaying), all joined before this returns: the live ones end
    // once the destructor has shut their sockets down.
    RelayThreads threads(cap.connections);
    std::vector<pollfd> fds(1 + listeners.size());
    for (;;) {
        fds[0] = {stop.get(), POLLIN, 0};
        for (std::size_t i = 0; i < listeners.size(); ++i) fds[1 + i] = {listeners[i].get(), POLLIN, 0};
        if (::poll(fds.data(), fds.size(), -1) < 0) {
            if (errno == EINTR) continue;
            return;
        }
        if (fds[0].revents) return;
        for (std::size_t i = 0; i < listeners.size(); ++i) {
            if (!(fds[1 + i].revents & POLLIN)) continue;
            Fd client(::accept4(listeners[i].get(), nullptr, nullptr, SOCK_CLOEXEC));
            if (!client.valid()) continue;
            // Over the cap (or no thread): the connection closes at once.
            threads.start(
                [this, client = std::move(client), port = ports[i]]() mutable { relay(std::move(client), port); });
        }
    }
}

ProxyBridge::ProxyBridge(std::vector<std::uint16_t> ports, RelayCap cap) : state_(std::make_shared<State>()) {
    state_->ports = std::move(ports);
    state_->cap = cap;
    int pair[2];
    if (::socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, pair) != 0)
        fail_errno("network", "socketpair for the proxy bridge");
    state_->ours.reset(pair[0]);
    state_->theirs.reset(pair[1]);
    if (::pipe2(pair, O_CLOEXEC) != 0) fail_errno("network", "pipe for the proxy bridge");
    state_->stop.reset(pair[0]);
    state_->stopper.reset(pair[1]);
}

const std::vector<std::uint16_t>& ProxyBridge::ports() const { return state_->ports; }

int ProxyBridge::sandbox_channel() const { return state_->theirs.get(); }

void ProxyBridge::start() {
    state_->theirs.reset();  // pid 1 has its copy: its end tells when it is gone
    // The helper's signals are its wait loop's.
    try {
        thread_ = thread_without_signals([state = state_] { state->run(); });
    } catch (const std::system_error& e) {
        fail("network", fmt::format("cannot start the proxy bridge's thread: {}", e.what()));
    }
}

ProxyBridge::~ProxyBridge() {
    if (!thread_.joinable()) return;
    state_->connections.stop();
    state_->stopper.reset();  // the accepting thread sees the end of the pipe
    thread_.join();
}

}  // namespace sbx::helper
