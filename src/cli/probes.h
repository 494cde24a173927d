// What this machine can enforce, found out on the machine itself: its
// settings, a user namespace made in a child, and a live probe per mode
// through the real helper under the supervisor.  sbx doctor prints them
// (cli/doctor.cc, cli/doctor_macos.cc, cli/doctor_report.cc).  Shared: probes.cc;
// Linux's: probes_linux.cc.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "platform/plan.h"
#include "policy/policy.h"
#include "util/fd.h"

namespace sbx::probes {

// A small text file such as a sysctl under /proc/sys, without its trailing
// newline and spaces; nullopt when it cannot be read.
std::optional<std::string> read_small_file(const std::string& path);

// Whether path names a file this user may execute.
bool is_executable(const char* path);

// Whether a short-lived child can unshare(flags) (CLONE_NEWUSER,
// CLONE_NEWNS, ...), optionally after dropping to uid/gid 65534 first (what
// an unprivileged user gets; needs root).  The one namespace probe.
bool can_unshare(int flags, bool as_nobody = false);

// What a probe of the kernel found: whether the thing works, and if not,
// what stopped it ("unshare(CLONE_NEWUSER): Operation not permitted",
// "killed by Segmentation fault").
struct Finding {
    bool ok = false;
    std::string detail;
};

// Whether a user namespace can be made and used as a sandbox uses it: a
// mount namespace in it whose mounts can be made private (AppArmor's
// kernel.apparmor_restrict_unprivileged_userns=1 lets the namespace be made
// and refuses that), made by this user or, as_nobody (needs root), by uid
// 65534.  In a short-lived child.
Finding user_namespace_usable(bool as_nobody);

// getpid through another syscall ABI, without any filter, in a short-lived
// child: i386's int $0x80 and x32's bit 30 (x86_64 only: elsewhere not ok,
// "not x86_64").  ok: the call reached the kernel's syscall table.
Finding i386_syscall_runs();
Finding x32_syscall_runs();

// Whether the host's ::1 can be bound, and whether a new network namespace
// (a sandbox's own under network limited) has ::1 once its loopback is up
// (made in a user namespace where this user is not root).
Finding host_ipv6_loopback();
Finding namespace_ipv6_loopback();

// The pids cgroup root's --limit-procs would use (util/pids_cgroup.h):
// ok when the helper could make one there (as root: a v1 pids hierarchy, or
// v2 with pids enabled for the children or possible to enable, and the
// directory writable); the detail names the place or what is missing.
Finding pids_cgroup_for_root();
// The first cgroup2 mount point, if any.
std::optional<std::string> cgroup2_mount();

// Where the kernel's audit records can be read on this machine.
struct AuditFacts {
    bool auditd = false;               // auditd runs (its pid file exists)
    bool audit_log_readable = false;   // /var/log/audit/audit.log, by this user
    bool kernel_log_readable = false;  // /dev/kmsg, by this user
    std::string dmesg_restrict;        // kernel.dmesg_restrict, or "unknown"
};
AuditFacts audit_facts();

// One check of a probe and what it saw.
struct Check {
    std::string name;
    bool ok = false;
    std::string detail;
};

// A mode's probe: enforced when every check passed.
struct Probe {
    std::string mode;
    std::vector<Check> checks{};
    bool enforced = true;

    void check(const std::string& name, bool ok, const std::string& detail) {
        checks.push_back({name, ok, detail});
        enforced = enforced && ok;
    }
};

// A probe that could not run at all: its one check, failed, says why.
Probe probe_not_run(const std::string& mode, const std::string& check, const std::string& why);

// A scratch directory in $TMPDIR (else /tmp), removed at the end; an empty
// path when it cannot be made.
class TempDir {
public:
    TempDir();
    ~TempDir();
    TempDir(const TempDir&) = delete;
    TempDir& operator=(const TempDir&) = delete;
    const std::string& path() const { return path_; }

private:
    std::string path_;
};

// A TCP listener on the host's 127.0.0.1, to see whether a sandbox reaches it.
class HostListener {
public:
    HostListener();
    bool valid() const { return fd_.valid(); }
    int port() const { return port_; }
    // Whether a connection arrived since the last call (and drains them).
    bool accepted();

private:
    Fd fd_;
    int port_ = 0;
};

// A probe as doctor --json shows it ({"mode", "enforced", "checks"}), and as
// its text lines ("probe MODE: enforced", then "  [ok] CHECK" each).
nlohmann::json to_json(const Probe&);
std::string to_text(const Probe&);

// The sandbox a probe runs: Linux's helper, or macOS's sandbox-exec.
struct ProbeTarget {
    TargetOs os = TargetOs::Linux;
    PlatformPaths paths;
};

// What a probe's command did.
struct Outcome {
    bool ran = false;  // the sandbox could be started and finished in time
    int exit_code = -1;
    std::string output;  // stdout and stderr, capped
};
// Runs `argv` in the sandbox with policy input `policy_json` (resolved in
// `workspace`), for at most 10 s, under the supervisor as sbx run does.
Outcome run_probe(const ProbeTarget&, const std::string& policy_json, const std::string& workspace,
                  const std::vector<std::string>& argv);
// "exit N: the first line of its output", or why it did not run.
std::string describe(const Outcome&);
// Whether path exists (lstat).
bool exists(const std::string& path);

// The live probes through the sandbox, in the scratch workspace `ws` (and
// `outside` it): writes refused or allowed as each mode says, the network
// cut off from the host's loopback.  probe_network and the rest below the
// helper are Linux's (probes_linux.cc).
Probe probe_read_only(const ProbeTarget&, const std::string& ws);
Probe probe_workspace_write(const ProbeTarget&, const std::string& ws, const std::string& outside);
Probe probe_network(const ProbeTarget&, const std::string& ws, HostListener& host, Network level);

}  // namespace sbx::probes
