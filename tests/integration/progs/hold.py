"""Holds a process in a ptrace stop, where SIGCONT does not resume it.

    hold.py PID READY SECONDS

Seizes PID with ptrace, stops it (PTRACE_INTERRUPT), creates the file READY
once it is stopped, and keeps it so for SECONDS or until it dies (SIGKILL
still ends it; its death is then taken, as a tracer must, so that its parent
learns of it at once).  Exits 1 when PID cannot be traced.
"""
import ctypes
import os
import sys
import time

PTRACE_SEIZE = 0x4206
PTRACE_INTERRUPT = 0x4207
WALL = 0x40000000


def main():
    pid, ready, seconds = int(sys.argv[1]), sys.argv[2], float(sys.argv[3])
    libc = ctypes.CDLL(None, use_errno=True)
    libc.ptrace.argtypes = [ctypes.c_long, ctypes.c_long, ctypes.c_void_p, ctypes.c_void_p]
    for request in (PTRACE_SEIZE, PTRACE_INTERRUPT):
        if libc.ptrace(request, pid, None, None) != 0:
            print(f"hold.py: ptrace {request:#x}: {os.strerror(ctypes.get_errno())}", file=sys.stderr)
            return 1
    os.waitpid(pid, WALL)
    open(ready, "w").close()
    until = time.monotonic() + seconds
    while time.monotonic() < until:
        done, status = os.waitpid(pid, os.WNOHANG | WALL)
        if done == pid and (os.WIFEXITED(status) or os.WIFSIGNALED(status)):
            break
        time.sleep(0.002)
    return 0


if __name__ == "__main__":
    sys.exit(main())
