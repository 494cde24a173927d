// Approvals (SPEC section 7): the vocabulary, the settings built from the
// command line, and the facts a decision is made from.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "approval/rules.h"
#include "policy/policy.h"

namespace sbx::approval {

// What an approver (or the cache, or a rule) answers.
enum class ReviewDecision { Approved, ApprovedForSession, Denied, Abort };

// --ask-for-approval.
enum class AskForApproval { Never, OnFailure, OnRequest, Untrusted };

// What a prompt is about.
//   Sandbox:    retry without the sandbox after a likely sandbox denial.
//   Rules:      a `prompt` rule matched the command.
//   Escalation: --escalate asked to run without the sandbox (on-request).
//   Untrusted:  untrusted mode, a command not known to be safe.
//   Network:    while the command runs, a connection to a host that no
//               allow-domain names (on-request and untrusted, with
//               --approver; NetworkApprovals in orchestrator.h).
enum class ApprovalKind { Sandbox, Rules, Escalation, Untrusted, Network };

// The host (a name or an address, normalised) and port of a Network request.
struct NetworkTarget {
    std::string host;
    std::uint16_t port = 0;
    bool operator==(const NetworkTarget&) const = default;
};

std::string_view to_string(ReviewDecision);
std::string_view to_string(AskForApproval);
std::string_view to_string(ApprovalKind);

// Throw Error("--ask-for-approval: unknown mode 'x' (expected ...)").
AskForApproval parse_ask_for_approval(std::string_view);
// nullopt for anything but the four decision words.
std::optional<ReviewDecision> parse_review_decision(std::string_view);

// --reject sandbox,rules: prompts of these kinds are refused without asking.
// `sandbox` covers the prompts about running without the sandbox (the retry
// after a denial and an --escalate request); `rules` covers `prompt` rules;
// `network` the Network requests (orchestrator.h NetworkApprovals).
struct RejectConfig {
    bool sandbox = false;
    bool rules = false;
    bool network = false;  // Network requests: refused without asking
    bool operator==(const RejectConfig&) const = default;
};

// Each element may itself be a comma-separated list: {"sandbox,rules"} or
// {"sandbox", "rules"}.  Throws Error on an unknown word.
RejectConfig parse_reject(const std::vector<std::string>&);

// An approver program's time to answer when --approver-timeout is not given.
inline constexpr std::chrono::milliseconds kDefaultApproverTimeout{30000};

// Everything section 7's flags say, validated.
struct ApprovalSettings {
    AskForApproval mode = AskForApproval::Never;
    RejectConfig reject;
    std::optional<std::string> approver;  // --approver PROGRAM
    std::optional<std::string> session;   // --session NAME (validated)
    RuleSet rules;                        // from every --rules FILE
    bool escalate = false;                // --escalate
    std::optional<std::string> justification;
    // How long an approver program may take to answer and exit
    // (--approver-timeout); zero: no limit.
    std::chrono::milliseconds approver_timeout{kDefaultApproverTimeout};
};

// Section 7's flags as the command line gives them (cli::RunArgs::approval),
// not yet validated.  Every member has an initialiser, so that designated
// initialisers may leave any out (GCC 12's -Wmissing-field-initializers).
struct ApprovalFlags {
    std::string ask_for_approval = "never";                       // never|on-failure|on-request|untrusted
    std::vector<std::string> reject{};                            // "sandbox", "rules", "network"
    std::optional<std::string> approver{};                        // --approver PROGRAM
    std::optional<std::chrono::milliseconds> approver_timeout{};  // --approver-timeout (0: no limit)
    std::optional<std::string> session{};                         // --session NAME
    std::vector<std::string> rules_files{};                       // --rules FILE
    bool escalate = false;                                        // --escalate
    std::optional<std::string> justification{};                   // --justification
};

// The flags, validated.  Reads the rules files; throws Error on a bad mode,
// reject word, session name, rules file, or --escalate / --justification
// without on-request.
ApprovalSettings settings_from_args(const ApprovalFlags&);

// The command to decide about.
struct ApprovalRequest {
    std::vector<std::string> command;  // argv
    std::string cwd;                   // absolute
    CanonicalPolicy policy;
    // argv[0] as it will be found (through the command's PATH, from cwd),
    // absolute with its symlinks resolved; "" when it is not found.  Rules
    // match it besides argv[0] (rules.h).
    std::string program{};
};

// True when sbx applies a restriction that it could lift for a run "without
// the sandbox": the filesystem sandbox of read-only and workspace-write
// (lifted: the command runs with no sandbox at all), or the network
// restriction of external-sandbox with -n restricted or limited (lifted: the
// network is full; the outer sandbox is someone else's, and the --limit-*
// limits stay).  danger-full-access, and external-sandbox with -n full, leave
// sbx nothing to lift: no escalation and no retry.
bool policy_has_liftable_sandbox(const CanonicalPolicy&);

// The policy of a run without what sbx could lift (see above); the policy
// itself when there is nothing to lift.
CanonicalPolicy lifted_policy(const CanonicalPolicy&);

// What the sandboxed command may write, as far as sbx knows: the writable
// roots where sbx sandboxes the filesystem (read-only, workspace-write);
// none otherwise (external-sandbox: the outer sandbox decides; sbx checks
// what it can, the approver's identity).  The approver and the session store
// must lie outside them.
std::vector<std::string> writable_roots_of(const CanonicalPolicy&);

// What such a run leaves out, for messages: "the sandbox", or for
// external-sandbox "sbx's network restriction".
std::string_view lifted_restriction(const CanonicalPolicy&);

// Why nothing can be lifted (for a policy where policy_has_liftable_sandbox
// is false), e.g. "the danger-full-access policy has no sandbox that sbx
// could lift".
std::string nothing_to_lift(const CanonicalPolicy&);

}  // namespace sbx::approval
