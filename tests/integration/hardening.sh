#!/usr/bin/env bash
# The escapes of an outside attack run (issue 13), each checked by its effect
# on the host: IPC objects, files' modes and times, protected names, process
# counts.  Each of these attacks got through the binaries before the fix.
# Runs as root and again as uid 65534 (unprivileged.sh).  The seccomp attacks
# (setuid bits, terminal ioctls) are in enforcement-syscalls.sh, the stopped
# timeout in supervisor.sh.
set -u
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
require_helper
python=/usr/bin/python3
ipc="$python $here/progs/ipc.py"
unprivileged=${SBX_TEST_UNPRIVILEGED:-}

d=$(scratch)
ws=$d/ws
host=$d/host
mkdir -p "$ws" "$host"

# --- 1. IPC: every sandbox has its own SysV IPC and message queues ------------
key=$(( ($$ << 8) + 17 ))
queue=/sbx-test-$$
modes=("-p read-only" "-p workspace-write" "-p external-sandbox -n limited")
for mode in "${modes[@]}"; do
    # shellcheck disable=SC2086  # $mode is two or four words
    run() { "$SBX" run $mode -C "$ws" --stdin null -- "$@"; }
    ok "ipc $mode: the sandbox can use SysV shared memory of its own" run $ipc shm-create "$key"
    not_ok "ipc $mode: a segment made in the sandbox is not the host's" $ipc shm-exists "$key"
    $ipc shm-remove "$key" 2>/dev/null

    $ipc shm-create "$key"
    not_ok "ipc $mode: a host segment is not reachable" run $ipc shm-exists "$key"
    run ipcrm --all=shm >/dev/null 2>&1
    ok "ipc $mode: ipcrm --all=shm inside leaves the host's segment" $ipc shm-exists "$key"
    $ipc shm-remove "$key"

    $ipc mq-create "$queue" && $ipc mq-send "$queue"
    not_ok "ipc $mode: a host message queue cannot be sent to" run $ipc mq-send "$queue"
    not_ok "ipc $mode: nor received from" run $ipc mq-receive "$queue"
    run $ipc mq-unlink "$queue" >/dev/null 2>&1
    ok "ipc $mode: nor removed, and its message is still there" $ipc mq-receive "$queue"
    $ipc mq-unlink "$queue"
    run $ipc mq-create "$queue-inside" >/dev/null 2>&1
    not_ok "ipc $mode: a queue made inside does not outlive the run" $ipc mq-exists "$queue-inside"
    $ipc mq-unlink "$queue-inside" 2>/dev/null
done
if [ -d /dev/mqueue ]; then
    ok "ipc: /dev/mqueue inside shows the sandbox's own queues" \
        "$SBX" run -p read-only -- sh -c "$ipc mq-create /in-$$ 2>/dev/null; test -e /dev/mqueue/in-$$ || exit 1"
else
    skip "ipc: /dev/mqueue inside shows the sandbox's own queues" "the host has no /dev/mqueue"
fi

# --- 3. Protected names where no placeholder can be made ---------------------
w=$d/w555
mkdir "$w"
chmod 555 "$w"
"$SBX" run -p workspace-write -C "$w" -- \
    sh -c 'chmod u+w . && mkdir -p .git/hooks && echo evil > .git/hooks/pre-commit' >/dev/null 2>"$d/err"
rc=$?
if [ -n "$unprivileged" ]; then
    is "0555 root: a protected name the sandbox cannot hold is refused (125)" "125" "$rc"
    is "0555 root: ... with one line and the fix" "1" "$(grep -c '^sbx: .*chmod u+w' "$d/err")"
else
    is "0555 root: root makes its placeholders there, and the command fails" "1" "$rc"
fi
is "0555 root: no .git was created" "" "$(protected_names_in "$w")"
chmod 755 "$w"
if [ -n "$unprivileged" ]; then
    # A root of another user that the command cannot write either: runs.
    ok "a root of another user, which the command cannot change, still runs" \
        "$SBX" run -p workspace-write -w /usr/share -C "$ws" -- true
else
    skip "a root of another user still runs" "needs an unprivileged user"
fi

# --- 6. --limit-procs counts the sandbox's processes, and only them ---------
forks() { "$SBX" run "$@" -- $python "$here/progs/forks.py" 40; }
is "limit-procs 8: the command and 7 children, not 40" "7" "$(forks --limit-procs 8 -p workspace-write -C "$ws")"
is "limit-procs 3 under external-sandbox" "2" "$(forks --limit-procs 3 -p external-sandbox)"
# Other processes of the same user on the machine do not count.
for _ in 1 2 3 4 5 6 7 8 9 10; do sleep 600 & done
is "limit-procs 8 with 10 other processes of this user running" "7" "$(forks --limit-procs 8)"
kill $(jobs -p) 2>/dev/null
wait 2>/dev/null
"$SBX" run -p danger-full-access --limit-procs 3 -- true 2>"$d/err"
is "limits under danger-full-access are refused (125)" "125" "$?"
is "... naming external-sandbox" "1" "$(grep -c 'external-sandbox' "$d/err")"
is "limit-open-files holds: the command cannot raise it" "fail 64" \
    "$("$SBX" run --limit-open-files 64 -- sh -c 'ulimit -n 1024 2>/dev/null && echo raised || echo fail; ulimit -n' | tr '\n' ' ' | sed 's/ $//')"

done_testing
