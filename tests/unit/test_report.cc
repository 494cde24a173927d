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
    CHECK(sanitize_utf8("a\xFF" "b") == "a\xEF\xBF\xBD" "b");
    CHECK(sanitize_utf8("\xC0\xAF") == "\xEF\xBF\xBD\xEF\xBF\xBD");           // overlong
    CHECK(sanitize_utf8("\xED\xA0\x80") == "\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD");  // surrogate
    CHECK(sanitize_utf8("\xE2\x82") == "\xEF\xBF\xBD");                       // truncated: one maximal subpart
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
    for (const char* key : {"command", "cwd", "sandbox", "policy", "exit_code", "signal", "timed_out", "duration_ms",
                            "stdout", "stderr", "stdout_truncated", "stderr_truncated", "stdout_bytes",
                            "stderr_bytes", "stdout_omitted_bytes", "stdout_omitted_lines",
                            "stderr_omitted_bytes", "stderr_omitted_lines", "output_cap", "sandbox_denied",
                            "denials", "escalated", "approval", "not_enforced"})
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

TEST_CASE("a path the policy's own entries deny or keep read-only: the note names the entry, never -w") {
    RunReport r = sample();
    r.policy.mode = Mode::WorkspaceWrite;
    r.policy.writable = {WritableRoot{"/work", {"/work/docs"}}};
    r.policy.resolved = {ResolvedEntry{"/", "", FsAccess::Read, true, true, "read :root (workspace-write preset)"},
                         ResolvedEntry{"/work", "", FsAccess::Write, true, true, "write /work (workspace-write preset: the workspace)"},
                         ResolvedEntry{"/home/u/.ssh", "", FsAccess::Deny, true, true, "deny /home/u/.ssh (--deny)"},
                         ResolvedEntry{"/work/docs", "", FsAccess::Read, true, true, "read /work/docs (--read-only)"}};
    r.denial.reason = "permission denied";
    r.denial.path = "/home/u/.ssh/id_ed25519";
    CHECK(denial_note(r) == "sbx: the sandbox likely denied this (permission denied); /home/u/.ssh/id_ed25519 is "
                            "denied by the entry deny /home/u/.ssh (--deny); drop that entry to allow it\n");
    r.denial.reason = "read-only file system";
    r.denial.path = "/work/docs/x";
    CHECK(denial_note(r) == "sbx: the sandbox likely denied this (read-only file system); /work/docs/x is kept "
                            "read-only by the entry read /work/docs (--read-only); drop that entry to allow writes\n");
}

TEST_CASE("the denial note names what was denied and the flag that allows it") {
    RunReport r = sample();
    CHECK(denial_note(r) == "sbx: the sandbox likely denied this (read-only file system); to allow writes to /etc "
                            "use -p workspace-write -w /etc\n");
    r.policy.mode = Mode::WorkspaceWrite;
    r.policy.writable = {WritableRoot{"/work", {"/work/.git"}}};
    r.denial.path = "/work/.git/hooks/x";
    CHECK(denial_note(r) == "sbx: the sandbox likely denied this (read-only file system); /work/.git/hooks/x is "
                            "protected; --unprotect .git allows writes to it\n");
    // A relative path from the message is the command's: against its directory.
    r.cwd = "/work/sub";
    r.denial.path = "../.git/config";
    CHECK(denial_note(r) == "sbx: the sandbox likely denied this (read-only file system); /work/.git/config is "
                            "protected; --unprotect .git allows writes to it\n");
    r.denial.path = "out/f";
    CHECK(denial_note(r) == "sbx: the sandbox likely denied this (read-only file system); to allow writes to "
                            "/work/sub/out add -w /work/sub/out\n");
    r.denial.path = "/work/.git/hooks/x";
    r.denial.denials = {Denial{"fs.write_file", "/srv/data/f", "", "", 0, ""}};
    CHECK(denial_note(r) == "sbx: the sandbox likely denied this (fs.write_file on /srv/data/f); to allow writes "
                            "to /srv/data add -w /srv/data\n");
    r.denial.denials = {Denial{"net.connect_tcp", "", "10.0.0.1:443", "", 0, ""}};
    CHECK(denial_note(r)->find("-n full") != std::string::npos);
    r.denial.denials = {Denial{"scope.signal", "", "", "pid 1 (init)", 0, ""}};
    CHECK(denial_note(r) == "sbx: the sandbox likely denied this (scope.signal to pid 1 (init)); signals to "
                            "processes outside the sandbox are blocked; -p danger-full-access runs without one\n");
    r.denial.denials = {Denial{"scope.abstract_unix_socket", "", "", "", 0, ""}};
    CHECK(denial_note(r) == "sbx: the sandbox likely denied this (scope.abstract_unix_socket); -p "
                            "danger-full-access runs the command without a sandbox\n");
    r.denial = {};
    r.denial.sandbox_denied = true;
    r.denial.reason = "SIGSYS";
    CHECK(denial_note(r)->find("SIGSYS") != std::string::npos);
    r.denial.sandbox_denied = false;
    CHECK_FALSE(denial_note(r));
}
