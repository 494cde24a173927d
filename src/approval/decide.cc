#include "approval/decide.h"

#include <fmt/core.h>

#include "approval/safe_commands.h"

namespace sbx::approval {
namespace {

using Type = ApprovalRequirement::Type;

std::string rule_name(const RuleMatch& m) { return fmt::format("rule {} in {}", m.index, m.source); }

// Steps 3 and 4 for a prompt that arose: refused by --reject, approved by an
// allow rule (only for a run under the sandbox) or the cache, else asked.
ApprovalRequirement settle(ApprovalRequirement req, bool rejected, const std::string& reject_word,
                           const std::optional<RuleMatch>& rule, bool cached) {
    if (rejected) {
        req.type = Type::Forbidden;
        req.answered_by = "reject";
        req.decision = ReviewDecision::Denied;
        req.note = fmt::format("--reject {} refuses this prompt", reject_word);
    } else if (rule && rule->decision == RuleDecision::Allow && req.sandboxed) {
        req.type = Type::Skip;
        req.answered_by = "rule";
        req.decision = ReviewDecision::Approved;
    } else if (cached) {
        req.type = Type::Skip;
        req.answered_by = "cache";
        req.decision = ReviewDecision::ApprovedForSession;
    } else {
        req.type = Type::NeedsApproval;
    }
    return req;
}

}  // namespace

ApprovalRequirement decide_first_attempt(const ApprovalRequest& request, const ApprovalSettings& settings,
                                         CacheSnapshot cache) {
    ApprovalRequirement req;
    const auto rule = settings.rules.match(request.command, request.program);
    req.rule = rule;
    const bool liftable = policy_has_liftable_sandbox(request.policy);

    if (rule && rule->decision == RuleDecision::Forbidden) {
        req.type = Type::Forbidden;
        req.kind = ApprovalKind::Rules;
        req.reason = rule->justification.value_or(fmt::format("the command is forbidden by {}", rule_name(*rule)));
        req.answered_by = "rule";
        req.decision = ReviewDecision::Denied;
        return req;
    }

    const bool escalation_asked = settings.escalate && settings.mode == AskForApproval::OnRequest;
    const bool wants_escalation = escalation_asked && liftable;
    if (escalation_asked && !liftable)
        req.note = fmt::format("--escalate has no effect: {}", nothing_to_lift(request.policy));
    req.sandboxed = !wants_escalation;

    const bool prompt_rule = rule && rule->decision == RuleDecision::Prompt;
    if (prompt_rule) {
        const std::string why = rule->justification.value_or(fmt::format("{} asks for approval", rule_name(*rule)));
        if (settings.mode == AskForApproval::Never) {
            req.type = Type::Forbidden;
            req.kind = ApprovalKind::Rules;
            req.reason = why;
            req.answered_by = "mode";
            req.decision = ReviewDecision::Denied;
            req.note = fmt::format("{} asks for approval, but --ask-for-approval is never", rule_name(*rule));
            return req;
        }
        if (settings.reject.rules) {
            req.kind = ApprovalKind::Rules;
            req.reason = why;
            return settle(req, true, "rules", rule, false);
        }
        req.kind = wants_escalation ? ApprovalKind::Escalation : ApprovalKind::Rules;
        req.reason = wants_escalation ? fmt::format("{}; the command asks to run without {}{}", why,
                                                    lifted_restriction(request.policy),
                                                    settings.justification ? ": " + *settings.justification : "")
                                      : why;
    } else if (wants_escalation) {
        req.kind = ApprovalKind::Escalation;
        req.reason = settings.justification.value_or(
            fmt::format("the command asks to run without {} (--escalate)", lifted_restriction(request.policy)));
    } else if (settings.mode == AskForApproval::Untrusted && !is_known_safe_command(request.command)) {
        req.kind = ApprovalKind::Untrusted;
        req.reason = "untrusted mode: the command is not known to be safe";
    } else {
        req.type = Type::Skip;  // nothing to ask
        return req;
    }
    const bool rejected = req.kind == ApprovalKind::Escalation && settings.reject.sandbox;
    const bool cached = wants_escalation ? cache.unsandboxed : cache.sandboxed;
    return settle(req, rejected, "sandbox", rule, cached);
}

RetryDecision decide_retry(const ApprovalRequest& request, const ApprovalSettings& settings, bool ran_sandboxed,
                           bool sandbox_denied, CacheSnapshot cache) {
    RetryDecision d;
    if (!sandbox_denied) return d;  // nothing the sandbox caused: nothing to retry
    const auto lifted = lifted_restriction(request.policy);
    if (!policy_has_liftable_sandbox(request.policy)) {
        d.why_not = nothing_to_lift(request.policy);
        return d;
    }
    if (!ran_sandboxed) {
        d.why_not = fmt::format("the command already ran without {}", lifted);
        return d;
    }
    switch (settings.mode) {
        case AskForApproval::Never: d.why_not = "--ask-for-approval never reports the denial without asking"; return d;
        case AskForApproval::OnRequest:
            d.why_not = "--ask-for-approval on-request reports the denial (ask up front with --escalate)";
            return d;
        case AskForApproval::OnFailure:
        case AskForApproval::Untrusted: break;
    }
    d.considered = true;
    ApprovalRequirement req;
    req.kind = ApprovalKind::Sandbox;
    req.sandboxed = false;
    req.reason = request.policy.sandboxed_filesystem()
                     ? std::string(
                           "the command failed and the sandbox likely caused it; retry without "
                           "the sandbox")
                     : fmt::format(
                           "the command failed and {} likely caused it; retry without it (with "
                           "the full network; the outer sandbox stays)",
                           lifted);
    const auto rule = settings.rules.match(request.command, request.program);
    req.rule = rule;
    d.requirement = settle(req, settings.reject.sandbox, "sandbox", rule, cache.unsandboxed);
    return d;
}

}  // namespace sbx::approval
