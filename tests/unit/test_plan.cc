#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "fake_fs.h"
#include "platform/plan.h"

using namespace sbx;

namespace {

CanonicalPolicy policy(Mode m, std::optional<Network> n = std::nullopt) {
    test::FakeFs fs;
    fs.dir("/work/repo").dir("/tmp").dir("/dev/shm").file("/dev/null");
    PolicyInput in;
    in.mode = m;
    in.network = n;
    return resolve(in, fs.env("/work/repo"));
}

CommandSpec command() {
    CommandSpec c;
    c.argv = {"make", "-j2", "test"};
    c.cwd = "/work/repo/sub";
    c.set_env = {{"A", "1"}, {"SBX_SANDBOX", "forged"}};
    c.unset_env = {"SECRET"};
    return c;
}

const PlatformPaths kPaths{"/usr/libexec/codex-linux-sandbox", "/usr/bin/sandbox-exec"};

}  // namespace

TEST_CASE("Linux: the helper's argv carries the canonical policy and the command after --") {
    CanonicalPolicy p = policy(Mode::WorkspaceWrite);
    ExecPlan e = plan(p, command(), TargetOs::Linux, kPaths);
    REQUIRE(e.argv.size() == 14);
    CHECK(e.argv[0] == "/usr/libexec/codex-linux-sandbox");
    CHECK(e.argv[1] == "--sandbox-policy-cwd");
    CHECK(e.argv[2] == "/work/repo");
    CHECK(e.argv[3] == "--command-cwd");
    CHECK(e.argv[4] == "/work/repo/sub");
    CHECK(e.argv[5] == "--status-fd");  // the supervisor opens the pipe there
    CHECK(e.argv[6] == "3");
    CHECK(e.report_fd == 3);
    CHECK(e.argv[7] == "--record-network");  // restricted: each network attempt with its destination
    CHECK(e.argv[8] == "--sandbox-policy");
    CHECK(nlohmann::json::parse(e.argv[9]) == to_json(p));
    CHECK(std::vector<std::string>(e.argv.begin() + 10, e.argv.end()) ==
          std::vector<std::string>{"--", "make", "-j2", "test"});
    CHECK(e.sandbox == SandboxKind::Linux);
    CHECK(e.cwd == "/work/repo/sub");
    CHECK(e.env_add.at("A") == "1");
    CHECK(e.env_add.at("SBX_SANDBOX") == "linux");  // --env cannot forge the marker
    CHECK(e.env_add.at("SBX_SANDBOX_NETWORK_DISABLED") == "1");
    CHECK(e.env_remove == std::vector<std::string>{"SECRET"});
}

TEST_CASE(
    "Linux: --record-denials reaches the helper only when asked; under restricted and limited --record-network else") {
    CanonicalPolicy p = policy(Mode::WorkspaceWrite);
    CommandSpec c = command();
    const auto plain = plan(p, c, TargetOs::Linux, kPaths).argv;
    CHECK(std::find(plain.begin(), plain.end(), "--record-denials") == plain.end());
    CHECK(plain[7] == "--record-network");
    p.network = Network::Limited;
    const auto limited = plan(p, c, TargetOs::Linux, kPaths).argv;
    CHECK(limited.size() == plain.size());
    CHECK(limited[7] == "--record-network");  // what leaves the sandbox's loopback
    p.network = Network::Full;
    const auto full = plan(p, c, TargetOs::Linux, kPaths).argv;
    CHECK(full.size() == plain.size() - 1);
    CHECK(std::find(full.begin(), full.end(), "--record-network") == full.end());
    p.network = Network::Restricted;
    c.record_denials = true;
    const auto recorded = plan(p, c, TargetOs::Linux, kPaths).argv;
    REQUIRE(recorded.size() == plain.size());
    CHECK(recorded[7] == "--record-denials");  // the network attempts too
    CHECK(recorded[8] == "--sandbox-policy");
}

TEST_CASE("every sandboxed mode goes through the helper; danger-full-access runs the command itself") {
    for (Mode m : {Mode::ReadOnly, Mode::WorkspaceWrite, Mode::ExternalSandbox})
        CHECK(plan(policy(m), command(), TargetOs::Linux, kPaths).argv[0] == kPaths.linux_helper);
    ExecPlan e = plan(policy(Mode::DangerFullAccess), command(), TargetOs::Linux, kPaths);
    CHECK(e.argv == std::vector<std::string>{"make", "-j2", "test"});
    CHECK(e.report_fd == -1);
    CHECK(e.sandbox == SandboxKind::None);
    CHECK(e.env_add.at("SBX_SANDBOX") == "none");
    CHECK(e.env_add.count("SBX_SANDBOX_NETWORK_DISABLED") == 0);
    CHECK(std::count(e.env_remove.begin(), e.env_remove.end(), "SBX_SANDBOX_NETWORK_DISABLED") == 1);
}

TEST_CASE("the network marker follows the network level") {
    CHECK(plan(policy(Mode::ReadOnly, Network::Limited), command(), TargetOs::Linux, kPaths)
              .env_add.count("SBX_SANDBOX_NETWORK_DISABLED") == 1);
    CHECK(plan(policy(Mode::ReadOnly, Network::Full), command(), TargetOs::Linux, kPaths)
              .env_add.count("SBX_SANDBOX_NETWORK_DISABLED") == 0);
}

TEST_CASE("restricted: the package managers' retries off, unless --env sets them") {
    const auto defaults = [](Network net, Mode mode = Mode::WorkspaceWrite, CommandSpec c = command()) {
        return plan(policy(mode, net), c, TargetOs::Linux, kPaths).env_default;
    };
    CHECK(defaults(Network::Restricted) == no_network_retry_env());
    CHECK(defaults(Network::Restricted).at("npm_config_fetch_retries") == "0");
    CHECK(defaults(Network::Limited).empty());
    CHECK(defaults(Network::Full).empty());
    CHECK(defaults(Network::Full, Mode::DangerFullAccess).empty());
    CommandSpec c = command();
    c.set_env["PIP_RETRIES"] = "3";
    const auto mine = defaults(Network::Restricted, Mode::WorkspaceWrite, c);
    CHECK(mine.count("PIP_RETRIES") == 0);
    CHECK(mine.count("CARGO_NET_RETRY") == 1);
}

TEST_CASE("macOS: sandbox-exec by its absolute path, never PATH") {
    ExecPlan e = plan(policy(Mode::WorkspaceWrite), command(), TargetOs::MacOs, kPaths);
    CHECK(e.argv.at(0) == "/usr/bin/sandbox-exec");
    CHECK(e.argv.at(1) == "-p");
    CHECK(e.sandbox == SandboxKind::MacosSeatbelt);
    CHECK(e.env_add.at("SBX_SANDBOX") == "macos-seatbelt");
    auto dashdash = std::find(e.argv.begin(), e.argv.end(), "--");
    REQUIRE(dashdash != e.argv.end());
    CHECK(std::vector<std::string>(dashdash + 1, e.argv.end()) == std::vector<std::string>{"make", "-j2", "test"});
}

TEST_CASE("macOS refuses network limited rather than reach the host's localhost") {
    CHECK_THROWS_WITH(plan(policy(Mode::WorkspaceWrite, Network::Limited), command(), TargetOs::MacOs, kPaths),
                      Catch::StartsWith("--network: limited cannot be enforced on macOS"));
    CHECK(plan(policy(Mode::WorkspaceWrite, Network::Full), command(), TargetOs::MacOs, kPaths).sandbox ==
          SandboxKind::MacosSeatbelt);
}

TEST_CASE("each sandbox kind has the name of the JSON result and $SBX_SANDBOX") {
    CHECK(to_string(SandboxKind::None) == "none");
    CHECK(to_string(SandboxKind::Linux) == "linux");
    CHECK(to_string(SandboxKind::MacosSeatbelt) == "macos-seatbelt");
}

TEST_CASE("Linux: a learning run learns names through sbx's proxy, unless the network is full") {
    CommandSpec c = command();
    c.learn = true;
    for (Network n : {Network::Restricted, Network::Limited}) {
        const CanonicalPolicy p = policy(Mode::WorkspaceWrite, n);
        CHECK(by_name(p, c));
        const ExecPlan e = plan(p, c, TargetOs::Linux, kPaths);
        CHECK(e.proxy_fd == kHelperProxyFd);
        CHECK(e.env_add.count("HTTPS_PROXY") == 1);
        const auto at = std::find(e.argv.begin(), e.argv.end(), "--proxy-fd");
        REQUIRE(at != e.argv.end());
        CHECK(*(at + 2) == "--transparent-tcp");
        // The helper gets -n limited's private network; the policy's files as they are.
        const auto policy_at = std::find(e.argv.begin(), e.argv.end(), "--sandbox-policy");
        REQUIRE(policy_at != e.argv.end());
        CanonicalPolicy sent = p;
        sent.network = Network::Limited;
        CHECK(nlohmann::json::parse(*(policy_at + 1)) == to_json(sent));
        CHECK(e.env_add.at("SBX_SANDBOX_NETWORK_DISABLED") == "1");
        // --learn records as --record-denials does: neither that nor --record-network beside it.
        REQUIRE(e.argv.size() > 7);
        CHECK(e.argv[7] == "--learn");
        CHECK(e.argv[8] == "--proxy-fd");
        c.learn_reads = true;
        const ExecPlan reads = plan(p, c, TargetOs::Linux, kPaths);
        CHECK(reads.argv[7] == "--learn");
        CHECK(reads.argv[8] == "--learn-reads");
        CHECK(reads.argv[9] == "--proxy-fd");
        c.learn_reads = false;
    }
    const CanonicalPolicy full = policy(Mode::WorkspaceWrite, Network::Full);
    CHECK(!by_name(full, c));
    CHECK(plan(full, c, TargetOs::Linux, kPaths).proxy_fd < 0);
    c.learn = false;
    CHECK(!by_name(policy(Mode::WorkspaceWrite, Network::Limited), c));
}
