// Seatbelt's denials from the unified log (denial/seatbelt_log.h), on
// sample lines in the shapes `log stream --style compact` and `log show`
// print.
#include <catch2/catch.hpp>

#include "denial/seatbelt_log.h"

using namespace sbx;

namespace {

// Compact style, as `log stream --style compact` prints a kernel message.
constexpr const char* kLog =
    "Timestamp               Ty Process[PID:TID]\n"
    "2026-11-24 06:01:02.345 E  kernel[0:1a2b] (Sandbox) Sandbox: touch(4242) deny(1) file-write-create "
    "/private/etc/sbx-denied\n"
    "2026-11-24 06:01:02.346 E  kernel[0:1a2b] (Sandbox) Sandbox: curl(4243) deny(1) network-outbound "
    "93.184.216.34:443\n"
    "2026-11-24 06:01:02.347 E  kernel[0:1a2b] (Sandbox) Sandbox: python3.11(4244) deny(1) "
    "network-outbound /private/var/run/mDNSResponder\n"
    "2026-11-24 06:01:02.348 E  kernel[0:1a2b] (Sandbox) Sandbox: kill(4245) deny(1) signal target\n"
    "2026-11-24 06:01:02.349 E  kernel[0:1a2b] (Sandbox) Sandbox: touch(4242) deny(1) file-write-create "
    "/private/etc/sbx-denied\n"
    "2026-11-24 06:01:02.350 E  kernel[0:1a2b] (Sandbox) Sandbox: mds(99) deny(1) file-read-data /Users/me\n"
    "2026-11-24 06:01:02.351 E  kernel[0:1a2b] (Sandbox) Sandbox: bash(4242) System Policy: deny(1) "
    "file-read-data /Library/x\n"
    "2026-11-24 06:01:02.352 Df kernel[0:1a2b] (Sandbox) Sandbox: my (tool)(4246) deny(1) file-write-unlink "
    "/Users/me/a dir/f\n";

}  // namespace

TEST_CASE("Seatbelt's log lines become denials", "[seatbelt][denial]") {
    const auto d = seatbelt_denials(kLog, {4242, 4243, 4244, 4245, 4246});
    REQUIRE(d.size() == 5);
    CHECK(d[0].operation == "file-write-create");
    CHECK(d[0].path == "/private/etc/sbx-denied");
    CHECK(d[0].pid == 4242);
    CHECK(d[0].program == "touch");
    CHECK(d[1].operation == "network-outbound");
    CHECK(d[1].address == "93.184.216.34:443");
    CHECK(d[1].path.empty());
    CHECK(d[2].address == "/private/var/run/mDNSResponder");
    CHECK(d[2].program == "python3.11");
    CHECK(d[3].operation == "signal");
    CHECK(d[3].target == "target");
    CHECK(d[4].program == "my (tool)");
    CHECK(d[4].path == "/Users/me/a dir/f");
}

TEST_CASE("Seatbelt's log: only this run's processes, never the System Policy's", "[seatbelt][denial]") {
    const auto d = seatbelt_denials(kLog, {4242});
    REQUIRE(d.size() == 1);  // the repeated line once; the System Policy line skipped
    CHECK(d[0].path == "/private/etc/sbx-denied");
    CHECK(seatbelt_denials(kLog, {}).size() == 6);  // any process: mds's too
    CHECK(seatbelt_denials("Sandbox: x(1) allow(1) file-read-data /a\nSandbox: (1) deny(1) f /a\nnot a line\n", {})
              .empty());
}

TEST_CASE("Seatbelt's log: the log stream that follows it", "[seatbelt][denial]") {
    const auto argv = seatbelt_log_argv();
    REQUIRE(argv.size() == 6);
    CHECK(argv[0] == "/usr/bin/log");
    CHECK(argv[5] == R"(sender == "Sandbox" AND eventMessage CONTAINS "deny(")");
}
