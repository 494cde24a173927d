// sandbox_denied heuristics and Landlock audit records (sample records from
// the kernel's documentation format; this machine's audit is off).
#include <catch2/catch.hpp>

#include <signal.h>

#include <nlohmann/json.hpp>

#include "denial/denial.h"
#include "exec/supervisor.h"  // ExecResult: the outcome analysed

using namespace sbx;

namespace {

ExecResult failed(int code, std::string err, std::string out = "") {
    ExecResult r;
    r.exit_code = code;
    r.err.shown = std::move(err);
    r.out.shown = std::move(out);
    return r;
}

constexpr const char* kLog =
    "type=LANDLOCK_ACCESS msg=audit(1729738800.221:33): domain=1a6fdc679 blockers=fs.write_file "
    "path=\"/dev/tty\" dev=\"devtmpfs\" ino=9\n"
    "type=LANDLOCK_DOMAIN msg=audit(1729738800.221:33): domain=1a6fdc679 status=allocated mode=enforcing "
    "pid=289 uid=0 exe=\"/usr/libexec/codex-linux-sandbox\" comm=\"codex-linux-san\"\n"
    "type=SYSCALL msg=audit(1729738800.221:33): arch=c000003e syscall=257 success=no exit=-13\n"
    "type=LANDLOCK_ACCESS msg=audit(1729738800.221:34): domain=1a6fdc679 blockers=fs.make_reg,fs.refer "
    "path=2F746D702F6120622F63 dev=\"vda2\" ino=143821\n"
    "type=UNKNOWN[1423] msg=audit(1729738800.300:40): domain=1a6fdc680 blockers=net.connect_tcp daddr=127.0.0.1 "
    "dest=8080\n"
    "type=UNKNOWN[1424] msg=audit(1729738800.300:40): domain=1a6fdc680 status=allocated mode=enforcing pid=300 "
    "uid=0 exe=\"/usr/libexec/codex-linux-sandbox\" comm=\"x\"\n"
    "audit: type=1423 audit(1729738800.400:50): domain=99 blockers=fs.write_file path=\"/etc/passwd\"\n"
    "audit: type=1424 audit(1729738800.400:50): domain=99 status=allocated mode=enforcing pid=1 uid=0 "
    "exe=\"/root/other-sandboxer\" comm=\"o\"\n"
    "type=LANDLOCK_DOMAIN msg=audit(1729738800.500:51): domain=1a6fdc679 status=deallocated denials=2\n";

}  // namespace

TEST_CASE("known messages are found case-insensitively") {
    CHECK(find_denial_message("touch: cannot touch 'x': Read-only file system") == "read-only file system");
    CHECK(find_denial_message("bash: /etc/x: PERMISSION DENIED") == "permission denied");
    CHECK(find_denial_message("ping: socket: Operation not permitted") == "operation not permitted");
    CHECK(find_denial_message("blocked by Landlock") == "landlock");
    CHECK_FALSE(find_denial_message("error: file not found"));
}

TEST_CASE("sandbox_denied needs a sandbox, a failing status and a known message") {
    CHECK(analyze_denial(failed(1, "touch: cannot touch '/etc/x': Read-only file system\n"), true).sandbox_denied);
    CHECK_FALSE(
        analyze_denial(failed(1, "touch: cannot touch '/etc/x': Read-only file system\n"), false).sandbox_denied);
    CHECK_FALSE(analyze_denial(failed(1, "some other error\n"), true).sandbox_denied);
    for (int code : {0, 2, 124, 126, 127})
        CHECK_FALSE(analyze_denial(failed(code, "Permission denied\n"), true).sandbox_denied);
    for (int code : {0, 124, 126, 127})
        CHECK_FALSE(analyze_denial(failed(code, "Read-only file system\n"), true).sandbox_denied);
    CHECK(analyze_denial(failed(1, "", "Permission denied on stdout\n"), true).sandbox_denied);
    ExecResult tail = failed(1, "lots of output, cut by the cap");
    tail.err.tail = "...\nmkdir: cannot create directory '/opt/x': Read-only file system\n";
    const auto a = analyze_denial(tail, true);
    CHECK(a.sandbox_denied);
    CHECK(a.path == "/opt/x");
}

TEST_CASE("SIGSYS counts as a sandbox denial") {
    ExecResult r;
    r.exit_code = 128 + SIGSYS;
    r.signal = SIGSYS;
    const auto a = analyze_denial(r, true);
    CHECK(a.sandbox_denied);
    CHECK(a.reason == "SIGSYS");
    CHECK_FALSE(analyze_denial(r, false).sandbox_denied);
}

TEST_CASE("the path on the message's line") {
    CHECK(path_near_denial_message("sh: 1: cannot create /etc/foo: Read-only file system") == "/etc/foo");
    CHECK(path_near_denial_message("touch: cannot touch '/a b/c': Permission denied") == "/a");
    CHECK(path_near_denial_message("x\nmkdir: cannot create directory \"/srv/d\": Permission denied\ny /z") ==
          "/srv/d");
    CHECK(path_near_denial_message("Operation not permitted").empty());
    CHECK(path_near_denial_message("no message /here").empty());
    // The target, not the template git init copies (issue 35); a link, not its target.
    CHECK(path_near_denial_message("fatal: cannot copy '/usr/share/git-core/templates/description' to "
                                   "'/ws/.git/description': Read-only file system") == "/ws/.git/description");
    CHECK(path_near_denial_message("ln: failed to create symbolic link '/etc/l' -> '/tmp/t': Read-only file system") ==
          "/etc/l");
    CHECK(path_near_denial_message("OSError: [Errno 30] Read-only file system: '/etc/x'") == "/etc/x");
}

TEST_CASE("a relative path, only next to a read-only file system") {
    CHECK(path_near_denial_message("sh: 1: cannot create .git/config2: Read-only file system") == ".git/config2");
    CHECK(path_near_denial_message("touch: cannot touch 'f': Read-only file system") == "f");
    CHECK(path_near_denial_message("mkdir: cannot create directory \u2018d\u2019: Read-only file system") == "d");
    CHECK(path_near_denial_message("error: could not lock config file .git/config: Read-only file system") ==
          ".git/config");
    CHECK(path_near_denial_message("bash: line 1: out.txt: Read-only file system") == "out.txt");
    CHECK(path_near_denial_message("OSError: [Errno 30] Read-only file system: 'sub/g'") == "sub/g");
    // Other messages can be about sockets or processes: absolute paths only.
    CHECK(path_near_denial_message("ping: socket: Operation not permitted").empty());
    CHECK(path_near_denial_message("bash: ./x: Permission denied").empty());
    CHECK(path_near_denial_message("Read-only file system").empty());
}

TEST_CASE("status 2 counts only with a read-only file system") {
    CHECK(analyze_denial(failed(2, "sh: 1: cannot create f: Read-only file system\n"), true).sandbox_denied);
    CHECK(analyze_denial(failed(2, "sh: 1: cannot create f: Read-only file system\n"), true).path == "f");
    CHECK_FALSE(
        analyze_denial(failed(2, "ls: cannot open directory '/root': Permission denied\n"), true).sandbox_denied);
    CHECK_FALSE(analyze_denial(failed(2, "grep: /x: Operation not permitted\n"), true).sandbox_denied);
}

TEST_CASE("audit log lines are parsed into Landlock records only") {
    const auto records = parse_audit_log(kLog);
    REQUIRE(records.size() == 8);
    CHECK(records[0].type == kAuditLandlockAccess);
    CHECK(records[1].type == kAuditLandlockDomain);
    CHECK(records[2].type == kAuditLandlockAccess);
    CHECK(records[3].type == kAuditLandlockAccess);
    CHECK(records[5].type == kAuditLandlockAccess);
}

TEST_CASE("denials of the helper's domains, with hex-encoded paths decoded") {
    const auto d = landlock_denials(parse_audit_log(kLog), "/usr/libexec/codex-linux-sandbox");
    REQUIRE(d.size() == 3);
    CHECK(d[0] == Denial{"fs.write_file", "/dev/tty", "", "", 0, ""});
    CHECK(d[1] == Denial{"fs.make_reg,fs.refer", "/tmp/a b/c", "", "", 0, ""});
    CHECK(d[2] == Denial{"net.connect_tcp", "", "127.0.0.1:8080", "", 0, ""});
    CHECK(to_json(d[2]) == nlohmann::json{{"operation", "net.connect_tcp"}, {"address", "127.0.0.1:8080"}});
    // Any creator: the other sandboxer's domain counts too.
    CHECK(landlock_denials(parse_audit_log(kLog), "").size() == 4);
    // A domain without its "allocated" record is not attributed.
    CHECK(landlock_denials(parse_audit_log(kLog), "/nonexistent").empty());
}

TEST_CASE("signal scoping denials name the target") {
    const auto d = landlock_denials(
        parse_audit_log("type=LANDLOCK_ACCESS msg=audit(1.2:3): domain=7 blockers=scope.signal opid=1 "
                        "ocomm=\"systemd\"\ntype=LANDLOCK_DOMAIN msg=audit(1.2:3): domain=7 status=allocated "
                        "mode=enforcing pid=5 uid=0 exe=\"/h\" comm=\"h\"\n"),
        "/h");
    REQUIRE(d.size() == 1);
    CHECK(d[0].target == "pid 1 (systemd)");
}

TEST_CASE("recorded denials: sandbox_denied only for a failure with a recorded denial") {
    HelperStatus helper;
    // cat /etc/shadow as a user: the file's mode, nothing recorded.
    DenialAnalysis a = analyze_recorded(failed(1, "cat: /etc/shadow: Permission denied"), helper, {});
    CHECK_FALSE(a.sandbox_denied);
    CHECK(a.denials.empty());

    helper.denied.push_back(RecordedDenial{"create", "/etc/x", "", 3, "touch"});
    helper.denied_omitted = 7;
    a = analyze_recorded(failed(1, "touch: cannot touch '/etc/x': Read-only file system"), helper, {});
    CHECK(a.sandbox_denied);
    CHECK(a.reason == "recorded");
    CHECK(a.omitted == 7);
    REQUIRE(a.denials.size() == 1);
    CHECK(a.denials[0] == Denial{"create", "/etc/x", "", "", 3, "touch"});
    CHECK(to_json(a.denials[0]) ==
          nlohmann::json{{"operation", "create"}, {"path", "/etc/x"}, {"pid", 3}, {"program", "touch"}});

    // A command that went on after the refusal and succeeded: nothing to blame.
    CHECK_FALSE(analyze_recorded(failed(0, ""), helper, {}).sandbox_denied);
    ExecResult timed_out = failed(124, "");
    timed_out.timed_out = true;
    CHECK_FALSE(analyze_recorded(timed_out, helper, {}).sandbox_denied);
}

TEST_CASE("without the recorder: the network attempts recorded all the same join the heuristic") {
    HelperStatus helper;
    // curl exits 7 with no known message: the heuristic sees nothing.
    DenialAnalysis a = analyze_denial(failed(7, "curl: (7) Failed to connect to 192.0.2.7 port 80"), true);
    CHECK_FALSE(a.sandbox_denied);
    add_recorded_network(a, failed(7, ""), helper);  // nothing recorded: unchanged
    CHECK_FALSE(a.sandbox_denied);
    CHECK(a.denials.empty());
    helper.denied.push_back(RecordedDenial{"connect", "", "192.0.2.7:80", 2, "curl"});
    add_recorded_network(a, failed(7, ""), helper);
    CHECK(a.sandbox_denied);
    CHECK(a.reason == "recorded");
    CHECK_FALSE(a.recorded);  // the writes were not recorded
    REQUIRE(a.denials.size() == 1);
    CHECK(a.denials[0].address == "192.0.2.7:80");
    // A file message the heuristic read stays its reason.
    DenialAnalysis b = analyze_denial(failed(1, "touch: cannot touch '/etc/x': Read-only file system"), true);
    add_recorded_network(b, failed(1, ""), helper);
    CHECK(b.reason == "read-only file system");
    CHECK(b.denials.size() == 1);
    // Succeeded after a refused connect (a fallback worked): nothing to blame.
    DenialAnalysis c;
    add_recorded_network(c, failed(0, ""), helper);
    CHECK_FALSE(c.sandbox_denied);
    CHECK(c.denials.size() == 1);
}

TEST_CASE("recorded denials: the audit's are merged, the same path or address once") {
    HelperStatus helper;
    helper.denied.push_back(RecordedDenial{"write", "/etc/passwd", "", 2, "sh"});
    helper.denied.push_back(RecordedDenial{"connect", "", "10.0.0.1:443", 4, "curl"});
    const std::vector<Denial> audit{{"fs.write_file", "/etc/passwd", "", "", 0, ""},
                                    {"net.connect_tcp", "", "10.0.0.1:443", "", 0, ""},
                                    {"scope.signal", "", "", "pid 1 (init)", 0, ""}};
    const auto merged = merge_denials(helper.denied, audit);
    REQUIRE(merged.size() == 3);
    CHECK(merged[0].operation == "write");
    CHECK(merged[1].operation == "connect");
    CHECK(merged[2].operation == "scope.signal");
}

TEST_CASE("the name a failed lookup was for, as programs say it (issue 35)") {
    CHECK(unresolved_host("curl: (6) Could not resolve host: example.com\n") == "example.com");
    CHECK(unresolved_host("fatal: unable to access 'https://github.com/a/b/': Could not resolve host: github.com") ==
          "github.com");
    CHECK(unresolved_host("ssh: Could not resolve hostname gitlab.example.org: Temporary failure in name resolution") ==
          "gitlab.example.org");
    CHECK(unresolved_host("npm error request to https://registry.npmjs.org/x failed, reason: getaddrinfo EAI_AGAIN "
                          "registry.npmjs.org") == "registry.npmjs.org");
    CHECK(unresolved_host("Error: getaddrinfo ENOTFOUND api.example.com") == "api.example.com");
    CHECK(unresolved_host("NameResolutionError(\"<urllib3.connection.HTTPSConnection>: Failed to resolve "
                          "'pypi.org' ([Errno -3] ...)\")") == "pypi.org");
    CHECK(unresolved_host("HTTPSConnectionPool(host='files.pythonhosted.org', port=443): Max retries") ==
          "files.pythonhosted.org");
    CHECK(unresolved_host("wget: unable to resolve host address 'ftp.gnu.org'") == "ftp.gnu.org");
    CHECK(unresolved_host("Resolving example.net (example.net)... failed: Temporary failure in name resolution.") ==
          "example.net");
    CHECK(unresolved_host("dial tcp: lookup proxy.golang.org on 10.0.0.53:53: dial udp: socket: operation not "
                          "permitted") == "proxy.golang.org");
    // No name: an address, a word without a dot, nothing at all.
    CHECK(unresolved_host("Resolving deltas: 100% (5/5), done.").empty());
    CHECK(unresolved_host("Could not resolve host: 10.1.2.3").empty());
    CHECK(unresolved_host("<urlopen error [Errno -3] Temporary failure in name resolution>").empty());
    // The first named wins.
    CHECK(unresolved_host("Could not resolve host: a.example\nCould not resolve host: b.example") == "a.example");
}

TEST_CASE("a denied lookup takes the name from the output") {
    DenialAnalysis a;
    a.denials.resize(2);
    a.denials[0].operation = a.denials[1].operation = "connect";
    a.denials[0].address = "10.255.255.53:53";
    a.denials[1].address = "192.0.2.7:443";
    ExecResult r;
    r.err.shown = "curl: (6) Could not resolve host: example.com\n";
    name_lookups(a, r);
    CHECK(a.denials[0].host == "example.com");
    CHECK(a.denials[1].host.empty());
    CHECK(denied_what(a.denials[0]) == "connect 10.255.255.53:53, the lookup of example.com");
}
