// The Linux half of the machine probes (cli/probes.h): namespaces,
// audit, the host listener and the network probes through the helper.
#include <arpa/inet.h>
#include <fcntl.h>
#include <net/if.h>
#include <netinet/in.h>
#include <sched.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <initializer_list>
#include <sstream>
#include <string>

#include "cli/probes.h"
#include "exec/spawn.h"
#include "util/mountinfo.h"
#include "util/pids_cgroup.h"

namespace sbx::probes {

bool can_unshare(int flags, bool as_nobody) {
    // Raw system calls: the child shares sbx's memory (exec/spawn.h).
    auto probe = [flags, as_nobody]() -> int {
        if (as_nobody && (::syscall(SYS_setgroups, 0, nullptr) != 0 || ::syscall(SYS_setgid, 65534) != 0 ||
                          ::syscall(SYS_setuid, 65534) != 0))
            ::_exit(2);
        ::_exit(::unshare(flags) == 0 ? 0 : 1);
    };
    try {
        exec::Child child = exec::spawn("a namespace probe", probe);
        const auto info = child.wait_until(std::nullopt);
        return info && exec::exit_status_of(*info).code == 0;
    } catch (const Error&) {
        return false;
    }
}

namespace {

// Runs probe in a short-lived child (exec/spawn.h: raw system calls, its
// own stack, this process suspended meanwhile).  probe returns 0 when the
// thing worked, else the index (from 1) of its step that failed, with errno
// set; the child sends both through a pipe.  The finding names the step
// (steps[index - 1]) and the errno, or the signal that killed the child.
template <class F>
Finding probe_in_child(const char* what, F probe, std::initializer_list<const char*> steps) {
    int fds[2];
    if (::pipe2(fds, O_CLOEXEC) != 0) return {false, std::string("pipe: ") + std::strerror(errno)};
    Fd in(fds[0]), out(fds[1]);
    const int report_fd = out.get();
    auto entry = [&probe, report_fd]() -> int {
        const int step = probe();
        const int report[2] = {step, step != 0 ? errno : 0};
        (void)!::write(report_fd, report, sizeof report);
        ::_exit(0);
    };
    try {
        exec::Child child = exec::spawn(what, entry);
        out.reset();
        const auto info = child.wait_until(exec::Clock::now() + std::chrono::seconds(10));
        if (!info) return {false, "no answer within 10 s"};
        const exec::ExitStatus status = exec::exit_status_of(*info);
        if (status.signal) return {false, std::string("killed by ") + ::strsignal(*status.signal)};
    } catch (const Error& e) {
        return {false, e.what()};
    }
    int report[2] = {-1, 0};
    if (::read(in.get(), report, sizeof report) != static_cast<ssize_t>(sizeof report))
        return {false, "the probe said nothing"};
    if (report[0] == 0) return {true, ""};
    const std::size_t step = static_cast<std::size_t>(report[0]) - 1;
    const std::string name = step < steps.size() ? steps.begin()[step] : "a step";
    return {false, name + ": " + std::strerror(report[1])};
}

// Drops to uid and gid 65534 (as can_unshare does); false with errno.
bool become_nobody() {
    return ::syscall(SYS_setgroups, 0, nullptr) == 0 && ::syscall(SYS_setgid, 65534) == 0 &&
           ::syscall(SYS_setuid, 65534) == 0;
}

}  // namespace

Finding user_namespace_usable(bool as_nobody) {
    return probe_in_child(
        "a user namespace probe",
        [as_nobody]() -> int {
            if (as_nobody && !become_nobody()) return 1;
            if (::unshare(CLONE_NEWUSER | CLONE_NEWNS) != 0) return 2;
            if (::mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0) return 3;
            return 0;
        },
        {"becoming uid 65534", "unshare(CLONE_NEWUSER|CLONE_NEWNS)", "making its mounts private (mount: MS_PRIVATE)"});
}

#if defined(__x86_64__)
Finding i386_syscall_runs() {
    return probe_in_child("an i386 syscall probe",
                          []() -> int {
                              long ret = 20;  // i386 getpid
                              asm volatile("int $0x80" : "+a"(ret) : : "memory");
                              if (ret == ::syscall(SYS_getpid)) return 0;
                              errno = ret < 0 && ret > -4096 ? static_cast<int>(-ret) : 0;
                              return 1;
                          },
                          {"getpid"});
}

Finding x32_syscall_runs() {
    return probe_in_child("an x32 syscall probe",
                          []() -> int {
                              const long pid =
                                  ::syscall(0x40000000L | SYS_getpid);  // x32: the x86_64 number with bit 30
                              return pid == ::syscall(SYS_getpid) ? 0 : 1;
                          },
                          {"getpid"});
}
#else
Finding i386_syscall_runs() { return {false, "not x86_64"}; }
Finding x32_syscall_runs() { return {false, "not x86_64"}; }
#endif

Finding host_ipv6_loopback() {
    Fd fd(::socket(AF_INET6, SOCK_STREAM | SOCK_CLOEXEC, 0));
    if (!fd.valid()) return {false, std::string("socket(AF_INET6): ") + std::strerror(errno)};
    sockaddr_in6 addr{};
    addr.sin6_family = AF_INET6;
    addr.sin6_addr = in6addr_loopback;
    if (::bind(fd.get(), reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0)
        return {false, std::string("binding ::1: ") + std::strerror(errno)};
    return {true, ""};
}

Finding namespace_ipv6_loopback() {
    const bool root = ::geteuid() == 0;
    return probe_in_child("an IPv6 loopback probe",
                          [root]() -> int {
                              if (::unshare(root ? CLONE_NEWNET : CLONE_NEWUSER | CLONE_NEWNET) != 0) return 1;
                              const int s = ::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
                              ifreq lo{};
                              std::memcpy(lo.ifr_name, "lo", 3);
                              if (s < 0 || ::ioctl(s, SIOCGIFFLAGS, &lo) != 0) return 2;
                              lo.ifr_flags = static_cast<short>(lo.ifr_flags | IFF_UP);
                              if (::ioctl(s, SIOCSIFFLAGS, &lo) != 0) return 2;
                              const int s6 = ::socket(AF_INET6, SOCK_STREAM | SOCK_CLOEXEC, 0);
                              if (s6 < 0) return 3;
                              sockaddr_in6 addr{};
                              addr.sin6_family = AF_INET6;
                              addr.sin6_addr = in6addr_loopback;
                              if (::bind(s6, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) return 4;
                              return 0;
                          },
                          {"unshare(CLONE_NEWNET)", "bringing its loopback up", "socket(AF_INET6)", "binding ::1"});
}

Finding pids_cgroup_for_root() {
    const std::optional<cgroup::Place> place = cgroup::find_pids_cgroup();
    if (!place) return {false, "no cgroup hierarchy with the pids controller is mounted"};
    const std::string where = (place->v2 ? "cgroup v2 " : "cgroup v1's pids hierarchy ") + place->dir;
    // On v2 the helper enables pids for the children (+pids in
    // cgroup.subtree_control); the kernel refuses that in a cgroup that holds
    // processes (this one does: sbx is in it), except in the root cgroup,
    // the one without a cgroup.type.
    struct stat st {};
    if (place->v2 && !cgroup::lists(cgroup::read_text(place->dir + "/cgroup.subtree_control"), "pids") &&
        ::stat((place->dir + "/cgroup.type").c_str(), &st) == 0)
        return {false, where + ": pids is not enabled for its children, and cannot be while it holds processes"};
    if (::access(place->dir.c_str(), W_OK) != 0)
        return {false, where + ": not writable by this user (" + std::strerror(errno) + ")"};
    return {true, where};
}

std::optional<std::string> cgroup2_mount() {
    // mountinfo: ID PARENT MAJ:MIN ROOT MOUNTPOINT OPTIONS ... - FSTYPE ...
    std::istringstream mounts(cgroup::read_text("/proc/self/mountinfo"));
    for (std::string line; std::getline(mounts, line);) {
        const auto dash = line.find(" - cgroup2 ");
        if (dash == std::string::npos) continue;
        return mountinfo::mount_point(line);
    }
    return std::nullopt;
}

AuditFacts audit_facts() {
    AuditFacts facts;
    struct stat st {};
    facts.auditd = ::stat("/run/auditd.pid", &st) == 0 || ::stat("/var/run/auditd.pid", &st) == 0;
    facts.audit_log_readable = ::access("/var/log/audit/audit.log", R_OK) == 0;
    facts.kernel_log_readable = Fd(::open("/dev/kmsg", O_RDONLY | O_NONBLOCK | O_CLOEXEC)).valid();
    facts.dmesg_restrict = read_small_file("/proc/sys/kernel/dmesg_restrict").value_or("unknown");
    return facts;
}

HostListener::HostListener() {
    Fd fd(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0));
    if (!fd.valid()) return;
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof addr;
    if (::bind(fd.get(), reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 || ::listen(fd.get(), 8) != 0 ||
        ::getsockname(fd.get(), reinterpret_cast<sockaddr*>(&addr), &len) != 0)
        return;
    fd_ = std::move(fd);
    port_ = ntohs(addr.sin_port);
}

bool HostListener::accepted() {
    bool any = false;
    while (Fd(::accept4(fd_.get(), nullptr, nullptr, SOCK_CLOEXEC)).valid()) any = true;
    return any;
}

namespace {

const char* const kBash = "/bin/bash";
const char* const kPython = "/usr/bin/python3";

std::vector<std::string> bash_connect(int port) {
    return {kBash, "-c", "exec 3<>/dev/tcp/127.0.0.1/" + std::to_string(port)};
}

}  // namespace

Probe probe_network(const ProbeTarget& sandbox, const std::string& ws, HostListener& host, Network level) {
    Probe p{level == Network::Restricted ? "network restricted" : "network limited"};
    if (!host.valid() || !is_executable(kBash)) {
        p.check("probe prerequisites (a host listener on 127.0.0.1 and /bin/bash)", false, "not available");
        return p;
    }
    const std::string policy = level == Network::Restricted ? R"({"mode":"read-only","network":"restricted"})"
                                                            : R"({"mode":"read-only","network":"limited"})";
    host.accepted();
    Outcome control = run_probe(sandbox, R"({"mode":"read-only","network":"full"})", ws, bash_connect(host.port()));
    const bool reached = host.accepted();
    p.check("control: network full reaches the host's 127.0.0.1", control.ran && control.exit_code == 0 && reached,
            describe(control));
    Outcome connect = run_probe(sandbox, policy, ws, bash_connect(host.port()));
    const bool leaked = host.accepted();
    p.check("the host's 127.0.0.1 is unreachable", connect.ran && connect.exit_code != 0 && !leaked, describe(connect));
    if (level == Network::Restricted) {
        Outcome sock =
            run_probe(sandbox, policy, ws, {kBash, "-c", "exec 3<>/dev/udp/127.0.0.1/" + std::to_string(host.port())});
        p.check("a UDP socket is refused", sock.ran && sock.exit_code != 0, describe(sock));
    } else if (is_executable(kPython)) {
        const char* script =
            "import socket\n"
            "s = socket.socket(); s.bind(('127.0.0.1', 0)); s.listen(1)\n"
            "c = socket.create_connection(s.getsockname(), timeout=5); a, _ = s.accept()\n"
            "c.sendall(b'x'); assert a.recv(1) == b'x'\n";
        Outcome loop = run_probe(sandbox, policy, ws, {kPython, "-c", script});
        p.check("the sandbox's own loopback works", loop.ran && loop.exit_code == 0, describe(loop));
    } else {
        p.check("the sandbox's own loopback works", false, "not probed: no /usr/bin/python3");
    }
    return p;
}

}  // namespace sbx::probes
