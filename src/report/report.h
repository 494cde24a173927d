// Rendering a run: the JSON result, the events (JSON Lines) and the text
// notes on stderr.  Pure functions of the RunReport.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "approval/record.h"
#include "denial/denial.h"
#include "denial/explain.h"
#include "exec/supervisor.h"
#include "platform/sandbox_kind.h"
#include "policy/policy.h"

namespace sbx {

// Everything the result says about one run.
struct RunReport {
    std::vector<std::string> command;  // the user's argv (not the helper's)
    std::string cwd;
    SandboxKind sandbox = SandboxKind::None;
    CanonicalPolicy policy;
    ExecResult result;
    DenialAnalysis denial;
    bool escalated = false;  // the approval flow ran it unsandboxed
    // False when the command was refused before anything ran: the result
    // then has "sandbox" and "duration_ms" null.
    bool ran = true;
    std::optional<approval::ApprovalRecord> approval;  // section 7's record; null in the JSON when unset
    // What the sandbox could not enforce (the --allow-unprotected fallback
    // where no mount namespace can be made); empty when everything was.
    std::vector<std::string> not_enforced;
    std::optional<Explanation> explanation;  // --explain: "explain" in the JSON
    // An escalated retry: the sandboxed attempt it followed, whose denials
    // and stderr are why it was asked for ("first_attempt" in the JSON).
    struct FirstAttempt {
        int exit_code = 0;
        bool sandbox_denied = false;
        std::vector<Denial> denials;
        std::string stderr_tail;  // its last kPromptStderrTail bytes, as the approver saw them
    };
    std::optional<FirstAttempt> first_attempt;
};

// Invalid UTF-8 replaced by U+FFFD (one per maximal invalid subpart).
std::string sanitize_utf8(std::string_view);

// Chunked sanitizing: a multi-byte character split across chunks is kept
// whole; finish() flushes what is left (an incomplete tail becomes U+FFFD).
class Utf8Chunker {
public:
    std::string push(std::string_view chunk);
    std::string finish();

private:
    std::string carry_;
};

// The JSON result of section 4 (every field, in a fixed order of keys).
nlohmann::json result_json(const RunReport&);

nlohmann::json begin_event(const std::vector<std::string>& command, const std::string& cwd, SandboxKind,
                           const CanonicalPolicy&);
nlohmann::json output_event(Stream, std::string_view data);  // data: already sanitized
nlohmann::json end_event(const RunReport&);

// One compact line of JSON, newline-terminated.
std::string json_line(const nlohmann::json&);

// Where a stream over the cap omitted output (--events): the bytes, and the
// lines of which no byte was shown; its tail follows.
nlohmann::json omitted_event(Stream, std::uint64_t bytes, std::uint64_t lines);

// The note printed in text mode when sandbox_denied: what was denied and the
// flag that would allow it (with the newline); nullopt otherwise.
std::optional<std::string> denial_note(const RunReport&);

}  // namespace sbx
