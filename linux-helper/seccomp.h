// The seccomp layer of the helper (SPEC section 5; network rules of section 2).
//
// install_seccomp() is the last step before execvp, after no_new_privs and
// Landlock.  The filters are built by libseccomp when the helper is built
// (seccomp_gen.cc holds the rules) and loaded as they are.  The filter always denies, with EPERM: ptrace,
// process_vm_readv/ writev, pidfd_getfd, io_uring_*, the mount family, socket(AF_VSOCK), and the TIOCSTI/TIOCLINUX
// ioctls (compared under a 32-bit mask).  Syscalls made through another ABI (i386 `int 0x80`, x32) kill the process.
//
// Network, per policy:
//   restricted  socket(), connect(), bind(), listen(), accept() fail with EPERM;
//               socketpair(AF_UNIX) of type STREAM or SEQPACKET is allowed.
//               Watched (Watch::Network, Everything, Reads): socket() of
//               AF_INET/AF_INET6, connect() and sendto() with an address go to
//               pid 1 instead (recorder.h), which hands out sockets of an
//               empty namespace and refuses every connect.
//   limited     socket() for AF_INET, AF_INET6 and AF_UNIX (STREAM, SEQPACKET);
//               every connect() is handed to the UnixMediator (network.h)
//               through a seccomp user-notification listener (and with
//               transparent TCP every getpeername(), transparent.h).
//   full        no socket rules.
// Unix datagram sockets are refused in restricted and limited: a datagram
// socket can send to any pathname address (sendto/sendmsg), and the address in
// a sendmsg is out of the filter's reach, so a host socket such as /dev/log
// would otherwise be reachable.
#pragma once

#include "policy/policy.h"
#include "util/fd.h"

namespace sbx::helper {

// What the filter tells pid 1 of (recorder.h): nothing; under network
// restricted, the command's network attempts (socket, connect and sendto of
// AF_INET and AF_INET6, --record-network); or those and the write-class file
// calls (--record-denials); or all that and every open and openat, whatever
// its flags (--learn-reads: a learning run's filters only).  Each watches
// all that the one before it does.
enum class Watch { None, Network, Everything, Reads };

// Which terminals the command can reach: the host's (one of stdin, stdout
// and stderr is a terminal, the helper has a controlling terminal, or
// Landlock below ABI 5 cannot keep it from the ioctls of a terminal device
// it opens), or only the sandbox's own ptys (Own: TIOCSWINSZ is allowed,
// which resizes and signals only what lies inside; seccomp_rules.h).
enum class Terminals { Host, Own };

// Loads the filter into the calling thread, which must have no_new_privs set
// (set_no_new_privs(), caps.h; or CAP_SYS_ADMIN).  Returns the user-notification listener when the filter
// notifies (network limited, or a Watch that applies), else an invalid Fd.  Throws sbx::Error naming the step.
// transparent (network limited, --transparent-tcp): getpeername() goes to
// pid 1 as well (transparent.h).
Fd install_seccomp(const sbx::CanonicalPolicy&, Watch = Watch::None, bool transparent = false,
                   Terminals = Terminals::Host);

// Whether that filter notifies, so that pid 1 must serve a listener.
bool notifies(sbx::Network, Watch);

}  // namespace sbx::helper
