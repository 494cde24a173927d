// What the Linux helper reports on its --status-fd (linux-helper/status.h),
// read back by sbx, and the words sbx puts to a command that could not be
// executed.  Pure.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "policy/policy.h"

namespace sbx {

// execve's failure for a command: argv[0], errno, and the file it found
// (path and st_mode; absent when none was found).
struct ExecFailure {
    std::string argv0;
    int err = 0;
    std::optional<std::string> path;
    std::optional<unsigned> mode;
};

// An operation the sandbox refused, as the helper's recorder saw it
// (--record-denials): op, path or address, pid and program.
struct RecordedDenial {
    std::string op, path, address;
    long pid = 0;
    std::string program;
};

struct HelperStatus {
    std::optional<std::string> error;  // the sandbox could not be applied: "STEP: REASON; FIX"
    std::optional<ExecFailure> exec;   // the command could not be executed
    std::optional<std::string> not_enforced_reason;
    std::vector<std::string> not_enforced;
    std::vector<RecordedDenial> denied;  // in the order recorded, each once
    std::uint64_t denied_omitted = 0;    // more denials, past the helper's bound
};

// One JSON object a line; a line that is not one of the helper's is skipped.
HelperStatus parse_helper_status(std::string_view report);

// "cannot run 'X': <reason>", with why and the fix where sbx can tell: a
// file without execute permission (its mode, not the sandbox), a directory,
// or a path the policy denies (the entry that denies it).  policy is null
// for a command run without a sandbox; cwd is where the command started.
std::string describe_exec_failure(const ExecFailure&, const CanonicalPolicy* policy, const std::string& cwd);

}  // namespace sbx
