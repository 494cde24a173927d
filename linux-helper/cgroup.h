// --limit-procs where RLIMIT_NPROC cannot keep it: the kernel exempts uid 0
// from RLIMIT_NPROC, so a sandbox run by root gets a pids cgroup of its own
// (cgroup v2 with the pids controller, or v1's pids hierarchy), made beside
// nothing else: a child of the helper's own cgroup, named sbx-PID.  Pid 1
// moves itself in before it starts the command; the helper removes the
// cgroup once pid 1 is gone (the pid namespace is empty then).
#pragma once

#include <cstdint>
#include <string>

#include "util/fd.h"

namespace sbx::helper {

class PidsCgroup {
public:
    // Makes the cgroup that lets the command have `processes` (pids.max
    // counts pid 1 too, as with_pid1() says), or refuses (Error) naming why.
    explicit PidsCgroup(std::uint64_t processes);
    PidsCgroup(const PidsCgroup&) = delete;
    PidsCgroup& operator=(const PidsCgroup&) = delete;
    ~PidsCgroup();

    // In pid 1: moves the calling process into the cgroup.
    void enter() const;

private:
    std::string path_;
    Fd procs_;  // its cgroup.procs, open for writing
};

}  // namespace sbx::helper
