// The policy model: what the user asks for (PolicyInput), what it resolves to
// (CanonicalPolicy), and the one JSON form of the canonical policy.
//
// Everything here is pure: the filesystem's answers come in through
// Environment, so resolution is unit-tested with a fake filesystem.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "util/error.h"
#include "util/path.h"

namespace sbx {

enum class Mode { ReadOnly, WorkspaceWrite, DangerFullAccess, ExternalSandbox };
enum class Network { Restricted, Limited, Full };

std::string_view to_string(Mode);
std::string_view to_string(Network);
// Accept the documented spellings and aliases ("full" for danger-full-access,
// "external" for external-sandbox); nullopt for anything else.
std::optional<Mode> parse_mode(std::string_view);
std::optional<Network> parse_network(std::string_view);

struct Limits {
    std::optional<std::uint64_t> memory;       // bytes of address space (RLIMIT_AS)
    std::optional<std::uint64_t> cpu_seconds;  // RLIMIT_CPU
    std::optional<std::uint64_t> processes;    // RLIMIT_NPROC
    std::optional<std::uint64_t> file_size;    // bytes (RLIMIT_FSIZE)
    std::optional<std::uint64_t> open_files;   // RLIMIT_NOFILE
    bool operator==(const Limits&) const = default;
};

// The protected names of section 2, in the order they are listed.
const std::vector<std::string>& default_protected_names();

// Filesystem entries: a path (or a special path, or a deny glob) and what the
// command may do there.  Codex's permission-profile model (CODEX-HELPER.md
// section 4.3): of the entries at a path or above it, the one with the most
// path components wins; at equal depth deny beats write beats read; a path no
// entry covers is not accessible at all.
enum class FsAccess { Read, Write, Deny };
std::string_view to_string(FsAccess);
// "read", "write", "deny" (and Codex's alias "none"); nullopt otherwise.
std::optional<FsAccess> parse_fs_access(std::string_view);

struct FsTarget {
    enum class Kind {
        Path,          // value: an absolute, lexically normalised path
        Root,          // "/"
        Minimal,       // the platform set: /bin /sbin /usr /etc /lib /lib64 ... (those that exist)
        ProjectRoots,  // the workspace; value: a subpath below it ("" for the workspace itself)
        TmpDir,        // $TMPDIR (nothing when unset)
        SlashTmp,      // /tmp
        Unknown,       // a special path this version does not know (Codex's "unknown"); value: its path
        Glob,          // value: an absolute pattern (* ? [..] within a component, ** across them)
    };
    Kind kind = Kind::Path;
    std::string value;
    bool operator==(const FsTarget&) const = default;
};

// The spelling used on the command line and by `sbx policy`: the path, the
// pattern, or ":root", ":minimal", ":tmpdir", ":slash_tmp", ":project_roots"
// (":project_roots/SUB"), ":unknown(PATH)".
std::string to_string(const FsTarget&);

struct FsEntry {
    FsTarget target;
    FsAccess access = FsAccess::Read;
    // Where it was given ("--deny", "p.json: key 'entries'", "preset workspace-write");
    // not part of the policy's identity.
    std::string source;
    bool operator==(const FsEntry& o) const { return target == o.target && access == o.access; }
};

// A secret (issue 36, docs/network.md): an environment variable or a file
// the command may use but never read.  Masked (hosts given): the sandbox sees
// a sentinel of the same length in place of each secret value, and sbx's
// proxy puts the real value back in what the command sends over TLS to
// those hosts only (sbx-tls terminates those connections).  Withheld (no
// hosts: nowhere to send it): the variable is unset in the sandbox, the file
// denied.
struct Secret {
    enum class Kind { Env, File };
    Kind kind = Kind::Env;
    std::string name;                // the variable; or the file, absolute ("~/" expanded)
    std::vector<std::string> hosts;  // normalised patterns (net/domain.h); empty: withheld
    // Files: an ECMAScript regular expression whose group 1, in every
    // match, is a secret value ("": the whole file, less its final newline).
    std::string extract{};
    bool masked() const { return !hosts.empty(); }
    bool operator==(const Secret&) const = default;
};
std::string_view to_string(Secret::Kind);

// What the read-only and workspace-write presets read from: the whole
// filesystem (":root"), only the platform set (":minimal"), or nothing but
// their other entries (Codex's restricted read access without platform
// defaults).
enum class ReadBase { Root, Minimal, None };

// What was asked for, from any source; unset fields take defaults.  Sources
// are merged with merge(): later sources override earlier ones, and list
// options (writable roots, protect/unprotect) accumulate.
struct PolicyInput {
    // A path together with where it was given, for error messages.
    struct SourcedPath {
        std::string path;
        std::string source;  // "--writable-root", "policy.json: key 'writable_roots'"
        bool operator==(const SourcedPath&) const = default;
    };
    std::optional<Mode> mode;
    std::optional<Network> network;
    std::optional<SourcedPath> workspace;
    std::vector<SourcedPath> writable_roots;
    std::optional<bool> exclude_slash_tmp;
    std::optional<bool> exclude_tmpdir_env_var;
    std::optional<std::vector<std::string>> protected_names;  // replaces the defaults
    std::vector<std::string> protect;                         // added to them
    std::vector<std::string> unprotect;                       // removed from them
    std::optional<bool> allow_unprotected;
    std::optional<bool> git_write;
    Limits limits;
    // The whole list of filesystem entries (a Codex permission profile, or a
    // canonical document's "entries"): replaces the mode's preset.
    std::optional<std::vector<FsEntry>> entries;
    std::string entries_source;
    // Added to the preset or to `entries` (--read, --deny, --deny-glob).
    std::vector<FsEntry> extra_entries;
    std::optional<ReadBase> read_base;  // --minimal, Codex's read_only_access
    std::string read_base_source = "--minimal";
    std::optional<unsigned> glob_scan_max_depth;
    // Network by name (net/domain.h): patterns as given, with where
    // (--allow-domain, "p.json: key 'allow_domains'"); they accumulate.
    std::vector<SourcedPath> allow_domains;
    std::vector<SourcedPath> deny_domains;
    // Secrets (--secret-env, --secret-file, "secrets"), each with where it
    // was given; they accumulate.  tls_passthrough: hosts sbx-tls never
    // terminates (pinning clients), so no secret reaches them.
    struct SourcedSecret {
        Secret secret;
        std::string source;
        bool operator==(const SourcedSecret&) const = default;
    };
    std::vector<SourcedSecret> secrets;
    std::vector<SourcedPath> tls_passthrough;
    // Where each field came from, for error messages ("--policy-file f.json").
    std::string mode_source = "--policy";
    std::string network_source = "--network";

    void merge(const PolicyInput& later);
};

// The filesystem and process facts that resolution depends on.
struct Environment {
    std::string cwd;                    // absolute
    std::optional<std::string> tmpdir;  // $TMPDIR, if set and non-empty
    // Canonical absolute path (symlinks resolved) or nullopt if it does not exist.
    std::function<std::optional<std::string>(const std::string&)> realpath;
    // True when the path (not following a final symlink) is a directory.
    std::function<bool(const std::string&)> is_directory;
    // For a path that is a regular file: its contents (small files only), else nullopt.
    std::function<std::optional<std::string>(const std::string&)> read_file;
    // The same for a git index, whatever its size (unset: none is read).
    std::function<std::optional<std::string>(const std::string&)> read_git_index;
    // True when the path itself (not following a final symlink) exists.
    std::function<bool(const std::string&)> lexists;
    // Target of a symlink, or nullopt if the path is not a symlink.
    std::function<std::optional<std::string>(const std::string&)> readlink;
    // The names in a directory (not "." and ".."), for deny globs; empty when
    // it cannot be read.
    std::function<std::vector<std::string>(const std::string&)> list_directory;
    unsigned euid = 0;                // for /tmp/codex-daemon-<euid>
    std::optional<std::string> home;  // $HOME, if set and absolute: what ~ in a policy file means
    // sbx's own state directory, absolute (util/path.h sbx_state_directory:
    // its session approvals), or "": held read-only wherever a writable root
    // contains it, so that no sandboxed command writes an approval that a
    // later run would read.
    std::string sbx_state{};
};

// What --git-write opens in a protected .git directory (linux-helper/
// git_view.h): the directories git writes as it commits, fetches and gcs,
// bound writable; the files at the top that git keeps its state in, written
// back to the host at the end; and the files it takes configuration from,
// read-only (every other top-level file is a copy that stays in the sandbox).
inline constexpr std::string_view kGitWritableDirectories[] = {"objects", "refs", "logs", "reftable", "lfs"};
inline constexpr std::string_view kGitStateFiles[] = {
    "index",     "HEAD",       "ORIG_HEAD",  "FETCH_HEAD",       "COMMIT_EDITMSG", "packed-refs", "MERGE_HEAD",
    "MERGE_MSG", "MERGE_MODE", "AUTO_MERGE", "CHERRY_PICK_HEAD", "REVERT_HEAD",    "SQUASH_MSG",  "shallow",
};
inline constexpr std::string_view kGitConfigurationFiles[] = {"config", "config.worktree", "commondir", "gitdir"};

// The directory a `.git` file names on its first "gitdir:" line, trimmed
// (as written: relative to the file's directory, or absolute); "" when none.
std::string gitdir_of_text(std::string_view git_file_text);

// A path of a policy file: "~" and "~/..." are taken from env.home (as the
// shell does on the command line), anything else is returned as it is.
// Throws Error naming source for "~" without $HOME and for "~user".
std::string expand_home(const std::string& path, const Environment& env, const std::string& source);
bool is_home_relative(const std::string& path);  // "~" or "~/..."

// The real filesystem and this process's cwd and $TMPDIR.
Environment system_environment();

struct WritableRoot {
    std::string path;                          // absolute, symlink-resolved
    std::vector<std::string> protected_paths;  // absolute; may not exist yet
    bool operator==(const WritableRoot&) const = default;
};

// One entry resolved to an absolute path on this machine.
struct ResolvedEntry {
    std::string path;  // absolute; symlinks resolved where the path exists
    // The path as the entry spelled it (absolute, lexically normalised) where
    // it differs from `path` (a symlink on the way: /bin -> usr/bin): a view
    // without the root recreates those symlinks.
    std::string given;
    FsAccess access = FsAccess::Read;
    bool exists = false;
    bool directory = false;
    // The rule as `sbx check` names it: "entry /home/u/.ssh deny (--deny)",
    // "protected name .git in /w".
    std::string rule;  // not part of the policy's identity
    // A protected path (a protected name of a writable root or of a
    // directory above a nested one, or what it leads to), not an entry of
    // the policy's own.
    bool protection = false;
    bool operator==(const ResolvedEntry& o) const {
        return path == o.path && given == o.given && access == o.access && exists == o.exists &&
               directory == o.directory && protection == o.protection;
    }
};

struct CanonicalPolicy {
    Mode mode = Mode::ReadOnly;
    Network network = Network::Restricted;
    std::string workspace;  // absolute, symlink-resolved: :project_roots, relative globs
    // The whole list, the mode's preset expanded ([:root write] for the modes
    // without a filesystem sandbox).
    std::vector<FsEntry> entries;
    std::optional<unsigned> glob_scan_max_depth;
    std::vector<std::string> protected_names;
    bool allow_unprotected = false;
    // --git-write: in each protected .git directory, git's objects, refs,
    // logs, index and HEAD writable, its hooks and configuration read-only
    // (the helper's git_view.h).
    bool git_write = false;
    Limits limits;
    // Network by name: normalised patterns (net/domain.h), each once.  Not
    // empty only with network limited: the command reaches them through
    // sbx's allowlist proxy.
    std::vector<std::string> allow_domains;
    std::vector<std::string> deny_domains;
    // Secrets, each (kind, name) once, a withheld one winning over a masked
    // one; a masked secret's hosts are each allowed by allow_domains.
    std::vector<Secret> secrets;
    std::vector<std::string> tls_passthrough;  // normalised patterns

    // Derived by resolve() from the entries (for a sandboxed filesystem).
    // Every entry that decides its own path, resolved, in order: the entries
    // (globs expanded to what exists now), then sbx's own: /dev/null write,
    // /dev and /proc read (without a readable root), /tmp/codex-daemon-<euid>
    // deny, and the protected paths (read) of every writable root and of
    // the directories between nested roots (protected_name_directories).
    std::vector<ResolvedEntry> resolved;
    std::vector<std::string> readable;  // read entries that decide their path ({"/"} for the presets)
    // The write entries that decide their path, each with the protected paths
    // below it; for danger-full-access and external-sandbox {"/"}.
    std::vector<WritableRoot> writable;
    std::vector<std::string> denied;  // deny entries that decide their path, globs expanded

    bool sandboxed_filesystem() const { return mode == Mode::ReadOnly || mode == Mode::WorkspaceWrite; }
    // The allowlist proxy runs (--allow-domain given).
    bool by_name() const { return !allow_domains.empty(); }
    // A secret is masked: sbx-tls runs beside the proxy.
    bool masks_secrets() const {
        for (const auto& s : secrets)
            if (s.masked()) return true;
        return false;
    }
    // The facts derived once here, for the helper's view and Landlock,
    // Seatbelt and sbx check (tests/unit/test_entries.cc pins each case).
    //
    // True when "/" is readable: the resolved entry that decides "/" (a
    // :root read or write entry, or a protected path that is "/") does not
    // deny it.  The view is then the host's filesystem, read-only; otherwise
    // it is empty but for the entries.  Usable inside resolve() before the
    // derived sets below are filled.
    bool reads_root() const;
    // "/" is in the derived sets: readable, or a writable root.  Seatbelt
    // builds its whole profile from those sets, this too.  The same answer as
    // reads_root() for every resolved policy but one where a protected path
    // is "/" itself (a .git file's `gitdir: /`, a protected name that is a
    // symlink to "/"), which only reads_root() counts.  Not unified: either
    // choice changes one platform (the Linux view would drop the host's
    // root, or the profile its restricted_read base), and a policy whose
    // sets are filled by hand (Seatbelt's tests) has no resolved entries.
    bool root_in_derived_sets() const;
    // The sandbox's /dev/shm is its own, a private, empty, writable tmpfs, as
    // in Codex's helper (whose /dev is always private): a sandboxed
    // filesystem, and no entry names /dev/shm itself (workspace-write's preset
    // does, with write: then it is the host's, with that entry's access).
    // The host's shared memory is then neither readable nor writable, and
    // nothing written there outlives the sandbox.
    bool private_dev_shm() const;
    // An entry, a protected path too, gives the host's existing /dev/shm
    // read or write access (whatever else decides that path): a view without
    // the root leaves /dev/shm to the entries instead of mounting a tmpfs
    // there.  Mostly !private_dev_shm(), but not where an entry denies
    // /dev/shm or names a missing one (false here: the view without the root
    // mounts a tmpfs there all the same, made read-only, or covered, with
    // the rest of the view), where an entry reads it and another denies it
    // (true: no tmpfs, and the denied path is absent), nor where only a
    // protected path is /dev/shm (`.codex -> /dev/shm`; true: its read-only
    // clone of the host's, while private_dev_shm() says private).  Not
    // unified with private_dev_shm(): one definition for both changed what
    // /dev/shm is in those views, or what Landlock and sbx check say of it.
    bool entries_give_host_dev_shm() const;
    bool operator==(const CanonicalPolicy&) const = default;
};

// The access a policy gives to an absolute, symlink-resolved path, and the
// resolved entry that decided it (nullptr: no entry covers the path).
struct FsDecision {
    std::optional<FsAccess> access;  // nullopt: not accessible (no entry)
    const ResolvedEntry* entry = nullptr;
};
FsDecision decide_path(const CanonicalPolicy&, const std::string& path);

// Whether path is one of git's state that --git-write opens (whether or not
// p has it): inside a protected .git directory, below one of
// kGitWritableDirectories or one of kGitStateFiles (or its NAME.lock).
bool git_write_opens(const CanonicalPolicy& p, const std::string& path);

// Where the protected names hold: the top of every writable root that is a
// directory, and every directory from the top of a writable root down to a
// writable root nested in it that the command may write in (the workspace
// /tmp/a/b/ws: /tmp, /tmp/a, /tmp/a/b and the workspace), each once.
// Stricter than Codex, which protects the tops only: there `git init ..`
// from a workspace in /tmp made a repository above it, whose config ran
// commands at the next `git status` on the host.
struct ProtectedNameDirectory {
    std::string path;
    // Between two roots: the outermost root that holds it and the nested
    // root it leads to; both "" for the top of a root.
    std::string outer;
    std::string inner;
};
std::vector<ProtectedNameDirectory> protected_name_directories(const CanonicalPolicy&, const Environment&);

// env.sbx_state where a writable root of the policy contains it (and no
// entry names it with write): its real path (the symlinks of its existing
// part resolved) and the directories of that path that do not exist yet,
// outermost first; nullopt without a filesystem sandbox.  resolve() holds
// it read-only where it exists; sbx run makes the missing ones first (mode
// 0700) where this user may (where it may not, neither may the command), so
// that the state directory itself is held, never a missing ~/.local above it.
inline constexpr std::string_view kStateDirectoryRule = "sbx: its state directory stays read-only (session approvals)";
struct HeldStateDirectory {
    std::string path;
    std::vector<std::string> missing;
};
std::optional<HeldStateDirectory> held_state_directory(const CanonicalPolicy&, const Environment&);

// The writable roots of `in` that do not exist yet but whose parent
// directory does (absolute, ~ expanded, the parent's symlinks resolved), in
// order, each once: `sbx run` makes them (the last component only).
std::vector<std::string> missing_writable_roots(const PolicyInput&, const Environment&);
// The same of its write entries of a path (a policy file's, such as `sbx
// policy --json` prints for a -w root): made where this user may.
std::vector<std::string> missing_write_entries(const PolicyInput&, const Environment&);

// env as it will be once each of `dirs` (absolute, parents resolved) is
// made as an empty directory: for resolving the policy before they are.
Environment with_directories(Environment env, std::vector<std::string> dirs);

// What is resolved: the whole policy, or one document of several (a policy
// file, a project policy, the user's config), checked alone before the
// merge; the checks that need the other documents wait for the whole (a
// masked secret's host, admitted by the merged allowlist).
enum class ResolveScope { Whole, OneDocument };

// Defaults, validation and the exact sets.  Throws Error naming the source
// of the bad value.
CanonicalPolicy resolve(const PolicyInput&, const Environment&, ResolveScope = ResolveScope::Whole);

// The canonical JSON form.  parse_policy_json(to_json(p)) == p, and printing
// is deterministic (keys sorted), so print -> parse -> print is the identity.
nlohmann::json to_json(const CanonicalPolicy&);
std::string to_json_text(const CanonicalPolicy&, int indent = 2);

// A policy JSON document read as input: sbx's canonical keys (any subset) or
// Codex's SandboxPolicy ({"type": ...}).  Unknown keys, wrong types and bad
// values throw Error("<source>: key 'x': ...").
PolicyInput input_from_json(const nlohmann::json&, const std::string& source);
PolicyInput input_from_json_text(std::string_view text, const std::string& source);

// A policy document read once: its input, and that input resolved in env as
// one document of several (ResolveScope::OneDocument).  Derived keys
// (readable, writable) present in a canonical document must agree with what
// resolution yields; throws Error naming the key otherwise.
struct CheckedPolicy {
    PolicyInput input;
    CanonicalPolicy policy;
};
CheckedPolicy read_policy_text(std::string_view text, const std::string& source, const Environment& env);

// Parse a canonical or Codex policy document and resolve it in env.
CanonicalPolicy parse_policy_text(std::string_view text, const std::string& source, const Environment& env);

// What the helper does with --sandbox-policy: parse_policy_text, but a
// writable root that does not exist is left out, as Codex's helper left it
// (nothing is there to write; sbx run makes its missing roots before).
CanonicalPolicy parse_sandbox_policy_text(std::string_view text, const std::string& source, const Environment& env);

// Codex 0.169's --permission-profile JSON (CODEX-HELPER.md section 3): every
// shape it accepts, unknown keys ignored as Codex ignores them (or, with
// UnknownKeys::Refuse, refused as sbx's own policy sources refuse them).
// policy_cwd is --sandbox-policy-cwd (the base of :project_roots and relative
// globs).  Throws Error("<source>: ...") on what Codex rejects.
enum class UnknownKeys { Ignore, Refuse };
PolicyInput input_from_permission_profile(std::string_view text, const std::string& policy_cwd,
                                          const std::string& source = "--permission-profile",
                                          UnknownKeys unknown = UnknownKeys::Ignore);
// A JSON object whose "type" is a permission profile's: "managed", "disabled"
// or "external" (Codex's SandboxPolicy has "read-only", "external-sandbox"...).
bool is_permission_profile(const nlohmann::json&);

// sbx's own policy documents (--policy-file, $SBX_POLICY_FILE, --policy-json):
// what input_from_json_text and read_policy_text read, and also Codex's
// permission profile in its tagged shapes, with policy_cwd (for
// read_policy_document: env.cwd) as its --sandbox-policy-cwd and unknown keys
// refused.  A profile resolves to the policy the helper enforces for it.
PolicyInput input_from_document_text(std::string_view text, const std::string& source, const std::string& policy_cwd);
CheckedPolicy read_policy_document(std::string_view text, const std::string& source, const Environment& env);

// A human-readable rendering (sbx policy without --json).
std::string to_text(const CanonicalPolicy&);

}  // namespace sbx
