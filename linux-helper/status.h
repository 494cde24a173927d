// Where the helper tells what it could not do.  By default one line on
// stderr, "codex-linux-sandbox: ..." (as Codex's own helper does).  With
// --status-fd N, JSON lines on descriptor N instead, in the manner of
// bubblewrap's --json-status-fd, for a caller (sbx) that words them itself:
//
//   {"error": {"step": S, "reason": R, "fix": F, "message": "S: R; F"}}
//       the sandbox could not be applied (exit 125)
//   {"exec_error": {"argv0": A, "path": P, "errno": N, "error": E, "mode": M}}
//       the command could not be executed (exit 126/127); path and mode
//       (st_mode) are those of the file execvp found in the sandbox's view,
//       absent when none was found
//   {"not_enforced": {"reason": R, "items": [...]}}
//       the sandbox runs without some of its layers (--allow-unprotected)
//   {"denied": {"op": O, "path": P, "address": A, "pid": N, "program": C}}
//       an operation the sandbox refused (--record-denials, recorder.h): O is
//       write, create, remove, rename, chmod, chown, utimes or connect; path
//       (absolute) or address ("1.2.3.4:443", "[::1]:53"), whichever applies
//   {"denied_omitted": N}
//       N more denied operations, not listed (past the recorder's bound)
//
// The descriptor is close-on-exec: the command never sees it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <exception>
#include <string>
#include <string_view>
#include <vector>

namespace sbx::helper {

class Status {
public:
    // Reports on fd from now on; throws Error when fd is not open.
    void use_fd(int fd);

    void error(const std::exception&) const;
    // errno err from execvp(argv[0]).
    void exec_failed(char* const* argv, int err) const;
    void not_enforced(std::string_view reason, const std::vector<std::string>& items) const;
    // One recorded denial; returns the size of the line written.
    std::size_t denied(std::string_view op, std::string_view path, std::string_view address, long pid,
                       std::string_view program) const;
    void denied_omitted(std::uint64_t count) const;
    // What can be written to the status descriptor before a writer would
    // block on it (its pipe's capacity, raised to `wanted` where allowed);
    // `wanted` when it is not a pipe.  Nothing reads the pipe before the run
    // ends, so pid 1's reports must fit.
    std::size_t room(std::size_t wanted) const;

private:
    void emit(const std::string& json_line, std::string_view stderr_text) const;
    int fd_ = -1;
};

}  // namespace sbx::helper
