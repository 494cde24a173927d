"""Drives a command on a new pseudo-terminal by a script of steps, as a user
at that terminal would (a small expect).

    pty-talk.py [--rows R --cols C] STEP... -- CMD...

Steps, in order:
  expect:REGEX   read the terminal until REGEX (Python, on the bytes decoded
                 as latin-1) matches what it showed since the last match
  send:TEXT      type TEXT (Python escapes: "\\x03" is ^C, "\\r" is Enter)
  wait:PATH      wait until the file PATH exists (reading the terminal)
  winsize:R,C    set the terminal's size (TIOCSWINSZ; the kernel sends
                 SIGWINCH to its foreground group)
The terminal starts at R rows and C columns (default 24 x 80).  Prints
everything the command wrote and exits with its exit status (128+N for
signal N); on a step not done within 20 s, or the command still running 20 s
after the last step, prints "pty-talk: timeout at STEP", kills the
terminal's session and exits 124.
"""
import fcntl
import os
import pty
import re
import select
import signal
import struct
import sys
import termios
import time

PATIENCE = 20


def escaped(text):
    return text.encode().decode("unicode_escape").encode("latin-1")


def set_size(fd, rows, cols):
    fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", rows, cols, 0, 0))


def main():
    args = sys.argv[1:]
    rows, cols = 24, 80
    while args and args[0] in ("--rows", "--cols"):
        if args[0] == "--rows":
            rows = int(args[1])
        else:
            cols = int(args[1])
        args = args[2:]
    dashes = args.index("--")
    steps, argv = args[:dashes], args[dashes + 1:]
    pid, fd = pty.fork()
    if pid == 0:
        set_size(0, rows, cols)
        os.execvp(argv[0], argv)
    out = b""
    seen = 0  # where the next expect starts looking
    status = None

    def read_some(timeout):
        nonlocal out
        ready, _, _ = select.select([fd], [], [], timeout)
        if not ready:
            return True
        try:
            data = os.read(fd, 65536)
        except OSError:
            return False
        if not data:
            return False
        out += data
        return True

    def give_up(step):
        sys.stdout.buffer.write(out)
        print(f"\npty-talk: timeout at {step}", flush=True)
        try:
            os.killpg(pid, signal.SIGKILL)
        except OSError:
            pass
        os.kill(pid, signal.SIGKILL)
        sys.exit(124)

    for step in steps:
        kind, _, value = step.partition(":")
        deadline = time.time() + PATIENCE
        if kind == "expect":
            pattern = re.compile(value.encode("latin-1"))
            while True:
                m = pattern.search(out, seen)
                if m:
                    seen = m.end()
                    break
                if time.time() > deadline or not read_some(0.1):
                    give_up(step)
        elif kind == "wait":
            while not os.path.exists(value):
                if time.time() > deadline:
                    give_up(step)
                read_some(0.05)
        elif kind == "send":
            os.write(fd, escaped(value))
        elif kind == "winsize":
            r, c = value.split(",")
            set_size(fd, int(r), int(c))
        else:
            sys.exit(f"pty-talk: unknown step {step}")
    deadline = time.time() + PATIENCE
    while status is None:
        alive = read_some(0.1)
        got, st = os.waitpid(pid, os.WNOHANG)
        if got == pid:
            status = st
        elif time.time() > deadline:
            give_up("the end")
        elif not alive:
            _, status = os.waitpid(pid, 0)
    while read_some(0):
        pass
    sys.stdout.buffer.write(out)
    sys.stdout.flush()
    if os.WIFSIGNALED(status):
        sys.exit(128 + os.WTERMSIG(status))
    sys.exit(os.WEXITSTATUS(status))


if __name__ == "__main__":
    main()
