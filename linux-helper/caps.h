// Layer 4 and 5: drop every capability, then set no_new_privs.
#pragma once

namespace sbx::helper {

// Empties the bounding and ambient sets, locks the root-privilege securebits
// when it can, then clears the effective, permitted and inheritable sets.
// As root the process keeps uid 0 but no capability.  Throws Error when any
// capability would remain.
void drop_capabilities();

// PR_SET_NO_NEW_PRIVS: no setuid bit or file capability can add privileges.
void set_no_new_privs();

}  // namespace sbx::helper
