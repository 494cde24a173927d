#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <set>

#include "fake_fs.h"
#include "policy/check.h"
#include "policy/policy.h"

using namespace sbx;
using nlohmann::json;
using sbx::test::FakeFs;

namespace {

FakeFs machine() {
    FakeFs fs;
    fs.dir("/work/repo").dir("/tmp").dir("/dev/shm").dir("/opt").dir("/var/tmp/user");
    fs.file("/dev/null");
    return fs;
}

PolicyInput input(Mode m, std::optional<Network> n = std::nullopt) {
    PolicyInput in;
    in.mode = m;
    in.network = n;
    return in;
}

std::vector<std::string> paths(const CanonicalPolicy& p) {
    std::vector<std::string> out;
    for (const auto& w : p.writable) out.push_back(w.path);
    return out;
}

const std::vector<std::string>& protected_of(const CanonicalPolicy& p, const std::string& root) {
    for (const auto& w : p.writable)
        if (w.path == root) return w.protected_paths;
    FAIL("no writable root " << root);
    static std::vector<std::string> none;
    return none;
}

// Held read-only as a protected path (a name or what it leads to).
bool is_protected(const CanonicalPolicy& p, const std::string& path) {
    const FsDecision d = decide_path(p, path);
    return d.entry && d.entry->path == path && d.access == FsAccess::Read && d.entry->protection;
}

}  // namespace

TEST_CASE("the seed mapping table: mode and network to the canonical filesystem part") {
    FakeFs fs = machine();
    Environment env = fs.env("/work/repo");

    struct Row {
        Mode mode;
        std::optional<Network> net;
        Mode want_mode;
        Network want_net;
        std::vector<std::string> want_writable;
    };
    const std::vector<std::string> ws{"/work/repo", "/tmp", "/dev/shm", "/dev/null"};
    const std::vector<Row> rows{
        {Mode::ReadOnly, Network::Restricted, Mode::ReadOnly, Network::Restricted, {"/dev/null"}},
        {Mode::ReadOnly, Network::Limited, Mode::ReadOnly, Network::Limited, {"/dev/null"}},
        {Mode::ReadOnly, Network::Full, Mode::ReadOnly, Network::Full, {"/dev/null"}},
        {Mode::WorkspaceWrite, Network::Restricted, Mode::WorkspaceWrite, Network::Restricted, ws},
        {Mode::WorkspaceWrite, Network::Limited, Mode::WorkspaceWrite, Network::Limited, ws},
        {Mode::WorkspaceWrite, Network::Full, Mode::WorkspaceWrite, Network::Full, ws},
        {Mode::DangerFullAccess, std::nullopt, Mode::DangerFullAccess, Network::Full, {"/"}},
        {Mode::ExternalSandbox, std::nullopt, Mode::ExternalSandbox, Network::Restricted, {"/"}},
        {Mode::ExternalSandbox, Network::Full, Mode::ExternalSandbox, Network::Full, {"/"}},
    };
    for (const auto& r : rows) {
        CAPTURE(to_string(r.mode), r.net ? to_string(*r.net) : "default");
        CanonicalPolicy p = resolve(input(r.mode, r.net), env);
        CHECK(p.mode == r.want_mode);
        CHECK(p.network == r.want_net);
        CHECK(p.readable == std::vector<std::string>{"/"});
        CHECK(paths(p) == r.want_writable);
    }
}

TEST_CASE("defaults: read-only with restricted network") {
    FakeFs fs = machine();
    CanonicalPolicy p = resolve(PolicyInput{}, fs.env("/work/repo"));
    CHECK(p.mode == Mode::ReadOnly);
    CHECK(p.network == Network::Restricted);
    CHECK(p.workspace == "/work/repo");
    CHECK(p.protected_names == std::vector<std::string>{".git", ".sbx", ".codex", ".agents", ".aws"});
}

TEST_CASE("danger-full-access with a restricted or limited network is refused, pointing to external-sandbox") {
    FakeFs fs = machine();
    for (Network n : {Network::Restricted, Network::Limited}) {
        PolicyInput in = input(Mode::DangerFullAccess, n);
        CHECK_THROWS_WITH(resolve(in, fs.env("/work/repo")),
                          Catch::Contains("--network") && Catch::Contains("external-sandbox"));
    }
}

TEST_CASE("danger-full-access with a limit is refused: it has no sandbox to enforce it") {
    FakeFs fs = machine();
    PolicyInput in = input(Mode::DangerFullAccess, Network::Full);
    in.limits.processes = 8;
    CHECK_THROWS_WITH(resolve(in, fs.env("/work/repo")),
                      Catch::StartsWith("limits: danger-full-access has no sandbox") &&
                          Catch::Contains("-p external-sandbox -n full"));
    in.mode = Mode::ExternalSandbox;
    CHECK(resolve(in, fs.env("/work/repo")).limits.processes == 8U);
}

TEST_CASE("workspace-write: protected names at the top of every writable root, existing or not") {
    FakeFs fs = machine();
    fs.dir("/work/repo/.git/hooks");
    CanonicalPolicy p = resolve(input(Mode::WorkspaceWrite), fs.env("/work/repo"));
    CHECK(protected_of(p, "/work/repo") == std::vector<std::string>{"/work/repo/.agents", "/work/repo/.aws",
                                                                    "/work/repo/.codex", "/work/repo/.git",
                                                                    "/work/repo/.sbx"});
    CHECK(protected_of(p, "/tmp") ==
          std::vector<std::string>{"/tmp/.agents", "/tmp/.aws", "/tmp/.codex", "/tmp/.git", "/tmp/.sbx"});
    CHECK(protected_of(p, "/dev/null").empty());
}

namespace {

// Every protected path of a policy, whichever writable root holds it.
std::set<std::string> all_protected(const CanonicalPolicy& p) {
    std::set<std::string> out;
    for (const auto& w : p.writable) out.insert(w.protected_paths.begin(), w.protected_paths.end());
    return out;
}

// The given names (the default ones) in each of dirs.
std::set<std::string> names_in(const std::vector<std::string>& dirs,
                               const std::vector<std::string>& names = default_protected_names()) {
    std::set<std::string> out;
    for (const auto& d : dirs)
        for (const auto& n : names) out.insert(d + "/" + n);
    return out;
}

}  // namespace

TEST_CASE("protected names above the workspace: every directory from a root's top down to a nested root") {
    FakeFs fs = machine();
    fs.dir("/tmp/ws").dir("/tmp/a/b/ws").dir("/tmp/x/y/r").dir("/work/repo/build/out");

    SECTION("the workspace directly at a root's top, or a root of its own: the tops only, as before") {
        CanonicalPolicy p = resolve(input(Mode::WorkspaceWrite), fs.env("/tmp/ws"));
        CHECK(all_protected(p) == names_in({"/tmp", "/tmp/ws", "/dev/shm"}));
        p = resolve(input(Mode::WorkspaceWrite), fs.env("/work/repo"));
        CHECK(all_protected(p) == names_in({"/tmp", "/work/repo", "/dev/shm"}));
    }

    SECTION("nested two levels in /tmp: /tmp/a and /tmp/a/b hold the names too, held read-only by /tmp") {
        const Environment env = fs.env("/tmp/a/b/ws");
        const CanonicalPolicy p = resolve(input(Mode::WorkspaceWrite), env);
        CHECK(all_protected(p) == names_in({"/tmp", "/tmp/a", "/tmp/a/b", "/tmp/a/b/ws", "/dev/shm"}));
        const std::set<std::string> ws_names = names_in({"/tmp/a/b/ws"});
        CHECK(protected_of(p, "/tmp/a/b/ws") == std::vector<std::string>(ws_names.begin(), ws_names.end()));
        const auto& tmp = protected_of(p, "/tmp");
        CHECK(std::find(tmp.begin(), tmp.end(), "/tmp/a/.git") != tmp.end());
        CHECK(std::find(tmp.begin(), tmp.end(), "/tmp/a/b/.sbx") != tmp.end());
        CHECK(is_protected(p, "/tmp/a/b/.codex"));  // missing: held all the same
        // sbx check names the rule that decided, and the way down.
        Verdict v = check_access(p, Access::Write, "/tmp/a/.git/config", env);
        CHECK_FALSE(v.allowed);
        CHECK(v.rule ==
              "protected name .git in /tmp/a, on the way from the writable root /tmp down to the workspace "
              "/tmp/a/b/ws");
        CHECK_FALSE(check_access(p, Access::Write, "../.git", env).allowed);  // git init ..
        CHECK_FALSE(check_access(p, Access::Write, "../../.aws/credentials", env).allowed);
        // Only the names: the rest of the directories above stays writable.
        CHECK(check_access(p, Access::Write, "/tmp/a/notes.txt", env).allowed);
        CHECK(check_access(p, Access::Write, "/tmp/a/b/.gitignore", env).allowed);
        // The canonical JSON carries them and reads back the same.
        CHECK(parse_policy_text(to_json_text(p), "p.json", env) == p);
    }

    SECTION("a repository between the root and the workspace, and a .git file there") {
        fs.dir("/tmp/a/.git/hooks").dir("/tmp/gitdirs/a-b");
        fs.file("/tmp/a/b/.git", "gitdir: ../../gitdirs/a-b\n");
        const Environment env = fs.env("/tmp/a/b/ws");
        const CanonicalPolicy p = resolve(input(Mode::WorkspaceWrite), env);
        CHECK(is_protected(p, "/tmp/a/.git"));
        CHECK(is_protected(p, "/tmp/a/b/.git"));
        CHECK(is_protected(p, "/tmp/gitdirs/a-b"));  // what the .git file of /tmp/a/b leads to
        CHECK_FALSE(check_access(p, Access::Write, "/tmp/a/.git/hooks/post-checkout", env).allowed);
        const Verdict v = check_access(p, Access::Write, "/tmp/gitdirs/a-b/config", env);
        CHECK_FALSE(v.allowed);
        CHECK(v.rule ==
              "protected: /tmp/gitdirs/a-b (what a protected name in /tmp/a/b leads to, on the way from the "
              "writable root /tmp down to the workspace /tmp/a/b/ws)");
    }

    SECTION("a -w root inside /tmp: the directories above it, from /tmp down") {
        PolicyInput in = input(Mode::WorkspaceWrite);
        in.writable_roots = {{"/tmp/x/y/r", "--writable-root"}};
        const Environment env = fs.env("/work/repo");
        CanonicalPolicy p = resolve(in, env);
        CHECK(all_protected(p) == names_in({"/tmp", "/tmp/x", "/tmp/x/y", "/tmp/x/y/r", "/work/repo", "/dev/shm"}));
        CHECK(check_access(p, Access::Write, "/tmp/x/y/.git/config", env).rule ==
              "protected name .git in /tmp/x/y, on the way from the writable root /tmp down to the writable root "
              "/tmp/x/y/r");
        // A -w root inside the workspace: the directory between them too.
        in.writable_roots = {{"/work/repo/build/out", "--writable-root"}};
        p = resolve(in, env);
        CHECK(all_protected(p) ==
              names_in({"/tmp", "/work/repo", "/work/repo/build", "/work/repo/build/out", "/dev/shm"}));
    }

    SECTION("a workspace outside every writable root: its own top only") {
        PolicyInput in = input(Mode::WorkspaceWrite);
        in.exclude_slash_tmp = true;
        const Environment env = fs.env("/tmp/a/b/ws");
        const CanonicalPolicy p = resolve(in, env);
        CHECK(all_protected(p) == names_in({"/tmp/a/b/ws"}));
        CHECK(check_access(p, Access::Write, "/tmp/a/.git", env).rule == "not under a writable root");
    }

    SECTION("a directory on the way that an entry keeps read-only or denies: no names of its own") {
        const Environment env = fs.env("/tmp/a/b/ws");
        for (FsAccess access : {FsAccess::Read, FsAccess::Deny}) {
            CAPTURE(to_string(access));
            PolicyInput in = input(Mode::WorkspaceWrite);
            in.extra_entries = {FsEntry{{FsTarget::Kind::Path, "/tmp/a"}, access, "--read-only"}};
            const CanonicalPolicy p = resolve(in, env);
            std::set<std::string> want = names_in({"/tmp", "/tmp/a/b/ws", "/dev/shm"});
            if (access == FsAccess::Read) want.insert("/tmp/a");  // the carve-out, held by /tmp
            CHECK(all_protected(p) == want);
            CHECK_FALSE(check_access(p, Access::Write, "/tmp/a/b/.git/config", env).allowed);
        }
    }

    SECTION("--unprotect and --protect hold at every level") {
        PolicyInput in = input(Mode::WorkspaceWrite);
        in.protect = {".env"};
        in.unprotect = {".agents"};
        const CanonicalPolicy p = resolve(in, fs.env("/tmp/a/b/ws"));
        CHECK(all_protected(p) == names_in({"/tmp", "/tmp/a", "/tmp/a/b", "/tmp/a/b/ws", "/dev/shm"},
                                           {".git", ".sbx", ".codex", ".aws", ".env"}));
    }

    SECTION("an entry that names a protected path with write lifts it at that level only") {
        PolicyInput in = input(Mode::WorkspaceWrite);
        in.extra_entries = {FsEntry{{FsTarget::Kind::Path, "/tmp/a/.codex"}, FsAccess::Write, "--writable-root"}};
        fs.dir("/tmp/a/.codex");
        const Environment env = fs.env("/tmp/a/b/ws");
        const CanonicalPolicy p = resolve(in, env);
        CHECK(check_access(p, Access::Write, "/tmp/a/.codex/config.toml", env).allowed);
        CHECK_FALSE(check_access(p, Access::Write, "/tmp/a/b/.codex/config.toml", env).allowed);
    }
}

TEST_CASE("a path that is not UTF-8 is refused, whatever names it (the policy travels as JSON)") {
    auto refusal = [](const std::string& name, const std::string& cwd = "/work/repo") -> std::string {
        FakeFs fs = machine();
        fs.dir("/work/" + name);
        PolicyInput in = input(Mode::WorkspaceWrite);
        if (cwd == "/work/repo") in.writable_roots = {{"/work/" + name, "--writable-root"}};
        try {
            (void)resolve(in, fs.env(cwd));
        } catch (const Error& e) {
            return e.what();
        }
        return "";
    };
    CHECK(refusal("latin-\xff") ==
          "write /work/latin-\\xFF (--writable-root): the path /work/latin-\\xFF is not valid UTF-8; sbx passes the "
          "policy to its helper and reports results as JSON, which holds UTF-8 only: rename it, or leave it out of "
          "the policy");
    for (const char* bad : {"\xc0\xaf", "\xed\xa0\x80", "\xe2\x82", "\xf4\x90\x80\x80", "\x80", "x\xf0\x9f\x98"}) {
        CAPTURE(bad);
        CHECK(refusal(bad).find("is not valid UTF-8") != std::string::npos);
    }
    for (const char* good : {"caf\xc3\xa9", "\xe6\x97\xa5\xe6\x9c\xac", "\xf0\x9f\x93\x81", "\xef\xbf\xbd", "plain"}) {
        CAPTURE(good);
        CHECK(refusal(good).empty());
    }
    CHECK(refusal("ws-\xfe", "/work/ws-\xfe").starts_with("workspace (--cwd or the current directory): the path"));
}

TEST_CASE("a .git file's gitdir: target is protected too, resolved") {
    FakeFs fs = machine();
    fs.dir("/work/main-repo/.git/worktrees/wt").dir("/work/wt");
    fs.file("/work/wt/.git", "gitdir: ../main-repo/.git/worktrees/wt\n");
    CanonicalPolicy p = resolve(input(Mode::WorkspaceWrite), fs.env("/work/wt"));
    CHECK(is_protected(p, "/work/main-repo/.git/worktrees/wt"));
    CHECK(is_protected(p, "/work/wt/.git"));
    CHECK(std::find(protected_of(p, "/work/wt").begin(), protected_of(p, "/work/wt").end(), "/work/wt/.git") !=
          protected_of(p, "/work/wt").end());

    SECTION("a gitdir inside another writable root is held read-only in that root") {
        PolicyInput in = input(Mode::WorkspaceWrite);
        in.writable_roots = {{"/work/main-repo", "-w"}};
        CanonicalPolicy q = resolve(in, fs.env("/work/wt"));
        const auto& pr = protected_of(q, "/work/main-repo");
        CHECK(std::find(pr.begin(), pr.end(), "/work/main-repo/.git/worktrees/wt") != pr.end());
        CHECK_FALSE(
            check_access(q, Access::Write, "/work/main-repo/.git/worktrees/wt/HEAD", fs.env("/work/wt")).allowed);
        CHECK(check_access(q, Access::Write, "/work/main-repo/src", fs.env("/work/wt")).allowed);
    }

    SECTION("a worktree's commondir (the main repository's .git) is protected too") {
        fs.file("/work/main-repo/.git/worktrees/wt/commondir", "../..\n");
        CanonicalPolicy q = resolve(input(Mode::WorkspaceWrite), fs.env("/work/wt"));
        CHECK(is_protected(q, "/work/main-repo/.git"));
    }
    SECTION("an absolute gitdir with spaces and CRLF") {
        fs.file("/work/wt/.git", "gitdir:  /work/main-repo/.git/worktrees/wt \r\n");
        CanonicalPolicy q = resolve(input(Mode::WorkspaceWrite), fs.env("/work/wt"));
        CHECK(is_protected(q, "/work/main-repo/.git/worktrees/wt"));
    }
}

TEST_CASE("a symlinked protected name protects its target too") {
    FakeFs fs = machine();
    fs.dir("/opt/shared-codex");
    fs.link("/work/repo/.codex", "/opt/shared-codex");
    CanonicalPolicy p = resolve(input(Mode::WorkspaceWrite), fs.env("/work/repo"));
    const auto& prot = protected_of(p, "/work/repo");
    CHECK(std::find(prot.begin(), prot.end(), "/work/repo/.codex") != prot.end());
    CHECK(is_protected(p, "/opt/shared-codex"));
}

TEST_CASE("writable roots and the workspace are symlink-resolved and deduplicated") {
    FakeFs fs = machine();
    fs.link("/work/link", "repo").link("/optlink", "/opt");
    PolicyInput in = input(Mode::WorkspaceWrite);
    in.workspace = PolicyInput::SourcedPath{"/work/link", "--workspace"};
    in.writable_roots = {
        {"/optlink", "--writable-root"}, {"/opt/", "--writable-root"}, {"../../opt", "--writable-root"}};
    CanonicalPolicy p = resolve(in, fs.env("/work/repo"));
    CHECK(p.workspace == "/work/repo");
    CHECK(std::count(p.entries.begin(), p.entries.end(),
                     FsEntry{{FsTarget::Kind::Path, "/opt"}, FsAccess::Write, ""}) == 1);
    CHECK(paths(p) == std::vector<std::string>{"/work/repo", "/opt", "/tmp", "/dev/shm", "/dev/null"});
}

TEST_CASE("tmp exclusions and $TMPDIR") {
    FakeFs fs = machine();
    Environment env = fs.env("/work/repo", "/var/tmp/user");
    PolicyInput in = input(Mode::WorkspaceWrite);
    CHECK(paths(resolve(in, env)) ==
          std::vector<std::string>{"/work/repo", "/tmp", "/dev/shm", "/var/tmp/user", "/dev/null"});
    in.exclude_slash_tmp = true;
    CHECK(paths(resolve(in, env)) == std::vector<std::string>{"/work/repo", "/var/tmp/user", "/dev/null"});
    in.exclude_tmpdir_env_var = true;
    CHECK(paths(resolve(in, env)) == std::vector<std::string>{"/work/repo", "/dev/null"});

    SECTION("a $TMPDIR that is /tmp is listed once; a missing one is skipped") {
        PolicyInput plain = input(Mode::WorkspaceWrite);
        CHECK(paths(resolve(plain, fs.env("/work/repo", "/tmp/"))) ==
              std::vector<std::string>{"/work/repo", "/tmp", "/dev/shm", "/dev/null"});
        CHECK(paths(resolve(plain, fs.env("/work/repo", "/nonexistent"))) ==
              std::vector<std::string>{"/work/repo", "/tmp", "/dev/shm", "/dev/null"});
    }
}

TEST_CASE("bad paths and names are errors naming the flag") {
    FakeFs fs = machine();
    PolicyInput in = input(Mode::WorkspaceWrite);
    in.writable_roots = {{"missing-dir", "--writable-root"}};
    CHECK_THROWS_WITH(resolve(in, fs.env("/work/repo")),
                      "--writable-root: missing-dir: no such directory (relative to /work/repo)");
    in.writable_roots = {{"/dev/null", "--writable-root"}};
    CHECK_THROWS_WITH(resolve(in, fs.env("/work/repo")), "--writable-root: /dev/null: not a directory");

    PolicyInput names = input(Mode::WorkspaceWrite);
    names.protect = {"a/b"};
    CHECK_THROWS_WITH(resolve(names, fs.env("/work/repo")), Catch::StartsWith("--protect: 'a/b' is not a file name"));
    names.protect = {};
    names.unprotect = {".nothing"};
    CHECK_THROWS_WITH(resolve(names, fs.env("/work/repo")), Catch::StartsWith("--unprotect: '.nothing'"));
}

TEST_CASE("writable roots outside workspace-write are refused, with the fix") {
    FakeFs fs = machine();
    Environment env = fs.env("/work/repo");
    PolicyInput in = input(Mode::ReadOnly);
    in.writable_roots = {{"/opt", "--writable-root"}};
    CHECK_THROWS_WITH(resolve(in, env),
                      "--writable-root: writable roots need -p workspace-write (the policy is read-only)");
    in.mode_source = "default";
    CHECK_THROWS_WITH(resolve(in, env),
                      "--writable-root: writable roots need -p workspace-write (the policy is read-only)");

    SECTION("a policy document that says read-only and names writable roots contradicts itself") {
        const std::string doc = R"({"mode":"read-only","writable_roots":["/opt"]})";
        CHECK_THROWS_WITH(parse_policy_text(doc, "p.json", env),
                          "p.json: key 'writable_roots': writable roots need mode workspace-write (the policy is "
                          "read-only, from p.json: key 'mode')");
    }
    SECTION("a document that leaves the mode to later sources may name writable roots") {
        PolicyInput merged = read_policy_text(R"({"writable_roots":["/opt"]})", "p.json", env).input;
        merged.merge(input(Mode::WorkspaceWrite));
        const CanonicalPolicy p = resolve(merged, env);
        CHECK(
            std::any_of(p.writable.begin(), p.writable.end(), [](const WritableRoot& w) { return w.path == "/opt"; }));
    }
    SECTION("the modes without a filesystem sandbox: everything is writable already") {
        in.mode = Mode::DangerFullAccess;
        CHECK_THROWS_WITH(resolve(in, env), Catch::StartsWith("--writable-root: danger-full-access makes everything "
                                                              "writable already"));
        in.mode = Mode::ExternalSandbox;
        CHECK_THROWS_WITH(resolve(in, env), Catch::StartsWith("--writable-root: external-sandbox leaves the "
                                                              "filesystem to the sandbox outside sbx"));
    }
}

TEST_CASE("--protect adds a name, --unprotect removes one") {
    FakeFs fs = machine();
    PolicyInput in = input(Mode::WorkspaceWrite);
    in.protect = {".env"};
    in.unprotect = {".agents"};
    CanonicalPolicy p = resolve(in, fs.env("/work/repo"));
    CHECK(p.protected_names == std::vector<std::string>{".git", ".sbx", ".codex", ".aws", ".env"});
    CHECK(protected_of(p, "/work/repo") == std::vector<std::string>{"/work/repo/.aws", "/work/repo/.codex",
                                                                    "/work/repo/.env", "/work/repo/.git",
                                                                    "/work/repo/.sbx"});
}

TEST_CASE("merge: later sources override, lists accumulate") {
    PolicyInput file;
    file.mode = Mode::ReadOnly;
    file.mode_source = "f.json: key 'mode'";
    file.writable_roots = {{"/a", "f.json"}};
    file.limits.memory = 100;
    PolicyInput flags;
    flags.mode = Mode::WorkspaceWrite;
    flags.writable_roots = {{"/b", "--writable-root"}};
    flags.limits.cpu_seconds = 5;
    file.merge(flags);
    CHECK(file.mode == Mode::WorkspaceWrite);
    CHECK(file.mode_source == "--policy");
    CHECK(file.writable_roots.size() == 2);
    CHECK(file.limits.memory == 100u);
    CHECK(file.limits.cpu_seconds == 5u);
}

TEST_CASE("canonical JSON: print -> parse -> print is the identity") {
    FakeFs fs = machine();
    fs.dir("/work/repo/.git");
    Environment env = fs.env("/work/repo", "/var/tmp/user");
    PolicyInput in = input(Mode::WorkspaceWrite, Network::Limited);
    in.writable_roots = {{"/opt", "-w"}};
    in.protect = {".env"};
    in.limits.memory = 1 << 30;
    in.limits.open_files = 64;
    CanonicalPolicy p = resolve(in, env);
    std::string text = to_json_text(p);
    CanonicalPolicy back = parse_policy_text(text, "policy.json", env);
    CHECK(back == p);
    CHECK(to_json_text(back) == text);

    SECTION("every mode round-trips") {
        for (Mode m : {Mode::ReadOnly, Mode::WorkspaceWrite, Mode::DangerFullAccess, Mode::ExternalSandbox}) {
            CanonicalPolicy q = resolve(input(m), env);
            CHECK(to_json_text(parse_policy_text(to_json_text(q), "p", env)) == to_json_text(q));
        }
    }
    SECTION("a derived key that disagrees is an error naming it") {
        json doc = json::parse(text);
        doc["writable"] = json::array();
        CHECK_THROWS_WITH(parse_policy_text(doc.dump(), "policy.json", env),
                          Catch::StartsWith("policy.json: key 'writable' does not match"));
    }
}

TEST_CASE("policy documents: bad input names the source and key") {
    FakeFs fs = machine();
    Environment env = fs.env("/work/repo");
    auto err = [&](const std::string& text) {
        try {
            parse_policy_text(text, "p.json", env);
        } catch (const Error& e) {
            return std::string(e.what());
        }
        return std::string("no error");
    };
    CHECK(err(R"({"mode":5})") == "p.json: key 'mode': expected a string, got a number");
    CHECK(err(R"({"mode":"sideways"})") ==
          "p.json: key 'mode': 'sideways' is not one of: read-only, workspace-write, danger-full-access, "
          "external-sandbox");
    CHECK(err(R"({"color":"red"})").starts_with("p.json: unknown key 'color' (known keys: mode, network,"));
    CHECK(err(R"({"mode":"read-only",})").starts_with("p.json: invalid JSON: parse error"));
    CHECK(err("1e999999") == "p.json: invalid JSON: number overflow parsing '1e999999'");  // found by fuzzing
    CHECK(err(R"([1])") == "p.json: expected a JSON object, got a list");
    CHECK(err(R"({"writable_roots":["rel"]})") == "p.json: key 'writable_roots': 'rel' is not an absolute path");
    CHECK(err(R"({"writable_roots":[1]})") ==
          "p.json: key 'writable_roots': expected a list of strings, found a number");
    CHECK(err(R"({"limits":{"memory":-1}})") ==
          "p.json: key 'limits': key 'memory': expected a whole number >= 0 or null, got a number");
    CHECK(err(R"({"limits":{"disk":1}})").starts_with("p.json: key 'limits': unknown key 'disk'"));
    CHECK(err(R"({"exclude_slash_tmp":"yes"})") ==
          "p.json: key 'exclude_slash_tmp': expected true or false, got a string");
    CHECK(err(R"({"mode":"danger-full-access","network":"restricted"})")
              .starts_with("p.json: key 'network': danger-full-access has no sandbox"));
    CHECK(err(R"({"writable_roots":["/nope"],"mode":"workspace-write"})") ==
          "p.json: key 'writable_roots': /nope: no such directory");
}

TEST_CASE("Codex SandboxPolicy JSON") {
    FakeFs fs = machine();
    Environment env = fs.env("/work/repo");
    auto parse = [&](const std::string& t) { return parse_policy_text(t, "--sandbox-policy", env); };

    CanonicalPolicy ro = parse(R"({"type":"read-only"})");
    CHECK(ro.mode == Mode::ReadOnly);
    CHECK(ro.network == Network::Restricted);

    CanonicalPolicy ww = parse(R"({"type":"workspace-write","writable_roots":["/opt"],"network_access":false,)"
                               R"("exclude_tmpdir_env_var":false,"exclude_slash_tmp":true})");
    CHECK(ww.mode == Mode::WorkspaceWrite);
    CHECK(ww.network == Network::Restricted);
    CHECK(paths(ww) == std::vector<std::string>{"/work/repo", "/opt", "/dev/null"});
    CHECK(parse(R"({"type":"workspace-write","network_access":true})").network == Network::Full);

    CHECK(parse(R"({"type":"danger-full-access"})").mode == Mode::DangerFullAccess);
    CanonicalPolicy ext = parse(R"({"type":"external-sandbox","network_access":"restricted"})");
    CHECK(ext.mode == Mode::ExternalSandbox);
    CHECK(ext.network == Network::Restricted);
    CHECK(parse(R"({"type":"external-sandbox","network_access":"enabled"})").network == Network::Full);

    CHECK_THROWS_WITH(parse(R"({"type":"read-only","writable_roots":[]})"),
                      Catch::StartsWith("--sandbox-policy: unknown key 'writable_roots'"));
    CHECK_THROWS_WITH(parse(R"({"type":"jail"})"), Catch::StartsWith("--sandbox-policy: key 'type': 'jail'"));
    CHECK_THROWS_WITH(parse(R"({"type":"workspace-write","network_access":"yes"})"),
                      "--sandbox-policy: key 'network_access': expected true or false, got a string");
}

TEST_CASE("sbx check answers from the canonical policy") {
    FakeFs fs = machine();
    fs.dir("/work/repo/.git/hooks").dir("/work/repo/src");
    fs.link("/work/repo/out", "/etc").dir("/etc").file("/etc/passwd");
    fs.link("/work/repo/dangling", "/nonexistent/dir").link("/work/repo/up", "../repo/src");
    Environment env = fs.env("/work/repo");
    CanonicalPolicy ww = resolve(input(Mode::WorkspaceWrite), env);

    Verdict v = check_access(ww, Access::Write, "src/new.c", env);
    CHECK(v.allowed);
    CHECK(v.subject == "/work/repo/src/new.c");
    CHECK(v.rule == "write /work/repo (workspace-write preset: the workspace)");

    v = check_access(ww, Access::Write, ".git/hooks/pre-commit", env);
    CHECK_FALSE(v.allowed);
    CHECK(v.rule == "protected name .git in /work/repo");
    CHECK_FALSE(check_access(ww, Access::Write, ".sbx/x", env).allowed);  // does not exist yet
    CHECK_FALSE(check_access(ww, Access::Write, "/etc/passwd", env).allowed);
    v = check_access(ww, Access::Write, "out/passwd", env);  // a symlink out of the workspace
    CHECK_FALSE(v.allowed);
    CHECK(v.subject == "/etc/passwd");
    v = check_access(ww, Access::Write, "dangling/x", env);  // followed although it points nowhere
    CHECK_FALSE(v.allowed);
    CHECK(v.subject == "/nonexistent/dir/x");
    v = check_access(ww, Access::Write, "up/../new", env);  // ".." after a symlink is the target's parent
    CHECK(v.subject == "/work/repo/new");
    CHECK(check_access(ww, Access::Write, "/tmp/x", env).allowed);
    CHECK(check_access(ww, Access::Read, "/etc/passwd", env).allowed);

    CanonicalPolicy ro = resolve(input(Mode::ReadOnly), env);
    CHECK_FALSE(check_access(ro, Access::Write, "src/x", env).allowed);
    CHECK(check_access(ro, Access::Write, "/dev/null", env).allowed);
    CHECK(check_access(ro, Access::Exec, "/bin/sh", env).allowed);

    CHECK_FALSE(check_access(ro, Access::Connect, "127.0.0.1:80", env).allowed);
    CanonicalPolicy lim = resolve(input(Mode::ReadOnly, Network::Limited), env);
    // The host's loopback is out of reach; the sandbox's own is not the question (issue 35).
    CHECK_FALSE(check_access(lim, Access::Connect, "localhost:8080", env).allowed);
    CHECK(check_access(lim, Access::Connect, "[::1]:8080", env)
              .rule.starts_with("network limited: the host's [::1]:8080 is out of reach"));
    CHECK_FALSE(check_access(lim, Access::Connect, "10.0.0.1:80", env).allowed);
    CanonicalPolicy full = resolve(input(Mode::ReadOnly, Network::Full), env);
    CHECK(check_access(full, Access::Connect, "example.org:443", env).allowed);
    CHECK_THROWS_WITH(check_access(full, Access::Connect, "example.org", env),
                      "--connect: 'example.org' is not HOST:PORT");
    CHECK_THROWS_AS(check_access(full, Access::Connect, "h:99999", env), Error);
}

TEST_CASE("~ in a policy file is $HOME, as on the command line") {
    test::FakeFs fs;
    fs.dir("/home/u").dir("/home/u/.cache").dir("/home/u/.cache/pip").dir("/work").dir("/tmp").dir("/dev/shm");
    Environment env = fs.env("/work");
    env.home = "/home/u";
    CHECK(expand_home("~", env, "s") == "/home/u");
    CHECK(expand_home("~/a/../b", env, "s") == "/home/u/b");
    CHECK(expand_home("/abs/~", env, "s") == "/abs/~");
    CHECK_THROWS_WITH(expand_home("~root/x", env, "p.json"),
                      "p.json: '~root/x': only ~ and ~/ are expanded (the home of another user is not)");
    const CanonicalPolicy p =
        parse_policy_text(R"({"entries":[{"path":"~/.cache/pip","access":"write"}]})", "p.json", env);
    CHECK(p.entries.front().target.value == "/home/u/.cache/pip");
    const CanonicalPolicy q =
        parse_policy_text(R"({"mode":"workspace-write","writable_roots":["~/.cache/pip"]})", "p.json", env);
    CHECK(std::any_of(q.writable.begin(), q.writable.end(),
                      [](const WritableRoot& r) { return r.path == "/home/u/.cache/pip"; }));
    env.home.reset();
    CHECK_THROWS_WITH(parse_policy_text(R"({"mode":"workspace-write","writable_roots":["~/.cache"]})", "p.json", env),
                      "p.json: key 'writable_roots': '~/.cache': ~ needs $HOME set to an absolute path; write the "
                      "path in full");
}

TEST_CASE("missing writable roots: the last component, where the parent exists; resolved as if made") {
    test::FakeFs fs;
    fs.dir("/home/u").dir("/work").dir("/tmp").dir("/dev/shm").file("/dev/null").link("/h", "/home/u");
    Environment env = fs.env("/work");
    env.home = "/home/u";
    PolicyInput in{};
    in.mode = Mode::WorkspaceWrite;
    in.writable_roots = {
        {"~/.cache", "p.json"}, {"/h/.cache", "-w"}, {"/home/u/a/b", "-w"}, {"/work", "-w"}, {"rel", "-w"}};
    // Symlinked parents resolved, each once; /home/u/a/b has no parent; /work exists.
    CHECK(missing_writable_roots(in, env) == std::vector<std::string>{"/home/u/.cache", "/work/rel"});
    CHECK_THROWS_WITH(resolve(in, env), "p.json: /home/u/.cache: no such directory");
    in.writable_roots.erase(in.writable_roots.begin() + 2);
    const Environment later = with_directories(env, missing_writable_roots(in, env));
    CHECK(later.is_directory("/home/u/.cache"));
    CHECK(!later.lexists("/home/u/.cache/x"));
    CHECK(later.list_directory("/home/u/.cache").empty());
    const CanonicalPolicy p = resolve(in, later);
    CHECK(decide_path(p, "/home/u/.cache/pip/x").access == FsAccess::Write);
    CHECK(decide_path(p, "/work/rel/x").access == FsAccess::Write);
}

TEST_CASE("missing write entries of a path, as a policy file gives them: the last component, where the parent exists") {
    test::FakeFs fs;
    fs.dir("/home/u/.cache").dir("/work").dir("/tmp").dir("/dev/shm").file("/dev/null").link("/h", "/home/u");
    Environment env = fs.env("/work");
    env.home = "/home/u";
    auto entry = [](FsTarget::Kind kind, const std::string& value, FsAccess access) {
        return FsEntry{{kind, value}, access, "p.json: key 'entries'"};
    };
    PolicyInput in{};
    in.entries = std::vector<FsEntry>{entry(FsTarget::Kind::Root, "", FsAccess::Read),
                                      entry(FsTarget::Kind::Path, "/h/.cache/tool", FsAccess::Write),
                                      entry(FsTarget::Kind::Path, "/home/u/.cache/ro", FsAccess::Read),
                                      entry(FsTarget::Kind::Path, "/home/u/a/b", FsAccess::Write),
                                      entry(FsTarget::Kind::Glob, "/home/u/.cache/g*", FsAccess::Write),
                                      entry(FsTarget::Kind::Path, "/work", FsAccess::Write)};
    in.extra_entries = {entry(FsTarget::Kind::Path, "/home/u/.cache/tool", FsAccess::Write),
                        entry(FsTarget::Kind::Path, "/home/u/.npm", FsAccess::Write)};
    // Writes only, of a path (no glob); each once, symlinked parents resolved;
    // /home/u/a/b has no parent; /work exists.
    CHECK(missing_write_entries(in, env) == std::vector<std::string>{"/home/u/.cache/tool", "/home/u/.npm"});
    CHECK(missing_writable_roots(in, env).empty());
    const CanonicalPolicy p = resolve(in, with_directories(env, missing_write_entries(in, env)));
    CHECK(decide_path(p, "/home/u/.cache/tool/x").access == FsAccess::Write);
}

TEST_CASE("issue 29: sbx's state directory is held read-only wherever a writable root contains it") {
    test::FakeFs fs;
    fs.dir("/home/u/proj").dir("/home/u/.local").dir("/tmp").dir("/dev/shm").file("/dev/null").link("/h", "/home/u");
    PolicyInput in{};
    in.mode = Mode::WorkspaceWrite;
    // The workspace is $HOME: the state directory (missing, below a missing
    // ~/.local/state) is held, and made by sbx run, the parents first.
    Environment env = fs.env("/home/u");
    env.sbx_state = "/h/.local/state/sbx";
    const CanonicalPolicy at_home = resolve(in, env);
    const auto held = held_state_directory(at_home, env);
    REQUIRE(held);
    CHECK(held->path == "/home/u/.local/state/sbx");
    CHECK(held->missing == std::vector<std::string>{"/home/u/.local/state", "/home/u/.local/state/sbx"});
    // Not held while missing (a placeholder would hold a missing ~/.local/state
    // in its place); resolved as if made, it alone is held.
    CHECK(decide_path(at_home, "/home/u/.local/state").access == FsAccess::Write);
    const CanonicalPolicy made = resolve(in, with_directories(env, held->missing));
    const auto d = decide_path(made, "/home/u/.local/state/sbx/sessions/s.json");
    CHECK(d.access == FsAccess::Read);
    REQUIRE(d.entry);
    CHECK(d.entry->rule == kStateDirectoryRule);
    CHECK(decide_path(made, "/home/u/.local/state").access == FsAccess::Write);
    CHECK(decide_path(made, "/home/u/.local/state/other").access == FsAccess::Write);
    // Nor while only the state directory itself is missing (sbx run makes it).
    fs.dir("/home/u/.local/state");
    const CanonicalPolicy parent_only = resolve(in, env);
    CHECK(decide_path(parent_only, "/home/u/.local/state/sbx").access == FsAccess::Write);
    // Without a filesystem sandbox there is nothing to hold.
    in.mode = Mode::DangerFullAccess;
    CHECK_FALSE(held_state_directory(resolve(in, env), env));
    in.mode = Mode::WorkspaceWrite;
    // A workspace that does not contain it: nothing held.
    Environment proj_env = fs.env("/home/u/proj");
    proj_env.sbx_state = "/home/u/.local/state/sbx";
    CHECK_FALSE(held_state_directory(resolve(in, proj_env), proj_env));
    // Read-only mode: nothing writable, nothing to hold; an explicit -w on it
    // is the user's word.
    in.mode = Mode::ReadOnly;
    CHECK_FALSE(held_state_directory(resolve(in, env), env));
    in.mode = Mode::WorkspaceWrite;
    fs.dir("/home/u/.local/state/sbx");
    Environment exists = fs.env("/home/u");
    exists.sbx_state = "/home/u/.local/state/sbx";
    in.writable_roots = {{"/home/u/.local/state/sbx", "-w"}};
    CHECK_FALSE(held_state_directory(resolve(in, exists), exists));
    in.writable_roots.clear();
    const auto existing = held_state_directory(resolve(in, exists), exists);
    REQUIRE(existing);
    CHECK(existing->missing.empty());
}

TEST_CASE("sbx's policy documents take Codex's permission profile, resolved as the helper resolves it") {
    FakeFs fs = machine();
    fs.dir("/work/repo/.git").dir("/var/tmp/user/out");
    Environment env = fs.env("/work/repo");
    // CODEX-HELPER.md section 7, example 2, in /work/repo.
    const std::string ex2 =
        R"({"type":"managed","file_system":{"type":"restricted","entries":[{"path":{"type":"special","value":{"kind":"root"}},"access":"read"},{"path":{"type":"path","path":"/work/repo"},"access":"write"},{"path":{"type":"special","value":{"kind":"slash_tmp"}},"access":"write"},{"path":{"type":"special","value":{"kind":"tmpdir"}},"access":"write"},{"path":{"type":"path","path":"/work/repo/.git"},"access":"read","missing_path_behavior":"skip"},{"path":{"type":"path","path":"/work/repo/.agents"},"access":"read","missing_path_behavior":"skip"},{"path":{"type":"path","path":"/work/repo/.codex"},"access":"read","missing_path_behavior":"skip"},{"path":{"type":"path","path":"/work/repo/.aws"},"access":"read","missing_path_behavior":"skip"}]},"network":"restricted"})";
    const CanonicalPolicy helper = resolve(input_from_permission_profile(ex2, env.cwd), env);
    const CheckedPolicy read = read_policy_document(ex2, "--policy-json", env);
    CHECK(read.policy == helper);
    CHECK(read.input.entries == input_from_document_text(ex2, "--policy-json", env.cwd).entries);
    CHECK(read.policy.mode == Mode::WorkspaceWrite);
    CHECK(read.policy.network == Network::Restricted);
    CHECK(check_access(read.policy, Access::Write, "src.c", env).allowed);
    CHECK_FALSE(check_access(read.policy, Access::Write, "/var/tmp/user/out/x", env).allowed);
    CHECK_FALSE(check_access(read.policy, Access::Write, ".git/config", env).allowed);
    // Printed and read back as sbx's canonical policy: the same.
    CHECK(read_policy_document(to_json_text(read.policy), "p.json", env).policy == read.policy);

    // :project_roots is the policy cwd (the workspace).
    const CanonicalPolicy pr =
        read_policy_document(
            R"({"type":"managed","file_system":{"type":"restricted","entries":[{"path":{"type":"special","value":{"kind":"root"}},"access":"read"},{"path":{"type":"special","value":{"kind":"project_roots"}},"access":"write"}]},"network":"enabled"})",
            "p.json", env)
            .policy;
    CHECK(paths(pr) == std::vector<std::string>{"/work/repo", "/dev/null"});
    CHECK(pr.network == Network::Full);

    const CanonicalPolicy off = read_policy_document(R"({"type":"disabled"})", "p.json", env).policy;
    CHECK(off.mode == Mode::DangerFullAccess);
    CHECK(off.network == Network::Full);
    const CanonicalPolicy ext =
        read_policy_document(R"({"type":"external","network":"restricted"})", "p.json", env).policy;
    CHECK(ext.mode == Mode::ExternalSandbox);
    CHECK(ext.network == Network::Restricted);

    // The other documents as before.
    CHECK(read_policy_document(R"({"type":"read-only"})", "p.json", env).policy.mode == Mode::ReadOnly);
    CHECK(read_policy_document(R"({"mode":"workspace-write"})", "p.json", env).policy.mode == Mode::WorkspaceWrite);
    CHECK_THROWS_WITH(read_policy_document(R"({"type":"jail"})", "p.json", env),
                      Catch::StartsWith("p.json: key 'type': 'jail'"));

    // Bad input: one line naming the source and the key; unknown keys refused.
    CHECK_THROWS_WITH(
        read_policy_document(R"({"type":"managed","file_system":{"type":"unrestricted"},"network":"on"})", "p.json",
                             env),
        "p.json: invalid permission profile: key 'network': \"on\" is not one of \"restricted\", \"enabled\"");
    CHECK_THROWS_WITH(input_from_document_text(R"({"type":"disabled","netwrk":"enabled"})", "--policy-json", env.cwd),
                      Catch::StartsWith("--policy-json: invalid permission profile: key 'netwrk': unknown key"));
    CHECK_THROWS_WITH(read_policy_document(R"({"type":"managed",)", "--policy-json", env),
                      Catch::StartsWith("--policy-json: invalid JSON"));
}

TEST_CASE("the helper's --sandbox-policy leaves out a writable root that does not exist, as Codex's did") {
    FakeFs fs = machine();
    Environment env = fs.env("/work/repo");
    const std::string doc = R"({"type":"workspace-write","writable_roots":["/opt","/nonexistent/out","/work/gone"]})";
    const CanonicalPolicy p = parse_sandbox_policy_text(doc, "--sandbox-policy", env);
    CHECK(paths(p) == std::vector<std::string>{"/work/repo", "/opt", "/tmp", "/dev/shm", "/dev/null"});
    // Elsewhere a missing root is still an error (sbx run makes it first).
    CHECK_THROWS_WITH(parse_policy_text(doc, "p.json", env), Catch::Contains("/nonexistent/out: no such directory"));
    // A root that exists but is not a directory is still refused.
    fs.file("/work/file");
    env = fs.env("/work/repo");
    CHECK_THROWS_WITH(parse_sandbox_policy_text(R"({"type":"workspace-write","writable_roots":["/work/file"]})",
                                                "--sandbox-policy", env),
                      Catch::Contains("/work/file: not a directory"));
}

TEST_CASE("/dev/shm is the sandbox's own unless an entry names it") {
    FakeFs fs = machine();
    Environment env = fs.env("/work/repo");
    const CanonicalPolicy ro = resolve(input(Mode::ReadOnly), env);
    CHECK(ro.private_dev_shm());
    PolicyInput excluded = input(Mode::WorkspaceWrite);
    excluded.exclude_slash_tmp = true;
    CHECK(resolve(excluded, env).private_dev_shm());
    // workspace-write's preset names the host's, writable.
    const CanonicalPolicy ww = resolve(input(Mode::WorkspaceWrite), env);
    CHECK_FALSE(ww.private_dev_shm());
    CHECK(check_access(ww, Access::Write, "/dev/shm/x", env).allowed);
    CHECK_FALSE(resolve(input(Mode::ExternalSandbox), env).private_dev_shm());
    PolicyInput named = input(Mode::ReadOnly);
    named.extra_entries.push_back({{FsTarget::Kind::Path, "/dev/shm"}, FsAccess::Read, "--read-only"});
    CHECK_FALSE(resolve(named, env).private_dev_shm());

    // sbx check: the host's /dev/shm is out of reach, for reads and writes.
    for (const Access a : {Access::Read, Access::Write}) {
        const Verdict v = check_access(ro, a, "/dev/shm/x", env);
        CHECK_FALSE(v.allowed);
        CHECK_THAT(v.rule, Catch::StartsWith("sbx: /dev/shm is the sandbox's own"));
    }
    CHECK(check_access(ro, Access::Read, "/dev/null", env).allowed);
}
