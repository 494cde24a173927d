// sbx doctor on macOS: /usr/bin/sandbox-exec is there, and a live probe
// proves workspace-write through it (a write in the workspace works, one
// outside it is refused, the protected names hold) and read-only.  Exit 0
// only when both are enforced.  (Never run on a Mac in development: docs/macos.md.)
#include <sys/utsname.h>

#include <string>
#include <vector>

#include <fmt/core.h>
#include <nlohmann/json.hpp>

#include "cli/options.h"
#include "cli/probes.h"
#include "exec/backend.h"

namespace sbx::cli {

int doctor_command(const DoctorArgs& args) {
    nlohmann::json report;
    utsname uts{};
    ::uname(&uts);
    report["platform"] = "macos";
    report["kernel"] = uts.release;
    report["supervisor"] = exec::kSupervisorBackend;
    const PlatformPaths paths{};
    const bool sandbox_exec = probes::is_executable(paths.sandbox_exec.c_str());
    report["sandbox_exec"] = {{"path", paths.sandbox_exec}, {"found", sandbox_exec}};
    std::vector<probes::Probe> results;
    if (sandbox_exec) {
        probes::TempDir ws, outside;
        const probes::ProbeTarget sandbox{TargetOs::MacOs, paths};
        results.push_back(probes::probe_read_only(sandbox, ws.path()));
        results.push_back(probes::probe_workspace_write(sandbox, ws.path(), outside.path()));
    } else {
        probes::Probe p{"sandbox-exec"};
        p.check("sandbox-exec is installed", false, paths.sandbox_exec + " is missing or not executable");
        results.push_back(p);
    }
    bool all = true;
    report["probes"] = nlohmann::json::array();
    for (const auto& p : results) {
        report["probes"].push_back(probes::to_json(p));
        all = all && p.enforced;
    }
    report["enforced"] = all;
    if (args.json) {
        fmt::print("{}\n", report.dump(2));
        return all ? 0 : 1;
    }
    fmt::print("kernel:           Darwin {}\n", uts.release);
    fmt::print("sandbox-exec:     {}\n", sandbox_exec ? paths.sandbox_exec : "missing: " + paths.sandbox_exec);
    fmt::print("supervisor:       {}\n", exec::kSupervisorBackend);
    for (const auto& p : results) fmt::print("{}", probes::to_text(p));
    fmt::print("{}\n", all ? "every mode is enforced" : "some modes are NOT enforced");
    return all ? 0 : 1;
}

}  // namespace sbx::cli
