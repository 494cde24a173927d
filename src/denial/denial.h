// Did the sandbox cause a failure?  A heuristic over the status and output
// (sandbox_denied), and the exact denied operations from Landlock's audit
// records where audit is on and sbx may read it (denials).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "denial/evidence.h"
#include "denial/helper_status.h"
#include "denial/policy_delta.h"

namespace sbx {

// For one denied operation: the rule of the canonical policy that refused it
// (as `sbx check` names it) and the smallest sensible change of the policy
// that would allow it (a PolicyDelta: sbx run's flags are written from it),
// or why none is suggested (denial/fix.h makes them).
struct Fix {
    std::string rule;  // check_access's rule
    // The change to the policy that allows it ({.writable_roots = {"/root/.npm"}},
    // {.unprotect = {".git"}}, {.mode = WorkspaceWrite, .writable_roots = {"/etc"}},
    // {.network = Full}); empty for none.
    PolicyDelta change;
    std::string refused;  // when change is empty: why ("that would make $HOME writable")
    // The change as sbx run's flags, as a shell would read them back ("-w /root/.npm").
    std::string flags_text() const;
    // flags_text(), or "no flag suggested: REFUSED".
    std::string text() const;
    bool operator==(const Fix&) const = default;
};

// One denied operation, recorded by the helper (--record-denials) or from a
// Landlock audit record.
struct Denial {
    std::string operation;  // recorded: write, create, remove, rename, chmod, chown, utimes, connect;
                            // audit: the blockers, e.g. "fs.write_file" or "fs.make_reg,fs.refer"
    std::string path;       // filesystem objects
    std::string address;    // network: "1.2.3.4:443" (recorded), "daddr:dest" or "saddr:src" (audit)
    std::string target;     // signals: "pid 1 (systemd)"
    long pid = 0;           // recorded: the caller (its pid in the sandbox), and its comm
    std::string program;
    std::string host{};  // a connect to port 53: the name the output says could not be resolved (name_lookups)
    // Its rule and fix: from its source where that knew them exactly (the
    // allowlist proxy's decision), else from explain_denials (denial/fix.h).
    std::optional<Fix> fix{};
    bool operator==(const Denial&) const = default;
};

struct DenialAnalysis {
    bool sandbox_denied = false;
    std::uint64_t omitted = 0;  // recorded denials past the helper's bound, not listed
    std::string reason;         // the matched message ("read-only file system"), or "SIGSYS"
    std::string path;           // an absolute path named on the line of the message, if any
    std::vector<Denial> denials;
    bool recorded = false;  // the recorder ran (--record-denials): denials are exact
    // Without exact denials: the output's message read as one ("write" of the
    // path it names, absolute), with its rule and fix (explain_denials).
    std::optional<Denial> guess;
};

// The known sandbox messages in text (case-insensitive); nullopt if none.
std::optional<std::string> find_denial_message(std::string_view text);

// The absolute path the known message on its line is about: the last one
// before the message, but for a symlink's target ("cannot copy 'A' to 'B':
// ..." gives B, "'LINK' -> 'TARGET': ..." gives LINK), else the first after
// it; without one, a relative path next to a read-only file system.
std::string path_near_denial_message(std::string_view text);

// sandbox_denied: the run was sandboxed, failed with a status other than 0,
// 2, 124 (timeout), 126 and 127, and its output has a known message; or it
// died of SIGSYS.  reason says which.
DenialAnalysis analyze_denial(const RunOutcome&, bool sandboxed);

// With the recorder (--record-denials): the denials are what it recorded
// (merged with the audit's), and sandbox_denied is true only when the
// command failed (not 0, not a timeout) and a recorded or audited denial
// exists, or it died of SIGSYS; the output heuristic no longer decides
// (`cat /etc/shadow` refused by the file's mode is not the sandbox's).
// reason: "recorded" or "SIGSYS".
DenialAnalysis analyze_recorded(const RunOutcome&, const HelperStatus&, const std::vector<Denial>& audit);

// Without the recorder, under network restricted: the network attempts the
// helper recorded all the same (--record-network; exact, with their
// destinations) join the denials, and a failed command (not 0, not a
// timeout) that made one has sandbox_denied true ("recorded"), whatever the
// output says: a refused connect reads like an outage.  The file heuristic
// stays what it was; `recorded` stays false (writes were not recorded).
void add_recorded_network(DenialAnalysis&, const RunOutcome&, const HelperStatus&);

// The host name a failed lookup was for, as programs say it ("Could not
// resolve host: NAME" (curl, git, cargo), "Could not resolve hostname NAME"
// (ssh), "getaddrinfo EAI_AGAIN NAME" (node, npm), "Failed to resolve
// 'NAME'" (urllib3), "host='NAME'" (requests, pip), "unable to resolve host
// address 'NAME'" (wget), "lookup NAME on" (Go)); "" when none is named.
std::string unresolved_host(std::string_view output);

// Each denied connect to port 53 (a lookup) gets the name the output says
// could not be resolved (Denial::host), for a fix by name.
void name_lookups(DenialAnalysis&, const RunOutcome&);

// Parses lines of an audit log ("type=LANDLOCK_ACCESS msg=audit(...): ..." or
// "type=1423 ...", as auditd, ausearch and dmesg print them) into records;
// other lines are skipped.
std::vector<AuditRecord> parse_audit_log(std::string_view text);

// The denials of the Landlock domains that were created by `creator_exe` (the
// helper's path; empty = any creator): a domain's access records are kept
// when its LANDLOCK_DOMAIN "allocated" record names that exe.
std::vector<Denial> landlock_denials(const std::vector<AuditRecord>&, std::string_view creator_exe);

nlohmann::json to_json(const Denial&);

// What was denied, in words: "write /etc/x", "connect 10.0.0.1:443",
// "scope.signal to pid 1 (init)".
std::string denied_what(const Denial&);

// The recorder's denials, then the audit's that name another path or
// address (the same operation seen twice is listed once).
std::vector<Denial> merge_denials(const std::vector<RecordedDenial>& recorded, const std::vector<Denial>& audit);

}  // namespace sbx
