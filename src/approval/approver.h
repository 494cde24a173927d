// Who answers a prompt: a program (--approver), else a person on /dev/tty,
// else nobody (denied).  The only code of the module, with the session store,
// that does I/O.
#pragma once

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "approval/types.h"

namespace sbx::approval {

// One operation the sandbox refused in the attempt before a prompt, as the
// result's "denials" lists it (src/report/denial.h): the operation, its path
// or address, the policy's rule that refused it and the flags that would
// allow it (or "no flag suggested: WHY").
struct DeniedOperation {
    std::string operation;
    std::string path;
    std::string address;
    std::string rule;
    std::string fix;
    bool operator==(const DeniedOperation&) const = default;
};

struct ApprovalPrompt {
    std::vector<std::string> command;
    std::string cwd;
    std::string reason;
    ApprovalKind kind = ApprovalKind::Sandbox;
    nlohmann::json policy;  // canonical
    // Why, for a prompt after a sandboxed attempt failed (the retry without
    // the sandbox): its denials and the end of its stderr; empty before any
    // attempt ran.
    std::vector<DeniedOperation> denials;
    std::string stderr_tail;
};

// The most of a failed attempt's stderr a prompt carries (its last bytes).
inline constexpr std::size_t kPromptStderrTail = 2048;

// The JSON request an approver program reads on stdin:
// {"command": [...], "cwd": "...", "reason": "...", "kind": "...", "policy": {...},
//  "denials": [{"operation": ..., "path" or "address": ..., "rule": ..., "fix": ...}],
//  "stderr_tail": "..."}
nlohmann::json to_json(const ApprovalPrompt&);

struct ApproverAnswer {
    ReviewDecision decision = ReviewDecision::Denied;
    std::string answered_by;  // "approver", "tty", "default-deny"
    std::string note;         // why it counts as denied, when it was not an answer
};

class Approver {
public:
    virtual ~Approver() = default;
    virtual ApproverAnswer ask(const ApprovalPrompt&) = 0;
};

// Runs PROGRAM (no shell; argv = {PROGRAM}, found on PATH like execvp) with
// the request on stdin; reads a decision word or {"decision": "..."} from
// stdout.  Anything else, a non-zero exit, a signal, or `timeout` without an
// answer counts as denied; on timeout its process group is killed (a zero
// timeout: no limit, the program may take as long as it needs).  A
// program execvp would not find is refused when the approver is made
// (Error "--approver: ..."), before anything runs.
class ProgramApprover final : public Approver {
public:
    ProgramApprover(std::string program, std::chrono::milliseconds timeout);
    ApproverAnswer ask(const ApprovalPrompt&) override;

private:
    std::string program_;
    std::chrono::milliseconds timeout_;
};

// Asks on a terminal (y = approved, n = denied, a = approved for this
// session, q = abort); denied when the terminal cannot be opened or closes.
class TtyApprover final : public Approver {
public:
    explicit TtyApprover(std::string path = "/dev/tty");
    ApproverAnswer ask(const ApprovalPrompt&) override;

private:
    std::string path_;
};

// A program when --approver was given, else the terminal (which denies by
// itself when there is none).
std::unique_ptr<Approver> make_approver(const ApprovalSettings&);

// Parses an approver program's stdout: nullopt unless it is exactly one
// decision word or a {"decision": WORD} object (surrounding whitespace is
// fine).
std::optional<ReviewDecision> parse_approver_output(std::string_view);

}  // namespace sbx::approval
