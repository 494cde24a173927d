// `sbx run`: resolve the policy, plan, then either print the plan (--dry-run)
// or run the command under the supervisor and report in the chosen format.
//
// One attempt = one run of the command, sandboxed or not; the approval flow
// (src/approval/orchestrator.h) strings attempts together around Runner::attempt.
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <optional>
#include <string>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "approval/orchestrator.h"
#include "cli/denial_watch.h"
#include "cli/hard_links.h"
#include "cli/options.h"
#include "cli/secrets_run.h"
#include "denial/analyze.h"
#include "denial/denial.h"
#include "denial/explain.h"
#include "denial/fix.h"
#include "denial/helper_status.h"
#include "denial/policy_delta.h"
#include "exec/process.h"
#include "exec/supervisor.h"
#include "net/proxy.h"
#include "platform/plan.h"
#include "platform/seatbelt.h"
#include "policy/config.h"
#include "report/report.h"
#include "util/fd.h"
#include "util/path.h"
#include "util/replace_file.h"
#include "util/shell_word.h"

namespace sbx::cli {

namespace {

// How much of each stream's end the denial heuristics look at.
constexpr std::size_t kDenialTail = 4096;

// sbx's own output goes through write_all (util/fd.h); its result is not
// checked: a closed stdout or stderr leaves nothing more to say.

std::string duration_text(std::chrono::milliseconds d) {
    if (d.count() % 1000 != 0) return fmt::format("{}ms", d.count());
    return fmt::format("{}s", d.count() / 1000);
}

// One run of the command, with what the denial analysis made of it.
struct Attempt {
    ExecPlan plan;
    ExecResult result;
    DenialAnalysis denial;
    bool sandboxed = false;                  // a sandbox was applied (plan.sandbox is not None)
    HelperStatus helper;                     // what the Linux helper reported on its --status-fd
    std::optional<Explanation> explanation;  // --explain, for a sandboxed attempt
};

// The policy of the run's policy sources with `added` applied as flags
// after the user's own (denial/policy_delta.h); throws Error.
CanonicalPolicy policy_with(const RunArgs& args, const PolicyDelta& added) {
    PolicyArgs with = args.policy;
    apply(added, with.flags);
    return resolve_policy_args(with, args.command.cwd).policy;
}

class Runner {
public:
    Runner(const RunArgs& args, CanonicalPolicy policy, const RunSecrets* secrets = nullptr)
        : args_(args), policy_(std::move(policy)), secrets_(secrets) {}

    const CanonicalPolicy& policy() const { return policy_; }
    // Network requests of the approval flow, for the attempts' proxies (none: not asked).
    void ask_network_with(approval::NetworkApprovals* network) { network_ = network; }
    // Whether the attempts relay a pseudo-terminal (relay_terminal).
    void relay_tty(bool on) { tty_ = on; }

    // The plan of this command under the policy (sandboxed) or without what
    // sbx could lift (approval::lifted_policy: the danger-full-access plan
    // of the same command, or for external-sandbox the full network).
    ExecPlan make_plan(bool sandboxed, TargetOs os) const {
        const CanonicalPolicy p = sandboxed ? policy_ : approval::lifted_policy(policy_);
        PlatformPaths paths;
        if (p.mode != Mode::DangerFullAccess && os == TargetOs::Linux) paths.linux_helper = helper();
        CommandSpec command = args_.command;
        command.private_terminal = tty_;  // the relay (only a sandboxed plan tells the helper)
        if (os == TargetOs::MacOs) {
            command.terminals = inherited_terminals();
            check_seatbelt_roots(p, system_environment());
        }
        return plan(p, command, os, paths);
    }

    // Runs the command once and analyses the outcome.
    Attempt attempt(bool sandboxed) {
        Attempt a;
        a.plan = make_plan(sandboxed, native_os());  // a macOS build runs sandbox-exec
        a.sandboxed = a.plan.sandbox != SandboxKind::None;
        // Started before the command, so no record is missed.
        std::optional<DenialWatch> watch;
        if (a.sandboxed) watch.emplace(args_.command.record_denials);
        EventChunkers chunkers;
        SuperviseOptions opt = supervise_options(a.plan, chunkers);
        AttemptSecrets secrets;  // outlives the proxy, which hands connections to its sbx-tls
        if (secrets_ && a.sandboxed) secrets_->apply(a.plan, opt, secrets);
        std::optional<net::AllowlistProxy> proxy;
        std::vector<net::ProxyDenial> let_through;  // a learning run's connections the policy refuses
        start_proxy(a.plan, proxy, opt, let_through, secrets_ ? secrets_->terminator(secrets) : net::Terminator{});
        a.result = supervise(a.plan, opt);
        std::vector<net::ProxyDenial> refused = proxy ? proxy->finish() : std::vector<net::ProxyDenial>{};
        // Let through by name and then refused by its address: the refusal is the record.
        for (auto& l : let_through)
            if (std::none_of(refused.begin(), refused.end(),
                             [&l](const net::ProxyDenial& r) { return r.host == l.host && r.port == l.port; }))
                refused.push_back(std::move(l));
        if (args_.format == OutputFormat::Events) chunkers.finish();
        a.helper = parse_helper_status(a.result.report);
        if (!sandbox_applied(a)) return a;
        if (a.helper.exec) note_exec_failure(*a.helper.exec, a.result);
        a.denial = analyze_attempt(a, watch ? &*watch : nullptr, refused);
        if (a.sandboxed && args_.explain) a.explanation = explain(a.denial);
        if (args_.format == OutputFormat::Text) write_all(STDERR_FILENO, text_notes(a));
        return a;
    }

    // --events: each stream's output cut at whole UTF-8 characters, and
    // what is left of it at the end.
    struct EventChunkers {
        Utf8Chunker streams[2];
        Utf8Chunker& of(Stream s) { return streams[s == Stream::Stdout ? 0 : 1]; }
        void finish() {
            for (Stream s : {Stream::Stdout, Stream::Stderr}) {
                const std::string rest = of(s).finish();
                if (!rest.empty()) write_all(STDOUT_FILENO, json_line(output_event(s, rest)));
            }
        }
    };

    // How the supervisor runs this plan: the timeout, the caps, the relay,
    // and the output in the chosen format (--events: the begin event now).
    SuperviseOptions supervise_options(const ExecPlan& plan, EventChunkers& chunkers) const {
        SuperviseOptions opt;
        opt.timeout = args_.timeout;
        opt.caps = args_.caps;
        if (plan.sandbox != SandboxKind::None) opt.tail_bytes = kDenialTail;
        opt.child_cleans_up = plan.sandbox == SandboxKind::Linux;
        // The relay by default only for the helper, which leads the
        // pseudo-terminal's session and runs the command in a process group
        // of its own below it; a command run without it would lead that
        // session itself, in a process group orphaned from any shell, where
        // ^Z stops nothing (and there is no sandbox to keep the terminal out
        // of).  --tty asks for it anyway.
        opt.tty = tty_ && (args_.tty == TtyMode::Always || plan.sandbox == SandboxKind::Linux);
        switch (args_.format) {
            case OutputFormat::Text:
                opt.passthrough = true;
                opt.cap_live = args_.cap_live;
                break;
            case OutputFormat::Json:
                opt.passthrough = false;
                opt.capture = true;
                break;
            case OutputFormat::Events:
                opt.passthrough = false;
                opt.capture = true;
                write_all(STDOUT_FILENO,
                          json_line(begin_event(args_.command.argv, args_.command.cwd, plan.sandbox, policy_)));
                opt.on_output = [&chunkers](Stream s, std::string_view data) {
                    const std::string text = chunkers.of(s).push(data);
                    return text.empty() ? std::string() : json_line(output_event(s, text));
                };
                opt.on_omitted = [](Stream s, std::uint64_t bytes, std::uint64_t lines) {
                    return json_line(omitted_event(s, bytes, lines));
                };
                break;
        }
        return opt;
    }

    // The allowlist proxy (--allow-domain, or a learning run's), where the
    // plan has one: it runs for as long as the command; its threads count
    // against --limit-procs (util/relay_threads.h).  A learning run's
    // connections to names the policy does not list go into let_through
    // when --let-connect lets them through (the proxy keeps those it refuses).
    void start_proxy(const ExecPlan& plan, std::optional<net::AllowlistProxy>& proxy, SuperviseOptions& opt,
                     std::vector<net::ProxyDenial>& let_through, net::Terminator terminate) const {
        if (plan.proxy_fd < 0) return;
        // --control-fd: a copy for this attempt's proxy (a retry reads on
        // from where it stopped, from the policy's rules again).
        Fd control(args_.control_fd >= 0 ? ::fcntl(args_.control_fd, F_DUPFD_CLOEXEC, 3) : -1);
        const net::DomainRules rules{policy_.allow_domains, policy_.deny_domains};
        net::AskHost ask;
        if (network_) ask = [n = network_](const std::string& host, std::uint16_t port) { return n->ask(host, port); };
        // Asked one at a time, and finish() joins the askers before the list is read.
        if (args_.command.learn && args_.command.let_connect)
            ask = [rules, &let_through](const std::string& host, std::uint16_t port) {
                Fix fix = fix_of(net::decide_host(rules, host, port));
                fix.rule += " (let through by sbx learn --let-connect)";
                let_through.push_back({host, port, std::move(fix)});
                return true;
            };
        proxy.emplace(rules, relay_cap(policy_.limits.processes), std::move(control), std::move(ask),
                      std::move(terminate));
        opt.proxy_channel = proxy->helper_channel();
    }

    // False when the sandbox could not be applied and nothing ran: sbx's
    // own failure (125), not a denial of something the command did; or the
    // host replaced a covered path and the helper killed the command
    // (linux-helper/host_watch.h).  The line on stderr says which.
    static bool sandbox_applied(const Attempt& a) {
        if (!a.helper.error || a.result.exit_code != 125) return true;
        const bool stopped = a.helper.error->starts_with("host watch: ");
        write_all(STDERR_FILENO,
                  fmt::format("sbx: {}: {}\n", stopped ? "the run was stopped" : "the sandbox could not be applied",
                              *a.helper.error));
        return false;
    }

    // The command could not be executed in the sandbox: said as the
    // supervisor says it without one, a line of the command's stderr.
    void note_exec_failure(const ExecFailure& failure, ExecResult& result) const {
        result.exec_error = describe_exec_failure(failure, &policy_, args_.command.cwd);
        const std::string line = "sbx: " + *result.exec_error + "\n";
        if (args_.format == OutputFormat::Text) write_all(STDERR_FILENO, line);
        if (args_.format == OutputFormat::Events)
            write_all(STDOUT_FILENO, json_line(output_event(Stream::Stderr, sanitize_utf8(line))));
        result.err.shown += line;
    }

    // The attempt's evidence (denial/analyze.h), each denial's rule and fix
    // against the command's cwd.
    DenialAnalysis analyze_attempt(const Attempt& a, DenialWatch* watch,
                                   const std::vector<net::ProxyDenial>& refused) const {
        const bool linux_helper = a.plan.sandbox == SandboxKind::Linux;
        Evidence e;
        e.outcome = a.result;
        e.sandboxed = a.sandboxed;
        e.helper = linux_helper ? &a.helper : nullptr;
        e.record_denials = args_.command.record_denials;
        if (watch)
            e.logged = watch->collect(a.result.exit_code != 0, a.result.pids, linux_helper ? helper() : std::string());
        for (const auto& r : refused) e.refused.push_back(proxy_refusal(r.host, r.port, r.fix));
        return analyze(e, policy_, command_environment());
    }

    // --explain: the line that would have allowed what was denied, each
    // change checked by resolving the policy sources with it applied.
    Explanation explain(const DenialAnalysis& denial) const {
        const Environment env = command_environment();
        const auto resolve_with = [this](const PolicyDelta& added) { return policy_with(args_, added); };
        return explain_run({args_.invocation, args_.command.argv, policy_, env, resolve_with, args_.command.learn},
                           denial);
    }

    // The machine's environment, from the command's cwd.
    Environment command_environment() const {
        Environment env = system_environment();
        env.cwd = args_.command.cwd;
        return env;
    }

    // Text mode's lines on stderr after an attempt (with --cap-live the
    // supervisor wrote where output was omitted): timeout, the likely denial
    // and the flag that would allow it.
    std::string text_notes(const Attempt& a) const {
        std::string notes;
        if (a.helper.not_enforced_reason)
            notes += fmt::format("sbx: note: {}; not enforced: {}\n", *a.helper.not_enforced_reason,
                                 fmt::join(a.helper.not_enforced, ", "));
        if (a.result.timed_out && args_.timeout)
            notes += fmt::format("sbx: timed out after {}: every process of the command was killed\n",
                                 duration_text(*args_.timeout));
        RunReport r;
        r.cwd = args_.command.cwd;
        r.policy = policy_;
        r.denial = a.denial;
        // A learning run's refusals were let through (into its throwaway layer).
        if (args_.command.learn && a.explanation) {
            notes += learning_text(args_.invocation, args_.command.argv, *a.explanation, a.denial.denials.size());
        } else {
            if (auto n = denial_note(r)) notes += *n;
            if (a.explanation) notes += explanation_text(*a.explanation, a.denial.denials.size());
        }
        if (a.result.survivors > 0)
            notes += fmt::format("sbx: warning: {} processes of the command could not be killed\n", a.result.survivors);
        // On a line of their own, even after output that ended mid-line.
        if (!notes.empty() && a.result.stderr_mid_line) notes = std::string(1, '\n') + notes;
        return notes;
    }

private:
    const std::string& helper() const {
        if (helper_.empty()) helper_ = find_linux_helper();
        return helper_;
    }

    const RunArgs& args_;
    CanonicalPolicy policy_;
    const RunSecrets* secrets_;  // the run's (none: the policy has no secret)
    approval::NetworkApprovals* network_ = nullptr;
    bool tty_ = false;
    mutable std::string helper_;
};

nlohmann::json plan_json(const ExecPlan& p) {
    nlohmann::json j{{"argv", p.argv}, {"env", p.env_add}, {"cwd", p.cwd}};
    if (!p.env_default.empty()) j["env_defaults"] = p.env_default;  // set where the environment lacks them
    return j;
}

// The plan under the policy, the writable roots a run would make first; with
// --escalate (on-request) also what runs if the escalation is approved, under
// "escalation" (a refused one runs nothing).
int dry_run(const Runner& runner, const RunArgs& args, const approval::ApprovalSettings& settings,
            const std::vector<std::string>& missing_roots) {
    nlohmann::json out = plan_json(runner.make_plan(true, args.target_os));
    if (!missing_roots.empty()) out["makes"] = missing_roots;
    if (settings.escalate) {
        if (approval::policy_has_liftable_sandbox(runner.policy()))
            out["escalation"] = nlohmann::json{{"if_approved", plan_json(runner.make_plan(false, args.target_os))},
                                               {"if_refused", "nothing runs (exit 125)"}};
        else
            out["escalation"] = nlohmann::json{{"note", fmt::format("--escalate has no effect: {}; the plan above runs",
                                                                    approval::nothing_to_lift(runner.policy()))}};
    }
    write_all(STDOUT_FILENO, out.dump(2) + "\n");
    return 0;
}

// What a prompt after this attempt tells the approver: its denials with
// their rules and fixes (only path and address ones: a signal's target is
// not a flag's business), and the end of its stderr.
std::vector<Denial> prompt_denials(const DenialAnalysis& d) {
    std::vector<Denial> out;
    std::copy_if(d.denials.begin(), d.denials.end(), std::back_inserter(out),
                 [](const Denial& x) { return !x.path.empty() || !x.address.empty(); });
    return out;
}

std::string prompt_stderr_tail(const ExecResult& r) {
    const std::string_view tail(r.err.tail);
    return sanitize_utf8(tail.substr(tail.size() - std::min(tail.size(), approval::kPromptStderrTail)));
}

// The end of a run: the result in the chosen format (text mode printed its
// notes after each attempt); sbx's exit status.
int report(const RunArgs& args, const RunReport& r) {
    if (args.format == OutputFormat::Json) write_all(STDOUT_FILENO, json_line(result_json(r)));
    if (args.format == OutputFormat::Events) write_all(STDOUT_FILENO, json_line(end_event(r)));
    return r.result.exit_code;
}

// Refused before anything ran: the one line, and for --json and --events
// the result all the same (nothing ran: sandbox and duration_ms null;
// `approval` says what was asked and who refused).
int report_refusal(const RunArgs& args, const approval::Orchestrated& o, RunReport& r) {
    write_all(STDERR_FILENO, fmt::format("sbx: {}\n", o.refusal_message.empty() ? "refused" : o.refusal_message));
    r.ran = false;
    r.result.exit_code = o.refused_exit.value_or(125);
    r.result.caps = args.caps;
    r.approval = o.approval;
    report(args, r);
    return r.result.exit_code;
}

// Text mode's line on a retry without the sandbox, run or refused.
void say_retry(const approval::Orchestrated& o, const CanonicalPolicy& policy) {
    const auto lifted = approval::lifted_restriction(policy);
    if (o.escalated && o.attempts > 1)
        write_all(STDERR_FILENO, fmt::format("sbx: ran the command again without {}, as approved\n", lifted));
    if (!o.retry_refusal.empty())
        write_all(STDERR_FILENO, fmt::format("sbx: not run again without {}: {}\n", lifted, o.retry_refusal));
}

// argv[0] as the command will find it: through the PATH it gets (sbx's, or
// --env's, or the default without one), from its cwd; absolute, symlinks
// resolved.  "" when nothing is found (the attempt then reports 127).
std::string program_path(const CommandSpec& c) {
    if (c.argv.empty()) return "";
    std::vector<std::string> env;
    const char* inherited = std::getenv("PATH");
    const bool unset = std::find(c.unset_env.begin(), c.unset_env.end(), "PATH") != c.unset_env.end();
    if (const auto set = c.set_env.find("PATH"); set != c.set_env.end()) env.push_back("PATH=" + set->second);
    else if (inherited != nullptr && !unset) env.push_back(std::string("PATH=") + inherited);
    return exec::find_program(c.argv[0], env, c.cwd).value_or("");
}

}  // namespace

// --control-fd N: a descriptor of the caller's, open for reading, 3 or more,
// and an allowlist for it to update; closed on exec at once, so that neither
// the helper nor the command ever holds it.  Throws Error otherwise.
void check_control_fd(int fd, const CanonicalPolicy& policy) {
    if (fd < 0) return;
    if (fd < 3)
        throw Error(fmt::format("--control-fd: {} is the command's stdin, stdout or stderr; give 3 or more", fd));
    const int flags = ::fcntl(fd, F_GETFL);
    if (flags < 0) throw Error(fmt::format("--control-fd: descriptor {} is not open; open it for sbx (3<FILE)", fd));
    if ((flags & O_ACCMODE) == O_WRONLY)
        throw Error(fmt::format("--control-fd: descriptor {} is open for writing only; open it for reading", fd));
    if (!policy.by_name()) throw Error("--control-fd: there is no allowlist to update; add --allow-domain");
    ::fcntl(fd, F_SETFD, FD_CLOEXEC);
}

void print_refusal_result(bool json, const std::vector<std::string>& command, const std::string& cwd,
                          const std::string& message) {
    RunReport r;
    r.command = command;
    r.cwd = cwd.empty() ? system_environment().cwd : cwd;
    r.ran = false;
    r.result.exit_code = 125;
    r.result.err.shown = "sbx: " + message + "\n";
    nlohmann::json result = result_json(r);
    result["policy"] = nullptr;  // none was resolved
    result["error"] = message;
    write_all(STDOUT_FILENO, json_line(json ? result : nlohmann::json{{"type", "end"}, {"result", result}}));
}

namespace {

// sbx learn's policy: one that sandboxes the files and reads them all (the
// learning view keeps the host's files readable, its denied paths hidden),
// or, with --reads, any other (each read it would refuse is recorded);
// --let-connect only where there are names to learn.
void refuse_unlearnable(const CanonicalPolicy& policy, const CommandSpec& command) {
    if (!policy.sandboxed_filesystem())
        throw Error(
            fmt::format("learn: -p {} sandboxes no files, so there is nothing to learn; give the policy to "
                        "learn from, -p workspace-write or -p read-only",
                        to_string(policy.mode)));
    if (!policy.reads_root() && !command.learn_reads)
        throw Error(
            "learn: this policy does not read the whole filesystem (--minimal, or entries alone); add --reads "
            "to record the files the command reads");
    if (command.let_connect && policy.network == Network::Full)
        throw Error(
            "learn: --let-connect: the network is full (the host's), so there is no name to let through; "
            "learn under -n restricted or an allowlist to learn the names");
}

// sbx learn --write-policy FILE: the policy of the line it printed, as a
// policy file (the canonical JSON without its derived keys, which a write
// entry sbx run makes first would contradict); the workspace's
// .sbx/policy.json as a project policy (`sbx policy --relative`'s form).
void write_learned_policy(const RunArgs& args, const std::string& file, const Explanation& e) {
    const CanonicalPolicy p = policy_with(args, e.change);
    const bool project = file == join_path(p.workspace, std::string(kProjectPolicyPath));
    nlohmann::json doc = project ? relative_json(p) : to_json(p);
    for (const char* key : {"readable", "writable", "denied"}) doc.erase(key);
    replace_file(file, doc.dump(2) + "\n", 0644, "learn: --write-policy");
    if (args.format != OutputFormat::Text) return;
    write_all(STDERR_FILENO,
              project ? fmt::format("sbx: learn: wrote {}, the project policy: read it, then "
                                    "'sbx trust' it to let it widen the sandbox\n",
                                    file)
                      : fmt::format("sbx: learn: wrote {}: sbx run --policy-file {} -- ...\n", file, shell_word(file)));
}

// The run; `reported` once the result (or the plan of --dry-run) is on its way out.
int run_and_report(const RunArgs& args, bool& reported) {
    const ResolvedPolicyArgs resolved = resolve_policy_args(args.policy, args.command.cwd);
    // Secrets: read and given their sentinels before anything runs; the
    // CA's files readable where the policy reads only its entries.
    std::optional<RunSecrets> secrets;
    if (!resolved.policy.secrets.empty()) secrets.emplace(resolved.policy);
    const bool ca_unreadable = secrets && !secrets->ca_dir().empty() && !resolved.policy.reads_root();
    Runner runner(args, ca_unreadable ? policy_with(args, {.read_only = {secrets->ca_dir()}}) : resolved.policy,
                  secrets ? &*secrets : nullptr);
    // Bad approval options (an unknown mode, a malformed rules file) are
    // refused before anything runs, --dry-run included.
    const approval::ApprovalSettings settings = approval::settings_from_args(args.approval);
    // A --deny or --read-only file with another name would be open through
    // that name: refused, as a policy the sandbox cannot enforce.
    refuse_linked_files(runner.policy());
    if (args.command.learn) refuse_unlearnable(runner.policy(), args.command);
    check_control_fd(args.control_fd, runner.policy());
    reported = args.dry_run;
    if (args.dry_run) return dry_run(runner, args, settings, resolved.missing_roots);
    runner.relay_tty(relay_terminal(args, native_os(), ::isatty(STDIN_FILENO) == 1, ::isatty(STDOUT_FILENO) == 1));
    if (!args.command.learn) make_missing_roots(resolved);  // a learning run changes nothing on the host
    const approval::ApprovalRequest request{args.command.argv, args.command.cwd, runner.policy(),
                                            settings.rules.empty() ? "" : program_path(args.command)};

    // The approval flow strings the attempts together: sandboxed first (or
    // unsandboxed after an approved escalation), maybe a retry without the
    // sandbox; `last` is the attempt whose result is reported.
    std::optional<Attempt> last;
    std::optional<Explanation> explanation;  // the last sandboxed attempt's
    std::optional<RunReport::FirstAttempt> first;
    // The store is read and the approver found before anything runs, neither
    // from a place the command may write; the network requests (while an
    // attempt runs) go to the same approver and store.
    const auto writable = approval::writable_roots_of(request.policy);
    const auto store = approval::open_session_store(settings.session, writable);
    const auto approver = approval::make_approver(settings, writable);
    approval::NetworkApprovals network(request, settings, *store, *approver);
    if (network.active()) runner.ask_network_with(&network);
    approval::Orchestrated o = approval::orchestrate(request, settings, *store, *approver, [&](bool sandboxed) {
        last = runner.attempt(sandboxed);
        if (last->explanation) explanation = last->explanation;
        if (!first)
            first = RunReport::FirstAttempt{last->result.exit_code, last->denial.sandbox_denied, last->denial.denials,
                                            prompt_stderr_tail(last->result)};
        return approval::AttemptOutcome{last->result, last->denial.sandbox_denied, prompt_denials(last->denial),
                                        prompt_stderr_tail(last->result)};
    });
    for (auto& e : network.take_entries()) o.approval.requests.push_back(std::move(e));
    for (auto& w : network.take_warnings()) o.warnings.push_back(std::move(w));
    for (const auto& w : o.warnings) write_all(STDERR_FILENO, fmt::format("sbx: warning: {}\n", w));
    RunReport r;
    r.command = args.command.argv;
    r.cwd = args.command.cwd;
    r.policy = runner.policy();
    if (o.refused_exit || !last) {
        reported = true;
        return report_refusal(args, o, r);
    }
    if (args.format == OutputFormat::Text) say_retry(o, runner.policy());

    r.sandbox = last->plan.sandbox;
    r.result = std::move(last->result);
    r.denial = std::move(last->denial);
    r.escalated = o.escalated;
    // Where no mount namespace can be made the helper refuses, or with
    // --allow-unprotected runs with Landlock and seccomp alone: it says what
    // that left out.
    r.not_enforced = last->helper.not_enforced;
    r.approval = o.approval;
    if (args.write_policy && explanation) write_learned_policy(args, *args.write_policy, *explanation);
    r.explanation = std::move(explanation);
    if (o.escalated && o.attempts > 1) r.first_attempt = std::move(first);
    reported = true;
    return report(args, r);
}

}  // namespace

int run_command(const RunArgs& args) {
    bool reported = false;
    try {
        return run_and_report(args, reported);
    } catch (const Error& e) {
        if (args.format != OutputFormat::Text && !reported)
            print_refusal_result(args.format == OutputFormat::Json, args.command.argv, args.command.cwd, e.what());
        throw;
    }
}

}  // namespace sbx::cli
