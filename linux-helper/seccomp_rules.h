// The seccomp filter's fixed refusals, by name: for seccomp_gen.cc, which
// builds the filters from them, and for the recorder (recorder.h), which
// names a refusal it is told of under --record-denials.
#pragma once

#include <linux/audit.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>

#include <cstdint>

namespace sbx::helper {

// The one ABI the filters are for (seccomp_data.arch of a notification):
// calls through any other are killed by the filter before pid 1 hears of
// them, so a notification of another is not decoded.
#if defined(__x86_64__)
inline constexpr std::uint32_t kAuditArch = AUDIT_ARCH_X86_64;
#elif defined(__aarch64__)
inline constexpr std::uint32_t kAuditArch = AUDIT_ARCH_AARCH64;
#else
#error "the helper is built for x86_64 and aarch64 only (linux-helper/meson.build)"
#endif

struct Named {
    const char* name;
    // The number, where the source gives it (-1: seccomp-gen looks the name
    // up in libseccomp's table of the architecture it builds for).
    int nr = -1;
};

// The syscalls that touch another process, io_uring (whose requests bypass
// every syscall rule), the mount family and the keyrings.  The newer calls are
// named by number: the C library's headers may predate them.
inline constexpr Named kAlwaysDenied[] = {
    {"ptrace", SYS_ptrace},
    {"process_vm_readv", SYS_process_vm_readv},
    {"process_vm_writev", SYS_process_vm_writev},
    {"pidfd_getfd", 438},
    {"io_uring_setup", 425},
    {"io_uring_enter", 426},
    {"io_uring_register", 427},
    {"mount", SYS_mount},
    {"umount2", SYS_umount2},
    {"pivot_root", SYS_pivot_root},
    {"open_tree", 428},
    {"move_mount", 429},
    {"fsopen", 430},
    {"fsconfig", 431},
    {"fsmount", 432},
    {"fspick", 433},
    {"mount_setattr", 442},
    {"open_tree_attr", 467},
    // The kernel keyrings are not namespaced by the mount or pid namespace:
    // as root (no user namespace) the command would share root's user
    // keyring with the host, read its keys and leave keys behind.
    {"add_key", SYS_add_key},
    {"request_key", SYS_request_key},
    {"keyctl", SYS_keyctl},
};

// Terminal ioctls that change the terminal for other processes or leave a
// change behind after sbx exits, and that ordinary sandboxed programs do not
// need.  The inherited terminal is the user's own: a command run in the
// background of an interactive shell could otherwise inject input (TIOCSTI),
// send SIGWINCH to the outside foreground job (TIOCSWINSZ), switch the
// terminal to another line discipline (TIOCSETD), suspend its output
// (TCXONC with TCOOFF), lock others out of it (TIOCEXCL), redirect the
// console to it (TIOCCONS), hang it up (TIOCVHANGUP), lock its settings
// (TIOCSLCKTRMIOS) or change the serial line (TIOCSSERIAL).  A filter cannot
// tell one descriptor from another, so they are refused on every one, also
// on the sandbox's own ptys (root_view.h), with one exception: TIOCSWINSZ
// is allowed where the command can reach no terminal but its own ptys
// (kTerminalIoctl, seccomp.h), which tmux and script need to size theirs.
// Deliberately allowed:
// - termios (TCSETS*) and TIOCSPGRP, which full-screen programs and
//   interactive shells inside need.  A background sandboxed job that ignores
//   SIGTTOU can therefore still change termios or take the foreground, like
//   any background job;
// - TIOCSCTTY, which login_tty, forkpty, script and expect call on the pty
//   they made: the kernel (tiocsctty, drivers/tty/tty_jobctrl.c) gives a
//   terminal to a session leader without one, and takes a terminal that is
//   another session's controlling terminal only with arg 1 and
//   CAP_SYS_ADMIN, which the command never has (caps.h).  So the user's
//   terminal, which is their session's, stays theirs (tests/integration/
//   inside.sh tries); a terminal that no session has (one passed around on a
//   descriptor) can become the controlling terminal of the sandbox's own
//   session, which gives it that terminal's ^C and hangup, nothing outside;
// - TIOCGPTN, TIOCSPTLCK and TIOCGPTPEER, which only a ptmx master answers.
struct NamedIoctl {
    const char* name;
    unsigned long request;
};
inline constexpr NamedIoctl kDeniedIoctls[] = {
    {"TIOCSTI", TIOCSTI},       {"TIOCLINUX", TIOCLINUX},     {"TIOCSETD", TIOCSETD},
    {"TIOCSWINSZ", TIOCSWINSZ}, {"TIOCEXCL", TIOCEXCL},       {"TIOCNXCL", TIOCNXCL},
    {"TIOCCONS", TIOCCONS},     {"TIOCVHANGUP", TIOCVHANGUP}, {"TIOCSLCKTRMIOS", TIOCSLCKTRMIOS},
    {"TCXONC", TCXONC},         {"TIOCSSERIAL", TIOCSSERIAL},
};

}  // namespace sbx::helper
