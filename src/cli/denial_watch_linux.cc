// Linux: the Landlock records of the kernel's audit log (platform/audit.h),
// read over netlink where audit is on and sbx may read it; the domain's
// creator, the helper, tells the run's records from others'.
#include "cli/denial_watch.h"

#include "platform/audit.h"
#include "policy/policy.h"

namespace sbx::cli {

struct DenialWatch::State {
    AuditWatch audit;  // subscribed before the command starts, so no record is missed
};

DenialWatch::DenialWatch(bool) : state_(std::make_unique<State>()) {}

DenialWatch::~DenialWatch() = default;

std::vector<Denial> DenialWatch::collect(bool failed, const std::set<long>&, const std::string& helper) {
    if (!state_->audit.active()) return {};
    // kauditd delivers asynchronously: a failed run waits up to 100 ms for the first.
    const auto records = state_->audit.collect(failed ? 100 : 0);
    if (records.empty()) return {};
    // The domain's creator is the helper, as the kernel names it (resolved).
    return landlock_denials(records, system_environment().realpath(helper).value_or(helper));
}

}  // namespace sbx::cli
