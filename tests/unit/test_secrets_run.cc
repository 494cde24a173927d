// A run's secrets made ready (src/cli/secrets_run.h): sentinels, masked
// files, which connections get which values back.
#include <catch2/catch.hpp>

#include <cctype>

#include "cli/secrets_run.h"
#include "error_of.h"

using namespace sbx;
using sbx::test::error_of;

namespace {

// Not random: each call counts up, so that every sentinel differs.
RandomBytes counting() {
    return [n = 0](unsigned char* out, std::size_t size) mutable {
        for (std::size_t i = 0; i < size; ++i) out[i] = static_cast<unsigned char>(n++);
    };
}

Secret secret(Secret::Kind kind, std::string name, std::vector<std::string> hosts, std::string extract = "") {
    return Secret{kind, std::move(name), std::move(hosts), std::move(extract)};
}

std::optional<std::string> env_of(const std::string& name) {
    if (name == "GH_TOKEN") return std::string("ghp_0123456789abcdef");
    if (name == "SHORT") return std::string("abc");
    return std::nullopt;
}

ResolvedEntry entry(std::string path, FsAccess access) {
    ResolvedEntry e;
    e.path = std::move(path);
    e.access = access;
    e.exists = true;
    return e;
}

// A policy whose command reads every file (a preset's :root read).
CanonicalPolicy reading_everything() {
    CanonicalPolicy p;
    p.resolved = {entry("/", FsAccess::Read)};
    return p;
}

std::string npmrc(const std::string&) {
    return "registry=https://registry.npmjs.org/\n//registry.npmjs.org/:_authToken=npm_SECRETSECRET\n"
           "//other/:_authToken=npm_OTHERTOKEN1\n";
}

}  // namespace

TEST_CASE("a sentinel: as long as the value, letters and digits, never the value; short values refused") {
    const std::string s = sentinel_for("ghp_0123456789abcdef", counting(), "x");
    CHECK(s.size() == 20);
    CHECK(std::all_of(s.begin(), s.end(), [](char c) { return std::isalnum(static_cast<unsigned char>(c)); }));
    CHECK(s != "ghp_0123456789abcdef");
    CHECK_THAT(error_of([] { sentinel_for("1234567", counting(), "secret env X"); }),
               Catch::Contains("secret env X: its value has 7 characters, too few to mask"));
    CHECK_NOTHROW(sentinel_for("12345678", counting(), "x"));
    CHECK_NOTHROW(sentinel_for(std::string(16384, 'v'), counting(), "x"));
    CHECK_THAT(error_of([] { sentinel_for(std::string(16385, 'v'), counting(), "secret env X"); }),
               Catch::Contains("secret env X: its value has 16385 bytes, more than a token's 16384"));
    CHECK_THAT(error_of([] { sentinel_for("tok\xff\xfe-0123456789", counting(), "secret file F"); }),
               Catch::Contains("secret file F: its value is not UTF-8 text"));
}

TEST_CASE("prepared secrets: at most 64 values in a run") {
    CanonicalPolicy p = reading_everything();
    std::string many;
    for (int i = 0; i < 65; ++i) many += "tok=value-" + std::to_string(1000 + i) + "\n";
    p.secrets = {secret(Secret::Kind::File, "/home/u/tokens", {"h.test"}, "tok=(\\S+)")};
    const auto tokens = [&](const std::string&) { return many; };
    CHECK_THAT(error_of([&] { prepare_secrets(p, env_of, tokens, counting()); }),
               Catch::Contains("more than 64 secret values in one run"));
    many.erase(many.rfind("tok="));
    CHECK(prepare_secrets(p, env_of, tokens, counting()).pairs.size() == 64);
}

TEST_CASE("prepared secrets: sentinels in the environment, withheld names, masked files") {
    CanonicalPolicy p = reading_everything();
    p.secrets = {secret(Secret::Kind::Env, "GH_TOKEN", {"api.github.com"}), secret(Secret::Kind::Env, "AWS_KEY", {}),
                 secret(Secret::Kind::File, "/home/u/.npmrc", {"registry.npmjs.org"}, "_authToken=(\\S+)")};
    const PreparedSecrets out = prepare_secrets(p, env_of, npmrc, counting());
    REQUIRE(out.pairs.size() == 3);
    CHECK(out.pairs[0].value == "ghp_0123456789abcdef");
    CHECK(out.env.at("GH_TOKEN") == out.pairs[0].sentinel);
    CHECK(out.unset == std::vector<std::string>{"AWS_KEY"});
    REQUIRE(out.files.size() == 1);
    const std::string& masked = out.files[0].content;
    CHECK(masked.find("npm_SECRETSECRET") == std::string::npos);
    CHECK(masked.find("npm_OTHERTOKEN1") == std::string::npos);
    CHECK(masked.find("_authToken=" + out.pairs[1].sentinel + "\n") != std::string::npos);
    CHECK(masked.size() == npmrc("").size());
    CHECK(masked.starts_with("registry=https://registry.npmjs.org/\n"));
    CHECK(out.pairs_of == std::vector<std::vector<int>>{{0}, {}, {1, 2}});
}

TEST_CASE("prepared secrets: what is refused before anything runs") {
    CanonicalPolicy p = reading_everything();
    p.secrets = {secret(Secret::Kind::Env, "MISSING", {"a.com"})};
    CHECK_THAT(error_of([&] { prepare_secrets(p, env_of, npmrc, counting()); }),
               Catch::Contains("secret env MISSING: it is not set in sbx's environment"));
    p.secrets = {secret(Secret::Kind::Env, "SHORT", {"a.com"})};
    CHECK_THAT(error_of([&] { prepare_secrets(p, env_of, npmrc, counting()); }), Catch::Contains("too few to mask"));
    // An extract that finds nothing would show the file as it is.
    p.secrets = {secret(Secret::Kind::File, "/f", {"a.com"}, "password: (\\S+)")};
    CHECK_THAT(error_of([&] { prepare_secrets(p, env_of, npmrc, counting()); }),
               Catch::Contains("matches nothing in it"));
    // Without extract, the whole file (less its final newline) is the secret.
    p.secrets = {secret(Secret::Kind::File, "/f", {"a.com"})};
    const auto whole = prepare_secrets(
        p, env_of, [](const std::string&) { return std::string("tok_abcdefgh\n"); }, counting());
    CHECK(whole.pairs[0].value == "tok_abcdefgh");
    CHECK(whole.files[0].content == whole.pairs[0].sentinel + "\n");
}

TEST_CASE("the values a connection gets back: its hosts' secrets, none through a tls_passthrough host") {
    CanonicalPolicy p = reading_everything();
    p.secrets = {secret(Secret::Kind::Env, "GH_TOKEN", {"api.github.com", "*.githubusercontent.com"}),
                 secret(Secret::Kind::File, "/home/u/.npmrc", {"registry.npmjs.org:443"}, "_authToken=(\\S+)")};
    const PreparedSecrets prepared = prepare_secrets(p, env_of, npmrc, counting());
    CHECK(pairs_for(p, prepared, "api.github.com", 443) == std::vector<int>{0});
    CHECK(pairs_for(p, prepared, "raw.githubusercontent.com", 443) == std::vector<int>{0});
    CHECK(pairs_for(p, prepared, "registry.npmjs.org", 443) == std::vector<int>{1, 2});
    CHECK(!pairs_for(p, prepared, "registry.npmjs.org", 80));
    CHECK(!pairs_for(p, prepared, "github.com", 443));
    CHECK(!pairs_for(p, prepared, "evil.com", 443));
    p.tls_passthrough = {"api.github.com"};
    CHECK(!pairs_for(p, prepared, "api.github.com", 443));
    CHECK(pairs_for(p, prepared, "raw.githubusercontent.com", 443) == std::vector<int>{0});
}

TEST_CASE("prepared secrets: a masked file the policy does not let the command read is refused") {
    CanonicalPolicy p = reading_everything();
    p.resolved.push_back(entry("/home/u/.npmrc", FsAccess::Deny));
    p.secrets = {secret(Secret::Kind::File, "/home/u/.npmrc", {"registry.npmjs.org"})};
    CHECK_THAT(error_of([&] { prepare_secrets(p, env_of, npmrc, counting()); }),
               Catch::Contains("secret file /home/u/.npmrc: the policy does not let the command read it"));
    p.resolved = {entry("/work", FsAccess::Write)};
    CHECK_THAT(error_of([&] { prepare_secrets(p, env_of, npmrc, counting()); }),
               Catch::Contains("--read-only /home/u/.npmrc"));
    p.resolved.push_back(entry("/home/u", FsAccess::Read));
    CHECK_NOTHROW(prepare_secrets(p, env_of, npmrc, counting()));
}
