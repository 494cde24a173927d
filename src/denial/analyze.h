// One attempt's denials from every kind of evidence: the command's outcome
// (the output guess), the helper's status (the recorder's records, its
// network attempts), the audit or Seatbelt log's denials, and the allowlist
// proxy's refusals; out comes the one DenialAnalysis that the notes, the
// JSON result and the approver's request read, each denial with its rule and
// fix (denial/fix.h).  Pure.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "denial/denial.h"
#include "denial/evidence.h"
#include "denial/helper_status.h"
#include "policy/policy.h"

namespace sbx {

struct Evidence {
    RunOutcome outcome;
    bool sandboxed = false;  // a sandbox was applied: without one nothing is a denial
    // What the Linux helper reported on its --status-fd; null where it did
    // not run (macOS, no sandbox).
    const HelperStatus* helper = nullptr;
    bool record_denials = false;  // --record-denials was asked (the recorder's list is then exact)
    std::vector<Denial> logged;   // the audit log's (Linux) or the unified log's (macOS)
    std::vector<Denial> refused;  // the allowlist proxy's (proxy_refusal), exact with their rule and fix
};

// What the output guessed (analyze_denial), replaced by the recorder's exact
// list where it ran (analyze_recorded; else its network attempts join,
// add_recorded_network), the proxy's refusals first (a command that failed
// after one failed of the sandbox), lookups named from the output
// (name_lookups), and for a sandboxed run each denial's rule and fix
// against the policy (explain_denials; env.cwd is the command's).
DenialAnalysis analyze(const Evidence&, const CanonicalPolicy&, const Environment&);

// A connection the allowlist proxy refused (net/proxy.h), as a denial:
// connect to "host:port" ("[v6]:port"), with the proxy's rule and fix.
Denial proxy_refusal(const std::string& host, std::uint16_t port, Fix fix);

// Whether the helper's recorder ran: it needs the sandbox's pid 1, which
// the filesystem layers make (not external-sandbox's run; the helper names
// "recorded denials" as not enforced where no user namespace allows one).
// Only then does an empty list mean that the sandbox refused nothing.
bool recorder_ran(const CanonicalPolicy&, const HelperStatus&);

}  // namespace sbx
