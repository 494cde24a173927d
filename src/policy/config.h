// Configuration kept between runs (issue 35): the user's defaults in
// $XDG_CONFIG_HOME/sbx/config.json and a project policy in the workspace's
// .sbx/policy.json, trusted by the hash of its exact bytes.  Pure: the
// filesystem comes in through Environment, the trust store's records as text.
// docs/policy.md ("Configuration") states the rules these functions keep.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "policy/policy.h"

namespace sbx {

// $XDG_CONFIG_HOME/sbx when that is absolute, else $HOME/.config/sbx when
// $HOME is absolute (both normalised), else "".  The caller passes the two
// variables (nullptr when unset).
std::string sbx_config_directory(const char* xdg_config_home, const char* home);

inline constexpr std::string_view kUserConfigName = "config.json";
inline constexpr std::string_view kProjectPolicyPath = ".sbx/policy.json";

// A project policy (.sbx/policy.json): the canonical policy's input keys
// (any subset; not "workspace", not the derived keys, not Codex's forms),
// with every path inside the workspace written relative to it.  A relative
// path (entries' "path" and "glob", "writable_roots") is taken from the
// workspace (absolute, symlink-resolved) and may neither hold ".." nor lead
// out of it through a symlink; an absolute path must lie outside the
// workspace (inside it, it would tie the file to one clone); "~/" is the
// user's home.  Throws Error("<source>: ...") for anything else.
PolicyInput project_input_from_text(std::string_view text, const std::string& source, const std::string& workspace,
                                    const Environment& env);

// What `combined` allows that `base` does not, one phrase each ("makes
// /w/x writable (entry ...)", "network full", "limit cpu_seconds removed");
// empty when combined is the same or narrower.  Narrower means: for every
// path, the access is no higher (deny = none < read < write), judged at every
// path an entry of either policy names and at "/", which decides every other
// path; no filesystem sandbox only where base has none either; the network
// level no higher (restricted < limited < limited through the allowlist
// proxy < full), an allowlist only a subset of base's with at least its
// denials; each limit base sets set and no higher; allow_unprotected only if
// base has it.
std::vector<std::string> widenings(const CanonicalPolicy& base, const CanonicalPolicy& combined);

// `sbx policy --relative`: the canonical JSON without the workspace and the
// derived keys (readable, writable, denied), every entry path inside the
// workspace relative to it ("." for the workspace itself).  Read back by
// project_input_from_text in the same workspace, it resolves to the same
// policy.
nlohmann::json relative_json(const CanonicalPolicy&);

// The trust store: one file per trusted project policy, named by the
// SHA-256 of its path, holding one line as sha256sum(1) prints it:
// "<sha256 of the exact bytes>  <path>\n".
struct TrustRecord {
    std::string hash;  // 64 lowercase hex digits
    std::string path;  // absolute
    bool operator==(const TrustRecord&) const = default;
};
std::string trust_record_name(const std::string& policy_path);
std::string trust_record_text(const TrustRecord&);
// nullopt for anything but one such line.
std::optional<TrustRecord> parse_trust_record(std::string_view text);

enum class Trust { Untrusted, Trusted, Changed };  // Changed: trusted once, its bytes differ now
Trust trust_of(const std::optional<TrustRecord>& record, const std::string& policy_path, const std::string& hash);

// Where each setting came from: the sources in order of precedence (later
// wins), each with a name ("built-in default" is implied), give one
// (setting, origin) pair per setting, in a fixed order; a list setting names
// every source that added to it.
struct PolicyLayer {
    std::string name;  // "user config /h/.config/sbx/config.json", "command line"
    PolicyInput input;
};
std::vector<std::pair<std::string, std::string>> setting_origins(const std::vector<PolicyLayer>& layers);

}  // namespace sbx
