// seccomp-gen: builds the helper's seccomp filters with libseccomp, at build
// time, and writes them as a C++ header of BPF programs (one per network
// level) to the file named by its one argument.
//
// The rules are fixed per network level, so the helper loads these programs
// as they are instead of running libseccomp's compiler on every launch (about
// 100 us).  The generator is built for the helper's own architecture (x86_64,
// or aarch64 in a cross build, where meson runs it under qemu-user: the cross
// file's exe_wrapper), because libseccomp builds a filter for its native
// architecture only from that architecture's syscall numbers: a name is
// looked up in libseccomp's table of the architecture, so a syscall it does
// not have (aarch64 has no open, mkdir or rename) gets no rule.  The API
// level is set explicitly so that the output does not depend on the seccomp
// support of the machine that builds it.
#include <fcntl.h>
#include <linux/filter.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <initializer_list>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <seccomp.h>

#include "seccomp_rules.h"
#include "step_error.h"

#ifndef AF_VSOCK
#define AF_VSOCK 40
#endif

namespace {

using sbx::helper::kAlwaysDenied;
using sbx::helper::kDeniedIoctls;
using sbx::helper::Named;

// The helper's own error form: "seccomp-gen: <what>: <strerror>".
[[noreturn]] void fail(std::string_view what, int err) { sbx::helper::fail_errno("seccomp-gen", what, {}, err); }

struct CtxRelease {
    void operator()(void* ctx) const { seccomp_release(ctx); }
};
using Ctx = std::unique_ptr<void, CtxRelease>;

constexpr std::uint32_t kDeny = SCMP_ACT_ERRNO(EPERM);
constexpr std::uint64_t kLow32 = 0xffffffffULL;
constexpr std::uint64_t kSockTypeMask = 0xf;  // SOCK_TYPE_MASK in the kernel

// Syscalls added since Linux 5.1 have one number on every architecture
// (the unified table starts at 424, pidfd_send_signal): a name libseccomp
// does not know yet is taken by that number.
constexpr int kFirstUnifiedNumber = 424;

// call's number on this architecture; -1 where the architecture has no such
// syscall (nothing to rule).  A number the source gives must agree with
// libseccomp's table (a misspelt name would not).
int number_of(const Named& call) {
    const int nr = seccomp_syscall_resolve_name(call.name);
    if (nr == __NR_SCMP_ERROR) {
        if (call.nr >= kFirstUnifiedNumber) return call.nr;
        throw std::runtime_error(std::string("seccomp-gen: libseccomp does not know the syscall ") + call.name);
    }
    if (nr < 0) return -1;  // libseccomp's pseudo-number: not a syscall of this architecture
    if (call.nr >= 0 && nr != call.nr)
        throw std::runtime_error(std::string("seccomp-gen: ") + call.name + " is " + std::to_string(nr) + ", not " +
                                 std::to_string(call.nr));
    return nr;
}

void add(const Ctx& ctx, std::uint32_t action, const Named& call, std::initializer_list<scmp_arg_cmp> cmps = {}) {
    const int nr = number_of(call);
    if (nr < 0) return;
    int rc = seccomp_rule_add_exact_array(ctx.get(), action, nr, static_cast<unsigned>(cmps.size()), cmps.begin());
    if (rc < 0) fail(std::string("cannot add the rule for ") + call.name, -rc);
}

// No file may leave the sandbox with the setuid or setgid bit (SPEC section
// 5): every call that sets a file's mode is refused when the mode has
// S_ISUID or S_ISGID.  Only those bits are compared, so the upper half of
// the argument (the kernel takes an unsigned int or umode_t) does not
// matter.  The siblings need no rule: chown cannot set either bit (on a
// file it clears S_ISUID, and S_ISGID with group execute), mkdir keeps only
// the permission and sticky bits (a set-group-ID directory is inherited
// from its parent), a hard link cannot cross from another mount into a
// writable root, a file capability (security.capability) needs CAP_SETFCAP,
// which the command does not have, and io_uring's open is refused with
// io_uring itself.
constexpr std::uint64_t kSetidBits[] = {S_ISUID, S_ISGID};
// The kernel's __O_TMPFILE bit alone: the C library's O_TMPFILE (and its
// __O_TMPFILE) include O_DIRECTORY.
constexpr std::uint64_t kTmpfileBit = 020000000;
static_assert((O_TMPFILE & kTmpfileBit) == kTmpfileBit && (O_TMPFILE & ~kTmpfileBit) == O_DIRECTORY);

// notified: the recorded filters, where these calls (all but fchmod) go to
// the recorder, which refuses a setuid/setgid mode from the same registers
// (libseccomp cannot put an EPERM and a NOTIFY rule on one argument test).
void deny_setid_modes(const Ctx& ctx, bool notified) {
    // Calls whose mode is always used: the argument index of the mode.
    const std::pair<Named, unsigned> always[] = {
        {{"chmod"}, 1}, {{"fchmod"}, 1}, {{"fchmodat"}, 2}, {{"fchmodat2", 452}, 2},
        {{"creat"}, 1}, {{"mknod"}, 1},  {{"mknodat"}, 2},
    };
    for (const auto& [call, mode] : always)
        if (!notified || std::string_view(call.name) == "fchmod")
            for (std::uint64_t bit : kSetidBits) add(ctx, kDeny, call, {SCMP_CMP(mode, SCMP_CMP_MASKED_EQ, bit, bit)});
    if (notified) return;
    // open and openat use the mode only when they create a file: with
    // O_CREAT, or O_TMPFILE (which linkat can then give a name).  Without
    // them the mode is whatever was in the register, so it is not looked at.
    const std::pair<Named, unsigned> creating[] = {{{"open"}, 1}, {{"openat"}, 2}};
    for (const auto& [call, flags] : creating)
        for (std::uint64_t create : {std::uint64_t{O_CREAT}, kTmpfileBit})
            for (std::uint64_t bit : kSetidBits)
                add(ctx, kDeny, call,
                    {SCMP_CMP(flags, SCMP_CMP_MASKED_EQ, create, create),
                     SCMP_CMP(flags + 1, SCMP_CMP_MASKED_EQ, bit, bit)});
}

// AF_UNIX sockets of any type but STREAM and SEQPACKET (DGRAM, and RAW, which
// the kernel turns into DGRAM) are refused, for socket() and socketpair().
void deny_unix_datagrams(const Ctx& ctx, const Named& call) {
    for (std::uint64_t type = 0; type <= kSockTypeMask; ++type) {
        if (type == SOCK_STREAM || type == SOCK_SEQPACKET) continue;
        add(ctx, kDeny, call, {SCMP_A0(SCMP_CMP_EQ, AF_UNIX), SCMP_A1(SCMP_CMP_MASKED_EQ, kSockTypeMask, type)});
    }
}

// The recorder's notifications (recorder.h): the write-class file syscalls,
// and open/openat only when their flags ask to write, create, truncate or
// make a temporary file, so that reads never leave the kernel.  The recorder
// refuses a setuid/setgid mode of these (deny_setid_modes).
// reads (sbx learn --reads): every open and openat, whatever its flags.
void notify_file_writes(const Ctx& ctx, bool reads) {
    constexpr std::uint64_t kWriteFlags[] = {O_WRONLY, O_RDWR, O_CREAT, O_TRUNC, kTmpfileBit};
    for (const auto& [call, flags] : {std::pair{Named{"open"}, 1U}, std::pair{Named{"openat"}, 2U}}) {
        if (reads) {
            add(ctx, SCMP_ACT_NOTIFY, call);
            continue;
        }
        for (std::uint64_t bit : kWriteFlags)
            add(ctx, SCMP_ACT_NOTIFY, call, {SCMP_CMP(flags, SCMP_CMP_MASKED_EQ, bit, bit)});
    }
    const Named always[] = {
        {"creat"},     {"mkdir"},  {"mkdirat"},  {"mknod"},          {"mknodat"}, {"unlink"}, {"unlinkat"},
        {"rmdir"},     {"rename"}, {"renameat"}, {"renameat2"},      {"link"},    {"linkat"}, {"symlink"},
        {"symlinkat"}, {"chmod"},  {"fchmodat"}, {"fchmodat2", 452}, {"chown"},   {"lchown"}, {"fchownat"},
        {"truncate"},  {"utime"},  {"utimes"},   {"futimesat"},
    };
    for (const Named& call : always) add(ctx, SCMP_ACT_NOTIFY, call);
    // Exec too: pid 1 starts the command without CLONE_VFORK when it records
    // (process.cc), so that it is free to answer the command's own execve.
    add(ctx, SCMP_ACT_NOTIFY, Named{"execve"});
    add(ctx, SCMP_ACT_NOTIFY, Named{"execveat"});
    // utimensat(fd, NULL, ...) is futimens: no path.
    add(ctx, SCMP_ACT_NOTIFY, Named{"utimensat"}, {SCMP_A1(SCMP_CMP_NE, 0)});
}

enum class Network { Restricted, Limited, Full };

// One filter variant.  record: the recorder's filter (recorder.h), the
// write-class file calls notified.  watch_network (restricted):
// socket(AF_INET, AF_INET6), connect and sendto with an address notify pid
// 1, which makes an inet socket in an empty network namespace of its own and
// installs it in the caller, records the destination of a connect or sendto
// and refuses it (recorder.h).  transparent (limited): getpeername notifies
// pid 1 too, which answers for the sockets it connected through the proxy
// (transparent.h).  own_terminals: the variant for a command that reaches no
// terminal but its own ptys (seccomp.h), where TIOCSWINSZ is allowed.
// reads (with record; sbx learn --reads): every open and openat notifies,
// reads too.
struct Variant {
    Network network = Network::Full;
    bool record = false;
    bool reads = false;
    bool watch_network = false;
    bool transparent = false;
    bool own_terminals = false;
};

const Named kSocket{"socket"};
const Named kSocketpair{"socketpair"};

// An empty filter that allows everything, for the native ABI only, laid out
// as a binary tree.
Ctx new_filter() {
    Ctx ctx(seccomp_init(SCMP_ACT_ALLOW));
    if (!ctx) fail("seccomp_init failed", ENOMEM);
    // Only the native ABI is in the filter: a syscall through i386 (int 0x80)
    // or x32 (numbers with bit 30 set, same audit arch) on x86_64, or through
    // AArch32 on aarch64, gets the bad-arch action.  libseccomp adds the x32
    // check to every x86_64 filter.
    int rc = seccomp_attr_set(ctx.get(), SCMP_FLTATR_ACT_BADARCH, SCMP_ACT_KILL_PROCESS);
    if (rc < 0) fail("cannot set the action for other ABIs", -rc);
    // A binary tree over the syscall numbers instead of a linear list: a few
    // more instructions, but each syscall is decided in a handful of jumps.
    // The kernel evaluates the filter for every syscall number when it loads
    // it (to cache the always-allowed ones), so this also makes loading about
    // a third faster (about 45 us instead of 70 here).
    rc = seccomp_attr_set(ctx.get(), SCMP_FLTATR_CTL_OPTIMIZE, 2);
    if (rc < 0) fail("cannot ask for a binary-tree filter", -rc);
    return ctx;
}

// What every variant refuses: the fixed list, the terminal ioctls, setuid
// and setgid modes, openat2, vsock.  refused: the action of the fixed
// refusals.
void deny_fixed(const Ctx& ctx, const Variant& v, std::uint32_t refused) {
    for (const Named& call : kAlwaysDenied) add(ctx, refused, call);
    const Named ioctl_call{"ioctl"};
    // The kernel compares the request as an unsigned int: mask the upper half
    // or TIOCSTI|1<<32 gets through.
    for (const auto& ioctl : kDeniedIoctls)
        if (!v.own_terminals || ioctl.request != TIOCSWINSZ)
            add(ctx, refused, ioctl_call, {SCMP_A1(SCMP_CMP_MASKED_EQ, kLow32, ioctl.request)});
    deny_setid_modes(ctx, v.record);
    // openat2 carries its flags and mode in a struct open_how that BPF cannot
    // read, so a setuid mode there could not be seen: it fails with ENOSYS,
    // as on kernels before 5.6, and callers fall back to openat, whose mode
    // the rules above check.  (The helper's own openat2 calls come before
    // the filter, or in pid 1, which is not under it.)
    add(ctx, SCMP_ACT_ERRNO(ENOSYS), Named{"openat2", 437});
    // The family is an int in the kernel, so compare its low 32 bits.
    add(ctx, kDeny, kSocket, {SCMP_A0(SCMP_CMP_MASKED_EQ, kLow32, AF_VSOCK)});
}

// Network restricted: no inet socket (or, watched, each one to pid 1), no
// server, only AF_UNIX pairs.
void restrict_network(const Ctx& ctx, const Variant& v, std::uint32_t refused) {
    if (v.watch_network) {
        // AF_INET and AF_INET6 to pid 1 (exactly: a 64-bit compare);
        // every other family refused.
        add(ctx, SCMP_ACT_NOTIFY, kSocket, {SCMP_A0(SCMP_CMP_EQ, AF_INET)});
        add(ctx, SCMP_ACT_NOTIFY, kSocket, {SCMP_A0(SCMP_CMP_EQ, AF_INET6)});
        add(ctx, kDeny, kSocket, {SCMP_A0(SCMP_CMP_GE, AF_INET6 + 1)});
        for (std::uint64_t family = 0; family < AF_INET6; ++family)
            if (family != AF_INET) add(ctx, kDeny, kSocket, {SCMP_A0(SCMP_CMP_EQ, family)});
        add(ctx, SCMP_ACT_NOTIFY, Named{"connect"});
    } else {
        add(ctx, kDeny, kSocket);
        add(ctx, kDeny, Named{"connect"});
    }
    for (Named call : {Named{"bind"}, Named{"listen"}, Named{"accept"}, Named{"accept4"}}) add(ctx, refused, call);
    // Only AF_UNIX pairs (a 64-bit compare: garbage in the upper half is refused too).
    add(ctx, kDeny, kSocketpair, {SCMP_A0(SCMP_CMP_NE, AF_UNIX)});
    deny_unix_datagrams(ctx, kSocketpair);
    // An address on a send: stream pairs ignore it anyway.
    add(ctx, v.watch_network ? SCMP_ACT_NOTIFY : kDeny, Named{"sendto"}, {SCMP_A5(SCMP_CMP_NE, 0)});
}

// Network limited: AF_UNIX (1), AF_INET (2), AF_INET6 (10); everything else,
// netlink and packet included, is refused.  Values with bits above 31 are
// refused by the >= rule.
void limit_network(const Ctx& ctx, const Variant& v) {
    add(ctx, kDeny, kSocket, {SCMP_A0(SCMP_CMP_GE, AF_INET6 + 1)});
    for (std::uint64_t family = 0; family < AF_INET6; ++family) {
        if (family == AF_UNIX || family == AF_INET) continue;
        add(ctx, kDeny, kSocket, {SCMP_A0(SCMP_CMP_EQ, family)});
    }
    deny_unix_datagrams(ctx, kSocket);
    add(ctx, kDeny, kSocketpair, {SCMP_A0(SCMP_CMP_NE, AF_UNIX)});
    deny_unix_datagrams(ctx, kSocketpair);
    // Every connect goes to the mediator, which performs it itself on a
    // duplicate of the socket (network.cc).
    add(ctx, SCMP_ACT_NOTIFY, Named{"connect"});
    if (v.transparent) add(ctx, SCMP_ACT_NOTIFY, Named{"getpeername"});
}

Ctx build(const Variant& v) {
    Ctx ctx = new_filter();
    // The fixed refusals: with the recorder, pid 1 is told of each and
    // answers EPERM itself (recorder.h), so that it can be named; should pid 1
    // be gone, the call fails with ENOSYS instead: refused all the same.
    const std::uint32_t refused = v.record ? SCMP_ACT_NOTIFY : kDeny;
    deny_fixed(ctx, v, refused);
    switch (v.network) {
        case Network::Full: break;
        case Network::Restricted: restrict_network(ctx, v, refused); break;
        case Network::Limited: limit_network(ctx, v); break;
    }
    if (v.record) notify_file_writes(ctx, v.reads);
    return ctx;
}

// The program, exported through a pipe (libseccomp writes it to an fd).
std::vector<sock_filter> program(const Variant& v) {
    Ctx ctx = build(v);
    int ends[2];
    if (::pipe(ends) != 0) fail("pipe", errno);
    int rc = seccomp_export_bpf(ctx.get(), ends[1]);
    ::close(ends[1]);
    if (rc < 0) fail("cannot export the filter", -rc);
    std::string bytes;
    char chunk[4096];
    ssize_t n;
    while ((n = ::read(ends[0], chunk, sizeof chunk)) > 0) bytes.append(chunk, static_cast<std::size_t>(n));
    ::close(ends[0]);
    if (n < 0) fail("reading back the exported filter", errno);
    if (bytes.empty() || bytes.size() % sizeof(sock_filter) != 0 || bytes.size() > 4096 * sizeof(sock_filter))
        throw std::runtime_error("seccomp-gen: the exported filter has an unexpected size");
    std::vector<sock_filter> result(bytes.size() / sizeof(sock_filter));
    std::memcpy(result.data(), bytes.data(), bytes.size());
    return result;
}

void print(std::FILE* out, const char* name, const std::vector<sock_filter>& prog) {
    std::fprintf(out, "inline constexpr sock_filter %s[] = {\n", name);
    for (const sock_filter& f : prog) std::fprintf(out, "    {0x%02x, %u, %u, 0x%08x},\n", f.code, f.jt, f.jf, f.k);
    std::fprintf(out, "};\n");
}

}  // namespace

int main(int argc, char** argv) {
    if (argc != 2) {
        std::fprintf(stderr, "usage: seccomp-gen OUTPUT.h\n");
        return 2;
    }
    try {
        // Level 5 knows every action used here (KILL_PROCESS, NOTIFY) without
        // asking the running kernel.
        if (int rc = seccomp_api_set(5); rc < 0) fail("seccomp_api_set(5)", -rc);
        struct NamedVariant {
            const char* name;
            Variant variant;
        };
        constexpr Network kR = Network::Restricted, kL = Network::Limited, kF = Network::Full;
        const NamedVariant kVariants[] = {
            {"kRestricted", {.network = kR}},
            {"kLimited", {.network = kL}},
            {"kFull", {.network = kF}},
            {"kRestrictedWatched", {.network = kR, .watch_network = true}},
            {"kRestrictedRecorded", {.network = kR, .record = true, .watch_network = true}},
            {"kLimitedRecorded", {.network = kL, .record = true}},
            {"kLimitedTransparent", {.network = kL, .transparent = true}},
            {"kLimitedTransparentRecorded", {.network = kL, .record = true, .transparent = true}},
            {"kFullRecorded", {.network = kF, .record = true}},
            // A learning run's with --reads (the recorded ones, and every open).
            {"kRestrictedRecordedReads", {.network = kR, .record = true, .reads = true, .watch_network = true}},
            {"kLimitedRecordedReads", {.network = kL, .record = true, .reads = true}},
            {"kLimitedTransparentRecordedReads", {.network = kL, .record = true, .reads = true, .transparent = true}},
            {"kFullRecordedReads", {.network = kF, .record = true, .reads = true}},
        };
        // Each variant twice: as it is, and for own terminals (kName and kNameOwnTerminals).
        std::vector<std::pair<std::string, std::vector<sock_filter>>> programs;
        for (const auto& [name, variant] : kVariants)
            for (bool own : {false, true}) {
                Variant v = variant;
                v.own_terminals = own;
                programs.emplace_back(std::string(name) + (own ? "OwnTerminals" : ""), program(v));
            }
        const std::string tmp = std::string(argv[1]) + ".tmp";
        std::FILE* out = std::fopen(tmp.c_str(), "w");
        if (out == nullptr) fail("cannot write " + tmp, errno);
        std::fprintf(out,
                     "// Generated by seccomp-gen (linux-helper/seccomp_gen.cc) with libseccomp; do not edit.\n"
                     "#pragma once\n#include <linux/filter.h>\n\nnamespace sbx::helper::filters {\n\n");
        for (const auto& [name, prog] : programs) print(out, name.c_str(), prog);
        std::fprintf(out, "\n}  // namespace sbx::helper::filters\n");
        if (std::fclose(out) != 0) fail("cannot write " + tmp, errno);
        if (std::rename(tmp.c_str(), argv[1]) != 0) fail("cannot rename " + tmp, errno);
    } catch (const std::exception& e) {
        std::fprintf(stderr, "%s\n", e.what());
        return 1;
    }
    return 0;
}
