// Layer 6: Landlock at the highest ABI the kernel offers.
#pragma once

#include "policy/policy.h"

namespace sbx::helper {

// Restricts the calling thread (and what it execs).  For a sandboxed
// filesystem: every filesystem right of the ABI is handled but read and
// execute when the policy reads "/" (granted everywhere: unhandled, they cost
// no walk up the tree on each open), and truncate with the mount view (every
// mount outside the writable roots is read-only there, and an O_TRUNC open
// needs the write right); read and execute on the readable entries (/dev and
// /proc too) when it does not read "/"; every handled right on the writable
// roots (/dev/null is one) and, without "/", the private /dev/shm; denied
// paths get no rule (the mount view covers them: Landlock cannot take away
// below a readable directory).  Without the mount view
// (with_mount_layer false) a policy with deny entries, read-only carve-outs
// inside writable roots, or without "/" is refused.  ABI >= 6: signals
// scoped in every mode (external-sandbox too: a ruleset that handles no
// filesystem right, only the scope), abstract UNIX sockets too but under
// external-sandbox with network full.  ABI >= 4 with network restricted: TCP bind
// and connect handled with no rule (all denied).  with_mount_layer says
// whether the read-only mount view is also in place; without it the ruleset
// must cover truncation itself (ABI >= 3).  Throws Error when the kernel
// cannot enforce what is asked.
// socket_files false (Codex's --managed-network, managed_network.h): the
// writable roots lose the right to make a socket file, so that a UNIX socket
// cannot be bound to a path there (bind fails with EACCES), as Codex's own
// helper refuses such a bind.
void apply_landlock(const CanonicalPolicy&, bool with_mount_layer, bool socket_files = true);

// Whether apply_landlock scopes signals (Landlock ABI 6, Linux 6.12): below
// it only a pid namespace keeps the command from signalling processes
// outside the sandbox.
bool landlock_scopes_signals();

// Without a mount namespace Landlock alone guards the filesystem: it can
// grant, never take away below a granted directory, nor make a path absent.
// Refuses (Error) a policy with deny entries (but sbx's own hiding of
// /tmp/codex-daemon-<euid>, which the caller's note lists as not enforced),
// read-only carve-outs inside writable roots, or without a readable "/".
void refuse_landlock_alone(const CanonicalPolicy&);

}  // namespace sbx::helper
