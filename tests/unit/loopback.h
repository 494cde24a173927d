// TCP on 127.0.0.1 for the tests of the relays (the allowlist proxy, the
// --managed-network bridge): a listener on a port the kernel picks, and a
// connection to a port.
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <catch2/catch.hpp>
#include <cstdint>

#include "util/fd.h"

namespace sbx::test {

// Listening on 127.0.0.1, any port; `port` gets it.
inline Fd loopback_listener(std::uint16_t& port) {
    Fd s(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    REQUIRE(::bind(s.get(), reinterpret_cast<sockaddr*>(&a), sizeof a) == 0);
    REQUIRE(::listen(s.get(), 16) == 0);
    socklen_t size = sizeof a;
    REQUIRE(::getsockname(s.get(), reinterpret_cast<sockaddr*>(&a), &size) == 0);
    port = ntohs(a.sin_port);
    return s;
}

// Connected to 127.0.0.1:port.
inline Fd connect_to(std::uint16_t port) {
    Fd s(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(port);
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    REQUIRE(::connect(s.get(), reinterpret_cast<sockaddr*>(&a), sizeof a) == 0);
    return s;
}

}  // namespace sbx::test
