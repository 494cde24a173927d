// sbx doctor: what this machine can enforce, proved by a live probe per mode
// through the real helper.  Exit 0 only when every mode is enforced.
#include <arpa/inet.h>
#include <fcntl.h>
#include <grp.h>
#include <sched.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <filesystem>
#include <cstdlib>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <fmt/core.h>
#include <nlohmann/json.hpp>

#include "cli/options.h"
#include "exec/supervisor.h"
#include "platform/helper_status.h"
#include "platform/plan.h"
#include "policy/policy.h"
#include "report/denial.h"
#include "util/landlock_abi.h"

extern char** environ;

namespace sbx::cli {
namespace {

using nlohmann::json;

std::optional<std::string> read_small_file(const std::string& path) {
    std::ifstream in(path);
    if (!in) return std::nullopt;
    std::string text;
    std::getline(in, text, '\0');
    while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.pop_back();
    return text;
}

bool is_executable(const char* path) { return ::access(path, X_OK) == 0; }

// ---- facts -----------------------------------------------------------------

// Whether a child can make a user namespace, optionally after dropping to
// uid/gid 65534 (what an unprivileged user gets).
bool can_make_userns(bool as_nobody) {
    const pid_t pid = ::fork();
    if (pid < 0) return false;
    if (pid == 0) {
        if (as_nobody && (::setgroups(0, nullptr) != 0 || ::setgid(65534) != 0 || ::setuid(65534) != 0))
            ::_exit(2);
        ::_exit(::unshare(CLONE_NEWUSER) == 0 ? 0 : 1);
    }
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

json audit_facts() {
    json audit;
    struct stat st {};
    const bool auditd = ::stat("/run/auditd.pid", &st) == 0 || ::stat("/var/run/auditd.pid", &st) == 0;
    const bool audit_log = ::access("/var/log/audit/audit.log", R_OK) == 0;
    const int kmsg = ::open("/dev/kmsg", O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    const bool kernel_log = kmsg >= 0;
    if (kmsg >= 0) ::close(kmsg);
    audit["auditd"] = auditd;
    audit["audit_log_readable"] = audit_log;
    audit["kernel_log_readable"] = kernel_log;
    audit["dmesg_restrict"] = read_small_file("/proc/sys/kernel/dmesg_restrict").value_or("unknown");
    // What sbx itself reads: the audit netlink log (report/denial.h).
    const AuditStatus status = audit_status();
    // Without auditd, kauditd prints the records (Landlock: types 1423/1424)
    // to the kernel log, rate-limited.  With audit off there are none.
    audit["landlock_records_readable"] = status.enabled != false && (auditd ? audit_log : kernel_log);
    std::string where;
    if (auditd)
        where = audit_log ? "/var/log/audit/audit.log (auditd), readable by this user"
                          : "/var/log/audit/audit.log (auditd), not readable by this user";
    else
        where = kernel_log ? "the kernel log (no auditd; rate-limited), readable by this user"
                           : "the kernel log (no auditd), which this user may not read (kernel.dmesg_restrict)";
    if (status.enabled == false) where = "none while audit is off; with it on: " + where;
    audit["enabled"] = status.enabled ? json(*status.enabled) : json(nullptr);
    audit["readable_by_sbx"] = status.readable;
    audit["denials_listed"] = status.denials_listed();
    audit["records"] = where;
    audit["summary"] = fmt::format("exact denials {}: {}", status.denials_listed() ? "listed" : "not listed",
                                   status.detail);
    return audit;
}

// ---- probes ----------------------------------------------------------------

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

struct Probe {
    std::string mode;
    json checks = json::array();
    bool enforced = true;

    void check(const std::string& name, bool ok, const std::string& detail) {
        checks.push_back({{"check", name}, {"ok", ok}, {"detail", detail}});
        enforced = enforced && ok;
    }
};

std::string describe(const Outcome& o) {
    if (!o.ran) return "the helper did not run: " + o.output;
    std::string text = "exit " + std::to_string(o.exit_code);
    if (!o.output.empty()) text += ": " + o.output.substr(0, o.output.find('\n'));
    return text;
}

// A scratch directory removed at the end.
class TempDir {
public:
    TempDir() {
        const char* base = std::getenv("TMPDIR");
        std::string pattern = std::string(base && *base ? base : "/tmp") + "/sbx-doctor-XXXXXX";
        if (::mkdtemp(pattern.data()) != nullptr) path_ = pattern;
    }
    ~TempDir() {
        std::error_code ignored;
        if (!path_.empty()) std::filesystem::remove_all(path_, ignored);
    }
    TempDir(const TempDir&) = delete;
    TempDir& operator=(const TempDir&) = delete;
    const std::string& path() const { return path_; }

private:
    std::string path_;
};

// A TCP listener on the host's 127.0.0.1, to see whether a sandbox reaches it.
class HostListener {
public:
    HostListener() {
        fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
        if (fd_ < 0) return;
        sockaddr_in addr{};
        addr.sin_family = AF_INET;
        addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        socklen_t len = sizeof addr;
        if (::bind(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 || ::listen(fd_, 8) != 0 ||
            ::getsockname(fd_, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
            ::close(fd_);
            fd_ = -1;
            return;
        }
        port_ = ntohs(addr.sin_port);
    }
    ~HostListener() {
        if (fd_ >= 0) ::close(fd_);
    }
    HostListener(const HostListener&) = delete;
    HostListener& operator=(const HostListener&) = delete;
    bool valid() const { return fd_ >= 0; }
    int port() const { return port_; }
    // Whether a connection arrived since the last call (and drains them).
    bool accepted() {
        bool any = false;
        for (int c; (c = ::accept4(fd_, nullptr, nullptr, SOCK_CLOEXEC)) >= 0;) {
            ::close(c);
            any = true;
        }
        return any;
    }

private:
    int fd_ = -1;
    int port_ = 0;
};

const char* const kSh = "/bin/sh";
const char* const kBash = "/bin/bash";
const char* const kPython = "/usr/bin/python3";

std::vector<std::string> sh_write(const std::string& path) {
    return {kSh, "-c", "echo probe > \"$1\"", "sh", path};
}

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
    p.check("a write in the protected .git is refused", git.ran && git.exit_code != 0 && !exists(hook),
            describe(git));
    const std::string sbx_dir = ws + "/.sbx";
    Outcome first = run_probe(helper, policy, ws, {kSh, "-c", "mkdir \"$1\"", "sh", sbx_dir});
    p.check("creating a first .sbx is refused", first.ran && first.exit_code != 0 && !exists(sbx_dir),
            describe(first));
    return p;
}

std::vector<std::string> bash_connect(int port) {
    return {kBash, "-c", "exec 3<>/dev/tcp/127.0.0.1/" + std::to_string(port)};
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
    p.check("the host's 127.0.0.1 is unreachable", connect.ran && connect.exit_code != 0 && !leaked,
            describe(connect));
    if (level == Network::Restricted) {
        Outcome sock = run_probe(helper, policy, ws,
                                 {kBash, "-c", "exec 3<>/dev/udp/127.0.0.1/" + std::to_string(host.port())});
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

std::string yes_no(bool b) { return b ? "yes" : "no"; }

}  // namespace

int doctor_command(const DoctorArgs& args) {
    json report;
    utsname uts{};
    ::uname(&uts);
    report["kernel"] = uts.release;

    const int abi = landlock_abi();
    report["landlock_abi"] = abi;

    const std::string actions = read_small_file("/proc/sys/kernel/seccomp/actions_avail").value_or("");
    const bool seccomp = !actions.empty();
    report["seccomp"] = {{"available", seccomp},
                         {"actions", actions},
                         {"user_notif", actions.find("user_notif") != std::string::npos}};

    const bool userns = can_make_userns(false);
    const bool userns_unprivileged = ::geteuid() == 0 ? can_make_userns(true) : userns;
    report["user_namespaces"] = {
        {"available", userns},
        {"unprivileged", userns_unprivileged},
        {"max_user_namespaces", read_small_file("/proc/sys/user/max_user_namespaces").value_or("unknown")}};
    if (auto apparmor = read_small_file("/proc/sys/kernel/apparmor_restrict_unprivileged_userns"))
        report["user_namespaces"]["apparmor_restrict_unprivileged_userns"] = *apparmor;

    report["audit"] = audit_facts();

    std::string helper;
    try {
        helper = find_linux_helper();
        report["helper"] = {{"path", helper}, {"found", true}};
    } catch (const std::exception& e) {
        report["helper"] = {{"path", nullptr}, {"found", false}, {"error", e.what()}};
    }
    report["sandbox_exec"] = {{"path", "/usr/bin/sandbox-exec"},
                              {"present", is_executable("/usr/bin/sandbox-exec")},
                              {"note", "macOS only"}};

    std::vector<Probe> probes;
    if (!helper.empty()) {
        TempDir ws, outside;
        if (ws.path().empty() || outside.path().empty()) {
            Probe p{"all"};
            p.check("scratch directories", false, "cannot create a directory in $TMPDIR or /tmp");
            probes.push_back(p);
        } else {
            HostListener host;
            probes.push_back(probe_read_only(helper, ws.path()));
            probes.push_back(probe_workspace_write(helper, ws.path(), outside.path()));
            probes.push_back(probe_network(helper, ws.path(), host, Network::Restricted));
            probes.push_back(probe_network(helper, ws.path(), host, Network::Limited));
        }
    } else {
        Probe p{"all"};
        p.check("the helper is installed", false, report["helper"]["error"].get<std::string>());
        probes.push_back(p);
    }
    bool all = true;
    report["probes"] = json::array();
    for (const auto& p : probes) {
        report["probes"].push_back({{"mode", p.mode}, {"enforced", p.enforced}, {"checks", p.checks}});
        all = all && p.enforced;
    }
    report["not_enforced_without_user_namespaces"] = {"protected paths", "metadata changes (chmod, chown, utimes, xattrs)"};
    report["enforced"] = all;

    if (args.json) {
        fmt::print("{}\n", report.dump(2));
        return all ? 0 : 1;
    }
    fmt::print("kernel:           {}\n", uts.release);
    fmt::print("landlock:         {}\n", abi > 0 ? fmt::format("ABI {}", abi) : std::string("not available"));
    fmt::print("seccomp:          {}\n", seccomp ? "yes (actions: " + actions + ")" : std::string("no"));
    fmt::print("user namespaces:  {} (unprivileged users: {})\n", yes_no(userns), yes_no(userns_unprivileged));
    if (!userns_unprivileged)
        fmt::print("                  without them sbx refuses workspace sandboxes unless --allow-unprotected, "
                   "which does not enforce protected paths nor metadata changes\n");
    fmt::print("audit:            {}\n", report["audit"]["summary"].get<std::string>());
    fmt::print("helper:           {}\n",
               helper.empty() ? "not found: " + report["helper"]["error"].get<std::string>() : helper);
    fmt::print("sandbox-exec:     {} (macOS only)\n", is_executable("/usr/bin/sandbox-exec") ? "present" : "absent");
    for (const auto& p : probes) {
        fmt::print("probe {}: {}\n", p.mode, p.enforced ? "enforced" : "NOT ENFORCED");
        for (const auto& c : p.checks)
            fmt::print("  [{}] {}{}\n", c["ok"].get<bool>() ? "ok" : "FAIL", c["check"].get<std::string>(),
                       c["ok"].get<bool>() ? "" : " (" + c["detail"].get<std::string>() + ")");
    }
    fmt::print("{}\n", all ? "every mode is enforced" : "some modes are NOT enforced");
    return all ? 0 : 1;
}

}  // namespace sbx::cli
