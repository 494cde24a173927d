// The helper's refusals: StepError (step, reason and fix, which sbx reads
// back from --status-fd, status.h), thrown by fail() and fail_errno() in
// every layer; report_error() writes one on stderr.  Also brings util/fd.h
// (Fd, write_all), which most layers use beside it.
#pragma once

#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>
#include <string_view>

#include "util/error.h"
#include "util/fd.h"

namespace sbx::helper {

// A refusal of the helper's, in parts: its message is "<step>: <reason>; <fix>".
struct StepError : sbx::Error {
    StepError(std::string_view step_, std::string_view reason_, std::string_view fix_)
        : sbx::Error(message_of(step_, reason_, fix_)), step(step_), reason(reason_), fix(fix_) {}
    std::string step, reason, fix;

private:
    static std::string message_of(std::string_view step, std::string_view reason, std::string_view fix) {
        std::string message;
        message.reserve(step.size() + reason.size() + fix.size() + 4);
        message.append(step).append(": ").append(reason);
        if (!fix.empty()) message.append("; ").append(fix);
        return message;
    }
};

// Every refusal (main adds "codex-linux-sandbox: ", or reports it on --status-fd).
[[noreturn]] inline void fail(std::string_view step, std::string_view reason, std::string_view fix = {}) {
    throw StepError(step, reason, fix);
}

// As fail(), with strerror(err) as the reason, prefixed by what was attempted.
[[noreturn]] inline void fail_errno(std::string_view step, std::string_view what, std::string_view fix = {},
                                    int err = errno) {
    std::string reason(what);
    reason.append(": ").append(std::strerror(err));
    fail(step, reason, fix);
}

inline void report_error(std::string_view message) {
    std::string line = "codex-linux-sandbox: ";
    line.append(message).append("\n");
    write_all(STDERR_FILENO, line);
}

}  // namespace sbx::helper
