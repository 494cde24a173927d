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
// console to it (TIOCCONS), make it its controlling terminal (TIOCSCTTY),
// hang it up (TIOCVHANGUP), lock its settings (TIOCSLCKTRMIOS) or change
// the serial line (TIOCSSERIAL).  They are refused on every descriptor, so
// also on a pseudo-terminal the command opens itself (none can be opened in
// the sandbox today; were that to change, programs that host others on a pty
// of their own, such as script, tmux or pexpect, would need TIOCSWINSZ and
// TIOCSCTTY on it).
// Deliberately still allowed: termios (TCSETS*) and TIOCSPGRP, which
// full-screen programs and interactive shells inside need.  A background
// sandboxed job that ignores SIGTTOU can therefore still change termios or
// take the foreground, like any background job; the later fix is a terminal
// of the sandbox's own.
struct NamedIoctl {
    const char* name;
    unsigned long request;
};
inline constexpr NamedIoctl kDeniedIoctls[] = {
    {"TIOCSTI", TIOCSTI},         {"TIOCLINUX", TIOCLINUX},
    {"TIOCSETD", TIOCSETD},       {"TIOCSWINSZ", TIOCSWINSZ},
    {"TIOCEXCL", TIOCEXCL},       {"TIOCNXCL", TIOCNXCL},
    {"TIOCCONS", TIOCCONS},       {"TIOCSCTTY", TIOCSCTTY},
    {"TIOCVHANGUP", TIOCVHANGUP}, {"TIOCSLCKTRMIOS", TIOCSLCKTRMIOS},
    {"TCXONC", TCXONC},           {"TIOCSSERIAL", TIOCSSERIAL},
};

}  // namespace sbx::helper
