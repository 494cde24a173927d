// Codex's --managed-network (CODEX-HELPER.md sections 2 and 5): the command
// reaches the network only through Codex's proxy on the host's loopback.
//
// The command runs in the private network namespace of network `limited`
// (network.h).  There pid 1 listens on 127.0.0.1:PORT for each bridged port
// and hands the listening sockets out over a socket pair
// (hand_out_listeners) to the helper's outer process, which stays in the
// host's network namespace: its ProxyBridge accepts there and relays each
// connection to the host's 127.0.0.1:PORT, where Codex's proxy listens.
// Nothing listens on the host, and any other host port is out of reach.
// The bridged ports are loopbackPorts; the proxy variables of the
// environment (HTTP_PROXY and the others Codex sets) must name one of them
// on 127.0.0.1 or localhost, or the helper refuses, as Codex's does.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "util/relay_threads.h"

namespace sbx::helper {

// --managed-network's JSON, as Codex 0.169 sends it:
// {"loopbackPorts":[33423,37243],"allowLocalBinding":false,
//  "allowUnixSockets":[],"dangerouslyAllowAllUnixSockets":false}
struct ManagedNetwork {
    std::vector<std::uint16_t> loopback_ports;  // each once, in the order given
    bool allow_local_binding = false;
    std::vector<std::string> allow_unix_sockets;
    bool all_unix_sockets = false;  // dangerouslyAllowAllUnixSockets
};

// Parses it: an object whose known keys have exactly their types (ports
// 1-65535); every key may be absent (Codex's are optional) and unknown keys
// are ignored (Codex may add some, and ignores them too).  The UNIX socket
// keys mean what they mean to Codex 0.169's helper (observed): the paths of
// allowUnixSockets open nothing there (the sandbox still reaches only the
// UNIX sockets bound inside it), dangerouslyAllowAllUnixSockets every
// pathname socket of the host (main.cc: the UnixMediator's host_sockets).
// Throws StepError (step "arguments") naming what is wrong.
ManagedNetwork parse_managed_network(std::string_view json);

// Whether an environment variable is one of the proxy variables Codex reads
// (HTTP_PROXY, HTTPS_PROXY, ALL_PROXY, npm's, yarn's, pip's...; any case).
bool is_proxy_variable(std::string_view name);

// The port of a proxy URL ("http://127.0.0.1:3128", "localhost:3128",
// "socks5h://user@127.0.0.1") whose host is 127.0.0.1 or localhost: the
// given one, or the scheme's default (80, 443 for https, 1080 for socks).
// nullopt for any other host or an unreadable URL.
std::optional<std::uint16_t> loopback_proxy_port(std::string_view url);

// The ports to bridge for the environment (entries "NAME=VALUE"):
// loopbackPorts (or, when that is empty, the ports the proxy variables
// name).  Throws StepError naming the cause and the fix when no proxy
// variable is set, none names 127.0.0.1 or localhost, or one names a
// loopback port outside loopbackPorts (Codex's three refusals).
std::vector<std::uint16_t> bridged_ports(const ManagedNetwork& network,
                                         const std::vector<std::string_view>& environment);

// The SOCKS5 proxy among the proxy variables of the environment, for
// --transparent-tcp (transparent.h): the port of the first whose URL is
// socks5h://, socks5:// or socks:// on 127.0.0.1 or localhost and one of
// ports.  nullopt when there is none (an HTTP proxy alone).
std::optional<std::uint16_t> socks_proxy_port(const std::vector<std::string_view>& environment,
                                              const std::vector<std::uint16_t>& ports);

// The outer process's side: receives the listening sockets from pid 1 and
// relays every connection accepted on them to the host's 127.0.0.1 on the
// same port.  One thread accepts, each connection has two (splice_pump.h),
// at most cap.connections at once (util/relay_threads.h: 64, or half of the
// policy's --limit-procs); one more is closed at once.  They block every
// signal.  Ends with the helper (the sandbox ends with it, pid 1's watch):
// the destructor shuts the live connections down and joins every thread.
class ProxyBridge {
public:
    // Makes the socket pair.  Throws Error.
    explicit ProxyBridge(std::vector<std::uint16_t> ports, RelayCap cap = RelayCap{});
    ~ProxyBridge();
    ProxyBridge(const ProxyBridge&) = delete;
    ProxyBridge& operator=(const ProxyBridge&) = delete;

    const std::vector<std::uint16_t>& ports() const;
    // The end pid 1 sends the listeners on (hand_out_listeners, network.h).
    int sandbox_channel() const;
    // Once pid 1 has been forked: closes this process's copy of the sandbox's
    // end and starts accepting.  Throws Error.
    void start();

    struct State;  // managed_network.cc

private:
    std::shared_ptr<State> state_;
    std::thread thread_;
};

}  // namespace sbx::helper
