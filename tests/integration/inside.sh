#!/usr/bin/env bash
# Inside the sandbox, what a program may do in its writable roots works as
# without it (issue 35): new ptys from the sandbox's own devpts (openpty,
# pty.fork, script), with none of the host's ptys in sight; the inherited
# terminal still the user's (and not theirs to take); as root, owners and
# modes set in the writable roots (tar xf, cp -a, dpkg-deb -x) and nowhere
# else, and no set-user-ID or set-group-ID file.  Real sandboxes through
# `sbx run`, checked by what the host's files, ptys and sessions are
# afterwards.  Runs as root and again as uid 65534 (unprivileged.sh).
set -u
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
require_helper

d=$(scratch)           # under /var/tmp: not writable in workspace-write
ws=$d/ws
out=$d/outside         # beside the workspace: read-only inside
mkdir -p "$ws" "$out"
py=/usr/bin/python3
root=false
[ "$(id -u)" = 0 ] && root=true

# run [OPTION...] -- CMD...: workspace-write in the workspace, network limited.
run() { (cd "$ws" && exec "$SBX" run -p workspace-write -n limited "$@"); }
# CMD... with the slave of a fresh pty of the host as stdin, stdout and
# stderr, in a session of its own whose controlling terminal it is, as in a
# terminal window; prints what CMD wrote, then "kept" when the session still
# has the terminal afterwards.
on_terminal() {
    "$py" - "$@" <<'EOF'
import ctypes, os, sys
master, slave = os.openpty()
pid = os.fork()
if pid == 0:
    os.setsid()
    os.close(master)
    os.close(os.open(os.ttyname(slave), os.O_RDWR))  # the session's controlling terminal
    for fd in (0, 1, 2):
        os.dup2(slave, fd)
    pid = os.fork()
    if pid == 0:
        os.execvp(sys.argv[1], sys.argv[1:])
    os.waitpid(pid, 0)
    ours = ctypes.CDLL(None, use_errno=True).tcgetsid(0) == os.getsid(0)
    os.write(1, b"\n" + (b"kept" if ours else b"lost") + b"\n")
    os._exit(0)
os.close(slave)
data = b""
while not data.endswith((b"kept\r\n", b"lost\r\n")):
    try:
        chunk = os.read(master, 4096)
    except OSError:  # EIO: every slave is closed
        break
    if not chunk:
        break
    data += chunk
os.waitpid(pid, 0)
sys.stdout.write(data.decode(errors="replace").replace("\r", ""))
EOF
}

# --- the sandbox's own ptys ---------------------------------------------------
fork_pty='import ctypes, os, pty
pid, fd = pty.fork()
if pid == 0:
    ctty = ctypes.CDLL(None).tcgetsid(0) == os.getsid(0)
    print("child on", os.ttyname(0), "ctty" if ctty else "no ctty", flush=True)
    os.read(0, 1)  # until the parent has read the line (a pty drops what is unread at close)
    os._exit(0)
data = b""
while not data.endswith(b"\n"):
    data += os.read(fd, 1024)
os.write(fd, b"\n")
os.waitpid(pid, 0)
print(data.decode().strip())'
is "control: pty.fork natively" "child on /dev/pts/N ctty" \
    "$("$py" -c "$fork_pty" 2>&1 | sed 's|/dev/pts/[0-9]*|/dev/pts/N|')"
is "pty.fork inside: a pty of the sandbox's own, its controlling terminal (TIOCSCTTY)" \
    "child on /dev/pts/0 ctty" "$(run -- "$py" -c "$fork_pty" </dev/null 2>&1)"
is "openpty inside: bytes both ways" "b'up\\r\\n' b'down\\n'" "$(run -- "$py" -c 'import os
m, s = os.openpty()
os.write(s, b"up\n")
up = os.read(m, 16)
os.write(m, b"down\n")
print(up, os.read(s, 16))' </dev/null 2>&1)"
is "script -qec inside" "/dev/pts/0 ok" \
    "$(run -- env SHELL=/bin/sh script -qec 'tty; echo ok' /dev/null </dev/null 2>&1 | tr -d '\r' | tr '\n' ' ' | sed 's/ $//')"
# The host's ptys (this one, open while the sandbox runs) are not there.
is "/dev/pts inside lists only the sandbox's own (none of the host's)" "ptmx" \
    "$(on_terminal "$SBX" run -p workspace-write -- ls /dev/pts | head -1)"
# Another terminal of the same user, not inherited: before, the command could
# open it by its name and read what is typed there.
"$py" - "$d/other" <<'EOF' &
import os, sys, time
m, s = os.openpty()
open(sys.argv[1] + ".tmp", "w").write(os.ttyname(s))
os.rename(sys.argv[1] + ".tmp", sys.argv[1])
while os.path.exists(sys.argv[1]):
    time.sleep(0.05)
EOF
holder=$!
eventually test -s "$d/other"
other=$(cat "$d/other")
is "control: another pty of this user opens natively" "ok" \
    "$("$py" -c 'import os, sys; os.close(os.open(sys.argv[1], os.O_RDONLY | os.O_NOCTTY)); print("ok")' "$other" 2>&1)"
is "another pty of this user ($other) cannot be opened inside" "ENOENT" "$(run -- "$py" -c 'import errno, os, sys
try:
    os.close(os.open(sys.argv[1], os.O_RDONLY | os.O_NOCTTY)); print("ok")
except OSError as e:
    print(errno.errorcode[e.errno])' "$other" </dev/null 2>&1)"
rm -f "$d/other"
wait "$holder"

# TIOCSWINSZ on the sandbox's own pty where no terminal of the host's is
# within reach (no controlling terminal, none on stdin/out/err); refused
# where one is (the inherited one's size stays: enforcement-syscalls.sh).
winsz='import errno, fcntl, os, struct, termios
m, s = os.openpty()
try:
    fcntl.ioctl(m, termios.TIOCSWINSZ, struct.pack("HHHH", 30, 100, 0, 0))
    print(*struct.unpack("HHHH", fcntl.ioctl(s, termios.TIOCGWINSZ, bytes(8)))[:2])
except OSError as e:
    print(errno.errorcode[e.errno])'
if why=$(has_landlock_abi 5 "ioctl rights on devices"); then
    is "TIOCSWINSZ on an own pty, no host terminal in reach" "30 100" \
        "$(setsid -w "$SBX" run -p workspace-write -C "$ws" -- "$py" -c "$winsz" </dev/null 2>&1 | cat)"
else
    skip "TIOCSWINSZ on an own pty, no host terminal in reach" "$why"
fi
# (-T: sbx's relay would give the command a terminal of its own, tty.sh.)
is "TIOCSWINSZ on an own pty with the host's terminal inherited: refused" "EPERM" \
    "$(on_terminal "$SBX" run -T -p workspace-write -C "$ws" -- "$py" -c "$winsz" | head -1)"
# --private-terminal: the controlling terminal is the caller's own for this
# sandbox (sbx's relay), so it and the command's own ptys may be resized; a
# terminal on stdin that is not that one keeps it refused.
helper_ws=("$helper" --sandbox-policy-cwd "$ws" --command-cwd "$ws" --sandbox-policy '{"mode":"workspace-write"}')
winsz_stdin='import errno, fcntl, struct, termios
try:
    fcntl.ioctl(0, termios.TIOCSWINSZ, struct.pack("HHHH", 30, 100, 0, 0)); print("resized")
except OSError as e:
    print(errno.errorcode[e.errno])'
if why=$(has_landlock_abi 5 "ioctl rights on devices"); then
    is "--private-terminal: the controlling terminal may be resized" "resized" \
        "$(on_terminal "${helper_ws[@]}" --private-terminal -- "$py" -c "$winsz_stdin" | head -1)"
else
    skip "--private-terminal: the controlling terminal may be resized" "$why"
fi
# (Its answer goes to a file: stdout is that other terminal.)
on_terminal "$py" -c 'import os, subprocess, sys
m, s = os.openpty()
subprocess.run(sys.argv[1:], stdin=s, stdout=s, stderr=s)' "${helper_ws[@]}" --private-terminal -- \
    sh -c "\"\$0\" -c \"\$1\" > winsz.out" "$py" "$winsz_stdin" >/dev/null
is "--private-terminal, stdio on another terminal than the controlling one: refused" "EPERM" \
    "$(cat "$ws/winsz.out" 2>&1)"
is "two different terminals on stdio: refused (125), named" "125 named" "$(on_terminal "$py" -c 'import os, subprocess, sys
m, s = os.openpty()
r = subprocess.run(sys.argv[1:], stdin=s, stderr=subprocess.PIPE)
print(r.returncode, "named" if b"not the one the view has at /dev/console" in r.stderr else r.stderr)' \
    "${helper_ws[@]}" -- true | head -1)"
is "without --private-terminal the controlling terminal keeps its size" "EPERM" \
    "$(on_terminal "${helper_ws[@]}" -- "$py" -c "$winsz_stdin" | head -1)"

# --- the inherited terminal ---------------------------------------------------
# (-T: at a terminal sbx relays a pseudo-terminal of its own otherwise, tty.sh.)
is "the inherited terminal: /dev/console inside, isatty, the command in its foreground" \
    "/dev/console True True kept" "$(on_terminal "$SBX" run -T -p workspace-write -C "$ws" -- "$py" -c 'import os
print(os.ttyname(0), os.isatty(0), os.tcgetpgrp(0) == os.getpgrp())' |
        tr '\n' ' ' | sed 's/  */ /g; s/ $//')"
# Taking it (TIOCSCTTY, arg 1: steal) from a new session inside fails: it is
# the user's session's controlling terminal, and the session keeps it.
is "TIOCSCTTY 1 on the user's terminal from a new session inside: EPERM, the session keeps it" \
    "EPERM kept" "$(on_terminal "$SBX" run -T -p workspace-write -C "$ws" -- "$py" -c 'import errno, fcntl, os, termios
pid = os.fork()
if pid == 0:
    os.setsid()
    try:
        fcntl.ioctl(0, termios.TIOCSCTTY, 1); print("taken", flush=True)
    except OSError as e:
        print(errno.errorcode[e.errno], flush=True)
    os._exit(0)
os.waitpid(pid, 0)' | tr '\n' ' ' | sed 's/  */ /g; s/ $//')"

# --- owners and modes ---------------------------------------------------------
caps=$(run -- grep -E '^Cap(Inh|Prm|Eff|Bnd|Amb)' /proc/self/status </dev/null 2>&1 | awk '{print $2}' | tr '\n' ' ')
if $root; then
    # CAP_CHOWN (0) and CAP_FOWNER (3): 0x9, in every set, across exec.
    is "as root: CAP_CHOWN and CAP_FOWNER, nothing else, in every set" \
        "0000000000000009 0000000000000009 0000000000000009 0000000000000009 0000000000000009 " "$caps"
    is "as root, --minimal: the same" "0000000000000009" \
        "$(run --minimal -- grep -E '^CapEff' /proc/self/status </dev/null 2>&1 | awk '{print $2}')"
    is "as root, external-sandbox (no read-only view): none" "0000000000000000" \
        "$(cd "$ws" && "$SBX" run -p external-sandbox -n limited -- grep -E '^CapEff' /proc/self/status </dev/null 2>&1 |
            awk '{print $2}')"
else
    is "not root: no capability in any set" \
        "0000000000000000 0000000000000000 0000000000000000 0000000000000000 0000000000000000 " "$caps"
fi

# An archive of files owned by uid 1000, one of them setuid.
src=$d/src
mkdir -p "$src/tree"
echo data >"$src/tree/file"
echo suid >"$src/tree/suid"
chmod 4755 "$src/tree/suid"
touch -d 2001-02-03 "$src/tree/file"
tar -C "$src" --owner=1000 --group=1000 -cf "$d/other.tar" tree
tar -C "$src" --owner=1000 --group=1000 -cf "$d/setuid.tar" tree/suid
if $root; then
    owners() { stat -c '%u:%g %a' "$@" | tr '\n' ' ' | sed 's/ $//'; }
    run -- tar xf "$d/other.tar" </dev/null 2>"$d/tar.err"
    is "tar xf exits 2 (the setuid mode it could not set)" 2 $?
    # tar makes the file 0700 first; its chmod 04755 is refused.
    is "as root, tar xf inside: uid 1000's files in the workspace, no setuid bit" "1000:1000 644 1000:1000 700" \
        "$(owners "$ws/tree/file" "$ws/tree/suid")"
    is "tar xf inside: the mtime kept" "2001-02-03" "$(date -r "$ws/tree/file" +%F)"
    ok "tar names the setuid mode it could not set" grep -q "Cannot change mode" "$d/tar.err"
    mkdir "$ws/copy"
    run -- cp -a tree/file copy/ </dev/null
    is "cp -a inside keeps owner, mode and time" "1000:1000 644 2001-02-03" \
        "$(owners "$ws/copy/file") $(date -r "$ws/copy/file" +%F)"
    # dpkg-deb -x of a package with files of uid 1000.
    mkdir -p "$d/pkg/DEBIAN" "$d/pkg/opt/x"
    printf 'Package: x\nVersion: 1\nArchitecture: all\nMaintainer: t <t@t>\nDescription: t\n' >"$d/pkg/DEBIAN/control"
    echo x >"$d/pkg/opt/x/f"
    chown -R 1000:1000 "$d/pkg/opt"
    dpkg-deb -b "$d/pkg" "$d/x.deb" >/dev/null
    run -- dpkg-deb -x "$d/x.deb" deb </dev/null
    is "dpkg-deb -x inside keeps owners" "1000:1000" "$(stat -c %u:%g "$ws/deb/opt/x/f")"

    # Set-user-ID: by chmod, by tar of a setuid file: the bit is absent.
    echo x >"$ws/plain"
    run -- chmod u+s plain </dev/null 2>/dev/null
    is "chmod u+s in the workspace fails, no bit on the host" "644" "$(stat -c %a "$ws/plain")"
    run -- chmod g+s plain </dev/null 2>/dev/null
    is "chmod g+s in the workspace fails, no bit on the host" "644" "$(stat -c %a "$ws/plain")"
    rm -rf "$ws/tree"
    run -- tar xpf "$d/setuid.tar" </dev/null 2>/dev/null
    is "tar xpf of a setuid file: the file is there without the bit" "1000:1000 700" "$(owners "$ws/tree/suid")"
    # chown of a setuid file by a process without CAP_FSETID clears the bit.
    cp "$src/tree/suid" "$ws/was-suid"
    chmod 4755 "$ws/was-suid"
    run -- chown 1000 was-suid </dev/null
    is "chown inside clears a setuid bit (no CAP_FSETID)" "1000:0 755" "$(owners "$ws/was-suid")"
    rm -f "$ws/was-suid"

    # Outside the writable roots nothing changes: EROFS, and a control.
    echo host >"$out/hostname"
    is "control: chown in the workspace works" "ok" "$(run -- sh -c 'chown 1000:1000 plain && echo ok' </dev/null 2>&1)"
    is "chown of a file outside the writable roots: EROFS" "EROFS 0:0 644" "$(run -- "$py" -c 'import errno, os, sys
try:
    os.chown(sys.argv[1], 1000, 1000); print("changed")
except OSError as e:
    print(errno.errorcode[e.errno])' "$out/hostname" </dev/null 2>&1) $(owners "$out/hostname")"
    is "chmod of a file outside the writable roots: EROFS" "EROFS 644" "$(run -- "$py" -c 'import errno, os, sys
try:
    os.chmod(sys.argv[1], 0o666); print("changed")
except OSError as e:
    print(errno.errorcode[e.errno])' "$out/hostname" </dev/null 2>&1) $(stat -c %a "$out/hostname")"
    echo x >"$ws/plain-ro"
    is "chown of a --read-only path in the workspace: EROFS" "EROFS 0:0 644" "$(run --read-only plain-ro -- "$py" -c \
        'import errno, os
try:
    os.chown("plain-ro", 1000, 1000); print("changed")
except OSError as e:
    print(errno.errorcode[e.errno])' </dev/null 2>&1) $(owners "$ws/plain-ro")"
    mkdir -p "$ws/.git"
    echo '[core]' >"$ws/.git/config"
    is "chown of .git/config (protected): EROFS" "EROFS 0:0" "$(run -- "$py" -c 'import errno, os
try:
    os.chown(".git/config", 1000, 1000); print("changed")
except OSError as e:
    print(errno.errorcode[e.errno])' </dev/null 2>&1) $(stat -c %u:%g "$ws/.git/config")"
    # The host's device nodes: the same owner and mode again (no change if it
    # went through), refused.
    for view in "" --minimal; do
        is "chown root /dev/null ${view:-(root view)}: EROFS" "EROFS" "$(run $view -- "$py" -c 'import errno, os
try:
    os.chown("/dev/null", 0, 0); os.chmod("/dev/null", 0o666); print("changed")
except OSError as e:
    print(errno.errorcode[e.errno])' </dev/null 2>&1)"
    done
    is "chown of /proc/self/environ: refused" "EROFS" "$(run -- "$py" -c 'import errno, os
try:
    os.chown("/proc/self/environ", 1000, 1000); print("changed")
except OSError as e:
    print(errno.errorcode[e.errno])' </dev/null 2>&1)"
else
    # Natively too, a user cannot give a file away.
    echo x >"$ws/plain"
    # (EPERM natively; EINVAL inside, where uid 0 is not mapped in the
    # sandbox's user namespace.)
    give='import os
try:
    os.chown("plain", 0, 0); print("changed")
except OSError as e:
    print("refused")'
    is "not root: chown to another uid fails natively" "refused" "$(cd "$ws" && "$py" -c "$give" 2>&1)"
    is "not root: and inside" "refused $(id -u)" "$(run -- "$py" -c "$give" </dev/null 2>&1) $(stat -c %u "$ws/plain")"
    run -- tar xf "$d/other.tar" </dev/null 2>/dev/null
    is "not root: tar xf gives this user's files, as natively" "$(id -u):$(id -g)" "$(stat -c %u:%g "$ws/tree/file")"
fi

done_testing
