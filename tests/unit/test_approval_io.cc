// Approvals: the parts that do I/O -- the session store (files, locks,
// concurrent processes) and the approvers (a program, a terminal).
#include <catch2/catch.hpp>

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "approval/approver.h"
#include "approval/orchestrator.h"
#include "approval/session_store.h"
#include "policy/policy.h"

using namespace sbx;
using namespace sbx::approval;
namespace fs = std::filesystem;

namespace {

struct TempDir {
    std::string path;
    TempDir() {
        std::string t = (fs::temp_directory_path() / "sbx-approval-XXXXXX").string();
        REQUIRE(::mkdtemp(t.data()));
        path = t;
    }
    ~TempDir() {
        std::error_code ec;
        fs::remove_all(path, ec);
    }
};

std::string slurp(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
}

void spit(const std::string& path, const std::string& text, bool executable = false) {
    std::ofstream(path, std::ios::binary | std::ios::trunc) << text;
    if (executable) ::chmod(path.c_str(), 0755);
}

ApprovalKey key_of(std::string word, bool unsandboxed = false) {
    return ApprovalKey{{"touch", std::move(word)}, "/w", nlohmann::json{{"mode", "read-only"}}, unsandboxed};
}

// Sets an environment variable for the scope of a test.
struct ScopedEnv {
    std::string name;
    std::optional<std::string> old;
    ScopedEnv(std::string n, const std::string& value) : name(std::move(n)) {
        if (const char* v = std::getenv(name.c_str())) old = v;
        ::setenv(name.c_str(), value.c_str(), 1);
    }
    ~ScopedEnv() {
        if (old) ::setenv(name.c_str(), old->c_str(), 1);
        else ::unsetenv(name.c_str());
    }
};

ApprovalPrompt prompt_of() {
    return ApprovalPrompt{{"touch", "/etc/x"},
                          "/w",
                          "retry without the sandbox",
                          ApprovalKind::Sandbox,
                          nlohmann::json{{"mode", "read-only"}},
                          {{"create", "/etc/x", "", "not under a writable root", "-w /etc"},
                           {"connect", "", "10.0.0.1:443", "network restricted", "-n full"}},
                          "touch: cannot touch '/etc/x': Read-only file system\n"};
}

}  // namespace

TEST_CASE("session names must be safe file names", "[approval][store]") {
    for (const char* good : {"work", "a.b", "x_1-2", "Name With Space"}) {
        INFO(good);
        CHECK_NOTHROW(check_session_name(good));
    }
    for (const char* bad : {"", ".", "..", "a/b", "/abs", ".hidden", "-x", "a\nb"}) {
        INFO(bad);
        CHECK_THROWS_AS(check_session_name(bad), Error);
    }
    CHECK_THROWS_AS(check_session_name(std::string(129, 'a')), Error);
    CHECK_THROWS_WITH(check_session_name("a/b"), Catch::Contains("contains '/'"));
}

TEST_CASE("sessions live under XDG_STATE_HOME, else ~/.local/state", "[approval][store]") {
    {
        ScopedEnv x("XDG_STATE_HOME", "/state");
        CHECK(sessions_directory() == "/state/sbx/sessions");
    }
    {
        ScopedEnv x("XDG_STATE_HOME", "relative/ignored");
        ScopedEnv h("HOME", "/home/u");
        CHECK(sessions_directory() == "/home/u/.local/state/sbx/sessions");
    }
}

TEST_CASE("the file store persists, re-reads and keeps keys apart", "[approval][store]") {
    TempDir dir;
    const std::string path = dir.path + "/deep/er/s.json";
    FileSessionStore a(path);
    CHECK_FALSE(fs::exists(path));  // opening creates nothing
    CHECK_FALSE(a.contains(key_of("x")));
    a.add(key_of("x"));
    a.add(key_of("x"));  // once only
    CHECK(a.contains(key_of("x")));
    CHECK_FALSE(a.contains(key_of("x", true)));
    CHECK_FALSE(a.contains(key_of("y")));
    auto other_cwd = key_of("x");
    other_cwd.cwd = "/v";
    CHECK_FALSE(a.contains(other_cwd));
    auto other_policy = key_of("x");
    other_policy.policy["mode"] = "workspace-write";
    CHECK_FALSE(a.contains(other_policy));

    // Another store (another process) on the same file sees it, and its
    // additions are seen here.
    FileSessionStore b(path);
    CHECK(b.contains(key_of("x")));
    b.add(key_of("y", true));
    CHECK(a.contains(key_of("y", true)));

    const auto doc = nlohmann::json::parse(slurp(path));
    CHECK(doc["version"] == 1);
    CHECK(doc["approvals"].size() == 2);
    CHECK(doc["approvals"][1]["unsandboxed"] == true);
    struct stat st {};
    REQUIRE(::stat(path.c_str(), &st) == 0);
    CHECK((st.st_mode & 0777) == 0600);
    REQUIRE(::stat((dir.path + "/deep").c_str(), &st) == 0);
    CHECK((st.st_mode & 0777) == 0700);
    // No temporary files left behind.
    int entries = 0;
    for (const auto& e : fs::directory_iterator(dir.path + "/deep/er")) {
        (void)e;
        ++entries;
    }
    CHECK(entries == 2);  // s.json and s.json.lock
}

TEST_CASE("a corrupt session file is an error and stays untouched", "[approval][store]") {
    TempDir dir;
    const std::string path = dir.path + "/s.json";
    for (const char* corrupt : {"{not json", "[]", "{\"version\": 2, \"approvals\": []}", "{\"version\": 1}",
                                "{\"version\": 1, \"approvals\": [{\"cwd\": \"/\"}]}",
                                "{\"version\": 1e999999}",  // beyond a double (found by fuzz_session_store)
                                ""}) {
        INFO(corrupt);
        spit(path, corrupt);
        CHECK_THROWS_WITH(FileSessionStore(path), Catch::StartsWith("session file " + path + " is corrupt: ") &&
                                                      Catch::Contains("fix it or delete it"));
        CHECK(slurp(path) == corrupt);
    }
    // Corrupted after opening: add refuses and leaves it as it is.
    spit(path, "{\"version\": 1, \"approvals\": []}");
    FileSessionStore s(path);
    spit(path, "garbage");
    CHECK_THROWS_AS(s.add(key_of("x")), Error);
    CHECK(slurp(path) == "garbage");
    CHECK_THROWS_AS(s.contains(key_of("x")), Error);
}

TEST_CASE("concurrent processes adding approvals lose none", "[approval][store]") {
    TempDir dir;
    const std::string path = dir.path + "/shared.json";
    constexpr int kProcs = 8, kEach = 10;
    std::vector<pid_t> pids;
    for (int p = 0; p < kProcs; ++p) {
        const pid_t pid = ::fork();
        REQUIRE(pid >= 0);
        if (pid == 0) {
            int rc = 0;
            try {
                FileSessionStore s(path);
                for (int i = 0; i < kEach; ++i) s.add(key_of(std::to_string(p * 100 + i)));
            } catch (...) {
                rc = 1;
            }
            ::_exit(rc);
        }
        pids.push_back(pid);
    }
    for (pid_t pid : pids) {
        int status = 0;
        REQUIRE(::waitpid(pid, &status, 0) == pid);
        CHECK(WIFEXITED(status));
        CHECK(WEXITSTATUS(status) == 0);
    }
    FileSessionStore s(path);
    for (int p = 0; p < kProcs; ++p)
        for (int i = 0; i < kEach; ++i) CHECK(s.contains(key_of(std::to_string(p * 100 + i))));
    CHECK(nlohmann::json::parse(slurp(path))["approvals"].size() == kProcs * kEach);
}

TEST_CASE("open_session_store: memory without a name, a file with one", "[approval][store]") {
    TempDir dir;
    ScopedEnv x("XDG_STATE_HOME", dir.path);
    auto mem = open_session_store(std::nullopt);
    mem->add(key_of("m"));
    CHECK(mem->contains(key_of("m")));
    CHECK_FALSE(fs::exists(dir.path + "/sbx"));
    auto file = open_session_store(std::string("proj"));
    file->add(key_of("f"));
    CHECK(fs::exists(dir.path + "/sbx/sessions/proj.json"));
    CHECK(open_session_store(std::string("proj"))->contains(key_of("f")));
    CHECK_THROWS_AS(open_session_store(std::string("..")), Error);
}

TEST_CASE("approver output: a word or {\"decision\": word}", "[approval][approver]") {
    CHECK(parse_approver_output("approved") == ReviewDecision::Approved);
    CHECK(parse_approver_output("  approved_for_session\n") == ReviewDecision::ApprovedForSession);
    CHECK(parse_approver_output("denied\n") == ReviewDecision::Denied);
    CHECK(parse_approver_output("abort") == ReviewDecision::Abort);
    CHECK(parse_approver_output(R"({"decision": "approved"})") == ReviewDecision::Approved);
    CHECK(parse_approver_output(R"({"decision":"abort","why":"x"})") == ReviewDecision::Abort);
    CHECK_FALSE(parse_approver_output(""));
    CHECK_FALSE(parse_approver_output("yes"));
    CHECK_FALSE(parse_approver_output("approved\napproved"));
    CHECK_FALSE(parse_approver_output("Approved"));
    CHECK_FALSE(parse_approver_output(R"({"decision": "ok"})"));
    CHECK_FALSE(parse_approver_output(R"({"decision": true})"));
    CHECK_FALSE(parse_approver_output(R"({"decision": "approved")"));
    CHECK_FALSE(parse_approver_output(R"(["approved"])"));
    CHECK_FALSE(parse_approver_output(R"("approved")"));
}

TEST_CASE("an approver program that cannot be run is refused before anything runs", "[approval][approver]") {
    TempDir dir;
    const auto timeout = std::chrono::milliseconds(400);
    CHECK_THROWS_WITH(ProgramApprover("sbx-no-such-approver-xyz", timeout),
                      "--approver: 'sbx-no-such-approver-xyz' is not an executable program on PATH; give its "
                      "path, or fix the name");
    spit(dir.path + "/not-executable", "#!/bin/sh\necho approved\n", false);
    CHECK_THROWS_WITH(ProgramApprover(dir.path + "/not-executable", timeout),
                      "--approver: '" + dir.path +
                          "/not-executable' is not an executable program; give its path, "
                          "or fix the name");
    CHECK_THROWS_AS(ProgramApprover(dir.path, timeout), sbx::Error);  // a directory
    CHECK_NOTHROW(ProgramApprover("sh", timeout));                    // found on PATH
}

TEST_CASE("the approver program", "[approval][approver]") {
    TempDir dir;
    const std::string prog = dir.path + "/approve";
    const std::string seen = dir.path + "/request.json";
    const auto short_timeout = std::chrono::milliseconds(400);

    SECTION("gets the request on stdin and answers with a word") {
        spit(prog, "#!/bin/sh\ncat > '" + seen + "'\necho approved_for_session\n", true);
        const auto a = ProgramApprover(prog, short_timeout).ask(prompt_of());
        CHECK(a.decision == ReviewDecision::ApprovedForSession);
        CHECK(a.answered_by == "approver");
        const auto req = nlohmann::json::parse(slurp(seen));
        CHECK(req == nlohmann::json{{"command", {"touch", "/etc/x"}},
                                    {"cwd", "/w"},
                                    {"reason", "retry without the sandbox"},
                                    {"kind", "sandbox"},
                                    {"policy", {{"mode", "read-only"}}},
                                    {"denials",
                                     {{{"operation", "create"},
                                       {"path", "/etc/x"},
                                       {"rule", "not under a writable root"},
                                       {"fix", "-w /etc"}},
                                      {{"operation", "connect"},
                                       {"address", "10.0.0.1:443"},
                                       {"rule", "network restricted"},
                                       {"fix", "-n full"}}}},
                                    {"stderr_tail", "touch: cannot touch '/etc/x': Read-only file system\n"}});
    }
    SECTION("answers with JSON without reading stdin") {
        spit(prog, "#!/bin/sh\necho '{\"decision\": \"approved\"}'\n", true);
        CHECK(ProgramApprover(prog, short_timeout).ask(prompt_of()).decision == ReviewDecision::Approved);
    }
    SECTION("garbage is denied") {
        spit(prog, "#!/bin/sh\necho sure\n", true);
        const auto a = ProgramApprover(prog, short_timeout).ask(prompt_of());
        CHECK(a.decision == ReviewDecision::Denied);
        CHECK_THAT(a.note, Catch::Contains("not a decision: 'sure'"));
    }
    SECTION("a non-zero exit is denied even with a valid word") {
        spit(prog, "#!/bin/sh\necho approved\nexit 3\n", true);
        const auto a = ProgramApprover(prog, short_timeout).ask(prompt_of());
        CHECK(a.decision == ReviewDecision::Denied);
        CHECK(a.note == "exited with status 3");
    }
    SECTION("a crash is denied") {
        spit(prog, "#!/bin/sh\necho approved\nkill -SEGV $$\n", true);
        const auto a = ProgramApprover(prog, short_timeout).ask(prompt_of());
        CHECK(a.decision == ReviewDecision::Denied);
        CHECK(a.note == "killed by signal 11");
    }
    SECTION("silence is denied within the timeout, and the approver is killed") {
        const std::string pidfile = dir.path + "/pid";
        spit(prog, "#!/bin/sh\necho $$ > '" + pidfile + "'\nsleep 30 & wait\necho approved\n", true);
        const auto start = std::chrono::steady_clock::now();
        const auto a = ProgramApprover(prog, short_timeout).ask(prompt_of());
        const auto took = std::chrono::steady_clock::now() - start;
        CHECK(a.decision == ReviewDecision::Denied);
        CHECK_THAT(a.note, Catch::Contains("no answer within 400 ms"));
        CHECK(took >= short_timeout);
        CHECK(took < std::chrono::seconds(3));
        const pid_t pid = std::stoi(slurp(pidfile));
        CHECK(::kill(pid, 0) != 0);  // gone (reaped)
    }
    SECTION("a zero timeout (--approver-timeout 0) waits as long as the program takes") {
        // Slower than short_timeout, which would have killed it.
        spit(prog, "#!/bin/sh\ncat >/dev/null\nsleep 1\necho approved\n", true);
        const auto a = ProgramApprover(prog, std::chrono::milliseconds(0)).ask(prompt_of());
        CHECK(a.decision == ReviewDecision::Approved);
        CHECK(a.note.empty());
    }
    SECTION("a zero timeout still reports how the program ended") {
        spit(prog, "#!/bin/sh\necho approved\nexit 4\n", true);
        CHECK(ProgramApprover(prog, std::chrono::milliseconds(0)).ask(prompt_of()).note == "exited with status 4");
    }
    SECTION("a program that closes stdout but does not exit is killed too") {
        spit(prog, "#!/bin/sh\necho approved\nexec >&-\nsleep 30\n", true);
        const auto a = ProgramApprover(prog, short_timeout).ask(prompt_of());
        CHECK(a.decision == ReviewDecision::Denied);
        CHECK_THAT(a.note, Catch::Contains("did not exit"));
    }
    SECTION("a program gone after the check (made) is denied") {
        spit(prog, "#!/bin/sh\necho approved\n", true);
        ProgramApprover approver(prog, short_timeout);
        ::unlink(prog.c_str());
        const auto a = approver.ask(prompt_of());
        CHECK(a.decision == ReviewDecision::Denied);
        CHECK(a.note == "exited with status 127");
    }
    SECTION("a program that exits without reading a large request does not kill sbx") {
        spit(prog, "#!/bin/sh\necho denied\n", true);
        auto p = prompt_of();
        p.reason = std::string(1 << 20, 'x');
        CHECK(ProgramApprover(prog, short_timeout).ask(p).decision == ReviewDecision::Denied);
    }
}

TEST_CASE("the terminal prompt", "[approval][approver]") {
    // POSIX's pty calls (openpty's header differs between Linux and macOS).
    const int master = ::posix_openpt(O_RDWR | O_NOCTTY);
    REQUIRE(master >= 0);
    REQUIRE((::grantpt(master) == 0 && ::unlockpt(master) == 0));
    const std::string name = ::ptsname(master);
    const int slave = ::open(name.c_str(), O_RDWR | O_NOCTTY);
    REQUIRE(slave >= 0);
    auto answer_with = [&](const std::string& typed) {
        REQUIRE(::write(master, typed.data(), typed.size()) == static_cast<ssize_t>(typed.size()));
        return TtyApprover(name).ask(prompt_of());
    };
    CHECK(answer_with("y\n").decision == ReviewDecision::Approved);
    CHECK(answer_with("n\n").decision == ReviewDecision::Denied);
    CHECK(answer_with("a\n").decision == ReviewDecision::ApprovedForSession);
    CHECK(answer_with("q\n").decision == ReviewDecision::Abort);
    const auto retried = answer_with("what\ny\n");
    CHECK(retried.decision == ReviewDecision::Approved);
    CHECK(retried.answered_by == "tty");
    CHECK(answer_with("x\nx\nx\n").decision == ReviewDecision::Denied);
    // What the person saw.
    char buf[8192];
    const ssize_t n = ::read(master, buf, sizeof buf);
    REQUIRE(n > 0);
    const std::string shown(buf, static_cast<std::size_t>(n));
    CHECK_THAT(shown, Catch::Contains("approval needed (sandbox): retry without the sandbox"));
    CHECK_THAT(shown, Catch::Contains("command: touch /etc/x"));
    CHECK_THAT(shown, Catch::Contains("  denied:  create /etc/x (not under a writable root; fix: -w /etc)"));
    CHECK_THAT(shown, Catch::Contains("  denied:  connect 10.0.0.1:443 (network restricted; fix: -n full)"));
    ::close(master);
    ::close(slave);

    const auto none = TtyApprover("/nonexistent/tty").ask(prompt_of());
    CHECK(none.decision == ReviewDecision::Denied);
    CHECK(none.answered_by == "default-deny");
}

TEST_CASE("a session file that cannot be written: the approval holds for this run, with a warning",
          "[approval][store]") {
    TempDir dir;
    spit(dir.path + "/file", "x");
    FileSessionStore store(dir.path + "/file/s.json");  // its directory cannot exist
    struct Yes final : Approver {
        ApproverAnswer ask(const ApprovalPrompt&) override {
            return {ReviewDecision::ApprovedForSession, "approver", ""};
        }
    } yes;
    CanonicalPolicy policy;
    policy.mode = Mode::ReadOnly;
    ApprovalSettings settings;
    settings.mode = AskForApproval::OnFailure;
    std::vector<bool> calls;
    const auto out =
        orchestrate(ApprovalRequest{{"touch", "/etc/x"}, "/w", policy}, settings, store, yes, [&](bool sandboxed) {
            calls.push_back(sandboxed);
            AttemptOutcome o;
            o.result.exit_code = sandboxed ? 1 : 0;
            o.sandbox_denied = sandboxed;
            return o;
        });
    CHECK(calls == std::vector<bool>{true, false});
    CHECK(out.result.exit_code == 0);
    REQUIRE(out.warnings.size() == 1);
    CHECK_THAT(out.warnings[0], Catch::StartsWith("the session approval holds for this run only: "));
    CHECK_THAT(to_json(out.approval)["requests"][0]["note"].get<std::string>(), Catch::Contains("Not a directory"));
}
