// The wire between sbx and its helper (src/wire/helper_wire.h), each side
// into the other: the argv sbx builds (platform/plan.cc) is what the helper
// parses (linux-helper/args.cc), and what the helper writes on --status-fd
// (linux-helper/status.cc) is what sbx reads back (denial/helper_status.cc).
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <string>
#include <vector>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "args.h"
#include "denial/helper_status.h"
#include "fake_fs.h"
#include "platform/plan.h"
#include "status.h"
#include "step_error.h"

using namespace sbx;

namespace {

// What the helper's Status writes through report, read back as sbx reads it.
template <class Report>
HelperStatus written_then_read(Report&& report) {
    int pipe_fds[2];
    REQUIRE(::pipe2(pipe_fds, O_CLOEXEC) == 0);
    Fd read_end(pipe_fds[0]);
    {
        Fd write_end(pipe_fds[1]);
        helper::Status status;
        status.use_fd(write_end.get());
        report(status);
    }
    std::string text;
    char buf[4096];
    for (ssize_t n; (n = ::read(read_end.get(), buf, sizeof buf)) > 0;) text.append(buf, static_cast<std::size_t>(n));
    return parse_helper_status(text);
}

test::FakeFs machine() {
    test::FakeFs fs;
    fs.dir("/work/repo").dir("/work/repo/sub").dir("/tmp").dir("/dev/shm").file("/dev/null");
    return fs;
}

CanonicalPolicy resolved(PolicyInput in) { return resolve(in, machine().env("/work/repo")); }

// The argv sbx builds for a policy (the command after --), kept alive for
// the Args the helper parses from it, which point into it.
struct Argv {
    std::vector<std::string> words;
    std::vector<char*> pointers;
};

// What the helper parses of that argv, and the policy it reads back from it.
struct Parsed {
    helper::Args args;
    CanonicalPolicy policy;
};

Parsed through_the_wire(const CanonicalPolicy& policy, bool record_denials, bool private_terminal, Argv& argv) {
    CommandSpec command;
    command.cwd = "/work/repo/sub";
    command.record_denials = record_denials;
    command.private_terminal = private_terminal;
    argv.words = linux_helper_args(policy, "/usr/libexec/sbx/codex-linux-sandbox", command);
    argv.words.insert(argv.words.end(), {"--", "make", "test"});
    for (auto& word : argv.words) argv.pointers.push_back(word.data());
    argv.pointers.push_back(nullptr);
    Parsed out{helper::parse_args(static_cast<int>(argv.words.size()), argv.pointers.data()), {}};
    REQUIRE(out.args.policy_json);
    out.policy = parse_sandbox_policy_text(*out.args.policy_json, "--sandbox-policy", machine().env("/work/repo"));
    return out;
}

}  // namespace

TEST_CASE("helper wire: --help lists each option the helper takes, and no other") {
    const std::string_view help = helper::help_text();
    const auto names = helper::option_names();
    for (const auto name : names) {
        INFO(name);
        CHECK(help.find(name) != std::string_view::npos);
    }
    // Each "--word" of the text is an option.
    for (std::size_t at = help.find("--"); at != std::string_view::npos; at = help.find("--", at + 2)) {
        const std::size_t end = help.find_first_of(" =]\n,;)", at);
        const std::string_view word = help.substr(at, end - at);
        if (word == "--" || word == "--option") continue;  // the end of the options; "--option=VALUE"
        INFO(word);
        CHECK(std::find(names.begin(), names.end(), word) != names.end());
    }
}

TEST_CASE("helper wire: sbx's argv parses back into the same policy and options") {
    PolicyInput in;
    in.mode = Mode::WorkspaceWrite;
    in.limits.processes = 64;
    const CanonicalPolicy policy = resolved(in);
    for (const bool record : {false, true})
        for (const bool terminal : {false, true}) {
            Argv argv;
            const Parsed p = through_the_wire(policy, record, terminal, argv);
            CHECK(to_json(p.policy).dump() == to_json(policy).dump());
            CHECK(p.args.policy_cwd == policy.workspace);
            CHECK(p.args.command_cwd == "/work/repo/sub");
            CHECK(p.args.status_fd == kHelperStatusFd);
            CHECK(p.args.record_denials == record);
            CHECK(p.args.record_network == !record);  // network restricted: each refusal recorded
            CHECK(p.args.private_terminal == terminal);
            CHECK(!p.args.proxy_fd);
            CHECK(!p.args.transparent_tcp);
            CHECK(!p.args.profile_json);
            CHECK(!p.args.managed_network);
            CHECK(!p.args.no_proc);
            REQUIRE(p.args.command != nullptr);
            CHECK(std::string(p.args.command[0]) == "make");
            CHECK(std::string(p.args.command[1]) == "test");
            CHECK(p.args.command[2] == nullptr);
        }
}

TEST_CASE("helper wire: an allowlist's proxy descriptor and transparent TCP parse back") {
    PolicyInput in;
    in.mode = Mode::ReadOnly;
    in.allow_domains.push_back({"example.com", "--allow-domain"});
    const CanonicalPolicy policy = resolved(in);
    REQUIRE(policy.by_name());
    Argv argv;
    const Parsed p = through_the_wire(policy, false, false, argv);
    CHECK(to_json(p.policy).dump() == to_json(policy).dump());
    CHECK(p.args.proxy_fd == kHelperProxyFd);
    CHECK(p.args.transparent_tcp);
    CHECK(p.args.record_network);
}

TEST_CASE("helper wire: under network full no connect is recorded") {
    PolicyInput in;
    in.mode = Mode::WorkspaceWrite;
    in.network = Network::Full;
    const CanonicalPolicy policy = resolved(in);
    Argv argv;
    const Parsed p = through_the_wire(policy, false, false, argv);
    CHECK(to_json(p.policy).dump() == to_json(policy).dump());
    CHECK(!p.args.record_network);
    CHECK(!p.args.record_denials);
}

TEST_CASE("helper wire: a learning run, with --reads, parses back") {
    PolicyInput in;
    in.mode = Mode::WorkspaceWrite;
    in.read_base = ReadBase::Minimal;
    const CanonicalPolicy policy = resolved(in);
    for (const bool reads : {false, true}) {
        CommandSpec command;
        command.cwd = "/work/repo";
        command.learn = true;
        command.learn_reads = reads;
        std::vector<std::string> words = linux_helper_args(policy, "codex-linux-sandbox", command);
        words.insert(words.end(), {"--", "true"});
        std::vector<char*> pointers;
        for (auto& word : words) pointers.push_back(word.data());
        pointers.push_back(nullptr);
        const helper::Args args = helper::parse_args(static_cast<int>(words.size()), pointers.data());
        CHECK(args.learn);
        CHECK(args.learn_reads == reads);
        CHECK(!args.record_denials);  // --learn records as it does
    }
}

TEST_CASE("helper wire: a refusal, as step, reason and fix, reads back as its message") {
    const HelperStatus s = written_then_read([](const helper::Status& status) {
        status.error(helper::StepError("mounts", "cannot bind /x", "make /x a directory"));
    });
    REQUIRE(s.error);
    CHECK(*s.error == "mounts: cannot bind /x; make /x a directory");
    CHECK(!s.exec);
    const HelperStatus plain =
        written_then_read([](const helper::Status& status) { status.error(Error("something else")); });
    CHECK(plain.error == "something else");
}

TEST_CASE("helper wire: an exec failure reads back with the file execvp found") {
    char argv0[] = "/bin/sh";
    char* argv[] = {argv0, nullptr};
    const HelperStatus s = written_then_read([&](const helper::Status& status) { status.exec_failed(argv, EACCES); });
    REQUIRE(s.exec);
    CHECK(s.exec->argv0 == "/bin/sh");
    CHECK(s.exec->err == EACCES);
    CHECK(s.exec->path == "/bin/sh");
    struct stat st {};
    REQUIRE(::stat("/bin/sh", &st) == 0);
    CHECK(s.exec->mode == static_cast<unsigned>(st.st_mode));

    char missing0[] = "/nonexistent/sbx-wire-test";
    char* missing[] = {missing0, nullptr};
    const HelperStatus m =
        written_then_read([&](const helper::Status& status) { status.exec_failed(missing, ENOENT); });
    REQUIRE(m.exec);
    CHECK(m.exec->err == ENOENT);
    CHECK(!m.exec->path);
    CHECK(!m.exec->mode);
}

TEST_CASE("helper wire: what is not enforced, the denials and the omitted count read back") {
    const HelperStatus s = written_then_read([](const helper::Status& status) {
        status.not_enforced("no user namespace", {"protected paths", "metadata changes"});
        status.denied("write", "/etc/passwd", "", 42, "sh");
        status.denied("connect", "", "1.2.3.4:443", 43, "curl");
        status.denied_omitted(7);
        status.denied_omitted(3);
    });
    CHECK(s.not_enforced_reason == "no user namespace");
    CHECK(s.not_enforced == std::vector<std::string>{"protected paths", "metadata changes"});
    REQUIRE(s.denied.size() == 2);
    CHECK(s.denied[0].op == "write");
    CHECK(s.denied[0].path == "/etc/passwd");
    CHECK(s.denied[0].address.empty());
    CHECK(s.denied[0].pid == 42);
    CHECK(s.denied[0].program == "sh");
    CHECK(s.denied[1].op == "connect");
    CHECK(s.denied[1].path.empty());
    CHECK(s.denied[1].address == "1.2.3.4:443");
    CHECK(s.denied[1].pid == 43);
    CHECK(s.denied[1].program == "curl");
    CHECK(s.denied_omitted == 10);
    CHECK(!s.error);
    CHECK(!s.exec);
}

TEST_CASE("helper wire: --mask-file N:PATH, repeatable; bad ones refused") {
    auto parse = [](std::vector<std::string> words) {
        words.insert(words.begin(), {"codex-linux-sandbox", "--sandbox-policy-cwd", "/w", "--sandbox-policy", "{}"});
        words.insert(words.end(), {"--", "true"});
        std::vector<char*> pointers;
        for (auto& word : words) pointers.push_back(word.data());
        pointers.push_back(nullptr);
        return helper::parse_args(static_cast<int>(words.size()), pointers.data()).mask_files;
    };
    CHECK(parse({"--mask-file", "5:/home/u/.npmrc", "--mask-file=6:/a:b/c"}) ==
          std::vector<std::pair<int, std::string>>{{5, "/home/u/.npmrc"}, {6, "/a:b/c"}});
    CHECK_THROWS_WITH(parse({"--mask-file", "5"}), Catch::Contains("is not N:PATH"));
    CHECK_THROWS_WITH(parse({"--mask-file", "5:rel/path"}), Catch::Contains("is not an absolute path"));
    CHECK_THROWS_WITH(parse({"--mask-file", "1:/x"}), Catch::Contains("descriptor number of 3 or more"));
    CHECK_THROWS_WITH(parse({"--mask-file", "x:/x"}), Catch::Contains("descriptor number"));
    std::vector<std::string> many;
    for (int i = 0; i < 65; ++i) many.insert(many.end(), {"--mask-file", "5:/x"});
    CHECK_THROWS_WITH(parse(many), Catch::Contains("more than 64"));
}
