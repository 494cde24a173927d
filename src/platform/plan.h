// From a canonical policy and a command to the exact thing to exec: pure, so
// both platforms' argv are unit-tested on any OS.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "platform/sandbox_kind.h"
#include "policy/policy.h"

namespace sbx {

enum class TargetOs { Linux, MacOs };

// The OS sbx was built for: the plan sbx run executes.
constexpr TargetOs native_os() {
#ifdef __APPLE__
    return TargetOs::MacOs;
#else
    return TargetOs::Linux;
#endif
}
enum class StdinMode { Inherit, Null };

// The command as the user gave it.
struct CommandSpec {
    std::vector<std::string> argv;
    std::string cwd;                             // absolute
    std::map<std::string, std::string> set_env;  // --env KEY=VALUE
    std::vector<std::string> unset_env;          // --unset-env KEY
    bool clear_env = false;                      // --clear-env
    StdinMode stdin_mode = StdinMode::Inherit;
    bool record_denials = false;  // --record-denials (the helper's recorder)
    // sbx learn: every write in a throwaway layer, each refusal of the
    // policy recorded (the helper's --learn; Linux only).
    bool learn = false;
    // sbx learn --let-connect: a connection to a name the policy does not
    // allow goes through sbx's proxy (recorded) instead of being refused.
    bool let_connect = false;
    // sbx learn --reads: the policy need not read every file; each file it
    // cannot read that the command opens is recorded (--learn-reads).
    bool learn_reads = false;
    // The command runs on a pseudo-terminal sbx made for it (its relay,
    // exec/terminal.h): the helper is told so (--private-terminal).
    bool private_terminal = false;
    // macOS: the terminal devices the command inherits (Seatbelt opens them
    // by name; see SeatbeltContext).
    std::vector<std::string> terminals;
};

// Where the platform's sandbox programs live.
struct PlatformPaths {
    std::string linux_helper;                            // absolute path of codex-linux-sandbox
    std::string sandbox_exec = "/usr/bin/sandbox-exec";  // macOS, never from PATH
};

// Exactly what to run.  The child's environment is: sbx's own (or, with
// clear_env, only the kept variables), minus env_remove, plus env_add, plus
// each env_default whose name is not set by then.
struct ExecPlan {
    std::vector<std::string> argv;  // argv[0] is absolute, or a name for execvp
    std::map<std::string, std::string> env_add;
    std::vector<std::string> env_remove;
    std::map<std::string, std::string> env_default;
    bool clear_env = false;
    std::string cwd;
    SandboxKind sandbox = SandboxKind::None;
    StdinMode stdin_mode = StdinMode::Inherit;
    // The descriptor the program reports on (the helper's --status-fd), or
    // -1: the supervisor opens a pipe there and returns what was written
    // (ExecResult::report).
    int report_fd = -1;
    // The descriptor the helper sends the allowlist proxy's listening socket
    // on (its --proxy-fd), or -1: sbx passes its end of a socket pair there
    // (SuperviseOptions::proxy_channel, net/proxy.h).
    int proxy_fd = -1;
};

// The descriptor number sbx gives the Linux helper for --status-fd.
inline constexpr int kHelperStatusFd = 3;
// ... and for --proxy-fd (with an allowlist).
inline constexpr int kHelperProxyFd = 4;

// Under network restricted nothing outside can be reached, so a package
// manager's retries of a failed name lookup only wait (npm: 70 s of backoff
// on EAI_AGAIN; pip: 8 s): retries off, unless the user's environment or
// --env sets them.  Listed in sbx(1).
const std::map<std::string, std::string>& no_network_retry_env();

ExecPlan plan(const CanonicalPolicy&, const CommandSpec&, TargetOs, const PlatformPaths&);

// The helper's argv prefix for a policy and command (everything before
// "--"): its cwd, and the command's record_denials, private_terminal and
// learn as the helper's --record-denials, --private-terminal and --learn
// (sbx's own; never in the argv Codex is given).
std::vector<std::string> linux_helper_args(const CanonicalPolicy&, const std::string& helper, const CommandSpec&);

// Whether a run of this command reaches the network by name, through sbx's
// proxy: under an allowlist, and in a learning run whose network is not
// full (it learns the names; each unlisted one is refused, or with
// --let-connect let through, and recorded either way).
bool by_name(const CanonicalPolicy&, const CommandSpec&);

}  // namespace sbx
