#!/usr/bin/env bash
# Runs side by side: agents start sandboxes in parallel, in workspaces of
# their own that share /tmp and /dev/shm, where the placeholders of the
# protected names (.git, .codex, ...) are shared under flock (mounts.h) and
# the host watch (host_watch.h) stops a run whose covered path the host
# replaces.  A run's end must never look like the host replacing a path to
# another run: before the fix, a run that removed its placeholders had
# dropped its lock while its watch still ran, so a third run could remove and
# remake a shared placeholder under it (exit 125, "host watch: the host
# replaced /tmp/.aws"): 13 and 18 runs of 1000 here (the old helper, this test).
. "$(dirname "$0")/lib.sh"
require_helper

loops=4
runs=${SBX_TEST_CONCURRENT_RUNS:-250}

# One loop: $runs short workspace-write runs in workspace $1, each of which
# must print "ok" and exit 0; prints the failures, one line each.
loop() {
    local ws=$1 i out rc
    for ((i = 0; i < runs; i++)); do
        out=$(cd "$ws" && "$SBX" run -p workspace-write -- sh -c 'echo ok' 2>&1)
        rc=$?
        [ "$rc" = 0 ] && [ "$out" = ok ] || echo "run $i in $ws: exit $rc: $out"
    done
}

result=$(scratch)
chmod 777 "$result"
workspaces=()
for ((l = 0; l < loops; l++)); do
    ws=$(scratch)
    chmod 777 "$ws"
    workspaces+=("$ws")
done
export -f loop
export SBX runs

# As root, half the loops run as uid 65534: a placeholder of another user's
# run is no placeholder of ours, held all the same.
pids=()
for ((l = 0; l < loops; l++)); do
    if [ "$(id -u)" = 0 ] && [ $((l % 2)) = 1 ]; then
        as_nobody env runs="$runs" bash -c "$(declare -f loop); loop ${workspaces[l]}" >"$result/$l" 2>&1 &
    else
        bash -c "loop ${workspaces[l]}" >"$result/$l" 2>&1 &
    fi
    pids+=($!)
done
for pid in "${pids[@]}"; do wait "$pid"; done

failures=$(cat "$result"/* | grep -c '^run ' || true)
is "$((loops * runs)) workspace-write runs in $loops parallel loops sharing /tmp: none fails" 0 "$failures"
[ "$failures" = 0 ] || cat "$result"/* | head -5 | sed 's/^/# /'
for ws in "${workspaces[@]}"; do
    ok "no placeholder is left in $ws" placeholders_gone "$ws"
done

done_testing
