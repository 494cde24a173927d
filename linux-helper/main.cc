// codex-linux-sandbox: applies the sandbox to itself, then execs the command.
//
//   codex-linux-sandbox --sandbox-policy-cwd DIR [--command-cwd DIR] --sandbox-policy JSON -- CMD...
//   codex-linux-sandbox DIR JSON -- CMD...
//
// Order (SPEC section 5): policy, rlimits, namespaces, filesystem view,
// capabilities, no_new_privs, Landlock, seccomp, exec.  Exit 125 with one
// line when the sandbox cannot be applied; 126/127 when the command cannot be
// executed or is not found; otherwise the command's own status.
#include <linux/close_range.h>
#include <unistd.h>

#include <climits>
#include <cstdint>
#include <cstdlib>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "caps.h"
#include "cgroup.h"
#include "inherited_fds.h"
#include "landlock.h"
#include "mounts.h"
#include "namespaces.h"
#include "policy/policy.h"
#include "process.h"
#include "rlimits.h"
#include "util.h"
#include "network.h"
#include "seccomp.h"

namespace sbx::helper {
namespace {

constexpr const char* kUsage =
    "usage: codex-linux-sandbox --sandbox-policy-cwd DIR [--command-cwd DIR] --sandbox-policy JSON -- CMD...";

struct Args {
    std::string policy_cwd;
    std::optional<std::string> command_cwd;
    std::string policy_json;
    char** command = nullptr;  // argv-style, null-terminated
};

std::string absolute(std::string path) {
    if (!path.empty() && path[0] == '/') return path;
    char cwd[PATH_MAX];
    if (::getcwd(cwd, sizeof cwd) == nullptr) fail_errno("arguments", "getcwd");
    std::string result(cwd);
    if (result != "/") result += '/';
    return result + path;
}

Args parse_args(int argc, char** argv) {
    Args args;
    std::optional<std::string> cwd, json;
    std::vector<std::string> positional;
    int i = 1;
    auto value = [&](std::string_view arg, std::string_view name) -> std::optional<std::string> {
        if (arg == name) {
            if (i + 1 >= argc) fail("arguments", std::string(name) + " needs a value", kUsage);
            return std::string(argv[++i]);
        }
        if (arg.size() > name.size() && arg.substr(0, name.size()) == name && arg[name.size()] == '=')
            return std::string(arg.substr(name.size() + 1));
        return std::nullopt;
    };
    for (; i < argc; ++i) {
        std::string_view arg = argv[i];
        if (arg == "--") {
            ++i;
            break;
        }
        if (auto v = value(arg, "--sandbox-policy-cwd")) {
            cwd = *v;
        } else if (auto v2 = value(arg, "--command-cwd")) {
            args.command_cwd = *v2;
        } else if (auto v3 = value(arg, "--sandbox-policy")) {
            json = *v3;
        } else if (arg.size() > 1 && arg[0] == '-' && !(cwd && json) && positional.size() < 2) {
            fail("arguments", "unknown option '" + std::string(arg) + "'", kUsage);
        } else if (!(cwd && json) && positional.size() < 2) {
            positional.emplace_back(arg);  // the older form: DIR JSON
        } else {
            break;  // the command, without a "--"
        }
    }
    if (positional.size() == 2 && !cwd && !json) {
        cwd = positional[0];
        json = positional[1];
    } else if (!positional.empty()) {
        fail("arguments", "unexpected argument '" + positional[0] + "'", kUsage);
    }
    if (!cwd) fail("arguments", "missing --sandbox-policy-cwd", kUsage);
    if (!json) fail("arguments", "missing --sandbox-policy", kUsage);
    if (i >= argc) fail("arguments", "missing the command after --", kUsage);
    args.policy_cwd = absolute(*cwd);
    args.policy_json = *json;
    args.command = argv + i;
    return args;
}

// Capabilities, no_new_privs, Landlock, seccomp: the layers every sandboxed
// command gets, applied in the process that execs it.
Fd apply_process_layers(const CanonicalPolicy& policy, const std::string& cwd, bool mount_layer) {
    if (::chdir(cwd.c_str()) != 0) fail_errno("cwd", "chdir " + cwd, "pass an existing --command-cwd");
    drop_capabilities();
    // In the view, without capabilities, before Landlock (a terminal reopened
    // after it would lose its ioctls): as the command would open them.
    if (mount_layer) reopen_stdio_in_view();
    set_no_new_privs();
    apply_landlock(policy, mount_layer);
    return install_seccomp(policy);
}

int run(int argc, char** argv) {
    // Nothing the helper inherited beyond stdin, stdout and stderr reaches the
    // command: an open socket of the host's network namespace, say, would
    // carry the host's network past every layer below.
    if (::close_range(3, ~0U, CLOSE_RANGE_CLOEXEC) != 0)
        fail_errno("fds", "close_range", "run on Linux 5.11 or later");
    const Args args = parse_args(argc, argv);

    Environment env = system_environment();
    env.cwd = args.policy_cwd;
    const CanonicalPolicy policy = parse_policy_text(args.policy_json, "--sandbox-policy", env);
    const std::string command_cwd = args.command_cwd ? absolute(*args.command_cwd) : absolute(".");

    if (policy.mode == Mode::DangerFullAccess) {
        // Nothing to apply: the policy asks for no sandbox (sbx execs these itself).
        if (::chdir(command_cwd.c_str()) != 0) fail_errno("cwd", "chdir " + command_cwd, "pass an existing --command-cwd");
        exec_command(args.command);
    }

    apply_rlimits(policy.limits);

    const bool filesystem = policy.sandboxed_filesystem();
    const bool limited = policy.network == Network::Limited;
    const std::optional<std::uint64_t> processes = policy.limits.processes;
    if (filesystem || limited || processes) {
        const uid_t uid = ::geteuid();
        const gid_t gid = ::getegid();
        // The process count: a pids cgroup for root, RLIMIT_NPROC in the
        // user namespace for everyone else (rlimits.h, cgroup.h).
        std::optional<PidsCgroup> pids;
        if (processes && uid == 0) pids.emplace(*processes);
        std::optional<ProtectedPaths> protect;
        if (filesystem) protect.emplace(policy);
        OutputRelays relays(filesystem);
        auto setup = [&](bool user) {
            if (pids) pids->enter();
            if (user) map_ids(uid, gid);
            if (user && processes && !pids) limit_processes_in_user_namespace(*processes);
            if (filesystem) {
                build_filesystem_view(policy, *protect);
            } else {
                make_mounts_private();
            }
            mount_namespace_filesystems(filesystem);
            if (limited) bring_up_loopback();
        };
        auto prepare = [&]() {
            relays.attach();
            return apply_process_layers(policy, command_cwd, filesystem);
        };
        // In pid 1, should the helper be killed: its placeholders all the same.
        auto abandoned = [&]() {
            if (protect) protect->remove_placeholders(true);
        };
        const std::optional<int> status =
            run_under_pid1({.mount = true, .pid = true, .net = limited}, setup, prepare, abandoned, relays,
                           args.command);
        if (status) {
            protect.reset();  // remove the placeholders before ending
            pids.reset();
            exit_like(*status);
        }
        const char* fix_userns =
            "enable unprivileged user namespaces (sysctl user.max_user_namespaces, "
            "kernel.apparmor_restrict_unprivileged_userns=0)";
        if (processes)
            fail("namespaces",
                 "user namespaces are unavailable, so --limit-procs would count every process of this user on "
                 "the machine instead of the sandbox's",
                 std::string(fix_userns) + ", or drop --limit-procs");
        if (limited)
            fail("namespaces", "user namespaces are unavailable, so network 'limited' has no network namespace",
                 std::string(fix_userns) + ", or use --network restricted");
        if (!policy.allow_unprotected)
            fail("namespaces",
                 "user namespaces are unavailable, so protected paths and metadata changes (chmod, chown, "
                 "utimes, xattrs) outside the writable roots cannot be enforced",
                 std::string(fix_userns) + ", or pass --allow-unprotected to run with Landlock and seccomp alone");
        write_all(STDERR_FILENO,
                  "codex-linux-sandbox: note: no user namespace: running with Landlock and seccomp alone; "
                  "not enforced: protected paths, metadata changes (chmod, chown, utimes, xattrs)\n");
    }

    // No pid 1 of our own: the layers go on this process, which becomes the command.
    Fd listener = apply_process_layers(policy, command_cwd, false);
    if (listener.valid()) fail("seccomp", "a user-notification filter needs pid 1 to serve it", "use --network restricted");
    exec_command(args.command);
}

}  // namespace
}  // namespace sbx::helper

int main(int argc, char** argv) {
    try {
        return sbx::helper::run(argc, argv);
    } catch (const std::exception& e) {
        sbx::helper::report_error(e.what());
        return 125;
    }
}
