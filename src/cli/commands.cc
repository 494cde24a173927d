// The policy and check commands, and what every command shares: resolving the
// policy options and finding the helper.
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli/options.h"
#include "platform/seatbelt.h"
#include "policy/check.h"
#include "report/fix.h"
#include "sbx_config.h"

namespace sbx::cli {

namespace {

std::string read_policy_file(const std::string& path, const std::string& source) {
    std::ifstream f(path, std::ios::binary);
    if (!f) throw Error(fmt::format("{}: cannot read: {}", source, std::strerror(errno)));
    std::ostringstream s;
    s << f.rdbuf();
    if (f.bad()) throw Error(fmt::format("{}: cannot read: {}", source, std::strerror(errno)));
    return s.str();
}

bool executable_file(const std::string& path) { return ::access(path.c_str(), X_OK) == 0; }

}  // namespace

ResolvedPolicyArgs resolve_policy_args(const PolicyArgs& args, const std::string& workspace_cwd) {
    Environment env = system_environment();
    env.cwd = workspace_cwd;
    PolicyInput input;

    std::optional<std::string> file = args.policy_file;
    std::string file_source = "--policy-file " + file.value_or("");
    if (!file) {
        if (const char* f = std::getenv("SBX_POLICY_FILE"); f && *f) {
            file = f;
            file_source = fmt::format("$SBX_POLICY_FILE ({})", f);
        }
    }
    // A document's own derived keys must agree with that document alone.
    // (as it will be once the writable roots it names are made).
    auto load = [&env](const std::string& text, const std::string& source) {
        const auto missing = missing_writable_roots(input_from_document_text(text, source, env.cwd), env);
        return read_policy_document(text, source, with_directories(env, missing)).input;
    };
    if (file) input.merge(load(read_policy_file(*file, file_source), file_source));
    if (args.policy_json) input.merge(load(*args.policy_json, "--policy-json"));
    input.merge(args.flags);
    // Every source is in: a mode none of them named is the default, and
    // writable roots under it are a contradiction that resolve() reports.
    // (A list of entries decides the mode itself: resolve() derives it.)
    if (!input.mode && !input.entries) {
        input.mode = Mode::ReadOnly;
        input.mode_source = "default";
    }
    // A writable root named but not made yet (~/.cache/pip on a fresh CI
    // runner): made by sbx run, the last component only, where this user may.
    std::vector<std::string> missing;
    if (input.mode == Mode::WorkspaceWrite || input.entries) missing = missing_writable_roots(input, env);
    for (const auto& dir : missing) {
        const std::string parent = parent_path(dir);
        if (::access(parent.c_str(), W_OK) != 0)
            throw Error(
                fmt::format("writable root {}: no such directory, and this user cannot make it in {}: {}; "
                            "make it first",
                            dir, parent, std::strerror(errno)));
    }
    CanonicalPolicy policy = resolve(input, with_directories(env, missing));
    // sbx's state directory inside a writable root is held read-only; a
    // missing one is made by sbx run, so that it alone is held (not the
    // first missing directory above it, ~/.local, say).
    std::vector<std::string> state_dirs;
    if (const auto state = held_state_directory(policy, env);
        state && !state->missing.empty() && ::access(parent_path(state->missing.front()).c_str(), W_OK) == 0) {
        state_dirs = state->missing;
        auto all = missing;
        all.insert(all.end(), state_dirs.begin(), state_dirs.end());
        policy = resolve(input, with_directories(env, all));
    }
    return {std::move(policy), missing, state_dirs};
}

void make_missing_roots(const ResolvedPolicyArgs& resolved) {
    for (const auto& dir : resolved.missing_roots)
        if (::mkdir(dir.c_str(), 0777) != 0 && errno != EEXIST)
            throw Error(fmt::format("writable root {}: cannot make it: {}", dir, std::strerror(errno)));
    for (const auto& dir : resolved.missing_state)
        if (::mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST)
            throw Error(
                fmt::format("sbx's state directory {}: cannot make it: {}; set XDG_STATE_HOME to a "
                            "directory this user may write",
                            dir, std::strerror(errno)));
}

std::string find_linux_helper() {
    if (const char* e = std::getenv("SBX_LINUX_SANDBOX_EXE"); e && *e) {
        std::string path = e;
        if (path.front() != '/') throw Error(fmt::format("$SBX_LINUX_SANDBOX_EXE: '{}' is not an absolute path", path));
        if (!executable_file(path))
            throw Error(fmt::format("$SBX_LINUX_SANDBOX_EXE: {}: not an executable file", path));
        return path;
    }
    std::string installed = std::string(SBX_HELPER_DIR) + "/" + SBX_HELPER_NAME;
    if (executable_file(installed)) return installed;
    // The kernel's name for sbx's own executable is already absolute and free
    // of symlinks (resolving it again through /proc costs more than the rest
    // of the lookup).  A deleted sbx reads "... (deleted)" and finds no helper.
    std::string self(PATH_MAX, '\0');
    const ssize_t n = ::readlink("/proc/self/exe", self.data(), self.size());
    if (n > 0 && static_cast<std::size_t>(n) < self.size()) {
        self.resize(static_cast<std::size_t>(n));
        const std::string dir = self.substr(0, self.rfind('/') + 1);
        std::string beside = dir + SBX_HELPER_NAME;
        if (executable_file(beside)) return beside;
        // The release archive unpacked anywhere: PREFIX/bin/sbx and
        // PREFIX/libexec/sbx/codex-linux-sandbox.
        const std::size_t parent_end = dir.size() >= 2 ? dir.rfind('/', dir.size() - 2) : std::string::npos;
        if (parent_end != std::string::npos) {
            std::string relative = dir.substr(0, parent_end + 1) + "libexec/sbx/" + SBX_HELPER_NAME;
            if (executable_file(relative)) return relative;
        }
    }
    throw Error(
        fmt::format("the Linux helper {} was not found in {}, beside sbx nor in ../libexec/sbx from it; install "
                    "sbx with 'meson install' or its package, or set $SBX_LINUX_SANDBOX_EXE",
                    SBX_HELPER_NAME, SBX_HELPER_DIR));
}

int policy_command(const PolicyCommandArgs& args) {
    const ResolvedPolicyArgs resolved = resolve_policy_args(args.policy, system_environment().cwd);
    const CanonicalPolicy& p = resolved.policy;
    if (args.json) {
        fmt::print("{}\n", to_json_text(p));
    } else if (args.seatbelt) {
        if (p.mode == Mode::DangerFullAccess)
            throw Error("--seatbelt: danger-full-access runs without a sandbox, so it has no profile");
        fmt::print("{}", seatbelt_profile(p));
    } else {
        fmt::print("{}", to_text(p));
        for (const auto& dir : resolved.missing_roots)
            fmt::print("note: {} does not exist yet; sbx run makes it\n", dir);
    }
    return 0;
}

int check_command(const CheckArgs& args) {
    Environment env = system_environment();
    const CanonicalPolicy p = resolve_policy_args(args.policy, env.cwd).policy;
    bool all = true;
    nlohmann::json answers = nlohmann::json::array();
    for (const auto& q : args.queries) {
        Access a = q.kind == CheckQuery::Kind::Read    ? Access::Read
                   : q.kind == CheckQuery::Kind::Write ? Access::Write
                   : q.kind == CheckQuery::Kind::Exec  ? Access::Exec
                                                       : Access::Connect;
        Verdict v = check_access(p, a, q.target, env);
        all = all && v.allowed;
        // What a denial of it would say (report/fix.h): the same flag sbx run's summary gives.
        std::string fix;
        if (!v.allowed) {
            Denial d;
            d.operation = a == Access::Write ? "write" : a == Access::Exec ? "fs.execute" : to_string(a);
            (a == Access::Connect ? d.address : d.path) = v.subject;
            fix = fix_for(p, d, env).text();
        }
        if (args.json) {
            nlohmann::json answer{{"access", to_string(a)},
                                  {"target", q.target},
                                  {"resolved", v.subject},
                                  {"allowed", v.allowed},
                                  {"rule", v.rule}};
            if (!fix.empty()) answer["fix"] = fix;
            answers.push_back(std::move(answer));
        } else {
            fmt::print("{:<8} {:<8} {}  ({}{})\n", v.allowed ? "allowed" : "denied", to_string(a), v.subject, v.rule,
                       fix.empty() ? "" : "; " + allow_clause(fix));
        }
    }
    if (args.json) fmt::print("{}\n", answers.dump(2));
    return all ? 0 : 1;
}

}  // namespace sbx::cli
