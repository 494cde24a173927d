#include "approval/record.h"

#include <initializer_list>

#include <fmt/core.h>
#include <nlohmann/json.hpp>

#include "util/error.h"

namespace sbx::approval {

std::string_view to_string(ApprovalStage s) {
    switch (s) {
        case ApprovalStage::Before: return "before";
        case ApprovalStage::During: return "during";
        case ApprovalStage::Retry: return "retry";
    }
    return "before";
}

namespace {

using nlohmann::json;

json to_json(const ApprovalEntry& e) {
    json j{{"stage", to_string(e.stage)},
           {"reason", e.reason},
           {"answered_by", e.answered_by},
           {"decision", to_string(e.decision)}};
    if (e.kind) j["kind"] = to_string(*e.kind);
    if (e.first_attempt)
        j["first_attempt"] =
            json{{"exit_code", e.first_attempt->exit_code}, {"sandbox_denied", e.first_attempt->sandbox_denied}};
    if (e.approver) j["approver"] = *e.approver;
    if (e.rule) j["rule"] = to_json(*e.rule);
    if (e.note) j["note"] = *e.note;
    if (e.network) j["network"] = json{{"host", e.network->host}, {"port", e.network->port}};
    return j;
}

[[noreturn]] void bad(std::string_view where, std::string_view what) {
    throw Error(fmt::format("approval record: {}: {}", where, what));
}

// The object's keys are among `known`.
const json& object(const json& j, std::string_view where, std::initializer_list<std::string_view> known) {
    if (!j.is_object()) bad(where, "not an object");
    for (const auto& [key, value] : j.items()) {
        bool ok = false;
        for (auto k : known) ok = ok || key == k;
        if (!ok) bad(where, fmt::format("unknown key '{}'", key));
    }
    return j;
}

const json& member(const json& j, const char* key, std::string_view where) {
    if (!j.contains(key)) bad(where, fmt::format("missing \"{}\"", key));
    return j[key];
}

std::string text(const json& j, const char* key, std::string_view where) {
    const json& v = member(j, key, where);
    if (!v.is_string()) bad(where, fmt::format("\"{}\" is not a string", key));
    return v.get<std::string>();
}

std::optional<std::string> optional_text(const json& j, const char* key, std::string_view where) {
    if (!j.contains(key)) return std::nullopt;
    return text(j, key, where);
}

// The value whose to_string is the word at `key`.
template <typename Enum>
Enum word(const json& j, const char* key, std::string_view where, std::initializer_list<Enum> values) {
    const std::string w = text(j, key, where);
    for (Enum v : values)
        if (to_string(v) == w) return v;
    bad(where, fmt::format("\"{}\": unknown value '{}'", key, w));
}

RuleMatch rule_from_json(const json& j, std::string_view where) {
    object(j, where, {"decision", "file", "rule", "justification"});
    RuleMatch m{};
    m.decision = word(j, "decision", where, {RuleDecision::Allow, RuleDecision::Prompt, RuleDecision::Forbidden});
    m.source = text(j, "file", where);
    const json& index = member(j, "rule", where);
    if (!index.is_number_unsigned()) bad(where, "\"rule\" is not a rule number");
    m.index = index.get<std::size_t>();
    m.justification = optional_text(j, "justification", where);
    return m;
}

ApprovalEntry entry_from_json(const json& j, const std::string& where) {
    object(
        j, where,
        {"stage", "kind", "reason", "first_attempt", "answered_by", "decision", "approver", "rule", "note", "network"});
    ApprovalEntry e;
    e.stage = word(j, "stage", where, {ApprovalStage::Before, ApprovalStage::During, ApprovalStage::Retry});
    if (j.contains("kind"))
        e.kind = word(j, "kind", where,
                      {ApprovalKind::Sandbox, ApprovalKind::Rules, ApprovalKind::Escalation, ApprovalKind::Untrusted,
                       ApprovalKind::Network});
    e.reason = text(j, "reason", where);
    if (j.contains("first_attempt")) {
        const std::string at = where + ".first_attempt";
        const json& f = object(j["first_attempt"], at, {"exit_code", "sandbox_denied"});
        const json& code = member(f, "exit_code", at);
        const json& denied = member(f, "sandbox_denied", at);
        if (!code.is_number_integer()) bad(at, "\"exit_code\" is not an integer");
        if (!denied.is_boolean()) bad(at, "\"sandbox_denied\" is not a boolean");
        e.first_attempt = ApprovalEntry::FirstAttempt{code.get<int>(), denied.get<bool>()};
    }
    e.answered_by = text(j, "answered_by", where);
    e.decision = word(
        j, "decision", where,
        {ReviewDecision::Approved, ReviewDecision::ApprovedForSession, ReviewDecision::Denied, ReviewDecision::Abort});
    e.approver = optional_text(j, "approver", where);
    if (j.contains("rule")) e.rule = rule_from_json(j["rule"], where + ".rule");
    e.note = optional_text(j, "note", where);
    if (j.contains("network")) {
        const std::string at = where + ".network";
        const json& n = object(j["network"], at, {"host", "port"});
        const json& port = member(n, "port", at);
        if (!port.is_number_unsigned() || port.get<std::uint64_t>() > 65535) bad(at, "\"port\" is not a port");
        e.network = NetworkTarget{text(n, "host", at), static_cast<std::uint16_t>(port.get<std::uint64_t>())};
    }
    return e;
}

}  // namespace

json to_json(const ApprovalRecord& r) {
    json requests = json::array();
    for (const auto& e : r.requests) requests.push_back(to_json(e));
    json j{{"mode", to_string(r.mode)}, {"requests", std::move(requests)}};
    if (r.retry) j["retry"] = *r.retry;
    if (r.refusal) j["refusal"] = *r.refusal;
    if (r.note) j["note"] = *r.note;
    return j;
}

ApprovalRecord approval_record_from_json(const json& j) {
    object(j, "approval", {"mode", "requests", "retry", "refusal", "note"});
    ApprovalRecord r;
    r.mode =
        word(j, "mode", "approval",
             {AskForApproval::Never, AskForApproval::OnFailure, AskForApproval::OnRequest, AskForApproval::Untrusted});
    const json& requests = member(j, "requests", "approval");
    if (!requests.is_array()) bad("approval", "\"requests\" is not an array");
    for (std::size_t i = 0; i < requests.size(); ++i)
        r.requests.push_back(entry_from_json(requests[i], fmt::format("requests[{}]", i)));
    r.retry = optional_text(j, "retry", "approval");
    r.refusal = optional_text(j, "refusal", "approval");
    r.note = optional_text(j, "note", "approval");
    return r;
}

}  // namespace sbx::approval
