// Resolution of a PolicyInput into the canonical policy.
#include "policy/policy.h"

#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>
#include <utility>

#include <fmt/format.h>

namespace sbx {

namespace {

constexpr std::array<std::pair<std::string_view, Mode>, 6> kModeNames{{
    {"read-only", Mode::ReadOnly},
    {"workspace-write", Mode::WorkspaceWrite},
    {"danger-full-access", Mode::DangerFullAccess},
    {"full", Mode::DangerFullAccess},
    {"external-sandbox", Mode::ExternalSandbox},
    {"external", Mode::ExternalSandbox},
}};

constexpr std::array<std::pair<std::string_view, Network>, 3> kNetworkNames{{
    {"restricted", Network::Restricted},
    {"limited", Network::Limited},
    {"full", Network::Full},
}};

bool is_absolute(const std::string& p) { return !p.empty() && p.front() == '/'; }

void validate_name(const std::string& name, const std::string& source) {
    if (name.empty() || name == "." || name == ".." || name.find('/') != std::string::npos ||
        name.find('\0') != std::string::npos) {
        throw Error(fmt::format("{}: '{}' is not a file name (a protected name is one path component "
                                "such as .git)",
                                source, name));
    }
}

// A directory the user named: made absolute against cwd, symlinks resolved, and
// it must exist and be a directory.
std::string resolve_dir(const std::string& given, const Environment& env, const std::string& source) {
    if (given.empty()) throw Error(fmt::format("{}: empty path", source));
    std::string abs = join_path(env.cwd, given);
    auto real = env.realpath(abs);
    if (!real) {
        throw Error(fmt::format("{}: {}: no such directory{}", source, given,
                                is_absolute(given) ? "" : fmt::format(" (relative to {})", env.cwd)));
    }
    if (!env.is_directory(*real)) throw Error(fmt::format("{}: {}: not a directory", source, given));
    return *real;
}

// The protected paths at the top of one writable root.
std::vector<std::string> protected_paths_of(const std::string& root,
                                            const std::vector<std::string>& names,
                                            const Environment& env) {
    std::vector<std::string> out;
    for (const auto& name : names) {
        std::string path = join_path(root, name);
        out.push_back(path);
        if (!env.lexists(path)) continue;
        // A symlinked protected name: its target is protected too.
        if (env.readlink(path)) {
            if (auto target = env.realpath(path)) out.push_back(*target);
            continue;
        }
        // A `.git` file ("gitdir: DIR") points at the real git directory.
        if (name == ".git" && !env.is_directory(path)) {
            auto text = env.read_file(path);
            const std::string dir = text ? gitdir_of_text(*text) : "";
            if (dir.empty()) continue;
            std::string abs = join_path(root, dir);
            std::string gitdir = env.realpath(abs).value_or(abs);
            out.push_back(gitdir);
            // A worktree's gitdir names the repository it belongs to in
            // "commondir"; that one holds the hooks and the config.
            if (auto common = env.read_file(gitdir + "/commondir")) {
                std::string c = *common;
                while (!c.empty() && (c.back() == '\n' || c.back() == '\r')) c.pop_back();
                if (!c.empty()) {
                    std::string cabs = join_path(gitdir, c);
                    out.push_back(env.realpath(cabs).value_or(cabs));
                }
            }
        }
    }
    std::sort(out.begin(), out.end());
    out.erase(std::unique(out.begin(), out.end()), out.end());
    return out;
}

// Writable roots mean something only in workspace-write: read-only would
// ignore them, and the modes without a filesystem sandbox make everything
// writable already.  A mode that no source named is judged by the caller
// that merged every source (a policy file may leave the mode to the flags).
void check_writable_roots(const PolicyInput& in, Mode mode) {
    if (in.writable_roots.empty() || !in.mode || mode == Mode::WorkspaceWrite) return;
    const std::string& source = in.writable_roots.front().source;
    switch (mode) {
        case Mode::ReadOnly: {
            // The fix is where the mode was set: a flag, or the document's key.
            const bool by_flag = in.mode_source.starts_with("--") && in.mode_source.find(':') == std::string::npos;
            const bool by_default = in.mode_source == "default";
            throw Error(fmt::format("{}: writable roots need {} (the policy is read-only{})", source,
                                    by_flag || by_default ? "-p workspace-write" : "mode workspace-write",
                                    by_flag || by_default ? "" : ", from " + in.mode_source));
        }
        case Mode::DangerFullAccess:
            throw Error(fmt::format("{}: danger-full-access makes everything writable already, so writable "
                                    "roots add nothing; drop them, or use -p workspace-write to write only there",
                                    source));
        case Mode::ExternalSandbox:
            throw Error(fmt::format("{}: external-sandbox leaves the filesystem to the sandbox outside sbx, so "
                                    "writable roots add nothing; drop them, or use -p workspace-write to write "
                                    "only there",
                                    source));
        case Mode::WorkspaceWrite: break;
    }
}

}  // namespace

std::string join_path(const std::string& base, const std::string& rel) {
    const std::string whole = is_absolute(rel) || base.empty() ? rel : base + "/" + rel;
    const bool absolute = is_absolute(whole);
    std::vector<std::string_view> parts;
    std::string_view rest = whole;
    while (!rest.empty()) {
        const auto slash = rest.find('/');
        const std::string_view part = rest.substr(0, slash);
        rest = slash == std::string_view::npos ? std::string_view{} : rest.substr(slash + 1);
        if (part.empty() || part == ".") continue;
        if (part == ".." && !parts.empty() && parts.back() != "..") {
            parts.pop_back();
        } else if (part != ".." || !absolute) {
            parts.push_back(part);
        }
    }
    std::string out = absolute ? "/" : "";
    for (std::size_t i = 0; i < parts.size(); ++i) out.append(i ? "/" : "").append(parts[i]);
    return out.empty() ? "." : out;
}

std::string gitdir_of_text(std::string_view git_file_text) {
    std::istringstream in{std::string(git_file_text)};
    for (std::string line; std::getline(in, line);) {
        if (!line.starts_with("gitdir:")) continue;
        const auto first = line.find_first_not_of(" \t", 7);
        const auto last = line.find_last_not_of(" \t\r");
        if (first == std::string::npos) return {};
        return line.substr(first, last - first + 1);
    }
    return {};
}

std::string_view to_string(Mode m) {
    switch (m) {
        case Mode::ReadOnly: return "read-only";
        case Mode::WorkspaceWrite: return "workspace-write";
        case Mode::DangerFullAccess: return "danger-full-access";
        case Mode::ExternalSandbox: return "external-sandbox";
    }
    return "?";
}

std::string_view to_string(Network n) {
    switch (n) {
        case Network::Restricted: return "restricted";
        case Network::Limited: return "limited";
        case Network::Full: return "full";
    }
    return "?";
}

std::optional<Mode> parse_mode(std::string_view s) {
    for (const auto& [name, mode] : kModeNames)
        if (name == s) return mode;
    return std::nullopt;
}

std::optional<Network> parse_network(std::string_view s) {
    for (const auto& [name, net] : kNetworkNames)
        if (name == s) return net;
    return std::nullopt;
}

const std::vector<std::string>& default_protected_names() {
    static const std::vector<std::string> names{".git", ".sbx", ".codex", ".agents"};
    return names;
}

void PolicyInput::merge(const PolicyInput& later) {
    if (later.mode) {
        mode = later.mode;
        mode_source = later.mode_source;
    }
    if (later.network) {
        network = later.network;
        network_source = later.network_source;
    }
    if (later.workspace) workspace = later.workspace;
    writable_roots.insert(writable_roots.end(), later.writable_roots.begin(), later.writable_roots.end());
    if (later.exclude_slash_tmp) exclude_slash_tmp = later.exclude_slash_tmp;
    if (later.exclude_tmpdir_env_var) exclude_tmpdir_env_var = later.exclude_tmpdir_env_var;
    if (later.protected_names) protected_names = later.protected_names;
    protect.insert(protect.end(), later.protect.begin(), later.protect.end());
    unprotect.insert(unprotect.end(), later.unprotect.begin(), later.unprotect.end());
    if (later.allow_unprotected) allow_unprotected = later.allow_unprotected;
    auto take = [](auto& mine, const auto& theirs) {
        if (theirs) mine = theirs;
    };
    take(limits.memory, later.limits.memory);
    take(limits.cpu_seconds, later.limits.cpu_seconds);
    take(limits.processes, later.limits.processes);
    take(limits.file_size, later.limits.file_size);
    take(limits.open_files, later.limits.open_files);
}

CanonicalPolicy resolve(const PolicyInput& in, const Environment& env) {
    if (!is_absolute(env.cwd)) throw Error(fmt::format("cwd: '{}' is not absolute", env.cwd));

    CanonicalPolicy p;
    p.mode = in.mode.value_or(Mode::ReadOnly);
    const Network default_network =
        p.mode == Mode::DangerFullAccess ? Network::Full : Network::Restricted;
    p.network = in.network.value_or(default_network);
    if (p.mode == Mode::DangerFullAccess && p.network != Network::Full) {
        throw Error(fmt::format(
            "{}: danger-full-access has no sandbox, so network '{}' cannot be enforced; use "
            "-p external-sandbox -n {} to restrict only the network",
            in.network_source, to_string(p.network), to_string(p.network)));
    }
    if (p.mode == Mode::DangerFullAccess && in.limits != Limits{}) {
        throw Error(
            "limits: danger-full-access has no sandbox, so the --limit-* limits cannot be enforced; use "
            "-p external-sandbox -n full to apply only the limits");
    }

    check_writable_roots(in, p.mode);

    const auto ws = in.workspace.value_or(PolicyInput::SourcedPath{env.cwd, "cwd"});
    p.workspace = resolve_dir(ws.path, env, ws.source);
    for (const auto& root : in.writable_roots) {
        std::string r = resolve_dir(root.path, env, root.source);
        if (std::find(p.writable_roots.begin(), p.writable_roots.end(), r) == p.writable_roots.end())
            p.writable_roots.push_back(r);
    }
    p.exclude_slash_tmp = in.exclude_slash_tmp.value_or(false);
    p.exclude_tmpdir_env_var = in.exclude_tmpdir_env_var.value_or(false);
    p.allow_unprotected = in.allow_unprotected.value_or(false);
    p.limits = in.limits;

    p.protected_names = in.protected_names.value_or(default_protected_names());
    for (const auto& n : p.protected_names) validate_name(n, "protected_names");
    for (const auto& n : in.protect) {
        validate_name(n, "--protect");
        if (std::find(p.protected_names.begin(), p.protected_names.end(), n) == p.protected_names.end())
            p.protected_names.push_back(n);
    }
    for (const auto& n : in.unprotect) {
        validate_name(n, "--unprotect");
        auto it = std::find(p.protected_names.begin(), p.protected_names.end(), n);
        if (it == p.protected_names.end()) {
            throw Error(fmt::format("--unprotect: '{}' is not a protected name (protected: {})", n,
                                    fmt::join(p.protected_names, ", ")));
        }
        p.protected_names.erase(it);
    }

    p.readable = {"/"};
    switch (p.mode) {
        case Mode::DangerFullAccess:
        case Mode::ExternalSandbox:
            p.writable = {{"/", {}}};
            break;
        case Mode::ReadOnly:
            p.writable = {{"/dev/null", {}}};
            break;
        case Mode::WorkspaceWrite: {
            std::vector<std::string> roots{p.workspace};
            roots.insert(roots.end(), p.writable_roots.begin(), p.writable_roots.end());
            if (!p.exclude_slash_tmp) {
                for (const char* t : {"/tmp", "/dev/shm"})
                    if (auto r = env.realpath(t); r && env.is_directory(*r)) roots.push_back(*r);
            }
            if (!p.exclude_tmpdir_env_var && env.tmpdir && is_absolute(*env.tmpdir)) {
                if (auto r = env.realpath(*env.tmpdir); r && env.is_directory(*r)) roots.push_back(*r);
            }
            for (const auto& r : roots) {
                auto same = [&](const WritableRoot& w) { return w.path == r; };
                if (std::none_of(p.writable.begin(), p.writable.end(), same))
                    p.writable.push_back({r, protected_paths_of(r, p.protected_names, env)});
            }
            p.writable.push_back({"/dev/null", {}});
            break;
        }
    }
    return p;
}

std::string to_text(const CanonicalPolicy& p) {
    std::string out;
    auto line = [&](std::string_view k, const std::string& v) { out += fmt::format("{:<18}{}\n", k, v); };
    line("mode", std::string(to_string(p.mode)));
    line("network", std::string(to_string(p.network)));
    line("workspace", p.workspace);
    line("readable", fmt::format("{}", fmt::join(p.readable, " ")));
    if (p.writable.empty()) line("writable", "(nothing)");
    bool first = true;
    for (const auto& w : p.writable) {
        line(first ? "writable" : "", w.path);
        first = false;
        for (const auto& pp : w.protected_paths) line("", fmt::format("  read-only: {}", pp));
    }
    line("protected names", p.protected_names.empty() ? "(none)" : fmt::format("{}", fmt::join(p.protected_names, " ")));
    std::vector<std::string> lim;
    auto add = [&](std::string_view name, const std::optional<std::uint64_t>& v) {
        if (v) lim.push_back(fmt::format("{}={}", name, *v));
    };
    add("memory", p.limits.memory);
    add("cpu_seconds", p.limits.cpu_seconds);
    add("processes", p.limits.processes);
    add("file_size", p.limits.file_size);
    add("open_files", p.limits.open_files);
    line("limits", lim.empty() ? "(none)" : fmt::format("{}", fmt::join(lim, " ")));
    if (p.allow_unprotected) line("allow-unprotected", "yes (Landlock alone where no mount namespace can be made)");
    switch (p.mode) {
        case Mode::DangerFullAccess: out += "note: no sandbox; the command runs with your full access\n"; break;
        case Mode::ExternalSandbox:
            out += "note: the filesystem is left to an outside sandbox; only the network is enforced\n";
            break;
        default: break;
    }
    return out;
}

Environment system_environment() {
    Environment env;
    std::array<char, PATH_MAX> buf{};
    if (!::getcwd(buf.data(), buf.size())) throw Error(fmt::format("cwd: cannot read the current directory: {}", std::strerror(errno)));
    env.cwd = buf.data();
    if (const char* t = std::getenv("TMPDIR"); t && *t) env.tmpdir = t;
    env.realpath = [](const std::string& p) -> std::optional<std::string> {
        std::array<char, PATH_MAX> out{};
        if (!::realpath(p.c_str(), out.data())) return std::nullopt;
        return std::string(out.data());
    };
    env.is_directory = [](const std::string& p) {
        struct stat st {};
        return ::lstat(p.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
    };
    env.lexists = [](const std::string& p) {
        struct stat st {};
        return ::lstat(p.c_str(), &st) == 0;
    };
    env.readlink = [](const std::string& p) -> std::optional<std::string> {
        std::array<char, PATH_MAX> out{};
        ssize_t n = ::readlink(p.c_str(), out.data(), out.size() - 1);
        if (n < 0) return std::nullopt;
        return std::string(out.data(), static_cast<std::size_t>(n));
    };
    env.read_file = [](const std::string& p) -> std::optional<std::string> {
        struct stat st {};
        if (::lstat(p.c_str(), &st) != 0 || !S_ISREG(st.st_mode) || st.st_size > 64 * 1024) return std::nullopt;
        std::ifstream f(p, std::ios::binary);
        if (!f) return std::nullopt;
        std::ostringstream s;
        s << f.rdbuf();
        return s.str();
    };
    return env;
}

}  // namespace sbx
