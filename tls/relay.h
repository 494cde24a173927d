// One terminated connection of sbx-tls (issue 36): the TLS server side to
// the command with a leaf of the ephemeral CA, the TLS client side to the
// real host (verified against this process's trusted certificates and the
// host's name), and the relay between them with the secrets put back
// (command to host: the connection's pairs, sentinel to value) and taken
// out again (host to command: every pair, value to sentinel).
#pragma once

#include <openssl/ssl.h>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "ca.h"

namespace sbx::tls {

using Pairs = std::vector<std::pair<std::string, std::string>>;  // (from, to)

// The two contexts every connection shares; throws std::runtime_error.
struct Contexts {
    Contexts();
    ~Contexts();
    Contexts(const Contexts&) = delete;
    Contexts& operator=(const Contexts&) = delete;
    SSL_CTX* server = nullptr;  // to the command: HTTP/1.1 only
    SSL_CTX* client = nullptr;  // to the host: verified
};

struct Connection {
    int command = -1, upstream = -1;
    std::string host;
    std::uint16_t port = 0;
    Pairs outbound;  // sentinel -> value
    Pairs inbound;   // value -> sentinel
};

// Serves c until both sides end, either fails, or stop (an eventfd) is
// readable; says a failure on stderr ("sbx: TLS to HOST:PORT: ...").  The
// caller closes both descriptors.
void serve(Connection c, const Contexts&, EphemeralCa&, int stop);

}  // namespace sbx::tls
