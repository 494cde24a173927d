// The approval record (the JSON result's "approval"): its JSON form, byte for
// byte, and the round trip through approval_record_from_json.
#include <catch2/catch.hpp>

#include <string>

#include <nlohmann/json.hpp>

#include "approval/record.h"
#include "util/error.h"

using namespace sbx;
using namespace sbx::approval;

namespace {

// Every field set: a refused prompt rule before the run, then a retry
// answered by an approver program.
ApprovalRecord full_record() {
    ApprovalRecord r;
    r.mode = AskForApproval::OnFailure;
    ApprovalEntry before;
    before.stage = ApprovalStage::Before;
    before.kind = ApprovalKind::Rules;
    before.reason = "a prompt rule matched";
    before.answered_by = "rule";
    before.decision = ReviewDecision::Approved;
    before.rule = RuleMatch{RuleDecision::Prompt, std::string("ask first"), "team.json", 2};
    r.requests.push_back(before);
    ApprovalEntry retry;
    retry.stage = ApprovalStage::Retry;
    retry.kind = ApprovalKind::Sandbox;
    retry.reason = "the sandbox likely denied it";
    retry.first_attempt = ApprovalEntry::FirstAttempt{1, true};
    retry.answered_by = "approver";
    retry.approver = "./approve";
    retry.decision = ReviewDecision::Denied;
    retry.note = "not today";
    r.requests.push_back(retry);
    r.retry = "approval denied by --approver ./approve: not today (sandbox: ...)";
    r.note = "a note";
    r.refusal = "a refusal";
    return r;
}

}  // namespace

TEST_CASE("the approval record's JSON, byte for byte", "[approval][record]") {
    ApprovalRecord bare;
    CHECK(to_json(bare).dump() == R"({"mode":"never","requests":[]})");
    CHECK(to_json(full_record()).dump() ==
          R"j({"mode":"on-failure","note":"a note","refusal":"a refusal","requests":[)j"
          R"j({"answered_by":"rule","decision":"approved","kind":"rules","reason":"a prompt rule matched",)j"
          R"j("rule":{"decision":"prompt","file":"team.json","justification":"ask first","rule":2},"stage":"before"},)j"
          R"j({"answered_by":"approver","approver":"./approve","decision":"denied","first_attempt":)j"
          R"j({"exit_code":1,"sandbox_denied":true},"kind":"sandbox","note":"not today",)j"
          R"j("reason":"the sandbox likely denied it","stage":"retry"}],)j"
          R"j("retry":"approval denied by --approver ./approve: not today (sandbox: ...)"})j");
}

TEST_CASE("the approval record round-trips through its JSON", "[approval][record]") {
    for (const ApprovalRecord& r : {ApprovalRecord{}, full_record()}) {
        const nlohmann::json j = to_json(r);
        const ApprovalRecord back = approval_record_from_json(j);
        CHECK(back == r);
        CHECK(to_json(back) == j);
        // And through the text of the JSON result.
        CHECK(approval_record_from_json(nlohmann::json::parse(j.dump())) == r);
    }
    // A network request, asked while the command ran.
    ApprovalRecord net;
    net.mode = AskForApproval::OnRequest;
    ApprovalEntry during;
    during.stage = ApprovalStage::During;
    during.kind = ApprovalKind::Network;
    during.reason = "connect to api.example.com:443, which no allow-domain names";
    during.answered_by = "cache";
    during.decision = ReviewDecision::ApprovedForSession;
    during.network = NetworkTarget{"api.example.com", 443};
    net.requests.push_back(during);
    CHECK(to_json(net)["requests"][0].dump() ==
          R"j({"answered_by":"cache","decision":"approved_for_session","kind":"network",)j"
          R"j("network":{"host":"api.example.com","port":443},)j"
          R"j("reason":"connect to api.example.com:443, which no allow-domain names","stage":"during"})j");
    CHECK(approval_record_from_json(to_json(net)) == net);
    nlohmann::json bad_port = to_json(net);
    bad_port["requests"][0]["network"]["port"] = 70000;
    CHECK_THROWS_WITH(approval_record_from_json(bad_port),
                      "approval record: requests[0].network: \"port\" is not a port");
    // A settled prompt without kind, rule or note keeps them absent.
    ApprovalRecord r;
    r.mode = AskForApproval::Untrusted;
    ApprovalEntry e;
    e.reason = "r";
    e.answered_by = "mode";
    r.requests.push_back(e);
    CHECK(approval_record_from_json(to_json(r)) == r);
    CHECK_FALSE(to_json(r)["requests"][0].contains("kind"));
    CHECK_FALSE(to_json(r)["requests"][0].contains("note"));
}

TEST_CASE("approval_record_from_json refuses what to_json does not make", "[approval][record]") {
    const nlohmann::json good = to_json(full_record());
    auto with = [&](const nlohmann::json::json_pointer& at, nlohmann::json v) {
        nlohmann::json j = good;
        j[at] = std::move(v);
        return j;
    };
    CHECK_THROWS_AS(approval_record_from_json(nlohmann::json::array()), Error);
    CHECK_THROWS_WITH(approval_record_from_json(with("/extra"_json_pointer, 1)),
                      "approval record: approval: unknown key 'extra'");
    CHECK_THROWS_WITH(approval_record_from_json(with("/mode"_json_pointer, "sometimes")),
                      "approval record: approval: \"mode\": unknown value 'sometimes'");
    CHECK_THROWS_WITH(approval_record_from_json(with("/requests/1/decision"_json_pointer, "maybe")),
                      "approval record: requests[1]: \"decision\": unknown value 'maybe'");
    CHECK_THROWS_WITH(approval_record_from_json(with("/requests/0/rule/rule"_json_pointer, -1)),
                      "approval record: requests[0].rule: \"rule\" is not a rule number");
    CHECK_THROWS_WITH(approval_record_from_json(with("/requests/1/first_attempt/exit_code"_json_pointer, "1")),
                      "approval record: requests[1].first_attempt: \"exit_code\" is not an integer");
    nlohmann::json missing = good;
    missing["requests"][0].erase("reason");
    CHECK_THROWS_WITH(approval_record_from_json(missing), "approval record: requests[0]: missing \"reason\"");
}
