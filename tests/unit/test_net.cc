// Network by name (net/domain.h): patterns, decisions by name and by
// address, the policy keys, `sbx check --connect` and the plan.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "denial/fix.h"  // a refusal's fix (fix_of)
#include "error_of.h"
#include "fake_fs.h"
#include "net/domain.h"
#include "platform/plan.h"
#include "policy/check.h"
#include "policy/policy.h"

using namespace sbx;
using namespace sbx::net;
using sbx::test::error_of;
using sbx::test::FakeFs;

namespace {

FakeFs machine() {
    FakeFs fs;
    fs.dir("/work/repo").dir("/tmp").dir("/dev/shm");
    fs.file("/dev/null");
    return fs;
}

PolicyInput with_domains(std::vector<std::string> allow, std::vector<std::string> deny = {}) {
    PolicyInput in{};
    for (auto& a : allow) in.allow_domains.push_back({a, "--allow-domain"});
    for (auto& d : deny) in.deny_domains.push_back({d, "--deny-domain"});
    return in;
}

DomainRules rules(std::vector<std::string> allow, std::vector<std::string> deny = {}) {
    DomainRules r;
    for (auto& a : allow) r.allow.push_back(normalize_pattern(a, "--allow-domain"));
    for (auto& d : deny) r.deny.push_back(normalize_pattern(d, "--deny-domain"));
    return r;
}

}  // namespace

TEST_CASE("patterns are written in one spelling") {
    CHECK(normalize_pattern("Example.COM.", "x") == "example.com");
    CHECK(normalize_pattern("*.Example.com", "x") == "*.example.com");
    CHECK(normalize_pattern("[::1]", "x") == "::1");
    CHECK(normalize_pattern("127.0.0.1", "x") == "127.0.0.1");
    CHECK(normalize_pattern("10.1.2.3/8", "x") == "10.0.0.0/8");
    CHECK(normalize_pattern("FD00::1/8", "x") == "fd00::/8");
    CHECK(normalize_pattern("my_host-1.internal", "x") == "my_host-1.internal");
}

TEST_CASE("bad patterns are refused with the source and the reason") {
    CHECK(error_of([] { normalize_pattern("", "--allow-domain"); }).starts_with("--allow-domain: '' is empty"));
    CHECK(error_of([] { normalize_pattern("*", "--allow-domain"); }) ==
          "--allow-domain: '*' would allow every name; use -n full for the whole network");
    CHECK(error_of([] { normalize_pattern("a.com:0", "f.json: key 'allow_domains'"); }) ==
          "f.json: key 'allow_domains': 'a.com:0' has a port that is not 1-65535 (write HOST:PORT, [IPv6]:PORT, "
          "RANGE:PORT)");
    CHECK(error_of([] { normalize_pattern("a.com:https", "x"); }).find("not 1-65535") != std::string::npos);
    CHECK(error_of([] { normalize_pattern("[::1]x", "x"); }).find("not 1-65535") != std::string::npos);
    CHECK(error_of([] { normalize_pattern("a*.com", "x"); }).find("leading '*.'") != std::string::npos);
    CHECK(error_of([] { normalize_pattern("exa mple.com", "x"); }).find("is not a host name") != std::string::npos);
    CHECK(error_of([] { normalize_pattern("10.0.0.0/33", "x"); }).find("is not a host name") != std::string::npos);
    CHECK(error_of([] { normalize_pattern("a..com", "x"); }).find("is not a host name") != std::string::npos);
}

TEST_CASE("ports in patterns (issue 36): HOST:PORT, [IPv6]:PORT, RANGE:PORT; none is every port") {
    CHECK(normalize_pattern("Example.COM.:443", "x") == "example.com:443");
    CHECK(normalize_pattern("*.example.com:8443", "x") == "*.example.com:8443");
    CHECK(normalize_pattern("[::1]:8080", "x") == "[::1]:8080");
    CHECK(normalize_pattern("192.0.2.7:22", "x") == "192.0.2.7:22");
    CHECK(normalize_pattern("10.1.2.3/8:22", "x") == "10.0.0.0/8:22");
    CHECK(normalize_pattern("fd00::1/8:22", "x") == "fd00::/8:22");
    CHECK(normalize_pattern("2001:db8::1", "x") == "2001:db8::1");  // no port: an IPv6 address
    // A deny with a port refuses that port only.
    const DomainRules r =
        rules({"github.com", "api.example.com:443", "[::1]:8080", "10.0.0.0/8:22"}, {"github.com:22"});
    CHECK(decide_host(r, "github.com", 443).allowed);
    const Decision ssh = decide_host(r, "github.com", 22);
    CHECK_FALSE(ssh.allowed);
    CHECK(ssh.rule == "deny-domain github.com:22");
    CHECK(decide_host(r, "api.example.com", 443).rule == "allow-domain api.example.com:443");
    CHECK_FALSE(decide_host(r, "api.example.com", 80).allowed);
    CHECK_FALSE(decide_host(r, "api.example.com").allowed);  // port not known: only portless patterns apply
    CHECK(decide_host(r, "::1", 8080).allowed);
    CHECK_FALSE(decide_host(r, "::1", 8081).allowed);
    CHECK(decide_host(r, "10.1.1.1", 22).allowed);
    CHECK_FALSE(decide_host(r, "10.1.1.1", 23).allowed);
    CHECK(decide_address(rules({"x.org", "127.0.0.1:5432"}), "x.org", *parse_address("127.0.0.1"), {}, 5432).allowed);
    CHECK_FALSE(
        decide_address(rules({"x.org", "127.0.0.1:5432"}), "x.org", *parse_address("127.0.0.1"), {}, 5433).allowed);
}

TEST_CASE("reasons on deny patterns (issue 36): shown in the rule and the fix") {
    CHECK(normalize_pattern("GitHub.com:22=use an https remote", "x", true) == "github.com:22=use an https remote");
    CHECK(error_of([] { normalize_pattern("a.com=why", "--allow-domain"); }) ==
          "--allow-domain: 'a.com=why' has a reason (=TEXT); reasons are for deny patterns");
    CHECK(error_of([] { normalize_pattern("a.com=", "x", true); }).find("1 to 200 printable") != std::string::npos);
    CHECK(error_of([] { normalize_pattern("a.com=a\nb", "x", true); }).find("printable") != std::string::npos);
    DomainRules r = rules({"github.com"});
    r.deny.push_back(normalize_pattern("github.com:22=use an https remote", "--deny-domain", true));
    const Decision d = decide_host(r, "github.com", 22);
    CHECK_FALSE(d.allowed);
    CHECK(d.rule == "deny-domain github.com:22 (use an https remote)");
    CHECK(fix_of(d).text() == "no flag suggested: --deny-domain github.com:22 refuses it: use an https remote");
    CHECK(decide_host(r, "github.com", 443).allowed);
}

TEST_CASE("names: exact, *.NAME for the names below only, deny wins") {
    const DomainRules r = rules({"example.com", "*.pkg.dev", "*.evil.org"}, {"bad.pkg.dev"});
    CHECK(decide_host(r, "example.com").allowed);
    CHECK(decide_host(r, "Example.Com.").allowed);
    CHECK(decide_host(r, "example.com").rule == "allow-domain example.com");
    CHECK_FALSE(decide_host(r, "www.example.com").allowed);
    CHECK(decide_host(r, "a.pkg.dev").rule == "allow-domain *.pkg.dev");
    CHECK(decide_host(r, "a.b.pkg.dev").allowed);
    const Decision apex = decide_host(r, "pkg.dev");
    CHECK_FALSE(apex.allowed);
    CHECK(apex.rule == "no allow-domain matches pkg.dev");
    CHECK(fix_of(apex).text() == "--allow-domain pkg.dev");
    CHECK_FALSE(decide_host(r, "xpkg.dev").allowed);
    const Decision denied = decide_host(r, "bad.pkg.dev");
    CHECK_FALSE(denied.allowed);
    CHECK(denied.rule == "deny-domain bad.pkg.dev");
    CHECK(fix_of(denied).text().starts_with("no flag suggested: "));
    // A deny wildcard beats an exact allow.
    const DomainRules r2 = rules({"a.example.com"}, {"*.example.com"});
    CHECK(decide_host(r2, "a.example.com").rule == "deny-domain *.example.com");
}

TEST_CASE("IP literals pass only when an address or range pattern covers them") {
    const DomainRules r = rules({"example.com", "127.0.0.1", "10.0.0.0/8", "::1"}, {"10.9.0.0/16"});
    CHECK(decide_host(r, "127.0.0.1").allowed);
    CHECK(decide_host(r, "[::1]").allowed);
    CHECK(decide_host(r, "10.1.2.3").rule == "allow-domain 10.0.0.0/8");
    CHECK(decide_host(r, "10.9.1.1").rule == "deny-domain 10.9.0.0/16");
    const Decision d = decide_host(r, "93.184.215.14");
    CHECK_FALSE(d.allowed);
    CHECK(d.rule == "no allow-domain names the address 93.184.215.14");
    CHECK(fix_of(d).text() == "--allow-domain 93.184.215.14");
    // A name pattern never covers an address, nor an address pattern a name.
    CHECK_FALSE(decide_host(rules({"*.0.0.1"}), "127.0.0.1").allowed);
}

TEST_CASE("addresses: special ranges only when allowed as such (DNS rebinding)") {
    auto addr = [](const char* s) { return *parse_address(s); };
    CHECK(special_range(addr("127.0.0.53")) == "loopback");
    CHECK(special_range(addr("::ffff:127.0.0.1")) == "loopback");
    CHECK(special_range(addr("192.168.1.1")) == "private");
    CHECK(special_range(addr("172.31.0.1")) == "private");
    CHECK(special_range(addr("172.32.0.1")) == "");
    CHECK(special_range(addr("169.254.169.254")) == "link-local");
    CHECK(special_range(addr("0.0.0.0")) == "unspecified");
    CHECK(special_range(addr("::")) == "unspecified");
    CHECK(special_range(addr("fe80::1")) == "link-local");
    CHECK(special_range(addr("fd12::1")) == "unique-local");
    CHECK(special_range(addr("100.64.0.1")) == "shared");
    CHECK(special_range(addr("8.8.8.8")) == "");
    CHECK(special_range(addr("2606:4700::1")) == "");

    const DomainRules r = rules({"example.com", "localhost"});
    CHECK(decide_address(r, "example.com", addr("93.184.215.14")).allowed);
    const Decision d = decide_address(r, "localhost", addr("127.0.0.1"));
    CHECK_FALSE(d.allowed);
    CHECK(d.rule == "localhost resolves to 127.0.0.1, a loopback address");
    CHECK(fix_of(d).text() == "--allow-domain 127.0.0.1");
    CHECK(decide_address(rules({"localhost", "127.0.0.0/8"}), "localhost", addr("127.0.0.1")).allowed);
    CHECK(decide_address(rules({"x.org"}, {"93.184.0.0/16"}), "x.org", addr("93.184.215.14")).rule ==
          "deny-domain 93.184.0.0/16");
}

TEST_CASE("addresses: the clouds' metadata endpoints, IPv4 carried in IPv6, the host's own (issue 36)") {
    auto addr = [](const char* s) { return *parse_address(s); };
    // Metadata endpoints outside link-local (169.254.169.254 is link-local already).
    CHECK(special_range(addr("168.63.129.16")) == "cloud-metadata");
    CHECK(special_range(addr("192.0.0.192")) == "cloud-metadata");
    CHECK(special_range(addr("fd00:ec2::254")) == "cloud-metadata");
    CHECK(special_range(addr("168.63.129.17")) == "");
    CHECK(special_range(addr("100.100.100.200")) == "shared");  // Alibaba's, in 100.64/10
    // IPv4 embedded in IPv6: the embedded address's range.
    CHECK(special_range(addr("64:ff9b::7f00:1")) == "loopback");       // NAT64 of 127.0.0.1
    CHECK(special_range(addr("64:ff9b::a9fe:a9fe")) == "link-local");  // of 169.254.169.254
    CHECK(special_range(addr("64:ff9b::808:808")) == "");              // of 8.8.8.8: public
    CHECK(special_range(addr("2002:7f00:1::1")) == "loopback");        // 6to4 of 127.0.0.1
    CHECK(special_range(addr("2002:c0a8:101::1")) == "private");       // of 192.168.1.1
    CHECK(special_range(addr("2002:808:808::1")) == "");
    CHECK(special_range(addr("::7f00:1")) == "loopback");  // IPv4-compatible
    CHECK(special_range(addr("::a00:1")) == "private");
    CHECK(special_range(addr("::ffff:10.0.0.1")) == "private");  // mapped: IPv4 already
    CHECK(special_range(addr("64:ff9b:1::a00:1")) == "nat64");
    CHECK(special_range(addr("2001:0:4136:e378::1")) == "teredo");
    CHECK(special_range(addr("2001:db8::1")) == "");

    // The host's own interface addresses: refused unless an allow pattern covers them.
    const std::vector<Address> own{addr("203.0.113.5"), addr("2001:db8::5")};
    const DomainRules r = rules({"example.com"});
    const Decision d = decide_address(r, "example.com", addr("203.0.113.5"), own);
    CHECK_FALSE(d.allowed);
    CHECK(d.rule == "example.com resolves to 203.0.113.5, a host-interface address");
    CHECK(fix_of(d).text() == "--allow-domain 203.0.113.5");
    CHECK_FALSE(decide_address(r, "example.com", addr("2001:db8::5"), own).allowed);
    CHECK(decide_address(r, "example.com", addr("203.0.113.6"), own).allowed);
    CHECK(decide_address(rules({"example.com", "203.0.113.0/24"}), "example.com", addr("203.0.113.5"), own).allowed);
    CHECK(decide_address(r, "example.com", addr("64:ff9b::7f00:1"), own).rule ==
          "example.com resolves to 64:ff9b::7f00:1, a loopback address");
}

TEST_CASE("the command's proxy variables") {
    const auto env = proxy_environment(3128);
    CHECK(env.at("HTTP_PROXY") == "http://127.0.0.1:3128");
    CHECK(env.at("https_proxy") == "http://127.0.0.1:3128");
    CHECK(env.at("ALL_PROXY") == "socks5h://127.0.0.1:3128");
    CHECK(env.at("NO_PROXY") == "localhost,127.0.0.1,::1");
    CHECK(env.at("npm_config_https_proxy") == "http://127.0.0.1:3128");
    CHECK(env.at("PIP_PROXY") == "http://127.0.0.1:3128");
}

TEST_CASE("policy: an allowlist implies network limited; full and restricted are refused") {
    FakeFs fs = machine();
    const Environment env = fs.env("/work/repo");
    CanonicalPolicy p = resolve(with_domains({"Example.com", "*.npmjs.org", "example.com"}, {"bad.npmjs.org"}), env);
    CHECK(p.network == Network::Limited);
    CHECK(p.allow_domains == std::vector<std::string>{"example.com", "*.npmjs.org"});
    CHECK(p.deny_domains == std::vector<std::string>{"bad.npmjs.org"});
    CHECK(p.by_name());

    PolicyInput full = with_domains({"example.com"});
    full.network = Network::Full;
    CHECK(error_of([&] { resolve(full, env); }) ==
          "--network: network 'full' cannot go with an allowlist (--allow-domain), which runs the command in the "
          "private network of -n limited with sbx's proxy; drop -n full");
    PolicyInput restricted = with_domains({"example.com"});
    restricted.network = Network::Restricted;
    CHECK(error_of([&] { resolve(restricted, env); }).find("drop -n restricted") != std::string::npos);
    PolicyInput limited = with_domains({"example.com"});
    limited.network = Network::Limited;
    CHECK(resolve(limited, env).network == Network::Limited);
    CHECK(error_of([&] {
              resolve(with_domains({}, {"x.com"}), env);
          }).starts_with("--deny-domain: a deny-domain without an allow-domain allows no name"));
    PolicyInput danger = with_domains({"example.com"});
    danger.mode = Mode::DangerFullAccess;
    CHECK(error_of([&] { resolve(danger, env); }).find("use -p external-sandbox") != std::string::npos);
    CHECK(error_of([&] { resolve(with_domains({"*"}), env); }).starts_with("--allow-domain: '*'"));
}

TEST_CASE("policy JSON: the keys round-trip, and are absent without an allowlist") {
    FakeFs fs = machine();
    const Environment env = fs.env("/work/repo");
    const CanonicalPolicy p = resolve(with_domains({"example.com"}, {"bad.example.com"}), env);
    const std::string text = to_json_text(p);
    CHECK(parse_policy_text(text, "p.json", env) == p);
    CHECK(to_json_text(parse_policy_text(text, "p.json", env)) == text);
    CHECK_FALSE(to_json(resolve(PolicyInput{}, env)).contains("allow_domains"));
    const CanonicalPolicy from_file =
        parse_policy_text(R"({"allow_domains": ["*.Crates.io"], "deny_domains": []})", "f.json", env);
    CHECK(from_file.allow_domains == std::vector<std::string>{"*.crates.io"});
    CHECK(from_file.network == Network::Limited);
    CHECK(parse_policy_text(R"({"allow_domains": ["A.com:443"]})", "f.json", env).allow_domains ==
          std::vector<std::string>{"a.com:443"});
    CHECK(error_of([&] {
              parse_policy_text(R"({"allow_domains": ["a.com:99999"]})", "f.json", env);
          }).starts_with("f.json: key 'allow_domains': 'a.com:99999' has a port that is not 1-65535"));
    CHECK(error_of([&] {
              parse_policy_text(R"({"allow_domains": ["a.com"], "network": "full"})", "f.json", env);
          }).starts_with("f.json: key 'network': network 'full' cannot go with an allowlist"));
}

TEST_CASE("sbx check --connect answers by name") {
    FakeFs fs = machine();
    const Environment env = fs.env("/work/repo");
    const CanonicalPolicy p = resolve(with_domains({"*.example.com"}, {"bad.example.com"}), env);
    Verdict v = check_access(p, Access::Connect, "a.example.com:443", env);
    CHECK(v.allowed);
    CHECK(v.rule.starts_with("allow-domain *.example.com, through sbx's proxy"));
    v = check_access(p, Access::Connect, "example.com:443", env);
    CHECK_FALSE(v.allowed);
    CHECK(v.rule == "no allow-domain matches example.com");  // the fix is denial/fix.h's
    v = check_access(p, Access::Connect, "bad.example.com:80", env);
    CHECK_FALSE(v.allowed);
    CHECK(v.rule.starts_with("deny-domain bad.example.com"));
    // The host's loopback stays out of reach, as under -n limited.
    CHECK_FALSE(check_access(p, Access::Connect, "127.0.0.1:8080", env).allowed);
}

TEST_CASE("the plan: the helper gets --proxy-fd, the command the proxy variables") {
    FakeFs fs = machine();
    const Environment env = fs.env("/work/repo");
    const CanonicalPolicy p = resolve(with_domains({"example.com"}), env);
    CommandSpec c;
    c.argv = {"curl", "https://example.com/"};
    c.cwd = "/work/repo";
    c.set_env["HTTPS_PROXY"] = "http://mine:1";
    const ExecPlan plan = sbx::plan(p, c, TargetOs::Linux, PlatformPaths{"/h", "/usr/bin/sandbox-exec"});
    CHECK(plan.proxy_fd == kHelperProxyFd);
    const auto at = std::find(plan.argv.begin(), plan.argv.end(), "--proxy-fd");
    REQUIRE(at != plan.argv.end());
    CHECK(*(at + 1) == "4");
    CHECK(plan.env_add.at("HTTP_PROXY") == "http://127.0.0.1:3128");
    CHECK(plan.env_add.at("HTTPS_PROXY") == "http://mine:1");  // --env wins
    const ExecPlan without = sbx::plan(resolve(PolicyInput{}, env), c, TargetOs::Linux, PlatformPaths{"/h", ""});
    CHECK(without.proxy_fd == -1);
    CHECK(std::find(without.argv.begin(), without.argv.end(), "--proxy-fd") == without.argv.end());
    CHECK_FALSE(without.env_add.contains("HTTP_PROXY"));
}
