#include "approval/types.h"

#include <fmt/core.h>

#include "approval/session_store.h"

namespace sbx::approval {

std::string_view to_string(ReviewDecision d) {
    switch (d) {
        case ReviewDecision::Approved: return "approved";
        case ReviewDecision::ApprovedForSession: return "approved_for_session";
        case ReviewDecision::Denied: return "denied";
        case ReviewDecision::Abort: return "abort";
    }
    return "denied";
}

std::string_view to_string(AskForApproval m) {
    switch (m) {
        case AskForApproval::Never: return "never";
        case AskForApproval::OnFailure: return "on-failure";
        case AskForApproval::OnRequest: return "on-request";
        case AskForApproval::Untrusted: return "untrusted";
    }
    return "never";
}

std::string_view to_string(ApprovalKind k) {
    switch (k) {
        case ApprovalKind::Sandbox: return "sandbox";
        case ApprovalKind::Rules: return "rules";
        case ApprovalKind::Escalation: return "escalation";
        case ApprovalKind::Untrusted: return "untrusted";
        case ApprovalKind::Network: return "network";
    }
    return "sandbox";
}

AskForApproval parse_ask_for_approval(std::string_view word) {
    for (auto m :
         {AskForApproval::Never, AskForApproval::OnFailure, AskForApproval::OnRequest, AskForApproval::Untrusted}) {
        if (word == to_string(m)) return m;
    }
    throw Error(fmt::format(
        "--ask-for-approval: unknown mode '{}' (expected never, on-failure, on-request or untrusted)", word));
}

std::optional<ReviewDecision> parse_review_decision(std::string_view word) {
    for (auto d : {ReviewDecision::Approved, ReviewDecision::ApprovedForSession, ReviewDecision::Denied,
                   ReviewDecision::Abort}) {
        if (word == to_string(d)) return d;
    }
    return std::nullopt;
}

RejectConfig parse_reject(const std::vector<std::string>& values) {
    RejectConfig r;
    for (const auto& value : values) {
        std::size_t start = 0;
        for (;;) {
            const auto comma = value.find(',', start);
            const auto word = value.substr(start, comma == std::string::npos ? comma : comma - start);
            if (word == "sandbox") r.sandbox = true;
            else if (word == "rules") r.rules = true;
            else if (word == "network") r.network = true;
            else
                throw Error(
                    fmt::format("--reject: unknown prompt kind '{}' (expected sandbox, rules or network, or a "
                                "comma-separated list)",
                                word));
            if (comma == std::string::npos) break;
            start = comma + 1;
        }
    }
    return r;
}

ApprovalSettings settings_from_args(const ApprovalFlags& flags) {
    ApprovalSettings s;
    s.mode = parse_ask_for_approval(flags.ask_for_approval);
    s.reject = parse_reject(flags.reject);
    if (flags.approver) {
        if (flags.approver->empty()) throw Error("--approver: the program name is empty");
        s.approver = flags.approver;
    }
    if (flags.approver_timeout) s.approver_timeout = *flags.approver_timeout;
    if (flags.session) {
        check_session_name(*flags.session);
        s.session = flags.session;
    }
    for (const auto& file : flags.rules_files) s.rules.add_file(file);
    // Codex's rule: only on-request lets a command ask for escalation; in
    // the other modes the request is refused rather than silently ignored.
    if (flags.escalate && s.mode != AskForApproval::OnRequest)
        throw Error(fmt::format("--escalate: needs --ask-for-approval on-request (the mode is {})", to_string(s.mode)));
    if (flags.justification && !flags.escalate) throw Error("--justification: only meaningful with --escalate");
    s.escalate = flags.escalate;
    s.justification = flags.justification;
    return s;
}

bool policy_has_liftable_sandbox(const CanonicalPolicy& p) {
    return p.sandboxed_filesystem() || (p.mode == Mode::ExternalSandbox && p.network != Network::Full);
}

CanonicalPolicy lifted_policy(const CanonicalPolicy& p) {
    CanonicalPolicy out = p;
    if (p.sandboxed_filesystem()) out.mode = Mode::DangerFullAccess;
    out.network = Network::Full;
    out.allow_domains.clear();  // the full network has no allowlist proxy
    out.deny_domains.clear();
    return out;
}

std::string_view lifted_restriction(const CanonicalPolicy& p) {
    return p.mode == Mode::ExternalSandbox ? "sbx's network restriction" : "the sandbox";
}

std::string nothing_to_lift(const CanonicalPolicy& p) {
    if (p.mode == Mode::ExternalSandbox)
        return "the external-sandbox policy with -n full has no restriction that sbx could lift (the "
               "filesystem sandbox is the outer one's)";
    return fmt::format("the {} policy has no sandbox that sbx could lift", to_string(p.mode));
}

std::vector<std::string> writable_roots_of(const CanonicalPolicy& policy) {
    std::vector<std::string> roots;
    if (policy.sandboxed_filesystem())
        for (const auto& root : policy.writable) roots.push_back(root.path);
    return roots;
}

}  // namespace sbx::approval
