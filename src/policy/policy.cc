// Resolution of a PolicyInput into the canonical policy.
#include "policy/policy.h"
#include "policy/secrets.h"

#include <dirent.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <limits.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <memory>
#include <set>
#include <sstream>
#include <unordered_map>
#include <utility>

#include <fmt/format.h>

#include "net/domain.h"
#include "policy/git_index.h"
#include "util/utf8.h"

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

// The input with every path of a policy file's that starts with ~ expanded.
PolicyInput with_home_expanded(PolicyInput in, const Environment& env) {
    if (in.workspace) in.workspace->path = expand_home(in.workspace->path, env, in.workspace->source);
    for (auto& root : in.writable_roots) root.path = expand_home(root.path, env, root.source);
    auto expand_entries = [&env](std::vector<FsEntry>& entries) {
        for (auto& e : entries)
            if ((e.target.kind == FsTarget::Kind::Path || e.target.kind == FsTarget::Kind::Glob) &&
                e.target.value.starts_with('~')) {
                const std::string expanded = expand_home(e.target.value, env, e.source);
                e.target.value = e.target.kind == FsTarget::Kind::Path ? join_path("/", expanded) : expanded;
            }
    };
    if (in.entries) expand_entries(*in.entries);
    expand_entries(in.extra_entries);
    return in;
}

void validate_name(const std::string& name, const std::string& source) {
    if (name.empty() || name == "." || name == ".." || name.find('/') != std::string::npos ||
        name.find('\0') != std::string::npos) {
        throw Error(
            fmt::format("{}: '{}' is not a file name (a protected name is one path component "
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

// The git directory that a worktree's `.git` names: the directory itself, or
// the target of a `.git` file ("gitdir: DIR"), symlinks resolved; "" when
// there is none.
std::string git_directory_of(const std::string& worktree, const Environment& env) {
    const std::string dot_git = join_path(worktree, ".git");
    if (!env.lexists(dot_git) || env.readlink(dot_git)) return "";
    if (env.is_directory(dot_git)) return dot_git;
    auto text = env.read_file(dot_git);
    const std::string dir = text ? gitdir_of_text(*text) : "";
    if (dir.empty()) return "";
    const std::string abs = join_path(worktree, dir);
    return env.realpath(abs).value_or(abs);
}

// The `.git` of every submodule the index of GITDIR names (its gitlinks), in
// the worktree WORKTREE, and so on down their own indexes: the host's `git
// status` in the superproject runs `git status` in each of them, with the
// configuration their `.git` leads to.  (Their git directories are in
// .git/modules, held with .git already.)
void add_submodule_dot_gits(const std::string& worktree, const std::string& gitdir, const Environment& env,
                            std::vector<std::string>& out, int depth = 0) {
    constexpr int kMaxDepth = 16;
    if (!env.read_git_index || depth >= kMaxDepth) return;
    const auto bytes = env.read_git_index(join_path(gitdir, "index"));
    const auto index = bytes ? parse_git_index(*bytes) : std::nullopt;
    if (!index) return;
    std::vector<std::string> links = index->gitlinks;
    // A split index keeps most entries in the shared index beside it (an
    // entry the split one deletes is still taken: one more held path).
    if (!index->shared_index.empty()) {
        const auto shared_bytes = env.read_git_index(join_path(gitdir, "sharedindex." + index->shared_index));
        if (const auto shared = shared_bytes ? parse_git_index(*shared_bytes) : std::nullopt)
            links.insert(links.end(), shared->gitlinks.begin(), shared->gitlinks.end());
    }
    for (const auto& link : links) {
        if (!plain_index_path(link)) continue;
        const std::string sub = join_path(worktree, link);
        out.push_back(join_path(sub, ".git"));
        if (const std::string subgit = git_directory_of(sub, env); !subgit.empty())
            add_submodule_dot_gits(sub, subgit, env, out, depth + 1);
    }
}

// The protected paths at the top of one writable root.
std::vector<std::string> protected_paths_of(const std::string& root, const std::vector<std::string>& names,
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
        if (name != ".git") continue;
        const std::string gitdir = git_directory_of(root, env);
        if (gitdir.empty()) continue;
        add_submodule_dot_gits(root, gitdir, env, out);
        // A `.git` file ("gitdir: DIR") points at the real git directory.
        if (gitdir != path) {
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
            throw Error(
                fmt::format("{}: danger-full-access makes everything writable already, so writable "
                            "roots add nothing; drop them, or use -p workspace-write to write only there",
                            source));
        case Mode::ExternalSandbox:
            throw Error(
                fmt::format("{}: external-sandbox leaves the filesystem to the sandbox outside sbx, so "
                            "writable roots add nothing; drop them, or use -p workspace-write to write "
                            "only there",
                            source));
        case Mode::WorkspaceWrite: break;
    }
}

}  // namespace

bool git_write_opens(const CanonicalPolicy& p, const std::string& path) {
    for (const auto& e : p.resolved) {
        if (!e.protection || !e.directory || base_name(e.path) != ".git" || !path_below(path, e.path)) continue;
        const std::string rel = path.substr(e.path.size() + 1);
        const std::string first = rel.substr(0, rel.find('/'));
        if (std::find(std::begin(kGitWritableDirectories), std::end(kGitWritableDirectories), first) !=
            std::end(kGitWritableDirectories))
            return true;
        std::string_view file = first;
        if (file.ends_with(".lock")) file.remove_suffix(5);
        if (rel == first &&
            std::find(std::begin(kGitStateFiles), std::end(kGitStateFiles), file) != std::end(kGitStateFiles))
            return true;
    }
    return false;
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

std::string_view to_string(FsAccess a) {
    switch (a) {
        case FsAccess::Read: return "read";
        case FsAccess::Write: return "write";
        case FsAccess::Deny: return "deny";
    }
    return "?";
}

std::optional<FsAccess> parse_fs_access(std::string_view s) {
    if (s == "read") return FsAccess::Read;
    if (s == "write") return FsAccess::Write;
    if (s == "deny" || s == "none") return FsAccess::Deny;
    return std::nullopt;
}

std::string to_string(const FsTarget& t) {
    switch (t.kind) {
        case FsTarget::Kind::Path:
        case FsTarget::Kind::Glob: return t.value;
        case FsTarget::Kind::Root: return ":root";
        case FsTarget::Kind::Minimal: return ":minimal";
        case FsTarget::Kind::TmpDir: return ":tmpdir";
        case FsTarget::Kind::SlashTmp: return ":slash_tmp";
        case FsTarget::Kind::ProjectRoots: return t.value.empty() ? ":project_roots" : ":project_roots/" + t.value;
        case FsTarget::Kind::Unknown: return ":unknown(" + t.value + ")";
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
    static const std::vector<std::string> names{".git", ".sbx", ".codex", ".agents", ".aws"};
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
    if (later.git_write) git_write = later.git_write;
    if (later.entries) {
        entries = later.entries;
        entries_source = later.entries_source;
    }
    extra_entries.insert(extra_entries.end(), later.extra_entries.begin(), later.extra_entries.end());
    allow_domains.insert(allow_domains.end(), later.allow_domains.begin(), later.allow_domains.end());
    deny_domains.insert(deny_domains.end(), later.deny_domains.begin(), later.deny_domains.end());
    secrets.insert(secrets.end(), later.secrets.begin(), later.secrets.end());
    tls_passthrough.insert(tls_passthrough.end(), later.tls_passthrough.begin(), later.tls_passthrough.end());
    if (later.read_base) {
        read_base = later.read_base;
        read_base_source = later.read_base_source;
    }
    if (later.glob_scan_max_depth) glob_scan_max_depth = later.glob_scan_max_depth;
    auto take = [](auto& mine, const auto& theirs) {
        if (theirs) mine = theirs;
    };
    take(limits.memory, later.limits.memory);
    take(limits.cpu_seconds, later.limits.cpu_seconds);
    take(limits.processes, later.limits.processes);
    take(limits.file_size, later.limits.file_size);
    take(limits.open_files, later.limits.open_files);
}

namespace {

FsEntry entry(FsTarget::Kind kind, std::string value, FsAccess access, std::string source) {
    return FsEntry{{kind, std::move(value)}, access, std::move(source)};
}

// The entries a mode stands for.
std::vector<FsEntry> preset_entries(Mode mode, ReadBase base, const PolicyInput& in, const std::string& workspace,
                                    const std::vector<std::string>& roots) {
    const std::string source = fmt::format("{} preset", to_string(mode));
    if (mode == Mode::DangerFullAccess || mode == Mode::ExternalSandbox)
        return {entry(FsTarget::Kind::Root, "", FsAccess::Write, source)};
    std::vector<FsEntry> out;
    if (base != ReadBase::None)
        out.push_back(
            entry(base == ReadBase::Root ? FsTarget::Kind::Root : FsTarget::Kind::Minimal, "", FsAccess::Read, source));
    if (mode == Mode::ReadOnly) return out;
    out.push_back(entry(FsTarget::Kind::Path, workspace, FsAccess::Write, source + ": the workspace"));
    for (const auto& r : roots) out.push_back(entry(FsTarget::Kind::Path, r, FsAccess::Write, "--writable-root"));
    if (!in.exclude_slash_tmp.value_or(false)) {
        out.push_back(entry(FsTarget::Kind::SlashTmp, "", FsAccess::Write, source));
        out.push_back(entry(FsTarget::Kind::Path, "/dev/shm", FsAccess::Write, source + ": with /tmp"));
    }
    if (!in.exclude_tmpdir_env_var.value_or(false))
        out.push_back(entry(FsTarget::Kind::TmpDir, "", FsAccess::Write, source));
    return out;
}

const std::vector<std::string>& minimal_paths() {
    static const std::vector<std::string> paths{"/bin", "/sbin",  "/usr",       "/etc",
                                                "/lib", "/lib64", "/nix/store", "/run/current-system/sw"};
    return paths;
}

bool has_glob_chars(std::string_view s) { return s.find_first_of("*?[") != std::string_view::npos; }

// The files and directories a glob matches now.  `**` matches any number of
// directories (at most max_depth levels below the static prefix).
class GlobExpander {
public:
    GlobExpander(const Environment& env, std::optional<unsigned> max_depth, std::string pattern)
        : env_(env), max_depth_(max_depth), pattern_(std::move(pattern)) {}

    std::vector<std::string> expand() {
        std::vector<std::string> parts;
        for_each_component(pattern_, [&](std::string_view part) { parts.emplace_back(part); });
        std::string prefix = "/";
        std::size_t i = 0;
        for (; i < parts.size() && !has_glob_chars(parts[i]); ++i) prefix = join_path(prefix, parts[i]);
        if (i == parts.size()) return {prefix};  // no glob characters: the path itself
        if (prefix == "/")
            throw Error(
                fmt::format("deny glob '{}' cannot be safely expanded from the root directory; use a "
                            "pattern with a directory prefix (such as /home/u/**/*.env)",
                            pattern_));
        if (!env_.realpath(prefix)) return {};
        walk(prefix, parts, i, 0);
        return matches_;
    }

private:
    void add(const std::string& path) {
        if (matches_.size() == kMaxMatches)
            throw Error(fmt::format("deny glob '{}' matches more than {} paths; use a narrower pattern", pattern_,
                                    kMaxMatches));
        matches_.push_back(path);
    }

    void walk(const std::string& dir, const std::vector<std::string>& parts, std::size_t i, unsigned depth) {
        if (i == parts.size()) {
            add(dir);
            return;
        }
        const std::string& part = parts[i];
        if (part == "**") {
            walk(dir, parts, i + 1, depth);  // zero directories
            // Depth N: what lies at most N levels below the static prefix.
            if (max_depth_ && depth + 1 >= *max_depth_) return;
            for (const auto& name : env_.list_directory(dir)) {
                const std::string path = join_path(dir, name);
                if (env_.is_directory(path)) walk(path, parts, i, depth + 1);
            }
            return;
        }
        if (!has_glob_chars(part)) {
            const std::string path = join_path(dir, part);
            if (env_.lexists(path) && (i + 1 == parts.size() || env_.is_directory(path)))
                walk(path, parts, i + 1, depth + 1);
            return;
        }
        for (const auto& name : env_.list_directory(dir)) {
            if (::fnmatch(part.c_str(), name.c_str(), 0) != 0) continue;
            const std::string path = join_path(dir, name);
            if (i + 1 == parts.size()) add(path);
            else if (env_.is_directory(path)) walk(path, parts, i + 1, depth + 1);
        }
    }

    static constexpr std::size_t kMaxMatches = 8192;
    const Environment& env_;
    std::optional<unsigned> max_depth_;
    std::string pattern_;
    std::vector<std::string> matches_;
};

std::string describe(const FsEntry& e) {
    return fmt::format("{} {}{}", to_string(e.access), to_string(e.target),
                       e.source.empty() ? "" : fmt::format(" ({})", e.source));
}

// The symlink on the way to `given` that lies inside a writable root (where
// a sandboxed command could have planted it), or "".
std::string planted_symlink(const std::string& given, const std::vector<std::string>& writable,
                            const Environment& env) {
    std::string cur = "/", found;
    for_each_component(given, [&](std::string_view part) {
        const std::string next = join_path(cur, std::string(part));
        if (!env.readlink(next)) {
            cur = next;
            return true;
        }
        for (const auto& w : writable)
            if (w != "/dev/null" && path_below(next, w)) {
                found = next;
                return false;
            }
        auto real = env.realpath(next);
        if (!real) return false;
        cur = *real;
        return true;
    });
    return found;
}

class Resolver {
public:
    Resolver(const Environment& env, CanonicalPolicy& p) : env_(env), p_(p) {}

    // One entry to the paths it names now.
    void add(const FsEntry& e) {
        using K = FsTarget::Kind;
        switch (e.target.kind) {
            case K::Path: push(e.target.value, e.access, describe(e)); break;
            case K::Root: push("/", e.access, describe(e)); break;
            case K::Minimal:
                if (e.access != FsAccess::Read) {
                    // Codex: only read matters for the platform set.
                    break;
                }
                for (const auto& m : minimal_paths())
                    if (env_.lexists(m)) push(m, e.access, describe(e));
                break;
            case K::ProjectRoots:
                if (!p_.workspace.empty() && p_.workspace.front() == '/')
                    push(e.target.value.empty() ? p_.workspace : join_path(p_.workspace, e.target.value), e.access,
                         describe(e));
                break;
            case K::TmpDir:
                if (env_.tmpdir && is_absolute(*env_.tmpdir)) push(join_path("/", *env_.tmpdir), e.access, describe(e));
                break;
            case K::SlashTmp:
                if (env_.realpath("/tmp") && env_.is_directory(*env_.realpath("/tmp")))
                    push("/tmp", e.access, describe(e));
                break;
            case K::Unknown: break;
            case K::Glob:
                if (e.access != FsAccess::Deny) break;  // Codex: only deny globs have an effect
                for (const auto& m : GlobExpander(env_, p_.glob_scan_max_depth, e.target.value).expand()) {
                    push(m, FsAccess::Deny, describe(e));
                    // A matched symlink: what it names is masked too.
                    if (env_.readlink(m))
                        if (auto real = env_.realpath(m)) push(*real, FsAccess::Deny, describe(e));
                }
                break;
        }
    }

    void push(const std::string& given, FsAccess access, std::string rule) {
        ResolvedEntry r;
        r.access = access;
        r.rule = std::move(rule);
        if (auto real = env_.realpath(given)) {
            r.path = *real;
            r.exists = true;
            r.directory = env_.is_directory(*real);
        } else {
            // Missing: its existing ancestor resolved, the rest as given.
            std::string head = given, tail;
            std::optional<std::string> real_head;
            while (!(real_head = env_.realpath(head)) && head != "/") {
                const auto slash = head.rfind('/');
                tail = head.substr(slash + 1) + (tail.empty() ? "" : "/" + tail);
                head = parent_path(head);
            }
            r.path = join_path(real_head.value_or("/"), tail);
        }
        if (r.path != given) r.given = given;
        if (!seen_.emplace(r.path, r.access).second) return;  // that path with that access once
        p_.resolved.push_back(std::move(r));
    }

private:
    const Environment& env_;
    CanonicalPolicy& p_;
    std::set<std::pair<std::string, FsAccess>> seen_;
};

// At equal depth: deny, then write, then read.
int rank(FsAccess a) { return a == FsAccess::Deny ? 2 : a == FsAccess::Write ? 1 : 0; }

// Which resolved entries decide their own path (decide_path(p, e.path) is e),
// answered from the entries at that path, since those above it are less
// specific: a deny glob can add thousands of entries, and a scan of all of
// them per entry made resolution quadratic.  A read entry, which a deny
// above it may hide, takes the whole rule.
class EntriesByPath {
public:
    explicit EntriesByPath(const CanonicalPolicy& p) : p_(p) {
        for (const auto& e : p.resolved) at_[e.path].push_back(&e);
    }
    bool decides_itself(const ResolvedEntry& e) const {
        if (e.access == FsAccess::Read) return decide_path(p_, e.path).entry == &e;
        const auto& here = at_.at(e.path);
        return std::none_of(here.begin(), here.end(),
                            [&](const ResolvedEntry* other) { return rank(other->access) > rank(e.access); });
    }

private:
    const CanonicalPolicy& p_;
    std::unordered_map<std::string, std::vector<const ResolvedEntry*>> at_;
};

// The allowlist's patterns, checked; it implies network limited.
void resolve_domains(const PolicyInput& in, CanonicalPolicy& p) {
    auto add = [](std::vector<std::string>& to, const PolicyInput::SourcedPath& pattern, bool deny) {
        std::string n = net::normalize_pattern(pattern.path, pattern.source, deny);
        if (std::find(to.begin(), to.end(), n) == to.end()) to.push_back(std::move(n));
    };
    for (const auto& a : in.allow_domains) add(p.allow_domains, a, false);
    for (const auto& d : in.deny_domains) add(p.deny_domains, d, true);
    if (p.allow_domains.empty() && p.deny_domains.empty()) return;
    if (p.allow_domains.empty())
        throw Error(
            fmt::format("{}: a deny-domain without an allow-domain allows no name at all; add --allow-domain "
                        "NAME (or use -n limited for no network)",
                        in.deny_domains.front().source));
    const std::string& source = in.allow_domains.front().source;
    if (p.mode == Mode::DangerFullAccess)
        throw Error(
            fmt::format("{}: danger-full-access has no sandbox, so an allowlist cannot be enforced; use "
                        "-p external-sandbox to restrict only the network",
                        source));
    if (in.network && *in.network != Network::Limited)
        throw Error(
            fmt::format("{}: network '{}' cannot go with an allowlist ({}), which runs the command in the "
                        "private network of -n limited with sbx's proxy; drop -n {}",
                        in.network_source, to_string(*in.network), source, to_string(*in.network)));
    p.network = Network::Limited;
}

}  // namespace

bool CanonicalPolicy::reads_root() const {
    const auto root = decide_path(*this, "/");
    return root.entry && root.entry->path == "/" && root.access != FsAccess::Deny;
}

bool CanonicalPolicy::root_in_derived_sets() const {
    return std::find(readable.begin(), readable.end(), "/") != readable.end() ||
           std::any_of(writable.begin(), writable.end(), [](const WritableRoot& w) { return w.path == "/"; });
}

bool CanonicalPolicy::entries_give_host_dev_shm() const {
    return std::any_of(resolved.begin(), resolved.end(), [](const ResolvedEntry& e) {
        return e.path == "/dev/shm" && e.exists && e.access != FsAccess::Deny;
    });
}

bool CanonicalPolicy::private_dev_shm() const {
    auto named = [](const std::vector<std::string>& paths) {
        return std::find(paths.begin(), paths.end(), "/dev/shm") != paths.end();
    };
    return sandboxed_filesystem() && !named(readable) && !named(denied) &&
           std::none_of(writable.begin(), writable.end(), [](const WritableRoot& w) { return w.path == "/dev/shm"; });
}

FsDecision decide_path(const CanonicalPolicy& p, const std::string& path) {
    // Rank: deeper first; at equal depth deny, then write, then read.
    const ResolvedEntry* best = nullptr;
    for (const auto& e : p.resolved) {
        if (!path_within(path, e.path)) continue;
        if (!best || path_depth(e.path) > path_depth(best->path) ||
            (path_depth(e.path) == path_depth(best->path) && rank(e.access) > rank(best->access)))
            best = &e;
    }
    if (!best) return {};
    if (best->access == FsAccess::Read) {
        // Codex 0.169 reopens only writable holes below a denied directory:
        // a read entry there stays hidden unless a write entry lies between.
        const ResolvedEntry* outer = nullptr;
        for (const auto& e : p.resolved) {
            if (&e == best || e.access == FsAccess::Read || !path_within(best->path, e.path) ||
                path_depth(e.path) >= path_depth(best->path))
                continue;
            if (!outer || path_depth(e.path) > path_depth(outer->path) ||
                (path_depth(e.path) == path_depth(outer->path) && e.access == FsAccess::Deny))
                outer = &e;
        }
        if (outer && outer->access == FsAccess::Deny) return {FsAccess::Deny, outer};
    }
    return {best->access, best};
}

std::vector<ProtectedNameDirectory> protected_name_directories(const CanonicalPolicy& p, const Environment& env) {
    std::vector<ProtectedNameDirectory> out;
    auto listed = [&out](const std::string& dir) {
        return std::any_of(out.begin(), out.end(), [&](const ProtectedNameDirectory& d) { return d.path == dir; });
    };
    std::vector<std::string> roots;  // the writable roots that are directories
    for (const auto& w : p.writable)
        if (env.is_directory(w.path) && std::find(roots.begin(), roots.end(), w.path) == roots.end())
            roots.push_back(w.path);
    for (const auto& r : roots) out.push_back({r, "", ""});
    for (const auto& inner : roots) {
        std::string outer;  // the outermost root that holds it
        for (const auto& r : roots)
            if (path_below(inner, r) && (outer.empty() || r.size() < outer.size())) outer = r;
        if (outer.empty()) continue;
        // Every directory between them that the command may write in (one a
        // read-only or denied entry holds is held with its names already).
        for (std::string dir = parent_path(inner); dir != outer; dir = parent_path(dir))
            if (!listed(dir) && decide_path(p, dir).access == FsAccess::Write) out.push_back({dir, outer, inner});
    }
    return out;
}

namespace {

// A path for an error line: bytes outside printable ASCII as \xHH.
std::string escaped_bytes(std::string_view s) {
    std::string out;
    for (char c : s) {
        const auto b = static_cast<unsigned char>(c);
        out += b < 0x20 || b >= 0x7f ? fmt::format("\\x{:02X}", b) : std::string(1, c);
    }
    return out;
}

// Every path of a resolved policy is valid UTF-8: the policy reaches the
// helper (and Codex's protocol) as JSON, and results carry it, and JSON
// strings hold UTF-8 only.  A path that is not is refused, never altered.
void check_utf8_paths(const CanonicalPolicy& p) {
    auto check = [](const std::string& path, std::string_view what) {
        if (valid_utf8(path)) return;
        throw Error(fmt::format(
            "{}: the path {} is not valid UTF-8; sbx passes the policy to its helper and reports results as JSON, "
            "which holds UTF-8 only: rename it, or leave it out of the policy",
            escaped_bytes(what), escaped_bytes(path)));
    };
    check(p.workspace, "workspace (--cwd or the current directory)");
    for (const ResolvedEntry& e : p.resolved) {
        check(e.given, e.rule);
        check(e.path, e.rule);
    }
    for (const WritableRoot& w : p.writable) {
        check(w.path, "writable root");
        for (const std::string& pp : w.protected_paths) check(pp, "protected path");
    }
    for (const std::string& r : p.readable) check(r, "readable path");
    for (const std::string& d : p.denied) check(d, "denied path");
}

// env.sbx_state with the symlinks of its existing part resolved, and its
// missing directories, outermost first.
std::optional<HeldStateDirectory> state_directory_of(const Environment& env) {
    if (env.sbx_state.empty() || !is_absolute(env.sbx_state)) return std::nullopt;
    std::vector<std::string> names;
    std::string existing = join_path("/", env.sbx_state);
    std::optional<std::string> real;
    while (!(real = env.realpath(existing))) {
        if (existing == "/") return std::nullopt;
        names.push_back(base_name(existing));
        existing = parent_path(existing);
    }
    HeldStateDirectory out{*real, {}};
    for (auto it = names.rbegin(); it != names.rend(); ++it) {
        out.path = child_path(out.path, *it);
        if (out.missing.empty())
            if (auto made = env.realpath(out.path)) {  // below a symlinked parent (with_directories)
                out.path = *made;
                continue;
            }
        out.missing.push_back(out.path);
    }
    return out;
}

// Some writable root of p contains path.
bool writable_within(const CanonicalPolicy& p, const std::string& path) {
    return std::any_of(p.writable.begin(), p.writable.end(),
                       [&](const WritableRoot& w) { return path_within(path, w.path); });
}

// An entry names exactly path with write or deny (the user's word).
bool lifted_path(const CanonicalPolicy& p, const std::string& path) {
    return std::any_of(p.resolved.begin(), p.resolved.end(),
                       [&](const ResolvedEntry& e) { return e.path == path && e.access != FsAccess::Read; });
}

CanonicalPolicy resolve_unchecked(const PolicyInput& given, const Environment& env, ResolveScope scope);

}  // namespace

CanonicalPolicy resolve(const PolicyInput& given, const Environment& env, ResolveScope scope) {
    CanonicalPolicy p = resolve_unchecked(given, env, scope);
    check_utf8_paths(p);
    return p;
}

namespace {

// Mode, network, domains and limits, and what contradicts them: the checks
// that come before any path is looked at.
void resolve_mode(const PolicyInput& in, CanonicalPolicy& p) {
    const bool listed = in.entries.has_value();
    if (listed) {
        if (in.exclude_slash_tmp || in.exclude_tmpdir_env_var)
            throw Error(
                fmt::format("{}: the exclude_slash_tmp and exclude_tmpdir_env_var keys shape a mode's "
                            "preset; a list of entries replaces the preset (leave out the :slash_tmp or "
                            ":tmpdir entry instead)",
                            in.entries_source));
        if (in.read_base)
            throw Error(
                fmt::format("{}: {} lists its own entries; replace its :root entry with :minimal "
                            "there",
                            in.read_base_source, in.entries_source));
    }
    // A list of entries decides the mode unless it leaves the filesystem
    // open (danger-full-access, external-sandbox).
    Mode derived = Mode::ReadOnly;
    if (listed)
        for (const auto& e : *in.entries)
            if (e.access == FsAccess::Write) derived = Mode::WorkspaceWrite;
    // -w roots added to a list make it writable too.
    p.mode = in.mode.value_or(!listed ? Mode::ReadOnly : in.writable_roots.empty() ? derived : Mode::WorkspaceWrite);
    if (listed && in.mode && (*in.mode == Mode::ReadOnly || *in.mode == Mode::WorkspaceWrite) && *in.mode != derived)
        throw Error(fmt::format(
            "{}: the entries make the policy {}, not {}{}", in.mode_source, to_string(derived), to_string(*in.mode),
            derived == Mode::ReadOnly ? " (no entry gives write access)" : " (an entry gives write access)"));
    const Network default_network = p.mode == Mode::DangerFullAccess ? Network::Full : Network::Restricted;
    p.network = in.network.value_or(default_network);
    resolve_domains(in, p);
    if (p.mode == Mode::DangerFullAccess && p.network != Network::Full) {
        throw Error(
            fmt::format("{}: danger-full-access has no sandbox, so network '{}' cannot be enforced; use "
                        "-p external-sandbox -n {} to restrict only the network",
                        in.network_source, to_string(p.network), to_string(p.network)));
    }
    if (p.mode == Mode::DangerFullAccess && in.limits != Limits{}) {
        throw Error(
            "limits: danger-full-access has no sandbox, so the --limit-* limits cannot be enforced; use "
            "-p external-sandbox -n full to apply only the limits");
    }
    check_writable_roots(in, p.mode);
    if (listed && !p.sandboxed_filesystem() &&
        *in.entries != std::vector<FsEntry>{entry(FsTarget::Kind::Root, "", FsAccess::Write, "")})
        throw Error(fmt::format("{}: {} leaves the filesystem open; its only entry is :root write", in.entries_source,
                                to_string(p.mode)));
    if (!p.sandboxed_filesystem() && (!in.extra_entries.empty() || in.read_base)) {
        const std::string flag = in.read_base ? in.read_base_source : in.extra_entries.front().source;
        throw Error(fmt::format(
            "{}: {} leaves the filesystem {}, so filesystem entries cannot be enforced; use "
            "-p read-only or -p workspace-write",
            flag, to_string(p.mode), p.mode == Mode::DangerFullAccess ? "unsandboxed" : "to the outside sandbox"));
    }
    p.allow_unprotected = in.allow_unprotected.value_or(false);
    p.limits = in.limits;
    p.glob_scan_max_depth = in.glob_scan_max_depth;
    if (p.glob_scan_max_depth && *p.glob_scan_max_depth == 0) throw Error("glob_scan_max_depth: must be 1 or more");
}

// The protected names: the given list or the defaults, with --protect and
// --unprotect applied.
void resolve_protected_names(const PolicyInput& in, CanonicalPolicy& p) {
    p.git_write = in.git_write.value_or(false);
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
    // --git-write opens parts of a protected .git: contradicted by a mode
    // with no protected names, and by a .git open as a whole.
    if (!p.git_write) return;
    if (p.mode != Mode::WorkspaceWrite)
        throw Error(fmt::format(
            "--git-write: git's writable parts of .git need -p workspace-write (the policy is {}{})", to_string(p.mode),
            p.mode == Mode::ReadOnly ? ", which writes nothing" : ", in which .git is not protected at all"));
    if (std::find(p.protected_names.begin(), p.protected_names.end(), ".git") == p.protected_names.end())
        throw Error(
            "--git-write and an unprotected .git together: --unprotect .git opens all of .git already, its hooks "
            "and config included; drop --unprotect .git to keep those read-only");
}

// The workspace, and the whole list of entries: the preset (or the given
// list), the extra roots (-w), the flags' entries; identical entries once.
void resolve_entries(const PolicyInput& in, const Environment& env, CanonicalPolicy& p) {
    const bool listed = in.entries.has_value();
    const auto ws = in.workspace.value_or(PolicyInput::SourcedPath{env.cwd, "cwd"});
    if (listed) {
        // A profile's project root need not exist (Codex): its entries then name nothing.
        p.workspace = is_absolute(ws.path) ? env.realpath(ws.path).value_or(join_path("/", ws.path)) : ws.path;
    } else {
        p.workspace = resolve_dir(ws.path, env, ws.source);
    }
    std::vector<std::string> roots;
    for (const auto& root : in.writable_roots) {
        std::string r = resolve_dir(root.path, env, root.source);
        if (std::find(roots.begin(), roots.end(), r) == roots.end()) roots.push_back(r);
    }
    if (listed) {
        p.entries = *in.entries;
        for (const auto& r : roots)
            p.entries.push_back(entry(FsTarget::Kind::Path, r, FsAccess::Write, "--writable-root"));
    } else {
        p.entries = preset_entries(p.mode, in.read_base.value_or(ReadBase::Root), in, p.workspace, roots);
    }
    for (const auto& e : in.extra_entries) {
        if (e.target.kind == FsTarget::Kind::Path || e.target.kind == FsTarget::Kind::Glob) {
            FsEntry made = e;
            made.target.value = join_path(env.cwd, e.target.value);
            p.entries.push_back(std::move(made));
        } else {
            p.entries.push_back(e);
        }
    }
    // Identical entries once, the first kept (its source names it).
    std::vector<FsEntry> unique;
    for (auto& e : p.entries)
        if (std::find(unique.begin(), unique.end(), e) == unique.end()) unique.push_back(std::move(e));
    p.entries = std::move(unique);
    for (const auto& e : p.entries)
        if ((e.target.kind == FsTarget::Kind::Path || e.target.kind == FsTarget::Kind::Glob) &&
            !is_absolute(e.target.value))
            throw Error(fmt::format("{}: '{}' is not an absolute path", e.source, e.target.value));
}

// Every entry resolved to the paths it names, with sbx's own: /dev/null,
// /dev and /proc without the root, Codex's daemon sockets hidden.  Then the
// writable roots: write entries that decide their own path.  A missing one
// names nothing (Codex ignores it); /dev/null and files get no protected
// names.
void resolve_paths(const Environment& env, CanonicalPolicy& p) {
    Resolver resolver(env, p);
    for (const auto& e : p.entries) resolver.add(e);
    resolver.push("/dev/null", FsAccess::Write, "sbx: /dev/null is always writable");
    if (!p.reads_root()) {
        resolver.push("/dev", FsAccess::Read, "sbx: /dev is always there (a private minimal /dev without the root)");
        resolver.push("/proc", FsAccess::Read, "sbx: /proc is always there (the sandbox's own processes)");
    }
    const std::string daemon = fmt::format("/tmp/codex-daemon-{}", env.euid);
    if (env.lexists(daemon)) resolver.push(daemon, FsAccess::Deny, "sbx: Codex's app-server sockets stay hidden");

    const EntriesByPath roots_index(p);
    for (const auto& e : p.resolved) {
        if (e.access != FsAccess::Write || !e.exists || !roots_index.decides_itself(e)) continue;
        if (std::none_of(p.writable.begin(), p.writable.end(), [&](const WritableRoot& w) { return w.path == e.path; }))
            p.writable.push_back({e.path, {}});
    }
}

// The writable roots' protected names, and those of every directory from the
// top of a writable root down to a root nested in it (the workspace in
// /tmp/a: /tmp/a/.git too), each a read entry unless an entry names exactly
// that path with write or deny; and sbx's own state directory.
void add_protections(const Environment& env, CanonicalPolicy& p) {
    std::vector<ResolvedEntry> protections;
    for (const auto& dir : protected_name_directories(p, env)) {
        // Between two roots: on the way down to which.
        const std::string way = dir.outer.empty()
                                    ? ""
                                    : fmt::format(", on the way from the writable root {} down to the {} {}", dir.outer,
                                                  dir.inner == p.workspace ? "workspace" : "writable root", dir.inner);
        for (const auto& path : protected_paths_of(dir.path, p.protected_names, env)) {
            const bool lifted = std::any_of(p.resolved.begin(), p.resolved.end(), [&](const ResolvedEntry& e) {
                return e.path == path && e.access != FsAccess::Read;
            });
            if (lifted) continue;
            const std::string name = base_name(path);
            const bool named =
                parent_path(path) == dir.path &&
                std::find(p.protected_names.begin(), p.protected_names.end(), name) != p.protected_names.end();
            ResolvedEntry r{
                path,
                "",
                FsAccess::Read,
                env.lexists(path),
                env.is_directory(path),
                named ? fmt::format("protected name {} in {}{}", name, dir.path, way)
                      : fmt::format("protected: {} (what a protected name in {} leads to{})", path, dir.path, way),
                true};
            protections.push_back(std::move(r));
        }
    }
    // sbx's own state: its session approvals stay read-only wherever a
    // writable root holds them (a workspace at $HOME), so that no command
    // writes approvals for a later run to read.  Held where it exists: sbx
    // run makes a missing one first (commands.cc), where this user may, so
    // that it is held itself and not a missing ~/.local in its place.
    if (const auto state = state_directory_of(env);
        state && state->missing.empty() && writable_within(p, state->path) && !lifted_path(p, state->path))
        protections.push_back({state->path, "", FsAccess::Read, state->missing.empty(), state->missing.empty(),
                               std::string(kStateDirectoryRule), true});
    for (auto& r : protections)
        if (std::none_of(p.resolved.begin(), p.resolved.end(),
                         [&](const ResolvedEntry& e) { return e.path == r.path && e.access == r.access; }))
            p.resolved.push_back(std::move(r));
}

// The resolved entries that decide their own path, sorted into the lists the
// sandbox applies: readable, denied, and each writable root's read-only
// paths.
void sort_into_lists(CanonicalPolicy& p) {
    const EntriesByPath index(p);
    for (const auto& e : p.resolved) {
        if (!index.decides_itself(e)) continue;
        switch (e.access) {
            case FsAccess::Read: {
                if (std::find(p.readable.begin(), p.readable.end(), e.path) == p.readable.end() && !e.protection)
                    p.readable.push_back(e.path);
                // Inside a writable root: held read-only there.
                WritableRoot* holder = nullptr;
                for (auto& w : p.writable)
                    if (path_within(e.path, w.path) && e.path != w.path &&
                        (!holder || w.path.size() > holder->path.size()))
                        holder = &w;
                if (holder) holder->protected_paths.push_back(e.path);
                break;
            }
            case FsAccess::Deny:
                if (std::find(p.denied.begin(), p.denied.end(), e.path) == p.denied.end()) p.denied.push_back(e.path);
                break;
            case FsAccess::Write: break;
        }
    }
    for (auto& w : p.writable) {
        std::sort(w.protected_paths.begin(), w.protected_paths.end());
        w.protected_paths.erase(std::unique(w.protected_paths.begin(), w.protected_paths.end()),
                                w.protected_paths.end());
    }
}

// A deny or read-only path reached through a symlink inside a writable root
// could be redirected by the command before the view is built: refused
// rather than the wrong path held.
void refuse_planted_symlinks(const Environment& env, const CanonicalPolicy& p) {
    std::vector<std::string> writable_paths;
    for (const auto& w : p.writable) writable_paths.push_back(w.path);
    for (const auto& e : p.resolved) {
        if (e.access == FsAccess::Write || e.given.empty()) continue;
        const std::string link = planted_symlink(e.given, writable_paths, env);
        if (!link.empty())
            throw Error(
                fmt::format("{}: cannot enforce {} on {}: its path crosses the symlink {}, inside a writable "
                            "root, which the command could change; name the real path ({})",
                            e.rule, to_string(e.access), e.given, link, e.path));
    }
}

CanonicalPolicy resolve_unchecked(const PolicyInput& given, const Environment& env, ResolveScope scope) {
    if (!is_absolute(env.cwd)) throw Error(fmt::format("cwd: '{}' is not absolute", env.cwd));
    PolicyInput in = with_home_expanded(given, env);
    CanonicalPolicy p;
    resolve_mode(in, p);
    resolve_secrets(in, env, p, scope);
    resolve_entries(in, env, p);
    resolve_protected_names(in, p);
    if (!p.sandboxed_filesystem()) {
        p.readable = {"/"};
        p.writable = {{"/", {}}};
        p.resolved.push_back({"/", "", FsAccess::Write, true, true, describe(p.entries.front()), false});
        return p;
    }
    resolve_paths(env, p);
    add_protections(env, p);
    sort_into_lists(p);
    refuse_planted_symlinks(env, p);
    return p;
}

}  // namespace

std::string to_text(const CanonicalPolicy& p) {
    std::string out;
    auto line = [&](std::string_view k, const std::string& v) { out += fmt::format("{:<18}{}\n", k, v); };
    line("mode", std::string(to_string(p.mode)));
    line("network", std::string(to_string(p.network)) + (p.by_name() ? " (allowlist proxy)" : ""));
    for (std::size_t i = 0; i < p.allow_domains.size(); ++i) line(i == 0 ? "allow domains" : "", p.allow_domains[i]);
    for (std::size_t i = 0; i < p.deny_domains.size(); ++i) line(i == 0 ? "deny domains" : "", p.deny_domains[i]);
    for (std::size_t i = 0; i < p.secrets.size(); ++i) {
        const Secret& s = p.secrets[i];
        line(i == 0 ? "secrets" : "",
             fmt::format("{} {} {}{}", to_string(s.kind), s.name,
                         s.masked() ? fmt::format("masked, sent to {}", fmt::join(s.hosts, ", ")) : "withheld",
                         s.extract.empty() ? "" : fmt::format(" (extract {})", s.extract)));
    }
    for (std::size_t i = 0; i < p.tls_passthrough.size(); ++i)
        line(i == 0 ? "tls passthrough" : "", p.tls_passthrough[i]);
    line("workspace", p.workspace);
    bool first = true;
    for (const auto& e : p.entries) {
        line(first ? "entries" : "", fmt::format("{:<6} {}{}", to_string(e.access), to_string(e.target),
                                                 e.source.empty() ? "" : fmt::format("  ({})", e.source)));
        first = false;
    }
    if (p.glob_scan_max_depth) line("glob depth", std::to_string(*p.glob_scan_max_depth));
    if (p.sandboxed_filesystem()) {
        line("readable", p.readable.empty() ? "(only the writable roots, /dev and /proc)"
                                            : fmt::format("{}", fmt::join(p.readable, " ")));
        first = true;
        for (const auto& w : p.writable) {
            line(first ? "writable" : "", w.path);
            first = false;
            for (const auto& pp : w.protected_paths) line("", fmt::format("  read-only: {}", pp));
        }
        first = true;
        for (const auto& d : p.denied) {
            line(first ? "denied" : "", d);
            first = false;
        }
    }
    line("protected names",
         p.protected_names.empty() ? "(none)" : fmt::format("{}", fmt::join(p.protected_names, " ")));
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
    if (p.git_write)
        line("git-write", "yes (in .git: objects, refs, logs, index and HEAD writable; hooks and config read-only)");
    switch (p.mode) {
        case Mode::DangerFullAccess: out += "note: no sandbox; the command runs with your full access\n"; break;
        case Mode::ExternalSandbox:
            out += "note: the filesystem is left to an outside sandbox; only the network is enforced\n";
            break;
        default:
            if (!p.denied.empty() && std::any_of(p.entries.begin(), p.entries.end(), [](const FsEntry& e) {
                    return e.target.kind == FsTarget::Kind::Glob;
                }))
                out += "note: deny globs are expanded when the command starts; files created later are not hidden\n";
            break;
    }
    return out;
}

namespace {

// The directory that would make `given` exist (its parent's symlinks
// resolved), where only its last component is missing; nullopt otherwise.
std::optional<std::string> makeable(const std::string& given, const std::string& source, const Environment& env) {
    const std::string path = join_path(env.cwd, expand_home(given, env, source));
    if (path == "/" || env.lexists(path)) return std::nullopt;
    const auto parent = env.realpath(parent_path(path));
    if (!parent || !env.is_directory(*parent)) return std::nullopt;
    return join_path(*parent, base_name(path));
}

void add_once(std::vector<std::string>& out, std::optional<std::string> dir) {
    if (dir && std::find(out.begin(), out.end(), *dir) == out.end()) out.push_back(std::move(*dir));
}

}  // namespace

std::vector<std::string> missing_writable_roots(const PolicyInput& in, const Environment& env) {
    std::vector<std::string> out;
    for (const auto& root : in.writable_roots) add_once(out, makeable(root.path, root.source, env));
    return out;
}

std::vector<std::string> missing_write_entries(const PolicyInput& in, const Environment& env) {
    std::vector<std::string> out;
    auto add = [&](const std::vector<FsEntry>& entries) {
        for (const auto& e : entries)
            if (e.access == FsAccess::Write && e.target.kind == FsTarget::Kind::Path)
                add_once(out, makeable(e.target.value, e.source, env));
    };
    if (in.entries) add(*in.entries);
    add(in.extra_entries);
    return out;
}

Environment with_directories(Environment env, std::vector<std::string> dirs) {
    if (dirs.empty()) return env;
    const auto shared = std::make_shared<const std::vector<std::string>>(std::move(dirs));
    auto made = [shared](const std::string& p) {
        return std::find(shared->begin(), shared->end(), p) != shared->end();
    };
    // A path inside a made directory: that directory and the rest of the path.
    auto under = [shared](const std::string& p) -> bool {
        for (const auto& d : *shared)
            if (path_below(p, d)) return true;
        return false;
    };
    auto realpath = env.realpath;
    // A made directory reached through a symlinked parent resolves to it.
    env.realpath = [realpath, made, under](const std::string& p) -> std::optional<std::string> {
        if (made(p)) return p;
        if (under(p)) return std::nullopt;  // empty: nothing below exists
        if (auto real = realpath(p)) return real;
        if (p.find('/') == std::string::npos) return std::nullopt;
        const auto parent = realpath(parent_path(p));
        if (!parent) return std::nullopt;
        std::string joined = join_path(*parent, base_name(p));
        return made(joined) ? std::optional(std::move(joined)) : std::nullopt;
    };
    auto is_directory = env.is_directory;
    env.is_directory = [is_directory, made](const std::string& p) { return made(p) || is_directory(p); };
    auto lexists = env.lexists;
    env.lexists = [lexists, made, under](const std::string& p) { return made(p) || (!under(p) && lexists(p)); };
    auto list_directory = env.list_directory;
    env.list_directory = [list_directory, made](const std::string& p) {
        return made(p) ? std::vector<std::string>{} : list_directory(p);
    };
    return env;
}

bool is_home_relative(const std::string& path) { return path == "~" || path.starts_with("~/"); }

std::string expand_home(const std::string& path, const Environment& env, const std::string& source) {
    if (!path.starts_with('~')) return path;
    if (!is_home_relative(path))
        throw Error(
            fmt::format("{}: '{}': only ~ and ~/ are expanded (the home of another user is not)", source, path));
    if (!env.home)
        throw Error(
            fmt::format("{}: '{}': ~ needs $HOME set to an absolute path; write the path in full", source, path));
    return path == "~" ? *env.home : join_path(*env.home, path.substr(2));
}

std::optional<HeldStateDirectory> held_state_directory(const CanonicalPolicy& p, const Environment& env) {
    auto state = state_directory_of(env);
    if (!state || !p.sandboxed_filesystem() || !writable_within(p, state->path) || lifted_path(p, state->path))
        return std::nullopt;
    return state;
}

namespace {

// A regular file's contents, when it has at most max bytes.
std::optional<std::string> read_regular_file(const std::string& path, std::size_t max) {
    struct stat st {};
    if (::lstat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode) || std::size_t(st.st_size) > max) return std::nullopt;
    std::ifstream f(path, std::ios::binary);
    if (!f) return std::nullopt;
    std::ostringstream s;
    s << f.rdbuf();
    return s.str();
}

}  // namespace

Environment system_environment() {
    Environment env;
    std::array<char, PATH_MAX> buf{};
    if (!::getcwd(buf.data(), buf.size()))
        throw Error(fmt::format("cwd: cannot read the current directory: {}", std::strerror(errno)));
    env.cwd = buf.data();
    if (const char* t = std::getenv("TMPDIR"); t && *t) env.tmpdir = t;
    if (const char* h = std::getenv("HOME"); h && h[0] == '/') env.home = join_path("/", h);
    env.sbx_state = sbx_state_directory(std::getenv("XDG_STATE_HOME"), std::getenv("HOME"));
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
    env.list_directory = [](const std::string& p) {
        std::vector<std::string> names;
        std::unique_ptr<DIR, int (*)(DIR*)> dir(::opendir(p.c_str()), ::closedir);
        if (!dir) return names;
        while (const dirent* d = ::readdir(dir.get()))
            if (std::strcmp(d->d_name, ".") != 0 && std::strcmp(d->d_name, "..") != 0) names.emplace_back(d->d_name);
        std::sort(names.begin(), names.end());
        return names;
    };
    env.euid = ::geteuid();
    env.read_file = [](const std::string& p) { return read_regular_file(p, 64 * 1024); };
    env.read_git_index = [](const std::string& p) { return read_regular_file(p, std::size_t(1) << 30); };
    return env;
}

}  // namespace sbx
