// plan_helper (linux-helper/helper_plan.h): what the helper will do, decided
// from its arguments, the policy and the host's facts before any layer.
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "error_of.h"
#include "fake_fs.h"
#include "helper_plan.h"

using namespace sbx;
using helper::HelperHost;
using helper::HelperPlan;
using helper::Watch;

namespace {

CanonicalPolicy resolved(const PolicyInput& in) {
    test::FakeFs fs;
    fs.dir("/work/repo").dir("/tmp").dir("/dev/shm").file("/dev/null");
    return resolve(in, fs.env("/work/repo"));
}

CanonicalPolicy resolved(Mode mode, std::optional<Network> network = std::nullopt) {
    PolicyInput in;
    in.mode = mode;
    in.network = network;
    return resolved(in);
}

CanonicalPolicy by_name() {
    PolicyInput in;
    in.mode = Mode::WorkspaceWrite;
    in.allow_domains.push_back({"example.com", "--allow-domain"});
    return resolved(in);
}

helper::Args args() {
    helper::Args a;
    a.policy_cwd = "/work/repo";
    a.policy_json = "{}";  // not read by plan_helper
    return a;
}

HelperHost host(std::vector<std::string_view> environment = {}) {
    return HelperHost{std::move(environment), /*landlock_scopes_signals=*/true, /*root=*/false};
}

helper::ManagedNetwork managed(bool all_unix_sockets = false) {
    helper::ManagedNetwork m;
    m.loopback_ports = {3128, 1080};
    m.all_unix_sockets = all_unix_sockets;
    return m;
}

}  // namespace

TEST_CASE("helper plan: workspace-write gets the view under pid 1, its layers in the mount namespace") {
    const HelperPlan p = helper::plan_helper(args(), resolved(Mode::WorkspaceWrite), host());
    CHECK(!p.unsandboxed);
    CHECK(p.filesystem);
    CHECK(p.pid1);
    CHECK(!p.limited);
    CHECK(!p.pids_cgroup);
    CHECK(!p.record);
    CHECK(!p.bridged_ports);
    CHECK(!p.socks_port);
    CHECK(p.layers.mount_layer);
    CHECK(!p.layers.hide_proc);
    CHECK(p.layers.watch == Watch::None);
    CHECK(p.layers.socket_files);
    CHECK(!p.layers.transparent);
    CHECK(!p.layers.private_terminal);
}

TEST_CASE("helper plan: danger-full-access applies nothing") {
    const HelperPlan p = helper::plan_helper(args(), resolved(Mode::DangerFullAccess), host());
    CHECK(p.unsandboxed);
    CHECK(!p.pid1);
    CHECK(!p.filesystem);
}

TEST_CASE("helper plan: external-sandbox needs pid 1 only where Landlock cannot scope signals") {
    CanonicalPolicy policy = resolved(Mode::ExternalSandbox, Network::Full);
    HelperHost scoped = host();
    CHECK(!helper::plan_helper(args(), policy, scoped).pid1);
    HelperHost unscoped = host();
    unscoped.landlock_scopes_signals = false;
    const HelperPlan p = helper::plan_helper(args(), policy, unscoped);
    CHECK(p.signals_by_pid_namespace);
    CHECK(p.pid1);
    CHECK(!p.layers.mount_layer);
    CHECK(helper::plan_helper(args(), resolved(Mode::ExternalSandbox, Network::Limited), scoped).pid1);
}

TEST_CASE("helper plan: --limit-procs counts in a pids cgroup for root only") {
    CanonicalPolicy policy = resolved(Mode::ExternalSandbox, Network::Full);
    policy.limits.processes = 10;
    HelperHost h = host();
    CHECK(helper::plan_helper(args(), policy, h).pid1);
    CHECK(!helper::plan_helper(args(), policy, h).pids_cgroup);
    h.root = true;
    CHECK(helper::plan_helper(args(), policy, h).pids_cgroup);
}

TEST_CASE("helper plan: what the seccomp filter tells pid 1") {
    helper::Args a = args();
    a.record_network = true;
    CHECK(helper::plan_helper(a, resolved(Mode::ReadOnly), host()).layers.watch == Watch::Network);
    CHECK(helper::plan_helper(a, resolved(Mode::ReadOnly, Network::Limited), host()).layers.watch == Watch::Network);
    CHECK(helper::plan_helper(a, resolved(Mode::WorkspaceWrite, Network::Full), host()).layers.watch == Watch::None);
    a.record_denials = true;
    const HelperPlan p = helper::plan_helper(a, resolved(Mode::WorkspaceWrite, Network::Full), host());
    CHECK(p.record);
    CHECK(p.layers.watch == Watch::Everything);
    // Without the filesystem layers there is no recorder (it needs their pid 1).
    const HelperPlan external = helper::plan_helper(a, resolved(Mode::ExternalSandbox), host());
    CHECK(!external.record);
    CHECK(external.layers.watch == Watch::None);
}

TEST_CASE("helper plan: --no-proc and --private-terminal reach the command's layers") {
    helper::Args a = args();
    a.no_proc = true;
    a.private_terminal = true;
    const HelperPlan p = helper::plan_helper(a, resolved(Mode::ReadOnly), host());
    CHECK(p.no_proc);
    CHECK(p.layers.hide_proc);
    CHECK(p.layers.private_terminal);
}

TEST_CASE("helper plan: sbx's allowlist proxy, with transparent TCP to its port") {
    helper::Args a = args();
    a.proxy_fd = 4;
    a.transparent_tcp = true;
    const HelperPlan p = helper::plan_helper(a, by_name(), host());
    CHECK(p.proxy_fd == 4);
    CHECK(p.limited);
    REQUIRE(p.socks_port);
    CHECK(*p.socks_port == 3128);
    CHECK(p.layers.transparent);
    CHECK(p.layers.socket_files);
    CHECK(!p.bridged_ports);
}

TEST_CASE("helper plan: Codex's managed network makes the network proxy-only") {
    helper::Args a = args();
    a.managed_network = managed();
    const std::vector<std::string_view> env{"HTTP_PROXY=http://127.0.0.1:3128", "ALL_PROXY=socks5h://127.0.0.1:1080"};
    const HelperPlan p = helper::plan_helper(a, resolved(Mode::WorkspaceWrite, Network::Full), host(env));
    CHECK(p.policy.network == Network::Limited);
    CHECK(p.limited);
    REQUIRE(p.bridged_ports);
    CHECK(*p.bridged_ports == std::vector<std::uint16_t>{3128, 1080});
    CHECK(!p.socks_port);
    CHECK(!p.layers.socket_files);  // no UNIX socket bound to a path, as in Codex's helper
    CHECK(!p.host_unix_sockets);

    a.transparent_tcp = true;
    a.managed_network = managed(/*all_unix_sockets=*/true);
    const HelperPlan t = helper::plan_helper(a, resolved(Mode::DangerFullAccess), host(env));
    CHECK(t.policy.mode == Mode::ExternalSandbox);
    CHECK(!t.unsandboxed);
    CHECK(t.socks_port == 1080);
    CHECK(t.layers.transparent);
    CHECK(t.host_unix_sockets);
    CHECK(t.layers.socket_files);

    // Restricted stays restricted: nothing bridged.
    a.transparent_tcp = false;
    const HelperPlan r = helper::plan_helper(a, resolved(Mode::ReadOnly, Network::Restricted), host(env));
    CHECK(r.policy.network == Network::Restricted);
    CHECK(!r.bridged_ports);
    CHECK(r.layers.socket_files);
}

TEST_CASE("helper plan: contradicting options are refused, in the helper's order") {
    helper::Args a = args();
    a.proxy_fd = 4;
    CHECK(test::error_of([&] {
              helper::plan_helper(a, resolved(Mode::ReadOnly), host());
          }).starts_with("arguments: --proxy-fd: the policy has no allow_domains"));
    a.managed_network = managed();
    CHECK(test::error_of([&] {
              helper::plan_helper(a, by_name(), host());
          }).starts_with("arguments: --managed-network and --proxy-fd together"));
    helper::Args t = args();
    t.transparent_tcp = true;
    CHECK(test::error_of([&] {
              helper::plan_helper(t, resolved(Mode::ReadOnly), host());
          }).starts_with("network: --transparent-tcp needs a proxy to carry the TCP"));
    t.managed_network = managed();
    const std::vector<std::string_view> http_only{"HTTP_PROXY=http://127.0.0.1:3128"};
    CHECK(test::error_of([&] {
              helper::plan_helper(t, resolved(Mode::ReadOnly, Network::Full), host(http_only));
          }).starts_with("network: --transparent-tcp: no proxy variable names a SOCKS5 proxy"));
}

TEST_CASE("helper plan: a learning run reaches sbx's proxy with no name allowed, under network limited only") {
    helper::Args a = args();
    a.learn = true;
    a.proxy_fd = 4;
    a.transparent_tcp = true;
    const HelperPlan p = helper::plan_helper(a, resolved(Mode::WorkspaceWrite, Network::Limited), host());
    CHECK(p.learn);
    CHECK(p.proxy_fd == 4);
    REQUIRE(p.socks_port);
    CHECK(p.layers.transparent);
    CHECK(test::error_of([&] {
              helper::plan_helper(a, resolved(Mode::WorkspaceWrite), host());
          }).starts_with("arguments: --proxy-fd: the policy's network is not limited"));
    a.learn = false;
    CHECK(test::error_of([&] {
              helper::plan_helper(a, resolved(Mode::WorkspaceWrite, Network::Limited), host());
          }).starts_with("arguments: --proxy-fd: the policy has no allow_domains"));
}

TEST_CASE("helper plan: --learn needs a policy that reads every file, or --learn-reads") {
    helper::Args a = args();
    a.learn = true;
    const HelperPlan full = helper::plan_helper(a, resolved(Mode::WorkspaceWrite), host());
    CHECK(full.learn);
    CHECK(full.record);
    CHECK(!full.learn_reads);
    CHECK(full.layers.watch == Watch::Everything);
    PolicyInput in;
    in.mode = Mode::WorkspaceWrite;
    in.read_base = ReadBase::Minimal;
    const CanonicalPolicy minimal = resolved(in);
    CHECK(test::error_of([&] {
              helper::plan_helper(a, minimal, host());
          }).starts_with("arguments: --learn: the policy does not read the whole filesystem"));
    a.learn_reads = true;
    const HelperPlan reads = helper::plan_helper(a, minimal, host());
    CHECK(reads.learn);
    CHECK(reads.learn_reads);
    CHECK(reads.layers.watch == Watch::Reads);
    helper::Args alone = args();
    alone.learn_reads = true;
    CHECK(test::error_of([&] {
              helper::plan_helper(alone, minimal, host());
          }).starts_with("arguments: --learn-reads without --learn"));
}

TEST_CASE("helper plan: --mask-file needs the filesystem view, and not the learning one") {
    helper::Args a = args();
    a.mask_files = {{5, "/work/repo/.npmrc"}};
    CHECK(plan_helper(a, resolved(Mode::WorkspaceWrite), host()).mask_files == a.mask_files);
    CHECK(plan_helper(a, resolved(Mode::ReadOnly), host()).mask_files == a.mask_files);
    CHECK_THROWS_WITH(plan_helper(a, resolved(Mode::ExternalSandbox), host()), Catch::Contains("no filesystem view"));
    a.learn = true;
    CHECK_THROWS_WITH(plan_helper(a, resolved(Mode::WorkspaceWrite), host()), Catch::Contains("learning run"));
}

TEST_CASE("helper plan: --mask-file reads each descriptor once, none of the helper's own, each path once") {
    helper::Args a = args();
    a.mask_files = {{5, "/work/repo/.npmrc"}, {6, "/work/repo/.netrc"}};
    CHECK(plan_helper(a, resolved(Mode::WorkspaceWrite), host()).mask_files.size() == 2);
    a.mask_files[1].first = 5;
    CHECK_THROWS_WITH(plan_helper(a, resolved(Mode::WorkspaceWrite), host()),
                      Catch::Contains("descriptor 5 is given twice"));
    a.mask_files[1] = {6, "/work/repo/.npmrc"};
    CHECK_THROWS_WITH(plan_helper(a, resolved(Mode::WorkspaceWrite), host()),
                      Catch::Contains("/work/repo/.npmrc is given twice"));
    a.mask_files.pop_back();
    a.status_fd = 5;
    CHECK_THROWS_WITH(plan_helper(a, resolved(Mode::WorkspaceWrite), host()),
                      Catch::Contains("descriptor 5 is --status-fd's or --proxy-fd's"));
}
