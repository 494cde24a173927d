// sbx run --explain (denial/explain.h): the one line that would have allowed
// what was denied, checked against the policy it makes.
#include <catch2/catch.hpp>

#include "denial/explain.h"
#include "fake_fs.h"

using namespace sbx;
using sbx::test::FakeFs;

namespace {

FakeFs machine() {
    FakeFs fs;
    fs.dir("/usr/lib").dir("/etc").dir("/tmp").dir("/dev/shm").dir("/home/u/.npm/_cacache").dir("/home/u/.ssh");
    fs.dir("/w/.git").dir("/opt/a/b");
    fs.file("/dev/null").file("/home/u/.bashrc");
    return fs;
}

Environment env_of(const FakeFs& fs) {
    Environment env = fs.env("/w");
    env.home = "/home/u";
    return env;
}

Denial op(const std::string& operation, const std::string& path) {
    Denial d;
    d.operation = operation;
    (operation == "connect" ? d.address : d.path) = path;
    return d;
}

DenialAnalysis recorded(std::vector<Denial> denials, std::uint64_t omitted = 0) {
    DenialAnalysis a;
    a.recorded = true;
    a.sandbox_denied = true;
    a.denials = std::move(denials);
    a.omitted = omitted;
    return a;
}

// The policy sources of `base` with the fixes' change applied, as sbx run's
// resolver does.
struct Resolver {
    PolicyInput base;
    Environment env;
    CanonicalPolicy operator()(const PolicyDelta& added) const {
        PolicyInput in = base;
        apply(added, in);
        return resolve(in, env);
    }
};

const std::vector<std::string> kCommand{"sh", "-c", "make all"};

// The machine, a policy of `mode` on it, and its resolver.
struct Setup {
    FakeFs fs = machine();
    Environment env = env_of(fs);
    Resolver resolver;
    CanonicalPolicy policy;
    explicit Setup(Mode mode) : resolver{input(mode), env}, policy(resolver({})) {}
    static PolicyInput input(Mode mode) {
        PolicyInput in{};
        in.mode = mode;
        return in;
    }
    Explanation explain(const std::vector<std::string>& invocation, const DenialAnalysis& a) {
        return explain_run({invocation, kCommand, policy, env, std::ref(resolver)}, a);
    }
};

}  // namespace

TEST_CASE("explain: the fixes merged into the user's own invocation") {
    Setup t(Mode::WorkspaceWrite);
    const auto a =
        recorded({op("create", "/home/u/.npm/_cacache/x"), op("write", "/etc/hosts"), op("create", "/etc/sub/f"),
                  op("create", "/w/.git/hooks/x"), op("connect", "10.0.0.1:443")});
    const Explanation e = t.explain({"sbx", "run", "--explain", "-p", "workspace-write", "--json"}, a);
    CHECK(e.argv == std::vector<std::string>{"sbx", "run", "-p", "workspace-write", "--json", "-n", "full", "-w",
                                             "/home/u/.npm", "-w", "/etc", "--unprotect", ".git", "--", "sh", "-c",
                                             "make all"});
    CHECK(e.allowed == 5);
    CHECK(e.not_suggested.empty());
    CHECK(explanation_text(e, 5) ==
          "sbx: explain: the 5 denied operations would have been allowed by: sbx run -p workspace-write --json -n "
          "full -w /home/u/.npm -w /etc --unprotect .git -- sh -c 'make all'\n");
    const auto j = explanation_json(e);
    CHECK(j["line"] ==
          "sbx run -p workspace-write --json -n full -w /home/u/.npm -w /etc --unprotect .git -- sh -c "
          "'make all'");
    CHECK(j["allowed"] == 5);
    CHECK(j["added"].size() == 8);
}

TEST_CASE("explain: -p and -n replace the invocation's own, in every spelling") {
    Setup t(Mode::ReadOnly);
    const auto a = recorded({op("create", "/w/out.o"), op("connect", "192.0.2.1:80")});
    for (const auto& spelled :
         std::vector<std::vector<std::string>>{{"-p", "read-only", "-n", "restricted"},
                                               {"-pread-only", "-nrestricted"},
                                               {"--policy", "read-only", "--network", "restricted"},
                                               {"--policy=read-only", "--network=restricted"}}) {
        std::vector<std::string> invocation{"./sbx", "run"};
        invocation.insert(invocation.end(), spelled.begin(), spelled.end());
        invocation.push_back("-t10s");
        const Explanation e = t.explain(invocation, a);
        CHECK(e.argv == std::vector<std::string>{"./sbx", "run", "-t10s", "-p", "workspace-write", "-n", "full", "--",
                                                 "sh", "-c", "make all"});
    }
}

TEST_CASE("explain: a server's -n limited and a client's -n full give -n full") {
    Setup t(Mode::WorkspaceWrite);
    for (const auto& a : {recorded({op("bind", ""), op("connect", "192.0.2.1:443")}),
                          recorded({op("connect", "192.0.2.1:443"), op("bind", "")})}) {
        const Explanation e = t.explain({"sbx", "run"}, a);
        CHECK(e.added == std::vector<std::string>{"-n", "full"});
        CHECK(e.allowed == 2);
    }
}

TEST_CASE("explain: a -w the new mode makes unnecessary is dropped; one below another too") {
    Setup t(Mode::ReadOnly);
    // Under read-only each fix is "-p workspace-write -w DIR"; workspace-write
    // makes /tmp writable on its own, so -w /tmp/x is not needed.
    const auto a = recorded({op("create", "/tmp/x/y"), op("create", "/opt/a/b/c"), op("create", "/opt/a/d")});
    const Explanation e = t.explain({"sbx", "run"}, a);
    CHECK(e.added == std::vector<std::string>{"-p", "workspace-write", "-w", "/opt/a"});
    CHECK(e.allowed == 3);
}

TEST_CASE("explain: what no flag is suggested for is said, with why; nothing to suggest gives no line") {
    Setup t(Mode::WorkspaceWrite);
    auto a =
        recorded({op("write", "/home/u/.bashrc"), op("write", "/home/u/.ssh/known_hosts"), op("create", "/etc/x")});
    Explanation e = t.explain({"sbx", "run"}, a);
    CHECK(e.added == std::vector<std::string>{"-w", "/etc"});
    REQUIRE(e.not_suggested.size() == 2);
    CHECK(e.not_suggested[0].what == "write /home/u/.bashrc");
    CHECK(e.not_suggested[0].why == "that would make $HOME writable");
    CHECK(explanation_text(e, 3) ==
          "sbx: explain: 1 of the 3 denied operations would have been allowed by: sbx run -w /etc -- sh -c 'make all'\n"
          "sbx: explain: not suggested for write /home/u/.bashrc: that would make $HOME writable\n"
          "sbx: explain: not suggested for write /home/u/.ssh/known_hosts: that would make ~/.ssh writable\n");

    a = recorded({op("write", "/home/u/.bashrc")}, 7);
    e = t.explain({"sbx", "run"}, a);
    CHECK(e.argv.empty());
    CHECK(explanation_json(e)["line"].is_null());
    CHECK(explanation_text(e, 1) ==
          "sbx: explain: no flag is suggested for what was denied\n"
          "sbx: explain: not suggested for write /home/u/.bashrc: that would make $HOME writable\n"
          "sbx: explain: 7 more denied operations were only counted, not looked at\n");
    CHECK(explanation_text(Explanation{}, 0) ==
          "sbx: explain: no denial was recorded (the recorder sees writes and connects; see sbx(1))\n");
}

TEST_CASE("explain: a flag that does not make a policy is not claimed to allow anything") {
    const Setup t(Mode::WorkspaceWrite);
    const auto a = recorded({op("create", "/etc/x")});
    const Explanation e =
        explain_run({{"sbx", "run"},
                     kCommand,
                     t.policy,
                     t.env,
                     [](const PolicyDelta&) -> CanonicalPolicy { throw Error("--writable-root: /etc: refused"); }},
                    a);
    CHECK(e.argv.empty());
    CHECK(e.allowed == 0);
    REQUIRE(e.not_suggested.size() == 1);
    CHECK(e.not_suggested[0].why == "the suggested flags do not make a policy: --writable-root: /etc: refused");
}

TEST_CASE("explain: a lookup's name as --allow-domain, which replaces a -n restricted given") {
    Setup t(Mode::WorkspaceWrite);
    t.resolver.base.network = Network::Restricted;
    t.policy = t.resolver({});
    Denial lookup = op("connect", "10.255.255.53:53");
    lookup.host = "example.com";
    const Explanation e = t.explain({"sbx", "run", "-n", "restricted", "-p", "workspace-write"}, recorded({lookup}));
    CHECK(e.argv == std::vector<std::string>{"sbx", "run", "-p", "workspace-write", "--allow-domain", "example.com",
                                             "--", "sh", "-c", "make all"});
    CHECK(e.allowed == 1);
    CHECK(e.not_suggested.empty());
}
