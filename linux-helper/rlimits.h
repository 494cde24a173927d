// Layer 1: resource limits from the policy.
#pragma once

#include "policy/policy.h"

namespace sbx::helper {

// Sets soft and hard limit of every limit the policy names.  A limit above
// the current hard limit is clamped to it (stricter than asked, never weaker).
void apply_rlimits(const Limits&);

}  // namespace sbx::helper
