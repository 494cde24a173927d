// codex-linux-sandbox: applies the sandbox to itself, then execs the command.
//
// Its command line: args.h (Codex 0.169's, CODEX-HELPER.md section 2, and the
// older forms).  run() below reads top to bottom: the arguments, the policy,
// the plan (helper_plan.h: what the helper will do, decided before it does
// anything), then the order of SPEC section 5: rlimits, namespaces and the
// filesystem view (pid 1's setup, the Sandbox below), capabilities,
// no_new_privs, Landlock, seccomp (the command's layers, layers.h), exec.
// Exit 125 with one line when the arguments are wrong or the sandbox cannot
// be applied; 126/127 when the command cannot be executed or is not found;
// otherwise the command's own status.
#include <linux/close_range.h>
#include <unistd.h>

#include <climits>
#include <cstdint>
#include <cstdlib>
#include <optional>
#include <string>
#include <vector>

#include "args.h"
#include "cgroup.h"
#include "file_mask.h"
#include "helper_plan.h"
#include "host_watch.h"
#include "inherited_fds.h"
#include "landlock.h"
#include "layers.h"
#include "learn_view.h"
#include "managed_network.h"
#include "mounts.h"
#include "namespaces.h"
#include "net/domain.h"
#include "network.h"
#include "placeholders.h"
#include "platform/container.h"
#include "policy/policy.h"
#include "process.h"
#include "recorder.h"
#include "rlimits.h"
#include "sbx_config.h"
#include "step_error.h"
#include "transparent.h"
#include "util/apparmor_userns.h"
#include "util/relay_threads.h"

namespace sbx::helper {
namespace {

std::string absolute(std::string path) {
    if (!path.empty() && path[0] == '/') return path;
    char cwd[PATH_MAX];
    if (::getcwd(cwd, sizeof cwd) == nullptr) fail_errno("arguments", "getcwd");
    std::string result(cwd);
    if (result != "/") result += '/';
    return result + path;
}

// Where --command-cwd DIR starts the command: DIR's real path, as in Codex's
// helper; where a symlink on the way was resolved, PWD names the real path,
// as there (otherwise PWD stays as the caller set it); DIR as given when it
// does not resolve (chdir then says why).
std::string command_directory(const std::string& dir) {
    const std::string path = absolute(dir);
    char real[PATH_MAX];
    if (::realpath(path.c_str(), real) == nullptr || path == real) return path;
    if (::setenv("PWD", real, 1) != 0) fail_errno("cwd", "setenv PWD");
    return real;
}

// The policy from --permission-profile or --sandbox-policy, resolved here.
CanonicalPolicy read_policy(const Args& args, Environment env) {
    // A relative --sandbox-policy-cwd: Codex resolves nothing against it (the
    // profile drops such entries); sbx's policies take it from the current
    // directory, as before.
    env.cwd = absolute(args.policy_cwd);
    if (args.profile_json)
        return resolve(input_from_permission_profile(*args.profile_json, args.policy_cwd, "--permission-profile"), env);
    return parse_sandbox_policy_text(*args.policy_json, "--sandbox-policy", env);
}

// What plan_helper reads of this host.
HelperHost this_host() {
    HelperHost host;
    for (char** e = environ; *e != nullptr; ++e) host.environment.emplace_back(*e);
    host.landlock_scopes_signals = landlock_scopes_signals();
    host.root = ::geteuid() == 0;
    return host;
}

// What serves the sandbox from outside its layers.
struct Services {
    std::optional<ProxyBridge> bridge;          // --managed-network: to Codex's proxy (managed_network.h)
    std::optional<TransparentTcp> transparent;  // --transparent-tcp: pid 1's resolver (transparent.h)
    std::optional<Recorder> recorder;           // --record-*: pid 1's seccomp listener (recorder.h)
};

// What the view covers by a mount: every denied path, and the protected
// paths and placeholders inside the writable roots (host_watch.h).
std::vector<std::string> covered_paths(const CanonicalPolicy& policy, const ProtectedPaths& protect) {
    std::vector<std::string> paths = policy.denied;
    for (const auto& entry : protect.entries()) paths.push_back(entry.path);
    return paths;
}

// One sandbox under a pid 1 of the helper's (process.h): what the helper
// holds for it on the host (the pids cgroup, the placeholders of the
// protected paths, the watch on what the view covers, the output relays),
// and what each process does for it (Pid1Hooks).  Its members go in the
// reverse order of their making.
class Sandbox {
public:
    Sandbox(const HelperPlan& plan, Services& services, const std::string& cwd)
        : plan_(plan),
          services_(services),
          cwd_(cwd),
          uid_(::geteuid()),
          gid_(::getegid()),
          masks_(read_file_masks(plan.mask_files)) {
        // The process count: a pids cgroup for root, RLIMIT_NPROC in the
        // user namespace for everyone else (rlimits.h, cgroup.h).
        if (plan.pids_cgroup) pids_.emplace(*plan.policy.limits.processes);
        if (plan.filesystem && !plan.learn) protect_.emplace(plan.policy);
        // Once the placeholders exist, before pid 1 covers anything.
        if (protect_) host_watch_.emplace(covered_paths(plan.policy, *protect_));
        relays_.emplace(plan.filesystem);
    }

    // In pid 1, in the new namespaces: the ids, the process count, the
    // filesystem view, /proc, the network's loopback and listeners.
    void setup(bool user) {
        const std::optional<std::uint64_t> processes = plan_.policy.limits.processes;
        if (pids_) pids_->enter();
        if (user) map_ids(uid_, gid_);
        if (user && processes && !pids_) limit_processes_in_user_namespace(*processes);
        if (plan_.learn) {
            build_learning_view(plan_.policy, uid_ == 0);
        } else if (plan_.filesystem) {
            git_views_ = build_filesystem_view(plan_.policy, *protect_);
        } else {
            make_mounts_private();
        }
        mount_namespace_filesystems(plan_.filesystem, !plan_.no_proc);
        if (plan_.limited) bring_up_loopback();
        if (services_.transparent) {
            services_.transparent->bind_resolver();
            TransparentTcp::install_resolv_conf();
        }
        install_masks(masks_, plan_.policy);
        if (plan_.proxy_fd) hand_out_proxy_listener(*plan_.proxy_fd, net::kProxyPort);
        if (services_.bridge) hand_out_bridge_listeners(services_.bridge->sandbox_channel(), services_.bridge->ports());
    }

    // In the command's process: its output to the relays, then its layers.
    Fd prepare() {
        relays_->attach();
        return apply_process_layers(plan_.learn ? learning_layers(plan_.policy) : plan_.policy, cwd_, plan_.layers);
    }

    // In the helper, once pid 1 exists.
    void forked(pid_t pid1) {
        if (host_watch_) host_watch_->start(pid1);
        if (services_.bridge) services_.bridge->start();
    }

    // In pid 1, once the command has ended and every other process of the
    // sandbox is gone (Command::ended, with --git-write): the git views
    // written back.
    void write_back() {
        for (const auto& view : git_views_) view.write_back();
    }

    // In pid 1, should the helper be killed: the git views and its
    // placeholders all the same.
    void abandoned() {
        write_back();
        if (protect_) protect_->remove_placeholders(true);
    }

    // In the helper, once the sandbox is gone: its end, then the helper ends
    // as the command did.
    [[noreturn]] void end(int wait_status) {
        services_.bridge.reset();  // the sandbox is gone: so are its connections
        // The watch ends while this run still holds its placeholders'
        // directories (LOCK_SH): removing them converts that lock, which
        // flock(2) does by dropping it first, so another run could then
        // remove and remake a shared placeholder, an event that is no
        // change of this run's view.  It throws when the host uncovered a
        // path meanwhile; the placeholders go all the same (~protect).
        if (host_watch_) host_watch_->finish();
        protect_.reset();  // then the placeholders (soon: at sbx's timeout the grace is short)
        pids_.reset();
        exit_like(wait_status);
    }

    OutputRelays& relays() { return *relays_; }

private:
    const HelperPlan& plan_;
    Services& services_;
    const std::string& cwd_;
    const uid_t uid_;
    const gid_t gid_;
    std::optional<PidsCgroup> pids_;
    std::optional<ProtectedPaths> protect_;
    std::optional<HostWatch> host_watch_;
    std::optional<OutputRelays> relays_;
    std::vector<GitView> git_views_;     // in pid 1: those of --git-write, written back at the end
    const std::vector<FileMask> masks_;  // --mask-file's contents, read on the host at once
};

// The sandbox in namespaces of its own, under a pid 1 of the helper's: ends
// the helper as the command ended.  Returns (having started nothing) only
// when user namespaces are unavailable.
void run_in_namespaces(const HelperPlan& plan, Services& services, Command& command, const std::string& cwd) {
    Sandbox sandbox(plan, services, cwd);
    if (plan.policy.git_write) command.ended = [&sandbox] { sandbox.write_back(); };
    const Pid1Hooks hooks{
        .setup = [&](bool user) { sandbox.setup(user); },
        .prepare = [&] { return sandbox.prepare(); },
        .abandoned = [&] { sandbox.abandoned(); },
        .forked = [&](pid_t pid1) { sandbox.forked(pid1); },
    };
    const std::optional<int> ended =
        run_under_pid1({.mount = true, .pid = true, .net = plan.limited}, hooks, sandbox.relays(), command);
    if (ended) sandbox.end(*ended);
}

// Without user namespaces: a refusal of what needs them, or (with
// --allow-unprotected) a note of what is not enforced.
void without_user_namespaces(const HelperPlan& plan, const Status& status) {
    const CanonicalPolicy& policy = plan.policy;
    // Ubuntu's AppArmor restriction: its profile for the helper first,
    // the sysctl that lifts it for every program last (apparmor_userns.h).
    const std::string fix_userns = apparmor::userns_fix_for_this_helper(
        SBX_APPARMOR_PROFILE, false, container::sign(container::detect(container::read_facts())));
    if (policy.limits.processes)
        fail("namespaces",
             "user namespaces are unavailable, so --limit-procs would count every process of this user on "
             "the machine instead of the sandbox's",
             fix_userns + ", or drop --limit-procs");
    if (plan.limited)
        fail("namespaces", "user namespaces are unavailable, so network 'limited' has no network namespace",
             fix_userns + ", or use --network restricted");
    if (plan.learn)
        fail("namespaces", "user namespaces are unavailable, so a learning run has no throwaway layer for its writes",
             fix_userns);
    if (!plan.mask_files.empty())
        fail("namespaces", "user namespaces are unavailable, so a masked file cannot be shown in place of the real one",
             fix_userns);
    if (!plan.filesystem) {  // external-sandbox below Landlock ABI 6
        const std::string not_scoped =
            "Landlock below ABI 6 cannot scope signals and user namespaces are unavailable for a pid namespace";
        if (!policy.allow_unprotected)
            fail("namespaces",
                 not_scoped +
                     ", so the command could signal sbx (kill it and outlive the timeout) and every "
                     "process of this user",
                 "use Linux 6.12 or later (Landlock ABI 6), " + fix_userns +
                     ", or pass --allow-unprotected to run without the signal scope");
        status.not_enforced(not_scoped, {"signal scope (the command can signal processes outside the sandbox)"});
        return;
    }
    if (!policy.allow_unprotected)
        fail("namespaces",
             "user namespaces are unavailable, so protected paths and metadata changes (chmod, chown, "
             "utimes, xattrs) outside the writable roots cannot be enforced",
             fix_userns + ", or pass --allow-unprotected to run with Landlock and seccomp alone");
    refuse_landlock_alone(policy);  // before the note: one line
    std::vector<std::string> missing{"protected paths", "hidden Codex sockets",
                                     "metadata changes outside the writable roots (chmod, chown, utimes, xattrs)"};
    if (plan.record) missing.emplace_back("recorded denials (--record-denials needs the sandbox's pid 1)");
    status.not_enforced("no user namespace: running with Landlock and seccomp alone", missing);
}

// The order of SPEC section 5: the policy and its plan, rlimits, namespaces
// and the filesystem view (pid 1's setup), capabilities, no_new_privs,
// Landlock, seccomp (the command's layers), exec.
[[noreturn]] void run(int argc, char** argv, Status& status) {
    // Nothing the helper inherited beyond stdin, stdout and stderr reaches the
    // command: an open socket of the host's network namespace, say, would
    // carry the host's network past every layer below.
    if (::close_range(3, ~0U, CLOSE_RANGE_CLOEXEC) != 0) fail_errno("fds", "close_range", "run on Linux 5.11 or later");
    const Args args = parse_args(argc, argv);
    if (args.status_fd) status.use_fd(*args.status_fd);
    Command command{args.command, status, nullptr, false, nullptr, {}};
    CanonicalPolicy policy = read_policy(args, system_environment());
    const std::string command_cwd = args.command_cwd ? command_directory(*args.command_cwd) : absolute(".");
    const HelperPlan plan = plan_helper(args, std::move(policy), this_host());

    Services services;
    if (plan.bridged_ports) services.bridge.emplace(*plan.bridged_ports, relay_cap(plan.policy.limits.processes));
    if (plan.socks_port) {
        services.transparent.emplace().socks_port = *plan.socks_port;
        command.transparent = &*services.transparent;
    }
    command.host_unix_sockets = plan.host_unix_sockets;
    if (plan.unsandboxed) {
        // Nothing to apply: the policy asks for no sandbox (sbx execs these itself).
        if (::chdir(command_cwd.c_str()) != 0)
            fail_errno("cwd", "chdir " + command_cwd, "pass an existing --command-cwd");
        exec_command(command);
    }

    apply_rlimits(plan.policy.limits);
    if (plan.layers.watch != Watch::None)
        command.recorder =
            &services.recorder.emplace(plan.policy, status, plan.layers.watch >= Watch::Everything, plan.learn);
    if (plan.pid1) {
        run_in_namespaces(plan, services, command, command_cwd);
        without_user_namespaces(plan, status);
    }

    // No pid 1 of our own: the layers go on this process, which becomes the command.
    Fd listener = apply_process_layers(plan.policy, command_cwd, ProcessLayers{});
    if (listener.valid())
        fail("seccomp", "a user-notification filter needs pid 1 to serve it", "use --network restricted");
    exec_command(command);
}

}  // namespace
}  // namespace sbx::helper

int main(int argc, char** argv) {
    sbx::helper::Status status;
    try {
        sbx::helper::run(argc, argv, status);
    } catch (const std::exception& e) {
        status.error(e);
        return 125;
    }
}
