// The rule and the fix of one denial (denial/fix.h): every rule of the fix.
#include <catch2/catch.hpp>

#include "denial/fix.h"
#include "fake_fs.h"

using namespace sbx;
using sbx::test::FakeFs;

namespace {

FakeFs machine() {
    FakeFs fs;
    fs.dir("/usr/bin").dir("/etc").dir("/tmp").dir("/dev/shm").dir("/root/.npm/_cacache").dir("/home/u/.cache");
    fs.dir("/home/u/.ssh").dir("/w/src").dir("/w/.git").dir("/opt/data/sub").dir("/srv");
    fs.file("/dev/null").file("/etc/shadow").file("/home/u/.bashrc");
    return fs;
}

Environment env_of(const FakeFs& fs, const std::string& home = "/root") {
    Environment env = fs.env("/w");
    env.home = home;
    return env;
}

CanonicalPolicy policy(const Environment& env, Mode mode = Mode::WorkspaceWrite, Network net = Network::Restricted) {
    PolicyInput in{};
    in.mode = mode;
    in.network = net;
    return resolve(in, env);
}

Denial op(const std::string& operation, const std::string& path) {
    Denial d;
    d.operation = operation;
    d.path = path;
    return d;
}

// What the output heuristic made of a failure: its message and the path it names.
DenialAnalysis guessed(const std::string& reason, const std::string& path) {
    DenialAnalysis a;
    a.sandbox_denied = true;
    a.reason = reason;
    a.path = path;
    return a;
}

Denial connect(const std::string& address) {
    Denial d;
    d.operation = "connect";
    d.address = address;
    return d;
}

}  // namespace

TEST_CASE("fix: the top of a tool directory under $HOME, not the hash directory") {
    const FakeFs fs = machine();
    const Environment env = env_of(fs);
    const CanonicalPolicy p = policy(env);
    const Fix f = fix_for(p, op("create", "/root/.npm/_cacache/index-v5/04/5a"), env);
    CHECK(f.rule == "not under a writable root");
    CHECK(f.flags_text() == "-w /root/.npm");
    CHECK(f.text() == "-w /root/.npm");
    // ~/.npm itself not there yet: -w ~/.npm (sbx run makes it).
    CHECK(fix_for(p, op("create", "/root/.npm"), env).flags_text() == "-w /root/.npm");
    CHECK(fix_for(p, op("create", "/root/.m2/repository/org/x.jar"), env).flags_text() == "-w /root/.m2");
    CHECK(fix_for(p, op("write", "/root/.cargo/registry/index/x"), env).flags_text() ==
          "-w /root/.cargo");  // no ~/.cargo
    CHECK(fix_for(p, op("create", "/root/.gradle/caches/x"), env).flags_text() == "-w /root/.gradle");
}

TEST_CASE("fix: ~/.cache/NAME where ~/.cache exists, ~/.cache where it does not") {
    const FakeFs fs = machine();
    Environment env = env_of(fs, "/home/u");
    const CanonicalPolicy p = policy(env);
    CHECK(fix_for(p, op("create", "/home/u/.cache/pip/http/a/b"), env).flags_text() == "-w /home/u/.cache/pip");
    CHECK(fix_for(p, op("create", "/home/u/.cache/pip"), env).flags_text() == "-w /home/u/.cache/pip");
    env = env_of(fs, "/root");  // no /root/.cache
    CHECK(fix_for(p, op("create", "/root/.cache/pip/http/a"), env).flags_text() == "-w /root/.cache");
    CHECK(fix_for(p, op("create", "/root/.cache"), env).flags_text() == "-w /root/.cache");
    CHECK(tool_directories().size() == 12);
}

TEST_CASE("fix: never $HOME, /, ~/.ssh, /dev or a directory already writable") {
    const FakeFs fs = machine();
    const Environment env = env_of(fs, "/home/u");
    const CanonicalPolicy p = policy(env);
    Fix f = fix_for(p, op("write", "/home/u/.bashrc"), env);
    CHECK(f.change.empty());
    CHECK(f.text() == "no flag suggested: that would make $HOME writable");
    CHECK(fix_for(p, op("create", "/home/v"), env).text() == "no flag suggested: that would make $HOME writable");
    CHECK(fix_for(p, op("create", "/x"), env).text() == "no flag suggested: that would make / writable");
    CHECK(fix_for(p, op("write", "/home/u/.ssh/known_hosts"), env).text() ==
          "no flag suggested: that would make ~/.ssh writable");
    // An unknown directory under $HOME, or elsewhere: the directory holding the path.
    CHECK(fix_for(p, op("create", "/opt/data/sub/f"), env).flags_text() == "-w /opt/data/sub");
    CHECK(fix_for(p, op("remove", "/etc/hostname"), env).flags_text() == "-w /etc");
    // HOME=/ is no home: the fix is then the directory, as without $HOME.
    CHECK(fix_for(p, op("create", "/opt/data/sub/f"), env_of(fs, "/")).flags_text() == "-w /opt/data/sub");
    CHECK(fix_for(p, op("create", "/x"), env_of(fs, "/")).text() == "no flag suggested: that would make / writable");
    // A device node (python opening /dev/tty): never -w /dev, in any mode.
    for (const CanonicalPolicy& q : {p, policy(env, Mode::ReadOnly)}) {
        CHECK(fix_for(q, op("write", "/dev/tty"), env).text() ==
              "no flag suggested: the sandbox's device nodes are read-only but /dev/null");
        CHECK(fix_for(q, op("create", "/dev/x"), env).change.empty());
    }
    // What the policy allows was not the sandbox's.
    CHECK(fix_for(p, op("write", "/w/src/a.c"), env).text() ==
          "no flag suggested: the policy allows writes to /w/src/a.c; the refusal was not the sandbox's");
}

TEST_CASE("fix: a protected name is lifted with --unprotect, never -w") {
    const FakeFs fs = machine();
    const Environment env = env_of(fs);
    const CanonicalPolicy p = policy(env);
    Fix f = fix_for(p, op("create", "/w/.git/config"), env);
    CHECK(f.rule == "protected name .git in /w");
    CHECK(f.flags_text() == "--unprotect .git");
    f = fix_for(p, op("create", "/w/.sbx/x"), env);  // a placeholder: does not exist
    CHECK(f.rule == "protected name .sbx in /w");
    CHECK(f.flags_text() == "--unprotect .sbx");
}

TEST_CASE("fix: what git writes as it commits is opened with --git-write, its configuration is not") {
    const FakeFs fs = machine();
    const Environment env = env_of(fs);
    const CanonicalPolicy p = policy(env);
    for (const char* path : {"/w/.git/index.lock", "/w/.git/HEAD.lock", "/w/.git/objects/ab/cdef",
                             "/w/.git/refs/heads/main.lock", "/w/.git/logs/HEAD", "/w/.git/ORIG_HEAD"}) {
        INFO(path);
        CHECK(fix_for(p, op("create", path), env).flags_text() == "--git-write");
    }
    for (const char* path : {"/w/.git/config", "/w/.git/hooks/pre-commit", "/w/.git/info/attributes",
                             "/w/.git/commondir", "/w/.git/index.lock/x"}) {
        INFO(path);
        CHECK(fix_for(p, op("create", path), env).flags_text() == "--unprotect .git");
    }
}

TEST_CASE("fix: a protected name above a nested workspace is lifted with --unprotect too") {
    FakeFs fs = machine();
    fs.dir("/tmp/a/ws");
    Environment env = fs.env("/tmp/a/ws");
    env.home = "/root";
    const CanonicalPolicy p = policy(env);
    const Fix f = fix_for(p, op("create", "/tmp/a/.git"), env);
    CHECK(f.rule ==
          "protected name .git in /tmp/a, on the way from the writable root /tmp down to the workspace /tmp/a/ws");
    CHECK(f.flags_text() == "--unprotect .git");
}

TEST_CASE("fix: read-only gets -p workspace-write, with -w outside the workspace") {
    const FakeFs fs = machine();
    const Environment env = env_of(fs);
    const CanonicalPolicy p = policy(env, Mode::ReadOnly);
    Fix f = fix_for(p, op("create", "/w/src/out.o"), env);
    CHECK(f.rule == "read :root (read-only preset): nothing is writable but /dev/null");
    CHECK(f.flags_text() == "-p workspace-write");
    CHECK(fix_for(p, op("create", "/w/.git/x"), env).flags_text() == "-p workspace-write --unprotect .git");
    CHECK(fix_for(p, op("create", "/root/.npm/_cacache/x"), env).flags_text() == "-p workspace-write -w /root/.npm");
    CHECK(fix_for(p, op("create", "/root/x"), env).text() == "no flag suggested: that would make $HOME writable");
}

TEST_CASE("fix: the policy's own entries are named, never widened") {
    FakeFs fs = machine();
    Environment env = env_of(fs, "/home/u");
    PolicyInput in{};
    in.mode = Mode::WorkspaceWrite;
    in.extra_entries = {{{FsTarget::Kind::Path, "/opt/data"}, FsAccess::Deny, "--deny"},
                        {{FsTarget::Kind::Path, "/w/src"}, FsAccess::Read, "--read-only"}};
    const CanonicalPolicy p = resolve(in, env);
    Fix f = fix_for(p, op("write", "/opt/data/sub/f"), env);
    CHECK(f.rule == "deny /opt/data (--deny)");
    CHECK(f.text() == "no flag suggested: an entry of the policy denies it (drop that entry to allow it)");
    f = fix_for(p, op("write", "/w/src/a.c"), env);
    CHECK(f.rule == "read /w/src (--read-only): read-only");
    CHECK(f.text() == "no flag suggested: an entry of the policy keeps it read-only (drop that entry to allow writes)");
    f = fix_for(p, op("fs.read_file", "/opt/data/sub/f"), env);
    CHECK(f.rule == "deny /opt/data (--deny)");
    CHECK(f.change.empty());
}

TEST_CASE("fix: a paths with shell characters is quoted") {
    FakeFs fs = machine();
    fs.dir("/opt/my data");
    const Environment env = env_of(fs);
    const CanonicalPolicy p = policy(env);
    CHECK(fix_for(p, op("create", "/opt/my data/f"), env).flags_text() == "-w '/opt/my data'");
    fs.dir("/opt/it's");
    CHECK(fix_for(p, op("create", "/opt/it's/f"), env).flags_text() == "-w '/opt/it'\\''s'");
}

TEST_CASE("fix: network: the destination's rule and -n full, never -n limited") {
    const FakeFs fs = machine();
    const Environment env = env_of(fs);
    CanonicalPolicy p = policy(env);
    Fix f = fix_for(p, connect("10.255.255.1:80"), env);
    CHECK(f.rule == "network restricted: no sockets except AF_UNIX socketpair");
    CHECK(f.flags_text() == "-n full");
    // The host's loopback: -n limited would reach only the sandbox's own.
    CHECK(fix_for(p, connect("127.0.0.1:8080"), env).flags_text() == "-n full");
    CHECK(fix_for(p, connect("[::1]:8080"), env).flags_text() == "-n full");
    // A lookup whose name the output gave: that name, before the whole network (issue 35).
    Denial lookup = connect("10.255.255.53:53");
    lookup.host = "example.com";
    f = fix_for(p, lookup, env);
    CHECK(f.rule == "network restricted: no sockets except AF_UNIX socketpair");
    CHECK(f.flags_text() == "--allow-domain example.com");
    CHECK(fix_for(p, connect("10.255.255.53:53"), env).flags_text() == "-n full");
    p = policy(env, Mode::WorkspaceWrite, Network::Limited);
    CHECK(fix_for(p, lookup, env).flags_text() == "--allow-domain example.com");
    f = fix_for(p, connect("10.0.0.1:443"), env);
    CHECK(f.rule == "network limited: only the sandbox's own loopback");
    CHECK(f.flags_text() == "-n full");
    // Audit's operations and addresses.
    Denial d;
    d.operation = "net.bind_tcp";
    d.address = "saddr:src";
    CHECK(fix_for(p, d, env).flags_text() == "-n full");
    Denial s;
    s.operation = "scope.signal";
    s.target = "pid 1 (init)";
    CHECK(fix_for(p, s, env).text() == "no flag suggested: only -p danger-full-access (no sandbox) allows it");
    CHECK(fix_for(p, op("fs.ioctl_dev", "/dev/tty"), env).text() ==
          "no flag suggested: only -p danger-full-access (no sandbox) allows it");
}

TEST_CASE("explain_denials: each denial's rule and fix; the output heuristic's guess") {
    const FakeFs fs = machine();
    Environment env = env_of(fs);
    const CanonicalPolicy p = policy(env);
    DenialAnalysis a;
    a.recorded = true;
    a.denials = {op("create", "/root/.npm/_cacache/x"), connect("127.0.0.1:9")};
    explain_denials(a, p, env);
    CHECK(a.denials[0].fix->rule == "not under a writable root");
    CHECK(a.denials[0].fix->text() == "-w /root/.npm");
    CHECK(a.denials[1].fix->text() == "-n full");
    CHECK_FALSE(a.guess);

    // cat /etc/shadow as a user: EACCES from the mode, on a path the policy reads.
    a = guessed("permission denied", "/etc/shadow");
    explain_denials(a, p, env);
    CHECK_FALSE(a.sandbox_denied);
    CHECK_FALSE(a.guess);

    // A write the mounts refused: the path named, with its fix.
    a = guessed("read-only file system", "/root/.npm/_cacache/index-v5/04/5a");
    explain_denials(a, p, env);
    REQUIRE(a.guess);
    CHECK(a.guess->operation == "write");
    CHECK(a.guess->path == "/root/.npm/_cacache/index-v5/04/5a");
    CHECK(a.guess->fix->text() == "-w /root/.npm");

    // cd outside && touch f: "f" against the workspace is writable: the
    // command was elsewhere, and the note never suggests -w for the workspace.
    a = guessed("read-only file system", "f");
    explain_denials(a, p, env);
    REQUIRE(a.guess);
    CHECK(a.guess->path == "f");
    CHECK(a.guess->fix->rule.empty());
    CHECK(a.guess->fix->text() ==
          "no flag suggested: /w/f is writable: the command wrote elsewhere (--record-denials "
          "records where)");
    // A relative name that is not writable there: against the command's cwd.
    a.path = "../etc/x";
    env.cwd = "/w";
    explain_denials(a, p, env);
    CHECK(a.guess->path == "/etc/x");
    CHECK(a.guess->fix->text() == "-w /etc");
}

TEST_CASE("fix: with an allowlist, the allowlist's own flag, never -n full") {
    const FakeFs fs = machine();
    const Environment env = env_of(fs);
    PolicyInput in{};
    in.mode = Mode::WorkspaceWrite;
    in.allow_domains = {{"example.com", "--allow-domain"}};
    const CanonicalPolicy p = resolve(in, env);
    const Fix f = fix_for(p, connect("evil.example:443"), env);
    CHECK(f.rule == "no allow-domain matches evil.example");
    CHECK(f.flags_text() == "--allow-domain evil.example");
    // The name passed: the proxy refused the address it resolved to (its own note says which).
    CHECK(fix_for(p, connect("example.com:443"), env).text() ==
          "no flag suggested: the name is allowed, the address it resolved to is not (the proxy's note names it)");
    // The proxy's cap on its connections: a refusal of the proxy's own
    // address that no flag allows, not a host to allow.
    DenialAnalysis a;
    a.denials = {connect("127.0.0.1:3128")};
    const Fix over{"sbx's proxy serves at most 64 connections at once", {}, "open fewer connections at once"};
    a.denials[0].fix = over;
    explain_denials(a, p, env);
    CHECK(a.denials[0].fix == over);  // kept, not asked again
    CHECK(fix_for(p, a.denials[0], env) != over);
}
