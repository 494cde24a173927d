// The seccomp filter: built with libseccomp, exported as BPF and loaded with
// seccomp(2) directly, so that the listener comes back with the load and the
// loader alone decides the filter flags.
#include "seccomp.h"

#include <fcntl.h>
#include <linux/seccomp.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <initializer_list>
#include <memory>
#include <string>
#include <string_view>

#include <fmt/core.h>
#include <seccomp.h>

#ifndef AF_VSOCK
#define AF_VSOCK 40
#endif

namespace sbx::helper {
namespace {

[[noreturn]] void fail(std::string_view what, int err) {
    throw sbx::Error(fmt::format("seccomp: {}: {}", what, std::strerror(err)));
}

struct CtxRelease {
    void operator()(void* ctx) const { seccomp_release(ctx); }
};
using Ctx = std::unique_ptr<void, CtxRelease>;

constexpr std::uint32_t kDeny = SCMP_ACT_ERRNO(EPERM);
constexpr std::uint64_t kLow32 = 0xffffffffULL;
constexpr std::uint64_t kSockTypeMask = 0xf;  // SOCK_TYPE_MASK in the kernel

// The syscalls that touch another process, io_uring (whose requests bypass
// every syscall rule), the mount family and the keyrings.  The newer mount calls are named
// by number: the C library's headers may predate them.
struct Named {
    const char* name;
    int nr;
};
constexpr Named kAlwaysDenied[] = {
    {"ptrace", SYS_ptrace},
    {"process_vm_readv", SYS_process_vm_readv},
    {"process_vm_writev", SYS_process_vm_writev},
    {"pidfd_getfd", 438},
    {"io_uring_setup", 425},
    {"io_uring_enter", 426},
    {"io_uring_register", 427},
    {"mount", SYS_mount},
    {"umount2", SYS_umount2},
    {"pivot_root", SYS_pivot_root},
    {"open_tree", 428},
    {"move_mount", 429},
    {"fsopen", 430},
    {"fsconfig", 431},
    {"fsmount", 432},
    {"fspick", 433},
    {"mount_setattr", 442},
    {"open_tree_attr", 467},
    // The kernel keyrings are not namespaced by the mount or pid namespace:
    // as root (no user namespace) the command would share root's user
    // keyring with the host, read its keys and leave keys behind.
    {"add_key", SYS_add_key},
    {"request_key", SYS_request_key},
    {"keyctl", SYS_keyctl},
};
static_assert(sizeof(void*) == 8, "the syscall numbers above are x86_64's");

void add(const Ctx& ctx, std::uint32_t action, const Named& call,
         std::initializer_list<scmp_arg_cmp> cmps = {}) {
    int rc = seccomp_rule_add_exact_array(ctx.get(), action, call.nr,
                                          static_cast<unsigned>(cmps.size()), cmps.begin());
    if (rc < 0) fail(fmt::format("cannot add the rule for {}", call.name), -rc);
}

// AF_UNIX sockets of any type but STREAM and SEQPACKET (DGRAM, and RAW, which
// the kernel turns into DGRAM) are refused, for socket() and socketpair().
void deny_unix_datagrams(const Ctx& ctx, const Named& call) {
    for (std::uint64_t type = 0; type <= kSockTypeMask; ++type) {
        if (type == SOCK_STREAM || type == SOCK_SEQPACKET) continue;
        add(ctx, kDeny, call,
            {SCMP_A0(SCMP_CMP_EQ, AF_UNIX), SCMP_A1(SCMP_CMP_MASKED_EQ, kSockTypeMask, type)});
    }
}

Ctx build(sbx::Network network) {
    Ctx ctx(seccomp_init(SCMP_ACT_ALLOW));
    if (!ctx) fail("seccomp_init failed", ENOMEM);
    // Only the native ABI is in the filter: a syscall through i386 (int 0x80)
    // or x32 (numbers with bit 30 set, same audit arch) gets the bad-arch
    // action.  libseccomp adds the x32 check to every x86_64 filter.
    int rc = seccomp_attr_set(ctx.get(), SCMP_FLTATR_ACT_BADARCH, SCMP_ACT_KILL_PROCESS);
    if (rc < 0) fail("cannot set the action for other ABIs", -rc);

    for (const Named& call : kAlwaysDenied) add(ctx, kDeny, call);

    const Named ioctl_call{"ioctl", SYS_ioctl};
    // The kernel compares the request as an unsigned int: mask the upper half
    // or TIOCSTI|1<<32 gets through.
    add(ctx, kDeny, ioctl_call, {SCMP_A1(SCMP_CMP_MASKED_EQ, kLow32, TIOCSTI)});
    add(ctx, kDeny, ioctl_call, {SCMP_A1(SCMP_CMP_MASKED_EQ, kLow32, TIOCLINUX)});

    const Named socket_call{"socket", SYS_socket};
    const Named socketpair_call{"socketpair", SYS_socketpair};
    // The family is an int in the kernel, so compare its low 32 bits.
    add(ctx, kDeny, socket_call, {SCMP_A0(SCMP_CMP_MASKED_EQ, kLow32, AF_VSOCK)});

    switch (network) {
    case sbx::Network::Full:
        break;
    case sbx::Network::Restricted:
        add(ctx, kDeny, socket_call);
        for (Named call : {Named{"connect", SYS_connect}, Named{"bind", SYS_bind},
                           Named{"listen", SYS_listen}, Named{"accept", SYS_accept},
                           Named{"accept4", SYS_accept4}})
            add(ctx, kDeny, call);
        // Only AF_UNIX pairs (a 64-bit compare: garbage in the upper half is refused too).
        add(ctx, kDeny, socketpair_call, {SCMP_A0(SCMP_CMP_NE, AF_UNIX)});
        deny_unix_datagrams(ctx, socketpair_call);
        // An address on a send: stream pairs ignore it anyway.
        add(ctx, kDeny, Named{"sendto", SYS_sendto}, {SCMP_A5(SCMP_CMP_NE, 0)});
        break;
    case sbx::Network::Limited:
        // Families: AF_UNIX (1), AF_INET (2), AF_INET6 (10); everything else,
        // netlink and packet included, is refused.  Values with bits above
        // 31 are refused by the >= rule.
        add(ctx, kDeny, socket_call, {SCMP_A0(SCMP_CMP_GE, AF_INET6 + 1)});
        for (std::uint64_t family = 0; family < AF_INET6; ++family) {
            if (family == AF_UNIX || family == AF_INET) continue;
            add(ctx, kDeny, socket_call, {SCMP_A0(SCMP_CMP_EQ, family)});
        }
        deny_unix_datagrams(ctx, socket_call);
        add(ctx, kDeny, socketpair_call, {SCMP_A0(SCMP_CMP_NE, AF_UNIX)});
        deny_unix_datagrams(ctx, socketpair_call);
        // Every connect goes to the mediator, which performs it itself on a
        // duplicate of the socket (network.cc).
        add(ctx, SCMP_ACT_NOTIFY, Named{"connect", SYS_connect});
        break;
    }
    return ctx;
}

}  // namespace

std::vector<sock_filter> seccomp_program(sbx::Network network) {
    Ctx ctx = build(network);
    // Exported through a pipe: about 80 us cheaper per launch than a memfd
    // (no shmem file, no page to allocate).  The write end is non-blocking,
    // so a filter larger than the pipe cannot block the export; such a write
    // stops with the pipe full (libseccomp does not check for a short
    // write), so a filter that fills the pipe is refused as possibly cut.
    // Ours are well under a page; the kernel takes at most BPF_MAXINSNS.
    int ends[2];
    if (pipe2(ends, O_CLOEXEC) != 0) fail("pipe for the exported filter", errno);
    Fd read_end(ends[0]), write_end(ends[1]);
    if (fcntl(write_end.get(), F_SETFL, O_NONBLOCK) != 0) fail("pipe for the exported filter", errno);
    const int pipe_size = fcntl(write_end.get(), F_GETPIPE_SZ);
    if (pipe_size <= 0) fail("pipe for the exported filter", errno);
    int rc = seccomp_export_bpf(ctx.get(), write_end.get());
    if (rc < 0) fail("cannot export the filter", -rc);
    write_end.reset();
    constexpr std::size_t kMaxBytes = 4096 * sizeof(sock_filter);  // BPF_MAXINSNS
    std::string bytes;
    char chunk[4096];
    for (;;) {
        const ssize_t n = read(read_end.get(), chunk, sizeof chunk);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) fail("reading back the exported filter", errno);
        if (n == 0) break;
        bytes.append(chunk, static_cast<std::size_t>(n));
        if (bytes.size() > kMaxBytes) break;
    }
    if (bytes.size() >= static_cast<std::size_t>(pipe_size) || bytes.size() > kMaxBytes)
        throw sbx::Error("seccomp: the exported filter is too large");
    if (bytes.empty() || bytes.size() % sizeof(sock_filter) != 0)
        throw sbx::Error("seccomp: the exported filter has an unexpected size");
    std::vector<sock_filter> program(bytes.size() / sizeof(sock_filter));
    std::memcpy(program.data(), bytes.data(), bytes.size());
    return program;
}

Fd install_seccomp(const sbx::CanonicalPolicy& policy) {
    std::vector<sock_filter> program = seccomp_program(policy.network);
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) fail("cannot set no_new_privs", errno);
    sock_fprog prog{};
    prog.len = static_cast<unsigned short>(program.size());
    prog.filter = program.data();
    if (policy.network != sbx::Network::Limited) {
        if (syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog) != 0)
            fail("cannot load the filter (the kernel needs CONFIG_SECCOMP_FILTER)", errno);
        return Fd();
    }
    // Without SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV on purpose: a signal
    // still interrupts a connect that waits for its peer, as it would
    // unsandboxed (the mediator's answer then finds the caller gone).
    long fd = syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_NEW_LISTENER, &prog);
    if (fd < 0)
        fail("cannot load the filter with a notification listener (Linux 5.0 or later; or use --network "
             "restricted)", errno);
    return Fd(static_cast<int>(fd));
}

}  // namespace sbx::helper
