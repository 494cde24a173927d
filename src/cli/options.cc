// The command line: argv -> the plain structs of options.h -> a command.
// This is the only code that reads argv.
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>
#include <string_view>

#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include "cli/cli.h"
#include "cli/options.h"
#include "policy/secrets.h"
#include "policy/units.h"
#include "sbx_config.h"
#include "util/path.h"

namespace sbx::cli {

namespace {

constexpr const char* kExitCodes =
    "Exit status of sbx run: the command's own; 124 timeout; 128+N killed by signal N;\n"
    "125 sbx failed or refused (one line on stderr starting with 'sbx: '); 126 the command\n"
    "cannot be executed; 127 it is not found.  See sbx(1).";
constexpr const char* kPolicyExitCodes =
    "Exit status: 0 the policy was printed; 125 sbx refused (one line on stderr starting with\n"
    "'sbx: ').  See sbx(1).";
constexpr const char* kCheckExitCodes =
    "Exit status: 0 every query is allowed; 1 any is denied; 125 sbx refused (one line on stderr\n"
    "starting with 'sbx: ').  See sbx(1).";
constexpr const char* kDoctorExitCodes =
    "Exit status: 0 every mode is enforced on this machine; 1 otherwise.  See sbx(1).";

constexpr const char* kTrustExitCodes =
    "Exit status: 0 done; 125 sbx refused (one line on stderr starting with 'sbx: ').  See sbx(1).";

constexpr const char* kCommands = "commands: run, learn, policy, check, doctor, trust";

// The usage line of sbx run names the command it runs, which CLI11 (it
// collects the command with prefix_command(), not a positional) leaves out.
class HelpFormatter : public CLI::Formatter {
public:
    std::string make_usage(const CLI::App* app, std::string name) const override {
        std::string usage = CLI::Formatter::make_usage(app, std::move(name));
        if ((app->get_name() == "run" || app->get_name() == "learn") && app->get_parent() != nullptr) {
            const auto end = usage.find_last_not_of('\n') + 1;
            usage.insert(end, " -- COMMAND [ARG...]");
        }
        return usage;
    }
};

// Which options a subcommand needs for this command line.  CLI11 checks
// every new option's names against all the others (quadratic, about two
// thirds of a launch's instructions), so when no help is asked for, only the
// options whose names could appear in argv are built: a long name when some
// word starts with it, a short name when some single-dash word holds its
// letter anywhere (a superset of CLI11's -xVALUE and -xyz readings).  CLI11
// tells options from values by their shape alone, so an option that is left
// out could not have matched any word: the parse is the same.  With -h or
// --help anywhere, every option is built, for the help text.
class Wanted {
public:
    explicit Wanted(const std::vector<std::string>& words) : words_(words) {
        for (const auto& w : words_) {
            const bool single_dash = w.size() > 1 && w[0] == '-' && w[1] != '-';
            if ((single_dash && w.find('h') != std::string::npos) || w.rfind("--help", 0) == 0) all_ = true;
        }
    }

    // names: CLI11's "-x,--long" form.
    bool operator()(std::string_view names) const {
        if (all_) return true;
        while (!names.empty()) {
            const auto comma = names.find(',');
            const std::string_view name = names.substr(0, comma);
            names = comma == std::string_view::npos ? std::string_view() : names.substr(comma + 1);
            if (name.size() > 2 && name[1] == '-') {
                for (const auto& w : words_)
                    if (std::string_view(w).substr(0, name.size()) == name) return true;
            } else if (name.size() == 2) {
                for (const auto& w : words_)
                    if (w.size() > 1 && w[0] == '-' && w[1] != '-' && w.find(name[1], 1) != std::string::npos)
                        return true;
            } else {
                return true;  // not a shape this filter knows: keep it
            }
        }
        return false;
    }

private:
    const std::vector<std::string>& words_;
    bool all_ = false;
};

// Adds the wanted options of one help group.
class Adder {
public:
    Adder(CLI::App& app, const Wanted& wanted, const char* group) : app_(app), wanted_(wanted), group_(group) {}

    template <typename T>
    CLI::Option* option(const char* names, T& var, const char* help) {
        return wanted_(names) ? app_.add_option(names, var, help)->group(group_) : nullptr;
    }
    CLI::Option* flag(const char* names, bool& var, const char* help) {
        return wanted_(names) ? app_.add_flag(names, var, help)->group(group_) : nullptr;
    }

private:
    CLI::App& app_;
    const Wanted& wanted_;
    const char* group_;
};

// Flags whose values need parsing after CLI11 has collected them as text.
struct PolicyText {
    std::string mode, network, workspace;
    std::string memory, cpu, procs, file_size, open_files;
    bool exclude_slash_tmp = false, exclude_tmpdir = false, allow_unprotected = false, minimal = false,
         git_write = false;
    std::vector<std::string> writable_roots, read, deny, deny_glob, allow_domain, deny_domain, secret_env, secret_file,
        tls_passthrough;
};

void add_policy_options(CLI::App& app, const Wanted& wanted, PolicyArgs& args, PolicyText& text) {
    Adder add(app, wanted, "Policy options");
    add.option("-p,--policy", text.mode,
               "Sandbox mode: read-only (default), workspace-write, danger-full-access (alias full), "
               "external-sandbox (alias external)");
    add.option("-n,--network", text.network,
               "Network: restricted (default; full for danger-full-access), limited (a private network "
               "with only loopback), full");
    add.option("--allow-domain", text.allow_domain,
               "Let the command reach this host through sbx's proxy (example.com, *.example.com for the names "
               "below it, an address or a range, each with an optional :PORT); implies -n limited (repeatable)");
    add.option("--deny-domain", text.deny_domain,
               "Refuse this host even where --allow-domain allows it (same patterns, and =REASON shown with the "
               "refusal; repeatable)");
    add.option("--secret-env", text.secret_env,
               "Give the command a stand-in for $NAME, put back as the real value only in what it sends over TLS "
               "to HOSTs (NAME@HOST[,HOST...]); NAME alone unsets it in the sandbox (repeatable)");
    add.option("--secret-file", text.secret_file,
               "Give the command a copy of PATH with a stand-in for its secret, put back as --secret-env's "
               "(PATH@HOST[,HOST...]; the policy's extract key masks a part); PATH alone denies it (repeatable)");
    add.option("--tls-passthrough", text.tls_passthrough,
               "Never terminate TLS to this host (a client that pins its certificate): no secret reaches it "
               "(same patterns as --allow-domain; repeatable)");
    add.option("-w,--writable-root", text.writable_roots,
               "A directory writable in workspace-write, besides the workspace (repeatable; refused under "
               "the other modes)");
    add.option("--read-only", text.read,
               "PATH stays readable but not writable: a read-only carve-out inside a writable root, or a "
               "path to read besides the platform set with --minimal (repeatable)");
    add.option("--deny", text.deny,
               "PATH can be neither read, listed nor written: a directory appears empty and unlistable, a "
               "file empty and unreadable (repeatable)");
    add.option("--deny-glob", text.deny_glob,
               "Deny every file matching PATTERN when the command starts (* ? [..] within a name, ** across "
               "directories; relative to the current directory); files created later are not hidden "
               "(repeatable)");
    add.flag("--minimal", text.minimal,
             "Read only the platform set (/usr /bin /sbin /lib /lib64 /etc), /dev, /proc and the writable "
             "and --read-only paths, instead of the whole filesystem");
    add.option("--workspace", text.workspace, "The workspace directory (default: the command's cwd)");
    add.flag("--exclude-slash-tmp", text.exclude_slash_tmp, "Do not make /tmp and /dev/shm writable");
    add.flag("--exclude-tmpdir-env-var", text.exclude_tmpdir, "Do not make $TMPDIR writable");
    add.option("--protect", args.flags.protect,
               "Keep NAME read-only at the top of every writable root, besides .git .sbx .codex .agents .aws "
               "(repeatable)");
    add.option("--unprotect", args.flags.unprotect, "Stop protecting NAME (repeatable)");
    add.flag("--git-write", text.git_write,
             "Let git commit in the workspace's repositories: objects, refs, logs, the index and HEAD "
             "writable; hooks and configuration stay read-only");
    add.flag("--allow-unprotected", text.allow_unprotected,
             "Where no mount namespace can be made, run with Landlock alone (protected paths and metadata "
             "changes are then not enforced) instead of refusing");
    add.option("--policy-file", args.policy_file,
               "Read the policy from a JSON file with the canonical policy's keys (any subset), or one that "
               "--policy-json takes; default $SBX_POLICY_FILE");
    add.option("--policy-json", args.policy_json,
               "The policy as JSON: canonical keys, Codex's SandboxPolicy ({\"type\":\"workspace-write\",...}), or "
               "Codex's permission profile ({\"type\":\"managed\",...}, \"disabled\", \"external\")");
    add.flag("--no-config", args.no_config,
             "Ignore the user's config ($XDG_CONFIG_HOME/sbx/config.json) and the workspace's project policy "
             "(.sbx/policy.json): only the flags, the policy file and the defaults");
    add.option("--limit-memory", text.memory, "Address-space limit per process, e.g. 512M, 2G");
    add.option("--limit-cpu", text.cpu, "CPU-time limit per process, in seconds");
    add.option("--limit-procs", text.procs, "Processes and threads of the whole sandbox");
    add.option("--limit-file-size", text.file_size, "Largest file the command may write, e.g. 100M");
    add.option("--limit-open-files", text.open_files, "Open-file limit per process");
}

// After parsing: turn the collected text into the typed PolicyInput.
void finish_policy(const PolicyText& text, PolicyArgs& args) {
    PolicyInput& in = args.flags;
    if (!text.mode.empty()) {
        in.mode = parse_mode(text.mode);
        if (!in.mode)
            throw Error(
                fmt::format("--policy: '{}' is not a mode (read-only, workspace-write, "
                            "danger-full-access, external-sandbox)",
                            text.mode));
    }
    if (!text.network.empty()) {
        in.network = parse_network(text.network);
        if (!in.network)
            throw Error(
                fmt::format("--network: '{}' is not a network level (restricted, limited, full)", text.network));
    }
    if (!text.workspace.empty()) in.workspace = PolicyInput::SourcedPath{text.workspace, "--workspace"};
    for (const auto& r : text.writable_roots) in.writable_roots.push_back({r, "--writable-root"});
    for (const auto& d : text.allow_domain) in.allow_domains.push_back({d, "--allow-domain"});
    for (const auto& d : text.deny_domain) in.deny_domains.push_back({d, "--deny-domain"});
    for (const auto& v : text.secret_env)
        in.secrets.push_back({parse_secret_flag(Secret::Kind::Env, v, "--secret-env"), "--secret-env " + v});
    for (const auto& v : text.secret_file)
        in.secrets.push_back({parse_secret_flag(Secret::Kind::File, v, "--secret-file"), "--secret-file " + v});
    for (const auto& t : text.tls_passthrough) in.tls_passthrough.push_back({t, "--tls-passthrough"});
    auto entries = [&](const std::vector<std::string>& paths, FsTarget::Kind kind, FsAccess access, const char* flag) {
        for (const auto& path : paths) {
            if (path.empty()) throw Error(fmt::format("{}: empty path", flag));
            in.extra_entries.push_back({{kind, path}, access, flag});
        }
    };
    entries(text.read, FsTarget::Kind::Path, FsAccess::Read, "--read-only");
    entries(text.deny, FsTarget::Kind::Path, FsAccess::Deny, "--deny");
    entries(text.deny_glob, FsTarget::Kind::Glob, FsAccess::Deny, "--deny-glob");
    if (text.minimal) in.read_base = ReadBase::Minimal;
    if (text.exclude_slash_tmp) in.exclude_slash_tmp = true;
    if (text.exclude_tmpdir) in.exclude_tmpdir_env_var = true;
    if (text.allow_unprotected) in.allow_unprotected = true;
    if (text.git_write) in.git_write = true;
    if (!text.memory.empty()) in.limits.memory = parse_size(text.memory, "--limit-memory");
    if (!text.cpu.empty()) in.limits.cpu_seconds = parse_count(text.cpu, "--limit-cpu");
    if (!text.procs.empty()) in.limits.processes = parse_count(text.procs, "--limit-procs");
    if (!text.file_size.empty()) in.limits.file_size = parse_size(text.file_size, "--limit-file-size");
    if (!text.open_files.empty()) in.limits.open_files = parse_count(text.open_files, "--limit-open-files");
}

std::string current_dir() { return system_environment().cwd; }

struct RunText {
    std::string cwd, timeout, max_bytes, max_lines, keep, stdin_mode = "inherit", target_os, approver_timeout;
    std::vector<std::string> env, unset_env;
    bool no_cap = false, cap_live = false, json = false, events = false, no_record_denials = false, tty = false,
         no_tty = false;
};

void add_run_options(CLI::App& run, const Wanted& wanted, RunArgs& args, RunText& text) {
    Adder add(run, wanted, "Run options");
    add.option("-C,--cwd", text.cwd, "Where the command runs (default: the current directory)");
    add.option("-t,--timeout", text.timeout,
               "Kill the command and everything it started after DURATION: 500ms, 10s, 2m, 1h; a bare "
               "number is seconds; 0 means none (exit 124)");
    add.option("--max-output-bytes", text.max_bytes, "Bytes kept per stream (default 10240; 0 = no cap)");
    add.option("--max-output-lines", text.max_lines, "Lines kept per stream (default 256; 0 = no cap)");
    add.flag("--no-output-cap", text.no_cap, "Keep all output (both caps 0)");
    add.option("--keep", text.keep,
               "head, tail or both (default): over the cap, keep the first part, the last, or the first "
               "half and the last half");
    add.flag("--cap-live", text.cap_live,
             "By default every byte the command writes reaches sbx's stdout and stderr as it arrives, and the "
             "caps bound only what sbx keeps (the JSON result, the end event, the approver's evidence, the "
             "denial notes); --cap-live caps the live output too, with a note on stderr of what was omitted");
    add.flag("--json", text.json, "Print nothing while running, then one JSON result object on stdout");
    add.flag("--events", text.events,
             "Print JSON Lines while running: begin, output, omitted (where the cap left output out), end (the "
             "result)");
    add.option("--env", text.env, "Set KEY=VALUE in the command's environment (repeatable)");
    add.option("--unset-env", text.unset_env, "Remove KEY from the command's environment (repeatable)");
    add.flag("--clear-env", args.command.clear_env,
             "Keep only PATH, HOME, USER, LANG, TERM and TMPDIR of sbx's environment");
    add.option("--stdin", text.stdin_mode, "inherit (default) or null");
    add.flag("--tty", text.tty,
             "Run the command on a new pseudo-terminal that sbx relays to its own terminal (the default for a "
             "sandboxed command when stdin and stdout are terminals, in text mode): needs stdin to be a terminal");
    add.flag("-T,--no-tty", text.no_tty,
             "Never a pseudo-terminal: the command gets sbx's stdin and pipes for its output");
    add.flag("--record-denials", args.command.record_denials,
             "Record each write (and, under -n restricted, each connect) the sandbox refuses, with its path or "
             "address, pid and program, into denials (Linux; costs each write-class file call a round trip; "
             "the default with -a on-failure, on-request or untrusted)");
    add.flag("--no-record-denials", text.no_record_denials,
             "Do not record denials where -a would (the denials are then a guess from the output)");
    add.option("--control-fd", args.control_fd,
               "With --allow-domain: read lines 'allow-domain PATTERN' and 'deny-domain PATTERN[=REASON]' "
               "from descriptor N while the command runs, each for the connections after it (sbx's own "
               "descriptor, never the command's)");
    add.flag("--explain", args.explain,
             "After the run, print the sbx run line whose flags would have allowed every recorded denial, and "
             "what no flag was suggested for (implies --record-denials)");
    add.flag("--dry-run", args.dry_run,
             "Print what would be executed as one JSON object {argv, env (the additions), cwd} and run "
             "nothing; with --escalate also escalation.if_approved {argv, env, cwd}");
    add.option("--target-os", text.target_os, "With --dry-run: show the plan for linux or macos");

    Adder approval(run, wanted, "Approval options");
    approval.option("-a,--ask-for-approval", args.approval.ask_for_approval,
                    "never (default), on-failure, on-request, untrusted");
    if (auto* o = approval.option("--reject", args.approval.reject,
                                  "Auto-reject these prompt kinds: sandbox, rules, network (comma-separated)"))
        o->delimiter(',');
    approval.option("--approver", args.approval.approver,
                    "Program that decides approvals: one JSON request on stdin, a decision on stdout");
    approval.option("--approver-timeout", text.approver_timeout,
                    "How long the --approver program may take per request: 500ms, 10s, 2m, 1h; a bare number "
                    "is seconds; 0 means no limit (default 30s; past it the program is killed and the answer "
                    "is denied)");
    approval.option("--session", args.approval.session,
                    "Keep approved_for_session decisions in $XDG_STATE_HOME/sbx/sessions/NAME.json");
    approval.option("--rules", args.approval.rules_files, "JSON prefix-rules file (repeatable)");
    approval.flag("--escalate", args.approval.escalate, "Ask to run this command without the sandbox");
    approval.option("--justification", args.approval.justification, "Why --escalate is needed (shown to the approver)");
}

// The recorder runs where its exact list is needed: --explain, and the
// approval flows, whose approver reads the denials (docs/performance.md: its
// cost on a file-heavy workload keeps it from being every run's default).
// Only Linux has it: macOS's --record-denials follows the log instead.
void record_denials_by_default(bool no_record_denials, RunArgs& args) {
    if (no_record_denials) {
        if (args.command.record_denials) throw Error("--record-denials and --no-record-denials: choose one");
        if (args.explain) throw Error("--explain needs the recorded denials: drop --no-record-denials");
        return;
    }
    const bool approval = args.approval.ask_for_approval != "never";
    if (args.explain || (approval && native_os() == TargetOs::Linux)) args.command.record_denials = true;
}

void finish_run(const RunText& text, RunArgs& args, std::vector<std::string> command) {
    // Numbers first: a bad value is an error whether or not a command follows.
    if (!text.timeout.empty()) {
        // As with timeout(1), a zero duration means no timeout.
        const auto timeout = parse_duration(text.timeout, "--timeout");
        if (timeout.count() > 0) args.timeout = timeout;
    }
    if (!text.max_bytes.empty()) args.caps.max_bytes = parse_count(text.max_bytes, "--max-output-bytes");
    if (!text.max_lines.empty()) args.caps.max_lines = parse_count(text.max_lines, "--max-output-lines");
    if (!text.approver_timeout.empty()) {
        args.approval.approver_timeout = parse_duration(text.approver_timeout, "--approver-timeout");
        if (!args.approval.approver)
            throw Error("--approver-timeout: only with --approver (the terminal prompt waits for its answer)");
    }
    if (!text.keep.empty()) {
        if (text.keep == "head") args.caps.keep = Keep::Head;
        else if (text.keep == "tail") args.caps.keep = Keep::Tail;
        else if (text.keep == "both") args.caps.keep = Keep::Both;
        else throw Error(fmt::format("--keep: '{}' is not head, tail or both", text.keep));
    }
    if (command.empty()) throw Error("run: no command given (usage: sbx run [OPTIONS] -- COMMAND [ARG...])");
    record_denials_by_default(text.no_record_denials, args);
    args.command.argv = std::move(command);
    std::string cwd = current_dir();
    if (!text.cwd.empty()) {
        auto real = system_environment().realpath(text.cwd.front() == '/' ? text.cwd : cwd + "/" + text.cwd);
        if (!real) throw Error(fmt::format("--cwd: {}: no such directory", text.cwd));
        if (::access(real->c_str(), X_OK) != 0)
            throw Error(fmt::format("--cwd: {}: not an accessible directory", text.cwd));
        cwd = *real;
    }
    args.command.cwd = cwd;
    if (text.no_cap) args.caps.max_bytes = args.caps.max_lines = 0;
    if (text.json && text.events) throw Error("--json and --events: choose one output format");
    if (text.cap_live && (text.json || text.events))
        throw Error(fmt::format("--cap-live: only in text mode ({})",
                                text.json ? "--json prints nothing while the command runs"
                                          : "the output events of --events are capped already"));
    args.cap_live = text.cap_live;
    args.format = text.json ? OutputFormat::Json : text.events ? OutputFormat::Events : OutputFormat::Text;
    for (const auto& kv : text.env) {
        auto eq = kv.find('=');
        if (eq == std::string::npos || eq == 0) throw Error(fmt::format("--env: '{}' is not KEY=VALUE", kv));
        args.command.set_env[kv.substr(0, eq)] = kv.substr(eq + 1);
    }
    for (const auto& k : text.unset_env) {
        if (k.empty() || k.find('=') != std::string::npos)
            throw Error(fmt::format("--unset-env: '{}' is not a variable name", k));
        args.command.unset_env.push_back(k);
    }
    if (text.stdin_mode == "inherit") args.command.stdin_mode = StdinMode::Inherit;
    else if (text.stdin_mode == "null") args.command.stdin_mode = StdinMode::Null;
    else throw Error(fmt::format("--stdin: '{}' is not inherit or null", text.stdin_mode));
    if (text.tty && text.no_tty) throw Error("--tty and --no-tty: choose one");
    if (text.tty && args.command.stdin_mode == StdinMode::Null)
        throw Error("--tty: the pseudo-terminal is the command's stdin; drop --stdin null, or --tty");
    args.tty = text.tty ? TtyMode::Always : text.no_tty ? TtyMode::Never : TtyMode::Auto;
    if (!text.target_os.empty()) {
        if (!args.dry_run) throw Error("--target-os: only with --dry-run (sbx runs the sandbox of the OS it is on)");
        if (text.target_os == "linux") args.target_os = TargetOs::Linux;
        else if (text.target_os == "macos") args.target_os = TargetOs::MacOs;
        else throw Error(fmt::format("--target-os: '{}' is not linux or macos", text.target_os));
    } else {
        args.target_os = native_os();
    }
    if (args.approval.justification && !args.approval.escalate) throw Error("--justification: only with --escalate");
}

// Collapses CLI11's message to one line.
std::string one_line(std::string s) {
    for (auto& c : s)
        if (c == '\n') c = ' ';
    while (!s.empty() && s.back() == ' ') s.pop_back();
    return s;
}

// The first word must be a command (or --help, --version); CLI11 would say
// only "A subcommand is required" or "arguments were not expected".
void check_command_word(const CLI::App& app, const std::vector<std::string>& words) {
    if (words.empty()) throw Error(fmt::format("no command given ({}); see sbx --help", kCommands));
    const std::string& first = words.front();
    if (first == "-h" || first == "--help" || first == "--version") return;
    auto is_command = [&app](const std::string& w) {
        try {
            return app.get_subcommand(w) != nullptr;
        } catch (const CLI::OptionNotFound&) {
            return false;
        }
    };
    if (is_command(first)) return;
    if (first.size() < 2 || first.front() != '-')
        throw Error(fmt::format("unknown command '{}' ({}); see sbx --help", first, kCommands));

    // An option before the command: name the command line that works.
    const std::string flag = first.substr(0, first[1] == '-' ? first.find('=') : 2);
    const auto command = std::find_if(words.begin(), words.end(), is_command);
    const CLI::App* owner = nullptr;
    for (const char* name : {"run", "learn", "policy", "check", "doctor", "trust"}) {
        const CLI::App* sub = app.get_subcommand(name);
        if ((command == words.end() || *command == name) && sub->get_option_no_throw(flag) != nullptr) {
            owner = sub;
            break;
        }
    }
    if (owner == nullptr)
        throw Error(fmt::format("{}: not an option of sbx nor of {}; see sbx --help", flag,
                                command == words.end() ? "any command" : "sbx " + *command));
    const std::string name = owner->get_name();
    std::vector<std::string> moved(words.begin(), command);
    throw Error(fmt::format("{}: options go after the command: sbx {} {}{}", flag, name, fmt::join(moved, " "),
                            name == "run" || name == "learn" ? " -- ..." : ""));
}

// sbx's words, with the command after the first "--" split off: CLI11
// hands "--" back to the parent app, so it cannot split it itself; without
// "--", prefix_command() collects the command.
struct Words {
    std::vector<std::string> sbx;
    std::vector<std::string> after_dashes;  // {""}: "--" with nothing after, caught later
};

Words split_at_dashes(int argc, char** argv) {
    Words w;
    w.sbx.assign(argv + 1, argv + argc);
    if (auto dd = std::find(w.sbx.begin(), w.sbx.end(), "--"); dd != w.sbx.end()) {
        w.after_dashes.assign(dd + 1, w.sbx.end());
        w.sbx.erase(dd, w.sbx.end());
        if (w.after_dashes.empty()) w.after_dashes.push_back("");
    }
    return w;
}

// Each command: its subcommand, and what CLI11 fills in for it.
struct RunCommand {
    CLI::App* app = nullptr;
    RunArgs args;
    PolicyText policy;
    RunText text;
};
struct PolicyCommand {
    CLI::App* app = nullptr;
    PolicyCommandArgs args;
    PolicyText policy;
};
struct CheckCommand {
    CLI::App* app = nullptr;
    CheckArgs args;
    PolicyText policy;
};
struct Commands {
    RunCommand run;
    RunCommand learn;  // sbx run's options, the run a learning one (finish_learn)
    PolicyCommand policy;
    CheckCommand check;
    CLI::App* doctor = nullptr;
    DoctorArgs doctor_args;
    CLI::App* trust = nullptr;
    TrustArgs trust_args;
};

void add_run_command(CLI::App& app, const Wanted& in_argv, RunCommand& c, const char* name, const char* about) {
    c.app = app.add_subcommand(name, about);
    add_policy_options(*c.app, in_argv, c.args.policy, c.policy);
    add_run_options(*c.app, in_argv, c.args, c.text);
    // Everything from the first word that is not an option of run is the command.
    c.app->prefix_command();
}

void add_policy_command(CLI::App& app, const Wanted& in_argv, PolicyCommand& c) {
    c.app = app.add_subcommand("policy", "Print the canonical policy (text, --json, or --seatbelt)");
    add_policy_options(*c.app, in_argv, c.args.policy, c.policy);
    Adder flags(*c.app, in_argv, "Options");
    flags.flag("--json", c.args.json, "Print the canonical JSON");
    flags.flag("--seatbelt", c.args.seatbelt, "Print the macOS Seatbelt profile it yields");
    flags.flag("--relative", c.args.relative,
               "Print it as a project policy for .sbx/policy.json: the canonical JSON with paths in the "
               "workspace relative to it, without the workspace and the derived keys");
    c.app->footer(kPolicyExitCodes);
}

void add_check_command(CLI::App& app, const Wanted& in_argv, CheckCommand& c) {
    c.app = app.add_subcommand(
        "check", "Answer, per query, whether the policy allows it and which rule decided (exit 1 if any denied)");
    auto query = [&](const char* flag, CheckQuery::Kind kind, const char* help) {
        if (!in_argv(flag)) return;
        c.app
            ->add_option_function<std::vector<std::string>>(
                flag,
                [&queries = c.args.queries, kind](const std::vector<std::string>& v) {
                    for (const auto& t : v) queries.push_back({kind, t});
                },
                help)
            ->trigger_on_parse()  // keep the queries in command-line order
            ->group("Queries");
    };
    add_policy_options(*c.app, in_argv, c.args.policy, c.policy);
    query("--read", CheckQuery::Kind::Read, "May the command read PATH?");
    query("--write", CheckQuery::Kind::Write, "May the command write PATH?");
    query("--exec", CheckQuery::Kind::Exec, "May the command execute PATH?");
    query("--connect", CheckQuery::Kind::Connect, "May the command connect to HOST:PORT?");
    Adder(*c.app, in_argv, "Options").flag("--json", c.args.json, "Print the answers as JSON");
    c.app->footer(kCheckExitCodes);
}

// sbx learn's own options (beside run's), left out of the line it prints:
// each name, and whether a value follows it.
constexpr std::array<std::pair<std::string_view, bool>, 3> kLearnOnly{
    {{"--reads", false}, {"--let-connect", false}, {"--write-policy", true}}};

std::vector<std::string> without_learn_options(const std::vector<std::string>& words) {
    std::vector<std::string> out;
    for (std::size_t i = 0; i < words.size(); ++i) {
        const std::string& w = words[i];
        const auto* o = std::find_if(kLearnOnly.begin(), kLearnOnly.end(), [&w](const auto& option) {
            return w == option.first || w.starts_with(std::string(option.first) + "=");
        });
        if (o == kLearnOnly.end()) out.push_back(w);
        else if (o->second && w == o->first) ++i;  // its value too
    }
    return out;
}

void add_learn_options(const Wanted& in_argv, RunCommand& c) {
    Adder add(*c.app, in_argv, "Learning options");
    add.flag(kLearnOnly[0].first.data(), c.args.command.learn_reads,
             "Also learn the files and programs the command reads: each one it opens or runs that the policy "
             "cannot read, for a policy that does not read every file (--minimal, or entries alone); stat, "
             "access and readlink are not recorded");
    add.flag(kLearnOnly[1].first.data(), c.args.command.let_connect,
             "Let a connection to a name the policy does not allow go through sbx's proxy (recorded), "
             "instead of refusing it (recorded too): for a command that needs what it downloads; the "
             "proxy still refuses the host's loopback and private addresses");
    add.option(kLearnOnly[2].first.data(), c.args.write_policy,
               "Also write the learned line's policy to FILE as a policy file (for sbx run --policy-file FILE); "
               "the workspace's .sbx/policy.json is written as its project policy, to read and then sbx trust");
}

// The subcommands, in the order of sbx --help.
void add_commands(CLI::App& app, const Wanted& in_argv, Commands& c) {
    add_run_command(app, in_argv, c.run, "run",
                    "Run COMMAND under the sandbox: sbx run [OPTIONS] [--] COMMAND [ARG...]");
    add_run_command(app, in_argv, c.learn, "learn",
                    "Run COMMAND once with every write in a throwaway layer and print the tightest sbx run line "
                    "that lets it work: sbx learn [OPTIONS] [--] COMMAND [ARG...]");
    add_learn_options(in_argv, c.learn);
    add_policy_command(app, in_argv, c.policy);
    add_check_command(app, in_argv, c.check);
    c.doctor =
        app.add_subcommand("doctor", "Report what this machine can enforce, proven by a live probe under each mode");
    Adder(*c.doctor, in_argv, "Options").flag("--json", c.doctor_args.json, "Print the report as JSON");
    c.doctor->footer(kDoctorExitCodes);
    c.trust = app.add_subcommand(
        "trust", "Trust a project policy's exact content, so that it may widen the sandbox: sbx trust [PATH]");
    c.trust->add_option("path", c.trust_args.path, "The project policy (default: .sbx/policy.json)");
    Adder(*c.trust, in_argv, "Options")
        .flag("--revoke", c.trust_args.revoke, "Stop trusting it: it may then only narrow the sandbox");
    c.trust->footer(kTrustExitCodes);
}

// CLI11's parse of sbx's words; the exit status where it printed the help
// or the version instead.
std::optional<int> parse_words(CLI::App& app, std::vector<std::string> words) {
    std::reverse(words.begin(), words.end());  // CLI11 parses a reversed vector
    try {
        app.parse(words);
    } catch (const CLI::CallForHelp& e) {
        return app.exit(e);
    } catch (const CLI::CallForAllHelp& e) {
        return app.exit(e);
    } catch (const CLI::CallForVersion& e) {
        return app.exit(e);
    } catch (const CLI::ParseError& e) {
        std::string where = app.get_subcommands().empty() ? "" : app.get_subcommands().front()->get_name() + " ";
        throw Error(fmt::format("{}; see 'sbx {}--help'", one_line(e.what()), where));
    }
    return std::nullopt;
}

// FILE made absolute (against sbx's cwd), where a file may be written:
// its directory exists and this user may write in it, and it is no
// directory itself.  Checked before anything runs.
std::string writable_file_path(const std::string& given, std::string_view what) {
    if (given.empty()) throw Error(fmt::format("{}: an empty path; give the file to write", what));
    const std::string path = join_path(current_dir(), given);
    const std::string dir = parent_path(path);
    struct stat st {};
    if (::stat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode))
        throw Error(fmt::format("{}: {}: no such directory {}; make it first", what, given, dir));
    if (::access(dir.c_str(), W_OK) != 0)
        throw Error(fmt::format("{}: {}: this user cannot write in {}: {}", what, given, dir, std::strerror(errno)));
    if (::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode))
        throw Error(fmt::format("{}: {} is a directory; give a file", what, given));
    return path;
}

// sbx learn: sbx run's options, the run a learning one (plan.h
// CommandSpec::learn), its denials recorded and explained as sbx run lines.
void finish_learn(const RunText& text, RunArgs& args) {
    if (native_os() != TargetOs::Linux)
        throw Error("learn: Linux only (its throwaway layer is an overlay in the helper's mount namespace)");
    if (args.approval.ask_for_approval != "never" || args.approval.escalate)
        throw Error(
            "learn: -a and --escalate: a learning run asks nobody and runs nothing outside its layer; "
            "drop them");
    if (text.no_record_denials) throw Error("learn: --no-record-denials: a learning run is a recording one");
    args.command.learn = args.explain = true;
    args.invocation.at(1) = "run";  // the line it prints is one of sbx run
    args.invocation = without_learn_options(args.invocation);
    if (args.write_policy) args.write_policy = writable_file_path(*args.write_policy, "learn: --write-policy");
}

int finish_and_run(RunCommand& c, const Words& words, const char* argv0) {
    const std::string name = c.app->get_name();
    std::vector<std::string> command = c.app->remaining();
    if (!words.after_dashes.empty()) {
        if (!command.empty())
            throw Error(fmt::format("{}: '{}' before '--' is not an option of {}; see 'sbx {} --help'", name,
                                    command.front(), name, name));
        command = words.after_dashes;
        if (command == std::vector<std::string>{""}) command.clear();
    }
    // sbx's own words: what precedes the command (given without "--", it ends the words).
    c.args.invocation.assign(1, argv0);
    c.args.invocation.insert(
        c.args.invocation.end(), words.sbx.begin(),
        words.sbx.end() - static_cast<std::ptrdiff_t>(words.after_dashes.empty() ? command.size() : 0));
    try {
        finish_policy(c.policy, c.args.policy);
        if (name == "learn") finish_learn(c.text, c.args);
        finish_run(c.text, c.args, command);
    } catch (const Error& e) {
        // One format asked for (both at once is itself the refusal).
        if (c.text.json != c.text.events) print_refusal_result(c.text.json, command, "", e.what());
        throw;
    }
    return run_command(c.args);
}

int finish_and_run(PolicyCommand& c) {
    finish_policy(c.policy, c.args.policy);
    if (int(c.args.json) + int(c.args.seatbelt) + int(c.args.relative) > 1)
        throw Error("--json, --seatbelt and --relative: choose one");
    return policy_command(c.args);
}

int finish_and_run(CheckCommand& c) {
    finish_policy(c.policy, c.args.policy);
    if (c.args.queries.empty()) throw Error("check: no query (give --read, --write, --exec or --connect)");
    return check_command(c.args);
}

// The command CLI11 found, its options finished, run.
int run_parsed(Commands& c, const Words& words, const char* argv0) {
    if (!words.after_dashes.empty() && !c.run.app->parsed() && !c.learn.app->parsed())
        throw Error("'--' is only for sbx run and sbx learn, before the command; see 'sbx --help'");
    if (c.run.app->parsed()) return finish_and_run(c.run, words, argv0);
    if (c.learn.app->parsed()) return finish_and_run(c.learn, words, argv0);
    if (c.policy.app->parsed()) return finish_and_run(c.policy);
    if (c.check.app->parsed()) return finish_and_run(c.check);
    if (c.trust->parsed()) return trust_command(c.trust_args);
    return doctor_command(c.doctor_args);
}

}  // namespace

int main(int argc, char** argv) {
    CLI::App app{
        "sbx runs one command under an OS sandbox described by a small policy, and reports what "
        "happened.",
        "sbx"};
    app.set_version_flag("--version", "sbx " SBX_VERSION);
    app.require_subcommand(1);
    app.footer(kExitCodes);
    app.formatter(std::make_shared<HelpFormatter>());  // subcommands inherit it

    const Words words = split_at_dashes(argc, argv);
    Commands commands;
    add_commands(app, Wanted(words.sbx), commands);
    check_command_word(app, words.sbx);
    if (const auto exit_status = parse_words(app, words.sbx)) return *exit_status;
    return run_parsed(commands, words, argv[0]);
}

PolicyArgs parse_policy_options(const std::vector<std::string>& words) {
    CLI::App app{"policy options"};
    PolicyArgs args;
    PolicyText text;
    add_policy_options(app, Wanted(words), args, text);
    std::vector<std::string> reversed(words.rbegin(), words.rend());  // CLI11 parses a reversed vector
    try {
        app.parse(reversed);
    } catch (const CLI::ParseError& e) {
        throw Error(one_line(e.what()));
    }
    finish_policy(text, args);
    return args;
}

bool relay_terminal(const RunArgs& args, TargetOs host, bool stdin_tty, bool stdout_tty) {
    if (args.tty == TtyMode::Never) return false;
    if (args.tty == TtyMode::Always) {
        if (host != TargetOs::Linux)
            throw Error(
                "--tty: the terminal relay is Linux-only; on macOS run without --tty (the command gets "
                "sbx's terminal as before)");
        if (!stdin_tty)
            throw Error(
                "--tty: stdin is not a terminal, and the pseudo-terminal would have nothing to relay; run "
                "without --tty, or from a terminal");
        return true;
    }
    return host == TargetOs::Linux && args.format == OutputFormat::Text &&
           args.command.stdin_mode == StdinMode::Inherit && stdin_tty && stdout_tty;
}

}  // namespace sbx::cli
