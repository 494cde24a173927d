#include "approval/orchestrator.h"

#include <utility>

#include <fmt/core.h>
#include <nlohmann/json.hpp>

namespace sbx::approval {
namespace {

using nlohmann::json;
using Type = ApprovalRequirement::Type;

struct Context {
    const ApprovalRequest& request;
    const ApprovalSettings& settings;
    SessionStore& store;
    Approver& approver;
    Orchestrated out{};
    // The attempt a prompt follows (its denials and stderr go to the
    // approver), once one has run.
    const AttemptOutcome* last = nullptr;
    // The canonical policy's JSON, made on first use: the common run (no
    // prompt, no session) never needs it.
    std::optional<json> policy_json_{};

    const json& policy_json() {
        if (!policy_json_) policy_json_ = to_json(request.policy);
        return *policy_json_;
    }
};

ApprovalKey key_for(Context& c, bool unsandboxed) {
    return ApprovalKey{c.request.command, c.request.cwd, c.policy_json(), unsandboxed};
}

CacheSnapshot snapshot(Context& c) {
    CacheSnapshot s;
    if (c.store.known_empty()) return s;  // no key to build
    s.sandboxed = c.store.contains(key_for(c, false));
    s.unsandboxed = c.store.contains(key_for(c, true));
    return s;
}

ApprovalEntry entry_for(const ApprovalRequirement& req, ApprovalStage stage) {
    ApprovalEntry e;
    e.stage = stage;
    e.kind = req.kind;
    e.reason = req.reason;
    e.rule = req.rule;
    if (!req.note.empty()) e.note = req.note;
    return e;
}

// Settles a requirement: the answer and who gave it, recorded in `entry`.
ReviewDecision answer(Context& c, const ApprovalRequirement& req, ApprovalEntry& entry) {
    if (req.type != Type::NeedsApproval) {
        entry.answered_by = req.answered_by;
        entry.decision = req.decision.value_or(ReviewDecision::Denied);
        return entry.decision;
    }
    ApprovalPrompt prompt{c.request.command, c.request.cwd, req.reason, *req.kind, c.policy_json(), {}, {}};
    if (c.last) {
        prompt.denials = c.last->denials;
        prompt.stderr_tail = c.last->stderr_tail;
    }
    const ApproverAnswer a = c.approver.ask(prompt);
    entry.answered_by = a.answered_by;
    if (a.answered_by == "approver" && c.settings.approver) entry.approver = *c.settings.approver;
    entry.decision = a.decision;
    if (!a.note.empty()) entry.note = a.note;
    if (a.decision == ReviewDecision::ApprovedForSession) {
        try {
            c.store.add(key_for(c, !req.sandboxed));
        } catch (const Error& e) {
            const std::string w = fmt::format("the session approval holds for this run only: {}", e.what());
            c.out.warnings.push_back(w);
            entry.note = w;
        }
    }
    return a.decision;
}

bool approved(ReviewDecision d) { return d == ReviewDecision::Approved || d == ReviewDecision::ApprovedForSession; }

// The one line (after "sbx: ") for a refused prompt: before anything ran,
// or (after "not run again without the sandbox: ") for a retry.
std::string refusal(const ApprovalRequirement& req, const ApprovalEntry& entry, ReviewDecision d,
                    const ApprovalSettings& settings) {
    const std::string what = fmt::format("{}: {}", req.kind ? to_string(*req.kind) : "approval", req.reason);
    const std::string& by = entry.answered_by;
    const std::string note = entry.note.value_or("");
    if (by == "rule" && req.rule)  // the rule's justification, when it has one
        return fmt::format("command forbidden by rule {} in {}{}", req.rule->index, req.rule->source,
                           req.rule->justification ? " (" + *req.rule->justification + ")" : "");
    if (by == "mode" || by == "reject") return fmt::format("approval refused: {} ({})", note, what);
    if (by == "default-deny") return fmt::format("approval denied: {}; use --approver PROGRAM ({})", note, what);
    const std::string who =
        by == "approver" ? fmt::format("--approver {}", settings.approver.value_or("?")) : std::string("the terminal");
    if (d == ReviewDecision::Abort) return fmt::format("approval aborted by {} ({})", who, what);
    return fmt::format("approval denied by {}{} ({})", who, note.empty() ? "" : ": " + note, what);
}

}  // namespace

Orchestrated orchestrate(const ApprovalRequest& request, const ApprovalSettings& settings, SessionStore& store,
                         Approver& approver, const AttemptFn& attempt) {
    Context c{request, settings, store, approver};
    c.out.approval.mode = settings.mode;

    // Before the first attempt.
    const ApprovalRequirement first = decide_first_attempt(request, settings, snapshot(c));
    if (!first.note.empty() && !first.kind) c.out.approval.note = first.note;
    bool sandboxed = first.sandboxed;
    if (first.kind) {
        ApprovalEntry entry = entry_for(first, ApprovalStage::Before);
        const ReviewDecision d = answer(c, first, entry);
        c.out.approval.requests.push_back(entry);
        if (!approved(d)) {
            c.out.refused_exit = 125;
            c.out.refusal_message = refusal(first, entry, d, settings);
            c.out.approval.refusal = c.out.refusal_message;
            c.out.result.exit_code = 125;
            return std::move(c.out);
        }
    }

    // The first attempt.
    AttemptOutcome outcome = attempt(sandboxed);
    c.last = &outcome;
    c.out.attempts = 1;
    c.out.result = std::move(outcome.result);
    c.out.sandbox_denied = outcome.sandbox_denied;
    c.out.escalated = !sandboxed && policy_has_liftable_sandbox(request.policy);

    // Maybe a retry without the sandbox.
    CacheSnapshot cache;
    try {
        if (outcome.sandbox_denied) cache = snapshot(c);
    } catch (const Error& e) {
        c.out.warnings.push_back(fmt::format("session approvals not consulted: {}", e.what()));
    }
    const RetryDecision retry = decide_retry(request, settings, sandboxed, outcome.sandbox_denied, cache);
    if (!retry.considered) {
        if (!retry.why_not.empty()) c.out.approval.retry = retry.why_not;
        return std::move(c.out);
    }
    ApprovalEntry entry = entry_for(retry.requirement, ApprovalStage::Retry);
    entry.first_attempt = ApprovalEntry::FirstAttempt{c.out.result.exit_code, true};
    const ReviewDecision d = answer(c, retry.requirement, entry);
    c.out.approval.requests.push_back(entry);
    if (!approved(d)) {  // a refused retry keeps the first result
        c.out.retry_refusal = refusal(retry.requirement, entry, d, settings);
        c.out.approval.retry = c.out.retry_refusal;
        return std::move(c.out);
    }

    AttemptOutcome second = attempt(false);
    c.out.attempts = 2;
    c.out.result = std::move(second.result);
    c.out.sandbox_denied = second.sandbox_denied;
    c.out.escalated = true;
    return std::move(c.out);
}

NetworkApprovals::NetworkApprovals(const ApprovalRequest& request, const ApprovalSettings& settings,
                                   SessionStore& store, Approver& approver)
    : request_(request), settings_(settings), store_(store), approver_(approver) {
    const bool asking_mode = settings.mode == AskForApproval::OnRequest || settings.mode == AskForApproval::Untrusted;
    active_ = asking_mode && settings.approver && !settings.reject.network && request.policy.by_name();
}

bool NetworkApprovals::ask(const std::string& host, std::uint16_t port) {
    if (!active_) return false;
    const NetworkTarget target{host, port};
    ApprovalEntry entry;
    entry.stage = ApprovalStage::During;
    entry.kind = ApprovalKind::Network;
    entry.reason = fmt::format("connect to {}:{}, which no allow-domain names", host, port);
    entry.network = target;
    ApprovalKey key;
    key.network = target;
    std::optional<std::string> warning;
    if (store_.contains(key)) {
        entry.answered_by = "cache";
        entry.decision = ReviewDecision::ApprovedForSession;
    } else {
        ApprovalPrompt prompt{request_.command,         request_.cwd, entry.reason, ApprovalKind::Network,
                              to_json(request_.policy), {},           {},           target};
        const ApproverAnswer a = approver_.ask(prompt);
        entry.answered_by = a.answered_by;
        if (a.answered_by == "approver" && settings_.approver) entry.approver = *settings_.approver;
        entry.decision = a.decision;
        if (!a.note.empty()) entry.note = a.note;
        if (a.decision == ReviewDecision::ApprovedForSession) {
            try {
                store_.add(key);
            } catch (const Error& e) {
                warning = fmt::format("the session approval holds for this run only: {}", e.what());
                entry.note = *warning;
            }
        }
    }
    std::lock_guard lock(mutex_);
    entries_.push_back(entry);
    if (warning) warnings_.push_back(*warning);
    return approved(entry.decision);
}

std::vector<ApprovalEntry> NetworkApprovals::take_entries() {
    std::lock_guard lock(mutex_);
    return std::exchange(entries_, {});
}

std::vector<std::string> NetworkApprovals::take_warnings() {
    std::lock_guard lock(mutex_);
    return std::exchange(warnings_, {});
}

Orchestrated orchestrate(const ApprovalRequest& request, const ApprovalSettings& settings, const AttemptFn& attempt) {
    // Both before the first attempt: the store read once, the approver
    // found; neither from a place the command may write.
    const auto writable = writable_roots_of(request.policy);
    const auto store = open_session_store(settings.session, writable);
    const auto approver = make_approver(settings, writable);
    return orchestrate(request, settings, *store, *approver, attempt);
}

}  // namespace sbx::approval
