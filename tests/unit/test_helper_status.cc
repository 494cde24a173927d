#include <sys/stat.h>

#include <cerrno>

#include <catch2/catch.hpp>

#include "denial/helper_status.h"
#include "fake_fs.h"

using namespace sbx;

TEST_CASE("helper status: each kind of line, in any order; other lines are skipped") {
    const HelperStatus s = parse_helper_status(
        "not json\n"
        R"({"not_enforced":{"reason":"no user namespace","items":["protected paths","x"]}})"
        "\n"
        R"({"exec_error":{"argv0":"./a.sh","errno":13,"error":"Permission denied","mode":33188,"path":"./a.sh"}})"
        "\n"
        R"({"something":"new"})"
        "\n"
        R"({"error":{"step":"mounts","reason":"r","fix":"f","message":"mounts: r; f"}})");
    REQUIRE(s.error);
    CHECK(*s.error == "mounts: r; f");
    REQUIRE(s.exec);
    CHECK(s.exec->argv0 == "./a.sh");
    CHECK(s.exec->err == EACCES);
    CHECK(s.exec->path == "./a.sh");
    CHECK(s.exec->mode == 0100644u);
    CHECK(s.not_enforced_reason == "no user namespace");
    CHECK(s.not_enforced == std::vector<std::string>{"protected paths", "x"});
}

TEST_CASE("helper status: nothing reported, nothing parsed") {
    const HelperStatus s = parse_helper_status("");
    CHECK(!s.error);
    CHECK(!s.exec);
    CHECK(!s.not_enforced_reason);
    CHECK(s.not_enforced.empty());
    CHECK(!parse_helper_status(R"({"exec_error":{"argv0":"x","errno":2,"error":"e"}})").exec->path);
}

namespace {

CanonicalPolicy policy_denying(const std::string& path) {
    test::FakeFs fs;
    fs.dir("/work/repo").dir("/tmp").dir("/dev/shm").file("/dev/null").file(path);
    PolicyInput in{};
    in.mode = Mode::ReadOnly;
    in.extra_entries = {{{FsTarget::Kind::Path, path}, FsAccess::Deny, "--deny"}};
    return resolve(in, fs.env("/work/repo"));
}

}  // namespace

TEST_CASE("exec failure: the words for each cause") {
    const CanonicalPolicy p = policy_denying("/work/repo/secret.sh");
    const ExecFailure missing{"frob", ENOENT, std::nullopt, std::nullopt};
    CHECK(describe_exec_failure(missing, &p, "/work/repo") == "cannot run 'frob': No such file or directory");
    const ExecFailure no_x{"./a.sh", EACCES, "./a.sh", S_IFREG | 0644};
    CHECK(describe_exec_failure(no_x, &p, "/work/repo") ==
          "cannot run './a.sh': Permission denied: its mode 0644 has no execute permission (the file's, not the "
          "sandbox's); chmod +x ./a.sh, or run it through its interpreter");
    CHECK(describe_exec_failure(no_x, nullptr, "/work/repo") == describe_exec_failure(no_x, &p, "/work/repo"));
    const ExecFailure dir{"/work", EACCES, "/work", S_IFDIR | 0755};
    CHECK(describe_exec_failure(dir, &p, "/") == "cannot run '/work': Permission denied: it is a directory");
    // The policy's entry is named whatever the file's mode, relative paths
    // taken from the command's directory.
    const ExecFailure denied{"./secret.sh", EACCES, "./secret.sh", S_IFREG | 0755};
    CHECK(describe_exec_failure(denied, &p, "/work/repo") ==
          "cannot run './secret.sh': Permission denied: denied by the sandbox's entry deny /work/repo/secret.sh "
          "(--deny)");
    // Executable, allowed, still refused (a noexec mount, say): no guess.
    const ExecFailure other{"/usr/bin/x", EACCES, "/usr/bin/x", S_IFREG | 0755};
    CHECK(describe_exec_failure(other, &p, "/") == "cannot run '/usr/bin/x': Permission denied");
}

TEST_CASE("helper status: the recorder's denials, in order, and the count past its bound") {
    const HelperStatus s =
        parse_helper_status(R"({"denied":{"op":"create","path":"/etc/x","pid":3,"program":"touch"}})"
                            "\n"
                            R"({"denied":{"op":"connect","address":"10.0.0.1:53","pid":5,"program":"getent"}})"
                            "\n"
                            R"({"denied":{"path":"/no/op"}})"
                            "\n"
                            R"({"denied_omitted":9744})");
    REQUIRE(s.denied.size() == 2);
    CHECK(s.denied[0].op == "create");
    CHECK(s.denied[0].path == "/etc/x");
    CHECK(s.denied[0].pid == 3);
    CHECK(s.denied[0].program == "touch");
    CHECK(s.denied[1].address == "10.0.0.1:53");
    CHECK(s.denied[1].path.empty());
    CHECK(s.denied_omitted == 9744);
}
