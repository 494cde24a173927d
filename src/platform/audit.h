// The kernel's audit log, read over netlink: whether audit is on and
// readable (doctor), and a subscription that collects the Landlock records
// of a run (sbx run).  What the records mean is denial/denial.h's, pure
// (denial/evidence.h holds the record).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "denial/evidence.h"  // AuditRecord
#include "util/fd.h"

namespace sbx {

// What this machine's audit offers.
struct AuditStatus {
    std::optional<bool> enabled;  // the kernel's audit is on (records are made); nullopt: this user cannot ask
    bool readable = false;        // sbx can subscribe to the audit log (CAP_AUDIT_READ)
    std::string detail;           // one line for doctor (text and --json alike)
    bool denials_listed() const { return readable && enabled != false; }
};
AuditStatus audit_status();

// A subscription to the kernel's audit log (netlink, AUDIT_NLGRP_READLOG),
// opened before the command starts; records are queued in the socket until
// collect() reads them.  inactive() when audit is off or not readable.
class AuditWatch {
public:
    AuditWatch();  // never throws: an unavailable audit log leaves it inactive
    bool active() const { return fd_.valid(); }
    // The Landlock records received so far, waiting up to wait_ms for the
    // first (kauditd delivers them asynchronously).
    std::vector<AuditRecord> collect(int wait_ms = 0);

private:
    Fd fd_;
};

}  // namespace sbx
