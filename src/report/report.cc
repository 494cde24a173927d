#include "report/report.h"

#include <algorithm>

#include <fmt/format.h>

#include "denial/fix.h"
#include "exec/output_cap.h"
#include "util/utf8.h"

namespace sbx {

namespace {

constexpr std::string_view kReplacement = "\xEF\xBF\xBD";

// Sanitizes s; with `keep_tail`, an incomplete sequence at the end is left
// out and its length returned through `tail`.
std::string sanitize(std::string_view s, bool keep_tail, std::size_t& tail) {
    std::string out;
    out.reserve(s.size());
    tail = 0;
    std::size_t i = 0;
    while (i < s.size()) {
        std::size_t prefix;
        bool incomplete;
        const std::size_t len = utf8_sequence(s, i, prefix, incomplete);
        if (len > 0) {
            out.append(s.substr(i, len));
            i += len;
        } else if (incomplete && keep_tail) {
            tail = s.size() - i;
            break;
        } else {
            out.append(kReplacement);
            i += prefix;
        }
    }
    return out;
}

const char* stream_name(Stream s) { return s == Stream::Stdout ? "stdout" : "stderr"; }

// "(RULE; allow with FLAGS)", or "(RULE; no flag suggested: WHY)".
std::string rule_and_fix(const Denial& d) {
    if (!d.fix) return "";
    const std::string fix = allow_clause(d.fix->text());
    return d.fix->rule.empty() ? fmt::format(" ({})", fix) : fmt::format(" ({}; {})", d.fix->rule, fix);
}

}  // namespace

std::string sanitize_utf8(std::string_view s) {
    std::size_t tail;
    return sanitize(s, false, tail);
}

std::string Utf8Chunker::push(std::string_view chunk) {
    std::string data = std::move(carry_);
    data.append(chunk);
    std::size_t tail;
    std::string out = sanitize(data, true, tail);
    carry_ = data.substr(data.size() - tail);
    return out;
}

std::string Utf8Chunker::finish() {
    std::string out = sanitize_utf8(carry_);
    carry_.clear();
    return out;
}

nlohmann::json result_json(const RunReport& r) {
    nlohmann::json denials = nlohmann::json::array();
    for (const auto& d : r.denial.denials) denials.push_back(to_json(d));
    const auto& x = r.result;
    nlohmann::json j{
        {"command", r.command},
        {"cwd", r.cwd},
        {"sandbox", to_string(r.sandbox)},
        {"policy", to_json(r.policy)},
        {"exit_code", x.exit_code},
        {"signal", x.signal ? nlohmann::json(*x.signal) : nlohmann::json(nullptr)},
        {"timed_out", x.timed_out},
        {"duration_ms", x.duration_ms},
        {"stdout", sanitize_utf8(x.out.shown)},
        {"stderr", sanitize_utf8(x.err.shown)},
        {"stdout_truncated", x.out.truncated},
        {"stderr_truncated", x.err.truncated},
        {"stdout_bytes", x.out.bytes},
        {"stderr_bytes", x.err.bytes},
        {"stdout_omitted_bytes", x.out.omitted_bytes},
        {"stdout_omitted_lines", x.out.omitted_lines},
        {"stderr_omitted_bytes", x.err.omitted_bytes},
        {"stderr_omitted_lines", x.err.omitted_lines},
        {"output_cap",
         nlohmann::json{
             {"max_bytes", x.caps.max_bytes}, {"max_lines", x.caps.max_lines}, {"keep", keep_name(x.caps.keep)}}},
        {"sandbox_denied", r.denial.sandbox_denied},
        {"denials", denials},
        {"escalated", r.escalated},
        {"approval", r.approval ? approval::to_json(*r.approval) : nlohmann::json(nullptr)},
        {"not_enforced", r.not_enforced},
    };
    // Only where the recorder left some out (--record-denials).
    if (r.denial.omitted > 0) j["denials_omitted"] = r.denial.omitted;
    if (r.explanation) j["explain"] = explanation_json(*r.explanation);  // only with --explain
    if (r.first_attempt) {                                               // only after an escalated retry
        nlohmann::json first_denials = nlohmann::json::array();
        for (const auto& d : r.first_attempt->denials) first_denials.push_back(to_json(d));
        j["first_attempt"] = {{"exit_code", r.first_attempt->exit_code},
                              {"sandbox_denied", r.first_attempt->sandbox_denied},
                              {"denials", first_denials},
                              {"stderr_tail", sanitize_utf8(r.first_attempt->stderr_tail)}};
    }
    if (!r.ran) {  // refused before anything ran
        j["sandbox"] = nullptr;
        j["duration_ms"] = nullptr;
    }
    return j;
}

nlohmann::json begin_event(const std::vector<std::string>& command, const std::string& cwd, SandboxKind sandbox,
                           const CanonicalPolicy& policy) {
    return nlohmann::json{{"type", "begin"},
                          {"command", command},
                          {"cwd", cwd},
                          {"sandbox", to_string(sandbox)},
                          {"policy", to_json(policy)}};
}

nlohmann::json output_event(Stream s, std::string_view data) {
    return nlohmann::json{{"type", "output"}, {"stream", stream_name(s)}, {"data", std::string(data)}};
}

nlohmann::json end_event(const RunReport& r) { return nlohmann::json{{"type", "end"}, {"result", result_json(r)}}; }

std::string json_line(const nlohmann::json& j) {
    return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

nlohmann::json omitted_event(Stream s, std::uint64_t bytes, std::uint64_t lines) {
    return nlohmann::json{{"type", "omitted"}, {"stream", stream_name(s)}, {"bytes", bytes}, {"lines", lines}};
}

std::optional<std::string> denial_note(const RunReport& r) {
    const auto& a = r.denial;
    // Exact denials (recorded; or audited, when the command failed of one):
    // how many, and the first with its rule and fix.
    // A guess from the output: the message and the path it names.
    const std::string guess = a.guess ? fmt::format("sbx: the sandbox likely denied this ({}): {}{}\n", a.reason,
                                                    denied_what(*a.guess), rule_and_fix(*a.guess))
                                      : "";
    if (!a.denials.empty() && (a.recorded || a.sandbox_denied)) {
        const std::uint64_t n = a.denials.size() + a.omitted;
        const Denial& d = a.denials.front();
        return fmt::format("sbx: denied {} operation{}; first: {}{}\n{}", n, n == 1 ? "" : "s", denied_what(d),
                           rule_and_fix(d), guess);
    }
    if (!a.sandbox_denied) return std::nullopt;
    if (a.guess) return guess;
    const auto& p = r.policy;
    std::string hint;
    if (a.reason == "SIGSYS" || a.reason == "seccomp") {
        hint = p.network == Network::Full
                   ? "the call is never allowed in the sandbox; -p danger-full-access runs without one"
                   : "if it was a socket, -n full allows the network";
    } else if (p.mode == Mode::ReadOnly) {
        hint = "to allow writes to the workspace use -p workspace-write (and -w DIR for another directory)";
    } else if (p.mode == Mode::WorkspaceWrite) {
        hint = "if it was a write outside the writable roots, add -w DIR";
        if (p.network != Network::Full) hint += "; if it was the network, use -n full";
    } else {
        hint = "for the network use -n full";
    }
    const std::string what = a.reason == "SIGSYS" ? "a blocked system call killed it (SIGSYS)" : a.reason;
    return fmt::format("sbx: the sandbox likely denied this ({}); {}\n", what, hint);
}

}  // namespace sbx
