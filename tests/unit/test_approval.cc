// Approvals: the vocabulary, the settings, the decision matrix and the
// orchestrated flow (with a scripted approver and scripted attempts).
#include <catch2/catch.hpp>

#include <deque>
#include <string>
#include <vector>

#include "approval/decide.h"
#include "approval/orchestrator.h"
#include "approval/types.h"

using namespace sbx;
using namespace sbx::approval;
using Type = ApprovalRequirement::Type;

namespace {

CanonicalPolicy policy_of(Mode mode) {
    CanonicalPolicy p;
    p.mode = mode;
    p.network = mode == Mode::DangerFullAccess ? Network::Full : Network::Restricted;
    p.workspace = "/work/ws";
    p.readable = {"/"};
    if (mode == Mode::ReadOnly) p.writable = {{"/dev/null", {}}};
    else if (mode == Mode::WorkspaceWrite) p.writable = {{"/work/ws", {"/work/ws/.git"}}, {"/dev/null", {}}};
    else p.writable = {{"/", {}}};
    return p;
}

ApprovalRequest request_of(std::vector<std::string> argv, Mode mode = Mode::WorkspaceWrite) {
    return ApprovalRequest{std::move(argv), "/work/ws", policy_of(mode)};
}

ApprovalSettings settings_of(AskForApproval mode) {
    ApprovalSettings s;
    s.mode = mode;
    return s;
}

// Compact form of a requirement for the matrix: "run" (nothing to ask),
// "ask:KIND", "cache:KIND", "rule:KIND", "refuse:KIND/BY".
std::string summary(const ApprovalRequirement& r) {
    if (!r.kind) return r.type == Type::Skip ? "run" : "?";
    const std::string kind(to_string(*r.kind));
    switch (r.type) {
        case Type::NeedsApproval: return "ask:" + kind;
        case Type::Skip: return r.answered_by + ":" + kind;
        case Type::Forbidden: return "refuse:" + kind + "/" + r.answered_by;
    }
    return "?";
}

std::string summary(const RetryDecision& d) {
    if (!d.considered) return "report";
    return summary(d.requirement);
}

// An approver that answers from a script and records what it was asked.
struct ScriptedApprover final : Approver {
    std::deque<ReviewDecision> answers;
    std::vector<ApprovalPrompt> asked;
    ApproverAnswer ask(const ApprovalPrompt& p) override {
        asked.push_back(p);
        REQUIRE(!answers.empty());  // asked more often than the test expects
        const auto d = answers.front();
        answers.pop_front();
        return ApproverAnswer{d, "approver", ""};
    }
};

// Attempts that follow a script: each call takes the next outcome.
struct ScriptedAttempts {
    struct Step {
        int exit_code;
        bool sandbox_denied;
        std::vector<Denial> denials{};
        std::string stderr_tail{};
    };
    std::deque<Step> steps;
    std::vector<bool> sandboxed_calls;
    AttemptFn fn() {
        return [this](bool sandboxed) {
            sandboxed_calls.push_back(sandboxed);
            REQUIRE(!steps.empty());
            const auto s = steps.front();
            steps.pop_front();
            AttemptOutcome o;
            o.result.exit_code = s.exit_code;
            o.sandbox_denied = s.sandbox_denied;
            o.denials = s.denials;
            o.stderr_tail = s.stderr_tail;
            return o;
        };
    }
};

const std::vector<std::string> kUnsafe{"cp", "a", "b"};
const std::vector<std::string> kSafe{"ls", "-la"};

}  // namespace

TEST_CASE("approval words parse and print", "[approval]") {
    CHECK(parse_ask_for_approval("never") == AskForApproval::Never);
    CHECK(parse_ask_for_approval("on-failure") == AskForApproval::OnFailure);
    CHECK(parse_ask_for_approval("on-request") == AskForApproval::OnRequest);
    CHECK(parse_ask_for_approval("untrusted") == AskForApproval::Untrusted);
    CHECK_THROWS_WITH(parse_ask_for_approval("sometimes"),
                      "--ask-for-approval: unknown mode 'sometimes' (expected never, on-failure, "
                      "on-request or untrusted)");
    CHECK_THROWS_AS(parse_ask_for_approval("Never"), Error);
    CHECK(parse_review_decision("approved") == ReviewDecision::Approved);
    CHECK(parse_review_decision("approved_for_session") == ReviewDecision::ApprovedForSession);
    CHECK(parse_review_decision("denied") == ReviewDecision::Denied);
    CHECK(parse_review_decision("abort") == ReviewDecision::Abort);
    CHECK_FALSE(parse_review_decision("yes"));
    CHECK_FALSE(parse_review_decision(""));
    CHECK(to_string(AskForApproval::OnFailure) == "on-failure");
    CHECK(to_string(ApprovalKind::Escalation) == "escalation");
}

TEST_CASE("--reject accepts sandbox and rules, comma-separated or repeated", "[approval]") {
    CHECK(parse_reject({}) == RejectConfig{});
    CHECK(parse_reject({"sandbox"}) == RejectConfig{true, false});
    CHECK(parse_reject({"rules"}) == RejectConfig{false, true});
    CHECK(parse_reject({"sandbox,rules"}) == RejectConfig{true, true});
    CHECK(parse_reject({"rules", "sandbox"}) == RejectConfig{true, true});
    CHECK_THROWS_WITH(
        parse_reject({"sandbox,mcp"}),
        "--reject: unknown prompt kind 'mcp' (expected sandbox, rules or network, or a comma-separated list)");
    CHECK_THROWS_AS(parse_reject({"sandbox,"}), Error);
}

TEST_CASE("settings_from_args validates every flag", "[approval]") {
    const auto s = settings_from_args({.ask_for_approval = "on-request",
                                       .reject = {"rules"},
                                       .approver = "./approve",
                                       .session = "work",
                                       .escalate = true,
                                       .justification = "needs network"});
    CHECK(s.mode == AskForApproval::OnRequest);
    CHECK(s.reject.rules);
    CHECK_FALSE(s.reject.sandbox);
    CHECK(s.approver == "./approve");
    CHECK(s.session == "work");
    CHECK(s.escalate);
    CHECK(s.justification == "needs network");
    CHECK(s.approver_timeout == std::chrono::seconds(30));
    CHECK(settings_from_args({.approver = "./approve", .approver_timeout = std::chrono::milliseconds(0)})
              .approver_timeout == std::chrono::milliseconds(0));

    CHECK_THROWS_WITH(settings_from_args({.ask_for_approval = "bogus"}), Catch::Contains("unknown mode 'bogus'"));
    CHECK_THROWS_WITH(settings_from_args({.escalate = true}),
                      "--escalate: needs --ask-for-approval on-request (the mode is never)");
    CHECK_THROWS_WITH(settings_from_args({.ask_for_approval = "untrusted", .escalate = true}),
                      Catch::Contains("the mode is untrusted"));
    CHECK_THROWS_WITH(settings_from_args({.ask_for_approval = "on-request", .justification = "x"}),
                      "--justification: only meaningful with --escalate");
    CHECK_THROWS_WITH(settings_from_args({.session = "../x"}), Catch::Contains("--session: bad name '../x'"));
    CHECK_THROWS_WITH(settings_from_args({.approver = ""}), "--approver: the program name is empty");
    CHECK_THROWS_WITH(settings_from_args({.rules_files = {"/nonexistent/rules.json"}}),
                      "--rules /nonexistent/rules.json: cannot read the file");
}

TEST_CASE("liftable: the filesystem sandbox, or external-sandbox's network restriction", "[approval]") {
    CHECK(policy_has_liftable_sandbox(policy_of(Mode::ReadOnly)));
    CHECK(policy_has_liftable_sandbox(policy_of(Mode::WorkspaceWrite)));
    CHECK_FALSE(policy_has_liftable_sandbox(policy_of(Mode::DangerFullAccess)));
    CHECK(policy_has_liftable_sandbox(policy_of(Mode::ExternalSandbox)));  // -n restricted
    auto limited = policy_of(Mode::ExternalSandbox);
    limited.network = Network::Limited;
    CHECK(policy_has_liftable_sandbox(limited));
    auto open = policy_of(Mode::ExternalSandbox);
    open.network = Network::Full;
    CHECK_FALSE(policy_has_liftable_sandbox(open));

    // What a run without it uses: no sandbox at all, or the full network with
    // the outer sandbox (and the limits) kept.
    auto ro = policy_of(Mode::ReadOnly);
    ro.limits.processes = 64;
    const auto lifted_ro = lifted_policy(ro);
    CHECK(lifted_ro.mode == Mode::DangerFullAccess);
    CHECK(lifted_ro.network == Network::Full);
    auto ext = policy_of(Mode::ExternalSandbox);
    ext.limits.processes = 64;
    const auto lifted_ext = lifted_policy(ext);
    CHECK(lifted_ext.mode == Mode::ExternalSandbox);
    CHECK(lifted_ext.network == Network::Full);
    CHECK(lifted_ext.limits.processes == 64u);
    CHECK(lifted_policy(open) == open);

    CHECK(lifted_restriction(ro) == "the sandbox");
    CHECK(lifted_restriction(ext) == "sbx's network restriction");
    CHECK(nothing_to_lift(policy_of(Mode::DangerFullAccess)) ==
          "the danger-full-access policy has no sandbox that sbx could lift");
    CHECK(nothing_to_lift(open) ==
          "the external-sandbox policy with -n full has no restriction that sbx could lift (the "
          "filesystem sandbox is the outer one's)");
}

// The matrix: mode x policy x stage (first attempt / retry) x cached.
// Columns: read-only, workspace-write, danger-full-access, external-sandbox
// (-n restricted: sbx's network restriction is what a retry lifts).
namespace {
const std::array<Mode, 4> kPolicies{Mode::ReadOnly, Mode::WorkspaceWrite, Mode::DangerFullAccess,
                                    Mode::ExternalSandbox};
struct Row {
    AskForApproval mode;
    bool cached;
    std::array<const char*, 4> expected;
};
void check_rows(const std::vector<Row>& rows, const std::function<std::string(const Row&, Mode)>& decide) {
    for (const auto& row : rows) {
        for (std::size_t i = 0; i < kPolicies.size(); ++i) {
            INFO("mode " << to_string(row.mode) << ", policy " << sbx::to_string(kPolicies[i]) << ", cached "
                         << row.cached);
            CHECK(decide(row, kPolicies[i]) == row.expected[i]);
        }
    }
}
}  // namespace

TEST_CASE("matrix: first attempt of a command not known to be safe", "[approval][matrix]") {
    // "cached" here: approved_for_session cached for the sandboxed run.
    const std::vector<Row> rows{
        {AskForApproval::Never, false, {"run", "run", "run", "run"}},
        {AskForApproval::Never, true, {"run", "run", "run", "run"}},
        {AskForApproval::OnFailure, false, {"run", "run", "run", "run"}},
        {AskForApproval::OnFailure, true, {"run", "run", "run", "run"}},
        {AskForApproval::OnRequest, false, {"run", "run", "run", "run"}},
        {AskForApproval::OnRequest, true, {"run", "run", "run", "run"}},
        {AskForApproval::Untrusted, false, {"ask:untrusted", "ask:untrusted", "ask:untrusted", "ask:untrusted"}},
        {AskForApproval::Untrusted, true, {"cache:untrusted", "cache:untrusted", "cache:untrusted", "cache:untrusted"}},
    };
    check_rows(rows, [](const Row& row, Mode policy) {
        const auto r =
            decide_first_attempt(request_of(kUnsafe, policy), settings_of(row.mode), CacheSnapshot{row.cached, false});
        CHECK(r.sandboxed);  // nothing asked to lift the sandbox
        return summary(r);
    });
}

TEST_CASE("matrix: first attempt of a known-safe command never asks", "[approval][matrix]") {
    const std::vector<Row> rows{
        {AskForApproval::Never, false, {"run", "run", "run", "run"}},
        {AskForApproval::OnFailure, false, {"run", "run", "run", "run"}},
        {AskForApproval::OnRequest, false, {"run", "run", "run", "run"}},
        {AskForApproval::Untrusted, false, {"run", "run", "run", "run"}},
        {AskForApproval::Untrusted, true, {"run", "run", "run", "run"}},
    };
    check_rows(rows, [](const Row& row, Mode policy) {
        return summary(decide_first_attempt(request_of(kSafe, policy), settings_of(row.mode),
                                            CacheSnapshot{row.cached, row.cached}));
    });
}

TEST_CASE("matrix: --escalate under on-request", "[approval][matrix]") {
    // "cached": approved_for_session cached for the unsandboxed run.
    for (bool cached : {false, true}) {
        for (Mode policy : kPolicies) {
            INFO("policy " << sbx::to_string(policy) << ", cached " << cached);
            auto s = settings_of(AskForApproval::OnRequest);
            s.escalate = true;
            s.justification = "needs the network";
            const auto r = decide_first_attempt(request_of(kUnsafe, policy), s, CacheSnapshot{false, cached});
            if (policy != Mode::DangerFullAccess) {
                CHECK(summary(r) == (cached ? "cache:escalation" : "ask:escalation"));
                CHECK_FALSE(r.sandboxed);
                CHECK(r.reason == "needs the network");
            } else {
                // No sandbox to lift: runs as the policy says, with a note.
                CHECK(summary(r) == "run");
                CHECK(r.sandboxed);
                CHECK_THAT(r.note, Catch::Contains("--escalate has no effect"));
            }
        }
    }
    // A cached approval for the sandboxed run does not approve lifting it.
    auto s = settings_of(AskForApproval::OnRequest);
    s.escalate = true;
    CHECK(summary(decide_first_attempt(request_of(kUnsafe), s, CacheSnapshot{true, false})) == "ask:escalation");
    s.reject.sandbox = true;
    CHECK(summary(decide_first_attempt(request_of(kUnsafe), s, CacheSnapshot{false, true})) ==
          "refuse:escalation/reject");
}

TEST_CASE("matrix: retry after a likely sandbox denial", "[approval][matrix]") {
    // "cached": approved_for_session cached for the unsandboxed run.
    const std::vector<Row> rows{
        {AskForApproval::Never, false, {"report", "report", "report", "report"}},
        {AskForApproval::Never, true, {"report", "report", "report", "report"}},
        {AskForApproval::OnFailure, false, {"ask:sandbox", "ask:sandbox", "report", "ask:sandbox"}},
        {AskForApproval::OnFailure, true, {"cache:sandbox", "cache:sandbox", "report", "cache:sandbox"}},
        {AskForApproval::OnRequest, false, {"report", "report", "report", "report"}},
        {AskForApproval::OnRequest, true, {"report", "report", "report", "report"}},
        {AskForApproval::Untrusted, false, {"ask:sandbox", "ask:sandbox", "report", "ask:sandbox"}},
        {AskForApproval::Untrusted, true, {"cache:sandbox", "cache:sandbox", "report", "cache:sandbox"}},
    };
    check_rows(rows, [](const Row& row, Mode policy) {
        const auto d = decide_retry(request_of(kUnsafe, policy), settings_of(row.mode), true, true,
                                    CacheSnapshot{false, row.cached});
        if (d.considered) CHECK_FALSE(d.requirement.sandboxed);
        else CHECK_FALSE(d.why_not.empty());
        return summary(d);
    });
}

TEST_CASE("issue 17: external-sandbox offers a retry without sbx's network restriction", "[approval][issue17]") {
    const auto req = request_of(kUnsafe, Mode::ExternalSandbox);
    const auto d = decide_retry(req, settings_of(AskForApproval::OnFailure), true, true, {});
    REQUIRE(d.considered);
    CHECK(summary(d) == "ask:sandbox");
    CHECK(d.requirement.reason ==
          "the command failed and sbx's network restriction likely caused it; retry without it (with "
          "the full network; the outer sandbox stays)");
    // With -n full there is nothing of sbx's to lift, and the reason says so.
    auto open = request_of(kUnsafe, Mode::ExternalSandbox);
    open.policy.network = Network::Full;
    const auto none = decide_retry(open, settings_of(AskForApproval::OnFailure), true, true, {});
    CHECK_FALSE(none.considered);
    CHECK(none.why_not == nothing_to_lift(open.policy));
    // --escalate asks to lift the same restriction.
    auto s = settings_of(AskForApproval::OnRequest);
    s.escalate = true;
    const auto esc = decide_first_attempt(req, s, {});
    CHECK(summary(esc) == "ask:escalation");
    CHECK(esc.reason == "the command asks to run without sbx's network restriction (--escalate)");
    const auto no_effect = decide_first_attempt(open, s, {});
    CHECK(summary(no_effect) == "run");
    CHECK(no_effect.note == "--escalate has no effect: " + nothing_to_lift(open.policy));
}

TEST_CASE("issue 29: the retry without the sandbox is always asked, whatever approved the first attempt",
          "[approval][issue29]") {
    for (auto mode : {AskForApproval::OnFailure, AskForApproval::Untrusted}) {
        INFO("mode " << to_string(mode));
        const auto d = decide_retry(request_of(kUnsafe), settings_of(mode), true, true, {});
        CHECK(summary(d) == "ask:sandbox");
        CHECK_FALSE(d.requirement.sandboxed);
    }
    // never and on-request still report the denial.
    for (auto mode : {AskForApproval::Never, AskForApproval::OnRequest})
        CHECK_FALSE(decide_retry(request_of(kUnsafe), settings_of(mode), true, true, {}).considered);
}

TEST_CASE(
    "matrix: no retry without a denial, after an escalation, or with a cache for the "
    "sandboxed run only",
    "[approval][matrix]") {
    for (auto mode :
         {AskForApproval::Never, AskForApproval::OnFailure, AskForApproval::OnRequest, AskForApproval::Untrusted}) {
        for (Mode policy : kPolicies) {
            INFO("mode " << to_string(mode) << ", policy " << sbx::to_string(policy));
            // The command failed for its own reasons (or succeeded).
            CHECK(summary(decide_retry(request_of(kUnsafe, policy), settings_of(mode), true, false,
                                       CacheSnapshot{true, true})) == "report");
            // It already ran without the sandbox.
            CHECK(summary(decide_retry(request_of(kUnsafe, policy), settings_of(mode), false, true, CacheSnapshot{})) ==
                  "report");
        }
    }
    CHECK(summary(decide_retry(request_of(kUnsafe), settings_of(AskForApproval::OnFailure), true, true,
                               CacheSnapshot{true, false})) == "ask:sandbox");
}

TEST_CASE("--reject turns prompts of its kind into refusals", "[approval]") {
    auto s = settings_of(AskForApproval::OnFailure);
    s.reject.sandbox = true;
    // Even a cached approval: --reject sandbox means never without the sandbox.
    CHECK(summary(decide_retry(request_of(kUnsafe), s, true, true, CacheSnapshot{false, true})) ==
          "refuse:sandbox/reject");

    ApprovalSettings r = settings_of(AskForApproval::OnFailure);
    r.rules.add_text(R"({"rules":[{"pattern":["cp"],"decision":"prompt"}]})", "r.json");
    CHECK(summary(decide_first_attempt(request_of(kUnsafe), r, {})) == "ask:rules");
    r.reject.rules = true;
    CHECK(summary(decide_first_attempt(request_of(kUnsafe), r, {})) == "refuse:rules/reject");
    // --reject rules does not touch the retry prompt.
    CHECK(summary(decide_retry(request_of(kUnsafe), r, true, true, {})) == "ask:sandbox");
}

TEST_CASE("rules decide before the mode", "[approval]") {
    ApprovalSettings s = settings_of(AskForApproval::Untrusted);
    s.rules.add_text(R"({"rules":[
        {"pattern":["cp"],"decision":"allow"},
        {"pattern":["rm","-rf"],"decision":"forbidden","justification":"no recursive deletes"},
        {"pattern":["git","push"],"decision":"prompt"},
        {"pattern":["ls"],"decision":"prompt","justification":"listing is audited"}]})",
                     "r.json");
    // allow answers the untrusted prompt.
    const auto cp = decide_first_attempt(request_of(kUnsafe), s, {});
    CHECK(summary(cp) == "rule:untrusted");
    CHECK(cp.decision == ReviewDecision::Approved);
    // forbidden refuses in every mode, whatever the cache says.
    for (auto mode :
         {AskForApproval::Never, AskForApproval::OnFailure, AskForApproval::OnRequest, AskForApproval::Untrusted}) {
        s.mode = mode;
        const auto rm = decide_first_attempt(request_of({"rm", "-rf", "/"}), s, {true, true});
        CHECK(summary(rm) == "refuse:rules/rule");
        CHECK(rm.reason == "no recursive deletes");
        REQUIRE(rm.rule);
        CHECK(rm.rule->index == 2);
    }
    // prompt asks even in on-failure and for known-safe commands; under
    // never it is a refusal.
    s.mode = AskForApproval::OnFailure;
    CHECK(summary(decide_first_attempt(request_of({"git", "push", "origin"}), s, {})) == "ask:rules");
    const auto ls = decide_first_attempt(request_of({"ls"}), s, {});
    CHECK(summary(ls) == "ask:rules");
    CHECK(ls.reason == "listing is audited");
    CHECK(summary(decide_first_attempt(request_of({"ls"}), s, {true, false})) == "cache:rules");
    s.mode = AskForApproval::Never;
    const auto never = decide_first_attempt(request_of({"git", "push"}), s, {});
    CHECK(summary(never) == "refuse:rules/mode");
    CHECK_THAT(never.note, Catch::Contains("--ask-for-approval is never"));
    // An allow rule never answers the retry prompt (issue 29: the program it
    // allows may run code from the workspace), nor an escalation.
    s.mode = AskForApproval::OnFailure;
    CHECK(summary(decide_retry(request_of(kUnsafe), s, true, true, {})) == "ask:sandbox");
    s.mode = AskForApproval::OnRequest;
    s.escalate = true;
    CHECK(summary(decide_first_attempt(request_of(kUnsafe), s, {})) == "ask:escalation");
}

TEST_CASE("orchestrate: on-failure retries after an approved denial", "[approval][flow]") {
    MemorySessionStore store;
    ScriptedApprover approver;
    approver.answers = {ReviewDecision::Approved};
    ScriptedAttempts attempts;
    attempts.steps = {{1, true}, {0, false}};
    const auto req = request_of({"touch", "/etc/x"});
    const auto out = orchestrate(req, settings_of(AskForApproval::OnFailure), store, approver, attempts.fn());
    CHECK(attempts.sandboxed_calls == std::vector<bool>{true, false});
    CHECK(out.attempts == 2);
    CHECK(out.result.exit_code == 0);
    CHECK(out.escalated);
    CHECK_FALSE(out.sandbox_denied);
    CHECK_FALSE(out.refused_exit);
    REQUIRE(approver.asked.size() == 1);
    CHECK(approver.asked[0].kind == ApprovalKind::Sandbox);
    CHECK(approver.asked[0].command == req.command);
    CHECK(approver.asked[0].cwd == "/work/ws");
    CHECK(approver.asked[0].policy == to_json(req.policy));
    CHECK(approver.asked[0].denials.empty());  // the scripted attempt recorded none
    const auto a = to_json(out.approval);
    CHECK(a["mode"] == "on-failure");
    REQUIRE(a["requests"].size() == 1);
    CHECK(a["requests"][0]["stage"] == "retry");
    CHECK(a["requests"][0]["kind"] == "sandbox");
    CHECK(a["requests"][0]["answered_by"] == "approver");
    CHECK(a["requests"][0]["decision"] == "approved");
    CHECK(a["requests"][0]["first_attempt"]["exit_code"] == 1);
    // approved (not for the session) is not remembered.
    CHECK_FALSE(store.contains(ApprovalKey{req.command, req.cwd, to_json(req.policy), true}));
}

TEST_CASE("orchestrate: a denied or aborted retry keeps the first result", "[approval][flow]") {
    for (auto answer : {ReviewDecision::Denied, ReviewDecision::Abort}) {
        MemorySessionStore store;
        ScriptedApprover approver;
        approver.answers = {answer};
        ScriptedAttempts attempts;
        attempts.steps = {{1, true}};
        const auto out =
            orchestrate(request_of(kUnsafe), settings_of(AskForApproval::OnFailure), store, approver, attempts.fn());
        CHECK(attempts.sandboxed_calls == std::vector<bool>{true});
        CHECK(out.result.exit_code == 1);
        CHECK(out.sandbox_denied);
        CHECK_FALSE(out.escalated);
        CHECK_FALSE(out.refused_exit);
        CHECK(to_json(out.approval)["requests"][0]["decision"] == std::string(to_string(answer)));
        // Who refused the retry, for the text mode's line.
        CHECK(out.retry_refusal.starts_with(answer == ReviewDecision::Abort ? "approval aborted by --approver"
                                                                            : "approval denied by --approver"));
        CHECK(to_json(out.approval)["retry"] == out.retry_refusal);
    }
}

TEST_CASE("orchestrate: never and on-request report the denial without asking", "[approval][flow]") {
    for (auto mode : {AskForApproval::Never, AskForApproval::OnRequest}) {
        MemorySessionStore store;
        ScriptedApprover approver;  // no answers: any question fails the test
        ScriptedAttempts attempts;
        attempts.steps = {{1, true}};
        const auto out = orchestrate(request_of(kUnsafe), settings_of(mode), store, approver, attempts.fn());
        CHECK(approver.asked.empty());
        CHECK(out.attempts == 1);
        CHECK(out.result.exit_code == 1);
        CHECK(out.sandbox_denied);
        CHECK(out.approval.requests.empty());
        CHECK(out.approval.retry);
    }
}

TEST_CASE("orchestrate: untrusted asks before the first attempt, and again before a retry without the sandbox",
          "[approval][flow][issue29]") {
    MemorySessionStore store;
    ScriptedApprover approver;
    // A yes to the sandboxed attempt, then a no to the retry (a third
    // question fails the test).
    approver.answers = {ReviewDecision::ApprovedForSession, ReviewDecision::Denied};
    ScriptedAttempts attempts;
    attempts.steps = {{1, true}};
    const auto req = request_of(kUnsafe);
    const auto settings = settings_of(AskForApproval::Untrusted);
    auto out = orchestrate(req, settings, store, approver, attempts.fn());
    REQUIRE(approver.asked.size() == 2);
    CHECK(approver.asked[0].kind == ApprovalKind::Untrusted);
    CHECK(approver.asked[1].kind == ApprovalKind::Sandbox);
    CHECK(attempts.sandboxed_calls == std::vector<bool>{true});
    CHECK(out.result.exit_code == 1);
    CHECK_FALSE(out.escalated);
    CHECK(to_json(out.approval)["requests"][0]["stage"] == "before");
    CHECK(to_json(out.approval)["requests"][0]["decision"] == "approved_for_session");
    CHECK(to_json(out.approval)["requests"][1]["stage"] == "retry");
    CHECK(to_json(out.approval)["requests"][1]["answered_by"] == "approver");
    CHECK(to_json(out.approval)["requests"][1]["decision"] == "denied");
    // The session approval covers the sandboxed run only.
    CHECK(store.contains(ApprovalKey{req.command, req.cwd, to_json(req.policy), false}));
    CHECK_FALSE(store.contains(ApprovalKey{req.command, req.cwd, to_json(req.policy), true}));

    // A second identical request: the cache answers the first prompt, not
    // the retry, which is asked again.
    attempts.steps = {{1, true}, {0, false}};
    approver.answers = {ReviewDecision::Approved};
    out = orchestrate(req, settings, store, approver, attempts.fn());
    CHECK(approver.asked.size() == 3);
    CHECK(to_json(out.approval)["requests"][0]["answered_by"] == "cache");
    CHECK(to_json(out.approval)["requests"][1]["answered_by"] == "approver");
    CHECK(out.escalated);

    // Without a denial, a cached first prompt runs once.
    attempts.steps = {{0, false}};
    out = orchestrate(req, settings, store, approver, attempts.fn());
    CHECK(approver.asked.size() == 3);
    CHECK(out.result.exit_code == 0);
    CHECK(to_json(out.approval)["requests"][0]["answered_by"] == "cache");
    CHECK(to_json(out.approval)["requests"][0]["decision"] == "approved_for_session");

    // Another cwd or another policy is another request.
    attempts.steps = {{0, false}};
    approver.answers = {ReviewDecision::Approved};
    auto other = req;
    other.cwd = "/elsewhere";
    orchestrate(other, settings, store, approver, attempts.fn());
    CHECK(approver.asked.size() == 4);
    attempts.steps = {{0, false}};
    approver.answers = {ReviewDecision::Approved};
    orchestrate(request_of(kUnsafe, Mode::ReadOnly), settings, store, approver, attempts.fn());
    CHECK(approver.asked.size() == 5);
}

TEST_CASE("orchestrate: a refusal before anything ran gives 125", "[approval][flow]") {
    MemorySessionStore store;
    ScriptedApprover approver;
    approver.answers = {ReviewDecision::Denied};
    ScriptedAttempts attempts;  // no steps: an attempt fails the test
    auto out = orchestrate(request_of(kUnsafe), settings_of(AskForApproval::Untrusted), store, approver, attempts.fn());
    CHECK(attempts.sandboxed_calls.empty());
    CHECK(out.attempts == 0);
    CHECK(out.refused_exit == 125);
    CHECK(out.result.exit_code == 125);
    CHECK_THAT(out.refusal_message, Catch::StartsWith("approval denied by --approver"));
    CHECK(out.refusal_message.find('\n') == std::string::npos);
    // The result's approval says what was asked, who answered, and the line.
    CHECK(to_json(out.approval)["requests"][0]["kind"] == "untrusted");
    CHECK(to_json(out.approval)["requests"][0]["answered_by"] == "approver");
    CHECK(to_json(out.approval)["requests"][0]["decision"] == "denied");
    CHECK(to_json(out.approval)["refusal"] == out.refusal_message);

    approver.answers = {ReviewDecision::Abort};
    out = orchestrate(request_of(kUnsafe), settings_of(AskForApproval::Untrusted), store, approver, attempts.fn());
    CHECK(out.refused_exit == 125);
    CHECK_THAT(out.refusal_message, Catch::StartsWith("approval aborted"));

    ApprovalSettings s = settings_of(AskForApproval::OnFailure);
    s.rules.add_text(R"({"rules":[{"pattern":["cp"],"decision":"forbidden","justification":"use rsync"}]})",
                     "team.json");
    out = orchestrate(request_of(kUnsafe), s, store, approver, attempts.fn());
    CHECK(out.refused_exit == 125);
    CHECK(out.refusal_message == "command forbidden by rule 1 in team.json (use rsync)");
    CHECK(to_json(out.approval)["requests"][0]["answered_by"] == "rule");
    CHECK(to_json(out.approval)["requests"][0]["rule"]["decision"] == "forbidden");
    CHECK(approver.asked.size() == 2);  // the rule asked nobody
    // Without a justification the line does not say the same thing twice.
    ApprovalSettings bare = settings_of(AskForApproval::OnFailure);
    bare.rules.add_text(R"({"rules":[{"pattern":["cp"],"decision":"forbidden"}]})", "team.json");
    out = orchestrate(request_of(kUnsafe), bare, store, approver, attempts.fn());
    CHECK(out.refusal_message == "command forbidden by rule 1 in team.json");
}

TEST_CASE("orchestrate: an approved escalation runs unsandboxed once", "[approval][flow]") {
    MemorySessionStore store;
    ScriptedApprover approver;
    approver.answers = {ReviewDecision::Approved};
    ScriptedAttempts attempts;
    attempts.steps = {{1, false}};
    auto s = settings_of(AskForApproval::OnRequest);
    s.escalate = true;
    const auto out = orchestrate(request_of(kUnsafe), s, store, approver, attempts.fn());
    CHECK(attempts.sandboxed_calls == std::vector<bool>{false});
    CHECK(out.escalated);
    CHECK(out.result.exit_code == 1);
    CHECK(approver.asked[0].kind == ApprovalKind::Escalation);
    CHECK_FALSE(out.approval.retry);

    // Under danger-full-access there is nothing to lift: no question.
    ScriptedApprover nobody;
    ScriptedAttempts plain;
    plain.steps = {{0, false}};
    const auto d = orchestrate(request_of(kUnsafe, Mode::DangerFullAccess), s, store, nobody, plain.fn());
    CHECK(plain.sandboxed_calls == std::vector<bool>{true});
    CHECK_FALSE(d.escalated);
    CHECK_THAT(to_json(d.approval)["note"].get<std::string>(), Catch::Contains("no effect"));
}

TEST_CASE("orchestrate: a session-approved retry is reused", "[approval][flow]") {
    MemorySessionStore store;
    ScriptedApprover approver;
    approver.answers = {ReviewDecision::ApprovedForSession};
    ScriptedAttempts attempts;
    attempts.steps = {{1, true}, {0, false}, {1, true}, {0, false}};
    const auto req = request_of({"touch", "/etc/x"});
    const auto s = settings_of(AskForApproval::OnFailure);
    orchestrate(req, s, store, approver, attempts.fn());
    const auto again = orchestrate(req, s, store, approver, attempts.fn());
    CHECK(approver.asked.size() == 1);
    CHECK(again.escalated);
    CHECK(to_json(again.approval)["requests"][0]["answered_by"] == "cache");
    CHECK(attempts.sandboxed_calls == std::vector<bool>{true, false, true, false});
}

TEST_CASE("orchestrate: the retry's prompt carries the failed attempt's denials and stderr", "[approval][flow]") {
    MemorySessionStore store;
    ScriptedApprover approver;
    approver.answers = {ReviewDecision::Denied};
    ScriptedAttempts attempts;
    const Denial denied{"create", "/etc/x", "", "",
                        0,        "",       "", Fix{"not under a writable root", {.writable_roots = {"/etc"}}, ""}};
    attempts.steps = {{1, true, {denied}, "touch: cannot touch '/etc/x': Read-only file system\n"}};
    const auto req = request_of({"touch", "/etc/x"});
    const auto out = orchestrate(req, settings_of(AskForApproval::OnFailure), store, approver, attempts.fn());
    CHECK(out.attempts == 1);
    REQUIRE(approver.asked.size() == 1);
    CHECK(approver.asked[0].denials == std::vector<Denial>{denied});
    CHECK(approver.asked[0].stderr_tail == "touch: cannot touch '/etc/x': Read-only file system\n");
}
