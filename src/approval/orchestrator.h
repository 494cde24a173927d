// decide -> attempt -> maybe ask -> retry: the approval flow around the
// attempts that the caller (cli/run.cc) carries out.
#pragma once

#include <cstdint>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "approval/approver.h"
#include "approval/decide.h"
#include "approval/record.h"
#include "approval/session_store.h"
#include "approval/types.h"
#include "exec/supervisor.h"

namespace sbx::approval {

struct AttemptOutcome {
    ExecResult result;
    bool sandbox_denied = false;  // it failed and the sandbox likely caused it
    // What a prompt after it tells the approver (ApprovalPrompt).
    std::vector<Denial> denials;
    std::string stderr_tail;
};

// Run the command once: under the request's policy (sandboxed = true), or
// with no sandbox at all (sandboxed = false: the danger-full-access plan).
using AttemptFn = std::function<AttemptOutcome(bool sandboxed)>;

struct Orchestrated {
    ExecResult result;            // of the last attempt that ran
    bool sandbox_denied = false;  // of that attempt
    bool escalated = false;       // that attempt ran without the sandbox
    int attempts = 0;             // 0 when refused before anything ran
    ApprovalRecord approval;      // the JSON result's "approval" (record.h)
    // Set (125) when the command was refused before anything ran; then
    // `refusal_message` is the line to print after "sbx: ".
    std::optional<int> refused_exit;
    std::string refusal_message;
    // Set when a retry without the sandbox was asked for and refused: who
    // refused it and why (the line to print after "sbx: not run again
    // without the sandbox: ").
    std::string retry_refusal;
    // Things to print as "sbx: warning: ..." (e.g. a session file that could
    // not be written: the approval then holds for this run only).
    std::vector<std::string> warnings;
};

// The flow with an explicit store and approver (tests inject their own).
// Throws Error only before anything ran (e.g. a corrupt session file).
Orchestrated orchestrate(const ApprovalRequest&, const ApprovalSettings&, SessionStore&, Approver&,
                         const AttemptFn& attempt);

// The flow with the store and approver the settings name (--session,
// --approver, else /dev/tty, else denied).
Orchestrated orchestrate(const ApprovalRequest&, const ApprovalSettings&, const AttemptFn& attempt);

// Network requests (ApprovalKind::Network): while a sandboxed attempt runs,
// the allowlist proxy asks about each connection to a host and port that no
// allow-domain names (net/proxy.h AskHost), once per run.  Asked only under
// on-request and untrusted, and only of an --approver program: a prompt on
// the terminal would compete with the running command for it.  A session
// approval of that host and port (approved_for_session, now or earlier in
// the --session) answers without asking.  approved and approved_for_session
// let the connection through (its address is still checked); denied and
// abort refuse it, as the allowlist would have.  Each answer becomes a
// request of the result's "approval" (stage "during").  The proxy calls
// ask() one call at a time.
class NetworkApprovals {
public:
    NetworkApprovals(const ApprovalRequest&, const ApprovalSettings&, SessionStore&, Approver&);
    // Whether ask() asks anyone at all (else it is never to be called).
    bool active() const { return active_; }
    bool ask(const std::string& host, std::uint16_t port);
    // The answers so far, and the warnings (a session file that could not
    // be written), each once.
    std::vector<ApprovalEntry> take_entries();
    std::vector<std::string> take_warnings();

private:
    const ApprovalRequest& request_;
    const ApprovalSettings& settings_;
    SessionStore& store_;
    Approver& approver_;
    bool active_ = false;
    std::mutex mutex_;  // guards what follows
    std::vector<ApprovalEntry> entries_;
    std::vector<std::string> warnings_;
};

}  // namespace sbx::approval
