// What the helper will do, as data: decided from its arguments and the
// policy (plan_helper, pure) before any layer is applied, then carried out by
// main.cc's run() in the order of SPEC section 5.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "args.h"
#include "layers.h"
#include "policy/policy.h"

namespace sbx::helper {

struct HelperPlan {
    // The policy as enforced: --managed-network makes the network limited
    // (proxy-only) and danger-full-access external-sandbox.
    CanonicalPolicy policy;
    bool unsandboxed = false;  // danger-full-access: nothing to apply, exec at once
    bool filesystem = false;   // the mount view and Landlock's file rules
    bool limited = false;      // a network namespace of its own with loopback up
    // The command cannot be kept from signalling processes outside the
    // sandbox by Landlock (external-sandbox below ABI 6): a pid namespace does.
    bool signals_by_pid_namespace = false;
    // In namespaces under a pid 1 of the helper's (process.h); otherwise the
    // layers go on the helper itself, which becomes the command.
    bool pid1 = false;
    // --limit-procs for root: a pids cgroup (cgroup.h); for everyone else
    // RLIMIT_NPROC in the user namespace (rlimits.h).
    bool pids_cgroup = false;
    bool record = false;  // --record-denials with the filesystem layers (pid 1's recorder)
    // --learn (learn_view.h): the learning view instead of the policy's, no
    // placeholders on the host, every refusal of the policy recorded, the
    // command's layers made from learning_layers (learn_view.h).
    bool learn = false;
    // --learn-reads: a policy that does not read every file learned from
    // too; every open and exec is then told to pid 1, and each the policy
    // cannot read recorded (layers.watch: Watch::Reads).
    bool learn_reads = false;
    bool no_proc = false;         // --no-proc
    std::optional<int> proxy_fd;  // --proxy-fd: where pid 1 sends the proxy's listener (network.h)
    // --managed-network: the loopback ports bridged to Codex's proxy (managed_network.h).
    std::optional<std::vector<std::uint16_t>> bridged_ports;
    // --transparent-tcp: the SOCKS5 port TCP is carried to (transparent.h).
    std::optional<std::uint16_t> socks_port;
    // --managed-network's dangerouslyAllowAllUnixSockets: the host's pathname
    // UNIX sockets reachable (network.h UnixMediator).
    bool host_unix_sockets = false;
    // --mask-file (file_mask.h): the descriptors and the paths they cover,
    // in pid 1's view.
    std::vector<std::pair<int, std::string>> mask_files;
    // The command's layers under pid 1 (where it has none, ProcessLayers{}).
    ProcessLayers layers;
};

// What plan_helper reads of the host, read by the caller.
struct HelperHost {
    std::vector<std::string_view> environment;  // "NAME=VALUE": the proxy variables
    bool landlock_scopes_signals = false;       // Landlock ABI 6 (landlock.h)
    bool root = false;                          // effective uid 0
};

// The plan for args and the policy they name (resolved).  Throws StepError
// for options that contradict each other or the policy (in the order the
// helper has always checked them).
HelperPlan plan_helper(const Args& args, CanonicalPolicy policy, const HelperHost& host);

}  // namespace sbx::helper
