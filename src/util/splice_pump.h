// Relaying bytes between two stream sockets by splice(2) through a pipe, in
// each direction on a thread of its own (header only; Linux): the one pump of
// sbx's allowlist proxy (src/net/proxy.cc) and of the helper's bridge to
// Codex's proxy (linux-helper/managed_network.h).
#pragma once

#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <optional>
#include <string_view>
#include <system_error>
#include <thread>

#include "util/fd.h"

namespace sbx {

inline constexpr int kSplicePipeSize = 1 << 20;

// For a relay's leg on the sandbox's loopback, where congestion control has
// nothing to control: a pacing one (bbr, a common default) spreads the
// relay's sends to the command on a timer at its estimate of the rate; reno
// (which every user may choose) sends as fast as the command reads.
// tests/bench/proxy.sh's 1 GiB through the allowlist proxy, 10 runs: best
// 480 -> 340 ms, median 581 -> 472 ms.  A leg that may cross a real network
// keeps the host's choice.  No delay either way (TCP_NODELAY).
inline void tune_loopback_leg(int socket) {
    static constexpr std::string_view kLoopbackCongestion = "reno";
    const int one = 1;
    ::setsockopt(socket, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    ::setsockopt(socket, IPPROTO_TCP, TCP_CONGESTION, kLoopbackCongestion.data(),
                 static_cast<socklen_t>(kLoopbackCongestion.size()));
}

// Moves bytes from `from` to `to` until from ends, then ends to's sending
// side (on a failed write, from's receiving side too).
inline void splice_pump(int from, int to) {
    int pipe_fds[2];
    if (::pipe2(pipe_fds, O_CLOEXEC) != 0) {
        ::shutdown(to, SHUT_WR);
        return;
    }
    Fd read_end(pipe_fds[0]), write_end(pipe_fds[1]);
    ::fcntl(write_end.get(), F_SETPIPE_SZ, kSplicePipeSize);
    for (;;) {
        const ssize_t n = ::splice(from, nullptr, write_end.get(), nullptr, kSplicePipeSize, SPLICE_F_MOVE);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break;
        ssize_t left = n;
        while (left > 0) {
            const ssize_t m =
                ::splice(read_end.get(), nullptr, to, nullptr, static_cast<std::size_t>(left), SPLICE_F_MOVE);
            if (m < 0 && errno == EINTR) continue;
            if (m <= 0) {
                ::shutdown(from, SHUT_RD);
                ::shutdown(to, SHUT_WR);
                return;
            }
            left -= m;
        }
    }
    ::shutdown(to, SHUT_WR);
}

// Both directions at once: b to a on a second thread, a to b on this one;
// returns when both have ended.  Without a second thread, nothing is relayed
// (both are shut down).
inline void splice_both_ways(int a, int b) {
    std::optional<std::thread> back;
    try {
        back.emplace([a, b] { splice_pump(b, a); });
    } catch (const std::system_error&) {
        ::shutdown(a, SHUT_RDWR);
        ::shutdown(b, SHUT_RDWR);
        return;
    }
    splice_pump(a, b);
    back->join();
}

}  // namespace sbx
