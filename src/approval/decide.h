// The decisions of section 7 as pure functions of (request, settings incl.
// rules, a snapshot of the session cache).  No I/O here: the orchestrator
// feeds in the cache snapshot and carries out what these return.
//
// Before the first attempt:
//   1. a `forbidden` rule refuses;
//   2. a prompt arises from, in this order: a `prompt` rule, --escalate
//      (on-request only, and only when the policy has a sandbox sbx can lift),
//      untrusted mode for a command not known to be safe; none: run sandboxed;
//   3. a prompt is refused without asking when the mode is `never` (prompt
//      rules only) or --reject covers its kind (rules: a prompt rule;
//      sandbox: an escalation);
//   4. otherwise an `allow` rule approves it (only a run under the
//      sandbox: never an escalation), then a cached approved_for_session
//      of exactly this argv, cwd, policy and sandboxing approves it, else
//      someone is asked.
// After a failed sandboxed attempt that the sandbox likely caused:
//   on-failure and untrusted may retry without the sandbox (steps 3-4 with
//   the kind `sandbox`); never and on-request report the denial.  The retry
//   always needs its own approval: an allow rule does not give it (the
//   program it allows may run code the workspace holds: a git filter, a
//   Makefile), nor does a yes to the sandboxed attempt before it (untrusted
//   mode, a prompt rule).  This is stricter than Codex, whose orchestrator
//   lets an "already approved" command bypass the second question.
//   danger-full-access and external-sandbox with -n full leave sbx nothing
//   to lift: no escalation and no retry, whatever the mode.  Under
//   external-sandbox with a restricted network, what is lifted is sbx's
//   network restriction (types.h, lifted_policy).
#pragma once

#include <optional>
#include <string>

#include "approval/rules.h"
#include "approval/types.h"

namespace sbx::approval {

// Whether approved_for_session is cached for this command, cwd and policy,
// run with (sandboxed) or without (unsandboxed) the sandbox.
struct CacheSnapshot {
    bool sandboxed = false;
    bool unsandboxed = false;
};

struct ApprovalRequirement {
    enum class Type { Skip, NeedsApproval, Forbidden };
    Type type = Type::Skip;
    // Set when a prompt arose (even one settled without asking).
    std::optional<ApprovalKind> kind;
    std::string reason;
    // How the attempt runs once it goes ahead.
    bool sandboxed = true;
    // Settled without asking: by "rule", "cache", "reject" or "mode", with
    // this decision (approved, approved_for_session or denied).
    std::string answered_by;
    std::optional<ReviewDecision> decision;
    std::optional<RuleMatch> rule;
    std::string note;  // e.g. why --escalate had no effect
};

ApprovalRequirement decide_first_attempt(const ApprovalRequest&, const ApprovalSettings&, CacheSnapshot);

struct RetryDecision {
    bool considered = false;  // false: no retry; `why_not` says why
    std::string why_not;
    ApprovalRequirement requirement;  // when considered; sandboxed is false
};

// ran_sandboxed: the first attempt ran under the sandbox (it was not an
// approved escalation); sandbox_denied: it failed and the sandbox likely
// caused it.
RetryDecision decide_retry(const ApprovalRequest&, const ApprovalSettings&, bool ran_sandboxed, bool sandbox_denied,
                           CacheSnapshot);

}  // namespace sbx::approval
