// The entries model: Codex's precedence and nesting table (CODEX-HELPER.md
// section 4.3), the special paths (4.1), protected names (4.4), missing paths
// (4.5), deny globs (4.7), and the canonical JSON of entries.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "fake_fs.h"
#include "policy/check.h"
#include "policy/policy.h"

using namespace sbx;
using sbx::test::FakeFs;

namespace {

FsEntry path_entry(const std::string& p, FsAccess a) { return {{FsTarget::Kind::Path, p}, a, "test"}; }
FsEntry special(FsTarget::Kind k, FsAccess a, std::string value = "") { return {{k, std::move(value)}, a, "test"}; }

FakeFs machine() {
    FakeFs fs;
    fs.dir("/w/sub/deep")
        .dir("/d/open")
        .dir("/dev")
        .dir("/tmp")
        .dir("/usr/bin")
        .dir("/usr/lib")
        .dir("/etc")
        .dir("/home/u/.ssh");
    fs.file("/d/secret.txt").file("/w/f.txt").file("/dev/null").file("/home/u/.ssh/id").file("/usr/bin/sh");
    fs.link("/bin", "usr/bin").link("/lib", "usr/lib");
    return fs;
}

CanonicalPolicy with(std::vector<FsEntry> entries, const FakeFs& fs, std::string cwd = "/w") {
    PolicyInput in{};
    in.entries.emplace(std::move(entries));
    in.entries_source = "test";
    return resolve(in, fs.env(cwd));
}

// "write", "read", "deny" or "none" for one path.
std::string access(const CanonicalPolicy& p, const std::string& path) {
    const FsDecision d = decide_path(p, path);
    return d.access ? std::string(to_string(*d.access)) : "none";
}

const FsEntry kRootRead = special(FsTarget::Kind::Root, FsAccess::Read);

}  // namespace

TEST_CASE("Codex's nesting table: most specific wins, then deny > write > read") {
    FakeFs fs = machine();
    SECTION("D:deny") {
        auto p = with({kRootRead, path_entry("/d", FsAccess::Deny)}, fs);
        CHECK(access(p, "/d") == "deny");
        CHECK(access(p, "/d/open/x") == "deny");
        CHECK(access(p, "/etc") == "read");
        CHECK(p.denied == std::vector<std::string>{"/d"});
    }
    SECTION("D:write, D/sub:deny") {
        auto p = with({kRootRead, path_entry("/w", FsAccess::Write), path_entry("/w/sub", FsAccess::Deny)}, fs);
        CHECK(access(p, "/w") == "write");
        CHECK(access(p, "/w/new") == "write");
        CHECK(access(p, "/w/sub") == "deny");
        CHECK(access(p, "/w/sub/deep") == "deny");
    }
    SECTION("D:write, D/sub:read") {
        auto p = with({kRootRead, path_entry("/w", FsAccess::Write), path_entry("/w/sub", FsAccess::Read)}, fs);
        CHECK(access(p, "/w/x") == "write");
        CHECK(access(p, "/w/sub/deep") == "read");
        const auto& root = p.writable.front();
        CHECK(root.path == "/w");
        CHECK(std::find(root.protected_paths.begin(), root.protected_paths.end(), "/w/sub") !=
              root.protected_paths.end());
    }
    SECTION("D:deny, D/open:write, in either order") {
        for (bool reversed : {false, true}) {
            std::vector<FsEntry> e{kRootRead, path_entry("/d", FsAccess::Deny), path_entry("/d/open", FsAccess::Write)};
            if (reversed) std::reverse(e.begin(), e.end());
            auto p = with(e, fs);
            CHECK(access(p, "/d/open/f") == "write");
            CHECK(access(p, "/d/secret.txt") == "deny");
            CHECK(access(p, "/d") == "deny");
        }
    }
    SECTION("D:deny, D/open:read is not reopened (as Codex 0.169)") {
        auto p = with({kRootRead, path_entry("/d", FsAccess::Deny), path_entry("/d/open", FsAccess::Read)}, fs);
        CHECK(access(p, "/d/open") == "deny");
        CHECK(access(p, "/d/open/f") == "deny");
        SECTION("but a read entry below a write hole in it is") {
            auto q = with({kRootRead, path_entry("/d", FsAccess::Deny), path_entry("/d/open", FsAccess::Write),
                           path_entry("/d/open/ro", FsAccess::Read)},
                          fs);
            CHECK(access(q, "/d/open/ro/x") == "read");
        }
    }
    SECTION("write and deny on the same path: deny") {
        auto p = with({kRootRead, path_entry("/w", FsAccess::Write), path_entry("/w", FsAccess::Deny)}, fs);
        CHECK(access(p, "/w/f.txt") == "deny");
        CHECK(p.writable.size() == 1);  // /dev/null only
    }
    SECTION("read and write on the same path: write") {
        auto p = with({kRootRead, path_entry("/w", FsAccess::Read), path_entry("/w", FsAccess::Write)}, fs);
        CHECK(access(p, "/w/f.txt") == "write");
    }
    SECTION("F:deny on a file") {
        auto p = with({kRootRead, path_entry("/d/secret.txt", FsAccess::Deny)}, fs);
        CHECK(access(p, "/d/secret.txt") == "deny");
        CHECK(access(p, "/d/open") == "read");
    }
    SECTION("W:write, W/sub:write: both roots, each with its protected names") {
        auto p = with({kRootRead, path_entry("/w", FsAccess::Write), path_entry("/w/sub", FsAccess::Write)}, fs);
        REQUIRE(p.writable.size() == 3);
        CHECK(p.writable[1].path == "/w/sub");
        CHECK(access(p, "/w/.git/config") == "read");
        CHECK(access(p, "/w/sub/.codex/x") == "read");
        CHECK(access(p, "/w/sub/x") == "write");
    }
    SECTION("no entry: no access") {
        auto p = with({path_entry("/w", FsAccess::Write)}, fs);
        CHECK(access(p, "/etc/passwd") == "none");
        CHECK_FALSE(p.reads_root());
        CHECK(access(p, "/dev/null") == "write");
        CHECK(access(p, "/proc/self") == "read");
        CHECK(access(p, "/dev/zero") == "read");
    }
    SECTION("the array order never matters") {
        std::vector<FsEntry> e{kRootRead, path_entry("/w", FsAccess::Write), path_entry("/w/sub", FsAccess::Deny),
                               path_entry("/d", FsAccess::Deny), path_entry("/d/open", FsAccess::Write)};
        auto a = with(e, fs);
        std::reverse(e.begin(), e.end());
        auto b = with(e, fs);
        for (const char* path : {"/w/x", "/w/sub/x", "/d/x", "/d/open/x", "/etc/x"})
            CHECK(access(a, path) == access(b, path));
    }
}

TEST_CASE("special paths resolve as Codex resolves them") {
    FakeFs fs = machine();
    SECTION(":minimal is the platform set that exists, through its symlinks") {
        auto p = with({special(FsTarget::Kind::Minimal, FsAccess::Read), path_entry("/w", FsAccess::Write)}, fs);
        CHECK(access(p, "/usr/bin/sh") == "read");
        CHECK(access(p, "/etc/hosts") == "read");
        CHECK(access(p, "/home/u") == "none");
        const auto bin = std::find_if(p.resolved.begin(), p.resolved.end(),
                                      [](const ResolvedEntry& e) { return e.given == "/bin"; });
        REQUIRE(bin != p.resolved.end());
        CHECK(bin->path == "/usr/bin");
        CHECK(std::none_of(p.resolved.begin(), p.resolved.end(),
                           [](const ResolvedEntry& e) { return e.path == "/nix/store"; }));
    }
    SECTION(":project_roots is --sandbox-policy-cwd joined with its subpath, .. included") {
        PolicyInput in;
        in.entries = {kRootRead, special(FsTarget::Kind::ProjectRoots, FsAccess::Write),
                      special(FsTarget::Kind::ProjectRoots, FsAccess::Deny, "sub"),
                      special(FsTarget::Kind::ProjectRoots, FsAccess::Write, "../d/open")};
        in.workspace = PolicyInput::SourcedPath{"/w", "--sandbox-policy-cwd"};
        auto p = resolve(in, fs.env("/"));
        CHECK(access(p, "/w/x") == "write");
        CHECK(access(p, "/w/sub") == "deny");
        CHECK(access(p, "/d/open/x") == "write");
    }
    SECTION("a relative or missing project root names nothing") {
        PolicyInput in;
        in.entries = {kRootRead, special(FsTarget::Kind::ProjectRoots, FsAccess::Write)};
        in.workspace = PolicyInput::SourcedPath{"rel", "--sandbox-policy-cwd"};
        auto p = resolve(in, fs.env("/"));
        CHECK(access(p, "/w/x") == "read");
        in.workspace = PolicyInput::SourcedPath{"/nowhere", "--sandbox-policy-cwd"};
        CHECK(resolve(in, fs.env("/")).writable.size() == 1);
    }
    SECTION(":tmpdir is $TMPDIR; unset, relative or missing names nothing") {
        fs.dir("/var/tmp/u");
        std::vector<FsEntry> e{kRootRead, special(FsTarget::Kind::TmpDir, FsAccess::Write)};
        PolicyInput in;
        in.entries = e;
        CHECK(access(resolve(in, fs.env("/w", "/var/tmp/u")), "/var/tmp/u/x") == "write");
        CHECK(access(resolve(in, fs.env("/w")), "/var/tmp/u/x") == "read");
        CHECK(access(resolve(in, fs.env("/w", "rel")), "/var/tmp/u/x") == "read");
        CHECK(resolve(in, fs.env("/w", "/missing")).writable.size() == 1);
    }
    SECTION(":slash_tmp is /tmp only; :unknown is ignored") {
        auto p = with({kRootRead, special(FsTarget::Kind::SlashTmp, FsAccess::Write),
                       special(FsTarget::Kind::Unknown, FsAccess::Write, "/w")},
                      fs);
        CHECK(access(p, "/tmp/x") == "write");
        CHECK(access(p, "/w/x") == "read");
        CHECK(access(p, "/dev/shm/x") == "read");
    }
    SECTION("with the root, /dev and /proc are not added; without it they are") {
        auto p = with({kRootRead}, fs);
        CHECK(p.reads_root());
        CHECK(p.mode == Mode::ReadOnly);
        CHECK(std::none_of(p.resolved.begin(), p.resolved.end(),
                           [](const ResolvedEntry& e) { return e.path == "/proc"; }));
    }
}

TEST_CASE("protected names: read-only under every writable root, lifted by an exact entry") {
    FakeFs fs = machine();
    fs.dir("/w/.git");
    auto p =
        with({kRootRead, path_entry("/w", FsAccess::Write), special(FsTarget::Kind::SlashTmp, FsAccess::Write)}, fs);
    for (const char* path : {"/w/.git/config", "/w/.agents/x", "/w/.codex", "/w/.aws/credentials", "/w/.sbx/x",
                             "/tmp/.git", "/tmp/.aws/x"})
        CHECK(access(p, path) == "read");
    auto lifted = with({kRootRead, path_entry("/w", FsAccess::Write), path_entry("/w/.git", FsAccess::Write),
                        path_entry("/w/.aws", FsAccess::Deny), path_entry("/w/.codex", FsAccess::Read)},
                       fs);
    CHECK(access(lifted, "/w/.git/config") == "write");
    CHECK(access(lifted, "/w/.aws/credentials") == "deny");
    CHECK(access(lifted, "/w/.codex/x") == "read");
}

TEST_CASE("missing paths: write entries are ignored, read and deny entries inside writable roots are held") {
    FakeFs fs = machine();
    auto p = with({kRootRead, path_entry("/w", FsAccess::Write), path_entry("/nope", FsAccess::Write),
                   path_entry("/w/docs", FsAccess::Read), path_entry("/w/.env", FsAccess::Deny)},
                  fs);
    CHECK(std::none_of(p.writable.begin(), p.writable.end(), [](const WritableRoot& w) { return w.path == "/nope"; }));
    const auto& prot = p.writable.front().protected_paths;
    CHECK(std::find(prot.begin(), prot.end(), "/w/docs") != prot.end());
    CHECK(std::find(p.denied.begin(), p.denied.end(), "/w/.env") != p.denied.end());
    CHECK(access(p, "/w/docs/new") == "read");
}

TEST_CASE("deny globs: expanded now, ** across directories, depth-limited, never from /") {
    FakeFs fs = machine();
    fs.file("/w/top.env").file("/w/sub/mid.env").file("/w/sub/deep/low.env").file("/w/keep.txt");
    PolicyInput in;
    in.entries = {
        kRootRead, path_entry("/w", FsAccess::Write), {{FsTarget::Kind::Glob, "/w/**/*.env"}, FsAccess::Deny, "t"}};
    auto p = resolve(in, fs.env("/w"));
    CHECK(access(p, "/w/top.env") == "deny");
    CHECK(access(p, "/w/sub/mid.env") == "deny");
    CHECK(access(p, "/w/sub/deep/low.env") == "deny");
    CHECK(access(p, "/w/keep.txt") == "write");
    CHECK(access(p, "/w/later.env") == "write");  // created after the start: not hidden
    in.glob_scan_max_depth = 2;
    auto shallow = resolve(in, fs.env("/w"));
    CHECK(access(shallow, "/w/sub/mid.env") == "deny");
    CHECK(access(shallow, "/w/sub/deep/low.env") == "write");
    in.entries->back().target.value = "/*.env";
    CHECK_THROWS_WITH(resolve(in, fs.env("/w")), Catch::Contains("cannot be safely expanded from the root"));
    SECTION("read and write globs have no effect") {
        in.entries->back() = {{FsTarget::Kind::Glob, "/w/*.txt"}, FsAccess::Write, "t"};
        in.entries->front() = kRootRead;
        auto q = resolve(in, fs.env("/w"));
        CHECK(access(q, "/w/keep.txt") == "write");
    }
    SECTION("the --deny-glob flag is relative to the current directory") {
        PolicyInput flags;
        flags.mode = Mode::WorkspaceWrite;
        flags.extra_entries = {{{FsTarget::Kind::Glob, "*.env"}, FsAccess::Deny, "--deny-glob"}};
        auto q = resolve(flags, fs.env("/w"));
        CHECK(access(q, "/w/top.env") == "deny");
        CHECK(access(q, "/w/sub/mid.env") == "write");
    }
}

TEST_CASE("a deny or read-only path through a symlink inside a writable root is refused") {
    FakeFs fs = machine();
    fs.link("/w/link", "/home/u");
    PolicyInput in;
    in.mode = Mode::WorkspaceWrite;
    in.extra_entries = {{{FsTarget::Kind::Path, "/w/link/.ssh"}, FsAccess::Deny, "--deny"}};
    CHECK_THROWS_WITH(resolve(in, fs.env("/w")),
                      Catch::Contains("crosses the symlink /w/link, inside a writable root"));
    in.extra_entries = {{{FsTarget::Kind::Path, "/home/u/.ssh"}, FsAccess::Deny, "--deny"}};
    CHECK(access(resolve(in, fs.env("/w")), "/home/u/.ssh/id") == "deny");
}

TEST_CASE("presets are entries; flags add to them; the modes without a sandbox refuse them") {
    FakeFs fs = machine();
    PolicyInput in;
    in.mode = Mode::WorkspaceWrite;
    in.read_base = ReadBase::Minimal;
    in.extra_entries = {{{FsTarget::Kind::Path, "/home/u/.ssh"}, FsAccess::Deny, "--deny"},
                        {{FsTarget::Kind::Path, "sub"}, FsAccess::Read, "--read-only"}};
    auto p = resolve(in, fs.env("/w"));
    CHECK(p.entries.front() == special(FsTarget::Kind::Minimal, FsAccess::Read));
    CHECK(access(p, "/w/sub/x") == "read");
    CHECK(access(p, "/home/u") == "none");
    in.mode = Mode::ExternalSandbox;
    in.read_base.reset();
    CHECK_THROWS_WITH(resolve(in, fs.env("/w")), Catch::StartsWith("--deny: external-sandbox leaves the filesystem"));
    PolicyInput listed;
    listed.entries = {kRootRead};
    listed.entries_source = "p.json: key 'entries'";
    listed.read_base = ReadBase::Minimal;
    CHECK_THROWS_WITH(resolve(listed, fs.env("/w")), Catch::StartsWith("--minimal: p.json: key 'entries' lists"));
    listed.read_base.reset();
    listed.mode = Mode::WorkspaceWrite;
    listed.mode_source = "p.json: key 'mode'";
    CHECK_THROWS_WITH(resolve(listed, fs.env("/w")),
                      Catch::StartsWith("p.json: key 'mode': the entries make the policy read-only"));
}

TEST_CASE("entries in the canonical JSON: every kind prints and reads back the same") {
    FakeFs fs = machine();
    Environment env = fs.env("/w");
    PolicyInput in;
    in.entries = {kRootRead,
                  path_entry("/w", FsAccess::Write),
                  special(FsTarget::Kind::ProjectRoots, FsAccess::Read, "sub"),
                  special(FsTarget::Kind::SlashTmp, FsAccess::Write),
                  special(FsTarget::Kind::TmpDir, FsAccess::Write),
                  special(FsTarget::Kind::Unknown, FsAccess::Read, "/x"),
                  special(FsTarget::Kind::Minimal, FsAccess::Read),
                  {{FsTarget::Kind::Glob, "/w/**/*.env"}, FsAccess::Deny, ""},
                  path_entry("/home/u/.ssh", FsAccess::Deny)};
    in.glob_scan_max_depth = 3;
    in.workspace = PolicyInput::SourcedPath{"/w", "t"};
    const CanonicalPolicy p = resolve(in, env);
    const std::string text = to_json_text(p);
    const CanonicalPolicy back = parse_policy_text(text, "p.json", env);
    CHECK(back == p);
    CHECK(to_json_text(back) == text);
    const auto doc = nlohmann::json::parse(text);
    CHECK(doc["entries"][2] == nlohmann::json{{"special", "project_roots"}, {"subpath", "sub"}, {"access", "read"}});
    CHECK(doc["entries"][7] == nlohmann::json{{"glob", "/w/**/*.env"}, {"access", "deny"}});

    auto err = [&](const std::string& json) {
        try {
            parse_policy_text(json, "p.json", env);
        } catch (const Error& e) {
            return std::string(e.what());
        }
        return std::string("no error");
    };
    CHECK(err(R"({"entries":[{"path":"/w"}]})") ==
          "p.json: key 'entries' [0]: key 'access': missing (read, write or deny)");
    CHECK(err(R"({"entries":[{"path":"w","access":"read"}]})") ==
          "p.json: key 'entries' [0]: key 'path': 'w' is not an absolute path");
    CHECK(err(R"({"entries":[{"path":"/w","glob":"/x","access":"read"}]})") ==
          "p.json: key 'entries' [0]: give exactly one of 'path', 'special', 'glob'");
    CHECK(err(R"({"entries":[{"special":"home","access":"read"}]})") ==
          "p.json: key 'entries' [0]: key 'special': 'home' is not one of: root, minimal, tmpdir, slash_tmp, "
          "project_roots, unknown");
    CHECK(err(R"({"entries":[{"path":"/w","access":"rw"}]})") ==
          "p.json: key 'entries' [0]: key 'access': 'rw' is not one of: read, write, deny");
    CHECK(err(R"({"entries":[{"path":"/w","access":"read","extra":1}]})") ==
          "p.json: key 'entries' [0]: unknown key 'extra' (known keys: path, special, glob, access)");
    CHECK(
        err(R"({"entries":[],"exclude_slash_tmp":true})").starts_with("p.json: key 'entries': the exclude_slash_tmp"));
    CHECK(err(R"({"mode":"danger-full-access","entries":[{"special":"root","access":"read"}]})") ==
          "p.json: key 'entries': danger-full-access leaves the filesystem open; its only entry is :root write");
}

TEST_CASE("sbx check names the entry that decided") {
    FakeFs fs = machine();
    PolicyInput in;
    in.mode = Mode::WorkspaceWrite;
    in.extra_entries = {{{FsTarget::Kind::Path, "/home/u/.ssh"}, FsAccess::Deny, "--deny"},
                        {{FsTarget::Kind::Path, "sub"}, FsAccess::Read, "--read-only"}};
    Environment env = fs.env("/w");
    auto p = resolve(in, env);
    Verdict v = check_access(p, Access::Read, "/home/u/.ssh/id", env);
    CHECK_FALSE(v.allowed);
    CHECK(v.rule == "deny /home/u/.ssh (--deny)");
    v = check_access(p, Access::Write, "sub/x", env);
    CHECK_FALSE(v.allowed);
    CHECK(v.rule == "read /w/sub (--read-only): read-only");
    v = check_access(p, Access::Read, "sub/x", env);
    CHECK(v.allowed);
    // ~ as the flags expand it, also when the shell did not (issue 35).
    env.home = "/home/u";
    v = check_access(p, Access::Read, "~/.ssh/id", env);
    CHECK(v.subject == "/home/u/.ssh/id");
    CHECK(v.rule == "deny /home/u/.ssh (--deny)");
    CHECK_THROWS_WITH(check_access(p, Access::Write, "~other/x", env),
                      "--write: '~other/x': only ~ and ~/ are expanded (the home of another user is not)");
}

TEST_CASE("Codex's SandboxPolicy read access fields: access and read_only_access") {
    FakeFs fs = machine();
    fs.dir("/data");
    Environment env = fs.env("/w");
    auto parse = [&](const std::string& json) { return parse_policy_text(json, "--sandbox-policy", env); };
    SECTION("read-only, restricted with the platform defaults: the platform set, the cwd, the readable roots") {
        auto p = parse(
            R"({"type":"read-only","access":{"type":"restricted","readable_roots":["/data"]},"network_access":true})");
        CHECK(p.mode == Mode::ReadOnly);
        CHECK(p.network == Network::Full);
        CHECK(access(p, "/usr/bin/sh") == "read");
        CHECK(access(p, "/w/f.txt") == "read");
        CHECK(access(p, "/data/x") == "read");
        CHECK(access(p, "/home/u") == "none");
        CHECK_FALSE(p.reads_root());
    }
    SECTION("workspace-write, restricted without the platform defaults") {
        auto p = parse(
            R"({"type":"workspace-write","read_only_access":{"type":"restricted","include_platform_defaults":false}})");
        CHECK(access(p, "/usr/bin/sh") == "none");
        CHECK(access(p, "/w/x") == "write");
        CHECK(access(p, "/tmp/x") == "write");
    }
    SECTION("full-access is the whole filesystem, as without the key") {
        CHECK(parse(R"({"type":"read-only","access":{"type":"full-access"}})") == parse(R"({"type":"read-only"})"));
    }
    SECTION("bad values are refused, naming the key") {
        CHECK_THROWS_WITH(parse(R"({"type":"read-only","access":{"type":"some"}})"),
                          "--sandbox-policy: key 'access': key 'type': 'some' is not one of: full-access, restricted");
        CHECK_THROWS_WITH(parse(R"({"type":"read-only","access":{"type":"restricted","readable_roots":["rel"]}})"),
                          "--sandbox-policy: key 'access': key 'readable_roots': 'rel' is not an absolute path");
        CHECK_THROWS_WITH(parse(R"({"type":"read-only","access":{"type":"restricted","roots":[]}})"),
                          Catch::StartsWith("--sandbox-policy: key 'access': unknown key 'roots'"));
    }
}

TEST_CASE("the root read and denied at once: deny wins, and the view has no root") {
    FakeFs fs = machine();
    auto p = with({kRootRead, special(FsTarget::Kind::Root, FsAccess::Deny), path_entry("/w", FsAccess::Write)}, fs);
    CHECK_FALSE(p.reads_root());
    CHECK(access(p, "/etc") == "deny");
    CHECK(access(p, "/w/x") == "write");
}

TEST_CASE("a list of entries with -w roots added is labelled workspace-write") {
    FakeFs fs = machine();
    PolicyInput in;
    in.entries.emplace(std::vector<FsEntry>{kRootRead});
    in.entries_source = "p.json: key 'entries'";
    in.writable_roots = {{"/d/open", "--writable-root"}};
    auto p = resolve(in, fs.env("/w"));
    CHECK(p.mode == Mode::WorkspaceWrite);
    CHECK(access(p, "/d/open/x") == "write");
}

// The facts CanonicalPolicy derives once (policy.h), in each case where two
// of them could disagree: reads_root() (the helper's view and Landlock) and
// root_in_derived_sets() (Seatbelt); private_dev_shm() (the view, Landlock,
// the recorder, sbx check) and entries_give_host_dev_shm() (the view without
// the root).
TEST_CASE("derived facts: reading the root, and the sandbox's /dev/shm, case by case") {
    FakeFs fs;
    fs.dir("/w").dir("/dev/shm").dir("/etc").file("/dev/null");
    const FsEntry write_w = path_entry("/w", FsAccess::Write);
    auto root = [](FsAccess a) { return special(FsTarget::Kind::Root, a); };
    struct RootCase {
        const char* name;
        std::vector<FsEntry> entries;
        bool reads_root;
        bool in_sets;
    };
    const RootCase root_cases[] = {
        {"root read", {kRootRead, write_w}, true, true},
        {"root write narrowed", {root(FsAccess::Write), path_entry("/etc", FsAccess::Read)}, true, true},
        {"root read beaten by root deny", {kRootRead, root(FsAccess::Deny), write_w}, false, false},
        {"root deny", {root(FsAccess::Deny), write_w}, false, false},
        {"no root", {write_w}, false, false},
    };
    for (const auto& c : root_cases) {
        INFO(c.name);
        const CanonicalPolicy p = with(c.entries, fs);
        CHECK(p.reads_root() == c.reads_root);
        CHECK(p.root_in_derived_sets() == c.in_sets);
    }
    // The one case where they differ: a protected path that is "/" itself.
    FakeFs to_root = fs;
    to_root.link("/w/.codex", "/");
    const CanonicalPolicy linked = with({write_w}, to_root);
    CHECK(linked.reads_root());
    CHECK_FALSE(linked.root_in_derived_sets());
    CHECK(with({kRootRead, write_w}, to_root).root_in_derived_sets());

    FakeFs no_shm;
    no_shm.dir("/w").dir("/dev").dir("/etc").file("/dev/null");
    FakeFs shm_link = fs;
    shm_link.link("/w/.codex", "/dev/shm");
    const FsEntry shm_read = path_entry("/dev/shm", FsAccess::Read),
                  shm_write = path_entry("/dev/shm", FsAccess::Write),
                  shm_deny = path_entry("/dev/shm", FsAccess::Deny);
    struct ShmCase {
        const char* name;
        std::vector<FsEntry> entries;
        const FakeFs* fs;
        bool private_shm;
        bool host_shm;
    };
    const ShmCase shm_cases[] = {
        {"no entry", {}, &fs, true, false},
        {"written", {shm_write}, &fs, false, true},
        {"written, missing", {shm_write}, &no_shm, true, false},
        {"read", {shm_read}, &fs, false, true},
        {"read, missing", {shm_read}, &no_shm, false, false},
        {"denied", {shm_deny}, &fs, false, false},
        {"denied, missing", {shm_deny}, &no_shm, false, false},
        {"read and denied", {shm_read, shm_deny}, &fs, false, true},
        {"read and written", {shm_read, shm_write}, &fs, false, true},
        {"a protected name's target", {}, &shm_link, true, true},
        {"/dev denied", {path_entry("/dev", FsAccess::Deny)}, &fs, true, false},
    };
    for (const bool reads_root : {false, true}) {
        for (const auto& c : shm_cases) {
            INFO(c.name << (reads_root ? ", with the root" : ", without the root"));
            std::vector<FsEntry> entries = c.entries;
            entries.push_back(write_w);
            if (reads_root) entries.insert(entries.begin(), kRootRead);
            const CanonicalPolicy p = with(entries, *c.fs);
            CHECK(p.private_dev_shm() == c.private_shm);
            CHECK(p.entries_give_host_dev_shm() == c.host_shm);
        }
    }
}
