#include "recorder.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/seccomp.h>
#include <netinet/in.h>
#include <poll.h>
#include <sched.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <string_view>
#include <vector>

#include <fmt/core.h>

#include "seccomp_rules.h"
#include "step_error.h"
#include "util/path.h"
#include "walk.h"

// Linux 6.6; the C library's headers may predate it.
#ifndef SECCOMP_IOCTL_NOTIF_SET_FLAGS
#define SECCOMP_IOCTL_NOTIF_SET_FLAGS SECCOMP_IOW(4, __u64)
#endif
#ifndef SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP
#define SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP (1UL << 0)
#endif

namespace sbx::helper {
namespace {

constexpr const char* kStep = "recorder";
constexpr int kAtFdcwd = AT_FDCWD;

bool names_op(std::string_view op) { return op == "create" || op == "remove" || op == "rename"; }

bool writable(const sbx::CanonicalPolicy& policy, const std::string& path) {
    // The sandbox's own /dev/shm takes writes whatever the entries say of the host's.
    if (path_within(path, "/dev/shm") && policy.private_dev_shm()) return true;
    const FsDecision d = decide_path(policy, path);
    return d.access && *d.access == FsAccess::Write;
}

// Landlock's execute right is given with read (landlock.cc): any access but
// deny; a file is read, and a program run, under the same rule.
bool readable(const sbx::CanonicalPolicy& policy, const std::string& path) {
    const FsDecision d = decide_path(policy, path);
    return d.access && *d.access != FsAccess::Deny;
}

// A NUL-terminated string of the caller's at address, at most PATH_MAX bytes,
// read one page at a time so that a string ending before an unmapped page
// is still read.
std::optional<std::string> read_string(pid_t pid, std::uint64_t address) {
    if (address == 0) return std::nullopt;
    constexpr std::uint64_t kPage = 4096;
    std::string out;
    std::array<char, kPage> buffer;
    while (out.size() < PATH_MAX) {
        const std::uint64_t at = address + out.size();
        const std::size_t want = static_cast<std::size_t>(kPage - at % kPage);
        iovec local{buffer.data(), want};
        iovec remote{reinterpret_cast<void*>(at), want};
        const ssize_t n = ::process_vm_readv(pid, &local, 1, &remote, 1, 0);
        if (n <= 0) return std::nullopt;
        const std::string_view got(buffer.data(), static_cast<std::size_t>(n));
        if (const auto nul = got.find('\0'); nul != std::string_view::npos) return out.append(got.substr(0, nul));
        out.append(got);
    }
    return std::nullopt;  // longer than PATH_MAX: the kernel refuses it (ENAMETOOLONG)
}

std::optional<std::string> read_link(const std::string& link) {
    char text[PATH_MAX];
    const ssize_t n = ::readlink(link.c_str(), text, sizeof text);
    if (n <= 0 || static_cast<std::size_t>(n) >= sizeof text || text[0] != '/') return std::nullopt;
    return std::string(text, static_cast<std::size_t>(n));
}

// The directory a *at() call's path is relative to, as the caller sees it.
std::optional<std::string> base_dir(pid_t pid, int dirfd) {
    if (dirfd == kAtFdcwd) return read_link(fmt::format("/proc/{}/cwd", pid));
    return read_link(fmt::format("/proc/{}/fd/{}", pid, dirfd));
}

// The caller's magic names, which pid 1 would otherwise resolve as its own.
std::string as_caller(const std::string& path, pid_t pid) {
    const std::string proc = fmt::format("/proc/{}", pid);
    for (std::string_view self : {"/proc/self", "/proc/thread-self"})
        if (path == self || path.starts_with(std::string(self) + "/")) return proc + path.substr(self.size());
    if (path.starts_with("/dev/fd/")) return proc + "/fd/" + path.substr(8);
    constexpr std::string_view kStd[] = {"/dev/stdin", "/dev/stdout", "/dev/stderr"};
    for (std::size_t i = 0; i < 3; ++i)
        if (path == kStd[i]) return fmt::format("{}/fd/{}", proc, i);
    return path;
}

// The real path of `path` in the view (symlinks followed), or "" when a
// component is missing or it leads to no path (a pipe, a socket).
std::string real_path(const std::string& path, pid_t pid) {
    const WalkVisitor visit{[](const std::string&, std::string_view, int depth) {
                                if (depth > 40) throw sbx::Error("too many links");
                            },
                            {}};
    try {
        return walk_path("/", as_caller(path, pid), visit);
    } catch (const sbx::Error&) {
        return {};
    }
}

std::string comm_of(pid_t pid) {
    Fd fd(::open(fmt::format("/proc/{}/comm", pid).c_str(), O_RDONLY | O_CLOEXEC));
    char text[32] = {};
    const ssize_t n = fd.valid() ? ::read(fd.get(), text, sizeof text - 1) : -1;
    std::string comm(text, n > 0 ? static_cast<std::size_t>(n) : 0);
    while (!comm.empty() && comm.back() == '\n') comm.pop_back();
    return comm;
}

// "1.2.3.4:443", "[2001:db8::1]:443", or "" for another family.
std::string inet_address(const sockaddr_storage& address, std::size_t length) {
    char text[INET6_ADDRSTRLEN] = {};
    if (address.ss_family == AF_INET && length >= sizeof(sockaddr_in)) {
        const auto& in = reinterpret_cast<const sockaddr_in&>(address);
        ::inet_ntop(AF_INET, &in.sin_addr, text, sizeof text);
        return fmt::format("{}:{}", text, ntohs(in.sin_port));
    }
    if (address.ss_family == AF_INET6 && length >= sizeof(sockaddr_in6)) {
        const auto& in6 = reinterpret_cast<const sockaddr_in6&>(address);
        ::inet_ntop(AF_INET6, &in6.sin6_addr, text, sizeof text);
        return fmt::format("[{}]:{}", text, ntohs(in6.sin6_port));
    }
    return {};
}

// One path argument of an observed call: the op it stands for, where the
// path and its dirfd are among the arguments (-1: no dirfd, AT_FDCWD).
struct PathArg {
    const char* op;
    int path;
    int dirfd;
    // open(O_CREAT) without O_EXCL, or a read: an existing file is opened
    // (a symlink there is judged by where it leads).
    bool open_existing = false;
};

// The path arguments of a notified file syscall (none: not one of ours),
// and the index of its mode argument where a setuid/setgid mode is refused;
// pass: nothing to look at (an open for a descriptor alone, O_PATH, which
// needs no access to the file), let it go on.
struct FileCall {
    std::vector<PathArg> paths;
    int mode = -1;
    bool pass = false;
};

// An open or openat (flags: its flags; path, dirfd: its arguments' indices):
// a read where nothing in the flags writes (only the --learn-reads filters
// send those).
FileCall open_call(std::uint64_t flags, int path, int dirfd) {
    // O_TMPFILE's own bit (the C library's O_TMPFILE includes O_DIRECTORY):
    // its path is the directory, written to, not a name made in it.
    constexpr std::uint64_t kTmpfileBit = 020000000;
    constexpr std::uint64_t kWrites = O_WRONLY | O_RDWR | O_CREAT | O_TRUNC | kTmpfileBit;
    const int mode = dirfd < 0 ? 2 : 3;
    if (!(flags & kWrites)) {
        if (flags & O_PATH) return {{}, -1, true};
        return {{{"read", path, dirfd, true}}};
    }
    const bool creates = (flags & (O_CREAT | kTmpfileBit)) != 0;
    const char* op = (flags & O_CREAT) && !(flags & kTmpfileBit) ? "create" : "write";
    return {{{op, path, dirfd, !(flags & O_EXCL)}}, creates ? mode : -1};
}

FileCall file_call(const seccomp_data& d) {
    switch (d.nr) {
        case SYS_openat: return open_call(d.args[2], 1, 0);
        case SYS_mkdirat: return {{{"create", 1, 0}}};
        case SYS_mknodat: return {{{"create", 1, 0}}, 2};
        case SYS_unlinkat: return {{{"remove", 1, 0}}};
        case SYS_renameat:
        case SYS_renameat2: return {{{"rename", 1, 0}, {"rename", 3, 2}}};
        case SYS_linkat: return {{{"create", 3, 2}}};
        case SYS_symlinkat: return {{{"create", 2, 1}}};
        case SYS_fchmodat:
        case 452: return {{{"chmod", 1, 0}}, 2};
        case SYS_fchownat: return {{{"chown", 1, 0}}};
        case SYS_truncate: return {{{"write", 0, -1}}};
        case SYS_utimensat: return {{{"utimes", 1, 0}}};
#if defined(__x86_64__)
        // The calls x86_64 keeps from before the *at forms (aarch64 has
        // only those, and seccomp-gen gives these no rule there).
        case SYS_open: return open_call(d.args[1], 0, -1);
        case SYS_creat: return {{{"create", 0, -1, true}}, 1};
        case SYS_mkdir: return {{{"create", 0, -1}}};
        case SYS_mknod: return {{{"create", 0, -1}}, 1};
        case SYS_unlink:
        case SYS_rmdir: return {{{"remove", 0, -1}}};
        case SYS_rename: return {{{"rename", 0, -1}, {"rename", 1, -1}}};
        case SYS_link: return {{{"create", 1, -1}}};
        case SYS_symlink: return {{{"create", 1, -1}}};
        case SYS_chmod: return {{{"chmod", 0, -1}}, 1};
        case SYS_chown:
        case SYS_lchown: return {{{"chown", 0, -1}}};
        case SYS_utime:
        case SYS_utimes: return {{{"utimes", 0, -1}}};
        case SYS_futimesat: return {{{"utimes", 1, 0}}};
#endif
        default: return {};
    }
}

// A socket address of the caller's (connect, sendto, bind): its family and,
// for AF_INET and AF_INET6, "1.2.3.4:443" / "[::1]:53".
struct SocketAddress {
    sa_family_t family = AF_UNSPEC;
    std::string text;
};

SocketAddress read_address(pid_t pid, std::uint64_t user_address, std::uint64_t user_length) {
    const auto length = static_cast<std::size_t>(static_cast<int>(user_length));
    sockaddr_storage address{};
    if (length == 0 || length > sizeof address) return {};
    iovec local{&address, length};
    iovec remote{reinterpret_cast<void*>(user_address), length};
    if (::process_vm_readv(pid, &local, 1, &remote, 1, 0) != static_cast<ssize_t>(length)) return {};
    return {address.ss_family, inet_address(address, length)};
}

// The name of one of the filter's fixed refusals (seccomp_rules.h), as
// recorded: "ptrace", "mount", "ioctl TIOCSTI", "bind"; "" for another call.
std::string refused_call(const seccomp_data& d) {
    switch (d.nr) {
        case SYS_bind: return "bind";
        case SYS_listen: return "listen";
        case SYS_accept:
        case SYS_accept4: return "accept";
        case SYS_ioctl:
            for (const auto& ioctl : kDeniedIoctls)
                if ((d.args[1] & 0xffffffffULL) == ioctl.request) return std::string("ioctl ") + ioctl.name;
            return {};
        default:
            for (const Named& call : kAlwaysDenied)
                if (call.nr == static_cast<int>(d.nr)) return call.name;
            return {};
    }
}

// The caller's path argument, absolute (a relative one joined to its dirfd's
// directory or its cwd) and normalised; nullopt where it cannot be read.
std::optional<std::string> absolute_path_arg(pid_t pid, const seccomp_data& d, const PathArg& arg) {
    std::optional<std::string> path = read_string(pid, d.args[arg.path]);
    if (!path) return std::nullopt;
    if (!path->empty() && path->front() == '/') return join_path("/", *path);
    const int dirfd = arg.dirfd < 0 ? kAtFdcwd : static_cast<int>(d.args[arg.dirfd]);
    const std::optional<std::string> base = base_dir(pid, dirfd);
    if (!base) return std::nullopt;
    return join_path(*base, *path);
}

}  // namespace

bool policy_refuses(const sbx::CanonicalPolicy& policy, const std::string& op, const std::string& path) {
    if (op == "exec" || op == "read") return !readable(policy, path);
    if (!writable(policy, path)) return true;
    return names_op(op) && path != "/" && !writable(policy, parent_path(path));
}

Recorder::Recorder(const sbx::CanonicalPolicy& policy, const Status& status, bool files, bool learning)
    : policy_(policy), status_(status), files_(files), max_listed_(learning ? kMaxListedLearning : kMaxListed) {
    // Room kept for the other lines: an error, exec_error, denied_omitted,
    // and the one line that may pass the budget (a path of up to PATH_MAX).
    constexpr std::size_t kReserve = 2 * PATH_MAX + 1024;
    const std::size_t room = status_.room((learning ? kMaxBytesLearning : kMaxBytes) + kReserve);
    budget_ = room > kReserve ? room - kReserve : 0;
}

void Recorder::record(DeniedOp d) {
    std::string key = d.op + ' ' + d.path + d.address;
    if (seen_.count(key) != 0) return;
    if (seen_.size() >= max_listed_ || bytes_ >= budget_) {
        ++omitted_;
        return;
    }
    seen_.insert(std::move(key));
    bytes_ += status_.denied(d.op, d.path, d.address, d.pid, d.program);
}

bool Recorder::refuses(const std::string& op, const std::string& path) const {
    return policy_refuses(policy_, op, path);
}

void Recorder::file_op(const std::string& op, const std::string& path, pid_t pid, bool open_existing) {
    if (!policy_refuses(policy_, op, path)) {
        // Allowed by the lexical path.  One lstat for an open: a symlink
        // there (say in the workspace, to /etc/passwd) is judged by where it
        // leads.  (A symlinked directory on the way is not: see above.)
        struct stat st {};
        if (!open_existing || ::lstat(path.c_str(), &st) != 0 || !S_ISLNK(st.st_mode)) return;
        const std::string real = real_path(path, pid);
        const std::string shown = op == "read" ? "read" : "write";
        if (!real.empty() && policy_refuses(policy_, shown, real)) record({shown, real, {}, pid, comm_of(pid)});
        return;
    }
    // Denied by the lexical path: judge the real one.  A namespace change is
    // made in the real parent, on the last component as it is.
    std::string real;
    if (names_op(op)) {
        if (path == "/") return;
        const std::string parent = real_path(parent_path(path), pid);
        if (parent.empty()) return;  // ENOENT, not the sandbox
        real = child_path(parent, base_name(path));
    } else {
        real = real_path(path, pid);
        if (real.empty()) {
            // Missing, or not a path (a pipe): not the sandbox's doing, but
            // for a read under a --deny entry, whose cover empties it (as exec_op).
            if (op == "read" && decide_path(policy_, path).access == FsAccess::Deny)
                record({op, path, {}, pid, comm_of(pid)});
            return;
        }
    }
    std::string shown = op;
    struct stat st {};
    if (op == "create" && ::lstat(real.c_str(), &st) == 0) {
        // It exists: mkdir, mknod, link and O_EXCL fail with EEXIST, not
        // the sandbox; open(O_CREAT) writes to what it finds.
        if (!open_existing) return;
        shown = "write";
        real = real_path(real, pid);
        if (real.empty()) return;
    }
    if (!policy_refuses(policy_, shown, real)) return;
    record({shown, real, {}, pid, comm_of(pid)});
}

void Recorder::exec_op(const std::string& path, pid_t pid) {
    const std::string real = real_path(path, pid);
    if (real.empty()) {
        // Not in the view.  Under a --deny entry the view empties the
        // directory: that is the sandbox's doing.  Elsewhere (a PATH search
        // trying each directory; a path outside --minimal's set) it may not
        // exist on the host either: not recorded.
        const FsDecision d = decide_path(policy_, path);
        if (d.access == FsAccess::Deny) record({"exec", path, {}, pid, comm_of(pid)});
        return;
    }
    if (!policy_refuses(policy_, "exec", real)) return;
    record({"exec", real, {}, pid, comm_of(pid)});
}

void Recorder::call_op(const std::string& op, const std::string& address, pid_t pid) {
    record({op, {}, address, pid, comm_of(pid)});
}

void Recorder::finish() {
    if (omitted_ > 0) status_.denied_omitted(omitted_);
    omitted_ = 0;
}

NotificationServer::NotificationServer(Fd listener, Recorder* recorder, bool host_unix_sockets,
                                       const TransparentTcp* transparent)
    : listener_(std::move(listener)), recorder_(recorder) {
    if (!listener_.valid()) throw sbx::Error("seccomp: pid 1 got no listener");
    seccomp_notif_sizes sizes{};
    if (::syscall(SYS_seccomp, SECCOMP_GET_NOTIF_SIZES, 0, &sizes) != 0)
        fail_errno(kStep, "reading the seccomp notification sizes");
    notif_size_ = std::max<std::size_t>(sizes.seccomp_notif, sizeof(seccomp_notif));
    resp_size_ = std::max<std::size_t>(sizes.seccomp_notif_resp, sizeof(seccomp_notif_resp));
    if (!recorder_ || recorder_->network() == sbx::Network::Limited)
        mediator_.emplace(
            listener_.get(), resp_size_, host_unix_sockets, transparent,
            recorder_ == nullptr ? UnixMediator::Unreachable{}
                                 : [recorder = recorder_](const sockaddr_storage& to, socklen_t length, pid_t pid) {
                                       const std::string text = inet_address(to, length);
                                       if (!text.empty()) recorder->call_op("connect", text, pid);
                                   });
    // The caller and pid 1 switch on one CPU (Linux 6.6); older kernels: EINVAL, ignored.
    if (recorder_) ::ioctl(listener_.get(), SECCOMP_IOCTL_NOTIF_SET_FLAGS, SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP);
}

void NotificationServer::handle() {
    std::vector<std::uint64_t> buffer((notif_size_ + 7) / 8 + 1, 0);
    auto* request = reinterpret_cast<seccomp_notif*>(buffer.data());
    // Those pending now, up to a bound (pid 1 has signals to see to as well).
    for (int served = 0; served < 64; ++served) {
        // RECV blocks when nothing is pending (e.g. POLLHUP after the last
        // filtered process exited): only go on when a notification is there.
        pollfd ready{listener_.get(), POLLIN, 0};
        if (::poll(&ready, 1, 0) <= 0 || !(ready.revents & POLLIN)) return;
        std::fill(buffer.begin(), buffer.end(), 0);
        if (::ioctl(listener_.get(), SECCOMP_IOCTL_NOTIF_RECV, request) != 0) {
            if (errno == EINTR || errno == ENOENT) continue;  // the caller went away
            fail_errno(kStep, "receiving a seccomp notification");
        }
        if (mediator_ && (request->data.nr == SYS_connect || request->data.nr == SYS_getpeername)) {
            mediator_->serve(*request);
        } else {
            observe(*request);
        }
    }
}

void NotificationServer::observe(const seccomp_notif& request) {
    const seccomp_data& d = request.data;
    const auto pid = static_cast<pid_t>(request.pid);
    auto answer = [&](int error, std::uint32_t flags) {
        if (!answer_notification(listener_.get(), resp_size_, request.id, error, flags) && errno != ENOENT)
            fail_errno(kStep, "answering a seccomp notification");
    };
    if (recorder_ == nullptr || d.arch != kAuditArch) return answer(EPERM, 0);
    auto valid = [&] { return ::ioctl(listener_.get(), SECCOMP_IOCTL_NOTIF_ID_VALID, &request.id) == 0; };
    if (d.nr == SYS_socket) return make_socket(request);
    if (d.nr == SYS_execve || d.nr == SYS_execveat) {
        // Recorded while the caller waits (its comm is still the old
        // program's), then the kernel decides.
        const PathArg arg{"exec", d.nr == SYS_execve ? 0 : 1, d.nr == SYS_execve ? -1 : 0};
        const std::optional<std::string> path = absolute_path_arg(pid, d, arg);
        if (path && recorder_->refuses("exec", *path) && valid()) recorder_->exec_op(*path, pid);
        return answer(0, SECCOMP_USER_NOTIF_FLAG_CONTINUE);
    }

    if (d.nr == SYS_connect || d.nr == SYS_sendto) {
        // Network restricted: recorded with the destination, always refused.
        const SocketAddress to =
            read_address(pid, d.args[d.nr == SYS_connect ? 1 : 4], d.args[d.nr == SYS_connect ? 2 : 5]);
        // Recorded while the caller waits, so that its program name can still be read.
        if (!to.text.empty() && valid()) recorder_->call_op("connect", to.text, pid);
        answer(to.family == AF_UNIX ? EPERM : ECONNREFUSED, 0);
        return;
    }
    if (const std::string name = refused_call(d); !name.empty()) {
        // One of the filter's fixed refusals, told to the recorder to be named.
        const SocketAddress at = d.nr == SYS_bind ? read_address(pid, d.args[1], d.args[2]) : SocketAddress{};
        if (valid()) recorder_->call_op(name, at.text, pid);
        return answer(EPERM, 0);
    }

    const FileCall call = file_call(d);
    if (call.pass) return answer(0, SECCOMP_USER_NOTIF_FLAG_CONTINUE);
    if (call.paths.empty()) return answer(EPERM, 0);
    // Never a setuid or setgid file: the recorded filters leave this refusal
    // of theirs to the recorder (seccomp_gen.cc, deny_setid_modes).  The mode
    // is a register, not memory: no TOCTOU.
    if (call.mode >= 0 && (d.args[call.mode] & (S_ISUID | S_ISGID))) return answer(EPERM, 0);
    // Read while the caller waits, then let the kernel decide.
    std::vector<std::pair<const PathArg*, std::string>> paths;
    for (const PathArg& arg : call.paths)
        if (std::optional<std::string> path = absolute_path_arg(pid, d, arg))
            paths.emplace_back(&arg, std::move(*path));
    // What was read was the caller's only if its notification is still
    // pending now (else the pid may name another process).  Asked only when
    // something will be recorded: an ioctl less on the common path.
    const bool suspect = std::any_of(paths.begin(), paths.end(), [&](const auto& p) {
        struct stat st {};
        return recorder_->refuses(p.first->op, p.second) ||
               (p.first->open_existing && ::lstat(p.second.c_str(), &st) == 0 && S_ISLNK(st.st_mode));
    });
    // Recorded before the answer, while the caller waits (a short-lived
    // mkdir would be gone, with its program name, once answered); only a
    // call that is refused waits for it.
    if (suspect && valid())
        for (const auto& [arg, path] : paths) recorder_->file_op(arg->op, path, pid, arg->open_existing);
    answer(0, SECCOMP_USER_NOTIF_FLAG_CONTINUE);
}

// socket(AF_INET or AF_INET6) under network restricted: the filter sends it
// here instead of refusing it, so that the connect that follows can be seen
// with its destination.  Pid 1 leaves the host's network for an empty network
// namespace of its own the first time (no device, not even loopback up: a
// packet has nowhere to go; its cost is paid only by a command that tries
// the network), makes the socket there and installs it in the caller as the
// call's result (SECCOMP_ADDFD_FLAG_SEND, Linux 5.14).  TCP, UDP and ping
// sockets only; raw and every other protocol stay refused.  Pid 1 needs no
// network in restricted (the connect mediator is limited's).
void NotificationServer::make_socket(const seccomp_notif& request) {
    const seccomp_data& d = request.data;
    auto refuse = [&](int error) {
        if (!answer_notification(listener_.get(), resp_size_, request.id, error) && errno != ENOENT)
            fail_errno(kStep, "answering a seccomp notification");
    };
    const int family = static_cast<int>(d.args[0]);
    const int type = static_cast<int>(d.args[1]);
    const int protocol = static_cast<int>(d.args[2]);
    const int kind = type & ~(SOCK_NONBLOCK | SOCK_CLOEXEC);
    const bool stream = kind == SOCK_STREAM && (protocol == 0 || protocol == IPPROTO_TCP);
    const bool datagram = kind == SOCK_DGRAM && (protocol == 0 || protocol == IPPROTO_UDP || protocol == IPPROTO_ICMP ||
                                                 protocol == IPPROTO_ICMPV6);
    if ((family != AF_INET && family != AF_INET6) || !(stream || datagram)) return refuse(EPERM);
    if (!own_network_) {
        if (::unshare(CLONE_NEWNET) != 0) return refuse(EPERM);
        own_network_ = true;
    }
    const Fd socket(::socket(family, kind | (type & SOCK_NONBLOCK) | SOCK_CLOEXEC, protocol));
    if (!socket.valid()) return refuse(errno);
    seccomp_notif_addfd addfd{};
    addfd.id = request.id;
    addfd.flags = SECCOMP_ADDFD_FLAG_SEND;
    addfd.srcfd = static_cast<std::uint32_t>(socket.get());
    addfd.newfd_flags = (type & SOCK_CLOEXEC) ? O_CLOEXEC : 0;
    // On success the call returns the new descriptor; on failure (the
    // caller's table is full: EMFILE) the notification is still pending.
    if (::ioctl(listener_.get(), SECCOMP_IOCTL_NOTIF_ADDFD, &addfd) < 0 && errno != ENOENT) refuse(errno);
}

}  // namespace sbx::helper
