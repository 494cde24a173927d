#!/usr/bin/env python3
# no-landlock.py [--no-userns] CMD [ARG...]: runs CMD as on a kernel without
# Landlock: a seccomp filter (inherited by everything CMD starts) makes
# landlock_create_ruleset fail with ENOSYS, which is how the helper learns the
# ABI.  With --no-userns, also as where no namespace can be made (a container,
# an AppArmor setting): clone and unshare asking for a new namespace fail with
# EPERM.  For the fallbacks that older kernels take (supervisor.sh).
import ctypes, os, platform, struct, sys

PR_SET_NO_NEW_PRIVS, PR_SET_SECCOMP, SECCOMP_MODE_FILTER = 38, 22, 2
NR_LANDLOCK_CREATE_RULESET = 444  # the same number on every architecture
NR_CLONE, NR_UNSHARE = {"x86_64": (56, 272), "aarch64": (220, 97)}[platform.machine()]
CLONE_NEW_ANY = 0x7E020000  # CLONE_NEWNS, NEWCGROUP, NEWUTS, NEWIPC, NEWUSER, NEWPID, NEWNET
ENOSYS, EPERM = 38, 1
BPF_LD_W_ABS, BPF_JEQ_K, BPF_JSET_K, BPF_RET_K = 0x20, 0x15, 0x45, 0x06
SECCOMP_RET_ALLOW, SECCOMP_RET_ERRNO = 0x7FFF0000, 0x00050000

no_userns = sys.argv[1] == "--no-userns"
command = sys.argv[2:] if no_userns else sys.argv[1:]
program = [
    (BPF_LD_W_ABS, 0, 0, 0),  # 0: the syscall's number
    (BPF_JEQ_K, 0, 1, NR_LANDLOCK_CREATE_RULESET),
    (BPF_RET_K, 0, 0, SECCOMP_RET_ERRNO | ENOSYS),
]
if no_userns:
    program += [
        (BPF_JEQ_K, 2, 0, NR_CLONE),  # 3: to 6
        (BPF_JEQ_K, 1, 0, NR_UNSHARE),  # 4: to 6
        (BPF_RET_K, 0, 0, SECCOMP_RET_ALLOW),
        (BPF_LD_W_ABS, 0, 0, 16),  # 6: the low half of the flags (args[0])
        (BPF_JSET_K, 0, 1, CLONE_NEW_ANY),
        (BPF_RET_K, 0, 0, SECCOMP_RET_ERRNO | EPERM),
    ]
program.append((BPF_RET_K, 0, 0, SECCOMP_RET_ALLOW))
code = b"".join(struct.pack("HBBI", *insn) for insn in program)
buffer = ctypes.create_string_buffer(code, len(code))


class SockFprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]


libc = ctypes.CDLL(None, use_errno=True)
fprog = SockFprog(len(program), ctypes.addressof(buffer))


def prctl(option, *args):  # every argument an unsigned long, as prctl reads them
    return libc.prctl(ctypes.c_int(option), *(ctypes.c_ulong(a) for a in args + (0,) * (4 - len(args))))


if prctl(PR_SET_NO_NEW_PRIVS, 1) != 0 or prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, ctypes.addressof(fprog)) != 0:
    sys.exit("no-landlock.py: seccomp: " + os.strerror(ctypes.get_errno()))
os.execvp(command[0], command)
