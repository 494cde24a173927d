// The threads of a relay's connections, counted (header only): sbx's
// allowlist proxy (src/net/proxy.cc) and the helper's bridge to Codex's proxy
// (linux-helper/managed_network.h) run each connection on a thread of its own
// and a second one while relaying (splice_pump.h), on the host, outside every
// limit of the sandbox.  So that a command cannot make them start threads
// without end (200 connections were 400 threads), each has a cap on the
// connections it serves at once; one over it is closed at once.
//
// The cap: 64 connections (128 relaying threads), and with --limit-procs N
// the relay's threads count like the sandbox's processes: N/2 connections
// (two threads each, so at most N threads), at least one, at most 64.  The
// sandbox's tasks on the host then stay within N (the command) + N (the
// relay) + a few of sbx's and the helper's own.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <list>
#include <memory>
#include <optional>
#include <system_error>
#include <thread>
#include <utility>

namespace sbx {

inline constexpr std::size_t kRelayThreadsPerConnection = 2;
inline constexpr std::size_t kMaxRelayConnections = 64;

struct RelayCap {
    std::size_t connections = kMaxRelayConnections;
    std::optional<std::uint64_t> limit_procs;  // --limit-procs, when it set the cap
    bool operator==(const RelayCap&) const = default;
};

// The cap for a sandbox with this --limit-procs (none: the fixed one).
inline RelayCap relay_cap(std::optional<std::uint64_t> limit_procs) {
    if (!limit_procs) return RelayCap{};
    const std::uint64_t pairs = *limit_procs / kRelayThreadsPerConnection;
    return RelayCap{static_cast<std::size_t>(std::clamp<std::uint64_t>(pairs, 1, kMaxRelayConnections)), limit_procs};
}

// The threads serving connections, each joined (none detached).  Used from
// one thread only (the relay's accepting one); the threads it starts touch
// nothing of it but their own "finished" flag.
class RelayThreads {
public:
    explicit RelayThreads(std::size_t cap) : cap_(cap) {}
    RelayThreads(const RelayThreads&) = delete;
    RelayThreads& operator=(const RelayThreads&) = delete;
    // Waits for every thread: the caller makes them end first (shuts their
    // sockets down).
    ~RelayThreads() { join(true); }

    // Joins the threads that have finished; whether another may start.
    bool has_room() {
        join(false);
        return threads_.size() < cap_;
    }

    // Runs serve() on a thread of its own, unless `cap` threads are still
    // serving (has_room) or no thread can be made: false then, and serve is
    // dropped (with what it holds, such as the connection's socket).
    template <class Serve>
    bool start(Serve&& serve) {
        if (!has_room()) return false;
        auto finished = std::make_shared<std::atomic<bool>>(false);
        Worker& w = threads_.emplace_back();  // before the thread: a list that cannot grow starts none
        w.finished = std::move(finished);
        try {
            w.thread = std::thread([serve = std::forward<Serve>(serve), finished = w.finished]() mutable {
                serve();
                *finished = true;
            });
        } catch (const std::system_error&) {
            threads_.pop_back();
            return false;
        }
        return true;
    }

    // The threads not yet joined (those serving, and any that finished since
    // the last start).
    std::size_t size() const { return threads_.size(); }
    std::size_t cap() const { return cap_; }

    // Joins the finished threads, or all of them.
    void join(bool all) {
        for (auto it = threads_.begin(); it != threads_.end();) {
            if (all || *it->finished) {
                it->thread.join();
                it = threads_.erase(it);
            } else {
                ++it;
            }
        }
    }

private:
    struct Worker {
        std::thread thread;
        std::shared_ptr<std::atomic<bool>> finished;
    };
    std::size_t cap_;
    std::list<Worker> threads_;
};

}  // namespace sbx
