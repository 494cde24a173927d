// What the command line says, as plain data.  options.cc (CLI11) is the only
// code that reads argv; every command takes one of these structs.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "approval/types.h"
#include "exec/supervisor.h"
#include "platform/plan.h"
#include "policy/policy.h"

namespace sbx::cli {

enum class OutputFormat { Text, Json, Events };

// Policy options shared by run, policy and check; resolved with
// resolve_policy_args() (sources merged: defaults, file, flags).
struct PolicyArgs {
    PolicyInput flags;                       // from the flags themselves
    std::optional<std::string> policy_file;  // --policy-file, else $SBX_POLICY_FILE
    std::optional<std::string> policy_json;  // --policy-json
    // --no-config: neither the user's config nor the project policy
    // (policy/config.h); only the flags, the policy file and the defaults.
    bool no_config = false;
};

enum class TtyMode { Auto, Always, Never };

struct RunArgs {
    PolicyArgs policy;
    CommandSpec command;  // argv, cwd (absolute), env, stdin
    std::optional<std::chrono::milliseconds> timeout;
    OutputCaps caps;        // what sbx keeps of each stream
    bool cap_live = false;  // --cap-live: text mode shows only what is kept
    // --tty / -T,--no-tty: the command on a pseudo-terminal sbx relays
    // (exec/terminal.h); by default when stdin and stdout are terminals.
    TtyMode tty = TtyMode::Auto;
    OutputFormat format = OutputFormat::Text;
    bool dry_run = false;
    TargetOs target_os = TargetOs::Linux;  // --target-os (dry-run only)
    approval::ApprovalFlags approval;      // section 7's options, validated by settings_from_args
    // --explain (implies --record-denials): after the run, the sbx run line
    // that would have allowed what was denied, built from `invocation`: sbx's
    // argv before the command (argv[0], "run", the options; no "--").
    bool explain = false;
    std::vector<std::string> invocation;
    // --control-fd N: allowlist updates while the command runs
    // (net/proxy.h); -1 without.
    int control_fd = -1;
    // sbx learn --write-policy FILE (absolute): the learned line's policy
    // written there as a policy file (run.cc, write_learned_policy).
    std::optional<std::string> write_policy;
};

// Whether sbx run relays a pseudo-terminal to the command (exec/terminal.h):
// with --tty (refused, throwing Error, when stdin is not a terminal, or on
// macOS), never with -T, else in text mode when the command inherits stdin
// and sbx's stdin and stdout are terminals (Linux).
bool relay_terminal(const RunArgs&, TargetOs host, bool stdin_tty, bool stdout_tty);

// The policy options alone (words such as {"-p", "workspace-write", "-w",
// "/srv"}), read as sbx run reads them.  Throws Error.
PolicyArgs parse_policy_options(const std::vector<std::string>& words);

struct PolicyCommandArgs {
    PolicyArgs policy;
    bool json = false;
    bool seatbelt = false;
    bool relative = false;  // --relative: a project policy (.sbx/policy.json)
};

// sbx trust [PATH] [--revoke]: trust (or stop trusting) a project policy's
// exact bytes.
struct TrustArgs {
    std::string path = ".sbx/policy.json";
    bool revoke = false;
};

struct CheckQuery {
    enum class Kind { Read, Write, Exec, Connect } kind;
    std::string target;  // a path, or HOST:PORT
};

struct CheckArgs {
    PolicyArgs policy;
    std::vector<CheckQuery> queries;  // in command-line order
    bool json = false;
};

struct DoctorArgs {
    bool json = false;
};

// Merge defaults, the policy file and the flags, then resolve in the real
// environment (cwd = workspace_cwd), as it will be once the missing writable
// roots are made.  Throws Error, also when this user could not make one.
struct ResolvedPolicyArgs {
    CanonicalPolicy policy;
    std::vector<std::string> missing_roots;  // writable roots sbx run makes before the command starts
    // sbx's state directory (and its missing parents), when a writable root
    // holds it and it does not exist yet: made (0700) so that it alone is
    // held read-only (policy.h, held_state_directory).
    std::vector<std::string> missing_state{};
    // Where each setting came from (policy/config.h setting_origins), and
    // the configuration files looked at, each with what was found.
    std::vector<std::pair<std::string, std::string>> origins{};
    std::vector<std::string> config_files{};
};
// The rule of the read entry that holds the user's config directory
// read-only inside a writable root.
inline constexpr std::string_view kConfigDirectoryRule = "sbx: its user config stays read-only";
ResolvedPolicyArgs resolve_policy_args(const PolicyArgs&, const std::string& workspace_cwd);

// Makes the missing writable roots (mode 0777 less the umask) and the
// missing state directories (0700).  Throws Error.
void make_missing_roots(const ResolvedPolicyArgs&);

// Where sbx finds the helper: $SBX_LINUX_SANDBOX_EXE, then SBX_HELPER_DIR, then
// beside its own executable, then ../libexec/sbx from it (the release
// archive); never the workspace or PATH.  Throws Error when none is there.
std::string find_linux_helper();

// The commands; each returns sbx's exit status.
int run_command(const RunArgs&);
// A refusal before the command ran (a bad option, policy file, rules file or
// helper), for --json and --events (issue 35): the one result (or end event)
// on stdout, nothing ran, exit 125, "error" the message; stderr gets the
// "sbx: " line from main as for every refusal.
void print_refusal_result(bool json, const std::vector<std::string>& command, const std::string& cwd,
                          const std::string& message);
int policy_command(const PolicyCommandArgs&);
int check_command(const CheckArgs&);
int trust_command(const TrustArgs&);
int doctor_command(const DoctorArgs&);

}  // namespace sbx::cli
