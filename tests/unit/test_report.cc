// The JSON result, events and text notes.
#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include "report/report.h"

using namespace sbx;

namespace {

RunReport sample() {
    RunReport r;
    r.command = {"touch", "/etc/x"};
    r.cwd = "/work";
    r.sandbox = SandboxKind::Linux;
    r.policy.mode = Mode::ReadOnly;
    r.policy.workspace = "/work";
    r.result.exit_code = 1;
    r.result.duration_ms = 12;
    r.result.err.shown = "touch: cannot touch '/etc/x': Read-only file system\n";
    r.result.err.bytes = r.result.err.shown.size();
    r.result.err.shown_bytes = r.result.err.shown.size();
    r.result.err.shown_lines = 1;
    r.denial.sandbox_denied = true;
    r.denial.reason = "read-only file system";
    r.denial.path = "/etc/x";
    return r;
}

}  // namespace

TEST_CASE("invalid UTF-8 is replaced, valid text kept") {
    CHECK(sanitize_utf8("h\xC3\xA9llo \xE2\x82\xAC \xF0\x9F\x98\x80") == "h\xC3\xA9llo \xE2\x82\xAC \xF0\x9F\x98\x80");
    CHECK(sanitize_utf8("a\xFF"
                        "b") ==
          "a\xEF\xBF\xBD"
          "b");
    CHECK(sanitize_utf8("\xC0\xAF") == "\xEF\xBF\xBD\xEF\xBF\xBD");                  // overlong
    CHECK(sanitize_utf8("\xED\xA0\x80") == "\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD");  // surrogate
    CHECK(sanitize_utf8("\xE2\x82") == "\xEF\xBF\xBD");                              // truncated: one maximal subpart
    CHECK(sanitize_utf8(std::string("\0x", 2)) == std::string("\0x", 2));
}

TEST_CASE("chunked UTF-8 keeps characters split across chunks") {
    Utf8Chunker c;
    CHECK(c.push("a\xE2") == "a");
    CHECK(c.push("\x82") == "");
    CHECK(c.push("\xAC!") == "\xE2\x82\xAC!");
    CHECK(c.push("\xF0\x9F") == "");
    CHECK(c.finish() == "\xEF\xBF\xBD");
    CHECK(c.push("\xFF") == "\xEF\xBF\xBD");
}

TEST_CASE("the JSON result has every field of section 4") {
    RunReport r = sample();
    r.result.out.shown = "bad \xFF byte";
    r.result.out.bytes = 5000;
    r.result.out.truncated = true;
    const auto j = result_json(r);
    for (const char* key : {"command",
                            "cwd",
                            "sandbox",
                            "policy",
                            "exit_code",
                            "signal",
                            "timed_out",
                            "duration_ms",
                            "stdout",
                            "stderr",
                            "stdout_truncated",
                            "stderr_truncated",
                            "stdout_bytes",
                            "stderr_bytes",
                            "stdout_omitted_bytes",
                            "stdout_omitted_lines",
                            "stderr_omitted_bytes",
                            "stderr_omitted_lines",
                            "output_cap",
                            "sandbox_denied",
                            "denials",
                            "escalated",
                            "approval",
                            "not_enforced"})
        CHECK(j.contains(key));
    CHECK(j.size() == 24);
    CHECK_FALSE(j.contains("denials_omitted"));  // only where the recorder left some out
    r.denial.omitted = 9744;
    CHECK(result_json(r)["denials_omitted"] == 9744);
    CHECK(j["not_enforced"] == nlohmann::json::array());
    CHECK(j["command"] == nlohmann::json{"touch", "/etc/x"});
    CHECK(j["signal"].is_null());
    CHECK(j["approval"].is_null());
    CHECK(j["stdout"] == "bad \xEF\xBF\xBD byte");
    CHECK(j["stdout_bytes"] == 5000);
    CHECK(j["stdout_truncated"] == true);
    CHECK(j["denials"] == nlohmann::json::array());
    CHECK(j["policy"] == to_json(r.policy));
    r.result.signal = 9;
    CHECK(result_json(r)["signal"] == 9);
}

TEST_CASE("events: begin, output, end; one line each") {
    RunReport r = sample();
    const auto b = begin_event(r.command, r.cwd, r.sandbox, r.policy);
    CHECK(b["type"] == "begin");
    CHECK(b["sandbox"] == "linux");
    const auto o = json_line(output_event(Stream::Stderr, "x\ny"));
    CHECK(o == "{\"data\":\"x\\ny\",\"stream\":\"stderr\",\"type\":\"output\"}\n");
    const auto e = end_event(r);
    CHECK(e["type"] == "end");
    CHECK(e["result"] == result_json(r));
}

TEST_CASE("the omitted event, and the result's omission fields") {
    CHECK(json_line(omitted_event(Stream::Stdout, 1032, 144)) ==
          "{\"bytes\":1032,\"lines\":144,\"stream\":\"stdout\",\"type\":\"omitted\"}\n");
    RunReport r = sample();
    r.result.out.omitted_bytes = 1032;
    r.result.out.omitted_lines = 144;
    r.result.caps = OutputCaps{10240, 256, Keep::Tail};
    const auto j = result_json(r);
    CHECK(j["stdout_omitted_bytes"] == 1032);
    CHECK(j["stdout_omitted_lines"] == 144);
    CHECK(j["stderr_omitted_bytes"] == 0);
    CHECK(j["output_cap"] == nlohmann::json{{"max_bytes", 10240}, {"max_lines", 256}, {"keep", "tail"}});
}

TEST_CASE("the heuristic's note: the message, the path it names, its rule and fix (denial/fix.h)") {
    RunReport r = sample();
    r.denial.guess = Denial{"write",
                            "/etc/x",
                            "",
                            "",
                            0,
                            "",
                            "",
                            Fix{"read :root (read-only preset): nothing is writable but /dev/null",
                                {.mode = Mode::WorkspaceWrite, .writable_roots = {"/etc"}},
                                ""}};
    CHECK(denial_note(r) ==
          "sbx: the sandbox likely denied this (read-only file system): write /etc/x (read :root "
          "(read-only preset): nothing is writable but /dev/null; allow with -p workspace-write "
          "-w /etc)\n");
    r.denial.guess =
        Denial{"write", "f", "", "", 0, "", "", Fix{"", {}, "/w/f is writable: the command wrote elsewhere"}};
    CHECK(denial_note(r) ==
          "sbx: the sandbox likely denied this (read-only file system): write f (no flag "
          "suggested: /w/f is writable: the command wrote elsewhere)\n");
    r.denial.sandbox_denied = false;
    CHECK_FALSE(denial_note(r));
}

TEST_CASE("exact denials: one summary line, the count and the first with its rule and fix") {
    RunReport r = sample();
    r.denial = {};
    r.denial.recorded = true;
    const Fix npm{"not under a writable root", {.writable_roots = {"/root/.npm"}}, ""};
    r.denial.denials = {Denial{"create", "/root/.npm/_cacache", "", "", 3, "npm", "", npm},
                        Denial{"create", "/root/.npm/_logs", "", "", 3, "npm", "", npm}};
    r.denial.omitted = 1;
    // Also when the command exited 0: the user asked for the record.
    CHECK(denial_note(r) ==
          "sbx: denied 3 operations; first: create /root/.npm/_cacache (not under a writable "
          "root; allow with -w /root/.npm)\n");
    r.denial.omitted = 0;
    r.denial.denials = {
        Denial{"connect", "", "127.0.0.1:8080", "", 4, "curl", "",
               Fix{"network restricted: no sockets except AF_UNIX socketpair", {.network = Network::Full}, ""}}};
    CHECK(denial_note(r) ==
          "sbx: denied 1 operation; first: connect 127.0.0.1:8080 (network restricted: no "
          "sockets except AF_UNIX socketpair; allow with -n full)\n");
    r.denial.denials[0] = Denial{"write", "/root/.bashrc",
                                 "",      "",
                                 4,       "sh",
                                 "",      Fix{"not under a writable root", {}, "that would make $HOME writable"}};
    CHECK(denial_note(r) ==
          "sbx: denied 1 operation; first: write /root/.bashrc (not under a writable root; no "
          "flag suggested: that would make $HOME writable)\n");
    // Audit's, without the recorder: only when the command failed of one.
    r.denial.recorded = false;
    r.denial.denials = {Denial{"scope.signal", "", "", "pid 1 (init)", 0, "", "",
                               Fix{"", {}, "only -p danger-full-access (no sandbox) allows it"}}};
    CHECK_FALSE(denial_note(r));
    r.denial.sandbox_denied = true;
    CHECK(denial_note(r) ==
          "sbx: denied 1 operation; first: scope.signal to pid 1 (init) (no flag suggested: only "
          "-p danger-full-access (no sandbox) allows it)\n");
}

TEST_CASE("the heuristic without a path: a hint by mode, never -n limited") {
    RunReport r = sample();
    r.denial.path.clear();
    CHECK(denial_note(r) ==
          "sbx: the sandbox likely denied this (read-only file system); to allow writes to the "
          "workspace use -p workspace-write (and -w DIR for another directory)\n");
    r.policy.mode = Mode::WorkspaceWrite;
    CHECK(denial_note(r) ==
          "sbx: the sandbox likely denied this (read-only file system); if it was a write outside "
          "the writable roots, add -w DIR; if it was the network, use -n full\n");
    r.denial.reason = "SIGSYS";
    CHECK(denial_note(r) ==
          "sbx: the sandbox likely denied this (a blocked system call killed it (SIGSYS)); if it "
          "was a socket, -n full allows the network\n");
    r.denial.sandbox_denied = false;
    CHECK_FALSE(denial_note(r));
}
