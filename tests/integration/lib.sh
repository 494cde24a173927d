# Shared helpers for the integration tests (bash, TAP output).
#
# The scripts run real commands through the real sbx and helper, and check
# effects on files, processes and sockets.  Environment, set by meson:
#   SBX                    the sbx executable under test
#   SBX_LINUX_SANDBOX_EXE  the helper under test (sbx honours this variable)
#   SBX_SUPERVISOR         the supervisor's backend: linux or portable
# Sourcing this file gives:
#   ok DESC CMD...         a test that passes when CMD succeeds
#   not_ok DESC CMD...     a test that passes when CMD fails
#   is DESC EXPECTED GOT   a test that passes when the strings are equal
#   todo REASON DESC CMD...  a known, documented hole (TAP TODO; like not_ok)
#   skip DESC REASON       a skipped test
#   scratch                a fresh directory, removed at exit (echoes its path)
#   protected_names_in DIR the default protected names present in DIR (a
#                          placeholder left behind shows here)
#   eventually CMD...      runs CMD until it succeeds; fails after
#                          $SBX_TEST_PATIENCE seconds (default 30)
#   placeholders_gone DIR  DIR holds none of the default protected names
#   tree_pids PID          PID and its descendants (space-separated)
#   tree_tasks PID         the threads of PID and its descendants, counted
#   ended PID              PID has ended: gone, or a zombie (its files, locks
#                          and mounts are released by then)
#   is_placeholder PATH    PATH is a placeholder as the helper makes them on
#                          the host: an empty directory of mode 0000
#   done_testing           prints the plan; exits non-zero if anything failed
# and the probes of the machine below (has_...), for the tests that depend on
# the kernel or the machine.
set -u
_tap_n=0
_tap_failed=0

_tap_result() {  # status desc [diagnostic]
    _tap_n=$((_tap_n + 1))
    if [ "$1" = ok ]; then
        echo "ok $_tap_n - $2"
    else
        _tap_failed=$((_tap_failed + 1))
        echo "not ok $_tap_n - $2"
        [ -n "${3:-}" ] && printf '%s\n' "$3" | sed 's/^/# /'
    fi
    return 0
}

ok() {
    local desc=$1; shift
    local out
    if out=$("$@" 2>&1); then _tap_result ok "$desc"; else _tap_result fail "$desc" "$out"; fi
}

not_ok() {
    local desc=$1; shift
    local out
    if out=$("$@" 2>&1); then _tap_result fail "$desc" "unexpectedly succeeded: $out"; else _tap_result ok "$desc"; fi
}

is() {
    if [ "$2" = "$3" ]; then _tap_result ok "$1"; else _tap_result fail "$1" "expected: $2
got:      $3"; fi
}

# A check of a known, documented hole: reported as TAP "TODO", so it shows
# in every run without failing the suite until the hole is closed.
#   todo REASON DESC CMD...   (passes when CMD fails, like not_ok)
todo() {
    local reason=$1 desc=$2; shift 2
    _tap_n=$((_tap_n + 1))
    if "$@" >/dev/null 2>&1; then
        echo "not ok $_tap_n - $desc # TODO $reason"
    else
        echo "ok $_tap_n - $desc # TODO $reason"
    fi
}

skip() {
    _tap_n=$((_tap_n + 1))
    echo "ok $_tap_n - $1 # SKIP $2"
}

# A bound on time or memory that holds for the optimised build: in a
# sanitized build (SBX_SANITIZER, set by tests/integration/meson.build) it is
# reported as SKIP with the reason, since ASan maps about 80 MiB of shadow
# memory and its dynamically loaded executables start slower.
bound() {
    if [ -n "${SBX_SANITIZER:-}" ]; then skip "$1" "a time or memory bound, not checked under -fsanitize=$SBX_SANITIZER"; else ok "$@"; fi
}

# Every scratch directory lives under one root made here, in the script's own
# shell: `$(scratch)` runs in a subshell, which could not record its result.
_scratch_root=$(mktemp -d "${SBX_TEST_TMP:-/var/tmp}/sbx-test.XXXXXX") || exit 1
chmod 755 "$_scratch_root"

scratch() {
    mktemp -d "$_scratch_root/XXXXXX"
}

# A developer's own configuration never changes a result: sbx reads its user
# config from $XDG_CONFIG_HOME/sbx (none here; config.sh sets its own), and a
# project policy only where a test writes one.  A path below /proc that does
# not exist: no writable root ever holds it (sbx would hold it read-only
# there, adding an entry), and git, which reads $XDG_CONFIG_HOME/git, finds
# nothing there and says nothing, whoever runs it.
export XDG_CONFIG_HOME=/proc/sbx-test-no-config

protected_names_in() {
    (cd "$1" && ls -A | grep -E '^\.(git|sbx|codex|agents|aws)$' || true)
}

placeholders_gone() {
    [ -z "$(protected_names_in "$1")" ]
}

is_placeholder() {
    [ -d "$1" ] && [ ! -L "$1" ] && [ "$(stat -c %a "$1")" = 0 ]
}

# Every wait of the tests goes through here: it waits for a condition, never
# for a time.  The bound only limits how long a failure takes to show: it is
# far above what the slowest loaded machine needs (a sandbox starts in
# milliseconds), so that a pass never depends on the machine's speed.  The
# poll starts at 10 ms and backs off to 100 ms, so a long wait costs no CPU.
eventually() {
    local end=$((SECONDS + ${SBX_TEST_PATIENCE:-30})) nap=0.01
    until "$@"; do
        [ "$SECONDS" -lt "$end" ] || return 1
        sleep "$nap"
        case $nap in 0.01) nap=0.02 ;; 0.02) nap=0.05 ;; *) nap=0.1 ;; esac
    done
}

# PID and all its descendants, from /proc, separated by spaces.
tree_pids() {
    local pids=$1 all=$1 next p
    while [ -n "${pids// /}" ]; do
        next=
        for p in $pids; do next="$next $(cat /proc/"$p"/task/*/children 2>/dev/null)"; done
        pids=$next
        all="$all $next"
    done
    echo $all
}

# The tasks (threads) of PID and of all its descendants, from /proc.
tree_tasks() {
    local p n=0
    for p in $(tree_pids "$1"); do n=$((n + $(ls /proc/"$p"/task 2>/dev/null | wc -l))); done
    echo "$n"
}

ended() {
    local st
    read -r st 2>/dev/null <"/proc/$1/stat" || return 0
    st=${st##*) }
    [ "${st%% *}" = Z ]
}

_cleanup_scratch() {
    chmod -R u+w "$_scratch_root" 2>/dev/null
    rm -rf "$_scratch_root"
}
trap _cleanup_scratch EXIT

done_testing() {
    echo "1..$_tap_n"
    [ "$_tap_failed" -eq 0 ]
}

# Sets $helper to the helper under test, or bails out when there is none;
# then require_user_namespaces (below).
require_helper() {
    helper=${SBX_LINUX_SANDBOX_EXE:-}
    if [ -z "$helper" ] || [ ! -x "$helper" ]; then
        echo "Bail out! SBX_LINUX_SANDBOX_EXE is not an executable helper"
        exit 1
    fi
    require_user_namespaces
}

# A script of sbx learn's: the whole script says SKIP where a learning view
# cannot be made here: no user namespaces (its layer is made in one, as
# root too), or no overlayfs with its layers given by descriptor (Linux 6.8;
# the helper's refusal names it).
require_learning_view() {
    local why out
    if ! why=$(has_user_namespaces); then
        echo "1..0 # SKIP $why"
        exit 0
    fi
    if ! out=$("$SBX" learn -p workspace-write --stdin null -- true 2>&1); then
        case $out in
            *"the kernel needs overlayfs"* | *"(Linux 6.8 or later)"*) echo "1..0 # SKIP no learning view here: $out"; exit 0 ;;
        esac
    fi
}

# Run a command as the unprivileged user 65534 (used by unprivileged.sh).
as_nobody() {
    setpriv --reuid=65534 --regid=65534 --clear-groups --reset-env -- \
        env SBX="$SBX" SBX_LINUX_SANDBOX_EXE="${SBX_LINUX_SANDBOX_EXE:-}" SBX_SUPERVISOR="${SBX_SUPERVISOR:-}" \
        ${CODEX_LINUX_SANDBOX:+"CODEX_LINUX_SANDBOX=$CODEX_LINUX_SANDBOX"} \
        ${CODEX_LINUX_SANDBOX_0171:+"CODEX_LINUX_SANDBOX_0171=$CODEX_LINUX_SANDBOX_0171"} \
        SBX_TEST_UNPRIVILEGED=1 PATH=/usr/local/bin:/usr/bin:/bin HOME=/nonexistent \
        ${SBX_SANITIZER:+"SBX_SANITIZER=$SBX_SANITIZER"} ${ASAN_OPTIONS:+"ASAN_OPTIONS=$ASAN_OPTIONS"} \
        ${UBSAN_OPTIONS:+"UBSAN_OPTIONS=$UBSAN_OPTIONS"} ${SBX_TEST_PATIENCE:+"SBX_TEST_PATIENCE=$SBX_TEST_PATIENCE"} \
        TMPDIR=/tmp "$@"
}

# --- What this kernel and machine offer ---------------------------------------
# A check that depends on the kernel or the machine first asks one of these
# probes, then runs where the feature is there (and fails if sbx breaks it),
# and says SKIP with the probe's reason where it is not:
#     if why=$(has_landlock_abi 6 "signal scoping"); then ...; else skip DESC "$why"; fi
# Each probe looks at the machine itself, never through sbx or its helper (a
# probe through sbx would turn a regression into a SKIP).  It succeeds
# silently, or prints why not and fails.  What sbx itself requires (Landlock,
# seccomp with user notification, pidfds: `sbx doctor` says) is not probed:
# without it every sandbox fails, and so do the tests.

# The kernel's Landlock ABI (0: none): landlock_create_ruleset(NULL, 0,
# LANDLOCK_CREATE_RULESET_VERSION), syscall 444 on every architecture.
landlock_abi() {
    /usr/bin/python3 -c 'import ctypes; print(max(ctypes.CDLL(None).syscall(444, None, 0, 1), 0))'
}

has_landlock_abi() {  # N WHAT: the kernel offers Landlock ABI N or later (for WHAT)
    local abi
    abi=$(landlock_abi)
    [ "${abi:-0}" -ge "$1" ] && return 0
    echo "the kernel's Landlock ABI is ${abi:-unknown}; $2 needs ABI $1"
    return 1
}

has_ipv6_loopback() {  # the host's ::1 can be bound
    local err
    err=$(/usr/bin/python3 -c 'import socket; socket.socket(socket.AF_INET6).bind(("::1", 0))' 2>&1) && return 0
    echo "the host has no IPv6 loopback (binding ::1: ${err##*$'\n'})"
    return 1
}

# A new network namespace, as the sandbox's own under -n limited, has ::1
# once its loopback is up (not where the kernel has no IPv6, or gives new
# namespaces IPv6 disabled).  As root without CAP_SYS_ADMIN, and as another
# user, the namespace is made in a user namespace, as the helper does.
has_netns_ipv6_loopback() {
    local up='import fcntl, socket, struct
s = socket.socket()
flags = struct.unpack("16sh22x", fcntl.ioctl(s, 0x8913, struct.pack("16sh22x", b"lo", 0)))[1]  # SIOCGIFFLAGS
fcntl.ioctl(s, 0x8914, struct.pack("16sh22x", b"lo", flags | 1))  # SIOCSIFFLAGS: IFF_UP
socket.socket(socket.AF_INET6).bind(("::1", 0))' err
    err=$(unshare -n /usr/bin/python3 -c "$up" 2>&1) && return 0
    err=$(unshare -rn /usr/bin/python3 -c "$up" 2>&1) && return 0
    echo "a new network namespace (the sandbox's own under -n limited) has no IPv6 loopback: ${err##*$'\n'}"
    return 1
}

has_dev_shm() {  # /dev/shm is there, and this user can make a file in it
    local f=/dev/shm/sbx-probe-$$-$RANDOM
    if [ -d /dev/shm ] && { : >"$f"; } 2>/dev/null; then
        rm -f "$f"
        return 0
    fi
    [ -d /dev/shm ] && echo "/dev/shm is not writable by uid $(id -u) here" || echo "the host has no /dev/shm"
    return 1
}

# Root's --limit-procs needs a pids cgroup (linux-helper/cgroup.h): the one
# the helper would use is found as it finds it, a child is made and removed
# there, and on cgroup v2 the pids controller must be enabled for the
# children already, or be possible to enable (the kernel refuses it in a
# cgroup that holds processes, except in the root cgroup).
has_pids_cgroup() {
    /usr/bin/python3 - 2>&1 <<'PY'
import os, sys
def read(path):
    try:
        with open(path) as f:
            return f.read()
    except OSError:
        return ""
v2 = v1 = None
for line in read("/proc/self/cgroup").splitlines():
    hid, ctl, path = line.split(":", 2)
    if hid == "0" and not ctl:
        v2 = path
    elif "pids" in ctl.split(","):
        v1 = path
place = None
for line in read("/proc/self/mountinfo").splitlines():
    f = line.split()
    if "-" not in f:
        continue
    dash = f.index("-")
    root, mnt, fstype, opts = f[3], f[4], f[dash + 1], f[dash + 3]
    path = v2 if fstype == "cgroup2" else v1
    if not path:
        continue
    if fstype == "cgroup2" and "pids" not in read(mnt + "/cgroup.controllers").split():
        continue
    if fstype != "cgroup2" and not (fstype == "cgroup" and "pids" in opts.split(",")):
        continue
    if root != "/":
        if not (path == root or path.startswith(root + "/")):
            continue
        path = path[len(root):] or "/"
    place = (mnt + ("" if path == "/" else path), fstype == "cgroup2")
    break
if not place:
    sys.exit("no cgroup hierarchy with the pids controller is mounted")
d, is_v2 = place
probe = "%s/sbx-probe-%d" % (d, os.getpid())
try:
    os.mkdir(probe)
    os.rmdir(probe)
except OSError as e:
    sys.exit("cannot make a cgroup in %s: %s" % (d, e.strerror))
if is_v2 and "pids" not in read(d + "/cgroup.subtree_control").split() and os.path.exists(d + "/cgroup.type"):
    sys.exit("cgroup v2: pids is not enabled for the children of %s (cgroup.subtree_control), and cannot be "
             "while %s holds processes (no controller was delegated to this cgroup)" % (d, d))
PY
}

has_posix_mqueue() {  # POSIX message queues (CONFIG_POSIX_MQUEUE)
    local q=/sbx-probe-$$-$RANDOM err
    err=$(/usr/bin/python3 "$(dirname "${BASH_SOURCE[0]}")/progs/ipc.py" mq-create "$q" 2>&1) || {
        echo "no POSIX message queues here ($err)"
        return 1
    }
    /usr/bin/python3 "$(dirname "${BASH_SOURCE[0]}")/progs/ipc.py" mq-unlink "$q" 2>/dev/null
    return 0
}

# Whether this user (or, with as_nobody, uid 65534: needs root) can make and
# use the namespaces of a sandbox: a user namespace, a mount namespace whose
# mounts it may change (unshare makes them private), pid, IPC and network
# namespaces.  (AppArmor's kernel.apparmor_restrict_unprivileged_userns=1
# lets the user namespace be made, and then refuses the mount.)
has_user_namespaces() {  # [as_nobody]
    local err sysctl settings="" run=() who="uid $(id -u)"
    [ "${1:-}" = as_nobody ] && run=(as_nobody) who="uid 65534"
    err=$("${run[@]}" unshare --user --map-root-user --mount --pid --fork --ipc --net true 2>&1) && return 0
    for sysctl in kernel/apparmor_restrict_unprivileged_userns kernel/unprivileged_userns_clone user/max_user_namespaces; do
        [ -r "/proc/sys/$sysctl" ] && settings="$settings ${sysctl//\//.}=$(cat "/proc/sys/$sysctl")"
    done
    echo "$who cannot make the namespaces of a sandbox here (${err##*$'\n'};$settings)"
    return 1
}

# A script whose checks run sandboxes as this user: where a user other than
# root cannot make the namespaces, sbx refuses its workspace sandboxes (125,
# naming --allow-unprotected: the root run checks that refusal), and every
# check would fail for that one reason: the whole script says SKIP.
require_user_namespaces() {
    [ "$(id -u)" = 0 ] && return 0
    local why
    why=$(has_user_namespaces) && return 0
    echo "1..0 # SKIP $why"
    exit 0
}
