// sbx learn --reads (denial/read_groups.h): the files a command read, as
// --read-only flags no wider than a careful person would write, and the
// line the learning run prints from them.
#include <catch2/catch.hpp>

#include "denial/explain.h"
#include "denial/read_groups.h"
#include "fake_fs.h"

using namespace sbx;
using sbx::test::FakeFs;

namespace {

Environment home_env(const FakeFs& fs) {
    Environment env = fs.env("/w", "/tmp/u");
    env.home = "/home/u";
    return env;
}

FakeFs machine() {
    FakeFs fs;
    fs.dir("/usr/lib").dir("/etc").dir("/tmp/u").dir("/dev/shm").dir("/w").dir("/home/u/.ssh").dir("/var/tmp/t");
    fs.dir("/opt/tool/bin").dir("/opt/tool/share/data").dir("/opt/tool/share/data/sub").dir("/opt/tool/secret");
    for (const char* f : {"/opt/tool/bin/tool", "/opt/tool/share/data/a", "/opt/tool/share/data/b",
                          "/opt/tool/share/data/c", "/opt/tool/secret/key", "/home/u/.a", "/home/u/.b", "/home/u/.c",
                          "/home/u/.ssh/config", "/var/tmp/t/x", "/var/tmp/x", "/var/tmp/y", "/var/tmp/z"})
        fs.file(f);
    fs.file("/dev/null");
    return fs;
}

Denial read(const std::string& path, const std::string& operation = "read") {
    Denial d;
    d.operation = operation;
    d.path = path;
    return d;
}

}  // namespace

TEST_CASE("read groups: three paths in one directory give it; fewer stay as they are") {
    const FakeFs fs = machine();
    const Environment env = home_env(fs);
    PolicyDelta change{.read_only = {"/opt/tool/bin/tool", "/opt/tool/share/data/a", "/opt/tool/share/data/b"}};
    CHECK(group_reads(change, env).read_only == change.read_only);
    change.read_only.push_back("/opt/tool/share/data/sub");  // a directory listed counts as one
    CHECK(group_reads(change, env).read_only == std::vector<std::string>{"/opt/tool/bin/tool", "/opt/tool/share/data"});
    // Never wider than where they were read: /opt/tool held none directly.
    change.read_only = {"/opt/tool/bin/tool", "/opt/tool/share/data/a", "/opt/tool/secret/key"};
    CHECK(group_reads(change, env).read_only == change.read_only);
}

TEST_CASE("read groups: never the top of the tree, $HOME, a shared temporary directory") {
    const FakeFs fs = machine();
    const Environment env = home_env(fs);
    for (const std::vector<std::string>& paths : {std::vector<std::string>{"/home/u/.a", "/home/u/.b", "/home/u/.c"},
                                                  std::vector<std::string>{"/var/tmp/x", "/var/tmp/y", "/var/tmp/z"},
                                                  std::vector<std::string>{"/tmp/u/x", "/tmp/u/y", "/tmp/u/z"},
                                                  std::vector<std::string>{"/opt/x", "/opt/y", "/opt/z"},
                                                  std::vector<std::string>{"/var/lib/x", "/var/lib/y", "/var/lib/z"}}) {
        INFO(paths.front());
        CHECK(group_reads(PolicyDelta{.read_only = paths}, env).read_only == paths);
    }
    CHECK(too_wide_to_group("/home", env) == "that would make $HOME readable");
    CHECK(too_wide_to_group("/home/u/.ssh", env) == "that would make ~/.ssh readable");
    CHECK(too_wide_to_group("/var/tmp", env) == "/var/tmp is a shared temporary directory");
    CHECK(too_wide_to_group("/opt", env) == "/opt is a directory at the top of the tree");
    CHECK(too_wide_to_group("/opt/tool", env).empty());
}

TEST_CASE("read groups: a path within another, or within a writable root of the change, is dropped") {
    const FakeFs fs = machine();
    const Environment env = home_env(fs);
    const PolicyDelta change{.writable_roots = {"/var/tmp/t"},
                             .read_only = {"/opt/tool/share", "/opt/tool/share/data/a", "/var/tmp/t/x"}};
    const PolicyDelta grouped = group_reads(change, env);
    CHECK(grouped.read_only == std::vector<std::string>{"/opt/tool/share"});
    CHECK(grouped.writable_roots == change.writable_roots);
}

TEST_CASE("read groups: a learning run's line under --minimal, checked against the policy it makes") {
    const FakeFs fs = machine();
    const Environment env = home_env(fs);
    PolicyInput in{};
    in.mode = Mode::WorkspaceWrite;
    in.read_base = ReadBase::Minimal;
    in.extra_entries.push_back({{FsTarget::Kind::Path, "/opt/tool/secret"}, FsAccess::Deny, "--deny"});
    const auto resolver = [&](const PolicyDelta& added) {
        PolicyInput with = in;
        apply(added, with);
        return resolve(with, env);
    };
    const CanonicalPolicy policy = resolver({});
    DenialAnalysis a;
    a.recorded = a.sandbox_denied = true;
    a.denials = {read("/opt/tool/bin/tool", "exec"), read("/opt/tool/bin/tool"),
                 read("/opt/tool/share/data/a"),     read("/opt/tool/share/data/b"),
                 read("/opt/tool/share/data/c"),     read("/opt/tool/secret/key"),
                 read("/home/u/.ssh/config"),        read("/home/u")};
    const std::vector<std::string> invocation{"sbx", "run", "--minimal"}, command{"tool"};
    const Explanation e = explain_run({invocation, command, policy, env, resolver, true}, a);
    CHECK(e.added ==
          std::vector<std::string>{"--read-only", "/opt/tool/bin/tool", "--read-only", "/opt/tool/share/data"});
    CHECK(e.allowed == 5);
    REQUIRE(e.not_suggested.size() == 3);
    CHECK(e.not_suggested[0].what == "read /opt/tool/secret/key");
    CHECK(e.not_suggested[0].why == "an entry of the policy denies it (drop that entry to allow it)");
    CHECK(e.not_suggested[1].why == "that would make ~/.ssh readable");
    CHECK(e.not_suggested[2].why == "that would make $HOME readable");
    // Without learning (--explain) each path is its own flag.
    const Explanation plain = explain_run({invocation, command, policy, env, resolver, false}, a);
    CHECK(plain.added.size() == 8);
}
