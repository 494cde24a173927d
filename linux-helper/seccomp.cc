// The seccomp filter: the BPF programs that libseccomp built at build time
// (seccomp_gen.cc, one per network level), loaded with seccomp(2) directly,
// so that the listener comes back with the load and the loader alone decides
// the filter flags.
#include "seccomp.h"

#include <linux/seccomp.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <span>
#include <string>
#include <string_view>

#include "seccomp_filters.h"
#include "step_error.h"

namespace sbx::helper {
namespace {

constexpr const char* kStep = "seccomp";

// Each filter in its two variants: as it is, and for own terminals.
struct Pair {
    std::span<const sock_filter> plain, own;
};

// A learning run's with --reads: the recorded filters, every open notified too.
Pair reads_programs_for(sbx::Network network, bool transparent) {
    switch (network) {
        case sbx::Network::Restricted:
            return {filters::kRestrictedRecordedReads, filters::kRestrictedRecordedReadsOwnTerminals};
        case sbx::Network::Limited:
            if (transparent)
                return {filters::kLimitedTransparentRecordedReads,
                        filters::kLimitedTransparentRecordedReadsOwnTerminals};
            return {filters::kLimitedRecordedReads, filters::kLimitedRecordedReadsOwnTerminals};
        case sbx::Network::Full: break;
    }
    return {filters::kFullRecordedReads, filters::kFullRecordedReadsOwnTerminals};
}

Pair programs_for(sbx::Network network, Watch watch, bool transparent) {
    if (watch == Watch::Reads) return reads_programs_for(network, transparent);
    const bool record = watch == Watch::Everything;
    switch (network) {
        case sbx::Network::Restricted:
            if (record) return {filters::kRestrictedRecorded, filters::kRestrictedRecordedOwnTerminals};
            if (watch == Watch::Network) return {filters::kRestrictedWatched, filters::kRestrictedWatchedOwnTerminals};
            return {filters::kRestricted, filters::kRestrictedOwnTerminals};
        case sbx::Network::Limited:
            if (transparent)
                return record ? Pair{filters::kLimitedTransparentRecorded,
                                     filters::kLimitedTransparentRecordedOwnTerminals}
                              : Pair{filters::kLimitedTransparent, filters::kLimitedTransparentOwnTerminals};
            return record ? Pair{filters::kLimitedRecorded, filters::kLimitedRecordedOwnTerminals}
                          : Pair{filters::kLimited, filters::kLimitedOwnTerminals};
        case sbx::Network::Full: break;
    }
    return record ? Pair{filters::kFullRecorded, filters::kFullRecordedOwnTerminals}
                  : Pair{filters::kFull, filters::kFullOwnTerminals};
}

}  // namespace

bool notifies(sbx::Network network, Watch watch) {
    return network == sbx::Network::Limited || watch == Watch::Everything || watch == Watch::Reads ||
           (watch == Watch::Network && network == sbx::Network::Restricted);
}

Fd install_seccomp(const sbx::CanonicalPolicy& policy, Watch watch, bool transparent, Terminals terminals) {
    const Pair pair = programs_for(policy.network, watch, transparent);
    const std::span<const sock_filter> program = terminals == Terminals::Own ? pair.own : pair.plain;
    sock_fprog prog{};
    prog.len = static_cast<unsigned short>(program.size());
    prog.filter = const_cast<sock_filter*>(program.data());  // the kernel only reads it
    if (!notifies(policy.network, watch)) {
        if (syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog) != 0)
            fail_errno(kStep, "cannot load the filter (the kernel needs CONFIG_SECCOMP_FILTER)");
        return Fd();
    }
    // Without SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV on purpose: a signal
    // still interrupts a connect that waits for its peer, as it would
    // unsandboxed (the mediator's answer then finds the caller gone).
    long fd = syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_NEW_LISTENER, &prog);
    if (fd < 0)
        fail_errno(kStep,
                   "cannot load the filter with a notification listener (Linux 5.0 or later; or use --network "
                   "restricted)");
    return Fd(static_cast<int>(fd));
}

}  // namespace sbx::helper
