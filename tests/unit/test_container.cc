// platform/container.h: a container seen from its signs, and what a sandbox
// is without namespaces.  Run inside a container-like process by
// tests/integration/containers.sh.
#include <catch2/catch.hpp>

#include <algorithm>
#include <string>

#include "platform/container.h"

using namespace sbx::container;

TEST_CASE("a container: Docker's file, Podman's, pid 1's container= variable; none") {
    CHECK(detect({.dockerenv = true}).engine == "docker (/.dockerenv)");
    CHECK(detect({.containerenv = true}).engine == "podman (/run/.containerenv)");
    const std::string environ("PATH=/bin\0container=lxc\0HOME=/\0", 32);
    CHECK(detect({.pid1_environ = environ}).engine == "lxc (container= in pid 1's environment)");
    CHECK(!detect({.pid1_environ = std::string("PATH=/bin\0container=\0", 21)}).engine);
    CHECK(!detect({}).engine);
}

TEST_CASE("sbx under a seccomp filter already, and no_new_privs, from /proc/self/status") {
    const Finding f = detect({.self_status = "Name:\tsbx\nNoNewPrivs:\t1\nSeccomp:\t2\nSeccomp_filters:\t1\n"});
    CHECK(f.seccomp_filtered);
    CHECK(f.no_new_privs);
    const Finding g = detect({.self_status = "Name:\tsbx\nNoNewPrivs:\t0\nSeccomp:\t0\n"});
    CHECK(!g.seccomp_filtered);
    CHECK(!g.no_new_privs);
}

TEST_CASE("without namespaces: Landlock and seccomp still hold, what rests on namespaces does not") {
    const auto has = [](const std::vector<std::string>& list, const std::string& start) {
        return std::any_of(list.begin(), list.end(), [&](const std::string& s) { return s.starts_with(start); });
    };
    const WithoutNamespaces w6 = without_namespaces(6);
    CHECK(has(w6.enforced, "files:"));
    CHECK(has(w6.enforced, "network restricted"));
    CHECK(has(w6.enforced, "signals"));
    CHECK(has(w6.not_enforced, "protected paths"));
    CHECK(has(w6.not_enforced, "network limited"));
    const WithoutNamespaces w0 = without_namespaces(0);
    CHECK(!has(w0.enforced, "files:"));
    CHECK(has(w0.not_enforced, "signals"));
    CHECK(has(w0.not_enforced, "files"));
}
