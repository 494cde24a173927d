// What the approval flow did, as the JSON result's "approval" says it
// (SPEC section 7): the mode, each prompt (asked or settled without asking)
// with who answered and what, and why nothing more happened.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "approval/rules.h"
#include "approval/types.h"

namespace sbx::approval {

// Before the first attempt, while an attempt runs (a Network request), or
// the retry without the sandbox after it.
enum class ApprovalStage { Before, During, Retry };
std::string_view to_string(ApprovalStage);

// One prompt:
//   {"stage": "before"|"during"|"retry", ["kind": ...], "reason": ...,
//    ["network": {"host": ..., "port": N}] (kind network),
//    ["first_attempt": {"exit_code": N, "sandbox_denied": true}] (retry),
//    "answered_by": "approver"|"tty"|"default-deny"|"cache"|"rule"|"reject"|
//                   "mode",
//    "decision": ..., ["approver": PROGRAM], ["rule": {...}], ["note": ...]}
struct ApprovalEntry {
    struct FirstAttempt {
        int exit_code = 0;
        bool sandbox_denied = true;
        bool operator==(const FirstAttempt&) const = default;
    };

    ApprovalStage stage = ApprovalStage::Before;
    std::optional<ApprovalKind> kind;
    std::string reason;
    std::optional<FirstAttempt> first_attempt;
    std::string answered_by;
    ReviewDecision decision = ReviewDecision::Denied;
    std::optional<std::string> approver;  // when answered_by is "approver"
    std::optional<RuleMatch> rule;        // the rule that settled it
    std::optional<std::string> note;
    std::optional<NetworkTarget> network;  // kind Network
    bool operator==(const ApprovalEntry&) const = default;
};

// {"mode": ..., "requests": [...], ["retry": why a denial was not retried
// (also a refused retry's line)], ["refusal": the refusal line, when refused
// before anything ran], ["note": ...]}
struct ApprovalRecord {
    AskForApproval mode = AskForApproval::Never;
    std::vector<ApprovalEntry> requests;
    std::optional<std::string> retry;
    std::optional<std::string> refusal;
    std::optional<std::string> note;
    bool operator==(const ApprovalRecord&) const = default;
};

nlohmann::json to_json(const ApprovalRecord&);
// The inverse of to_json; throws Error on anything to_json does not make.
ApprovalRecord approval_record_from_json(const nlohmann::json&);

}  // namespace sbx::approval
