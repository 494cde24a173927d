// The audit netlink reader (platform/audit.h) on this machine; the parsing of
// its records is test_denial.cc's.
#include <catch2/catch.hpp>

#include "platform/audit.h"

using namespace sbx;

TEST_CASE("audit status is answered on this machine without throwing") {
    const auto s = audit_status();
    CHECK_FALSE(s.detail.empty());
    AuditWatch w;
    // With audit off no record can come: collect() has nothing, even waiting.
    if (s.enabled == false) CHECK(w.collect(200).empty());
    if (!w.active()) CHECK(w.collect().empty());
}
