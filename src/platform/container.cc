#include "platform/container.h"

#include <unistd.h>

#include <fstream>
#include <iterator>
#include <string_view>

namespace sbx::container {
namespace {

// The value of "Name:\tvalue" in /proc/PID/status.
std::optional<std::string> status_field(const std::string& status, std::string_view name) {
    std::size_t at = 0;
    while (at < status.size()) {
        const auto end = status.find('\n', at);
        const std::string_view line(status.data() + at, (end == std::string::npos ? status.size() : end) - at);
        if (line.size() > name.size() && line.starts_with(name) && line[name.size()] == ':') {
            std::string_view value = line.substr(name.size() + 1);
            while (!value.empty() && (value.front() == '\t' || value.front() == ' ')) value.remove_prefix(1);
            return std::string(value);
        }
        if (end == std::string::npos) break;
        at = end + 1;
    }
    return std::nullopt;
}

}  // namespace

Finding detect(const Facts& facts) {
    Finding f;
    if (facts.dockerenv) {
        f.engine = "docker (/.dockerenv)";
    } else if (facts.containerenv) {
        f.engine = "podman (/run/.containerenv)";
    } else if (facts.pid1_environ) {
        // systemd's convention: container=docker, podman, lxc, systemd-nspawn...
        const std::string& env = *facts.pid1_environ;
        for (std::size_t at = 0; at < env.size();) {
            const auto end = env.find('\0', at);
            const std::string_view entry(env.data() + at, (end == std::string::npos ? env.size() : end) - at);
            if (entry.starts_with("container=") && entry.size() > 10)
                f.engine = std::string(entry.substr(10)) + " (container= in pid 1's environment)";
            if (end == std::string::npos) break;
            at = end + 1;
        }
    }
    if (facts.self_status) {
        f.seccomp_filtered = status_field(*facts.self_status, "Seccomp") == "2";
        f.no_new_privs = status_field(*facts.self_status, "NoNewPrivs") == "1";
    }
    return f;
}

Facts read_facts() {
    auto read = [](const char* path) -> std::optional<std::string> {
        std::ifstream in(path, std::ios::binary);
        if (!in) return std::nullopt;
        return std::string(std::istreambuf_iterator<char>(in), {});
    };
    return {.dockerenv = ::access("/.dockerenv", F_OK) == 0,
            .containerenv = ::access("/run/.containerenv", F_OK) == 0,
            .pid1_environ = read("/proc/1/environ"),
            .self_status = read("/proc/self/status")};
}

std::optional<std::string> sign(const Finding& f) {
    if (f.engine) return f.engine;
    if (f.seccomp_filtered) return "a seccomp filter on sbx itself";
    return std::nullopt;
}

WithoutNamespaces without_namespaces(int landlock_abi) {
    WithoutNamespaces w;
    if (landlock_abi >= 1) w.enforced.emplace_back("files: reads and writes outside the policy (Landlock)");
    w.enforced.emplace_back("network restricted: no socket but AF_UNIX pairs (seccomp)");
    w.enforced.emplace_back("the syscalls sbx's filter refuses (ptrace, mount, io_uring, bpf...; seccomp)");
    if (landlock_abi >= 6) w.enforced.emplace_back("signals and abstract UNIX sockets outside the sandbox (Landlock)");
    w.not_enforced = {"protected paths in writable roots (.git, .sbx, .codex...)",
                      "metadata changes outside the writable roots (chmod, chown, utimes, xattrs)",
                      "network limited and --allow-domain (no network namespace)",
                      "a pid namespace and a /proc of the sandbox's own", "--limit-procs for users other than root"};
    if (landlock_abi < 1) w.not_enforced.emplace_back("files (no Landlock in this kernel)");
    if (landlock_abi < 6)
        w.not_enforced.emplace_back("signals to processes outside the sandbox (Landlock below ABI 6)");
    return w;
}

}  // namespace sbx::container
