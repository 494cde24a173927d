// A fix's change to the policy (denial/policy_delta.h): the flags written
// from it, the deltas of several fixes merged, and the round trip through
// sbx's own command line: the flags a fix prints, read back by the real
// parser (cli/options.cc), make the policy that applying the change makes.
#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include "cli/options.h"
#include "denial/fix.h"
#include "denial/policy_delta.h"
#include "fake_fs.h"

using namespace sbx;
using sbx::test::FakeFs;

namespace {

// A machine with a workspace /w and $HOME /root.
struct Machine {
    FakeFs fs;
    Environment env;
    Machine() {
        for (const char* d :
             {"/usr/bin", "/etc", "/tmp", "/dev/shm", "/root/.npm/_cacache", "/w/.git", "/opt/data/sub", "/srv/cache"})
            fs.dir(d);
        fs.file("/dev/null").file("/etc/hosts");
        env = fs.env("/w");
        env.home = "/root";
    }
};

// The user's own flags, read by sbx's parser.
PolicyInput parsed(std::vector<std::string> words) { return cli::parse_policy_options(words).flags; }

std::vector<std::string> plus(std::vector<std::string> a, const std::vector<std::string>& b) {
    a.insert(a.end(), b.begin(), b.end());
    return a;
}

// The policy of `base` (flags) with the delta applied, and the policy of
// base's flags followed by the delta's, as sbx's parser reads them: the same.
void check_round_trip(const std::vector<std::string>& base, const PolicyDelta& delta, const Environment& env) {
    PolicyInput applied = parsed(base);
    apply(delta, applied);
    const PolicyInput from_flags = parsed(plus(base, to_flags(delta)));
    CHECK(to_json(resolve(applied, env)) == to_json(resolve(from_flags, env)));
}

}  // namespace

TEST_CASE("policy delta: the flags, in one order, as a shell reads them") {
    CHECK(to_flags(PolicyDelta{}).empty());
    CHECK(PolicyDelta{}.empty());
    const PolicyDelta d{.mode = Mode::WorkspaceWrite,
                        .network = Network::Full,
                        .writable_roots = {"/root/.npm", "/etc"},
                        .unprotect = {".git"},
                        .read_only = {"/w/my file"},
                        .allow_domains = {"pkg.dev"}};
    CHECK_FALSE(d.empty());
    CHECK(to_flags(d) == std::vector<std::string>{"-p", "workspace-write", "-n", "full", "-w", "/root/.npm", "-w",
                                                  "/etc", "--unprotect", ".git", "--read-only", "/w/my file",
                                                  "--allow-domain", "pkg.dev"});
    CHECK(flags_text(d) ==
          "-p workspace-write -n full -w /root/.npm -w /etc --unprotect .git --read-only '/w/my file' "
          "--allow-domain pkg.dev");
    CHECK(flags_text(PolicyDelta{.network = Network::Limited}) == "-n limited");
}

TEST_CASE("policy delta: as JSON, each field that changes something") {
    CHECK(to_json(PolicyDelta{}) == nlohmann::json::object());
    const PolicyDelta d{.mode = Mode::WorkspaceWrite,
                        .network = Network::Full,
                        .writable_roots = {"/root/.npm"},
                        .unprotect = {".git"},
                        .git_write = true,
                        .read_only = {"/w/src"},
                        .allow_domains = {"pkg.dev"}};
    CHECK(to_json(d) == nlohmann::json{{"mode", "workspace-write"},
                                       {"network", "full"},
                                       {"writable_roots", {"/root/.npm"}},
                                       {"unprotect", {".git"}},
                                       {"git_write", true},
                                       {"read_only", {"/w/src"}},
                                       {"allow_domains", {"pkg.dev"}}});
    CHECK(to_json(PolicyDelta{.writable_roots = {"/etc"}}) == nlohmann::json{{"writable_roots", {"/etc"}}});
}

TEST_CASE("policy delta: merged, the last mode, the widest network, each once, no root below another") {
    const PolicyDelta m = merged({PolicyDelta{.network = Network::Limited, .writable_roots = {"/opt/data/sub"}},
                                  PolicyDelta{.mode = Mode::WorkspaceWrite, .unprotect = {".git"}},
                                  PolicyDelta{.network = Network::Full, .writable_roots = {"/opt/data"}},
                                  PolicyDelta{.network = Network::Limited, .unprotect = {".git"}},
                                  PolicyDelta{.allow_domains = {"a.dev"}}, PolicyDelta{.allow_domains = {"a.dev"}}});
    CHECK(m == PolicyDelta{.mode = Mode::WorkspaceWrite,
                           .network = Network::Full,
                           .writable_roots = {"/opt/data"},
                           .unprotect = {".git"},
                           .allow_domains = {"a.dev"}});
    CHECK(merged({}).empty());
    // --unprotect .git opens all of .git: --git-write beside it would be refused.
    CHECK(merged({PolicyDelta{.git_write = true}, PolicyDelta{.unprotect = {".git"}}}) ==
          PolicyDelta{.unprotect = {".git"}});
    CHECK(merged({PolicyDelta{.git_write = true}, PolicyDelta{.unprotect = {".codex"}}}) ==
          PolicyDelta{.unprotect = {".codex"}, .git_write = true});
}

TEST_CASE("policy delta: applied as its flags would be") {
    PolicyInput in{};
    apply(PolicyDelta{.mode = Mode::WorkspaceWrite,
                      .network = Network::Limited,
                      .writable_roots = {"/srv"},
                      .unprotect = {".git"},
                      .read_only = {"/w/x"},
                      .allow_domains = {"pkg.dev"}},
          in);
    CHECK(in.mode == Mode::WorkspaceWrite);
    CHECK(in.network == Network::Limited);
    CHECK(in.writable_roots == std::vector<PolicyInput::SourcedPath>{{"/srv", "--writable-root"}});
    CHECK(in.unprotect == std::vector<std::string>{".git"});
    REQUIRE(in.extra_entries.size() == 1);
    CHECK(in.extra_entries[0].access == FsAccess::Read);
    CHECK(in.allow_domains == std::vector<PolicyInput::SourcedPath>{{"pkg.dev", "--allow-domain"}});
}

TEST_CASE("policy delta: a fix's flags read back by sbx's parser make the policy its change makes") {
    const Machine m;
    const Environment& env = m.env;
    const std::vector<PolicyDelta> deltas{
        PolicyDelta{.writable_roots = {"/root/.npm"}},
        PolicyDelta{.unprotect = {".git"}},
        PolicyDelta{.mode = Mode::WorkspaceWrite, .writable_roots = {"/etc"}},
        PolicyDelta{.mode = Mode::WorkspaceWrite, .unprotect = {".git"}},
        PolicyDelta{.network = Network::Full},
        PolicyDelta{.network = Network::Limited},
        PolicyDelta{.read_only = {"/srv/cache"}},
        PolicyDelta{.allow_domains = {"pkg.dev"}},
        PolicyDelta{.mode = Mode::WorkspaceWrite, .git_write = true},
        PolicyDelta{.mode = Mode::WorkspaceWrite,
                    .network = Network::Full,
                    .writable_roots = {"/opt/data", "/srv"},
                    .unprotect = {".git", ".sbx"}},
    };
    for (const auto& base : std::vector<std::vector<std::string>>{
             {}, {"--protect", ".env"}, {"-w", "/srv/cache", "--exclude-slash-tmp"}, {"--minimal"}}) {
        for (const auto& d : deltas) {
            INFO(flags_text(d));
            check_round_trip(base, d, env);
        }
    }
    // Over a mode of the user's: the fix's mode replaces it (--explain drops
    // the user's -p from the line, as apply replaces it).
    PolicyInput in = parsed({"-p", "read-only"});
    apply(PolicyDelta{.mode = Mode::WorkspaceWrite, .writable_roots = {"/etc"}}, in);
    CHECK(to_json(resolve(in, env)) == to_json(resolve(parsed({"-p", "workspace-write", "-w", "/etc"}), env)));
}

TEST_CASE("policy delta: --git-write, the one flag without a value") {
    const PolicyDelta d = merged(
        {PolicyDelta{.git_write = true}, PolicyDelta{.writable_roots = {"/srv"}}, PolicyDelta{.git_write = true}});
    CHECK(d == PolicyDelta{.writable_roots = {"/srv"}, .git_write = true});
    CHECK(flags_text(d) == "-w /srv --git-write");
    PolicyInput in;
    apply(d, in);
    CHECK(in.git_write == true);
}

TEST_CASE("policy delta: the fixes of denials, rendered and read back") {
    const Machine m;
    const Environment& env = m.env;
    std::size_t fixed = 0;
    for (const Mode mode : {Mode::ReadOnly, Mode::WorkspaceWrite}) {
        PolicyInput in{};
        in.mode = mode;
        const CanonicalPolicy p = resolve(in, env);
        for (const auto& [op, path] :
             std::vector<std::pair<std::string, std::string>>{{"create", "/root/.npm/_cacache/x"},
                                                              {"write", "/etc/hosts"},
                                                              {"create", "/w/.git/hooks/x"},
                                                              {"create", "/w/out.o"},
                                                              {"connect", "192.0.2.1:443"},
                                                              {"bind", ""}}) {
            Denial d;
            d.operation = op;
            (op == "connect" ? d.address : d.path) = path;
            const Fix f = fix_for(p, d, env);
            INFO(op << " " << path << ": " << f.text());
            if (f.change.empty()) continue;  // /w/out.o under workspace-write: already writable
            ++fixed;
            const std::vector<std::string> base{"-p", std::string(to_string(mode))};
            PolicyInput applied = parsed(base);
            apply(f.change, applied);
            // The user's -p is replaced by the fix's, as --explain does on its line.
            const std::vector<std::string> line = f.change.mode ? to_flags(f.change) : plus(base, to_flags(f.change));
            CHECK(to_json(resolve(applied, env)) == to_json(resolve(parsed(line), env)));
        }
    }
    CHECK(fixed == 11);
}
