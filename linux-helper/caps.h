// Layer 4 and 5: drop the capabilities, then set no_new_privs.
#pragma once

#include <cstdint>

namespace sbx::helper {

// What uid 0 keeps where the mount layer makes everything outside the
// writable roots read-only: CAP_CHOWN and CAP_FOWNER, so that tar, cp -a,
// rsync -a and dpkg-deb -x set owners, modes and times in the writable roots
// as they do natively (docs/policy.md, "Root inside the sandbox").  Never
// CAP_FSETID (chown clears set-user-ID and set-group-ID bits), nor any other.
std::uint64_t ownership_capabilities();

// Empties the bounding and ambient sets but for keep, locks the
// root-privilege securebits when it can, then reduces the effective,
// permitted and inheritable sets to keep, which is also ambient, so that it
// survives execve (uid 0 gets nothing else back there).  keep is 0 but as
// root in the mount layer (ownership_capabilities).  Throws Error when
// anything else would remain.
void drop_capabilities(std::uint64_t keep);

// PR_SET_NO_NEW_PRIVS: no setuid bit or file capability can add privileges.
void set_no_new_privs();

}  // namespace sbx::helper
