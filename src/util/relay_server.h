// What the two relay servers share beside their RelayThreads
// (util/relay_threads.h): sbx's allowlist proxy (net/proxy.cc) and the
// helper's bridge to Codex's proxy (linux-helper/managed_network.cc) each
// accept on a thread of their own started without signals
// (thread_without_signals), and know the sockets of their live connections
// (LiveConnections, LiveSocket) so that stopping shuts each down, which ends
// the threads blocked on them.  Linux and header only.
#pragma once

#include <pthread.h>
#include <signal.h>
#include <sys/socket.h>

#include <atomic>
#include <mutex>
#include <set>
#include <thread>
#include <utility>

#include "util/fd.h"

namespace sbx {

// Starts fn on a thread with every signal blocked (its threads inherit the
// mask): the process's signals stay its own wait loop's, and a write to a
// closed peer is EPIPE.  The caller's mask is as it was after.  Throws
// std::system_error when no thread can be made.
template <class Fn>
std::thread thread_without_signals(Fn&& fn) {
    sigset_t all, old;
    ::sigfillset(&all);
    ::pthread_sigmask(SIG_BLOCK, &all, &old);
    try {
        std::thread thread(std::forward<Fn>(fn));
        ::pthread_sigmask(SIG_SETMASK, &old, nullptr);
        return thread;
    } catch (...) {
        ::pthread_sigmask(SIG_SETMASK, &old, nullptr);
        throw;
    }
}

// The sockets of the live connections, shut down by stop().  Thread-safe.
class LiveConnections {
public:
    // Adds fd; false (not added) once stop() was called.
    bool track(int fd) {
        std::lock_guard lock(mutex_);
        if (stopping_) return false;
        open_.insert(fd);
        return true;
    }
    void untrack(int fd) {
        std::lock_guard lock(mutex_);
        open_.erase(fd);
    }
    // No connection more: every tracked socket is shut down (SHUT_RDWR).
    void stop() {
        std::lock_guard lock(mutex_);
        stopping_ = true;
        for (int fd : open_) ::shutdown(fd, SHUT_RDWR);
    }
    bool stopping() const { return stopping_; }

private:
    std::mutex mutex_;
    std::set<int> open_;
    std::atomic<bool> stopping_{false};
};

// A socket of a live connection: while it is open, stop() can shut it down;
// it is forgotten before it closes, so that stop() never touches a
// descriptor number reused since.
class LiveSocket {
public:
    LiveSocket() = default;
    // Invalid (and fd closed) when the connections are already stopping.
    LiveSocket(LiveConnections& connections, Fd fd) : connections_(&connections), fd_(std::move(fd)) {
        if (fd_.valid() && !connections_->track(fd_.get())) fd_.reset();
    }
    LiveSocket(LiveSocket&& other) noexcept : connections_(other.connections_), fd_(std::move(other.fd_)) {}
    LiveSocket& operator=(LiveSocket&& other) noexcept {
        if (this != &other) {
            close();
            connections_ = other.connections_;
            fd_ = std::move(other.fd_);
        }
        return *this;
    }
    ~LiveSocket() { close(); }
    int get() const { return fd_.get(); }
    bool valid() const { return fd_.valid(); }
    void close() {
        if (fd_.valid()) connections_->untrack(fd_.get());
        fd_.reset();
    }

private:
    LiveConnections* connections_ = nullptr;
    Fd fd_;
};

}  // namespace sbx
