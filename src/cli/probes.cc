// The machine probes both platforms share (cli/probes.h); the Linux
// rest is probes_linux.cc.
#include "cli/probes.h"

#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "denial/helper_status.h"
#include "exec/supervisor.h"
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

Probe probe_not_run(const std::string& mode, const std::string& check, const std::string& why) {
    Probe p{mode};
    p.check(check, false, why);
    return p;
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

bool is_executable(const char* path) { return ::access(path, X_OK) == 0; }

nlohmann::json to_json(const Probe& p) {
    nlohmann::json checks = nlohmann::json::array();
    for (const auto& c : p.checks) checks.push_back({{"check", c.name}, {"ok", c.ok}, {"detail", c.detail}});
    return {{"mode", p.mode}, {"enforced", p.enforced}, {"checks", checks}};
}

std::string to_text(const Probe& p) {
    std::string text = "probe " + p.mode + ": " + (p.enforced ? "enforced" : "NOT ENFORCED") + "\n";
    for (const auto& c : p.checks)
        text += "  [" + std::string(c.ok ? "ok" : "FAIL") + "] " + c.name + (c.ok ? "" : " (" + c.detail + ")") + "\n";
    return text;
}

// Runs the sandbox (the helper, or sandbox-exec) with policy input
// `policy_json` (resolved in `workspace`) and the command `argv`, for at
// most 10 s, under the supervisor as sbx run does.
Outcome run_probe(const ProbeTarget& target, const std::string& policy_json, const std::string& workspace,
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
        probe = plan(policy, command, target.os, target.paths);
    } catch (const std::exception& e) {
        outcome.output = e.what();
        return outcome;
    }
    SuperviseOptions opt;
    opt.timeout = std::chrono::seconds(10);
    opt.passthrough = false;
    opt.capture = true;
    opt.caps = {4096, 0};
    opt.child_cleans_up = target.os == TargetOs::Linux;  // the helper's placeholders
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
    if (!o.ran) return "the sandbox did not run: " + o.output;
    std::string text = "exit " + std::to_string(o.exit_code);
    if (!o.output.empty()) text += ": " + o.output.substr(0, o.output.find('\n'));
    return text;
}

namespace {

const char* const kSh = "/bin/sh";

std::vector<std::string> sh_write(const std::string& path) { return {kSh, "-c", "echo probe > \"$1\"", "sh", path}; }

}  // namespace

Probe probe_read_only(const ProbeTarget& sandbox, const std::string& ws) {
    Probe p{"read-only"};
    const std::string target = ws + "/ro-probe";
    Outcome control = run_probe(sandbox, R"({"mode":"read-only"})", ws, {kSh, "-c", "echo ok > /dev/null"});
    p.check("the helper runs a command (and /dev/null is writable)", control.ran && control.exit_code == 0,
            describe(control));
    Outcome write = run_probe(sandbox, R"({"mode":"read-only"})", ws, sh_write(target));
    p.check("a write in the workspace is refused", write.ran && write.exit_code != 0 && !exists(target),
            describe(write));
    return p;
}

Probe probe_workspace_write(const ProbeTarget& sandbox, const std::string& ws, const std::string& outside) {
    Probe p{"workspace-write"};
    const std::string policy = R"({"mode":"workspace-write","exclude_slash_tmp":true,"exclude_tmpdir_env_var":true})";
    const std::string inside = ws + "/ww-probe";
    Outcome write = run_probe(sandbox, policy, ws, sh_write(inside));
    p.check("a write in the workspace works", write.ran && write.exit_code == 0 && exists(inside), describe(write));
    const std::string out = outside + "/ww-probe";
    Outcome escape = run_probe(sandbox, policy, ws, sh_write(out));
    p.check("a write outside the writable roots is refused", escape.ran && escape.exit_code != 0 && !exists(out),
            describe(escape));
    ::mkdir((ws + "/.git").c_str(), 0755);
    const std::string hook = ws + "/.git/probe";
    Outcome git = run_probe(sandbox, policy, ws, sh_write(hook));
    p.check("a write in the protected .git is refused", git.ran && git.exit_code != 0 && !exists(hook), describe(git));
    const std::string sbx_dir = ws + "/.sbx";
    Outcome first = run_probe(sandbox, policy, ws, {kSh, "-c", "mkdir \"$1\"", "sh", sbx_dir});
    p.check("creating a first .sbx is refused", first.ran && first.exit_code != 0 && !exists(sbx_dir), describe(first));
    return p;
}

}  // namespace sbx::probes
