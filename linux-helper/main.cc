// codex-linux-sandbox: applies the sandbox to itself, then execs the command.
//
//   codex-linux-sandbox --sandbox-policy-cwd DIR [--command-cwd DIR] --permission-profile JSON
//                       [--use-legacy-landlock] [--managed-network JSON [--transparent-tcp]] [--no-proc]
//                       [--inherit-pid-namespace] [--] CMD...
//   codex-linux-sandbox --sandbox-policy-cwd DIR [--command-cwd DIR] --sandbox-policy JSON [--] CMD...
//   codex-linux-sandbox DIR JSON -- CMD...
//
// The first is Codex 0.169's (CODEX-HELPER.md section 2), the others the
// older forms.  Order (SPEC section 5): policy, rlimits, namespaces,
// filesystem view, capabilities, no_new_privs, Landlock, seccomp, exec.
// Exit 125 with one line when the arguments are wrong or the sandbox cannot
// be applied; 126/127 when the command cannot be executed or is not found;
// otherwise the command's own status.
#include <linux/close_range.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <climits>
#include <cstdint>
#include <cstdlib>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "caps.h"
#include "cgroup.h"
#include "host_watch.h"
#include "inherited_fds.h"
#include "landlock.h"
#include "managed_network.h"
#include "mounts.h"
#include "namespaces.h"
#include "net/domain.h"
#include "network.h"
#include "platform/container.h"
#include "policy/policy.h"
#include "process.h"
#include "recorder.h"
#include "rlimits.h"
#include "sbx_config.h"
#include "seccomp.h"
#include "step_error.h"
#include "transparent.h"
#include "util/apparmor_userns.h"
#include "util/landlock_abi.h"
#include "util/path.h"
#include "wire/helper_wire.h"

namespace sbx::helper {
namespace {

namespace option = wire::option;

constexpr const char* kUsage =
    "usage: codex-linux-sandbox --sandbox-policy-cwd DIR [--command-cwd DIR] "
    "(--permission-profile JSON | --sandbox-policy JSON) [--no-proc] [--] CMD...";

constexpr const char* kHelp =
    "usage: codex-linux-sandbox --sandbox-policy-cwd DIR [--command-cwd DIR]\n"
    "                           --permission-profile JSON [--use-legacy-landlock]\n"
    "                           [--managed-network JSON [--transparent-tcp]] [--no-proc]\n"
    "                           [--inherit-pid-namespace] [--status-fd N]\n"
    "                           [--private-terminal]\n"
    "                           [--] CMD [ARG...]\n"
    "       codex-linux-sandbox --sandbox-policy-cwd DIR [--command-cwd DIR]\n"
    "                           --sandbox-policy JSON [--no-proc] [--] CMD [ARG...]\n"
    "       codex-linux-sandbox DIR JSON -- CMD [ARG...]\n"
    "\n"
    "Applies the sandbox the policy describes to itself, then runs CMD.\n"
    "\n"
    "  --sandbox-policy-cwd DIR      the base of :project_roots entries, relative globs\n"
    "                                and relative paths (the workspace)\n"
    "  --command-cwd DIR             the directory CMD starts in, by its real path (PWD\n"
    "                                names it where DIR has a symlink; default: the\n"
    "                                current directory)\n"
    "  --permission-profile JSON     Codex's permission profile (Codex 0.169 and later)\n"
    "  --sandbox-policy JSON         sbx's canonical policy, or Codex's older SandboxPolicy\n"
    "  --use-legacy-landlock         accepted; the sandbox is the same without it\n"
    "  --managed-network JSON        Codex's proxy-only network: a private network whose\n"
    "                                127.0.0.1:PORT, for each of loopbackPorts, reaches\n"
    "                                the host's 127.0.0.1:PORT (Codex's proxy) and nothing\n"
    "                                else; needs HTTP_PROXY or the like set to one of them\n"
    "  --transparent-tcp             with --managed-network (or --proxy-fd): TCP to any\n"
    "                                address goes through the proxy's SOCKS5 listener\n"
    "                                (ALL_PROXY=socks5h://127.0.0.1:PORT), names through\n"
    "                                the sandbox's resolver on 127.0.0.53\n"
    "  --no-proc                     no fresh /proc: /proc is an empty read-only directory\n"
    "  --inherit-pid-namespace       accepted; the sandbox keeps a pid namespace of its own\n"
    "  --status-fd N                 report failures as JSON lines on descriptor N, not on\n"
    "                                stderr (see codex-linux-sandbox(1))\n"
    "  --record-denials              report each write the sandbox refuses (and each\n"
    "                                connect it refuses) as a status line\n"
    "  --record-network              report each connect the sandbox refuses, with its\n"
    "                                destination: under network restricted every connect\n"
    "                                or send (refused at once), under limited one that\n"
    "                                leaves the sandbox's loopback\n"
    "  --private-terminal            the controlling terminal, and any terminal on\n"
    "                                stdin, stdout or stderr, is one the caller made\n"
    "                                for this sandbox alone (sbx's pty relay): the\n"
    "                                command may resize it (TIOCSWINSZ)\n"
    "  --proxy-fd N                  with allow_domains (network limited): send the\n"
    "                                listening socket of 127.0.0.1:3128 in the sandbox's\n"
    "                                network to sbx's allowlist proxy on socket N\n"
    "  -h, --help                    this text\n"
    "\n"
    "Options may be written --option=VALUE; each may be given once.  Exit status:\n"
    "the command's own, 125 when the arguments are wrong or the sandbox cannot be\n"
    "applied, 126/127 when CMD cannot be executed or is not found.\n";

struct Args {
    std::string policy_cwd;  // as given (the permission profile keeps a relative one relative)
    std::optional<std::string> command_cwd;
    std::optional<std::string> policy_json;   // --sandbox-policy, or the older positional form
    std::optional<std::string> profile_json;  // --permission-profile
    bool no_proc = false;
    std::optional<int> status_fd;                   // --status-fd
    std::optional<int> proxy_fd;                    // --proxy-fd (sbx's allowlist proxy, network.h)
    bool record_denials = false;                    // --record-denials (recorder.h)
    bool record_network = false;                    // --record-network (recorder.h)
    std::optional<ManagedNetwork> managed_network;  // --managed-network (managed_network.h)
    bool transparent_tcp = false;                   // --transparent-tcp (transparent.h)
    bool private_terminal = false;                  // --private-terminal (inherited_fds.h)
    char** command = nullptr;                       // argv-style, null-terminated
};

std::string absolute(std::string path) {
    if (!path.empty() && path[0] == '/') return path;
    char cwd[PATH_MAX];
    if (::getcwd(cwd, sizeof cwd) == nullptr) fail_errno("arguments", "getcwd");
    std::string result(cwd);
    if (result != "/") result += '/';
    return result + path;
}

[[noreturn]] void usage_error(const std::string& reason) { fail("arguments", reason, kUsage); }

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

// A descriptor number: digits only, 3 or more (0, 1 and 2 are the command's).
int descriptor(const std::string& text, std::string_view option) {
    int fd = 0;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), fd);
    if (text.empty() || ec != std::errc() || end != text.data() + text.size() || fd < 3)
        usage_error(std::string(option) + ": '" + text + "' is not a descriptor number of 3 or more");
    return fd;
}

// The options of CODEX-HELPER.md section 2, and what each does here.
enum class Opt {
    PolicyCwd,
    CommandCwd,
    PermissionProfile,
    SandboxPolicy,
    ManagedNetwork,
    TransparentTcp,
    LegacyLandlock,
    NoProc,
    InheritPid,
    StatusFd,
    ProxyFd,
    RecordDenials,
    RecordNetwork,
    PrivateTerminal,
    Help,
    InnerStage,
};
struct OptionSpec {
    std::string_view name;
    Opt opt;
    bool value;
};
constexpr OptionSpec kOptions[] = {
    {option::kPolicyCwd, Opt::PolicyCwd, true},
    {option::kCommandCwd, Opt::CommandCwd, true},
    {option::kPermissionProfile, Opt::PermissionProfile, true},
    {option::kSandboxPolicy, Opt::SandboxPolicy, true},
    {option::kManagedNetwork, Opt::ManagedNetwork, true},
    {option::kTransparentTcp, Opt::TransparentTcp, false},
    {option::kLegacyLandlock, Opt::LegacyLandlock, false},
    {option::kNoProc, Opt::NoProc, false},
    {option::kInheritPidNamespace, Opt::InheritPid, false},
    {option::kStatusFd, Opt::StatusFd, true},
    {option::kRecordDenials, Opt::RecordDenials, false},
    {option::kRecordNetwork, Opt::RecordNetwork, false},
    {option::kProxyFd, Opt::ProxyFd, true},
    {option::kPrivateTerminal, Opt::PrivateTerminal, false},
    {"--help", Opt::Help, false},
    {"-h", Opt::Help, false},
    // Codex's helper runs itself again inside its sandbox with these.
    {"--apply-seccomp-then-exec", Opt::InnerStage, false},
    {"--proxy-route-spec", Opt::InnerStage, true},
    {"--verify-fd-mount", Opt::InnerStage, true},
};

// Options in any order, "--flag value" or "--flag=value", each at most once;
// "--" or the first argument that is not an option starts the command.  The
// older form takes two positional arguments, DIR and JSON, first.
Args parse_args(int argc, char** argv) {
    Args args;
    std::optional<std::string> cwd;
    std::vector<std::string_view> seen;
    int i = 1;
    if (argc > 2 && argv[1][0] != '-') {
        // The older form: DIR JSON first.
        cwd = argv[1];
        args.policy_json = argv[2];
        i = 3;
    }
    for (; i < argc; ++i) {
        const std::string_view arg = argv[i];
        if (arg == "--") {
            ++i;
            break;
        }
        if (arg.size() < 2 || arg[0] != '-') break;  // the command, without a "--"
        const std::string_view name = arg.substr(0, arg.find('='));
        const OptionSpec* spec = nullptr;
        for (const auto& o : kOptions)
            if (o.name == name) spec = &o;
        if (spec == nullptr) usage_error("unknown option '" + std::string(name) + "'");
        std::optional<std::string> value;
        if (name.size() < arg.size()) {
            if (!spec->value) usage_error(std::string(name) + " takes no value");
            value = std::string(arg.substr(name.size() + 1));
        } else if (spec->value) {
            if (i + 1 >= argc) usage_error(std::string(name) + " needs a value");
            value = std::string(argv[++i]);
        }
        if (std::find(seen.begin(), seen.end(), spec->name) != seen.end() || (spec->opt == Opt::PolicyCwd && cwd) ||
            (spec->opt == Opt::SandboxPolicy && args.policy_json))
            usage_error(std::string(name) + " given more than once");
        seen.push_back(spec->name);
        switch (spec->opt) {
            case Opt::PolicyCwd: cwd = value; break;
            case Opt::CommandCwd: args.command_cwd = value; break;
            case Opt::PermissionProfile: args.profile_json = value; break;
            case Opt::SandboxPolicy: args.policy_json = value; break;
            case Opt::NoProc: args.no_proc = true; break;
            // One pipeline here: with or without it, the same sandbox.
            case Opt::LegacyLandlock: break;
            // The sandbox keeps its own pid namespace and /proc (stricter).
            case Opt::InheritPid: break;
            case Opt::StatusFd: args.status_fd = descriptor(*value, name); break;
            case Opt::ProxyFd: args.proxy_fd = descriptor(*value, name); break;
            case Opt::RecordDenials: args.record_denials = true; break;
            case Opt::RecordNetwork: args.record_network = true; break;
            case Opt::PrivateTerminal: args.private_terminal = true; break;
            case Opt::Help: write_all(STDOUT_FILENO, kHelp); std::exit(0);
            case Opt::ManagedNetwork: args.managed_network = parse_managed_network(*value); break;
            case Opt::TransparentTcp: args.transparent_tcp = true; break;
            case Opt::InnerStage:
                usage_error(std::string(name) + " is an inner stage of Codex's own helper, not for callers");
        }
    }
    if (args.policy_json && args.profile_json)
        usage_error("--sandbox-policy and --permission-profile together: give one policy");
    if (!cwd) usage_error("missing --sandbox-policy-cwd");
    if (!args.policy_json && !args.profile_json) usage_error("missing --permission-profile (or --sandbox-policy)");
    if (i >= argc) usage_error("missing the command");
    args.policy_cwd = *cwd;
    args.command = argv + i;
    return args;
}

// Capabilities, no_new_privs, Landlock, seccomp: the layers every sandboxed
// command gets, applied in the process that execs it.  hide_proc (--no-proc,
// in a mount namespace of the sandbox's): /proc becomes an empty read-only
// directory first, once stdin, stdout and stderr have been opened again (which
// reads /proc/self/fd, still the host's /proc then).  socket_files: see
// apply_landlock (landlock.h).  private_terminal: --private-terminal.
Fd apply_process_layers(const CanonicalPolicy& policy, const std::string& cwd, bool mount_layer, bool hide = false,
                        Watch watch = Watch::None, bool socket_files = true, bool transparent = false,
                        bool private_terminal = false) {
    if (::chdir(cwd.c_str()) != 0) {
        if (errno == ENOENT && mount_layer && !policy.reads_root())
            fail("cwd", "the command's directory " + cwd + " is not in the sandbox: no entry of the policy includes it",
                 "add an entry that reads it (a path or :project_roots entry), or start the command in a directory "
                 "the entries include");
        fail_errno("cwd", "chdir " + cwd, "pass an existing --command-cwd");
    }
    if (hide) {
        // Without effective capabilities, as the command would open them.
        if (mount_layer) without_effective_capabilities(reopen_stdio_in_view);
        hide_proc();
    }
    // Root keeps what sets owners and modes (caps.h) only where every mount
    // outside the writable roots is read-only.
    drop_capabilities(mount_layer && ::geteuid() == 0 ? ownership_capabilities() : 0);
    // In the view, with the capabilities the command keeps, before Landlock
    // (a terminal reopened after it would lose its ioctls): as the command
    // would open them.
    if (mount_layer && !hide) reopen_stdio_in_view();
    // Only the sandbox's own ptys within reach (a terminal device opened
    // inside gets no ioctl from Landlock ABI 5 on, but in /dev/pts): they may
    // be resized (seccomp_rules.h).  Not where a writable root holds /dev
    // (its devices would get their ioctls from that root's rule).
    const bool dev_writable = std::any_of(policy.writable.begin(), policy.writable.end(),
                                          [](const WritableRoot& root) { return path_within("/dev", root.path); });
    const Terminals terminals =
        mount_layer && !dev_writable && landlock_abi() >= 5 && !reaches_host_terminal(private_terminal)
            ? Terminals::Own
            : Terminals::Host;
    set_no_new_privs();
    apply_landlock(policy, mount_layer, socket_files);
    return install_seccomp(policy, watch, transparent, terminals);
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

// What the view covers by a mount: every denied path, and the protected
// paths and placeholders inside the writable roots (host_watch.h).
std::vector<std::string> covered_paths(const CanonicalPolicy& policy, const ProtectedPaths& protect) {
    std::vector<std::string> paths = policy.denied;
    for (const auto& entry : protect.entries()) paths.push_back(entry.path);
    return paths;
}

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
    if (args.proxy_fd && !policy.by_name())
        usage_error("--proxy-fd: the policy has no allow_domains (no proxy to reach)");
    std::optional<ProxyBridge> bridge;
    // TCP through the proxy's SOCKS5 listener (transparent.h): Codex's (a
    // proxy variable names it) or sbx's (on its one port).
    std::optional<TransparentTcp> transparent;
    if (args.transparent_tcp && !args.managed_network && !args.proxy_fd)
        fail("network",
             "--transparent-tcp needs a proxy to carry the TCP (transparent TCP requires managed networking)",
             "give --managed-network with Codex's proxy, or leave --transparent-tcp out");
    if (args.transparent_tcp && args.proxy_fd && policy.network == Network::Limited)
        transparent.emplace().socks_port = net::kProxyPort;
    if (args.managed_network) {
        if (args.proxy_fd) usage_error("--managed-network and --proxy-fd together: give one");
        std::vector<std::string_view> environment;
        for (char** e = environ; *e != nullptr; ++e) environment.emplace_back(*e);
        std::vector<std::uint16_t> ports = bridged_ports(*args.managed_network, environment);
        // Proxy-only, whatever the profile says of the network (Codex sends
        // "enabled"), also with no filesystem sandbox; restricted stays
        // restricted (stricter: the proxy is out of reach too).
        if (policy.mode == Mode::DangerFullAccess) policy.mode = Mode::ExternalSandbox;
        if (policy.network != Network::Restricted) {
            policy.network = Network::Limited;
            // Its threads count against --limit-procs (util/relay_threads.h).
            if (args.transparent_tcp) {
                const auto socks = socks_proxy_port(environment, ports);
                if (!socks)
                    fail("network",
                         "--transparent-tcp: no proxy variable names a SOCKS5 proxy on 127.0.0.1 among the bridged "
                         "ports (transparent TCP requires managed SOCKS5)",
                         "turn on the SOCKS5 listener of Codex's proxy (network.enable_socks5), which sets "
                         "ALL_PROXY=socks5h://127.0.0.1:PORT");
                transparent.emplace().socks_port = *socks;
            }
            bridge.emplace(std::move(ports), relay_cap(policy.limits.processes));
            // Codex's meaning (observed with its 0.169 helper): allowUnixSockets
            // opens nothing at the helper, dangerouslyAllowAllUnixSockets every
            // pathname socket of the host, and binding to a path.
            command.host_unix_sockets = args.managed_network->all_unix_sockets;
        }
    }
    // allow_domains without --proxy-fd (Codex, say): network limited, which
    // reaches no host at all (stricter than asked).

    if (policy.mode == Mode::DangerFullAccess) {
        // Nothing to apply: the policy asks for no sandbox (sbx execs these itself).
        if (::chdir(command_cwd.c_str()) != 0)
            fail_errno("cwd", "chdir " + command_cwd, "pass an existing --command-cwd");
        exec_command(command);
    }

    apply_rlimits(policy.limits);

    const bool filesystem = policy.sandboxed_filesystem();
    const bool limited = policy.network == Network::Limited;
    // The command may signal nothing outside the sandbox: not sbx (SIGKILL
    // would end its timeout), not the user's other processes.  Landlock
    // scopes signals from ABI 6; below it external-sandbox gets the pid
    // namespace the other modes have anyway.
    const bool signals_by_pid_namespace = !filesystem && !landlock_scopes_signals();
    // The recorder needs pid 1 (its listener), which exists with the filesystem layers.
    const bool record = args.record_denials && filesystem;
    Watch watch = Watch::None;
    if (record) watch = Watch::Everything;
    else if (filesystem && args.record_network && policy.network != Network::Full) watch = Watch::Network;
    if (transparent) command.transparent = &*transparent;
    std::optional<Recorder> recorder;
    if (watch != Watch::None) command.recorder = &recorder.emplace(policy, status, watch == Watch::Everything);
    const std::optional<std::uint64_t> processes = policy.limits.processes;
    if (filesystem || limited || processes || signals_by_pid_namespace) {
        const uid_t uid = ::geteuid();
        const gid_t gid = ::getegid();
        // The process count: a pids cgroup for root, RLIMIT_NPROC in the
        // user namespace for everyone else (rlimits.h, cgroup.h).
        std::optional<PidsCgroup> pids;
        if (processes && uid == 0) pids.emplace(*processes);
        std::optional<ProtectedPaths> protect;
        if (filesystem) protect.emplace(policy);
        // Once the placeholders exist, before pid 1 covers anything.
        std::optional<HostWatch> host_watch;
        if (protect) host_watch.emplace(covered_paths(policy, *protect));
        OutputRelays relays(filesystem);
        // In pid 1: the git views of --git-write, written back at the end.
        std::vector<GitView> git_views;
        auto write_back = [&git_views] {
            for (const auto& view : git_views) view.write_back();
        };
        if (policy.git_write) command.ended = write_back;
        auto setup = [&](bool user) {
            if (pids) pids->enter();
            if (user) map_ids(uid, gid);
            if (user && processes && !pids) limit_processes_in_user_namespace(*processes);
            if (filesystem) {
                git_views = build_filesystem_view(policy, *protect);
            } else {
                make_mounts_private();
            }
            mount_namespace_filesystems(filesystem, !args.no_proc);
            if (limited) bring_up_loopback();
            if (transparent) {
                transparent->bind_resolver();
                TransparentTcp::install_resolv_conf();
            }
            if (args.proxy_fd) hand_out_proxy_listener(*args.proxy_fd, net::kProxyPort);
            if (bridge) hand_out_bridge_listeners(bridge->sandbox_channel(), bridge->ports());
        };
        auto prepare = [&]() {
            relays.attach();
            // Under --managed-network no UNIX socket is bound to a path, as
            // in Codex's helper (a host process could connect to it), unless
            // every UNIX socket is allowed.
            return apply_process_layers(policy, command_cwd, filesystem, args.no_proc, watch,
                                        !bridge || command.host_unix_sockets, transparent.has_value(),
                                        args.private_terminal);
        };
        // In pid 1, should the helper be killed: its placeholders all the same.
        auto abandoned = [&]() {
            write_back();
            if (protect) protect->remove_placeholders(true);
        };
        auto forked = [&](pid_t pid1) {
            if (host_watch) host_watch->start(pid1);
            if (bridge) bridge->start();
        };
        const std::optional<int> ended = run_under_pid1({.mount = true, .pid = true, .net = limited}, setup, prepare,
                                                        abandoned, relays, command, forked);
        if (ended) {
            bridge.reset();  // the sandbox is gone: so are its connections
            // The watch ends while this run still holds its placeholders'
            // directories (LOCK_SH): removing them converts that lock, which
            // flock(2) does by dropping it first, so another run could then
            // remove and remake a shared placeholder, an event that is no
            // change of this run's view.  It throws when the host uncovered a
            // path meanwhile; the placeholders go all the same (~protect).
            if (host_watch) host_watch->finish();
            protect.reset();  // then the placeholders (soon: at sbx's timeout the grace is short)
            pids.reset();
            exit_like(*ended);
        }
        // Ubuntu's AppArmor restriction: its profile for the helper first,
        // the sysctl that lifts it for every program last (apparmor_userns.h).
        const std::string fix_userns = apparmor::userns_fix_for_this_helper(
            SBX_APPARMOR_PROFILE, false, container::sign(container::detect(container::read_facts())));
        if (processes)
            fail("namespaces",
                 "user namespaces are unavailable, so --limit-procs would count every process of this user on "
                 "the machine instead of the sandbox's",
                 fix_userns + ", or drop --limit-procs");
        if (limited)
            fail("namespaces", "user namespaces are unavailable, so network 'limited' has no network namespace",
                 fix_userns + ", or use --network restricted");
        if (!filesystem) {  // external-sandbox below Landlock ABI 6
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
        } else {
            if (!policy.allow_unprotected)
                fail("namespaces",
                     "user namespaces are unavailable, so protected paths and metadata changes (chmod, chown, "
                     "utimes, xattrs) outside the writable roots cannot be enforced",
                     fix_userns + ", or pass --allow-unprotected to run with Landlock and seccomp alone");
            refuse_landlock_alone(policy);  // before the note: one line
            std::vector<std::string> missing{
                "protected paths", "hidden Codex sockets",
                "metadata changes outside the writable roots (chmod, chown, utimes, xattrs)"};
            if (record) missing.emplace_back("recorded denials (--record-denials needs the sandbox's pid 1)");
            status.not_enforced("no user namespace: running with Landlock and seccomp alone", missing);
        }
    }

    // No pid 1 of our own: the layers go on this process, which becomes the command.
    Fd listener = apply_process_layers(policy, command_cwd, false);
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
