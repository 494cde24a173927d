// Configuration (issue 35): project policies with relative paths, the
// narrowing rule, the --relative form, trust records, setting origins.
#include <fmt/format.h>
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "error_of.h"
#include "fake_fs.h"
#include "policy/config.h"
#include "util/sha256.h"

using namespace sbx;
using sbx::test::error_of;
using sbx::test::FakeFs;

namespace {

FakeFs machine() {
    FakeFs fs;
    fs.dir("/w/src").dir("/w/.git").dir("/tmp").dir("/dev/shm").dir("/etc").dir("/home/u/.ssh").file("/dev/null");
    fs.link("/w/out", "/etc");
    return fs;
}

const std::string kSource = "/w/.sbx/policy.json";

PolicyInput project(const FakeFs& fs, const std::string& text) {
    return project_input_from_text(text, kSource, "/w", fs.env("/w"));
}

PolicyInput workspace_write() {
    PolicyInput in;
    in.mode = Mode::WorkspaceWrite;
    return in;
}

// base, then base with the project policy merged before the flags.
std::vector<std::string> widen(const FakeFs& fs, const PolicyInput& config, const std::string& text,
                               const PolicyInput& flags = {}) {
    const Environment env = fs.env("/w");
    PolicyInput base = config;
    base.merge(flags);
    PolicyInput combined = config;
    combined.merge(project(fs, text));
    combined.merge(flags);
    for (auto* in : {&base, &combined})
        if (!in->mode && !in->entries) in->mode = Mode::ReadOnly;
    return widenings(resolve(base, env), resolve(combined, env));
}

// The --relative form of `in` resolved in /w: a whole project policy.
std::string relative(const FakeFs& fs, const PolicyInput& in) {
    return relative_json(resolve(in, fs.env("/w"))).dump();
}

PolicyInput with_entry(PolicyInput in, const std::string& path, FsAccess access) {
    in.extra_entries.push_back({{FsTarget::Kind::Path, path}, access, "test"});
    return in;
}

bool any_starts(const std::vector<std::string>& all, const std::string& prefix) {
    return std::any_of(all.begin(), all.end(), [&](const std::string& w) { return w.starts_with(prefix); });
}

}  // namespace

TEST_CASE("sha256 of known vectors (FIPS 180-4)") {
    CHECK(sha256_hex("") == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
    CHECK(sha256_hex("abc") == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    CHECK(sha256_hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq") ==
          "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
    CHECK(sha256_hex(std::string(1000000, 'a')) == "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
    CHECK(sha256_hex(std::string(55, 'x')).size() == 64);  // the padding's edges
    CHECK(sha256_hex(std::string(56, 'x')) != sha256_hex(std::string(57, 'x')));
}

TEST_CASE("the config directory: $XDG_CONFIG_HOME/sbx, else ~/.config/sbx") {
    CHECK(sbx_config_directory("/x/", "/h") == "/x/sbx");
    CHECK(sbx_config_directory("relative", "/h") == "/h/.config/sbx");
    CHECK(sbx_config_directory(nullptr, nullptr).empty());
}

TEST_CASE("a project policy's relative paths are taken from the workspace") {
    FakeFs fs = machine();
    const PolicyInput in = project(fs, R"({"entries":[{"path":"src","access":"deny"},{"path":".","access":"read"},
        {"glob":"**/*.pem","access":"deny"},{"path":"/etc/shadow","access":"deny"},{"path":"~/.ssh","access":"deny"},
        {"special":"project_roots","access":"write"}],"writable_roots":["src"]})");
    REQUIRE(in.entries);
    CHECK((*in.entries)[0].target.value == "/w/src");
    CHECK((*in.entries)[1].target.value == "/w");
    CHECK((*in.entries)[2].target.value == "/w/**/*.pem");
    CHECK((*in.entries)[3].target.value == "/etc/shadow");
    CHECK((*in.entries)[4].target.value == "~/.ssh");
    CHECK(in.writable_roots.at(0).path == "/w/src");
}

TEST_CASE("a project policy refuses absolute paths inside the workspace, .., symlinks out, and non-project keys") {
    FakeFs fs = machine();
    CHECK(error_of([&] { project(fs, R"({"entries":[{"path":"/w/src","access":"deny"}]})"); }) ==
          "/w/.sbx/policy.json: key 'entries' [0]: path: '/w/src' is inside the workspace; a project policy names "
          "it relative to the workspace ('src')");
    CHECK(error_of([&] {
              project(fs, R"({"entries":[{"path":"src/../../etc","access":"read"}]})");
          }).find("holds '..'") != std::string::npos);
    CHECK(error_of([&] { project(fs, R"({"writable_roots":["../x"]})"); }).find("holds '..'") != std::string::npos);
    CHECK(error_of([&] {
              project(fs, R"({"entries":[{"path":"out/x","access":"write"}]})");
          }).find("leads out of the workspace (to /etc) through a symlink") != std::string::npos);
    for (const char* key : {"workspace", "type", "readable", "writable", "denied"})
        CHECK(error_of([&] {
                  project(fs, fmt::format(R"({{"{}":"x"}})", key));
              }).find(fmt::format("key '{}': not in a project policy", key)) != std::string::npos);
    CHECK(error_of([&] { project(fs, "{nope"); }).starts_with("/w/.sbx/policy.json: not valid JSON"));
    CHECK(error_of([&] { project(fs, R"({"bogus":1})"); }).find("unknown key 'bogus'") != std::string::npos);
    CHECK(error_of([&] { project(fs, R"({"network":1})"); }).find("key 'network': expected a string") !=
          std::string::npos);
}

TEST_CASE("narrowing: deny, read-only carve-outs, a lower network, lower limits are accepted") {
    FakeFs fs = machine();
    const PolicyInput ww = workspace_write();
    CHECK(widen(fs, ww, relative(fs, with_entry(ww, "/w/src", FsAccess::Deny))).empty());
    CHECK(widen(fs, ww, relative(fs, with_entry(ww, "/w/src", FsAccess::Read))).empty());
    CHECK(widen(fs, ww, R"({"protected_names":[".git",".sbx",".codex",".agents",".aws","secrets"]})").empty());
    CHECK(widen(fs, ww, R"({"mode":"read-only"})").empty());
    CHECK(widen(fs, ww, R"({"exclude_slash_tmp":true})").empty());
    PolicyInput full = ww;
    full.network = Network::Full;
    full.limits.cpu_seconds = 60;
    CHECK(widen(fs, full, R"({"network":"limited","limits":{"cpu_seconds":10,"memory":1000000}})").empty());
    CHECK(widen(fs, full, R"({"network":"restricted","allow_domains":[]})").empty());
    // Its own canonical form, relative: the same policy.
    CHECK(widen(fs, ww, relative_json(resolve(ww, fs.env("/w"))).dump()).empty());
}

TEST_CASE("widening: each way out is named") {
    FakeFs fs = machine();
    const PolicyInput ww = workspace_write();
    auto first = [](const std::vector<std::string>& w) { return w.empty() ? std::string() : w.front(); };
    CHECK(any_starts(widen(fs, {}, R"({"mode":"workspace-write"})"), "makes /w writable"));
    CHECK(any_starts(widen(fs, {}, R"({"mode":"workspace-write"})"), "makes /tmp writable"));
    CHECK(first(widen(fs, ww, R"({"mode":"danger-full-access"})")) ==
          "mode danger-full-access (without it: workspace-write)");
    CHECK(first(widen(fs, ww, R"({"network":"full"})")) == "network full (without it: restricted)");
    CHECK(first(widen(fs, ww, R"({"network":"limited"})")) == "network limited (without it: restricted)");
    CHECK(first(widen(fs, ww, R"({"allow_domains":["example.com"]})")).starts_with("network limited with allowed"));
    CHECK(first(widen(fs, ww, R"({"writable_roots":["/etc"]})")).starts_with("makes /etc writable"));
    CHECK(any_starts(widen(fs, ww, R"({"protected_names":[".sbx"]})"), "makes /w/.git writable"));
    CHECK(first(widen(fs, ww, R"({"entries":[{"path":".git","access":"write"}]})"))
              .starts_with("makes /w/.git writable"));
    CHECK(first(widen(fs, ww, R"({"allow_unprotected":true})")) == "allow_unprotected true");
    CHECK(first(widen(fs, ww, R"({"git_write":true})")) == "git_write true");
    PolicyInput minimal;
    minimal.mode = Mode::ReadOnly;
    minimal.read_base = ReadBase::Minimal;
    PolicyInput listed;  // the user's config lists its own entries: the platform set only
    listed.entries = std::vector<FsEntry>{{{FsTarget::Kind::Minimal, ""}, FsAccess::Read, "config"}};
    PolicyInput ro;
    ro.mode = Mode::ReadOnly;
    CHECK(first(widen(fs, listed, relative(fs, ro))).starts_with("makes / readable"));
    PolicyInput limited = ww;
    limited.limits.cpu_seconds = 10;
    CHECK(first(widen(fs, limited, R"({"limits":{"cpu_seconds":60}})")) == "limit cpu_seconds 60 (without it: 10)");
    // The user's deny holds: a read entry below it stays hidden, a write entry below it would open it.
    PolicyInput denied = ww;
    denied.extra_entries.push_back({{FsTarget::Kind::Path, "/w/src"}, FsAccess::Deny, "--deny"});
    CHECK(widen(fs, denied, relative(fs, with_entry(ww, "/w/src/a", FsAccess::Read))).empty());  // hidden still
    CHECK(first(widen(fs, denied, relative(fs, with_entry(ww, "/w/src/a", FsAccess::Write))))
              .starts_with("makes /w/src/a writable"));
}

TEST_CASE("flags win over a project policy: the user typed them") {
    FakeFs fs = machine();
    PolicyInput flags;
    flags.mode = Mode::WorkspaceWrite;
    // The project narrows to read-only; -p workspace-write on the command line wins, and is no widening.
    CHECK(widen(fs, {}, R"({"mode":"read-only"})", flags).empty());
}

TEST_CASE("--relative: paths in the workspace relative, the rest as they are, and it reads back the same") {
    FakeFs fs = machine();
    PolicyInput in = workspace_write();
    in.extra_entries.push_back({{FsTarget::Kind::Path, "/w/src"}, FsAccess::Read, "--read-only"});
    in.extra_entries.push_back({{FsTarget::Kind::Path, "/etc"}, FsAccess::Deny, "--deny"});
    const Environment env = fs.env("/w");
    const CanonicalPolicy p = resolve(in, env);
    const nlohmann::json rel = relative_json(p);
    CHECK_FALSE(rel.contains("workspace"));
    CHECK_FALSE(rel.contains("writable"));
    const std::string text = rel.dump();
    CHECK(text.find("\"path\":\"src\"") != std::string::npos);
    CHECK(text.find("\"path\":\"/etc\"") != std::string::npos);
    CHECK(resolve(project_input_from_text(text, kSource, "/w", env), env) == p);
}

TEST_CASE("trust records: one sha256sum line, keyed by path; a changed file is untrusted again") {
    const TrustRecord r{sha256_hex("{}"), "/w/.sbx/policy.json"};
    CHECK(trust_record_text(r) == r.hash + "  /w/.sbx/policy.json\n");
    CHECK(parse_trust_record(trust_record_text(r)) == r);
    CHECK_FALSE(parse_trust_record("nonsense\n"));
    CHECK_FALSE(parse_trust_record(r.hash + "  relative\n"));
    CHECK_FALSE(parse_trust_record(r.hash + "  /x"));
    CHECK(trust_record_name("/a") != trust_record_name("/b"));
    CHECK(trust_of(r, r.path, sha256_hex("{}")) == Trust::Trusted);
    CHECK(trust_of(r, r.path, sha256_hex("{ }")) == Trust::Changed);
    CHECK(trust_of(r, "/v/.sbx/policy.json", r.hash) == Trust::Untrusted);
    CHECK(trust_of(std::nullopt, r.path, r.hash) == Trust::Untrusted);
}

TEST_CASE("setting origins: the last source that sets a value, every source that adds to a list") {
    PolicyInput config;
    config.mode = Mode::WorkspaceWrite;
    config.limits.cpu_seconds = 5;
    PolicyInput proj;
    proj.extra_entries.push_back({{FsTarget::Kind::Path, "/w/x"}, FsAccess::Deny, "p"});
    PolicyInput flags;
    flags.network = Network::Limited;
    flags.extra_entries.push_back({{FsTarget::Kind::Path, "/y"}, FsAccess::Deny, "--deny"});
    const auto origins =
        setting_origins({{"user config c", config}, {"project policy p", proj}, {"command line", flags}});
    auto of = [&](const std::string& s) {
        for (const auto& [k, v] : origins)
            if (k == s) return v;
        return std::string("(absent)");
    };
    CHECK(of("mode") == "user config c");
    CHECK(of("network") == "command line");
    CHECK(of("limit cpu_seconds") == "user config c");
    CHECK(of("limit memory") == "built-in default");
    CHECK(of("extra entries") == "project policy p, command line");
    CHECK(of("writable roots") == "(absent)");
}
