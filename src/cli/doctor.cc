// sbx doctor: what this machine can enforce, proved by a live probe per mode
// through the real helper (platform/probes.h).  Exit 0 only when every mode
// is enforced.
#include <sched.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <string>
#include <vector>

#include <fmt/core.h>
#include <nlohmann/json.hpp>

#include "cli/options.h"
#include "platform/probes.h"
#include "policy/policy.h"
#include "report/denial.h"
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
    audit["summary"] =
        fmt::format("exact denials {}: {}", status.denials_listed() ? "listed" : "not listed", status.detail);
    return audit;
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
    report["seccomp"] = {
        {"available", seccomp}, {"actions", actions}, {"user_notif", actions.find("user_notif") != std::string::npos}};

    const bool userns = probes::can_unshare(CLONE_NEWUSER);
    const bool userns_unprivileged = ::geteuid() == 0 ? probes::can_unshare(CLONE_NEWUSER, true) : userns;
    report["user_namespaces"] = {
        {"available", userns},
        {"unprivileged", userns_unprivileged},
        {"max_user_namespaces", read_small_file("/proc/sys/user/max_user_namespaces").value_or("unknown")}};
    if (auto apparmor = read_small_file("/proc/sys/kernel/apparmor_restrict_unprivileged_userns"))
        report["user_namespaces"]["apparmor_restrict_unprivileged_userns"] = *apparmor;

    report["audit"] = audit_report();

    std::string helper;
    try {
        helper = find_linux_helper();
        report["helper"] = {{"path", helper}, {"found", true}};
    } catch (const std::exception& e) {
        report["helper"] = {{"path", nullptr}, {"found", false}, {"error", e.what()}};
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
    fmt::print("landlock:         {}\n", abi > 0 ? fmt::format("ABI {}", abi) : std::string("not available"));
    fmt::print("seccomp:          {}\n", seccomp ? "yes (actions: " + actions + ")" : std::string("no"));
    fmt::print("user namespaces:  {} (unprivileged users: {})\n", yes_no(userns), yes_no(userns_unprivileged));
    if (!userns_unprivileged)
        fmt::print(
            "                  without them sbx refuses workspace sandboxes unless --allow-unprotected, "
            "which does not enforce protected paths nor metadata changes\n");
    fmt::print("audit:            {}\n", report["audit"]["summary"].get<std::string>());
    fmt::print("helper:           {}\n",
               helper.empty() ? "not found: " + report["helper"]["error"].get<std::string>() : helper);
    fmt::print("sandbox-exec:     {} (macOS only)\n", is_executable("/usr/bin/sandbox-exec") ? "present" : "absent");
    for (const auto& p : probes) fmt::print("{}", probes::to_text(p));
    fmt::print("{}\n", all ? "every mode is enforced" : "some modes are NOT enforced");
    return all ? 0 : 1;
}

}  // namespace sbx::cli
