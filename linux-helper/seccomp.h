// The seccomp layer of the helper (SPEC section 5; network rules of section 2).
//
// install_seccomp() is the last step before execvp, after no_new_privs and
// Landlock.  The filter always denies, with EPERM: ptrace, process_vm_readv/
// writev, pidfd_getfd, io_uring_*, the mount family, socket(AF_VSOCK), and
// the TIOCSTI/TIOCLINUX ioctls (compared under a 32-bit mask).  Syscalls made
// through another ABI (i386 `int 0x80`, x32) kill the process.
//
// Network, per policy:
//   restricted  socket(), connect(), bind(), listen(), accept() fail with EPERM;
//               socketpair(AF_UNIX) of type STREAM or SEQPACKET is allowed.
//   limited     socket() for AF_INET, AF_INET6 and AF_UNIX (STREAM, SEQPACKET);
//               every connect() is handed to the UnixMediator (network.h)
//               through a seccomp user-notification listener.
//   full        no socket rules.
// Unix datagram sockets are refused in restricted and limited: a datagram
// socket can send to any pathname address (sendto/sendmsg), and the address in
// a sendmsg is out of the filter's reach, so a host socket such as /dev/log
// would otherwise be reachable.
#ifndef SBX_HELPER_SECCOMP_H
#define SBX_HELPER_SECCOMP_H

#include <cstdint>
#include <vector>

#include <linux/filter.h>

#include "fd.h"
#include "policy/policy.h"

namespace sbx::helper {

// Loads the filter into the calling thread (sets no_new_privs if not yet
// set).  Returns the user-notification listener when the policy needs one
// (network limited), else an invalid Fd.  Throws sbx::Error naming the step.
Fd install_seccomp(const sbx::CanonicalPolicy&);

// The BPF program that install_seccomp() loads, for inspection and tests.
std::vector<sock_filter> seccomp_program(sbx::Network);

}  // namespace sbx::helper

#else
// This header has the name of libseccomp's.  Where this directory is on the
// include path, <seccomp.h> finds this file again (it is already included);
// the next one on the path is libseccomp's.
#include_next <seccomp.h>
#endif  // SBX_HELPER_SECCOMP_H
