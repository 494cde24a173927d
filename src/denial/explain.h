// `sbx run --explain`: after the run, the one `sbx run` line whose flags
// would have let every recorded denial through, built from the user's own
// invocation and each denial's fix (denial/fix.h), and the denials no flag
// was suggested for, with why.  Pure.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "denial/denial.h"
#include "denial/policy_delta.h"
#include "policy/policy.h"

namespace sbx {

struct Explanation {
    // The suggested invocation, every word of it: sbx's own words (argv[0],
    // "run", the options) with the fixes' flags merged in and --explain left
    // out, "--", the command.  Empty when no denial has a flag.
    std::vector<std::string> argv;
    std::vector<std::string> added;  // the flags merged in, as words
    PolicyDelta change;              // the same as data (empty when argv is)
    std::size_t allowed = 0;         // denials the added flags allow
    struct Refused {
        std::string what;  // "write /root/.bashrc"
        std::string why;   // "that would make $HOME writable"
    };
    std::vector<Refused> not_suggested;  // one per denial left out
    std::uint64_t unseen = 0;            // denials only counted (denials_omitted): not looked at
};

// The policy the run would have had with this change (the caller applies it
// to its own policy sources and resolves: denial/policy_delta.h, apply; it
// throws Error when they do not make a policy).
using ResolveWith = std::function<CanonicalPolicy(const PolicyDelta& added)>;

// The run to explain.
struct ExplainRequest {
    // sbx's argv before the command (argv[0], "run", options, any "--" left out).
    const std::vector<std::string>& invocation;
    const std::vector<std::string>& command;  // the command's argv
    const CanonicalPolicy& policy;            // the run's
    const Environment& env;                   // the machine's, from the command's cwd
    ResolveWith resolve_with;
    // sbx learn: a line no wider than a careful person would write, so
    // never -w of a system directory (system_directories()).
    bool learning = false;
};

// The directories a learning run never suggests -w for, nor anything in
// them: the system's programs, libraries and configuration (/etc, /usr,
// /bin, /sbin, /lib*, /boot, /var/lib).
const std::vector<std::string>& system_directories();

// A fix that names a mode or a
// network level (-p, -n) replaces the invocation's own (-p X, -pX, --policy X,
// --policy=X); -w, --unprotect, --read-only and --allow-domain are added once each, a -w
// below another one left out.  The result is checked, not hoped for: the
// policy with the added flags is resolved, a -w it does not need (the new
// mode already makes the place writable) is dropped, and a denial it still
// refuses is listed as not suggested.
Explanation explain_run(const ExplainRequest&, const DenialAnalysis&);

// Text mode's lines ("sbx: explain: ..."), each with its newline.
std::string explanation_text(const Explanation&, std::size_t denials);

// sbx learn's lines ("sbx: learn: ..."): the line the command needs (the
// invocation as it was, "--" and the command, where no flag is suggested),
// what no flag was suggested for, what was only counted.
std::string learning_text(const std::vector<std::string>& invocation, const std::vector<std::string>& command,
                          const Explanation&, std::size_t denials);

// The result's "explain" object: {argv, line, added, allowed, not_suggested: [{what, why}], unseen}.
nlohmann::json explanation_json(const Explanation&);

}  // namespace sbx
