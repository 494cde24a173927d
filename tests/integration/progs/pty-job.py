"""Job control through an interactive shell on a new pseudo-terminal.

    pty-job.py fg|bg|bgread|background|fgnow|ignored|selfstop READY -- CMD...

Starts `bash --norc --noprofile -i` on a new pseudo-terminal and runs CMD in
its foreground.  CMD must create the file READY once it runs.  Then, as a
user at the terminal would:
  1. ^Z, and waits until the shell says the job stopped and prompts again
     (background, fgnow: CMD is started with &, and there is no ^Z);
  2. fg: `fg`, then types "hello", Enter and ^D (CMD should copy the
     terminal's lines somewhere: sh -c 'touch ready; exec cat > out');
     bg: `bg`, 1.5 s at the prompt (CMD should end by itself within it,
     while the shell reads the terminal), then `wait`;
     bgread: `bg`; CMD reads the terminal in the background and stops
     again; `echo alive` (the shell still has the terminal, and tells of the
     stop); then as fg;
     background: as bgread after its `bg` (CMD: sh -c 'touch ready; exec cat > out');
     fgnow: started with &, `fg` before CMD reads, then as fg (CMD:
     sh -c 'touch ready; sleep 1; exec cat > out');
     ignored: CMD ignores SIGTSTP around sbx, so ^Z must change nothing:
     no stop, and "hello", Enter and ^D reach it (prints "ignored");
  3. `echo "rc=$?"`, and waits for its answer.
selfstop: nothing is typed after CMD, which stops itself (kill -STOP $$)
and must then end by itself (its timeout): the shell (started with -b, so
that it tells of a job's end at once) says the job stopped and prompts
again ("stopped"), then that it ended ("exit=N", and "ms=M": the time from
typing CMD to that report); then every process of the session but the
shell goes within the 10 s ("alone"), and the shell, which should still have
the terminal, answers `echo alive` ("alive").  There is no step 3.
CMD should fork nothing between making READY and the ^Z (exec its last
command): a ^Z that lands between a shell's vfork and the exec that follows
leaves the job unable to stop (see supervisor.sh).
Prints the name of each step the shell confirmed ("stopped", "rc=N") and, on
a failure, the terminal's output and the state of the session's processes; exits 0 when every step was confirmed, 1 if
one was not within 10 s (every process of the terminal's session is then
killed).
"""
import os
import pty
import re
import select
import shlex
import signal
import sys
import time

PROMPT = b"PTYJOB> "


def kill_session(sid):
    """SIGKILL to every process of the terminal's session: the shell's job
    and the groups below it (a stopped sandbox would hold its locks)."""
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
            if int(fields[3]) == sid:  # the session id, after state, ppid, pgrp
                os.kill(int(entry), signal.SIGKILL)
        except (OSError, ValueError, IndexError):
            pass


def others_in_session(sid):
    """The processes of the terminal's session but its shell (sid)."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) == sid:
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
            if int(fields[3]) == sid:
                found.append(int(entry))
        except (OSError, ValueError, IndexError):
            pass
    return found


def describe_session(sid, fd):
    """What the terminal and each process of its session were doing, for a
    failure's report: the terminal's foreground group, then per process its
    group, state and pending, blocked and ignored signals."""
    try:
        print(f"terminal: foreground group {os.tcgetpgrp(fd)}, shell {sid}")
    except OSError as e:
        print(f"terminal: {e}")
    for entry in sorted(os.listdir("/proc"), key=lambda e: int(e) if e.isdigit() else 0):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                stat = f.read()
            comm = stat[stat.index("(") + 1:stat.rindex(")")]
            fields = stat.rsplit(")", 1)[1].split()
            if int(fields[3]) != sid:
                continue
            with open(f"/proc/{entry}/status") as f:
                status = dict(line.split(":\t", 1) for line in f.read().splitlines() if ":\t" in line)
            signals = " ".join(f"{k}={status.get(k, '?').strip()}" for k in ("SigPnd", "ShdPnd", "SigBlk", "SigIgn"))
            print(f"pid {entry} ({comm}) ppid {fields[1]} pgrp {fields[2]} state {fields[0]} {signals}")
        except (OSError, ValueError, IndexError):
            pass


def main():
    mode, ready = sys.argv[1], sys.argv[2]
    argv = sys.argv[sys.argv.index("--") + 1:]
    env = dict(os.environ, PS1=PROMPT.decode(), TERM="dumb")
    pid, fd = pty.fork()
    if pid == 0:
        notify = ["-b"] if mode == "selfstop" else []
        os.execvpe("bash", ["bash", "--norc", "--noprofile", "-i"] + notify, env)
    out = bytearray()
    deadline = time.time() + 30  # a cap for a loaded machine; every wait is on a condition

    def read_until(pattern, start):
        """Reads until pattern matches the output after offset start."""
        while time.time() < deadline:
            m = re.search(pattern, bytes(out[start:]))
            if m:
                return start + m.end()
            ready_fds, _, _ = select.select([fd], [], [], 0.05)
            if ready_fds:
                try:
                    data = os.read(fd, 4096)
                except OSError:
                    data = b""
                if not data:
                    return None
                out.extend(data)
        return None

    def drain(seconds):
        """Keeps the terminal read for a while (so that nothing blocks on it)."""
        until = time.time() + seconds
        while time.time() < until:
            ready_fds, _, _ = select.select([fd], [], [], 0.02)
            if ready_fds:
                try:
                    out.extend(os.read(fd, 4096))
                except OSError:
                    return

    def fail(step):
        print(f"timed out waiting for: {step}")
        sys.stdout.write(out.decode(errors="replace"))
        print()
        describe_session(pid, fd)
        kill_session(pid)
        sys.exit(1)

    def type_(text):
        os.write(fd, text)

    def wait_job_has_terminal(step):
        """Waits until the shell has handed the terminal to a job (its
        foreground group is no longer the shell's), so that what is typed
        next is not read by the shell as a command line."""
        while time.time() < deadline:
            try:
                if os.tcgetpgrp(fd) != pid:
                    return
            except OSError:
                pass
            drain(0.02)
        fail(step)

    def type_hello():
        """A line for CMD to copy, then the end of its input."""
        type_(b"hello\n")
        drain(0.2)
        type_(b"\x04")

    at = read_until(re.escape(PROMPT), 0) or fail("the first prompt")
    typed = time.time()
    type_(shlex.join(argv).encode() + (b" &" if mode in ("background", "fgnow") else b"") + b"\n")
    while not os.path.exists(ready):
        if time.time() > deadline:
            fail("the command to start")
        drain(0.05)
    drain(0.2)
    if mode == "selfstop":
        at = read_until(rb"Stopped[^\n]*\n(.*\n)*?" + re.escape(PROMPT), at) or fail("the job to stop")
        print("stopped")
        end = read_until(rb"Exit (\d+)", at) or fail("the job to end")
        ms = int((time.time() - typed) * 1000)
        status = re.findall(rb"Exit (\d+)", bytes(out[at:end]))[-1].decode()
        print(f"exit={status}")
        print(f"ms={ms}")
        while others_in_session(pid):
            if time.time() > deadline:
                fail(f"the session's other processes to go: {others_in_session(pid)}")
            drain(0.02)
        print("alone")
        # The shell still has its terminal (sbx, ended in the background,
        # did not take it back for its own group).
        type_(b"echo alive\n")
        at = read_until(rb"\nalive\r?\n", end) or fail("the shell to answer")
        print("alive")
        type_(b"exit\n")
        kill_session(pid)
        sys.exit(0)
    if mode == "ignored":
        type_(b"\x1a")
        drain(0.5)
        type_hello()
        at = read_until(re.escape(PROMPT), at) or fail("the job to end")
        if b"Stopped" in out:
            fail("no stop")
        print("ignored")
    elif mode not in ("background", "fgnow"):
        type_(b"\x1a")
        at = read_until(rb"Stopped[^\n]*\n(.*\n)*?" + re.escape(PROMPT), at) or fail("the job to stop")
        print("stopped")
    since = at  # what the shell says from here on is about the job's next stop
    if mode == "bgread":
        type_(b"bg\n")
        at = read_until(re.escape(PROMPT), at) or fail("the prompt after bg")
    if mode in ("bgread", "background"):
        drain(1.5)  # the job reads the terminal meanwhile, and stops
        type_(b"echo alive\n")
        at = read_until(rb"\nalive\r?\n", at) or fail("the shell to answer")
        # bash tells of the stopped job before a prompt: the one before
        # `echo alive` when the job stopped that soon, else the next.
        if not re.search(rb"Stopped", bytes(out[since:])):
            at = read_until(rb"Stopped", at) or fail("the job to stop")
        print("alive")
    if mode in ("fg", "bgread", "background", "fgnow"):
        type_(b"fg\n")
        wait_job_has_terminal("the shell to hand the terminal to the job after fg")
        type_hello()
        at = read_until(re.escape(PROMPT), at) or fail("the job to end after fg")
    elif mode == "bg":
        type_(b"bg\n")
        at = read_until(re.escape(PROMPT), at) or fail("the prompt after bg")
        drain(1.5)  # the job ends meanwhile, while the shell reads the terminal
        type_(b"wait\n")
        at = read_until(rb"wait\r?\n(.*\n)*?" + re.escape(PROMPT), at) or fail("wait for the background job")
    type_(b'echo "rc=$?"\n')
    at = read_until(rb"\nrc=(\d+)", at) or fail("the exit status")
    rc = re.findall(rb"\nrc=(\d+)", bytes(out))[-1].decode()
    print(f"rc={rc}")
    type_(b"exit\n")
    # A job still stopped keeps bash from exiting: whatever is left of the
    # session goes, so that nothing holds the sandbox's locks afterwards.
    until = time.time() + 2
    while time.time() < until and os.waitpid(pid, os.WNOHANG) == (0, 0):
        drain(0.05)
    kill_session(pid)
    sys.exit(0)


main()
