// The seccomp filter, loaded for real in a forked child, and the pure address
// parsing of the network layer.  The mediator itself is tested end to end in
// tests/integration/enforcement-net.sh.
#include <catch2/catch.hpp>

#include <fcntl.h>
#include <linux/openat2.h>
#include <sched.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <functional>
#include <string>

#include "network.h"
#include "seccomp.h"

namespace {

using sbx::Network;

// Runs probe in a child under the filter for network; returns the child's
// wait status.  The probe returns 0 on success or the errno it saw.
int under_filter(Network network, const std::function<int()>& probe, bool private_mounts = false,
                 sbx::helper::Terminals terminals = sbx::helper::Terminals::Host) {
    pid_t pid = ::fork();
    if (pid == 0) {
        if (private_mounts) {
            if (::unshare(CLONE_NEWNS) != 0) ::_exit(200);
            if (::mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0) ::_exit(201);
        }
        try {
            sbx::CanonicalPolicy policy;
            policy.network = network;
            if (::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) ::_exit(202);
            sbx::Fd listener = sbx::helper::install_seccomp(policy, sbx::helper::Watch::None, false, terminals);
            ::_exit(probe());
        } catch (...) {
            ::_exit(202);
        }
    }
    int status = 0;
    ::waitpid(pid, &status, 0);
    return status;
}

int errno_of(Network network, const std::function<long()>& call, bool private_mounts = false,
             sbx::helper::Terminals terminals = sbx::helper::Terminals::Host) {
    int status = under_filter(
        network, [&] { return call() < 0 ? errno : 0; }, private_mounts, terminals);
    REQUIRE(WIFEXITED(status));
    return WEXITSTATUS(status);
}

int close_ok(int fd) {
    if (fd < 0) return -1;
    ::close(fd);
    return 0;
}

const Network kAll[] = {Network::Restricted, Network::Limited, Network::Full};

mode_t current_umask() {
    mode_t mask = ::umask(022);
    ::umask(mask);
    return mask;
}

}  // namespace

// A tmpfs on /mnt, in the child's private mount namespace (errno_of's
// private_mounts).
long mount_tmpfs() { return static_cast<long>(::mount("none", "/mnt", "tmpfs", 0, nullptr)); }

// What mount_tmpfs does without a filter, in a private mount namespace: 0
// where it mounts (root with CAP_SYS_ADMIN), else its errno (another user;
// root in a container without CAP_SYS_ADMIN: unshare fails, 200).
int unfiltered_mount() {
    pid_t pid = ::fork();
    if (pid == 0) {
        if (::unshare(CLONE_NEWNS) != 0) ::_exit(200);
        if (::mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0) ::_exit(201);
        ::_exit(mount_tmpfs() == 0 ? 0 : errno);
    }
    int status = 0;
    ::waitpid(pid, &status, 0);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 255;
}

TEST_CASE("seccomp: cross-process, io_uring and mount calls fail with EPERM in every mode") {
    // Where mount(2) works unfiltered, the filter must make it EPERM; where it
    // fails anyway, EPERM would prove nothing: SKIP, with the errno.
    const int unfiltered = unfiltered_mount();
    const bool mount_works = unfiltered == 0;
    for (Network n : kAll) {
        CAPTURE(sbx::to_string(n));
        pid_t parent = ::getpid();
        CHECK(errno_of(n, [&] { return ::ptrace(PTRACE_PEEKDATA, parent, nullptr, nullptr); }) == EPERM);
        CHECK(errno_of(n, [&] {
                  char buf[8];
                  iovec local{buf, sizeof buf}, remote{buf, sizeof buf};
                  return ::process_vm_readv(parent, &local, 1, &remote, 1, 0);
              }) == EPERM);
        CHECK(errno_of(n, [] {
                  char params[120] = {};
                  return ::syscall(425 /* io_uring_setup */, 1, params);
              }) == EPERM);
        CHECK(errno_of(n, [] { return ::syscall(438 /* pidfd_getfd */, 0, 0, 0); }) == EPERM);
        CHECK(errno_of(n, [] { return ::syscall(430 /* fsopen */, "tmpfs", 0); }) == EPERM);
        if (mount_works) {
            CHECK(errno_of(n, mount_tmpfs, true) == EPERM);
        }
    }
    if (!mount_works)
        std::printf(
            "SKIP mount(2) fails with EPERM under the filter: it fails here without a filter too (%s); "
            "fsopen was checked\n",
            unfiltered == 200   ? "unshare(CLONE_NEWNS): no CAP_SYS_ADMIN"
            : unfiltered == 201 ? "making the mounts private failed"
                                : std::strerror(unfiltered));
}

TEST_CASE("seccomp: TIOCSTI and TIOCLINUX fail with EPERM, also with bits above 32") {
    // Unfiltered, both give ENOTTY on /dev/null.
    for (Network n : kAll) {
        CAPTURE(sbx::to_string(n));
        for (unsigned long high : {0UL, 1UL << 32, 0xdeadbeefUL << 32}) {
            CAPTURE(high);
            CHECK(errno_of(n, [&] {
                      int fd = ::open("/dev/null", O_RDONLY);
                      char c = 'x';
                      return ::syscall(SYS_ioctl, fd, TIOCSTI | high, &c);
                  }) == EPERM);
            CHECK(errno_of(n, [&] {
                      int fd = ::open("/dev/null", O_RDONLY);
                      char c = 0;
                      return ::syscall(SYS_ioctl, fd, TIOCLINUX | high, &c);
                  }) == EPERM);
        }
        // Other ioctls are untouched.
        CHECK(errno_of(n, [] {
                  int fd = ::open("/dev/null", O_RDONLY);
                  int v = 0;
                  return static_cast<long>(::ioctl(fd, FIONREAD, &v));
              }) != EPERM);
    }
}

TEST_CASE("seccomp: terminal ioctls that reach others or outlive the run fail with EPERM") {
    // (TIOCSCTTY is allowed, and TIOCSWINSZ in the variant for own terminals: below.)
    // Unfiltered, each gives ENOTTY on /dev/null (checked here).
    const unsigned long denied[] = {TIOCSETD,    TIOCSWINSZ, TIOCEXCL,       TIOCNXCL,   TIOCCONS,
                                    TIOCVHANGUP, TCXONC,     TIOCSLCKTRMIOS, TIOCSSERIAL};
    for (unsigned long request : denied) {
        CAPTURE(request);
        int fd = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
        REQUIRE(fd >= 0);
        int arg = 0;
        CHECK((::ioctl(fd, request, &arg) == -1 && errno == ENOTTY));
        ::close(fd);
    }
    for (Network n : kAll) {
        CAPTURE(sbx::to_string(n));
        for (unsigned long request : denied) {
            for (unsigned long high : {0UL, 1UL << 32}) {
                CAPTURE(request, high);
                CHECK(errno_of(n, [&] {
                          int fd = ::open("/dev/null", O_RDONLY);
                          int arg = 0;
                          return ::syscall(SYS_ioctl, fd, request | high, &arg);
                      }) == EPERM);
            }
        }
        // TIOCSCTTY reaches the tty layer (the kernel keeps another
        // session's terminal; seccomp_rules.h); so does TIOCSWINSZ, but only
        // in the variant for a command that reaches no terminal of the host's.
        CHECK(errno_of(n, [] {
                  int fd = ::open("/dev/null", O_RDONLY);
                  return static_cast<long>(::ioctl(fd, TIOCSCTTY, 1));
              }) == ENOTTY);
        for (unsigned long high : {0UL, 1UL << 32}) {
            CAPTURE(high);
            auto winsz = [high] {
                int fd = ::open("/dev/null", O_RDONLY);
                winsize ws{};
                return ::syscall(SYS_ioctl, fd, TIOCSWINSZ | high, &ws);
            };
            CHECK(errno_of(n, winsz, false, sbx::helper::Terminals::Own) == ENOTTY);
            CHECK(errno_of(n, winsz, false, sbx::helper::Terminals::Host) == EPERM);
        }
        const std::pair<unsigned long, const char*> still[] = {{TIOCSTI, "TIOCSTI"}, {TIOCSETD, "TIOCSETD"}};
        for (const auto& [request, name] : still) {
            CAPTURE(name);
            CHECK(errno_of(
                      n,
                      [request] {
                          int fd = ::open("/dev/null", O_RDONLY);
                          int arg = 0;
                          return static_cast<long>(::ioctl(fd, request, &arg));
                      },
                      false, sbx::helper::Terminals::Own) == EPERM);
        }
        // termios, the window size read and TIOCSPGRP's sibling TIOCGPGRP
        // stay allowed, on a pseudo-terminal of the command's own.
        CHECK(errno_of(n, [] {
                  int master = ::posix_openpt(O_RDWR | O_NOCTTY);
                  if (master < 0 || ::grantpt(master) != 0 || ::unlockpt(master) != 0) return -1L;
                  int slave = ::open(::ptsname(master), O_RDWR | O_NOCTTY);
                  termios t{};
                  winsize ws{};
                  if (slave < 0 || ::tcgetattr(slave, &t) != 0) return -1L;
                  t.c_lflag &= ~static_cast<tcflag_t>(ECHO);
                  if (::tcsetattr(slave, TCSANOW, &t) != 0) return -1L;
                  return static_cast<long>(::ioctl(slave, TIOCGWINSZ, &ws));
              }) == 0);
    }
}

namespace {

// A fresh directory for files made under the filter, removed at the end.
struct ScratchDir {
    std::string path;
    ScratchDir() {
        char tmpl[] = "/tmp/sbx-test-seccomp.XXXXXX";
        REQUIRE(::mkdtemp(tmpl) != nullptr);
        path = tmpl;
    }
    ~ScratchDir() {
        std::error_code ec;
        std::filesystem::remove_all(path, ec);
    }
    ScratchDir(const ScratchDir&) = delete;
    ScratchDir& operator=(const ScratchDir&) = delete;
};

// The mode bits of PATH, or -1 when it does not exist.
long mode_of(const std::string& path) {
    struct stat st {};
    if (::lstat(path.c_str(), &st) != 0) return -1;
    return static_cast<long>(st.st_mode & 07777);
}

}  // namespace

TEST_CASE("seccomp: no call can set S_ISUID or S_ISGID on a file, in every mode") {
    ScratchDir dir;
    const std::string file = dir.path + "/f";
    const std::string made = dir.path + "/new";
    const int fd = ::open(file.c_str(), O_CREAT | O_WRONLY | O_CLOEXEC, 0644);
    REQUIRE(fd >= 0);
    ::close(fd);
    const char* f = file.c_str();
    const char* m = made.c_str();
    // Control: unfiltered, the calls set the bits.
    REQUIRE(::chmod(f, 06755) == 0);
    CHECK(mode_of(file) == 06755);
    REQUIRE(::chmod(f, 0644) == 0);

    for (Network n : kAll) {
        CAPTURE(sbx::to_string(n));
        // With the upper half set too: the kernel truncates the mode.
        for (unsigned long mode : {04755UL, 02755UL, 06000UL, 04000UL | (1UL << 32), 02644UL | (7UL << 40)}) {
            CAPTURE(mode);
#if defined(__x86_64__)  // calls aarch64 has only in their *at form
            CHECK(errno_of(n, [&] { return ::syscall(SYS_chmod, f, mode); }) == EPERM);
#endif
            CHECK(errno_of(n, [&] {
                      int fd2 = ::open(f, O_RDONLY);
                      return ::syscall(SYS_fchmod, fd2, mode);
                  }) == EPERM);
            CHECK(errno_of(n, [&] { return ::syscall(SYS_fchmodat, AT_FDCWD, f, mode); }) == EPERM);
            CHECK(errno_of(n, [&] { return ::syscall(452 /* fchmodat2 */, AT_FDCWD, f, mode, 0); }) == EPERM);
            CHECK(mode_of(file) == 0644);
#if defined(__x86_64__)  // calls aarch64 has only in their *at form
            CHECK(errno_of(n, [&] { return ::syscall(SYS_creat, m, mode); }) == EPERM);
            CHECK(errno_of(n, [&] { return ::syscall(SYS_open, m, O_CREAT | O_WRONLY, mode); }) == EPERM);
            CHECK(errno_of(n, [&] { return ::syscall(SYS_open, m, O_CREAT | O_EXCL | O_RDWR, mode); }) == EPERM);
            CHECK(errno_of(n, [&] { return ::syscall(SYS_mknod, m, S_IFREG | mode, 0); }) == EPERM);
#endif
            CHECK(errno_of(n, [&] { return ::syscall(SYS_openat, AT_FDCWD, m, O_CREAT | O_WRONLY, mode); }) == EPERM);
            CHECK(errno_of(n, [&] { return ::syscall(SYS_mknodat, AT_FDCWD, m, S_IFREG | mode, 0); }) == EPERM);
            CHECK(mode_of(made) == -1);
            // O_TMPFILE (an unnamed file that linkat can name later).
            const char* d = dir.path.c_str();
#if defined(__x86_64__)  // calls aarch64 has only in their *at form
            CHECK(errno_of(n, [&] { return ::syscall(SYS_open, d, O_TMPFILE | O_WRONLY, mode); }) == EPERM);
#endif
            CHECK(errno_of(n, [&] { return ::syscall(SYS_openat, AT_FDCWD, d, O_TMPFILE | O_RDWR, mode); }) == EPERM);
        }
        // Ordinary modes work; so does an open that creates nothing, whatever
        // is in its mode register.
        CHECK(errno_of(n, [&] { return ::syscall(SYS_fchmodat, AT_FDCWD, f, 01777); }) == 0);
        CHECK(mode_of(file) == 01777);
        CHECK(errno_of(n, [&] { return ::syscall(SYS_fchmodat, AT_FDCWD, f, 0644); }) == 0);
#if defined(__x86_64__)  // calls aarch64 has only in their *at form
        CHECK(errno_of(n, [&] { return ::syscall(SYS_chmod, f, 0755); }) == 0);
        CHECK(mode_of(file) == 0755);
        CHECK(errno_of(n, [&] { return ::syscall(SYS_chmod, f, 0644); }) == 0);
#endif
        auto opened = [](long fd) { return static_cast<long>(close_ok(static_cast<int>(fd))); };
        CHECK(errno_of(n, [&] { return opened(::open(m, O_CREAT | O_WRONLY, 0755)); }) == 0);
        CHECK(mode_of(made) == (0755 & ~current_umask()));
        CHECK(errno_of(n, [&] { return opened(::syscall(SYS_openat, AT_FDCWD, m, O_RDONLY, 06755)); }) == 0);
        CHECK(errno_of(n, [&] {
                  return opened(::syscall(SYS_openat, AT_FDCWD, dir.path.c_str(), O_TMPFILE | O_WRONLY, 0600));
              }) == 0);
#if defined(__x86_64__)  // calls aarch64 has only in their *at form
        CHECK(errno_of(n, [&] { return opened(::syscall(SYS_open, m, O_RDONLY, 06755)); }) == 0);
        CHECK(errno_of(n, [&] { return opened(::syscall(SYS_open, dir.path.c_str(), O_TMPFILE | O_WRONLY, 0600)); }) ==
              0);
#endif
        REQUIRE(::unlink(m) == 0);
        // openat2 is not there (its mode is in a struct BPF cannot read).
        CHECK(errno_of(n, [&] {
                  open_how how{};
                  how.flags = O_RDONLY;
                  return ::syscall(437 /* openat2 */, AT_FDCWD, f, &how, sizeof how);
              }) == ENOSYS);
    }
    CHECK(mode_of(file) == 0644);
}

#if defined(__x86_64__)
// getpid through i386's int $0x80 and through x32's bit 30: 0 when the call
// reached the kernel's syscall table (it returned our pid), 1 when it
// returned something else (ENOSYS, say).
int i386_getpid() {
    long ret = 20;  // i386 getpid
    asm volatile("int $0x80" : "+a"(ret) : : "memory");
    return ret == ::getpid() ? 0 : 1;
}
int x32_getpid() { return ::syscall(0x40000000L | SYS_getpid) == ::getpid() ? 0 : 1; }

// What the kernel does with probe without any filter: whether the call
// reached a syscall, and how it ended otherwise (for the message).
struct Unfiltered {
    bool reaches;
    std::string how;
};
Unfiltered unfiltered(int (*probe)()) {
    pid_t pid = ::fork();
    if (pid == 0) ::_exit(probe());
    int status = 0;
    ::waitpid(pid, &status, 0);
    if (WIFEXITED(status))
        return {WEXITSTATUS(status) == 0, WEXITSTATUS(status) == 0 ? "returns the pid" : "returns an error"};
    return {false, std::string("killed by ") + ::strsignal(WTERMSIG(status))};
}

// Some kernels never run another ABI's call at all (this project's PVM guests
// answer int $0x80 with SIGSEGV although CONFIG_IA32_EMULATION=y; kernels
// without CONFIG_X86_X32_ABI answer x32 with ENOSYS).  The filter must kill
// where the kernel would run the call, and where it would not, the call must
// still not run: either way nothing reaches the x86_64 table under another
// number.
void check_other_abi(const char* name, int (*probe)()) {
    const Unfiltered before = unfiltered(probe);
    CAPTURE(name, before.how);
    for (Network n : kAll) {
        CAPTURE(sbx::to_string(n));
        int status = under_filter(n, [probe] { return probe(); });
        if (before.reaches) {
            CHECK(WIFSIGNALED(status));
            if (WIFSIGNALED(status)) CHECK(WTERMSIG(status) == SIGSYS);
        } else {
            CHECK_FALSE((WIFEXITED(status) && WEXITSTATUS(status) == 0));
        }
    }
    if (!before.reaches)
        std::printf(
            "NOTE seccomp: %s does not reach a syscall on this kernel without a filter (%s); "
            "checked that it still does not under the filter\n",
            name, before.how.c_str());
}

TEST_CASE("seccomp: syscalls through another ABI kill the process, or still never run") {
    check_other_abi("i386's int $0x80", i386_getpid);
    check_other_abi("x32's bit 30", x32_getpid);
    for (Network n : kAll) {
        CAPTURE(sbx::to_string(n));
        int status = under_filter(n, [] { return ::getpid() > 0 ? 0 : 1; });  // native calls go on
        CHECK((WIFEXITED(status) && WEXITSTATUS(status) == 0));
    }
}
#endif  // AArch32 tasks on aarch64 (another ABI there) need a 32-bit binary: not tested

TEST_CASE("seccomp: vsock is refused in every mode, also with bits above 32 in the family") {
    for (Network n : kAll) {
        CAPTURE(sbx::to_string(n));
        CHECK(errno_of(n, [] { return ::syscall(SYS_socket, 40 /* AF_VSOCK */, SOCK_STREAM, 0); }) == EPERM);
        CHECK(errno_of(n, [] { return ::syscall(SYS_socket, (1L << 32) | 40, SOCK_STREAM, 0); }) == EPERM);
    }
}

TEST_CASE("seccomp: restricted allows only AF_UNIX stream socketpairs") {
    const Network r = Network::Restricted;
    CHECK(errno_of(r, [] { return static_cast<long>(::socket(AF_UNIX, SOCK_STREAM, 0)); }) == EPERM);
    CHECK(errno_of(r, [] { return static_cast<long>(::socket(AF_INET, SOCK_STREAM, 0)); }) == EPERM);
    CHECK(errno_of(r, [] { return static_cast<long>(::socket(AF_NETLINK, SOCK_RAW, 0)); }) == EPERM);
    int sv[2];
    CHECK(errno_of(r, [&] { return static_cast<long>(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv)); }) ==
          0);
    CHECK(errno_of(r, [&] { return static_cast<long>(::socketpair(AF_UNIX, SOCK_SEQPACKET, 0, sv)); }) == 0);
    CHECK(errno_of(r, [&] { return static_cast<long>(::socketpair(AF_UNIX, SOCK_DGRAM, 0, sv)); }) == EPERM);
    CHECK(errno_of(r, [&] { return static_cast<long>(::socketpair(AF_UNIX, SOCK_RAW, 0, sv)); }) == EPERM);
    CHECK(errno_of(r, [&] { return ::syscall(SYS_socketpair, (1L << 32) | AF_UNIX, SOCK_STREAM, 0, sv); }) == EPERM);
    // connect/bind/listen/accept on the pair: EPERM, not the kernel's own errors.
    auto on_pair = [&](const std::function<long(int)>& call) {
        return errno_of(r, [&]() -> long {
            if (::socketpair(AF_UNIX, SOCK_STREAM, 0, sv) != 0) return -1;
            return call(sv[0]);
        });
    };
    sockaddr_un un{};
    un.sun_family = AF_UNIX;
    std::strcpy(un.sun_path, "/nonexistent/sbx-test.sock");
    auto* addr = reinterpret_cast<sockaddr*>(&un);
    CHECK(on_pair([&](int fd) { return ::connect(fd, addr, sizeof un); }) == EPERM);
    CHECK(on_pair([&](int fd) { return ::bind(fd, addr, sizeof un); }) == EPERM);
    CHECK(on_pair([&](int fd) { return ::listen(fd, 1); }) == EPERM);
    CHECK(on_pair([&](int fd) { return ::accept(fd, nullptr, nullptr); }) == EPERM);
    CHECK(on_pair([&](int fd) { return ::sendto(fd, "x", 1, 0, addr, sizeof un); }) == EPERM);
    CHECK(on_pair([&](int fd) { return ::send(fd, "x", 1, 0); }) == 0);
}

TEST_CASE("seccomp: limited allows inet and unix stream sockets, nothing else") {
    const Network l = Network::Limited;
    CHECK(errno_of(l, [] { return static_cast<long>(close_ok(::socket(AF_INET, SOCK_STREAM, 0))); }) == 0);
    CHECK(errno_of(l, [] { return static_cast<long>(close_ok(::socket(AF_INET, SOCK_DGRAM, 0))); }) == 0);
    CHECK(errno_of(l, [] { return static_cast<long>(close_ok(::socket(AF_UNIX, SOCK_STREAM, 0))); }) == 0);
    CHECK(errno_of(l, [] { return static_cast<long>(close_ok(::socket(AF_UNIX, SOCK_SEQPACKET, 0))); }) == 0);
    CHECK(errno_of(l, [] { return static_cast<long>(::socket(AF_UNIX, SOCK_DGRAM, 0)); }) == EPERM);
    CHECK(errno_of(l, [] { return static_cast<long>(::socket(AF_UNIX, SOCK_RAW | SOCK_CLOEXEC, 0)); }) == EPERM);
    CHECK(errno_of(l, [] { return static_cast<long>(::socket(AF_NETLINK, SOCK_RAW, 0)); }) == EPERM);
    CHECK(errno_of(l, [] { return static_cast<long>(::socket(AF_PACKET, SOCK_RAW, 0)); }) == EPERM);
    CHECK(errno_of(l, [] { return static_cast<long>(::socket(AF_UNSPEC, SOCK_STREAM, 0)); }) == EPERM);
    CHECK(errno_of(l, [] { return ::syscall(SYS_socket, (1L << 32) | AF_INET, SOCK_STREAM, 0); }) == EPERM);
    int sv[2];
    CHECK(errno_of(l, [&] { return static_cast<long>(::socketpair(AF_UNIX, SOCK_STREAM, 0, sv)); }) == 0);
    CHECK(errno_of(l, [&] { return static_cast<long>(::socketpair(AF_UNIX, SOCK_DGRAM, 0, sv)); }) == EPERM);
}

TEST_CASE("seccomp: full has no socket rules but vsock") {
    const Network f = Network::Full;
    CHECK(errno_of(f, [] { return static_cast<long>(close_ok(::socket(AF_INET, SOCK_STREAM, 0))); }) == 0);
    CHECK(errno_of(f, [] { return static_cast<long>(close_ok(::socket(AF_UNIX, SOCK_DGRAM, 0))); }) == 0);
    CHECK(errno_of(f, [] { return static_cast<long>(close_ok(::socket(AF_NETLINK, SOCK_RAW, 0))); }) == 0);
}

TEST_CASE("seccomp: limited returns a notification listener, the others none") {
    int status = under_filter(Network::Limited, [] { return 0; });
    CHECK((WIFEXITED(status) && WEXITSTATUS(status) == 0));
    pid_t pid = ::fork();
    if (pid == 0) {
        sbx::CanonicalPolicy policy;
        policy.network = Network::Limited;
        if (::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) ::_exit(202);
        bool limited = sbx::helper::install_seccomp(policy).valid();
        ::_exit(limited ? 0 : 1);
    }
    ::waitpid(pid, &status, 0);
    CHECK((WIFEXITED(status) && WEXITSTATUS(status) == 0));
    pid = ::fork();
    if (pid == 0) {
        sbx::CanonicalPolicy policy;
        policy.network = Network::Restricted;
        if (::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) ::_exit(202);
        bool none = !sbx::helper::install_seccomp(policy).valid();
        ::_exit(none ? 0 : 1);
    }
    ::waitpid(pid, &status, 0);
    CHECK((WIFEXITED(status) && WEXITSTATUS(status) == 0));
}

TEST_CASE("network: unix_pathname reads an address as connect(2) does") {
    using sbx::helper::unix_pathname;
    sockaddr_un un{};
    un.sun_family = AF_UNIX;
    std::strcpy(un.sun_path, "/run/x.sock");
    const std::size_t base = offsetof(sockaddr_un, sun_path);
    CHECK(unix_pathname(&un, base + 11) == std::optional<std::string>("/run/x.sock"));
    CHECK(unix_pathname(&un, sizeof un) == std::optional<std::string>("/run/x.sock"));
    CHECK(unix_pathname(&un, base + 4) == std::optional<std::string>("/run"));  // cut at the length
    CHECK_FALSE(unix_pathname(&un, base).has_value());                          // unnamed
    CHECK_FALSE(unix_pathname(&un, sizeof un + 1).has_value());                 // too long: EINVAL
    un.sun_path[0] = '\0';
    CHECK_FALSE(unix_pathname(&un, base + 11).has_value());  // abstract
    un.sun_path[0] = '/';
    un.sun_family = AF_INET;
    CHECK_FALSE(unix_pathname(&un, base + 11).has_value());
}
