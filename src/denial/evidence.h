// What the denial analysis reads, as plain data that its sources fill in
// from above: the command's outcome (the supervisor's ExecResult, which
// denial/ does not include), and the kernel's audit records (the netlink
// reader is platform/audit.h's).  The helper's status is
// denial/helper_status.h's; the Seatbelt log is denial/seatbelt_log.h's.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace sbx {

// How the command ended and the output sbx kept of it, viewed, not copied:
// the result it is made from outlives the analysis.
struct RunOutcome {
    struct Stream {
        std::string_view shown;  // what sbx kept (--json, --events)
        std::string_view tail;   // the last bytes, while streaming
    };
    int exit_code = 0;  // sbx's exit status for the run (124, 128+N, ...)
    std::optional<int> signal;
    bool timed_out = false;
    Stream out, err;

    RunOutcome() = default;
    // From the supervisor's ExecResult (exec/supervisor.h), or any result
    // with its fields.
    template <class Result>
    requires requires(const Result& r) {
        r.exit_code;
        r.signal;
        r.timed_out;
        r.out.shown;
        r.out.tail;
    }
    RunOutcome(const Result& r)  // NOLINT(google-explicit-constructor): an ExecResult is the outcome
        : exit_code(r.exit_code),
          signal(r.signal),
          timed_out(r.timed_out),
          out{r.out.shown, r.out.tail},
          err{r.err.shown, r.err.tail} {}
};

// One audit record: its type (1423 LANDLOCK_ACCESS, 1424 LANDLOCK_DOMAIN) and
// its text, with or without the "audit(...): " prefix.
struct AuditRecord {
    int type = 0;
    std::string text;
};

inline constexpr int kAuditLandlockAccess = 1423;
inline constexpr int kAuditLandlockDomain = 1424;

}  // namespace sbx
