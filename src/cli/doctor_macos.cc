// sbx doctor on macOS: /usr/bin/sandbox-exec is there, and a live probe
// proves workspace-write through it (a write in the workspace works, one
// outside it is refused, the protected names hold) and read-only.  Exit 0
// only when both are enforced.  (Never run on a Mac in development: docs/macos.md.)
#include <sys/utsname.h>

#include <string>
#include <vector>

#include <fmt/core.h>
#include <nlohmann/json.hpp>

#include "cli/doctor_report.h"
#include "cli/options.h"
#include "cli/probes.h"
#include "exec/backend.h"

namespace sbx::cli {
namespace {

// The live probes through sandbox-exec, in scratch directories.
std::vector<probes::Probe> run_probes(const PlatformPaths& paths, bool sandbox_exec) {
    if (!sandbox_exec)
        return {probes::probe_not_run("sandbox-exec", "sandbox-exec is installed",
                                      paths.sandbox_exec + " is missing or not executable")};
    probes::TempDir ws, outside;
    const probes::ProbeTarget sandbox{TargetOs::MacOs, paths};
    return {probes::probe_read_only(sandbox, ws.path()),
            probes::probe_workspace_write(sandbox, ws.path(), outside.path())};
}

}  // namespace

int doctor_command(const DoctorArgs& args) {
    utsname uts{};
    ::uname(&uts);
    const PlatformPaths paths{};
    const bool sandbox_exec = probes::is_executable(paths.sandbox_exec.c_str());
    DoctorReport report;
    report.facts = {{"platform", "macos"},
                    {"kernel", uts.release},
                    {"supervisor", exec::kSupervisorBackend},
                    {"sandbox_exec", {{"path", paths.sandbox_exec}, {"found", sandbox_exec}}}};
    report.facts_text = fmt::format("kernel:           Darwin {}\n", uts.release);
    report.facts_text +=
        fmt::format("sandbox-exec:     {}\n", sandbox_exec ? paths.sandbox_exec : "missing: " + paths.sandbox_exec);
    report.facts_text += fmt::format("supervisor:       {}\n", exec::kSupervisorBackend);
    report.probes = run_probes(paths, sandbox_exec);
    return print_doctor_report(report, args.json);
}

}  // namespace sbx::cli
