#!/usr/bin/env python3
"""SysV shared memory and POSIX message queues through libc, for the IPC
namespace tests:  ipc.py ACTION NAME_OR_KEY

  shm-create KEY   shmget(KEY, 4096, IPC_CREAT|0600)
  shm-exists KEY   shmget(KEY, 0, 0) succeeds
  shm-remove KEY   shmctl(IPC_RMID) of the segment with KEY
  mq-create NAME   mq_open(NAME, O_CREAT|O_RDWR, 0600)
  mq-exists NAME   mq_open(NAME, O_RDONLY) succeeds
  mq-send NAME     mq_send of one message to the existing queue NAME
  mq-receive NAME  mq_receive of one message from the existing queue NAME
  mq-unlink NAME   mq_unlink(NAME)

Exit status 0 when the call succeeded, 1 (with the error) when it failed."""
import ctypes
import os
import sys

IPC_CREAT, IPC_RMID = 0o1000, 0

libc = ctypes.CDLL(None, use_errno=True)
try:
    rt = ctypes.CDLL("librt.so.1", use_errno=True)  # glibc < 2.34 keeps mq_* there
except OSError:
    rt = libc


def check(result, what):
    if result == -1:
        err = ctypes.get_errno()
        print(f"{what}: {os.strerror(err)}", file=sys.stderr)
        sys.exit(1)
    return result


def main(action, arg):
    if action.startswith("shm-"):
        key = int(arg)
        if action == "shm-create":
            check(libc.shmget(key, 4096, IPC_CREAT | 0o600), "shmget")
        elif action == "shm-exists":
            check(libc.shmget(key, 0, 0), "shmget")
        elif action == "shm-remove":
            check(libc.shmctl(check(libc.shmget(key, 0, 0), "shmget"), IPC_RMID, None), "shmctl")
        return
    name = arg.encode()
    if action == "mq-create":
        check(rt.mq_open(name, os.O_CREAT | os.O_RDWR, 0o600, None), "mq_open")
    elif action == "mq-exists":
        check(rt.mq_open(name, os.O_RDONLY), "mq_open")
    elif action == "mq-send":
        mq = check(rt.mq_open(name, os.O_WRONLY | os.O_NONBLOCK), "mq_open")
        check(rt.mq_send(mq, b"x", 1, 0), "mq_send")
    elif action == "mq-receive":
        mq = check(rt.mq_open(name, os.O_RDONLY | os.O_NONBLOCK), "mq_open")
        buf = ctypes.create_string_buffer(1 << 16)
        check(rt.mq_receive(mq, buf, len(buf), None), "mq_receive")
    elif action == "mq-unlink":
        check(rt.mq_unlink(name), "mq_unlink")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
