#!/usr/bin/env bash
# The seccomp layer through the real helper (SPEC section 5): cross-process
# calls, io_uring, TIOCSTI/TIOCLINUX, other syscall ABIs and the mount family,
# under every network level.  Each refusal has an unsandboxed control showing
# that the probe works where nothing refuses it.  Also run as uid 65534.
set -u
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"

require_helper
d=$(scratch)
ws=$d/ws
mkdir -p "$ws/mnt"
if ! cc -O1 -o "$d/sys-probe" "$here/progs/sys-probe.c" 2>"$d/cc.log"; then
    echo "Bail out! cannot compile sys-probe.c: $(head -3 "$d/cc.log")"
    exit 1
fi
probe=$d/sys-probe
root=false
[ "$(id -u)" = 0 ] && root=true

sandbox() {  # NETWORK CMD...
    local net=$1; shift
    "$helper" --sandbox-policy-cwd "$ws" \
        --sandbox-policy "{\"mode\":\"workspace-write\",\"network\":\"$net\"}" -- "$@"
}
# Runs CMD with a fresh pseudo-terminal as stdin.
with_pty() {
    /usr/bin/python3 -c 'import os, pty, subprocess, sys
m, s = pty.openpty()
sys.exit(subprocess.run(sys.argv[1:], stdin=s).returncode)' "$@"
}
# A probe that must be refused or killed: exit 159 (SIGSYS) or an errno, never "ok".
refused_or_killed() {  # DESC CMD...
    local desc=$1 out rc; shift
    out=$("$@" 2>&1); rc=$?
    case "$rc:$out" in
        159:*) _tap_result ok "$desc (killed by SIGSYS)" ;;
        0:*|*:ok*) _tap_result fail "$desc" "not refused: rc=$rc $out" ;;
        *) _tap_result ok "$desc (refused: $out)" ;;
    esac
}

# An outside process to attack, and a secret address in it.
sleep 60 &
victim=$!
trap 'kill $victim 2>/dev/null; _cleanup_scratch' EXIT

# Controls, unsandboxed.
is "control: ptrace of a child works" "ok" "$("$probe" ptrace-child 2>&1)"
is "control: process_vm_readv of a child works" "ok" "$("$probe" vmread-child 2>&1)"
is "control: TIOCSTI on /dev/null reaches the tty layer (ENOTTY)" "ENOTTY" "$("$probe" tiocsti 2>&1)"
is "control: TIOCSTI|1<<32 on /dev/null reaches the tty layer (ENOTTY)" "ENOTTY" "$("$probe" tiocsti high 2>&1)"
io_uring_control=$("$probe" io_uring 2>&1)
int80_control=$("$probe" int80 2>&1)
if $root; then
    is "control: as root, TIOCSTI on a terminal works" "ok" "$(with_pty "$probe" tiocsti-stdin 2>&1)"
fi

for net in restricted limited full; do
    out=$(sandbox $net "$probe" ptrace "$victim" 2>&1)
    not_ok "$net: ptrace of an outside process refused ($out)" test "$out" = ok
    is "$net: ptrace of its own child fails with EPERM" "EPERM" "$(sandbox $net "$probe" ptrace-child 2>&1)"
    out=$(sandbox $net "$probe" vmread "$victim" 1000 2>&1)
    not_ok "$net: process_vm_readv of an outside process refused ($out)" test "$out" = ok
    is "$net: process_vm_readv of its own child fails with EPERM" "EPERM" "$(sandbox $net "$probe" vmread-child 2>&1)"
    is "$net: io_uring_setup fails with EPERM" "EPERM" "$(sandbox $net "$probe" io_uring 2>&1)"
    is "$net: TIOCSTI fails with EPERM" "EPERM" "$(sandbox $net "$probe" tiocsti 2>&1)"
    is "$net: TIOCSTI|1<<32 fails with EPERM" "EPERM" "$(sandbox $net "$probe" tiocsti high 2>&1)"
    is "$net: TIOCSTI on a terminal fails with EPERM" "EPERM" "$(with_pty "$helper" --sandbox-policy-cwd "$ws" \
        --sandbox-policy "{\"mode\":\"workspace-write\",\"network\":\"$net\"}" -- "$probe" tiocsti-stdin 2>&1)"
    is "$net: TIOCSTI|1<<32 on a terminal fails with EPERM" "EPERM" "$(with_pty "$helper" --sandbox-policy-cwd "$ws" \
        --sandbox-policy "{\"mode\":\"workspace-write\",\"network\":\"$net\"}" -- "$probe" tiocsti-stdin high 2>&1)"
    refused_or_killed "$net: i386 int 0x80 getpid" sandbox $net "$probe" int80
    refused_or_killed "$net: x32 getpid" sandbox $net "$probe" x32
    is "$net: mount of a tmpfs in the workspace fails with EPERM" "EPERM" "$(sandbox $net "$probe" mount "$ws/mnt" 2>&1)"
    is "$net: umount of / fails with EPERM" "EPERM" "$(sandbox $net "$probe" umount / 2>&1)"
done
case $io_uring_control in
    ok) ok "control: io_uring_setup works unsandboxed (so EPERM above is the sandbox's)" true ;;
    *) skip "control: io_uring_setup unsandboxed" "io_uring is off on this host: $io_uring_control" ;;
esac
case $int80_control in
    ok*) ok "control: int 0x80 works unsandboxed (so the refusal above is the sandbox's)" true ;;
    *) skip "control: int 0x80 unsandboxed" "no i386 emulation on this kernel: $int80_control" ;;
esac
# Nothing was mounted on the host.
is "the workspace's mnt stayed an empty directory" "" "$(ls -A "$ws/mnt")"

# The same through sbx run, where it is built.
if [ -n "${SBX:-}" ] && [ -x "$SBX" ] && "$SBX" run -p workspace-write -- true >/dev/null 2>&1; then
    is "sbx run: TIOCSTI|1<<32 fails with EPERM" "EPERM" \
        "$(cd "$ws" && "$SBX" run -p workspace-write -- "$probe" tiocsti high 2>&1)"
    is "sbx run: io_uring_setup fails with EPERM" "EPERM" \
        "$(cd "$ws" && "$SBX" run -p read-only -- "$probe" io_uring 2>&1)"
    refused_or_killed "sbx run: i386 int 0x80 getpid" "$SBX" run -p read-only -- "$probe" int80
else
    skip "sbx run: the same checks" "sbx run is not usable here"
fi

done_testing
