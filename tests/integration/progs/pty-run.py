"""Runs a command on a new pseudo-terminal, as an interactive shell would.

    pty-run.py WAIT INPUT -- CMD...

Once the file WAIT exists (at once when WAIT is "-"), types INPUT (Python
escapes: "\\x03" is ^C, "\\n" is Enter) on the terminal.  Prints everything the
command wrote to the terminal and exits with the command's exit code (124
when it is still running after 10 s; it is then killed).
"""
import os
import pty
import select
import sys
import time


def main():
    wait, text = sys.argv[1], sys.argv[2].encode().decode("unicode_escape").encode("latin-1")
    argv = sys.argv[sys.argv.index("--") + 1:]
    pid, fd = pty.fork()
    if pid == 0:
        os.execvp(argv[0], argv)
    out = b""
    typed = False
    deadline = time.time() + 10
    while time.time() < deadline:
        if not typed and (wait == "-" or os.path.exists(wait)):
            time.sleep(0.1)
            os.write(fd, text)
            typed = True
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
