"""Runs a command on a new pseudo-terminal and answers its question there.

    pty-answer.py QUESTION ANSWER -- CMD...

Once the command has written QUESTION to the terminal, types ANSWER and
Enter, as a user would.  Prints everything the command wrote to the
terminal and exits with the command's exit code (124, the command killed,
when it has not ended 10 s after the question, or the question never came
within 10 s).
"""
import os
import pty
import select
import signal
import sys
import time


def main():
    dashes = sys.argv.index("--")
    question, answer = sys.argv[1].encode(), sys.argv[2].encode() + b"\n"
    pid, fd = pty.fork()
    if pid == 0:
        os.execvp(sys.argv[dashes + 1], sys.argv[dashes + 1:])
    out = b""
    deadline = time.time() + 10
    answered = False
    while time.time() < deadline:
        ready, _, _ = select.select([fd], [], [], 0.1)
        if ready:
            try:
                data = os.read(fd, 4096)
            except OSError:  # EIO: the terminal's last holder is gone
                data = b""
            if not data:
                break
            out += data
        if not answered and question in out:
            os.write(fd, answer)
            answered = True
            deadline = time.time() + 10
    sys.stdout.write(out.decode(errors="replace"))
    # The terminal's end comes as the command exits, a little before it can
    # be reaped: wait for that, within what is left of the bound.
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done != 0:
            sys.exit(os.waitstatus_to_exitcode(status))
        if time.time() >= deadline:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            sys.exit(124)
        time.sleep(0.01)


main()
