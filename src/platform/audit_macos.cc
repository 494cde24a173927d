// macOS has no kernel audit log of sandbox denials (Seatbelt reports them in
// the unified log: denial/seatbelt_log.h): audit is never readable here,
// and the watch stays inactive (platform/audit.h).
#include "platform/audit.h"

namespace sbx {

AuditStatus audit_status() {
    return AuditStatus{std::nullopt, false, "macOS: Seatbelt's denials are in the unified log, not an audit log"};
}

AuditWatch::AuditWatch() = default;

std::vector<AuditRecord> AuditWatch::collect(int) { return {}; }

}  // namespace sbx
