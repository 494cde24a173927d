// sbx doctor: what this machine can enforce, proved by a live probe per mode
// through the real helper (cli/probes.h).  Exit 0 only when every mode
// is enforced.
#include <sched.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <optional>
#include <string>
#include <vector>

#include <fmt/core.h>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli/doctor_report.h"
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

// What doctor finds out, gathered first (in the order below: the probes
// that start children come where they always did), then rendered as JSON
// and as text from these alone.

// The kernel's sandboxing features, and another ABI's syscalls.
struct KernelFacts {
    std::string release;
    int landlock_abi = 0;
    std::string seccomp_actions;  // empty: no seccomp
    probes::Finding i386, x32;    // getpid through them, without a filter
    std::optional<std::string> io_uring_disabled;
};

// Whether a sandbox can have its namespaces here, and what stands in the way.
struct NamespaceFacts {
    bool root = false;
    bool available = false;        // a user namespace this user can make
    probes::Finding unprivileged;  // usable by a user other than root
    std::string max_user_namespaces;
    std::optional<std::string> restrict_userns;   // AppArmor's sysctl
    std::optional<std::string> apparmor_enabled;  // "Y": on
    container::Finding container;
    container::WithoutNamespaces without;  // what a sandbox is without them
};

// The rest of the machine: cgroups, loopbacks, /dev/shm, audit.
struct MachineFacts {
    std::optional<std::string> cgroup2;
    probes::Finding pids;  // root's --limit-procs (not probed for others)
    probes::Finding ipv6_host, ipv6_sandbox;
    bool dev_shm = false;
    probes::AuditFacts audit;
    AuditStatus audit_status;
};

// The helper, and AppArmor's view of it.
struct HelperFacts {
    std::string path;   // empty: not found
    std::string error;  // why not
    apparmor::UsernsFacts apparmor;
    apparmor::UsernsRestriction restriction;
    std::string fix;  // the restriction lifted for the helper alone
    bool sandbox_exec = false;
};

struct LinuxFacts {
    KernelFacts kernel;
    NamespaceFacts ns;
    MachineFacts machine;
    HelperFacts helper;
};

KernelFacts kernel_facts() {
    KernelFacts k;
    utsname uts{};
    ::uname(&uts);
    k.release = uts.release;
    k.landlock_abi = landlock_abi();
    k.seccomp_actions = read_small_file("/proc/sys/kernel/seccomp/actions_avail").value_or("");
    k.i386 = probes::i386_syscall_runs();
    k.x32 = probes::x32_syscall_runs();
    k.io_uring_disabled = read_small_file("/proc/sys/kernel/io_uring_disabled");
    return k;
}

// A sandbox of a user other than root needs a user namespace it can use
// (a mount namespace in it whose mounts it may change).
NamespaceFacts namespace_facts(int abi) {
    NamespaceFacts ns;
    ns.root = ::geteuid() == 0;
    ns.unprivileged = probes::user_namespace_usable(ns.root);
    ns.available = ns.root ? probes::can_unshare(CLONE_NEWUSER) : ns.unprivileged.ok;
    ns.max_user_namespaces = read_small_file("/proc/sys/user/max_user_namespaces").value_or("unknown");
    ns.restrict_userns = read_small_file("/proc/sys/kernel/apparmor_restrict_unprivileged_userns");
    ns.apparmor_enabled = read_small_file("/sys/module/apparmor/parameters/enabled");
    // A container (Docker's, Podman's defaults allow no new namespaces), and
    // what a sandbox still is without namespaces (platform/container.h).
    ns.container = container::detect(container::read_facts());
    ns.without = container::without_namespaces(abi);
    return ns;
}

// Root's --limit-procs is a pids cgroup (linux-helper/cgroup.h); other
// users' is RLIMIT_NPROC in their user namespace.
MachineFacts machine_facts(bool root) {
    MachineFacts m;
    m.cgroup2 = probes::cgroup2_mount();
    if (root) m.pids = probes::pids_cgroup_for_root();
    m.ipv6_host = probes::host_ipv6_loopback();
    m.ipv6_sandbox = probes::namespace_ipv6_loopback();
    m.dev_shm = probes::exists("/dev/shm");
    m.audit = probes::audit_facts();
    // What sbx itself reads: the audit netlink log (platform/audit.h).
    m.audit_status = audit_status();
    return m;
}

// Ubuntu's restriction of unprivileged user namespaces, and the helper's
// profile that lifts it for the helper alone.
HelperFacts helper_facts(const container::Finding& in_container) {
    HelperFacts h;
    try {
        h.path = find_linux_helper();
    } catch (const std::exception& e) {
        h.error = e.what();
    }
    const std::string helper_path = h.path.empty() ? std::string(SBX_HELPER_DIR) + "/" + SBX_HELPER_NAME : h.path;
    h.apparmor = apparmor::read_userns_facts(SBX_APPARMOR_PROFILE, false, container::sign(in_container));
    h.restriction = apparmor::assess(h.apparmor, helper_path);
    h.fix = apparmor::userns_fix(h.restriction, helper_path, SBX_APPARMOR_PROFILE);
    h.sandbox_exec = is_executable("/usr/bin/sandbox-exec");
    return h;
}

LinuxFacts linux_facts() {
    LinuxFacts f;
    f.kernel = kernel_facts();
    f.ns = namespace_facts(f.kernel.landlock_abi);
    f.machine = machine_facts(f.ns.root);
    f.helper = helper_facts(f.ns.container);
    return f;
}

// The live probes through the helper, in scratch directories.
std::vector<probes::Probe> run_probes(const HelperFacts& helper) {
    if (helper.path.empty()) return {probes::probe_not_run("all", "the helper is installed", helper.error)};
    probes::TempDir ws, outside;
    if (ws.path().empty() || outside.path().empty())
        return {probes::probe_not_run("all", "scratch directories", "cannot create a directory in $TMPDIR or /tmp")};
    probes::HostListener host;
    const probes::ProbeTarget sandbox{TargetOs::Linux, PlatformPaths{helper.path, {}}};
    return {probes::probe_read_only(sandbox, ws.path()),
            probes::probe_workspace_write(sandbox, ws.path(), outside.path()),
            probes::probe_network(sandbox, ws.path(), host, Network::Restricted),
            probes::probe_network(sandbox, ws.path(), host, Network::Limited)};
}

json optional_json(const std::optional<std::string>& s) { return s ? json(*s) : json(nullptr); }

// Audit is one source of exact denials; the helper's recorder
// (--record-denials) is the other, and needs no audit.
std::string audit_summary(const AuditStatus& status) {
    return status.denials_listed()
               ? fmt::format("exact denials listed: {}", status.detail)
               : fmt::format("exact denials listed with --record-denials; from audit not listed: {}", status.detail);
}

json audit_json(const MachineFacts& m) {
    const probes::AuditFacts& facts = m.audit;
    const AuditStatus& status = m.audit_status;
    json audit;
    audit["auditd"] = facts.auditd;
    audit["audit_log_readable"] = facts.audit_log_readable;
    audit["kernel_log_readable"] = facts.kernel_log_readable;
    audit["dmesg_restrict"] = facts.dmesg_restrict;
    // Without auditd, kauditd prints the records (Landlock: types 1423/1424)
    // to the kernel log, rate-limited.  With audit off there are none.
    audit["landlock_records_readable"] =
        status.enabled != false && (facts.auditd ? facts.audit_log_readable : facts.kernel_log_readable);
    std::string where;
    if (facts.auditd)
        where = facts.audit_log_readable ? "/var/log/audit/audit.log (auditd), readable by this user"
                                         : "/var/log/audit/audit.log (auditd), not readable by this user";
    else
        where = facts.kernel_log_readable
                    ? "the kernel log (no auditd; rate-limited), readable by this user"
                    : "the kernel log (no auditd), which this user may not read (kernel.dmesg_restrict)";
    if (status.enabled == false) where = "none while audit is off; with it on: " + where;
    audit["enabled"] = status.enabled ? json(*status.enabled) : json(nullptr);
    audit["readable_by_sbx"] = status.readable;
    audit["denials_listed"] = status.denials_listed();
    audit["records"] = where;
    audit["summary"] = audit_summary(status);
    return audit;
}

// Another ABI's syscalls: the filter kills them (SIGSYS) where the kernel
// runs them; some kernels never do (a fault, or ENOSYS without x32).
json kernel_json(const KernelFacts& k) {
    const std::string& actions = k.seccomp_actions;
    return {{"kernel", k.release},
            {"landlock_abi", k.landlock_abi},
            {"landlock", landlock_report(k.landlock_abi)},
            {"seccomp",
             {{"available", !actions.empty()},
              {"actions", actions},
              {"user_notif", actions.find("user_notif") != std::string::npos}}},
            {"other_abis",
             {{"i386_int80", {{"runs", k.i386.ok}, {"detail", abi_text(k.i386)}}},
              {"x32", {{"runs", k.x32.ok}, {"detail", abi_text(k.x32)}}},
              {"note", "without a filter; sbx's filter kills any that runs"}}},
            {"io_uring",
             {{"io_uring_disabled", optional_json(k.io_uring_disabled)},
              {"note", "sbx's filter refuses io_uring in every sandbox either way"}}}};
}

json apparmor_json(const NamespaceFacts& ns, const HelperFacts& h) {
    const apparmor::UsernsRestriction& aa = h.restriction;
    json j = {{"enabled", ns.apparmor_enabled ? json(*ns.apparmor_enabled == "Y") : json(nullptr)},
              {"restrict_unprivileged_userns", optional_json(ns.restrict_userns)},
              {"userns_restricted", aa.restricted}};
    if (!aa.restricted) return j;
    const json loaded = aa.loaded == apparmor::Known::Unknown ? json(nullptr) : json(aa.loaded == apparmor::Known::Yes);
    j["helper_profile"] = {{"name", apparmor::kProfileName},
                           {"file", SBX_APPARMOR_PROFILE},
                           {"installed", h.apparmor.profile_text.has_value()},
                           {"attaches", optional_json(aa.attaches)},
                           {"covers_helper", aa.installed_covers == apparmor::Known::Yes},
                           {"loaded", loaded}};
    j["fix"] = h.fix;
    return j;
}

json namespaces_json(const NamespaceFacts& ns) {
    json j = {{"available", ns.available},
              {"unprivileged", ns.unprivileged.ok},
              {"max_user_namespaces", ns.max_user_namespaces}};
    if (!ns.unprivileged.ok) j["unprivileged_detail"] = ns.unprivileged.detail;
    if (ns.restrict_userns) j["apparmor_restrict_unprivileged_userns"] = *ns.restrict_userns;
    return j;
}

json machine_json(const MachineFacts& m, bool root) {
    json j;
    j["cgroup"] = {{"v2", optional_json(m.cgroup2)}};
    j["cgroup"]["limit_procs_as_root"] = root ? json{{"ok", m.pids.ok}, {"detail", m.pids.detail}} : json(nullptr);
    j["ipv6"] = {{"host_loopback", m.ipv6_host.ok}, {"sandbox_loopback", m.ipv6_sandbox.ok}};
    if (!m.ipv6_host.ok) j["ipv6"]["host_detail"] = m.ipv6_host.detail;
    if (!m.ipv6_sandbox.ok) j["ipv6"]["sandbox_detail"] = m.ipv6_sandbox.detail;
    j["dev_shm"] = m.dev_shm;
    j["audit"] = audit_json(m);
    return j;
}

json facts_json(const LinuxFacts& f) {
    json report = kernel_json(f.kernel);
    report.update(machine_json(f.machine, f.ns.root));
    report["user_namespaces"] = namespaces_json(f.ns);
    report["apparmor"] = apparmor_json(f.ns, f.helper);
    report["container"] = {{"engine", optional_json(f.ns.container.engine)},
                           {"seccomp_filtered", f.ns.container.seccomp_filtered},
                           {"no_new_privs", f.ns.container.no_new_privs}};
    if (!f.ns.unprivileged.ok)
        report["without_namespaces"] = {{"enforced", f.ns.without.enforced},
                                        {"not_enforced", f.ns.without.not_enforced}};
    report["helper"] = f.helper.path.empty() ? json{{"path", nullptr}, {"found", false}, {"error", f.helper.error}}
                                             : json{{"path", f.helper.path}, {"found", true}};
    report["sandbox_exec"] = {
        {"path", "/usr/bin/sandbox-exec"}, {"present", f.helper.sandbox_exec}, {"note", "macOS only"}};
    report["not_enforced_without_user_namespaces"] = {"protected paths",
                                                      "metadata changes (chmod, chown, utimes, xattrs)"};
    return report;
}

std::string kernel_text(const KernelFacts& k) {
    const std::string& actions = k.seccomp_actions;
    std::string text = fmt::format("kernel:           {}\n", k.release);
    text += fmt::format("landlock:         {}\n", landlock_text(k.landlock_abi));
    text +=
        fmt::format("seccomp:          {}\n", !actions.empty() ? "yes (actions: " + actions + ")" : std::string("no"));
    text += fmt::format(
        "other ABIs:       i386 int $0x80: {}; x32: {} (without a filter; sbx's filter kills any that runs)\n",
        abi_text(k.i386), abi_text(k.x32));
    text += fmt::format("io_uring:         {} (sbx's filter refuses it in every sandbox)\n",
                        k.io_uring_disabled ? "kernel.io_uring_disabled=" + *k.io_uring_disabled
                                            : std::string("no kernel.io_uring_disabled"));
    return text;
}

std::string namespaces_text(const NamespaceFacts& ns) {
    std::string text = fmt::format("user namespaces:  {} (unprivileged users: {})\n", yes_no(ns.available),
                                   ns.unprivileged.ok ? std::string("yes") : "no: " + ns.unprivileged.detail);
    if (!ns.unprivileged.ok) {
        text +=
            "                  without them sbx refuses sandboxes that need them; --allow-unprotected runs with "
            "Landlock and seccomp alone\n";
        text += fmt::format("                  enforced then: {}\n", fmt::join(ns.without.enforced, "; "));
        text += fmt::format("                  not enforced:  {}\n", fmt::join(ns.without.not_enforced, "; "));
    }
    return text;
}

std::string apparmor_text(const NamespaceFacts& ns, const HelperFacts& h) {
    const apparmor::UsernsRestriction& aa = h.restriction;
    std::string text =
        fmt::format("apparmor:         {}{}\n",
                    !ns.apparmor_enabled          ? "not in this kernel"
                    : *ns.apparmor_enabled == "Y" ? "enabled"
                                                  : "not enabled",
                    ns.restrict_userns ? "; kernel.apparmor_restrict_unprivileged_userns=" + *ns.restrict_userns : "");
    if (!aa.restricted) return text;
    text += fmt::format("                  unprivileged user namespaces are restricted; sbx's profile {}: {}; {}: {}\n",
                        apparmor::kProfileName,
                        aa.loaded == apparmor::Known::Yes  ? "loaded"
                        : aa.loaded == apparmor::Known::No ? "not loaded"
                                                           : "loaded or not: unknown (only root may list the profiles)",
                        SBX_APPARMOR_PROFILE,
                        !h.apparmor.profile_text ? std::string("not installed")
                        : aa.attaches            ? "installed, for " + *aa.attaches
                                                 : std::string("installed, without a profile named sbx-helper"));
    if (!ns.unprivileged.ok || aa.loaded != apparmor::Known::Yes)
        text += fmt::format("                  fix: {}\n", h.fix);
    return text;
}

std::string machine_text(const MachineFacts& m, bool root) {
    std::string text = fmt::format("cgroup:           {}; --limit-procs as root: {}\n",
                                   m.cgroup2 ? "v2 at " + *m.cgroup2 : std::string("no cgroup v2"),
                                   !root ? std::string("not root (other users: RLIMIT_NPROC in their user namespace)")
                                   : m.pids.ok ? "a pids cgroup in " + m.pids.detail
                                               : "refused: " + m.pids.detail);
    text += fmt::format("ipv6:             host ::1: {}; a sandbox's own ::1 (-n limited): {}\n",
                        m.ipv6_host.ok ? std::string("yes") : "no (" + m.ipv6_host.detail + ")",
                        m.ipv6_sandbox.ok ? std::string("yes") : "no (" + m.ipv6_sandbox.detail + ")");
    text += fmt::format("/dev/shm:         {}\n", m.dev_shm ? "present" : "absent");
    text += fmt::format("audit:            {}\n", audit_summary(m.audit_status));
    return text;
}

std::string facts_text(const LinuxFacts& f) {
    const container::Finding& in_container = f.ns.container;
    std::string text = kernel_text(f.kernel) + namespaces_text(f.ns) + apparmor_text(f.ns, f.helper);
    text += fmt::format("container:        {}{}\n",
                        in_container.engine ? "yes: " + *in_container.engine : std::string("none seen"),
                        in_container.seccomp_filtered
                            ? std::string("; sbx itself runs under a seccomp filter (as a container's processes do)")
                            : std::string());
    text += machine_text(f.machine, f.ns.root);
    text +=
        fmt::format("helper:           {}\n", f.helper.path.empty() ? "not found: " + f.helper.error : f.helper.path);
    text += fmt::format("sandbox-exec:     {} (macOS only)\n", f.helper.sandbox_exec ? "present" : "absent");
    return text;
}

}  // namespace

int doctor_command(const DoctorArgs& args) {
    const LinuxFacts facts = linux_facts();
    return print_doctor_report({facts_json(facts), facts_text(facts), run_probes(facts.helper)}, args.json);
}

}  // namespace sbx::cli
