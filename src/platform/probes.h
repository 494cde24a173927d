// What this machine can enforce, found out on the machine itself: its
// settings, a user namespace made in a child, and a live probe per mode
// through the real helper under the supervisor.  sbx doctor prints them
// (cli/doctor.cc, cli/doctor_macos.cc).  Shared: probes.cc; Linux's: probes_linux.cc.
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
