// Small helpers shared by the helper's layers: one-line errors and raw writes.
#pragma once

#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>
#include <string_view>

#include "policy/policy.h"

namespace sbx::helper {

// Every refusal: "<step>: <reason>; <fix>" (main adds "codex-linux-sandbox: ").
[[noreturn]] inline void fail(std::string_view step, std::string_view reason,
                              std::string_view fix = {}) {
    std::string message;
    message.reserve(step.size() + reason.size() + fix.size() + 4);
    message.append(step).append(": ").append(reason);
    if (!fix.empty()) message.append("; ").append(fix);
    throw sbx::Error(message);
}

// As fail(), with strerror(err) as the reason, prefixed by what was attempted.
[[noreturn]] inline void fail_errno(std::string_view step, std::string_view what,
                                    std::string_view fix = {}, int err = errno) {
    std::string reason(what);
    reason.append(": ").append(std::strerror(err));
    fail(step, reason, fix);
}

// Writes a whole message with write(2): safe after fork, no stdio buffers.
inline void write_all(int fd, std::string_view text) {
    while (!text.empty()) {
        ssize_t n = ::write(fd, text.data(), text.size());
        if (n < 0) {
            if (errno == EINTR) continue;
            return;
        }
        text.remove_prefix(static_cast<size_t>(n));
    }
}

inline void report_error(std::string_view message) {
    std::string line = "codex-linux-sandbox: ";
    line.append(message).append("\n");
    write_all(STDERR_FILENO, line);
}

}  // namespace sbx::helper
