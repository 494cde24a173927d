// The Linux half of the machine probes (platform/probes.h): namespaces,
// audit, the host listener and the network probes through the helper.
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sched.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "exec/spawn.h"
#include "platform/probes.h"

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
