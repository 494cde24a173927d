// Layer 1: resource limits from the policy.
#pragma once

#include <cstdint>

#include "policy/policy.h"

namespace sbx::helper {

// Sets soft and hard limit of every limit the policy names but the process
// count, each of which holds per process (as with ulimit).  A limit above the
// current hard limit is clamped to it (stricter than asked, never weaker).
void apply_rlimits(const Limits&);

// The process count (--limit-procs), in pid 1 of a new user namespace: there
// the kernel counts RLIMIT_NPROC per user namespace, so only the sandbox's
// own processes (and threads) count, not every process of the same user on
// the machine.  It must not be set before the namespace is made: the limit
// in force then would bound the user's whole count on the host.  Pid 1
// itself is not counted against the command.
void limit_processes_in_user_namespace(std::uint64_t processes);

// The count that lets the command have `processes`: pid 1 is one more.
inline std::uint64_t with_pid1(std::uint64_t processes) { return processes == UINT64_MAX ? processes : processes + 1; }

}  // namespace sbx::helper
