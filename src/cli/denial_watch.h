// Where the platform tells of a sandbox's denials besides sbx's own recorder,
// watched for the length of one sandboxed run: on Linux the kernel's audit
// log (Landlock records, where audit is on and sbx may read it:
// platform/audit.h), on macOS the unified log (Seatbelt's "deny" lines,
// followed with `log stream` under --record-denials: denial/seatbelt_log.h).
// One file per platform: denial_watch_linux.cc, denial_watch_macos.cc.
#pragma once

#include <memory>
#include <set>
#include <string>
#include <vector>

#include "denial/denial.h"

namespace sbx::cli {

class DenialWatch {
public:
    // Started before the command (what comes earlier is not the run's).
    // record: --record-denials (macOS follows its log only then: starting
    // `log stream` costs a fraction of a second).  Never throws: a log that
    // cannot be read leaves the watch empty.
    explicit DenialWatch(bool record);
    ~DenialWatch();
    DenialWatch(const DenialWatch&) = delete;
    DenialWatch& operator=(const DenialWatch&) = delete;

    // The run's denials: `failed` (the command failed: wait a little for
    // records the log delivers late), `pids` (the run's processes, where the
    // log names processes), `helper` (the Linux helper, which created the
    // Landlock domain).
    std::vector<Denial> collect(bool failed, const std::set<long>& pids, const std::string& helper);

    struct State;

private:
    std::unique_ptr<State> state_;
};

}  // namespace sbx::cli
