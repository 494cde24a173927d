// Whether sbx runs inside a container, and what a sandbox can still be there
// (issue 31): Docker's and Podman's defaults (their seccomp profile, their
// capability set) allow no new namespaces, so sbx's namespaces, and what
// rests on them, are out of reach; Landlock and seccomp are not.  Pure: the
// facts are read by the caller (cli/doctor.cc) and passed in;
// tests/unit/test_container.cc.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace sbx::container {

// What the machine shows of a container.
struct Facts {
    bool dockerenv = false;                     // /.dockerenv exists
    bool containerenv = false;                  // /run/.containerenv exists (Podman)
    std::optional<std::string> pid1_environ{};  // /proc/1/environ (NUL-separated), where readable
    std::optional<std::string> self_status{};   // /proc/self/status
};

struct Finding {
    // The engine or the sign that gave it away ("docker (/.dockerenv)",
    // "podman (/run/.containerenv)", "container=lxc (pid 1's environment)"),
    // or nullopt: no container seen.
    std::optional<std::string> engine;
    // sbx itself already runs under a seccomp filter (Seccomp: 2), as a
    // container's processes do.
    bool seccomp_filtered = false;
    bool no_new_privs = false;
};

Finding detect(const Facts&);

// This process's facts, read from the machine.
Facts read_facts();

// What gives a container away, in a few words for a refusal: the engine, or
// the seccomp filter sbx itself runs under; nullopt when nothing does.
std::optional<std::string> sign(const Finding&);

// Without namespaces (a container's defaults, or none for this user): what
// sbx still enforces with --allow-unprotected, and what it does not.
// landlock_abi: the kernel's (0: none).
struct WithoutNamespaces {
    std::vector<std::string> enforced;
    std::vector<std::string> not_enforced;
};
WithoutNamespaces without_namespaces(int landlock_abi);

}  // namespace sbx::container
