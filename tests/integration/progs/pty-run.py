"""Runs a command on a new pseudo-terminal, as an interactive shell would.

    pty-run.py WAIT INPUT [PAUSE LATER] -- CMD...

Once the file WAIT exists (at once when WAIT is "-"), types INPUT (Python
escapes: "\\x03" is ^C, "\\n" is Enter) on the terminal, and LATER PAUSE
seconds after that ("\\x13" then "\\x11" stops the terminal's output for a
while).  Prints everything the command wrote to the terminal and exits with the
command's exit code (124 when it is still running after 10 s; it is then
killed).
"""
import os
import pty
import select
import sys
import time


def escaped(text):
    return text.encode().decode("unicode_escape").encode("latin-1")


def main():
    dashes = sys.argv.index("--")
    wait, inputs = sys.argv[1], [escaped(t) for t in sys.argv[2:dashes:2]]
    pause = float(sys.argv[3]) if dashes > 3 else None
    argv = sys.argv[dashes + 1:]
    pid, fd = pty.fork()
    if pid == 0:
        os.execvp(argv[0], argv)
    out = b""
    typed_at = None
    deadline = time.time() + 10
    while time.time() < deadline:
        if typed_at is None and (wait == "-" or os.path.exists(wait)):
            time.sleep(0.1)
            os.write(fd, inputs[0])
            typed_at = time.time()
        if typed_at is not None and pause is not None and time.time() >= typed_at + pause:
            os.write(fd, inputs[1])
            pause = None
        ready, _, _ = select.select([fd], [], [], 0.05)
        if ready:
            try:
                data = os.read(fd, 4096)
            except OSError:  # EIO: the terminal's other side is gone
                data = b""
            if not data:
                _, status = os.waitpid(pid, 0)
                sys.stdout.write(out.decode(errors="replace"))
                sys.exit(os.waitstatus_to_exitcode(status))
            out += data
    os.kill(pid, 9)
    os.waitpid(pid, 0)
    sys.stdout.write(out.decode(errors="replace"))
    sys.exit(124)


main()
