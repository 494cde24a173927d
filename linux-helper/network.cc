#include "network.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <linux/netlink.h>
#include <linux/openat2.h>
#include <linux/rtnetlink.h>
#include <linux/seccomp.h>
#include <linux/sock_diag.h>
#include <linux/unix_diag.h>
#include <net/if.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <fstream>
#include <functional>
#include <map>
#include <mutex>
#include <string_view>
#include <system_error>
#include <thread>
#include <vector>

#include <fmt/core.h>

#include "seccomp_rules.h"
#include "step_error.h"
#include "util/fd_pass.h"

namespace sbx::helper {
namespace {

constexpr const char* kStep = "network";

// A pidfd for the notifying task, which may be any thread of its process
// (a resolver's or a thread pool's): PIDFD_THREAD (Linux 6.9) takes a
// thread's id; before it, the thread group's leader, which shares the
// thread's descriptor table.  Without this a connect from a thread failed
// with ESRCH under network limited.
int pidfd_open(pid_t pid) {
    constexpr unsigned kPidfdThread = O_EXCL;  // PIDFD_THREAD
    const int fd = static_cast<int>(::syscall(SYS_pidfd_open, pid, kPidfdThread));
    if (fd >= 0 || errno != EINVAL) return fd;
    // Before 6.9: EINVAL for the flag, or for a thread that is not a leader.
    std::ifstream status(fmt::format("/proc/{}/status", pid));
    pid_t leader = pid;
    for (std::string line; std::getline(status, line);)
        if (line.starts_with("Tgid:")) leader = static_cast<pid_t>(std::strtol(line.c_str() + 5, nullptr, 10));
    return static_cast<int>(::syscall(SYS_pidfd_open, leader, 0));
}
int pidfd_getfd(int pidfd, int fd) { return static_cast<int>(::syscall(438, pidfd, fd, 0)); }

// True when a UNIX socket bound in this network namespace has its file at
// (dev, ino).  Asks the kernel (NETLINK_SOCK_DIAG, whose dumps list only the
// sockets of the caller's network namespace) rather than remembering binds,
// so a socket bound by any sandboxed process counts, and a file whose socket
// was closed and whose inode number was reused does not.  The kernel reports
// the inode number in 32 bits and the device as its internal dev_t.
bool bound_in_this_netns(dev_t dev, ino_t ino) {
    Fd diag(::socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_SOCK_DIAG));
    if (!diag.valid()) return false;
    struct {
        nlmsghdr header;
        unix_diag_req request;
    } query{};
    query.header.nlmsg_len = sizeof query;
    query.header.nlmsg_type = SOCK_DIAG_BY_FAMILY;
    query.header.nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP;
    query.request.sdiag_family = AF_UNIX;
    query.request.udiag_states = ~0U;
    query.request.udiag_show = UDIAG_SHOW_VFS;
    sockaddr_nl kernel{};
    kernel.nl_family = AF_NETLINK;
    if (::sendto(diag.get(), &query, sizeof query, 0, reinterpret_cast<sockaddr*>(&kernel), sizeof kernel) < 0)
        return false;

    alignas(nlmsghdr) char buffer[32768];
    bool found = false;
    for (;;) {
        ssize_t n = ::recv(diag.get(), buffer, sizeof buffer, 0);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return false;
        auto length = static_cast<unsigned>(n);
        for (auto* h = reinterpret_cast<nlmsghdr*>(buffer); NLMSG_OK(h, length); h = NLMSG_NEXT(h, length)) {
            if (h->nlmsg_type == NLMSG_DONE) return found;
            if (h->nlmsg_type == NLMSG_ERROR) return false;
            if (h->nlmsg_type != SOCK_DIAG_BY_FAMILY) continue;
            if (h->nlmsg_len < NLMSG_LENGTH(sizeof(unix_diag_msg))) continue;
            auto* msg = static_cast<unix_diag_msg*>(NLMSG_DATA(h));
            unsigned attr_length = h->nlmsg_len - NLMSG_LENGTH(sizeof *msg);
            for (auto* a = reinterpret_cast<rtattr*>(msg + 1); RTA_OK(a, attr_length); a = RTA_NEXT(a, attr_length)) {
                if (a->rta_type != UNIX_DIAG_VFS || RTA_PAYLOAD(a) < sizeof(unix_diag_vfs)) continue;
                unix_diag_vfs vfs{};
                std::memcpy(&vfs, RTA_DATA(a), sizeof vfs);
                const dev_t vfs_dev = makedev(vfs.udiag_vfs_dev >> 20, vfs.udiag_vfs_dev & 0xfffff);
                if (vfs.udiag_vfs_ino == static_cast<std::uint32_t>(ino) && vfs_dev == dev) found = true;
            }
        }
    }
}

}  // namespace

sockaddr_in loopback_v4(std::uint16_t port) {
    sockaddr_in v4{};
    v4.sin_family = AF_INET;
    v4.sin_port = htons(port);
    v4.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    return v4;
}

void bring_up_loopback() {
    Fd control(::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0));
    if (!control.valid()) fail_errno(kStep, "socket for the loopback setup");
    ifreq request{};
    std::memcpy(request.ifr_name, "lo", 3);
    if (::ioctl(control.get(), SIOCGIFFLAGS, &request) != 0) fail_errno(kStep, "reading the flags of lo");
    request.ifr_flags = static_cast<short>(request.ifr_flags | IFF_UP);
    if (::ioctl(control.get(), SIOCSIFFLAGS, &request) != 0) fail_errno(kStep, "bringing lo up");

    // The kernel gives an up loopback 127.0.0.1/8 (and ::1 where IPv6 is on):
    // check that the command will find them.
    Fd probe(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
    sockaddr_in v4 = loopback_v4(0);
    if (!probe.valid() || ::bind(probe.get(), reinterpret_cast<sockaddr*>(&v4), sizeof v4) != 0)
        fail_errno(kStep, "127.0.0.1 is not usable on the new loopback");
    Fd probe6(::socket(AF_INET6, SOCK_STREAM | SOCK_CLOEXEC, 0));
    if (probe6.valid()) {  // no socket: IPv6 is not built in, nothing to check
        sockaddr_in6 v6{};
        v6.sin6_family = AF_INET6;
        v6.sin6_addr = in6addr_loopback;
        if (::bind(probe6.get(), reinterpret_cast<sockaddr*>(&v6), sizeof v6) != 0 && errno != EADDRNOTAVAIL)
            fail_errno(kStep, "::1 is not usable on the new loopback");
        // EADDRNOTAVAIL: IPv6 is disabled (net.ipv6.conf.*.disable_ipv6), as on the host.
    }
}

namespace {

// A TCP socket listening on 127.0.0.1:port of this network namespace.
Fd loopback_listener(std::uint16_t port, std::string_view for_whom) {
    Fd listener(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
    sockaddr_in v4 = loopback_v4(port);
    if (!listener.valid() || ::bind(listener.get(), reinterpret_cast<sockaddr*>(&v4), sizeof v4) != 0 ||
        ::listen(listener.get(), SOMAXCONN) != 0)
        fail_errno(kStep, fmt::format("listening on 127.0.0.1:{} for {}", port, for_whom));
    return listener;
}

}  // namespace

void hand_out_proxy_listener(int channel, std::uint16_t port) {
    Fd listener = loopback_listener(port, "the allowlist proxy");
    if (!send_fd(channel, listener.get()))
        fail_errno(kStep, "sending the proxy's listening socket to sbx (--proxy-fd)");
    ::close(channel);  // pid 1's copy: sbx has what it needs
}

void hand_out_bridge_listeners(int channel, std::span<const std::uint16_t> ports) {
    for (const std::uint16_t port : ports) {
        Fd listener = loopback_listener(port, "the bridge to Codex's proxy (--managed-network)");
        if (!send_fd(channel, listener.get()))
            fail_errno(kStep, "sending a listening socket to the helper's proxy bridge (--managed-network)");
    }
    ::close(channel);  // pid 1's copy: the helper has what it needs
}

std::optional<std::string> unix_pathname(const void* address, std::size_t length) {
    constexpr std::size_t path_offset = offsetof(sockaddr_un, sun_path);
    if (length <= path_offset || length > sizeof(sockaddr_un)) return std::nullopt;
    sockaddr_un un{};
    std::memcpy(&un, address, length);
    if (un.sun_family != AF_UNIX || un.sun_path[0] == '\0') return std::nullopt;
    // The kernel ends the path at the first NUL or at the address length.
    return std::string(un.sun_path, ::strnlen(un.sun_path, length - path_offset));
}

UnixMediator::UnixMediator(int listener, std::size_t response_size, bool host_sockets,
                           const TransparentTcp* transparent, Unreachable unreachable)
    : listener_(listener),
      host_sockets_(host_sockets),
      unreachable_(std::move(unreachable)),
      resp_size_(response_size) {
    if (transparent) {
        socks_port_ = transparent->socks_port;
        names_ = transparent->names;
        peers_ = std::make_shared<PeerTable>();
    }
    // Paths are resolved in the command's root and cwd through
    // /proc/PID/{root,cwd}, which needs a /proc of this pid namespace.
    char self[32] = {};
    ssize_t n = ::readlink("/proc/self", self, sizeof self - 1);
    proc_is_ours_ = n > 0 && std::string_view(self, static_cast<std::size_t>(n)) == std::to_string(::getpid());
}

struct UnixMediator::Connect {
    Fd socket;  // the command's socket, duplicated
    int domain = 0;
    sockaddr_storage address{};
    socklen_t length = 0;
    Fd via;                            // for a pathname: the socket file, opened and checked
    std::optional<SocksTarget> socks;  // transparent TCP: address is the SOCKS5 listener, this the target
    sockaddr_storage asked{};          // transparent TCP: the address the command gave
    socklen_t asked_length = 0;
};

// What getpeername() says of each socket connected through the proxy: the
// address the command connected to, by the socket's inode number, with the
// local port to tell a reused inode number apart.  At most kMax, the oldest
// forgotten first.
struct UnixMediator::PeerTable {
    static constexpr std::size_t kMax = 4096;
    struct Peer {
        sockaddr_storage address{};
        socklen_t length = 0;
        std::uint16_t local_port = 0;
    };
    std::mutex mutex;
    std::map<ino_t, Peer> peers;
    std::deque<ino_t> order;

    void add(ino_t ino, const Peer& peer) {
        std::lock_guard lock(mutex);
        if (peers.insert_or_assign(ino, peer).second) order.push_back(ino);
        while (order.size() > kMax) {
            peers.erase(order.front());
            order.pop_front();
        }
    }
    std::optional<Peer> find(ino_t ino) {
        std::lock_guard lock(mutex);
        const auto it = peers.find(ino);
        if (it == peers.end()) return std::nullopt;
        return it->second;
    }
};

namespace {

int perform(UnixMediator::Connect& c) {
    int rc;
    if (c.via.valid()) {
        // Through the opened file: what was checked is what is reached.
        sockaddr_un via{};
        via.sun_family = AF_UNIX;
        const int n = std::snprintf(via.sun_path, sizeof via.sun_path, "/proc/self/fd/%d", c.via.get());
        rc = ::connect(c.socket.get(), reinterpret_cast<sockaddr*>(&via),
                       static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + static_cast<std::size_t>(n)));
    } else {
        rc = ::connect(c.socket.get(), reinterpret_cast<sockaddr*>(&c.address), c.length);
    }
    return rc == 0 ? 0 : errno;
}

// A connect on a blocking socket is first tried without blocking (O_NONBLOCK
// for the duration of the call: the socket is not connected yet, so nothing
// else uses it meanwhile).  What is left to wait for, if anything:
// Proxy: a transparent connect (transparent.h), always on a thread.
enum class Wait { Nothing, Room, Handshake, Proxy };

// Waits up to timeout_ms (-1: for ever) for a connect in progress; true with
// error set when it ended.
bool handshake_done(const UnixMediator::Connect& c, int timeout_ms, int& error) {
    pollfd p{c.socket.get(), POLLOUT, 0};
    int n;
    while ((n = ::poll(&p, 1, timeout_ms)) < 0 && errno == EINTR) {
    }
    if (n == 0) return false;
    socklen_t size = sizeof error;
    if (n < 0 || ::getsockopt(c.socket.get(), SOL_SOCKET, SO_ERROR, &error, &size) != 0) error = errno;
    return true;
}

Wait attempt(UnixMediator::Connect& c, int& error) {
    const int flags = ::fcntl(c.socket.get(), F_GETFL);
    if (flags < 0) {
        error = errno;
        return Wait::Nothing;
    }
    if (flags & O_NONBLOCK) {  // the command asked not to wait
        error = perform(c);
        return Wait::Nothing;
    }
    ::fcntl(c.socket.get(), F_SETFL, flags | O_NONBLOCK);
    error = perform(c);
    ::fcntl(c.socket.get(), F_SETFL, flags);
    if (error == EAGAIN && c.domain == AF_UNIX) return Wait::Room;  // the listener's backlog is full
    if (error == EINPROGRESS) return handshake_done(c, 0, error) ? Wait::Nothing : Wait::Handshake;
    return Wait::Nothing;
}

}  // namespace

bool answer_notification(int listener, std::size_t response_size, std::uint64_t id, int error, std::uint32_t flags) {
    std::vector<std::uint64_t> buffer((response_size + 7) / 8 + 1, 0);
    auto* response = reinterpret_cast<seccomp_notif_resp*>(buffer.data());
    response->id = id;
    response->val = 0;
    response->error = -error;
    response->flags = flags;
    return ::ioctl(listener, SECCOMP_IOCTL_NOTIF_SEND, response) == 0;
}

namespace {

// The local port a socket is bound to (0: none, or not IPv4/IPv6).
std::uint16_t local_port(int socket) {
    sockaddr_storage local{};
    socklen_t length = sizeof local;
    if (::getsockname(socket, reinterpret_cast<sockaddr*>(&local), &length) != 0) return 0;
    if (local.ss_family == AF_INET) return ntohs(reinterpret_cast<sockaddr_in&>(local).sin_port);
    if (local.ss_family == AF_INET6) return ntohs(reinterpret_cast<sockaddr_in6&>(local).sin6_port);
    return 0;
}

// A transparent connect, on a thread of its own: to the SOCKS5 listener,
// then the handshake for the target, then the target kept for getpeername.
// What failed leaves the socket unconnected again (connect to AF_UNSPEC), as
// a failed connect would.
int connect_through_socks(UnixMediator::Connect& c, UnixMediator::PeerTable& peers,
                          const std::function<bool()>& alive) {
    int error = perform(c);
    if (error == EINPROGRESS) handshake_done(c, -1, error);
    if (error != 0) return error;
    error = socks5_handshake(c.socket.get(), *c.socks, alive);
    if (error != 0) {
        sockaddr unspecified{};
        unspecified.sa_family = AF_UNSPEC;
        (void)::connect(c.socket.get(), &unspecified, sizeof unspecified);
        return error;
    }
    struct stat st {};
    if (::fstat(c.socket.get(), &st) == 0) peers.add(st.st_ino, {c.asked, c.asked_length, local_port(c.socket.get())});
    return 0;
}

}  // namespace

bool UnixMediator::id_valid(std::uint64_t id) const {
    return ::ioctl(listener_, SECCOMP_IOCTL_NOTIF_ID_VALID, &id) == 0;
}

void UnixMediator::serve(const seccomp_notif& notification) {
    if (notification.data.arch == kAuditArch && notification.data.nr == SYS_getpeername) {
        serve_peer(notification);
        return;
    }
    const seccomp_notif* request = &notification;
    const std::uint64_t id = request->id;
    Connect c;
    int error = EPERM;  // anything but connect is not ours to allow
    if (request->data.arch == kAuditArch && request->data.nr == SYS_connect) error = prepare(*request, c);
    const Wait wait = error != 0 ? Wait::Nothing : c.socks ? Wait::Proxy : attempt(c, error);
    // Outside the sandbox's network (the host's address, the internet):
    // told while the caller waits, its notification still pending.
    if (wait == Wait::Nothing && error == ENETUNREACH && unreachable_ &&
        (c.domain == AF_INET || c.domain == AF_INET6) && id_valid(id))
        unreachable_(c.address, c.length, static_cast<pid_t>(request->pid));
    if (wait != Wait::Nothing) {
        // Wait as a blocking connect(2) would, on a thread of its own, so that a
        // peer that never accepts holds up only its caller, not pid 1.
        Fd listener(::fcntl(listener_, F_DUPFD_CLOEXEC, 0));
        if (listener.valid()) {
            if (waiting_->fetch_add(1) < kMaxWaiting) {
                try {
                    std::thread([listener = std::move(listener), c = std::move(c), id, wait, size = resp_size_,
                                 waiting = waiting_, peers = peers_]() mutable {
                        int result = 0;
                        if (wait == Wait::Room) {
                            result = perform(c);
                        } else if (wait == Wait::Proxy) {
                            result = connect_through_socks(c, *peers, [&] {
                                return ::ioctl(listener.get(), SECCOMP_IOCTL_NOTIF_ID_VALID, &id) == 0;
                            });
                        } else {
                            handshake_done(c, -1, result);
                        }
                        answer_notification(listener.get(), size, id, result);
                        waiting->fetch_sub(1);
                    }).detach();
                    return;
                } catch (const std::system_error&) {
                }
            }
            waiting_->fetch_sub(1);  // too many waiting, or no thread
        }
        error = EAGAIN;  // no thread to wait on: what a full backlog says to a non-blocking caller
    }
    if (!answer_notification(listener_, resp_size_, id, error) && errno != ENOENT)
        fail_errno(kStep, "answering a seccomp notification");
}

// connect(fd, address, length) as request->pid asked: its socket duplicated
// and its address copied once, checked, and ready to be made here.  Returns
// 0 or the errno for the command.
int UnixMediator::prepare(const seccomp_notif& request, Connect& c) const {
    const auto pid = static_cast<pid_t>(request.pid);
    const int fd = static_cast<int>(request.data.args[0]);
    const std::uint64_t user_address = request.data.args[1];
    const int length = static_cast<int>(request.data.args[2]);  // an int in the kernel
    if (length < 0 || static_cast<std::size_t>(length) > sizeof c.address) return EINVAL;
    c.length = static_cast<socklen_t>(length);

    Fd pidfd(pidfd_open(pid));
    if (!pidfd.valid()) return ESRCH;
    if (length > 0) {
        iovec local{&c.address, static_cast<std::size_t>(length)};
        iovec remote{reinterpret_cast<void*>(user_address), static_cast<std::size_t>(length)};
        ssize_t n = ::process_vm_readv(pid, &local, 1, &remote, 1, 0);
        if (n != length) return (n < 0 && errno != EFAULT) ? EPERM : EFAULT;
    }
    c.socket = Fd(pidfd_getfd(pidfd.get(), fd));
    if (!c.socket.valid()) return errno == EBADF ? EBADF : EPERM;
    // The pid, the memory read and the socket were the caller's only if its
    // notification is still pending now.
    if (!id_valid(request.id)) return ENOENT;

    socklen_t size = sizeof c.domain;
    if (::getsockopt(c.socket.get(), SOL_SOCKET, SO_DOMAIN, &c.domain, &size) != 0) return errno;
    if (c.domain == AF_UNIX) {
        if (auto path = unix_pathname(&c.address, c.length)) return prepare_path(request, *path, c);
    }
    if (socks_port_ != 0 && (c.domain == AF_INET || c.domain == AF_INET6) && c.address.ss_family == c.domain) {
        int type = 0, protocol = 0;
        socklen_t n = sizeof type;
        if (::getsockopt(c.socket.get(), SOL_SOCKET, SO_TYPE, &type, &n) != 0) return errno;
        n = sizeof protocol;
        if (::getsockopt(c.socket.get(), SOL_SOCKET, SO_PROTOCOL, &protocol, &n) != 0) return errno;
        if (type == SOCK_STREAM && protocol == IPPROTO_TCP) {
            c.socks = transparent_target(c.address, c.length, *names_);
            if (c.socks) {
                c.asked = c.address;  // what getpeername() will say: the struct, whatever length was given
                c.asked_length = c.domain == AF_INET ? sizeof(sockaddr_in) : sizeof(sockaddr_in6);
                // Made to the SOCKS5 listener on the sandbox's 127.0.0.1
                // (v4-mapped for an IPv6 socket) instead.
                c.address = {};
                if (c.domain == AF_INET) {
                    const sockaddr_in v4 = loopback_v4(socks_port_);
                    std::memcpy(&c.address, &v4, sizeof v4);
                    c.length = sizeof v4;
                } else {
                    sockaddr_in6 v6{};
                    v6.sin6_family = AF_INET6;
                    v6.sin6_port = htons(socks_port_);
                    v6.sin6_addr.s6_addr[10] = v6.sin6_addr.s6_addr[11] = 0xff;
                    const std::uint32_t lo = htonl(INADDR_LOOPBACK);
                    std::memcpy(v6.sin6_addr.s6_addr + 12, &lo, 4);
                    std::memcpy(&c.address, &v6, sizeof v6);
                    c.length = sizeof v6;
                }
            }
        }
    }
    // TCP/UDP reach only the private namespace's loopback; abstract UNIX
    // names are looked up in the network namespace of the socket, which is
    // the sandbox's (sockets are never passed in from the host), so neither
    // can reach the host.
    return 0;
}

void UnixMediator::serve_peer(const seccomp_notif& request) {
    const auto pid = static_cast<pid_t>(request.pid);
    const int fd = static_cast<int>(request.data.args[0]);
    const std::uint64_t user_address = request.data.args[1];
    const std::uint64_t user_length = request.data.args[2];
    auto as_is = [&] {
        if (!answer_notification(listener_, resp_size_, request.id, 0, SECCOMP_USER_NOTIF_FLAG_CONTINUE) &&
            errno != ENOENT)
            fail_errno(kStep, "answering a seccomp notification");
    };
    std::optional<PeerTable::Peer> peer;
    {
        Fd pidfd(peers_ ? pidfd_open(pid) : -1);
        Fd socket(pidfd.valid() ? pidfd_getfd(pidfd.get(), fd) : -1);
        struct stat st {};
        if (socket.valid() && ::fstat(socket.get(), &st) == 0) peer = peers_->find(st.st_ino);
        if (peer && local_port(socket.get()) != peer->local_port) peer.reset();  // another socket, same inode
    }
    if (!peer || !id_valid(request.id)) return as_is();
    // As the kernel does: the address cut to the caller's length, the whole
    // length written back.
    socklen_t length = 0;
    iovec local{&length, sizeof length};
    iovec remote{reinterpret_cast<void*>(user_length), sizeof length};
    int error = 0;
    if (::process_vm_readv(pid, &local, 1, &remote, 1, 0) != static_cast<ssize_t>(sizeof length)) {
        error = EFAULT;
    } else if (static_cast<int>(length) < 0) {
        error = EINVAL;
    } else {
        const std::size_t copied = std::min<std::size_t>(length, peer->length);
        iovec from[2] = {{&peer->address, copied}, {&peer->length, sizeof peer->length}};
        iovec to[2] = {{reinterpret_cast<void*>(user_address), copied}, remote};
        const auto want = static_cast<ssize_t>(copied + sizeof peer->length);
        if (::process_vm_writev(pid, copied > 0 ? from : from + 1, copied > 0 ? 2 : 1, copied > 0 ? to : to + 1,
                                copied > 0 ? 2 : 1, 0) != (copied > 0 ? want : static_cast<ssize_t>(sizeof length)))
            error = EFAULT;
    }
    if (!answer_notification(listener_, resp_size_, request.id, error) && errno != ENOENT)
        fail_errno(kStep, "answering a seccomp notification");
}

// A pathname: open the file it names as the command would find it (in its
// root and cwd) and check that the socket there was bound in the sandbox;
// the connect then goes through the opened file, so that a rename or symlink
// swap after the check changes nothing.
int UnixMediator::prepare_path(const seccomp_notif& request, const std::string& path, Connect& c) const {
    if (!proc_is_ours_) return EPERM;  // cannot resolve as the command would: refuse
    const bool absolute = path.front() == '/';
    const std::string base_path = fmt::format("/proc/{}/{}", request.pid, absolute ? "root" : "cwd");
    Fd base(::open(base_path.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
    if (!base.valid()) return EPERM;
    if (!id_valid(request.id)) return ENOENT;  // the pid still named the caller

    open_how how{};
    how.flags = O_PATH | O_CLOEXEC;
    // No magic links: /proc/self would be this process, not the command.
    how.resolve = RESOLVE_NO_MAGICLINKS | (absolute ? RESOLVE_IN_ROOT : 0);
    Fd target(static_cast<int>(::syscall(SYS_openat2, base.get(), path.c_str(), &how, sizeof how)));
    if (!target.valid()) return errno;
    struct stat st {};
    if (::fstat(target.get(), &st) != 0) return errno;
    if (!S_ISSOCK(st.st_mode)) return ECONNREFUSED;  // what connect(2) says for a non-socket
    if (!host_sockets_ && !bound_in_this_netns(st.st_dev, st.st_ino)) return EPERM;  // the host's socket
    c.via = std::move(target);
    return 0;
}

}  // namespace sbx::helper
