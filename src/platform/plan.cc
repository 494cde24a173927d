#include "platform/plan.h"

#include <nlohmann/json.hpp>

#include "net/domain.h"
#include "platform/seatbelt.h"
#include "wire/helper_wire.h"

namespace sbx {

const std::map<std::string, std::string>& no_network_retry_env() {
    static const std::map<std::string, std::string> env{
        {"npm_config_fetch_retries", "0"},  // npm (and npx)
        {"PIP_RETRIES", "0"},               // pip
        {"CARGO_NET_RETRY", "0"},           // cargo
    };
    return env;
}

bool by_name(const CanonicalPolicy& policy, const CommandSpec& command) {
    return policy.by_name() || (command.learn && policy.network != Network::Full);
}

std::vector<std::string> linux_helper_args(const CanonicalPolicy& policy, const std::string& helper,
                                           const CommandSpec& command) {
    namespace option = wire::option;
    std::vector<std::string> args{helper};
    args.insert(args.end(), {option::kPolicyCwd, policy.workspace});
    args.insert(args.end(), {option::kCommandCwd, command.cwd});
    args.insert(args.end(), {option::kStatusFd, std::to_string(kHelperStatusFd)});
    // Every denial recorded, or (cheap: only the network calls reach pid 1)
    // under restricted and limited each network attempt the sandbox refused,
    // with its destination.
    if (command.learn) {
        args.emplace_back(option::kLearn);  // records as --record-denials does
        if (command.learn_reads) args.emplace_back(option::kLearnReads);
    } else if (command.record_denials) args.emplace_back(option::kRecordDenials);
    else if (policy.network != Network::Full) args.emplace_back(option::kRecordNetwork);
    // sbx's relay: the controlling terminal is the pty sbx made for this
    // sandbox, which the command may resize (TIOCSWINSZ) as its own.
    if (command.private_terminal) args.emplace_back(option::kPrivateTerminal);
    // By name: the proxy, and every TCP connect carried to it (transparent TCP:
    // programs that ignore the proxy variables reach allowed names too).
    if (by_name(policy, command))
        args.insert(args.end(), {option::kProxyFd, std::to_string(kHelperProxyFd), option::kTransparentTcp});
    // A learning run of -n restricted learns the names too: -n limited's
    // private network, whose only way out is the proxy (which allows no
    // name the policy does not; linux-helper/helper_plan.cc).
    CanonicalPolicy sent = policy;
    if (by_name(policy, command)) sent.network = Network::Limited;
    args.insert(args.end(), {option::kSandboxPolicy, to_json(sent).dump()});
    return args;
}

ExecPlan plan(const CanonicalPolicy& policy, const CommandSpec& command, TargetOs os, const PlatformPaths& paths) {
    ExecPlan out;
    out.cwd = command.cwd;
    out.env_add = command.set_env;
    out.env_remove = command.unset_env;
    out.clear_env = command.clear_env;
    out.stdin_mode = command.stdin_mode;

    if (policy.mode == Mode::DangerFullAccess) {
        out.argv = command.argv;
        out.sandbox = SandboxKind::None;
    } else if (os == TargetOs::Linux) {
        out.argv = linux_helper_args(policy, paths.linux_helper, command);
        out.argv.push_back("--");
        out.argv.insert(out.argv.end(), command.argv.begin(), command.argv.end());
        out.sandbox = SandboxKind::Linux;
        out.report_fd = kHelperStatusFd;
        if (by_name(policy, command)) {
            out.proxy_fd = kHelperProxyFd;
            // What --env sets wins.
            for (auto& [name, value] : net::proxy_environment(net::kProxyPort)) out.env_add.emplace(name, value);
        }
    } else if (seatbelt_runs_unsandboxed(policy)) {
        // external-sandbox with a full network: nothing for Seatbelt to add,
        // and a nested sandbox-exec fails inside the outer sandbox (Codex).
        out.argv = command.argv;
        out.sandbox = SandboxKind::None;
    } else {
        // Seatbelt has no private network: "limited" would reach the host's
        // localhost, which the policy forbids.  Refuse rather than run weaker.
        if (policy.network == Network::Limited)
            throw Error(
                "--network: limited cannot be enforced on macOS (Seatbelt has no private loopback; the "
                "host's localhost would be reachable); use -n restricted or -n full");
        out.argv = seatbelt_argv(policy, command.argv, paths.sandbox_exec, SeatbeltContext{command.terminals});
        out.sandbox = SandboxKind::MacosSeatbelt;
    }
    // The markers come last so that --env cannot forge them.
    out.env_add["SBX_SANDBOX"] = to_string(out.sandbox);
    if (policy.network != Network::Full) out.env_add["SBX_SANDBOX_NETWORK_DISABLED"] = "1";
    else {
        out.env_add.erase("SBX_SANDBOX_NETWORK_DISABLED");
        out.env_remove.push_back("SBX_SANDBOX_NETWORK_DISABLED");  // inherited from an outer sbx
    }
    if (policy.network == Network::Restricted && out.sandbox != SandboxKind::None) {
        for (const auto& [name, value] : no_network_retry_env())
            if (command.set_env.count(name) == 0) out.env_default[name] = value;
    }
    return out;
}

}  // namespace sbx
