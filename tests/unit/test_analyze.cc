// One attempt's denials from all of its evidence (denial/analyze.h): which
// source decides, in which order the denials come, and each with its rule
// and fix.
#include <catch2/catch.hpp>

#include <signal.h>

#include "denial/analyze.h"
#include "fake_fs.h"

using namespace sbx;
using sbx::test::FakeFs;

namespace {

// The fields RunOutcome views, as the supervisor's ExecResult has them.
struct Result {
    struct Stream {
        std::string shown, tail;
    };
    int exit_code = 0;
    std::optional<int> signal;
    bool timed_out = false;
    Stream out, err;
};

Result failed(int code, std::string err = "") {
    Result r;
    r.exit_code = code;
    r.err.shown = std::move(err);
    return r;
}

struct Setup {
    FakeFs fs;
    Environment env;
    CanonicalPolicy policy;
    explicit Setup(Mode mode = Mode::WorkspaceWrite) {
        fs.dir("/usr/bin").dir("/etc").dir("/tmp").dir("/dev/shm").dir("/root/.npm").dir("/w/.git");
        fs.file("/dev/null").file("/etc/hosts");
        env = fs.env("/w");
        env.home = "/root";
        PolicyInput in{};
        in.mode = mode;
        policy = resolve(in, env);
    }
    DenialAnalysis analyze(const Evidence& e) const { return sbx::analyze(e, policy, env); }
};

Evidence sandboxed(const Result& r) {
    Evidence e;
    e.outcome = r;
    e.sandboxed = true;
    return e;
}

// A run of the Linux helper with --record-denials.
Evidence recorded(const Result& r, const HelperStatus& helper) {
    Evidence e = sandboxed(r);
    e.helper = &helper;
    e.record_denials = true;
    return e;
}

HelperStatus recording(RecordedDenial d) {
    HelperStatus helper;
    helper.denied.push_back(std::move(d));
    return helper;
}

}  // namespace

TEST_CASE("analyze: without a sandbox nothing is a denial") {
    const Setup t;
    const Result r = failed(1, "touch: cannot touch '/etc/x': Read-only file system\n");
    Evidence e = sandboxed(r);
    e.sandboxed = false;
    const DenialAnalysis a = t.analyze(e);
    CHECK_FALSE(a.sandbox_denied);
    CHECK(a.denials.empty());
    CHECK_FALSE(a.guess);
}

TEST_CASE("analyze: the output's guess, with its rule and fix, where nothing is exact") {
    const Setup t;
    const Result r = failed(1, "touch: cannot touch '/etc/x': Read-only file system\n");
    const DenialAnalysis a = t.analyze(sandboxed(r));
    CHECK(a.sandbox_denied);
    CHECK(a.reason == "read-only file system");
    CHECK_FALSE(a.recorded);
    REQUIRE(a.guess);
    CHECK(a.guess->operation == "write");
    CHECK(a.guess->path == "/etc/x");
    CHECK(a.guess->fix->rule == "not under a writable root");
    CHECK(a.guess->fix->text() == "-w /etc");
}

TEST_CASE("analyze: the recorder's list decides where it ran, merged with the log's") {
    const Setup t;
    const HelperStatus helper = recording({"create", "/etc/x", "", 3, "touch"});
    const Result r = failed(1, "touch: cannot touch '/etc/x': Read-only file system\n");
    Evidence e = recorded(r, helper);
    e.logged = {Denial{"fs.make_reg", "/etc/x", "", "", 0, ""}, Denial{"fs.write_file", "/etc/hosts", "", "", 0, ""}};
    const DenialAnalysis a = t.analyze(e);
    CHECK(a.sandbox_denied);
    CHECK(a.recorded);
    CHECK(a.reason == "recorded");
    CHECK_FALSE(a.guess);  // exact denials: no guess
    REQUIRE(a.denials.size() == 2);
    CHECK(a.denials[0].operation == "create");
    CHECK(a.denials[0].fix->text() == "-w /etc");
    CHECK(a.denials[1].path == "/etc/hosts");
    CHECK(a.denials[1].fix->rule == "not under a writable root");

    // Succeeded: listed, not blamed.
    e.outcome = failed(0);
    CHECK_FALSE(t.analyze(e).sandbox_denied);
    CHECK(t.analyze(e).denials.size() == 2);
}

TEST_CASE("analyze: a recorder that did not run leaves the guess, and its network attempts join") {
    const Setup t;
    HelperStatus helper = recording({"connect", "", "192.0.2.7:80", 2, "curl"});
    helper.not_enforced = {"recorded denials (no user namespace)"};
    CHECK_FALSE(recorder_ran(t.policy, helper));
    const Result r = failed(7, "curl: (7) Failed to connect to 192.0.2.7 port 80\n");
    Evidence e = recorded(r, helper);
    const DenialAnalysis a = t.analyze(e);
    CHECK(a.sandbox_denied);
    CHECK(a.reason == "recorded");
    CHECK_FALSE(a.recorded);
    REQUIRE(a.denials.size() == 1);
    CHECK(a.denials[0].fix->text() == "-n full");
    // No helper (macOS): its status is not read at all.
    e.helper = nullptr;
    CHECK(t.analyze(e).denials.empty());
    CHECK_FALSE(t.analyze(e).sandbox_denied);
}

TEST_CASE("analyze: the proxy's refusals come first, exact, and keep their own rule and fix") {
    const Setup t;
    const HelperStatus helper = recording({"create", "/etc/x", "", 3, "touch"});
    const Result r = failed(6);
    Evidence e = recorded(r, helper);
    e.record_denials = false;  // the proxy's are exact all the same
    e.refused = {
        proxy_refusal("evil.dev", 443, Fix{"no allow-domain matches evil.dev", {.allow_domains = {"evil.dev"}}, ""}),
        proxy_refusal("::1", 80, Fix{"::1 is loopback", {}, "why"})};
    const DenialAnalysis a = t.analyze(e);
    CHECK(a.sandbox_denied);
    CHECK(a.recorded);
    CHECK(a.reason == "recorded");
    REQUIRE(a.denials.size() == 3);
    CHECK(a.denials[0].address == "evil.dev:443");
    CHECK(a.denials[0].fix->text() == "--allow-domain evil.dev");
    CHECK(a.denials[1].address == "[::1]:80");
    CHECK(a.denials[1].fix->rule == "::1 is loopback");
    CHECK(a.denials[1].fix->text() == "no flag suggested: why");
    CHECK(a.denials[2].path == "/etc/x");
    // A timeout is not the proxy's.
    Result late = failed(124);
    late.timed_out = true;
    e.outcome = late;
    CHECK_FALSE(t.analyze(e).sandbox_denied);
}

TEST_CASE("analyze: a refused lookup gets the name the output gives, and a fix by name") {
    const Setup t;
    const HelperStatus helper = recording({"connect", "", "127.0.0.53:53", 2, "curl"});
    const Result r = failed(6, "curl: (6) Could not resolve host: example.com\n");
    const DenialAnalysis a = t.analyze(recorded(r, helper));
    REQUIRE(a.denials.size() == 1);
    CHECK(a.denials[0].host == "example.com");
    CHECK(a.denials[0].fix->text() == "--allow-domain example.com");
}

TEST_CASE("analyze: SIGSYS is the sandbox's whatever the output") {
    const Setup t;
    Result r;
    r.exit_code = 128 + SIGSYS;
    r.signal = SIGSYS;
    const DenialAnalysis a = t.analyze(sandboxed(r));
    CHECK(a.sandbox_denied);
    CHECK(a.reason == "SIGSYS");
}
