// The allowlist proxy (--allow-domain): sbx's side of network by name.
//
// The helper listens on 127.0.0.1:kProxyPort in the sandbox's private
// network namespace and sends that listening socket to sbx over a socket
// pair (--proxy-fd, linux-helper/network.h).  sbx accepts on it from the
// host's network namespace, so the command's connections arrive here and no
// port is ever opened on the host.  On one port the first byte tells the
// protocols apart: 0x05 is SOCKS5 (CONNECT, names resolved here), anything
// else HTTP (CONNECT host:port, and plain http:// requests, sent on with
// "Connection: close").  Each request is decided by name, then by address
// (net/domain.h); a refusal answers at once (HTTP 403 with X-Sbx-Denied
// naming the rule, SOCKS reply 0x02) and is kept for the run's denials.
// Bytes pass by splice(2) through a pipe, in both directions at once; the
// command's leg (loopback only) uses reno, unpaced, whatever the host's
// congestion control.
//
// One thread accepts; each connection has a thread (two while relaying), at
// most RelayCap::connections at once (util/relay_threads.h: 64, or half of
// --limit-procs): one more is refused at once (HTTP 503 with X-Sbx-Denied,
// or closed for SOCKS5) and kept as a denial of 127.0.0.1:3128.
// Every thread blocks every signal (the supervisor's signalfd gets them).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "denial/denial.h"
#include "net/domain.h"
#include "util/fd.h"
#include "util/relay_threads.h"

namespace sbx::net {

struct ProxyDenial {
    std::string host;  // as requested (normalised)
    std::uint16_t port = 0;
    Fix fix;  // its rule, and fix_of its decision (denial/fix.h)
    bool operator==(const ProxyDenial&) const = default;
};

// Asked about a connection that only the allowlist refuses (no allow-domain
// names the host: Decision::unlisted), before refusing it: true lets it
// through (its address is still checked, decide_address).  Called from the
// connections' threads, one call at a time, once per host and port for the
// proxy's life: the answer is kept for the connections after it.
using AskHost = std::function<bool(const std::string& host, std::uint16_t port)>;

// Secrets (issue 36): the connections sbx-tls terminates.  select: for an
// allowed connection to host:port, the pairs to put back (nullopt: not
// terminated, its bytes pass as they are).  hand_over: gives copies of both
// sockets to sbx-tls (false: it could not; the connection is closed).  Only
// a connection whose first bytes are the command's TLS handshake record is
// handed over: one where the host speaks first, or plain text, passes as
// it is, sentinel and all.  Both called from the connections' threads.
struct Terminator {
    std::function<std::optional<std::vector<int>>(const std::string& host, std::uint16_t port)> select;
    std::function<bool(int client, int upstream, const std::string& host, std::uint16_t port,
                       const std::vector<int>& pairs)>
        hand_over;
};

class AllowlistProxy {
public:
    // Makes the socket pair and starts accepting once the helper sends the
    // listening socket.  control (--control-fd): lines "allow-domain
    // PATTERN" and "deny-domain PATTERN[=REASON]" read while the command
    // runs, each for the connections after it (a bad line changes nothing
    // and is said on stderr, "sbx: --control-fd: ..."); sbx's own descriptor,
    // never the command's.  ask: see AskHost (none: refused).  Throws Error.
    explicit AllowlistProxy(DomainRules rules, RelayCap cap = RelayCap{}, Fd control = Fd(), AskHost ask = {},
                            Terminator terminate = {});
    ~AllowlistProxy();
    AllowlistProxy(const AllowlistProxy&) = delete;
    AllowlistProxy& operator=(const AllowlistProxy&) = delete;

    // The helper's end of the socket pair (for SuperviseOptions::proxy_channel).
    int helper_channel() const;

    // Stops: accepts no more, ends the open connections, joins every thread.
    // The refusals, in order, each (host, port, rule) once (at most 100).
    std::vector<ProxyDenial> finish();

    struct State;  // proxy.cc

private:
    std::shared_ptr<State> state_;
    std::thread thread_;
};

}  // namespace sbx::net
