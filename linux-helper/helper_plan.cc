#include "helper_plan.h"

#include <algorithm>
#include <utility>

#include "managed_network.h"
#include "net/domain.h"
#include "step_error.h"

namespace sbx::helper {
namespace {

// --managed-network: proxy-only, whatever the profile says of the network
// (Codex sends "enabled"), also with no filesystem sandbox; restricted stays
// restricted (stricter: the proxy is out of reach too).
void plan_managed_network(const Args& args, const HelperHost& host, HelperPlan& plan) {
    if (args.proxy_fd) usage_error("--managed-network and --proxy-fd together: give one");
    std::vector<std::uint16_t> ports = bridged_ports(*args.managed_network, host.environment);
    if (plan.policy.mode == Mode::DangerFullAccess) plan.policy.mode = Mode::ExternalSandbox;
    if (plan.policy.network == Network::Restricted) return;
    plan.policy.network = Network::Limited;
    // Its threads count against --limit-procs (util/relay_threads.h).
    if (args.transparent_tcp) {
        const auto socks = socks_proxy_port(host.environment, ports);
        if (!socks)
            fail("network",
                 "--transparent-tcp: no proxy variable names a SOCKS5 proxy on 127.0.0.1 among the bridged "
                 "ports (transparent TCP requires managed SOCKS5)",
                 "turn on the SOCKS5 listener of Codex's proxy (network.enable_socks5), which sets "
                 "ALL_PROXY=socks5h://127.0.0.1:PORT");
        plan.socks_port = *socks;
    }
    plan.bridged_ports = std::move(ports);
    // Codex's meaning (observed with its 0.169 helper): allowUnixSockets
    // opens nothing at the helper, dangerouslyAllowAllUnixSockets every
    // pathname socket of the host, and binding to a path.
    plan.host_unix_sockets = args.managed_network->all_unix_sockets;
}

// The network options: sbx's allowlist proxy (--proxy-fd), Codex's
// (--managed-network), TCP carried to either (--transparent-tcp).
void plan_network(const Args& args, const HelperHost& host, HelperPlan& plan) {
    // A learning run (--learn) reaches the proxy with no name allowed: it
    // learns the names, each refused or let through by sbx, and recorded.
    if (args.proxy_fd && !plan.policy.by_name() && !args.learn)
        usage_error("--proxy-fd: the policy has no allow_domains (no proxy to reach)");
    if (args.proxy_fd && plan.policy.network != Network::Limited)
        usage_error("--proxy-fd: the policy's network is not limited (the proxy is its only way out)");
    // TCP through the proxy's SOCKS5 listener (transparent.h): Codex's (a
    // proxy variable names it) or sbx's (on its one port).
    if (args.transparent_tcp && !args.managed_network && !args.proxy_fd)
        fail("network",
             "--transparent-tcp needs a proxy to carry the TCP (transparent TCP requires managed networking)",
             "give --managed-network with Codex's proxy, or leave --transparent-tcp out");
    if (args.transparent_tcp && args.proxy_fd && plan.policy.network == Network::Limited)
        plan.socks_port = net::kProxyPort;
    if (args.managed_network) plan_managed_network(args, host, plan);
    // allow_domains without --proxy-fd (Codex, say): network limited, which
    // reaches no host at all (stricter than asked).
}

// What the seccomp filter tells pid 1 of: every denial recorded (the
// recorder needs pid 1, which exists with the filesystem layers), or only
// the network's.
Watch watch_for(const Args& args, const HelperPlan& plan) {
    if (plan.learn_reads) return Watch::Reads;
    if (plan.record) return Watch::Everything;
    if (plan.filesystem && args.record_network && plan.policy.network != Network::Full) return Watch::Network;
    return Watch::None;
}

}  // namespace

HelperPlan plan_helper(const Args& args, CanonicalPolicy policy, const HelperHost& host) {
    HelperPlan plan;
    plan.policy = std::move(policy);
    plan_network(args, host, plan);
    const CanonicalPolicy& p = plan.policy;
    plan.unsandboxed = p.mode == Mode::DangerFullAccess;
    plan.filesystem = p.sandboxed_filesystem();
    plan.limited = p.network == Network::Limited;
    // The command may signal nothing outside the sandbox: not sbx (SIGKILL
    // would end its timeout), not the user's other processes.  Landlock
    // scopes signals from ABI 6; below it external-sandbox gets the pid
    // namespace the other modes have anyway.
    plan.signals_by_pid_namespace = !plan.filesystem && !host.landlock_scopes_signals;
    const bool processes = p.limits.processes.has_value();
    plan.pid1 = !plan.unsandboxed && (plan.filesystem || plan.limited || processes || plan.signals_by_pid_namespace);
    plan.pids_cgroup = processes && host.root;
    plan.record = args.record_denials && plan.filesystem;
    if (args.learn_reads && !args.learn) usage_error("--learn-reads without --learn: give both");
    if (args.learn) {
        if (!plan.filesystem)
            usage_error("--learn: the policy sandboxes no files (a learning run needs read-only or workspace-write)");
        // Its view keeps the host's files readable (learn_view.h): what the
        // policy would not read is then recorded (--learn-reads), or the
        // policy must read everything.
        if (!plan.policy.reads_root() && !args.learn_reads)
            usage_error(
                "--learn: the policy does not read the whole filesystem (--minimal, or entries alone); "
                "add --learn-reads to record the files it reads");
        plan.learn = plan.record = true;
        plan.learn_reads = args.learn_reads;
    }
    plan.no_proc = args.no_proc;
    plan.proxy_fd = args.proxy_fd;
    // A masked file is a mount of pid 1's view: there must be one, and not
    // the learning view (whose layer would take the writes to it).
    if (!args.mask_files.empty() && (!plan.filesystem || !plan.pid1 || plan.learn))
        usage_error(std::string("--mask-file: ") +
                    (plan.learn
                         ? "a learning run shows the host's files as they are"
                         : "the policy has no filesystem view (read-only or workspace-write) to mask a file in"));
    // Each descriptor is read to its end and closed once: none twice, none
    // of the helper's own channels; each path covered once.
    for (auto it = args.mask_files.begin(); it != args.mask_files.end(); ++it) {
        const auto earlier = [&](auto same) { return std::any_of(args.mask_files.begin(), it, same); };
        const std::string fd = std::to_string(it->first);
        if (it->first == args.status_fd || it->first == args.proxy_fd)
            usage_error("--mask-file: descriptor " + fd +
                        " is --status-fd's or --proxy-fd's; give the content on another");
        if (earlier([&](const auto& m) { return m.first == it->first; }))
            usage_error("--mask-file: descriptor " + fd +
                        " is given twice (each is read to its end); give each its own");
        if (earlier([&](const auto& m) { return m.second == it->second; }))
            usage_error("--mask-file: " + it->second + " is given twice; give each path once");
    }
    plan.mask_files = args.mask_files;
    // Under --managed-network no UNIX socket is bound to a path, as in
    // Codex's helper (a host process could connect to it), unless every UNIX
    // socket is allowed.
    plan.layers = {.mount_layer = plan.filesystem,
                   .hide_proc = args.no_proc,
                   .watch = watch_for(args, plan),
                   .socket_files = !plan.bridged_ports || plan.host_unix_sockets,
                   .transparent = plan.socks_port.has_value(),
                   .private_terminal = args.private_terminal};
    return plan;
}

}  // namespace sbx::helper
