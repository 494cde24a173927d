// The network layer of the helper for network `limited` (SPEC section 2).
//
// The command gets a private network namespace whose only device is the
// loopback, brought up by bring_up_loopback().  That hides the host's
// network, its localhost and its abstract UNIX sockets (abstract names live
// in the network namespace of the socket).  It does not hide pathname UNIX
// sockets, which are found through the filesystem: the seccomp filter
// (seccomp.h) hands every connect() to the UnixMediator, which performs the
// connect itself on a duplicate of the command's socket, so the command never
// gets a connect that was checked on one address and made on another.
#pragma once

#include <netinet/in.h>
#include <sys/types.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>

#include "transparent.h"
#include "util/fd.h"

struct seccomp_notif;

namespace sbx::helper {

// 127.0.0.1:port.
sockaddr_in loopback_v4(std::uint16_t port);

// In the new network namespace: loopback up, with 127.0.0.1 (and ::1 where
// IPv6 is enabled).  Throws Error naming the step.
void bring_up_loopback();

// In the new network namespace (after bring_up_loopback): a TCP socket
// listening on 127.0.0.1:port, sent over the UNIX socket `channel` (one
// message, SCM_RIGHTS) to sbx, whose allowlist proxy (src/net/proxy.h)
// accepts on it from the host's network namespace; then channel is closed
// here.  Nothing listens on the host.  Throws Error naming the step.
void hand_out_proxy_listener(int channel, std::uint16_t port);

// The same for --managed-network (managed_network.h): one listening socket
// on 127.0.0.1:port for each of ports, each sent in its own message, in
// order, to the helper's outer process, which relays them to Codex's proxy
// on the host; then channel is closed here.  Throws Error naming the step.
void hand_out_bridge_listeners(int channel, std::span<const std::uint16_t> ports);

// The pathname of a UNIX socket address as connect(2) reads it, or nullopt
// when the address is not a pathname (too short, another family, abstract).
std::optional<std::string> unix_pathname(const void* address, std::size_t length);

// Answers seccomp notification id on listener: error (0: success), or with
// flags SECCOMP_USER_NOTIF_FLAG_CONTINUE, the syscall runs as asked.  False,
// with errno, when the answer could not be given; ENOENT means the caller
// went away.  response_size: SECCOMP_GET_NOTIF_SIZES's.
bool answer_notification(int listener, std::size_t response_size, std::uint64_t id, int error, std::uint32_t flags = 0);

// Serves the seccomp user notifications of the command's connect() calls.
// Must live in the sandbox's network namespace (pid 1 of the sandbox): a
// pathname socket may be reached only when it was bound in this network
// namespace, that is, by a sandboxed process.  Connects on any other address
// (TCP/UDP in the private namespace, abstract and unnamed UNIX addresses) are
// performed unchanged.
class UnixMediator {
public:
    // listener: the seccomp listener, owned by its NotificationServer
    // (recorder.h), which receives the notifications.  host_sockets: the
    // host's pathname sockets may be reached too (Codex's --managed-network
    // with dangerouslyAllowAllUnixSockets, managed_network.h).  transparent:
    // TCP to anything but the loopback goes through that SOCKS5 listener
    // (transparent.h).
    // unreachable, if given, is told of each TCP or UDP connect to an address
    // the sandbox's network cannot reach (ENETUNREACH: anything but its
    // loopback under network limited), while the caller still waits, so
    // that the attempt is recorded (recorder.h, --record-network).
    using Unreachable = std::function<void(const sockaddr_storage&, socklen_t, pid_t)>;
    UnixMediator(int listener, std::size_t response_size, bool host_sockets = false,
                 const TransparentTcp* transparent = nullptr, Unreachable unreachable = {});
    UnixMediator(UnixMediator&&) = default;
    UnixMediator& operator=(UnixMediator&&) = default;

    // One received notification of a connect(): performs or refuses it, answers.
    // A connect that has to wait (a full backlog, a handshake in progress)
    // waits on a thread of its own, so that a peer that never accepts holds
    // up only its caller, not pid 1 and the other connects.
    // Never throws for what a sandboxed process does; throws Error only when
    // the listener itself fails.
    void serve(const seccomp_notif& request);

    struct Connect;    // a checked connect, ready to be made (network.cc)
    struct PeerTable;  // the sockets connected through the proxy (network.cc)

private:
    int prepare(const seccomp_notif&, Connect&) const;
    // getpeername() (transparent TCP only): for a socket connected through
    // the proxy, the address the command connected to; others as they are.
    void serve_peer(const seccomp_notif&);
    int prepare_path(const seccomp_notif&, const std::string& path, Connect&) const;
    bool id_valid(std::uint64_t id) const;

    int listener_;
    bool proc_is_ours_ = false;  // /proc shows this pid namespace
    bool host_sockets_ = false;
    Unreachable unreachable_;
    std::size_t resp_size_ = 0;
    std::uint16_t socks_port_ = 0;  // transparent TCP: the SOCKS5 listener's port (0: none)
    std::shared_ptr<const SyntheticNames> names_;
    std::shared_ptr<PeerTable> peers_;
    // Connects waiting on their own threads, at most kMaxWaiting.
    std::shared_ptr<std::atomic<int>> waiting_ = std::make_shared<std::atomic<int>>(0);
    static constexpr int kMaxWaiting = 256;
};

}  // namespace sbx::helper
