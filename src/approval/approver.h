// Who answers a prompt: a program (--approver), else a person on /dev/tty,
// else nobody (denied).  The only code of the module, with the session store,
// that does I/O.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "approval/types.h"
#include "denial/denial.h"

namespace sbx::approval {

struct ApprovalPrompt {
    std::vector<std::string> command;
    std::string cwd;
    std::string reason;
    ApprovalKind kind = ApprovalKind::Sandbox;
    nlohmann::json policy;  // canonical
    // Why, for a prompt after a sandboxed attempt failed (the retry without
    // the sandbox): its denials and the end of its stderr; empty before any
    // attempt ran.
    std::vector<Denial> denials;  // each with its rule and fix (denial/fix.h)
    std::string stderr_tail;
    std::optional<NetworkTarget> network{};  // kind Network: the connection asked about
};

// The most of a failed attempt's stderr a prompt carries (its last bytes).
inline constexpr std::size_t kPromptStderrTail = 2048;

// The JSON request an approver program reads on stdin:
// {"command": [...], "cwd": "...", "reason": "...", "kind": "...", "policy": {...},
//  "denials": [{"operation": ..., "path" or "address": ..., "rule": ..., "fix": ...}],
//  "stderr_tail": "...", ["network": {"host": ..., "port": N}] (kind network)}
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

// Runs PROGRAM (no shell; argv = {PROGRAM}) with the request on stdin;
// reads a decision word or {"decision": "..."} from stdout.  Anything else, a
// non-zero exit, a signal, or `timeout` without an answer counts as denied;
// on timeout its process group is killed (a zero timeout: no limit, the
// program may take as long as it needs).
// The program is found when the approver is made, before anything runs
// (as execvp would find it, symlinks resolved), and refused then (Error
// "--approver: ...") when there is none, or when it lies in one of
// `writable_roots` (the command could replace it).  ask() runs that file, and
// denies without running anything when another file has taken its path.
class ProgramApprover final : public Approver {
public:
    ProgramApprover(std::string program, std::chrono::milliseconds timeout,
                    const std::vector<std::string>& writable_roots = {});
    ApproverAnswer ask(const ApprovalPrompt&) override;
    const std::string& resolved() const { return resolved_; }

private:
    std::string program_;
    std::chrono::milliseconds timeout_;
    std::string resolved_;
    dev_t device_ = 0;
    ino_t inode_ = 0;
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

// The text the terminal prompt shows before its question: the kind and the
// reason, the command (as a shell reads it back), the cwd and the first
// denials, each string from the command's side escaped and folded
// (util/escape.h).  Pure, for the tests.
std::string render_prompt(const ApprovalPrompt&);

// A program when --approver was given (refused when it lies in one of
// `writable_roots`), else the terminal (which denies by itself when there
// is none).
std::unique_ptr<Approver> make_approver(const ApprovalSettings&, const std::vector<std::string>& writable_roots);

// Parses an approver program's stdout: nullopt unless it is exactly one
// decision word or a {"decision": WORD} object (surrounding whitespace is
// fine).
std::optional<ReviewDecision> parse_approver_output(std::string_view);

}  // namespace sbx::approval
