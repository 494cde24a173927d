// The policy model: what the user asks for (PolicyInput), what it resolves to
// (CanonicalPolicy), and the one JSON form of the canonical policy.
//
// Everything here is pure: the filesystem's answers come in through
// Environment, so resolution is unit-tested with a fake filesystem.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

namespace sbx {

// Every refusal in sbx is an Error whose message is one line, without the
// leading "sbx: " (the boundary adds it): "<file/flag>: <what is wrong>".
struct Error : std::runtime_error {
    using std::runtime_error::runtime_error;
};

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
    Limits limits;
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
    // True when the path itself (not following a final symlink) exists.
    std::function<bool(const std::string&)> lexists;
    // Target of a symlink, or nullopt if the path is not a symlink.
    std::function<std::optional<std::string>(const std::string&)> readlink;
};

// The directory a `.git` file names on its first "gitdir:" line, trimmed
// (as written: relative to the file's directory, or absolute); "" when none.
std::string gitdir_of_text(std::string_view git_file_text);

// rel against base, joined and normalised lexically ("a/./b/../c" -> "a/c",
// "/.." -> "/", no empty components, no trailing '/'); no filesystem access.
std::string join_path(const std::string& base, const std::string& rel);

// The real filesystem and this process's cwd and $TMPDIR.
Environment system_environment();

struct WritableRoot {
    std::string path;                          // absolute, symlink-resolved
    std::vector<std::string> protected_paths;  // absolute; may not exist yet
    bool operator==(const WritableRoot&) const = default;
};

struct CanonicalPolicy {
    Mode mode = Mode::ReadOnly;
    Network network = Network::Restricted;
    std::string workspace;                    // absolute, symlink-resolved
    std::vector<std::string> writable_roots;  // the extra roots, resolved
    bool exclude_slash_tmp = false;
    bool exclude_tmpdir_env_var = false;
    std::vector<std::string> protected_names;
    bool allow_unprotected = false;
    Limits limits;

    // Derived by resolve(): the exact sets.
    std::vector<std::string> readable;  // {"/"}
    // Every writable path: for workspace-write the workspace, the extra roots,
    // /tmp, /dev/shm and $TMPDIR (unless excluded), then /dev/null; for
    // read-only only /dev/null; for danger-full-access and external-sandbox "/".
    std::vector<WritableRoot> writable;

    bool sandboxed_filesystem() const {
        return mode == Mode::ReadOnly || mode == Mode::WorkspaceWrite;
    }
    bool operator==(const CanonicalPolicy&) const = default;
};

// Defaults, validation and the exact sets.  Throws Error naming the source
// of the bad value.
CanonicalPolicy resolve(const PolicyInput&, const Environment&);

// The canonical JSON form.  parse_policy_json(to_json(p)) == p, and printing
// is deterministic (keys sorted), so print -> parse -> print is the identity.
nlohmann::json to_json(const CanonicalPolicy&);
std::string to_json_text(const CanonicalPolicy&, int indent = 2);

// A policy JSON document read as input: sbx's canonical keys (any subset) or
// Codex's SandboxPolicy ({"type": ...}).  Unknown keys, wrong types and bad
// values throw Error("<source>: key 'x': ...").
PolicyInput input_from_json(const nlohmann::json&, const std::string& source);
PolicyInput input_from_json_text(std::string_view text, const std::string& source);

// A policy document read once: its input, and that input resolved in env.
// Derived keys (readable, writable) present in a canonical document must agree
// with what resolution yields; throws Error naming the key otherwise.
struct CheckedPolicy {
    PolicyInput input;
    CanonicalPolicy policy;
};
CheckedPolicy read_policy_text(std::string_view text, const std::string& source, const Environment& env);

// Parse a canonical or Codex policy document and resolve it in env: what the
// helper does with --sandbox-policy.
CanonicalPolicy parse_policy_text(std::string_view text, const std::string& source,
                                  const Environment& env);

// A human-readable rendering (sbx policy without --json).
std::string to_text(const CanonicalPolicy&);

}  // namespace sbx
