// A change to a policy's sources, as a fix suggests it (denial/fix.h): what
// sbx run's flags -p, -n, -w, --unprotect, --git-write, --read-only and
// --allow-domain
// would add.  Plain data; the flags are written from it here alone
// (to_flags), and applied to the policy sources as those flags would be
// (apply), so that what a fix says and what it does cannot disagree.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "policy/policy.h"

namespace sbx {

struct PolicyDelta {
    // Each with {}, so that a fix names only what it changes
    // (PolicyDelta{.writable_roots = {dir}}).
    std::optional<Mode> mode{};                 // -p
    std::optional<Network> network{};           // -n
    std::vector<std::string> writable_roots{};  // -w DIR
    std::vector<std::string> unprotect{};       // --unprotect NAME
    bool git_write = false;                     // --git-write
    std::vector<std::string> read_only{};       // --read-only PATH
    std::vector<std::string> allow_domains{};   // --allow-domain PATTERN
    bool empty() const;
    bool operator==(const PolicyDelta&) const = default;
};

// The deltas of several fixes as one: the last mode asked, the widest
// network (full over limited: a client's and a server's), each root, name,
// path and pattern once, a writable root below another one left out, and
// --git-write left out beside --unprotect .git (which opens all of .git).
PolicyDelta merged(const std::vector<PolicyDelta>&);

// The flags of sbx run that make the change, in the order -p, -n, -w,
// --unprotect, --git-write, --read-only, --allow-domain, as words ({"-w", "/root/.npm"}).
std::vector<std::string> to_flags(const PolicyDelta&);

// The change as JSON, for a program that reads a denial (the result's and
// an approver's request): each field that changes something, by its name
// here ({"writable_roots": ["/root/.npm"]}, {"mode": "workspace-write"},
// {"git_write": true}); {} for none.
nlohmann::json to_json(const PolicyDelta&);

// to_flags as a shell reads them back ("-p workspace-write -w /root/.npm").
std::string flags_text(const PolicyDelta&);

// The policy sources with the change made, as if its flags had been given on
// the command line after the user's own: the mode and network replaced, the
// rest added (with the flags' names as their sources); an allowlist added
// drops a -n restricted, which cannot go with it.
void apply(const PolicyDelta&, PolicyInput&);

}  // namespace sbx
