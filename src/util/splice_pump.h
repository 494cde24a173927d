// Relaying bytes between two stream sockets by splice(2) through a pipe, in
// each direction on a thread of its own (header only; Linux).  Used by the
// helper's bridge to Codex's proxy (linux-helper/managed_network.h); meant
// to be the one pump of sbx's allowlist proxy too (src/net/proxy.cc).
#pragma once

#include <fcntl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <optional>
#include <system_error>
#include <thread>

#include "util/fd.h"

namespace sbx {

inline constexpr int kSplicePipeSize = 1 << 20;

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
