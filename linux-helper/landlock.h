// Layer 6: Landlock at the highest ABI the kernel offers.
#pragma once

#include "policy/policy.h"

namespace sbx::helper {

// The kernel's Landlock ABI version, or 0 when Landlock is absent or disabled.
int landlock_abi();

// Restricts the calling thread (and what it execs).  For a sandboxed
// filesystem: every filesystem right of the ABI is handled; read and execute
// on "/", every right on the writable roots and /dev/null.  ABI >= 6: abstract
// UNIX sockets and signals scoped.  ABI >= 4 with network restricted: TCP bind
// and connect handled with no rule (all denied).  with_mount_layer says
// whether the read-only mount view is also in place; without it the ruleset
// must cover truncation itself (ABI >= 3).  Throws Error when the kernel
// cannot enforce what is asked.
void apply_landlock(const CanonicalPolicy&, bool with_mount_layer);

}  // namespace sbx::helper
