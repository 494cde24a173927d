// Secrets in a policy (issue 36): flags, JSON, resolution, widening.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "error_of.h"
#include "fake_fs.h"
#include "policy/config.h"
#include "policy/policy.h"
#include "policy/secrets.h"

using namespace sbx;
using sbx::test::error_of;
using sbx::test::FakeFs;

namespace {

FakeFs machine() {
    FakeFs fs;
    fs.dir("/work/repo").dir("/tmp").dir("/dev/shm").dir("/home/u");
    fs.file("/dev/null").file("/home/u/.npmrc");
    return fs;
}

PolicyInput with_secret(Secret::Kind kind, const std::string& flag_value, std::vector<std::string> allow = {}) {
    PolicyInput in;
    in.mode = Mode::WorkspaceWrite;
    for (auto& a : allow) in.allow_domains.push_back({a, "--allow-domain"});
    in.secrets.push_back({parse_secret_flag(kind, flag_value, "--secret-x"), "--secret-x " + flag_value});
    return in;
}

}  // namespace

TEST_CASE("--secret-env and --secret-file: NAME@HOST,HOST masks, NAME alone withholds") {
    const Secret masked = parse_secret_flag(Secret::Kind::Env, "GH_TOKEN@api.github.com,*.example.com:443", "f");
    CHECK(masked.name == "GH_TOKEN");
    CHECK(masked.hosts == std::vector<std::string>{"api.github.com", "*.example.com:443"});
    CHECK(parse_secret_flag(Secret::Kind::Env, "NPM_TOKEN", "f").hosts.empty());
    // A path may hold '@': the hosts follow the last one.
    const Secret file = parse_secret_flag(Secret::Kind::File, "/home/u/a@b/.npmrc@registry.npmjs.org", "f");
    CHECK(file.name == "/home/u/a@b/.npmrc");
    CHECK(file.hosts == std::vector<std::string>{"registry.npmjs.org"});
    CHECK_THROWS_AS(parse_secret_flag(Secret::Kind::Env, "@x.com", "f"), Error);
    CHECK_THROWS_AS(parse_secret_flag(Secret::Kind::Env, "A@", "f"), Error);
    CHECK_THROWS_AS(parse_secret_flag(Secret::Kind::Env, "A@x.com,,y.com", "f"), Error);
}

TEST_CASE("a masked secret's hosts must be admitted by the allowlist, in a sandboxed filesystem") {
    FakeFs fs = machine();
    const Environment env = fs.env("/work/repo");
    const CanonicalPolicy p = resolve(with_secret(Secret::Kind::Env, "T@API.github.com.", {"*.github.com"}), env);
    REQUIRE(p.secrets.size() == 1);
    CHECK(p.secrets[0].hosts == std::vector<std::string>{"api.github.com"});  // normalised
    CHECK(p.masks_secrets());
    CHECK(p.network == Network::Limited);
    CHECK_THAT(error_of([&] { resolve(with_secret(Secret::Kind::Env, "T@evil.com", {"*.github.com"}), env); }),
               Catch::Contains("add --allow-domain evil.com"));
    CHECK_THAT(error_of([&] { resolve(with_secret(Secret::Kind::Env, "T@evil.com"), env); }),
               Catch::Contains("the allowlist does not admit"));
    // A port: the allowlist must admit that port.
    CHECK_NOTHROW(resolve(with_secret(Secret::Kind::Env, "T@a.com:443", {"a.com:443"}), env));
    CHECK_THROWS_AS(resolve(with_secret(Secret::Kind::Env, "T@a.com", {"a.com:443"}), env), Error);
    // A wildcard host is checked by a name below it.
    CHECK_NOTHROW(resolve(with_secret(Secret::Kind::Env, "T@*.github.com", {"*.github.com"}), env));
    CHECK_THROWS_AS(resolve(with_secret(Secret::Kind::Env, "T@*.github.com", {"github.com"}), env), Error);
    PolicyInput external = with_secret(Secret::Kind::Env, "T@a.com", {"a.com"});
    external.mode = Mode::ExternalSandbox;
    CHECK_THAT(error_of([&] { resolve(external, env); }), Catch::Contains("leaves the filesystem open"));
    CHECK_THAT(error_of([&] { resolve(with_secret(Secret::Kind::Env, "1BAD"), env); }),
               Catch::Contains("not an environment variable's name"));
}

TEST_CASE("a withheld file is a deny entry; withheld wins over masked; masked hosts accumulate") {
    FakeFs fs = machine();
    const Environment env = fs.env("/work/repo");
    PolicyInput in = with_secret(Secret::Kind::File, "~/.npmrc");
    Environment home = env;
    home.home = "/home/u";
    const CanonicalPolicy p = resolve(in, home);
    REQUIRE(p.secrets.size() == 1);
    CHECK(p.secrets[0].name == "/home/u/.npmrc");
    CHECK(!p.secrets[0].masked());
    CHECK(decide_path(p, "/home/u/.npmrc").access == FsAccess::Deny);

    PolicyInput both = with_secret(Secret::Kind::Env, "T@a.com", {"a.com", "b.com"});
    both.secrets.push_back({parse_secret_flag(Secret::Kind::Env, "T@b.com", "f"), "f"});
    CHECK(resolve(both, env).secrets[0].hosts == std::vector<std::string>{"a.com", "b.com"});
    both.secrets.push_back({parse_secret_flag(Secret::Kind::Env, "T", "f"), "f"});
    CHECK(!resolve(both, env).secrets[0].masked());
}

TEST_CASE("secrets in JSON: read, written, read back; bad shapes refused") {
    FakeFs fs = machine();
    Environment env = fs.env("/work/repo");
    env.home = "/home/u";
    const std::string text = R"J({"mode": "workspace-write", "allow_domains": ["registry.npmjs.org"],
        "secrets": [{"env": "NPM_TOKEN", "hosts": ["registry.npmjs.org"]},
                    {"file": "~/.npmrc", "mode": "mask", "hosts": ["registry.npmjs.org"], "extract": "_authToken=(\\S+)"},
                    {"env": "AWS_SECRET_ACCESS_KEY", "mode": "deny"}],
        "tls_passthrough": ["pinned.example.com"]})J";
    const CanonicalPolicy p = resolve(input_from_json_text(text, "p.json"), env);
    REQUIRE(p.secrets.size() == 3);
    CHECK(p.secrets[1].extract == "_authToken=(\\S+)");
    CHECK(p.tls_passthrough == std::vector<std::string>{"pinned.example.com"});
    const nlohmann::json out = to_json(p);
    CHECK(out["secrets"][0] ==
          nlohmann::json{{"env", "NPM_TOKEN"}, {"mode", "mask"}, {"hosts", {"registry.npmjs.org"}}});
    CHECK(out["secrets"][2] == nlohmann::json{{"env", "AWS_SECRET_ACCESS_KEY"}, {"mode", "deny"}});
    CHECK(resolve(input_from_json(out, "again"), env).secrets == p.secrets);
    // Policies without secrets keep their form.
    CHECK(!to_json(resolve(PolicyInput{}, env)).contains("secrets"));

    auto refused = [&](const std::string& secrets) {
        return error_of([&] {
            resolve(
                input_from_json_text(
                    R"({"mode": "workspace-write", "allow_domains": ["a.com"], "secrets": )" + secrets + "}", "p.json"),
                env);
        });
    };
    CHECK_THAT(refused(R"([{"env": "A", "mode": "mask"}])"), Catch::Contains("needs the hosts"));
    CHECK_THAT(refused(R"([{"env": "A", "mode": "deny", "hosts": ["a.com"]}])"), Catch::Contains("reaches no host"));
    CHECK_THAT(refused(R"([{"env": "A", "file": "/x"}])"), Catch::Contains("exactly one of 'env', 'file'"));
    CHECK_THAT(refused(R"([{"env": "A", "hots": ["a.com"]}])"), Catch::Contains("unknown key 'hots'"));
    CHECK_THAT(refused(R"([{"env": "A", "mode": "hide"}])"), Catch::Contains("is not mask or deny"));
    CHECK_THAT(refused(R"J([{"file": "/x", "hosts": ["a.com"], "extract": "("}])J"),
               Catch::Contains("not a regular expression"));
    CHECK_THAT(refused(R"([{"file": "/x", "hosts": ["a.com"], "extract": "token"}])"), Catch::Contains("has no group"));
    CHECK_THAT(refused(R"J([{"env": "A", "hosts": ["a.com"], "extract": "(x)"}])J"),
               Catch::Contains("extract is for files"));
    CHECK_THAT(refused(R"({"env": "A"})"), Catch::Contains("expected a list"));
}

TEST_CASE("a document that masks a secret is read alone without its host's allowlist; the whole policy needs it") {
    FakeFs fs = machine();
    Environment env = fs.env("/work/repo");
    const std::string doc = R"({"secrets": [{"env": "GH_TOKEN", "hosts": ["api.github.com"]}]})";
    // The policy file alone: its allowlist may come from the flags.
    const CheckedPolicy alone = read_policy_text(doc, "--policy-file p.json", env);
    CHECK(alone.policy.secrets.size() == 1);
    // The whole policy: this document merged with the flags' --allow-domain.
    PolicyInput whole = alone.input;
    whole.allow_domains.push_back({"api.github.com", "--allow-domain"});
    CHECK(resolve(whole, env).masks_secrets());
    // Without it, the merged policy is refused, naming the document and the fix.
    CHECK_THAT(error_of([&] { resolve(alone.input, env); }),
               Catch::Contains("--policy-file p.json") && Catch::Contains("add --allow-domain api.github.com"));
    CHECK_THAT(error_of([&] { parse_policy_text(doc, "p.json", env); }), Catch::Contains("does not admit"));
}

TEST_CASE("a layer that masks a secret widens the policy; one that withholds it does not") {
    FakeFs fs = machine();
    const Environment env = fs.env("/work/repo");
    PolicyInput base;
    base.mode = Mode::WorkspaceWrite;
    base.allow_domains.push_back({"a.com", "f"});
    const CanonicalPolicy without = resolve(base, env);
    PolicyInput masked = base;
    masked.secrets.push_back({parse_secret_flag(Secret::Kind::Env, "T@a.com", "f"), "f"});
    const auto w = widenings(without, resolve(masked, env));
    REQUIRE(w.size() == 1);
    CHECK_THAT(w[0], Catch::Contains("secret env T sent to a.com"));
    CHECK(widenings(resolve(masked, env), resolve(masked, env)).empty());
    PolicyInput withheld = base;
    withheld.secrets.push_back({parse_secret_flag(Secret::Kind::Env, "T", "f"), "f"});
    CHECK(widenings(without, resolve(withheld, env)).empty());
}
