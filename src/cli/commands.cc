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
#include "denial/fix.h"
#include "platform/seatbelt.h"
#include "policy/check.h"
#include "policy/config.h"
#include "sbx_config.h"
#include "util/private_dirs.h"
#include "util/replace_file.h"
#include "util/sha256.h"

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

namespace {

// The trust store: $XDG_STATE_HOME/sbx/trust (policy/config.h), "" without one.
std::string trust_directory() {
    const std::string state = sbx_state_directory(std::getenv("XDG_STATE_HOME"), std::getenv("HOME"));
    return state.empty() ? "" : state + "/trust";
}

std::optional<TrustRecord> read_trust_record(const std::string& policy_path) {
    const std::string dir = trust_directory();
    if (dir.empty()) return std::nullopt;
    std::ifstream f(dir + "/" + trust_record_name(policy_path), std::ios::binary);
    if (!f) return std::nullopt;
    std::ostringstream s;
    s << f.rdbuf();
    return parse_trust_record(s.str());
}

// The project policy of a workspace, read: where, its input, whether trusted.
struct ProjectPolicy {
    std::string path;     // absolute: the workspace's real path + /.sbx/policy.json
    std::string display;  // as messages name it
    PolicyInput input;
    Trust trust = Trust::Untrusted;
};

std::optional<ProjectPolicy> read_project_policy(const std::string& workspace, const Environment& env) {
    const auto real = env.realpath(workspace);
    if (!real) return std::nullopt;  // resolve() reports the missing workspace
    ProjectPolicy out;
    out.path = join_path(*real, std::string(kProjectPolicyPath));
    if (!env.lexists(out.path)) return std::nullopt;
    out.display = out.path;
    const std::string text = read_policy_file(out.path, out.display);
    out.input = project_input_from_text(text, out.display, *real, env);
    out.trust = trust_of(read_trust_record(out.path), out.path, sha256_hex(text));
    return out;
}

// The writable roots named but not made yet (~/.cache/pip on a fresh CI
// runner): made by sbx run, the last component only, where this user may
// (a -w root that cannot be made is refused).  So is a policy file's write
// entry of a path (as `sbx policy --json` prints a -w root, and sbx learn
// writes one), where this user may; one that cannot be made is left out,
// as it always was.
std::vector<std::string> makeable_missing_roots(const PolicyInput& input, const Environment& env) {
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
    for (auto& dir : missing_write_entries(input, env))
        if (std::find(missing.begin(), missing.end(), dir) == missing.end() &&
            ::access(parent_path(dir).c_str(), W_OK) == 0)
            missing.push_back(std::move(dir));
    return missing;
}

// The user's config directory where a writable root holds it: its path
// (the real path of what exists, the missing names after it) and the
// directories to make; nullopt where it is not to be held.
struct HeldConfigDirectory {
    std::string path;
    std::vector<std::string> to_make;
};

std::optional<HeldConfigDirectory> held_config_directory(const CanonicalPolicy& policy, const Environment& env) {
    const std::string config = sbx_config_directory(std::getenv("XDG_CONFIG_HOME"), std::getenv("HOME"));
    if (config.empty() || !policy.sandboxed_filesystem()) return std::nullopt;
    std::string existing = config;
    std::vector<std::string> names;
    std::optional<std::string> real;
    while (!(real = env.realpath(existing)) && existing != "/") {
        names.push_back(base_name(existing));
        existing = parent_path(existing);
    }
    HeldConfigDirectory held{real.value_or("/"), {}};
    for (auto it = names.rbegin(); it != names.rend(); ++it) {
        held.path = child_path(held.path, *it);
        held.to_make.push_back(held.path);
    }
    if (real && env.is_directory(*real) && decide_path(policy, held.path).access == FsAccess::Write &&
        (held.to_make.empty() || ::access(parent_path(held.to_make.front()).c_str(), W_OK) == 0))
        return held;
    return std::nullopt;
}

// A policy input, every source in, resolved as sbx run will find the
// filesystem: its missing writable roots and sbx's own directories made.
ResolvedPolicyArgs resolve_input(PolicyInput input, const Environment& env) {
    // Every source is in: a mode none of them named is the default, and
    // writable roots under it are a contradiction that resolve() reports.
    // (A list of entries decides the mode itself: resolve() derives it.)
    if (!input.mode && !input.entries) {
        input.mode = Mode::ReadOnly;
        input.mode_source = "default";
    }
    const std::vector<std::string> missing = makeable_missing_roots(input, env);
    std::vector<std::string> state_dirs;
    // Resolved as it will be once sbx run has made these directories.
    auto resolve_made = [&] {
        auto all = missing;
        all.insert(all.end(), state_dirs.begin(), state_dirs.end());
        return resolve(input, with_directories(env, all));
    };
    CanonicalPolicy policy = resolve_made();
    // sbx's state directory inside a writable root is held read-only; a
    // missing one is made by sbx run, so that it alone is held (not the
    // first missing directory above it, ~/.local, say).
    if (const auto state = held_state_directory(policy, env);
        state && !state->missing.empty() && ::access(parent_path(state->missing.front()).c_str(), W_OK) == 0) {
        state_dirs = state->missing;
        policy = resolve_made();
    }
    // The user's config directory likewise (a workspace at $HOME): a read
    // entry holds it read-only inside the writable root, made first (0700)
    // where it is missing, so that no command writes the defaults of a later
    // run.  An entry of the user's own that names it with write wins.
    if (const auto config = held_config_directory(policy, env)) {
        input.extra_entries.push_back(
            {{FsTarget::Kind::Path, config->path}, FsAccess::Read, std::string(kConfigDirectoryRule)});
        state_dirs.insert(state_dirs.end(), config->to_make.begin(), config->to_make.end());
        policy = resolve_made();
    }
    return {std::move(policy), missing, state_dirs};
}

// A policy document's input.  Its own derived keys must agree with that
// document alone (as it will be once the writable roots it names are made).
PolicyInput load_document(const std::string& text, const std::string& source, const Environment& env) {
    const auto missing = missing_writable_roots(input_from_document_text(text, source, env.cwd), env);
    return read_policy_document(text, source, with_directories(env, missing)).input;
}

// The policy's sources on either side of the project policy, and the
// configuration files looked at.
struct PolicySources {
    std::vector<PolicyLayer> before;  // the user's config
    std::vector<PolicyLayer> after;   // the policy file, --policy-json, the flags
    std::vector<std::string> files;
};

void add_user_config(const Environment& env, PolicySources& sources) {
    const std::string dir = sbx_config_directory(std::getenv("XDG_CONFIG_HOME"), std::getenv("HOME"));
    if (dir.empty()) return;
    const std::string path = dir + "/" + std::string(kUserConfigName);
    if (env.lexists(path)) {
        sources.before.push_back({"user config " + path, load_document(read_policy_file(path, path), path, env)});
        sources.files.push_back("user config " + path);
    } else {
        sources.files.push_back("user config " + path + " (none)");
    }
}

void add_given_sources(const PolicyArgs& args, const Environment& env, PolicySources& sources) {
    std::optional<std::string> file = args.policy_file;
    std::string file_source = "--policy-file " + file.value_or("");
    if (!file) {
        if (const char* f = std::getenv("SBX_POLICY_FILE"); f && *f) {
            file = f;
            file_source = fmt::format("$SBX_POLICY_FILE ({})", f);
        }
    }
    if (file)
        sources.after.push_back({file_source, load_document(read_policy_file(*file, file_source), file_source, env)});
    if (args.policy_json)
        sources.after.push_back({"--policy-json", load_document(*args.policy_json, "--policy-json", env)});
    sources.after.push_back({"command line", args.flags});
}

// The workspace the flags (else the user's config) name, else the cwd.
std::string named_workspace(const PolicySources& sources, const Environment& env) {
    std::string workspace = env.cwd;
    for (const auto* layers : {&sources.before, &sources.after})
        for (const auto& l : *layers)
            if (l.input.workspace)
                workspace = join_path(env.cwd, expand_home(l.input.workspace->path, env, l.input.workspace->source));
    return workspace;
}

std::string project_policy_note(const std::optional<ProjectPolicy>& project, const std::string& workspace) {
    if (!project) return fmt::format("project policy {}/{} (none)", workspace, kProjectPolicyPath);
    return fmt::format("project policy {} ({})", project->path,
                       project->trust == Trust::Trusted   ? "trusted"
                       : project->trust == Trust::Changed ? "changed since it was trusted: it may only narrow"
                                                          : "not trusted: it may only narrow");
}

// An untrusted project policy may only narrow what the rest allows.
void check_only_narrows(const ProjectPolicy& project, const CanonicalPolicy& without, const CanonicalPolicy& with) {
    if (const auto wider = widenings(without, with); !wider.empty())
        throw Error(
            fmt::format("{}: {}: a project policy may only narrow the sandbox unless you trust it{}; review it, then "
                        "run 'sbx trust {}' (or run with --no-config to ignore it)",
                        project.path, wider.front(),
                        project.trust == Trust::Changed ? " (it changed since you trusted it)" : "", project.path));
}

PolicyInput merged(const std::vector<const std::vector<PolicyLayer>*>& groups) {
    PolicyInput in;
    for (const auto* g : groups)
        for (const auto& l : *g) in.merge(l.input);
    return in;
}

}  // namespace

ResolvedPolicyArgs resolve_policy_args(const PolicyArgs& args, const std::string& workspace_cwd) {
    Environment env = system_environment();
    env.cwd = workspace_cwd;
    // Precedence, later wins: built-in defaults, the user's config, the
    // project policy, the policy file, --policy-json, the flags.
    PolicySources sources;
    if (!args.no_config) add_user_config(env, sources);
    add_given_sources(args, env, sources);
    std::optional<ProjectPolicy> project;
    if (!args.no_config) {
        const std::string workspace = named_workspace(sources, env);
        project = read_project_policy(workspace, env);
        sources.files.push_back(project_policy_note(project, workspace));
    }
    std::vector<PolicyLayer> middle;
    if (project) middle.push_back({"project policy " + project->path, project->input});
    ResolvedPolicyArgs out = resolve_input(merged({&sources.before, &middle, &sources.after}), env);
    if (project && project->trust != Trust::Trusted)
        check_only_narrows(*project, resolve_input(merged({&sources.before, &sources.after}), env).policy, out.policy);
    std::vector<PolicyLayer> layers = sources.before;
    layers.insert(layers.end(), middle.begin(), middle.end());
    layers.insert(layers.end(), sources.after.begin(), sources.after.end());
    out.origins = setting_origins(layers);
    out.config_files = sources.files;
    return out;
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
    } else if (args.relative) {
        fmt::print("{}\n", relative_json(p).dump(2));
    } else if (args.seatbelt) {
        if (p.mode == Mode::DangerFullAccess)
            throw Error("--seatbelt: danger-full-access runs without a sandbox, so it has no profile");
        fmt::print("{}", seatbelt_profile(p));
    } else {
        std::string text = to_text(p);
        // Where each setting came from (the mode and the network always,
        // the rest where a source set them), after the settings, before
        // the notes.
        const auto notes = text.find("\nnote: ");
        std::string from;
        for (std::size_t i = 0; i < resolved.config_files.size(); ++i)
            from += fmt::format("{:<18}{}\n", i == 0 ? "config" : "", resolved.config_files[i]);
        bool first = true;
        for (const auto& [setting, origin] : resolved.origins) {
            if (origin == "built-in default" && setting != "mode" && setting != "network") continue;
            from += fmt::format("{:<18}{:<18} {}\n", first ? "set by" : "", setting, origin);
            first = false;
        }
        text.insert(notes == std::string::npos ? text.size() : notes + 1, from);
        fmt::print("{}", text);
        for (const auto& dir : resolved.missing_roots)
            fmt::print("note: {} does not exist yet; sbx run makes it\n", dir);
    }
    return 0;
}

int trust_command(const TrustArgs& args) {
    // The record names the file by its directory's real path, as sbx run
    // finds it: <workspace>/.sbx/policy.json.
    const std::string given = args.path;
    const Environment env = system_environment();
    const std::string abs = join_path(env.cwd, given);
    const auto dir = env.realpath(parent_path(abs));
    if (!dir) throw Error(fmt::format("trust: {}: no such directory", parent_path(given)));
    const std::string path = join_path(*dir, base_name(abs));
    if (!path.ends_with("/" + std::string(kProjectPolicyPath)))
        throw Error(
            fmt::format("trust: {}: not a project policy (sbx reads only <workspace>/{})", given, kProjectPolicyPath));
    const std::string store = trust_directory();
    if (store.empty()) throw Error("trust: no state directory: set $XDG_STATE_HOME or $HOME to an absolute path");
    const std::string record = store + "/" + trust_record_name(path);
    if (args.revoke) {
        if (::unlink(record.c_str()) != 0) {
            if (errno != ENOENT) throw Error(fmt::format("trust --revoke: {}: {}", record, std::strerror(errno)));
            fmt::print("{} was not trusted\n", path);
        } else {
            fmt::print("{} is no longer trusted: it may only narrow the sandbox\n", path);
        }
        return 0;
    }
    const std::string text = read_policy_file(path, path);
    // What sbx run would refuse is not trusted either.
    (void)project_input_from_text(text, path, parent_path(parent_path(path)), env);
    make_private_directories(store, "trust");
    const TrustRecord r{sha256_hex(text), path};
    replace_file(record, trust_record_text(r), 0600, "trust: record");
    fmt::print(
        "trusted {} (sha256 {}): it may now widen the sandbox of runs in {}; any change to it ends the "
        "trust\n",
        path, r.hash, parent_path(parent_path(path)));
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
        // What a denial of it would say (denial/fix.h): the same flag sbx run's summary gives.
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
