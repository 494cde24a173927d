// sbx doctor: what this machine can enforce, proved by a live probe per mode
// through the real helper (cli/probes.h).  Exit 0 only when every mode
// is enforced.
#include <sched.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include <fmt/core.h>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli/options.h"
#include "cli/probes.h"
#include "platform/audit.h"
#include "platform/container.h"
#include "policy/policy.h"
#include "sbx_config.h"
#include "util/apparmor_userns.h"
#include "util/landlock_abi.h"

namespace sbx::cli {
namespace {

using nlohmann::json;
using probes::is_executable;
using probes::read_small_file;

json audit_report() {
    json audit;
    const probes::AuditFacts facts = probes::audit_facts();
    const bool auditd = facts.auditd;
    const bool audit_log = facts.audit_log_readable;
    const bool kernel_log = facts.kernel_log_readable;
    audit["auditd"] = auditd;
    audit["audit_log_readable"] = audit_log;
    audit["kernel_log_readable"] = kernel_log;
    audit["dmesg_restrict"] = facts.dmesg_restrict;
    // What sbx itself reads: the audit netlink log (platform/audit.h).
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
    // Audit is one source of exact denials; the helper's recorder
    // (--record-denials) is the other, and needs no audit.
    audit["summary"] =
        status.denials_listed()
            ? fmt::format("exact denials listed: {}", status.detail)
            : fmt::format("exact denials listed with --record-denials; from audit not listed: {}", status.detail);
    return audit;
}

std::string yes_no(bool b) { return b ? "yes" : "no"; }

// The Landlock features sbx uses, by the ABI that brought each
// (linux-helper/landlock.cc).
struct LandlockFeature {
    const char* key;
    int abi;
    const char* use;
};
constexpr LandlockFeature kLandlockFeatures[] = {
    {"filesystem", 1, "filesystem rules"},
    {"refer", 2, "links and renames across directories"},
    {"truncate", 3, "truncation (needed by --allow-unprotected)"},
    {"tcp", 4, "TCP bind and connect rules under network restricted"},
    {"ioctl_dev", 5, "device ioctls"},
    {"scopes", 6, "signals and abstract UNIX sockets kept in the sandbox"},
    {"log_flags", 7, "audit records of the command's denials"},
};

json landlock_report(int abi) {
    json features = json::object();
    for (const auto& f : kLandlockFeatures) features[f.key] = abi >= f.abi;
    return {{"abi", abi}, {"features", features}};
}

std::string landlock_text(int abi) {
    if (abi <= 0) return "not available";
    std::string used, missing;
    for (const auto& f : kLandlockFeatures) {
        if (abi >= f.abi) used += (used.empty() ? "" : ", ") + std::string(f.key);
        else missing += fmt::format("{}{} (ABI {}: {})", missing.empty() ? "" : "; ", f.key, f.abi, f.use);
    }
    return fmt::format("ABI {} (sbx uses: {}){}", abi, used, missing.empty() ? "" : "; not on this kernel: " + missing);
}

// How another ABI's getpid ends without a filter, in words.
std::string abi_text(const probes::Finding& f) { return f.ok ? "reaches the kernel" : f.detail; }

}  // namespace

int doctor_command(const DoctorArgs& args) {
    json report;
    utsname uts{};
    ::uname(&uts);
    report["kernel"] = uts.release;

    const int abi = landlock_abi();
    report["landlock_abi"] = abi;
    report["landlock"] = landlock_report(abi);

    const std::string actions = read_small_file("/proc/sys/kernel/seccomp/actions_avail").value_or("");
    const bool seccomp = !actions.empty();
    report["seccomp"] = {
        {"available", seccomp}, {"actions", actions}, {"user_notif", actions.find("user_notif") != std::string::npos}};

    // Another ABI's syscalls: the filter kills them (SIGSYS) where the kernel
    // runs them; some kernels never do (a fault, or ENOSYS without x32).
    const probes::Finding i386 = probes::i386_syscall_runs();
    const probes::Finding x32 = probes::x32_syscall_runs();
    report["other_abis"] = {{"i386_int80", {{"runs", i386.ok}, {"detail", abi_text(i386)}}},
                            {"x32", {{"runs", x32.ok}, {"detail", abi_text(x32)}}},
                            {"note", "without a filter; sbx's filter kills any that runs"}};
    const auto io_uring = read_small_file("/proc/sys/kernel/io_uring_disabled");
    report["io_uring"] = {{"io_uring_disabled", io_uring ? json(*io_uring) : json(nullptr)},
                          {"note", "sbx's filter refuses io_uring in every sandbox either way"}};

    // A sandbox of a user other than root needs a user namespace it can use
    // (a mount namespace in it whose mounts it may change).
    const bool root = ::geteuid() == 0;
    const probes::Finding unprivileged = probes::user_namespace_usable(root);
    const bool userns = root ? probes::can_unshare(CLONE_NEWUSER) : unprivileged.ok;
    report["user_namespaces"] = {
        {"available", userns},
        {"unprivileged", unprivileged.ok},
        {"max_user_namespaces", read_small_file("/proc/sys/user/max_user_namespaces").value_or("unknown")}};
    if (!unprivileged.ok) report["user_namespaces"]["unprivileged_detail"] = unprivileged.detail;
    const auto restrict_userns = read_small_file("/proc/sys/kernel/apparmor_restrict_unprivileged_userns");
    if (restrict_userns) report["user_namespaces"]["apparmor_restrict_unprivileged_userns"] = *restrict_userns;
    const auto apparmor = read_small_file("/sys/module/apparmor/parameters/enabled");
    report["apparmor"] = {{"enabled", apparmor ? json(*apparmor == "Y") : json(nullptr)},
                          {"restrict_unprivileged_userns", restrict_userns ? json(*restrict_userns) : json(nullptr)}};
    // A container (Docker's, Podman's defaults allow no new namespaces), and
    // what a sandbox still is without namespaces (platform/container.h).
    const container::Finding in_container = container::detect(container::read_facts());
    const container::WithoutNamespaces without = container::without_namespaces(abi);
    report["container"] = {{"engine", in_container.engine ? json(*in_container.engine) : json(nullptr)},
                           {"seccomp_filtered", in_container.seccomp_filtered},
                           {"no_new_privs", in_container.no_new_privs}};
    if (!unprivileged.ok)
        report["without_namespaces"] = {{"enforced", without.enforced}, {"not_enforced", without.not_enforced}};

    // Root's --limit-procs is a pids cgroup (linux-helper/cgroup.h); other
    // users' is RLIMIT_NPROC in their user namespace.
    const auto cgroup2 = probes::cgroup2_mount();
    const probes::Finding pids = root ? probes::pids_cgroup_for_root() : probes::Finding{};
    report["cgroup"] = {{"v2", cgroup2 ? json(*cgroup2) : json(nullptr)}};
    if (root) report["cgroup"]["limit_procs_as_root"] = {{"ok", pids.ok}, {"detail", pids.detail}};
    else report["cgroup"]["limit_procs_as_root"] = nullptr;

    const probes::Finding ipv6_host = probes::host_ipv6_loopback();
    const probes::Finding ipv6_sandbox = probes::namespace_ipv6_loopback();
    report["ipv6"] = {{"host_loopback", ipv6_host.ok}, {"sandbox_loopback", ipv6_sandbox.ok}};
    if (!ipv6_host.ok) report["ipv6"]["host_detail"] = ipv6_host.detail;
    if (!ipv6_sandbox.ok) report["ipv6"]["sandbox_detail"] = ipv6_sandbox.detail;
    const bool dev_shm = probes::exists("/dev/shm");
    report["dev_shm"] = dev_shm;

    report["audit"] = audit_report();

    std::string helper;
    try {
        helper = find_linux_helper();
        report["helper"] = {{"path", helper}, {"found", true}};
    } catch (const std::exception& e) {
        report["helper"] = {{"path", nullptr}, {"found", false}, {"error", e.what()}};
    }
    // Ubuntu's restriction of unprivileged user namespaces, and the
    // helper's profile that lifts it for the helper alone.
    const std::string helper_path = helper.empty() ? std::string(SBX_HELPER_DIR) + "/" + SBX_HELPER_NAME : helper;
    const apparmor::UsernsFacts aa_facts =
        apparmor::read_userns_facts(SBX_APPARMOR_PROFILE, false, container::sign(in_container));
    const apparmor::UsernsRestriction aa = apparmor::assess(aa_facts, helper_path);
    const std::string aa_fix = apparmor::userns_fix(aa, helper_path, SBX_APPARMOR_PROFILE);
    auto known = [](apparmor::Known k) {
        return k == apparmor::Known::Unknown ? json(nullptr) : json(k == apparmor::Known::Yes);
    };
    report["apparmor"]["userns_restricted"] = aa.restricted;
    if (aa.restricted) {
        report["apparmor"]["helper_profile"] = {{"name", apparmor::kProfileName},
                                                {"file", SBX_APPARMOR_PROFILE},
                                                {"installed", aa_facts.profile_text.has_value()},
                                                {"attaches", aa.attaches ? json(*aa.attaches) : json(nullptr)},
                                                {"covers_helper", aa.installed_covers == apparmor::Known::Yes},
                                                {"loaded", known(aa.loaded)}};
        report["apparmor"]["fix"] = aa_fix;
    }
    report["sandbox_exec"] = {
        {"path", "/usr/bin/sandbox-exec"}, {"present", is_executable("/usr/bin/sandbox-exec")}, {"note", "macOS only"}};

    std::vector<probes::Probe> probes;
    if (!helper.empty()) {
        probes::TempDir ws, outside;
        if (ws.path().empty() || outside.path().empty()) {
            probes::Probe p{"all"};
            p.check("scratch directories", false, "cannot create a directory in $TMPDIR or /tmp");
            probes.push_back(p);
        } else {
            probes::HostListener host;
            const probes::ProbeTarget sandbox{TargetOs::Linux, PlatformPaths{helper, {}}};
            probes.push_back(probes::probe_read_only(sandbox, ws.path()));
            probes.push_back(probes::probe_workspace_write(sandbox, ws.path(), outside.path()));
            probes.push_back(probes::probe_network(sandbox, ws.path(), host, Network::Restricted));
            probes.push_back(probes::probe_network(sandbox, ws.path(), host, Network::Limited));
        }
    } else {
        probes::Probe p{"all"};
        p.check("the helper is installed", false, report["helper"]["error"].get<std::string>());
        probes.push_back(p);
    }
    bool all = true;
    report["probes"] = json::array();
    for (const auto& p : probes) {
        report["probes"].push_back(probes::to_json(p));
        all = all && p.enforced;
    }
    report["not_enforced_without_user_namespaces"] = {"protected paths",
                                                      "metadata changes (chmod, chown, utimes, xattrs)"};
    report["enforced"] = all;

    if (args.json) {
        fmt::print("{}\n", report.dump(2));
        return all ? 0 : 1;
    }
    fmt::print("kernel:           {}\n", uts.release);
    fmt::print("landlock:         {}\n", landlock_text(abi));
    fmt::print("seccomp:          {}\n", seccomp ? "yes (actions: " + actions + ")" : std::string("no"));
    fmt::print("other ABIs:       i386 int $0x80: {}; x32: {} (without a filter; sbx's filter kills any that runs)\n",
               abi_text(i386), abi_text(x32));
    fmt::print("io_uring:         {} (sbx's filter refuses it in every sandbox)\n",
               io_uring ? "kernel.io_uring_disabled=" + *io_uring : std::string("no kernel.io_uring_disabled"));
    fmt::print("user namespaces:  {} (unprivileged users: {})\n", yes_no(userns),
               unprivileged.ok ? std::string("yes") : "no: " + unprivileged.detail);
    if (!unprivileged.ok) {
        fmt::print(
            "                  without them sbx refuses sandboxes that need them; --allow-unprotected runs with "
            "Landlock and seccomp alone\n");
        fmt::print("                  enforced then: {}\n", fmt::join(without.enforced, "; "));
        fmt::print("                  not enforced:  {}\n", fmt::join(without.not_enforced, "; "));
    }
    fmt::print("apparmor:         {}{}\n",
               !apparmor          ? "not in this kernel"
               : *apparmor == "Y" ? "enabled"
                                  : "not enabled",
               restrict_userns ? "; kernel.apparmor_restrict_unprivileged_userns=" + *restrict_userns : "");
    if (aa.restricted) {
        fmt::print("                  unprivileged user namespaces are restricted; sbx's profile {}: {}; {}: {}\n",
                   apparmor::kProfileName,
                   aa.loaded == apparmor::Known::Yes  ? "loaded"
                   : aa.loaded == apparmor::Known::No ? "not loaded"
                                                      : "loaded or not: unknown (only root may list the profiles)",
                   SBX_APPARMOR_PROFILE,
                   !aa_facts.profile_text ? std::string("not installed")
                   : aa.attaches          ? "installed, for " + *aa.attaches
                                          : std::string("installed, without a profile named sbx-helper"));
        if (!unprivileged.ok || aa.loaded != apparmor::Known::Yes) fmt::print("                  fix: {}\n", aa_fix);
    }
    fmt::print("container:        {}{}\n",
               in_container.engine ? "yes: " + *in_container.engine : std::string("none seen"),
               in_container.seccomp_filtered
                   ? std::string("; sbx itself runs under a seccomp filter (as a container's processes do)")
                   : std::string());
    fmt::print("cgroup:           {}; --limit-procs as root: {}\n",
               cgroup2 ? "v2 at " + *cgroup2 : std::string("no cgroup v2"),
               !root     ? std::string("not root (other users: RLIMIT_NPROC in their user namespace)")
               : pids.ok ? "a pids cgroup in " + pids.detail
                         : "refused: " + pids.detail);
    fmt::print("ipv6:             host ::1: {}; a sandbox's own ::1 (-n limited): {}\n",
               ipv6_host.ok ? std::string("yes") : "no (" + ipv6_host.detail + ")",
               ipv6_sandbox.ok ? std::string("yes") : "no (" + ipv6_sandbox.detail + ")");
    fmt::print("/dev/shm:         {}\n", dev_shm ? "present" : "absent");
    fmt::print("audit:            {}\n", report["audit"]["summary"].get<std::string>());
    fmt::print("helper:           {}\n",
               helper.empty() ? "not found: " + report["helper"]["error"].get<std::string>() : helper);
    fmt::print("sandbox-exec:     {} (macOS only)\n", is_executable("/usr/bin/sandbox-exec") ? "present" : "absent");
    for (const auto& p : probes) fmt::print("{}", probes::to_text(p));
    fmt::print("{}\n", all ? "every mode is enforced" : "some modes are NOT enforced");
    return all ? 0 : 1;
}

}  // namespace sbx::cli
