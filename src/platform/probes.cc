#include "platform/probes.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <grp.h>
#include <netinet/in.h>
#include <sched.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "exec/spawn.h"
#include "exec/supervisor.h"
#include "platform/helper_status.h"
#include "platform/plan.h"

namespace sbx::probes {

std::optional<std::string> read_small_file(const std::string& path) {
    std::ifstream in(path);
    if (!in) return std::nullopt;
    std::string text;
    std::getline(in, text, '\0');
    while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.pop_back();
    return text;
}

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

TempDir::TempDir() {
    const char* base = std::getenv("TMPDIR");
    std::string pattern = std::string(base && *base ? base : "/tmp") + "/sbx-doctor-XXXXXX";
    if (::mkdtemp(pattern.data()) != nullptr) path_ = pattern;
}

TempDir::~TempDir() {
    std::error_code ignored;
    if (!path_.empty()) std::filesystem::remove_all(path_, ignored);
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

bool is_executable(const char* path) { return ::access(path, X_OK) == 0; }

namespace {

struct Outcome {
    bool ran = false;  // the helper could be started and finished in time
    int exit_code = -1;
    std::string output;  // stdout and stderr, capped
};

// Runs the helper with policy input `policy_json` (resolved in `workspace`) and
// the command `argv`, for at most 10 s, under the supervisor as sbx run does.
Outcome run_probe(const std::string& helper, const std::string& policy_json, const std::string& workspace,
                  const std::vector<std::string>& argv) {
    Outcome outcome;
    Environment env = system_environment();
    env.cwd = workspace;
    ExecPlan probe;
    try {
        const CanonicalPolicy policy = resolve(input_from_json_text(policy_json, "doctor probe"), env);
        CommandSpec command;
        command.argv = argv;
        command.cwd = workspace;
        command.stdin_mode = StdinMode::Null;
        probe = plan(policy, command, TargetOs::Linux, PlatformPaths{helper, {}});
    } catch (const std::exception& e) {
        outcome.output = e.what();
        return outcome;
    }
    SuperviseOptions opt;
    opt.timeout = std::chrono::seconds(10);
    opt.passthrough = false;
    opt.capture = true;
    opt.caps = {4096, 0};
    opt.child_cleans_up = true;
    const ExecResult r = supervise(probe, opt);
    outcome.output = r.out.shown + r.err.shown;
    if (const auto status = parse_helper_status(r.report); status.error)
        outcome.output += "the sandbox could not be applied: " + *status.error;
    if (r.timed_out) {
        outcome.output += "(timed out)";
        return outcome;
    }
    outcome.ran = true;
    outcome.exit_code = r.exit_code;
    while (!outcome.output.empty() && outcome.output.back() == '\n') outcome.output.pop_back();
    return outcome;
}

bool exists(const std::string& path) {
    struct stat st {};
    return ::lstat(path.c_str(), &st) == 0;
}

std::string describe(const Outcome& o) {
    if (!o.ran) return "the helper did not run: " + o.output;
    std::string text = "exit " + std::to_string(o.exit_code);
    if (!o.output.empty()) text += ": " + o.output.substr(0, o.output.find('\n'));
    return text;
}

const char* const kSh = "/bin/sh";
const char* const kBash = "/bin/bash";
const char* const kPython = "/usr/bin/python3";

std::vector<std::string> sh_write(const std::string& path) { return {kSh, "-c", "echo probe > \"$1\"", "sh", path}; }

std::vector<std::string> bash_connect(int port) {
    return {kBash, "-c", "exec 3<>/dev/tcp/127.0.0.1/" + std::to_string(port)};
}

}  // namespace

Probe probe_read_only(const std::string& helper, const std::string& ws) {
    Probe p{"read-only"};
    const std::string target = ws + "/ro-probe";
    Outcome control = run_probe(helper, R"({"mode":"read-only"})", ws, {kSh, "-c", "echo ok > /dev/null"});
    p.check("the helper runs a command (and /dev/null is writable)", control.ran && control.exit_code == 0,
            describe(control));
    Outcome write = run_probe(helper, R"({"mode":"read-only"})", ws, sh_write(target));
    p.check("a write in the workspace is refused", write.ran && write.exit_code != 0 && !exists(target),
            describe(write));
    return p;
}

Probe probe_workspace_write(const std::string& helper, const std::string& ws, const std::string& outside) {
    Probe p{"workspace-write"};
    const std::string policy = R"({"mode":"workspace-write","exclude_slash_tmp":true,"exclude_tmpdir_env_var":true})";
    const std::string inside = ws + "/ww-probe";
    Outcome write = run_probe(helper, policy, ws, sh_write(inside));
    p.check("a write in the workspace works", write.ran && write.exit_code == 0 && exists(inside), describe(write));
    const std::string out = outside + "/ww-probe";
    Outcome escape = run_probe(helper, policy, ws, sh_write(out));
    p.check("a write outside the writable roots is refused", escape.ran && escape.exit_code != 0 && !exists(out),
            describe(escape));
    ::mkdir((ws + "/.git").c_str(), 0755);
    const std::string hook = ws + "/.git/probe";
    Outcome git = run_probe(helper, policy, ws, sh_write(hook));
    p.check("a write in the protected .git is refused", git.ran && git.exit_code != 0 && !exists(hook), describe(git));
    const std::string sbx_dir = ws + "/.sbx";
    Outcome first = run_probe(helper, policy, ws, {kSh, "-c", "mkdir \"$1\"", "sh", sbx_dir});
    p.check("creating a first .sbx is refused", first.ran && first.exit_code != 0 && !exists(sbx_dir), describe(first));
    return p;
}

Probe probe_network(const std::string& helper, const std::string& ws, HostListener& host, Network level) {
    Probe p{level == Network::Restricted ? "network restricted" : "network limited"};
    if (!host.valid() || !is_executable(kBash)) {
        p.check("probe prerequisites (a host listener on 127.0.0.1 and /bin/bash)", false, "not available");
        return p;
    }
    const std::string policy = level == Network::Restricted ? R"({"mode":"read-only","network":"restricted"})"
                                                            : R"({"mode":"read-only","network":"limited"})";
    host.accepted();
    Outcome control = run_probe(helper, R"({"mode":"read-only","network":"full"})", ws, bash_connect(host.port()));
    const bool reached = host.accepted();
    p.check("control: network full reaches the host's 127.0.0.1", control.ran && control.exit_code == 0 && reached,
            describe(control));
    Outcome connect = run_probe(helper, policy, ws, bash_connect(host.port()));
    const bool leaked = host.accepted();
    p.check("the host's 127.0.0.1 is unreachable", connect.ran && connect.exit_code != 0 && !leaked, describe(connect));
    if (level == Network::Restricted) {
        Outcome sock =
            run_probe(helper, policy, ws, {kBash, "-c", "exec 3<>/dev/udp/127.0.0.1/" + std::to_string(host.port())});
        p.check("a UDP socket is refused", sock.ran && sock.exit_code != 0, describe(sock));
    } else if (is_executable(kPython)) {
        const char* script =
            "import socket\n"
            "s = socket.socket(); s.bind(('127.0.0.1', 0)); s.listen(1)\n"
            "c = socket.create_connection(s.getsockname(), timeout=5); a, _ = s.accept()\n"
            "c.sendall(b'x'); assert a.recv(1) == b'x'\n";
        Outcome loop = run_probe(helper, policy, ws, {kPython, "-c", script});
        p.check("the sandbox's own loopback works", loop.ran && loop.exit_code == 0, describe(loop));
    } else {
        p.check("the sandbox's own loopback works", false, "not probed: no /usr/bin/python3");
    }
    return p;
}

}  // namespace sbx::probes
