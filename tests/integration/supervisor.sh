#!/usr/bin/env bash
# The supervisor through `sbx run`: exit codes, caps, binary and 1 GiB output,
# the timeout that kills a setsid grandchild, signals sent to sbx, the drain
# after exit, the environment, -C, --stdin, --json, --events, --dry-run and the
# denial note, and a reader that stops reading (a pipe, a terminal after ^S).
# Real processes; the checks look at pids, files and bytes.
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
require_helper

d=$(scratch)
full=(-p danger-full-access)

now_ms() { echo $(( $(date +%s%N) / 1000000 )); }
# Dead: no such process, or a zombie.  Without a subreaper (the portable
# backend, -Dsupervisor=portable, what macOS runs) a descendant that sbx
# killed after its parent died was adopted by pid 1, which reaps it in its own
# time (launchd at once; some containers' init never).
gone() { ! kill -0 "$1" 2>/dev/null || [ "$(ps -o stat= -p "$1" 2>/dev/null | cut -c1)" = Z ]; }
wait_for_file() { eventually test -s "$1"; }
# No process whose command line names $1 is left (sbx, the helper, the command).
none_names() { ! pgrep -f "$1" >/dev/null; }
# Timing checks are one-sided or generous: a deadline is never early (a lower
# bound holds on any machine), and an upper bound is set where only the
# failure it guards against could reach it (a command's own sleep of 100 s, a
# job left stopped for good), far above what any load adds to a run.

# --- exit codes ---------------------------------------------------------
"$SBX" run "${full[@]}" -- sh -c 'exit 3'; is "the command's own status" 3 $?
"$SBX" run "${full[@]}" -- sh -c 'kill -USR1 $$'; is "killed by SIGUSR1: 128+10" 138 $?
"$SBX" run "${full[@]}" -t 200ms -- sleep 5 2>/dev/null; is "timeout: 124" 124 $?
"$SBX" run "${full[@]}" -- sbx-no-such-command-xyz 2>"$d/err"; is "not found: 127" 127 $?
ok "not found names the command" grep -q "sbx: cannot run 'sbx-no-such-command-xyz': No such file" "$d/err"
printf '#!/bin/sh\necho ran\n' >"$d/noexec"; chmod 644 "$d/noexec"
out=$("$SBX" run "${full[@]}" -- "$d/noexec" 2>/dev/null); is "not executable: 126" 126 $?
is "a non-executable file does not run" "" "$out"
"$SBX" run -p read-only -- sh -c 'exit 5'; is "sandboxed: the command's own status" 5 $?

# --- caps ------------------------------------------------------------------
# By default every byte reaches sbx's streams; --cap-live caps them too.
# (--keep head here; the head and the tail, and the note's text: output.sh)
out=$("$SBX" run "${full[@]}" --cap-live --keep head --max-output-bytes 10 -- printf '0123456789ABCDEF' 2>"$d/err")
is "byte cap: exactly 10 bytes" "0123456789" "$out"
is "byte cap: the omission note" "sbx: stdout: omitted 6 bytes (no whole line) here; to see all output run without --cap-live" "$(cat "$d/err")"
"$SBX" run "${full[@]}" --cap-live --keep head --max-output-lines 5 -- seq 1 1000 >"$d/out" 2>"$d/err"
is "line cap: exactly 5 lines" "$(seq 1 5)" "$(cat "$d/out")"
is "line cap: the omission note" "sbx: stdout: omitted 995 lines (3883 bytes) here; to see all output run without --cap-live" "$(cat "$d/err")"
"$SBX" run "${full[@]}" --cap-live --max-output-lines 3 -- printf 'a\nb\nc' >"$d/out" 2>"$d/err"
is "partial last line within the line cap is shown" "$(printf 'a\nb\nc' | od -c)" "$(od -c <"$d/out")"
is "  and nothing is reported truncated" "" "$(cat "$d/err")"
"$SBX" run "${full[@]}" --cap-live --keep head --max-output-lines 2 --max-output-bytes 5 -- printf 'ab\ncdefgh\nij' >"$d/out" 2>"$d/err"
is "a partial line cut by the byte cap counts as a line" "ab
cd" "$(cat "$d/out")"
is "  the note" "sbx: stdout: omitted 1 line (7 bytes) here; to see all output run without --cap-live" "$(cat "$d/err")"
"$SBX" run "${full[@]}" -- sh -c 'seq 1 100000; seq 1 100000 >&2' >"$d/out" 2>"$d/err"
is "by default every line: 100000 on stdout, 100000 on stderr" "100000 100000" "$(wc -l <"$d/out") $(wc -l <"$d/err")"
"$SBX" run "${full[@]}" --cap-live -- sh -c 'seq 1 100000; seq 1 100000 >&2' >"$d/out" 2>"$d/err"
is "--cap-live, default caps: 256 lines on stdout" 256 "$(wc -l <"$d/out")"
ok "--cap-live, default caps: each stream has its note" grep -qx "sbx: stderr: omitted 99744 lines ($(seq 1 100000 | sed -n 129,99872p | wc -c) bytes) here; to see all output run without --cap-live" "$d/err"
is "--cap-live, default caps: stderr shows 256 lines plus the two notes" 258 "$(wc -l <"$d/err")"
"$SBX" run "${full[@]}" -- sh -c 'head -c 20000 /dev/zero | tr "\0" x' >"$d/out" 2>/dev/null
is "by default every byte: 20000" 20000 "$(wc -c <"$d/out")"
"$SBX" run "${full[@]}" --cap-live -- sh -c 'head -c 20000 /dev/zero | tr "\0" x' >"$d/out" 2>/dev/null
is "--cap-live, default byte cap: 10240 bytes" 10240 "$(wc -c <"$d/out")"

# --- binary output ----------------------------------------------------------
head -c 300000 /dev/urandom >"$d/bin"
"$SBX" run "${full[@]}" -- cat "$d/bin" >"$d/bin.out"
ok "binary output passes byte for byte" cmp "$d/bin" "$d/bin.out"
"$SBX" run "${full[@]}" --cap-live --keep head --max-output-bytes 1000 --max-output-lines 0 -- cat "$d/bin" >"$d/bin.out" 2>/dev/null
ok "binary output is cut at exactly 1000 bytes" cmp "$d/bin.out" <(head -c 1000 "$d/bin")
"$SBX" run "${full[@]}" -- cat "$d/bin" | cat >"$d/bin.out"
ok "binary output through a pipe" cmp "$d/bin" "$d/bin.out"
"$SBX" run -p read-only -- cat "$d/bin" | cat >"$d/bin.out"
ok "  sandboxed (read and written by sbx)" cmp "$d/bin" "$d/bin.out"

# --- a reader that goes away ---------------------------------------------------
timeout 10 "$SBX" run "${full[@]}" -- yes 2>/dev/null | head -1 >/dev/null
is "sbx's reader exits: the command gets SIGPIPE (141)" 141 "${PIPESTATUS[0]}"
timeout 10 "$SBX" run -p read-only -- yes 2>/dev/null | head -1 >/dev/null
is "  sandboxed, sbx writing what it read (141)" 141 "${PIPESTATUS[0]}"
timeout 10 "$SBX" run "${full[@]}" --cap-live -- yes 2>/dev/null | head -1 >/dev/null
is "  --cap-live, past the cap (141)" 141 "${PIPESTATUS[0]}"

# --- 1 GiB ------------------------------------------------------------------
if [ -x /usr/bin/time ]; then
    /usr/bin/time -v -o "$d/time" "$SBX" run "${full[@]}" --json -- head -c 1G /dev/zero >"$d/json"
    rss=$(awk -F': ' '/Maximum resident/ {print $2}' "$d/time")
    is "1 GiB with --json: every byte counted" 1073741824 "$(jq .stdout_bytes "$d/json")"
    is "1 GiB with --json: 10240 bytes kept" 10240 "$(jq -j .stdout "$d/json" | wc -c)"
    bound "1 GiB with --json: peak RSS ${rss} KiB < 8 MiB" test "$rss" -lt 8192
    /usr/bin/time -v -o "$d/time" "$SBX" run "${full[@]}" -- head -c 1G /dev/zero | wc -c >"$d/count"
    rss=$(awk -F': ' '/Maximum resident/ {print $2}' "$d/time")
    is "1 GiB through a pipe: every byte arrives" 1073741824 "$(cat "$d/count")"
    bound "1 GiB: peak RSS ${rss} KiB < 8 MiB" test "$rss" -lt 8192
    /usr/bin/time -v -o "$d/time" "$SBX" run -p read-only -- head -c 1G /dev/zero 2>"$d/err" | wc -c >"$d/count"
    rss=$(awk -F': ' '/Maximum resident/ {print $2}' "$d/time")
    is "1 GiB sandboxed (read and written by sbx) through a pipe: every byte arrives" 1073741824 "$(cat "$d/count")"
    bound "1 GiB sandboxed: peak RSS ${rss} KiB < 8 MiB" test "$rss" -lt 8192
    /usr/bin/time -v -o "$d/time" "$SBX" run -p read-only --cap-live -- head -c 1G /dev/zero >"$d/out" 2>"$d/err"
    rss=$(awk -F': ' '/Maximum resident/ {print $2}' "$d/time")
    bound "1 GiB sandboxed, --cap-live: peak RSS ${rss} KiB < 8 MiB" test "$rss" -lt 8192
    ok "  the note counts every byte" grep -q "omitted 1073731584 bytes" "$d/err"
else
    skip "1 GiB RSS" "/usr/bin/time is not installed"
fi

# --- timeout kills the whole tree -------------------------------------------
rm -f "$d/gc"
t0=$(now_ms)
"$SBX" run "${full[@]}" -t 500ms -- sh -c \
    "setsid sh -c 'trap \"\" TERM; echo \$\$ > $d/gc; exec sleep 100' & sleep 100" >/dev/null 2>&1
rc=$?
elapsed=$(( $(now_ms) - t0 ))
is "timeout with a setsid grandchild: 124" 124 $rc
ok "timeout: sbx returned ${elapsed} ms after start (deadline 500 ms; the command alone takes 100 s)" \
    test "$elapsed" -ge 500 -a "$elapsed" -lt 20000
gc=$(cat "$d/gc")
ok "timeout: the setsid grandchild ($gc) that ignores SIGTERM is gone" gone "$gc"

rm -f "$d/gc"
t0=$(now_ms)
"$SBX" run -p read-only -t 500ms -- sh -c \
    "setsid sh -c 'trap \"\" TERM; while :; do sleep 1; done' & echo \$! > /dev/null; sleep 100" >/dev/null 2>&1
rc=$?
elapsed=$(( $(now_ms) - t0 ))
is "sandboxed timeout: 124" 124 $rc
ok "sandboxed timeout: sbx returned ${elapsed} ms after start (deadline 500 ms; the command alone takes 100 s)" \
    test "$elapsed" -ge 500 -a "$elapsed" -lt 20000

# --- issue 29: external-sandbox's command cannot signal sbx ----------------------
# Without namespaces (external-sandbox with -n restricted or full) the command
# is sbx's own child, of the same user: SIGKILL to sbx would end its timeout
# and leave the command's processes behind.  Landlock's signal scope (ABI 6,
# Linux 6.12) refuses it (EPERM), so sbx reports as usual and its timeout
# still kills everything; below ABI 6 the helper gives external-sandbox a pid
# namespace instead, where sbx is not there to be signalled (ESRCH).  The
# command is told sbx's pid in a file (sbx is exec'd by the shell that wrote
# its own pid); under Landlock it is the command's parent too ($PPID).
landlock_abi=$(python3 -c 'import ctypes; print(max(ctypes.CDLL(None).syscall(444, None, 0, 1), 0))')
userns=yes
[ "$(id -u)" = 0 ] || unshare -U true 2>/dev/null || userns=no
no_landlock=(python3 "$here/progs/no-landlock.py")
# as_sbx PIDFILE CMD...: CMD (which execs sbx) with its pid in PIDFILE.
as_sbx() { sh -c 'echo $$ > "$1"; shift; exec "$@"' sh "$@"; }
kill_sbx='import errno, os, signal, sys
pid = int(open(sys.argv[1]).read())
try:
    os.kill(pid, signal.SIGKILL)
    print("killed", end="")
except OSError as e:
    print(errno.errorcode[e.errno], end="")
print(" parent" if os.getppid() == pid else "")'
# A grandchild in a session of its own that ignores SIGTERM; then SIGKILL to
# sbx; then a sleep for the timeout.  (The grandchild is found by its unique
# command line: in a pid namespace its own pid is not the host's.)
grandchild="sleep 100.$$"
setsid_then_kill="setsid sh -c 'trap \"\" TERM; : > $d/gc; exec $grandchild' </dev/null >/dev/null 2>&1 &
    while [ ! -e $d/gc ]; do sleep 0.01; done; kill -9 \$(cat $d/sbx.pid); exec sleep 100"
# scoped LABEL EXPECTED [WRAPPER...]: the two checks under external-sandbox.
scoped() {
    local label=$1 expected=$2 rc net
    shift 2
    for net in restricted full; do
        out=$(as_sbx "$d/sbx.pid" "$@" "$SBX" run -p external-sandbox -n $net -t 30s -- \
            python3 -c "$kill_sbx" "$d/sbx.pid" 2>&1)
        is "$label, -n $net: SIGKILL to sbx from the command fails; sbx reports the command's status" \
            "$expected 0" "$out $?"
    done
    rm -f "$d/gc"
    as_sbx "$d/sbx.pid" "$@" "$SBX" run -p external-sandbox -t 1s -- sh -c "$setsid_then_kill" >/dev/null 2>&1
    rc=$?
    is "$label, -t 1s: a command that tried to SIGKILL sbx times out as usual (124)" 124 $rc
    ok "$label, -t 1s: its setsid grandchild that ignores SIGTERM did not outlive the timeout" \
        test -e "$d/gc" -a -z "$(pgrep -f "^$grandchild\$")"
}
if [ "$landlock_abi" -ge 6 ]; then
    scoped "external-sandbox (Landlock ABI $landlock_abi: its signal scope)" "EPERM parent"
elif [ "$userns" = yes ]; then
    scoped "external-sandbox (Landlock ABI $landlock_abi: a pid namespace)" "ESRCH"
else
    skip "external-sandbox: the signal scope" "Landlock ABI $landlock_abi (below 6) and no user namespaces: the helper refuses"
fi
# Below ABI 6, as on this kernel with Landlock hidden by a seccomp filter.
if [ "$userns" = yes ]; then
    scoped "external-sandbox without Landlock (a pid namespace)" "ESRCH" "${no_landlock[@]}"
else
    skip "external-sandbox without Landlock: a pid namespace" "no user namespaces for this user"
fi
# Below ABI 6 with no namespace either (both hidden by the filter): refused,
# unless --allow-unprotected, which runs without the scope and says so.
rm -f "$d/ran"
out=$("${no_landlock[@]}" --no-userns "$SBX" run -p external-sandbox -- touch "$d/ran" 2>&1)
is "external-sandbox without Landlock nor namespaces: refused (125), nothing ran" "125 no" \
    "$? $([ -e "$d/ran" ] && echo yes || echo no)"
ok "external-sandbox without Landlock nor namespaces: the line names the fixes" grep -q \
    "^sbx: the sandbox could not be applied: namespaces: Landlock below ABI 6 cannot scope signals .*; use Linux 6.12 or later (Landlock ABI 6), .*, or pass --allow-unprotected to run without the signal scope\$" \
    <<<"$out"
out=$("${no_landlock[@]}" --no-userns "$SBX" run --json --allow-unprotected -p external-sandbox -- true)
is "... with --allow-unprotected it runs, and the result says what is not enforced" \
    '0 ["signal scope (the command can signal processes outside the sandbox)"]' \
    "$(jq -c '.exit_code, .not_enforced' <<<"$out" | tr '\n' ' ' | sed 's/ $//')"

# --- a reader that stops reading does not hold off the deadline ----------------
# sbx writes to its stdout pipe without blocking: the command is killed at its
# deadline while the reader does not read, and what it showed still arrives
# after.  The command prints y's and leaves the time in $d/hb every 50 ms
# from a heartbeat loop (a process whose command line starts "sh -c" and
# names $d/hb; sbx's and the helper's name it too, but start otherwise).
beating_yes="while :; do date +%s%N >$d/hb.t; mv $d/hb.t $d/hb; sleep 0.05; done & exec yes"
beat_ended() { [ -e "$d/hb" ] && ! pgrep -f "^sh -c .*$d/hb" >/dev/null; }
stalled_reader() {  # label, sbx options...
    local label=$1; shift
    rm -f "$d/hb" "$d/hb.t"
    # The reader reads nothing until the heartbeat has ended (or it gives up).
    { "$SBX" run "$@" --no-output-cap -t 1s -- sh -c "$beating_yes" 2>/dev/null
      echo $? >"$d/stalled.rc"; } |
        { if eventually beat_ended; then echo yes; else echo no; fi >"$d/beat-ended"
          head -c 100000 >"$d/stalled.out"; cat >/dev/null; }
    is "$label: timeout 124 with a sleeping reader" 124 "$(cat "$d/stalled.rc")"
    is "$label: the command and its heartbeat died while the reader read nothing" yes "$(cat "$d/beat-ended")"
    if [ "$label" = "unsandboxed, handed over" ]; then
        # The command wrote to the reader's pipe itself: what the pipe held.
        ok "$label: the pipe's worth reached the reader ($(wc -c <"$d/stalled.out") bytes)" \
            test "$(wc -c <"$d/stalled.out")" -ge 4096 -a "$(tr -d 'y\n' <"$d/stalled.out" | wc -c)" = 0
    elif [ "$label" = events ]; then
        is "$label: the event lines reached the reader once it read (bytes, the first)" "100000 begin" \
            "$(wc -c <"$d/stalled.out") $(head -1 "$d/stalled.out" | jq -r .type)"
    else
        is "$label: the output reached the reader once it read (bytes, bytes not yes's)" "100000 0" \
            "$(wc -c <"$d/stalled.out") $(tr -d 'y\n' <"$d/stalled.out" | wc -c)"
    fi
}
stalled_reader "unsandboxed, handed over" "${full[@]}"
stalled_reader "sandboxed, read and written" -p workspace-write -C "$d"
stalled_reader events -p workspace-write -C "$d" --events
# A terminal stopped with ^S, and ^Q 5 s later: the heartbeat's last beat
# came before the ^Q (typed no sooner than 5.1 s after t0), so the command
# died while the terminal was stopped.
rm -f "$d/hb" "$d/hb.t"
t0=$(now_ms)
python3 "$here/progs/pty-run.py" - '\x13' 5 '\x11' -- \
    "$SBX" run "${full[@]}" --no-output-cap -t 1s -- sh -c "$beating_yes" >/dev/null
is "a terminal stopped with ^S: timeout 124" 124 $?
last=$(cat "$d/hb" 2>/dev/null)
ok "a terminal stopped with ^S: the command's last sign of life came before the ^Q ($(( ${last:-0} / 1000000 - t0 )) ms)" \
    test -n "$last" -a $(( ${last:-0} / 1000000 - t0 )) -lt 5000
# SIGTERM sent to sbx reaches the command while the reader does not read
# (it reads only once the command had it, or gives up).
for policy in danger-full-access workspace-write; do
    rm -f "$d/term" "$d/sbx.pid" "$d/ready"
    { "$SBX" run -p "$policy" -C "$d" --no-output-cap -- \
          sh -c "trap 'echo got >$d/term; exit 3' TERM; touch $d/ready; yes & wait" 2>/dev/null &
      echo $! >"$d/sbx.pid"; wait $!; echo $? >"$d/term.rc"; } |
        { if eventually test -s "$d/term"; then echo yes; else echo no; fi >"$d/term.first"
          head -c 100000 >/dev/null; cat >/dev/null; } &
    wait_for_file "$d/sbx.pid"; eventually test -e "$d/ready"
    kill -TERM "$(cat "$d/sbx.pid")"
    wait
    is "$policy, SIGTERM to sbx while the reader does not read: the command had it" yes "$(cat "$d/term.first")"
    is "$policy, SIGTERM to sbx while the reader sleeps: the command's own status" 3 "$(cat "$d/term.rc")"
done

t0=$(now_ms)
"$SBX" run "${full[@]}" -t 0.3 -- sleep 5 2>"$d/err"
rc=$?
elapsed=$(( $(now_ms) - t0 ))
is "-t 0.3 (bare seconds): 124" 124 $rc
# Never before 300 ms; and under 3 s, the nearest wrong reading of "0.3"
# (the command alone takes 5 s): a bound no load comes near.
ok "-t 0.3: returned after ${elapsed} ms (300 ms, not 3 s)" test "$elapsed" -ge 300 -a "$elapsed" -lt 3000
is "-t: the note" "sbx: timed out after 300ms: every process of the command was killed" "$(cat "$d/err")"
out=$("$SBX" run "${full[@]}" --json -t 300ms -- sh -c 'echo before; sleep 10')
is "timeout in JSON: timed_out, exit_code, signal" "true 124 9 before" \
    "$(jq -r '"\(.timed_out) \(.exit_code) \(.signal) \(.stdout)"' <<<"$out" | tr -d '\n')"

# --- the deadline holds while sbx or the command is stopped ---------------------
# A command that stops itself stops sbx's whole job when run from an
# interactive shell (job control, so that the shell prompts again), and
# anyone may SIGSTOP sbx itself.  The deadline is wall-clock all the same: at
# it every process of the command dies, stopped ones included, and sbx exits
# 124.  The command leaves a process that writes $d/late after 30 s; once no
# process of the command is left, $d/late can no longer appear.
late_writer="(sleep 30; touch '$d/late') &"
# selfstop LABEL POLICY SCRIPT: from an interactive shell (progs/pty-job.py),
# sbx run -t 1s runs SCRIPT, which stops its job; the shell prompts, then
# tells of the job's end (124) by itself (not before the deadline; the bound
# is pty-job.py's own 10 s, after which it would have given up on a job left
# stopped), the session is left with the shell alone, and the background
# writer never wrote.
selfstop() {
    local label=$1 policy=$2 script=$3 out ms
    rm -f "$d/ready" "$d/late"
    out=$(cd "$d" && python3 "$here/progs/pty-job.py" selfstop "$d/ready" -- \
        "$SBX" run -t 1s -p "$policy" -- sh -c "touch '$d/ready'; $late_writer $script")
    ms=$(sed -n 's/^ms=//p' <<<"$out")
    is "$policy, -t 1s, $label in a shell: the steps the shell confirmed" \
        "stopped exit=124 alone alive" "$(echo $(grep -v '^ms=' <<<"$out"))"
    ok "$policy, -t 1s, $label in a shell: the job ended ${ms:-never} ms after it was typed" \
        test -n "$ms" -a "${ms:-0}" -ge 1000 -a "${ms:-0}" -lt 10000
    ok "$policy, -t 1s, $label in a shell: its background process never wrote" test ! -e "$d/late"
}
for policy in danger-full-access workspace-write; do
    selfstop "the command stops its job" "$policy" 'kill -STOP $$'
    # SIGSTOP to sbx itself (its pid is the command's parent, unsandboxed):
    # the job stops and the shell takes the terminal; sbx, ending in the
    # background, leaves it to the shell.
    [ "$policy" = danger-full-access ] && selfstop "SIGSTOP to sbx" "$policy" 'kill -STOP $PPID; exec sleep 5'
    # Without a terminal: SIGSTOP to sbx once the command runs.
    rm -f "$d/ready" "$d/late"
    t0=$(now_ms)
    "$SBX" run -t 1s -p "$policy" -C "$d" -- sh -c "echo x > '$d/ready'; $late_writer exec sleep 5" \
        </dev/null >/dev/null 2>&1 &
    sbx_pid=$!
    wait_for_file "$d/ready"
    kill -STOP "$sbx_pid"
    if eventually ended "$sbx_pid"; then by_itself=yes; else by_itself=no; fi
    elapsed=$(( $(now_ms) - t0 ))
    kill -CONT "$sbx_pid" 2>/dev/null  # the old behaviour: it waited for this
    wait "$sbx_pid"
    is "$policy, -t 1s, SIGSTOP to sbx: 124" 124 $?
    is "$policy, -t 1s, SIGSTOP to sbx: it ended by itself, still stopped by us (${elapsed} ms after start)" \
        yes "$by_itself"
    ok "$policy, -t 1s, SIGSTOP to sbx: ... not before its deadline" test "$elapsed" -ge 1000
    ok "$policy, -t 1s, SIGSTOP to sbx: no process of the command is left" eventually none_names "$d/late"
    ok "$policy, -t 1s, SIGSTOP to sbx: the command's background process never wrote" test ! -e "$d/late"
done
# The 2 s drain after the command exits holds too while sbx is stopped.
rm -f "$d/ready" "$d/bg"
t0=$(now_ms)
"$SBX" run "${full[@]}" -- sh -c "sh -c 'echo \$\$ > $d/bg; exec sleep 100' & echo \$\$ > $d/ready" \
    </dev/null >/dev/null 2>&1 &
sbx_pid=$!
wait_for_file "$d/ready"; wait_for_file "$d/bg"
eventually gone "$(cat "$d/ready")"  # sbx has waited for the command: it drains
kill -STOP "$sbx_pid"
if eventually ended "$sbx_pid"; then by_itself=yes; else by_itself=no; fi
elapsed=$(( $(now_ms) - t0 ))
kill -CONT "$sbx_pid" 2>/dev/null
wait "$sbx_pid"
is "drain, SIGSTOP to sbx: the command's status" 0 $?
is "drain, SIGSTOP to sbx: it ended by itself, still stopped by us (${elapsed} ms after start)" yes "$by_itself"
ok "drain, SIGSTOP to sbx: ... not before the 2 s drain for the pipe holder" test "$elapsed" -ge 2000
ok "drain, SIGSTOP to sbx: the background process that held the pipes is gone" eventually gone "$(cat "$d/bg")"

# --- signals sent to sbx are forwarded, once each ------------------------------
# A background job of a script starts with SIGINT and SIGQUIT ignored, and
# under nohup SIGHUP is ignored too: env --default-signal restores them all,
# as in an interactive shell (an ignored signal never reaches sbx).
# Sandboxed, the helper and its pid 1 stand between sbx and the command: each
# signal must still reach the command exactly once (sbx signals the helper
# alone, pid 1 forwards to the command's group).
if cc -O1 -o "$d/sig-count" "$here/progs/sig-count.c" 2>"$d/cc.log"; then
    # external-sandbox: the helper becomes the command (no pid 1 of its own).
    for policy in danger-full-access workspace-write external-sandbox; do
        for sig in TERM HUP INT QUIT; do
            rm -f "$d/ready" "$d/got"
            (cd "$d" && env --default-signal=INT,QUIT,HUP,TERM "$SBX" run -t 30s -p "$policy" -- \
                ./sig-count ready got) &
            sbx_pid=$!
            wait_for_file "$d/ready"
            kill -"$sig" "$sbx_pid"
            wait "$sbx_pid"
            is "$policy, SIG$sig to sbx: the command's own status after its handler" 7 $?
            is "$policy, SIG$sig to sbx: the command got it once" "$sig 1" "$(cat "$d/got" 2>/dev/null)"
        done
    done
    rm -f "$d/ready" "$d/got"
    (cd "$d" && "$helper" --sandbox-policy-cwd "$d" --sandbox-policy '{"type":"workspace-write"}' -- \
        ./sig-count ready got) &
    helper_pid=$!
    wait_for_file "$d/ready"
    kill -TERM "$helper_pid"
    wait "$helper_pid"
    is "SIGTERM to the helper itself: the command got it once" "TERM 1" "$(cat "$d/got" 2>/dev/null)"
    rm -f "$d/ready" "$d/got"
    (cd "$d" && exec setsid "$helper" --sandbox-policy-cwd "$d" --sandbox-policy '{"type":"workspace-write"}' -- \
        ./sig-count ready got) &
    helper_pid=$!
    wait_for_file "$d/ready"
    kill -TERM -- -"$helper_pid"
    wait "$helper_pid"
    is "SIGTERM to the helper's process group: the command got it once" "TERM 1" "$(cat "$d/got" 2>/dev/null)"
    # From a terminal: ^C reaches the sandboxed command once (the terminal's
    # foreground is the command's own group), and reading the terminal works.
    rm -f "$d/ready" "$d/got"
    (cd "$d" && python3 "$here/progs/pty-run.py" "$d/ready" '\x03' -- \
        "$SBX" run -t 30s -p workspace-write -- ./sig-count ready got) >/dev/null
    is "sandboxed, ^C on the terminal: the command's own status" 7 $?
    is "sandboxed, ^C on the terminal: the command got SIGINT once" "INT 1" "$(cat "$d/got" 2>/dev/null)"
    out=$(cd "$d" && python3 "$here/progs/pty-run.py" - 'hello\n' -- \
        "$SBX" run -t 30s -p workspace-write -- sh -c 'read line; echo "read: $line"')
    is "sandboxed, reading the terminal: exit status" 0 $?
    ok "sandboxed, reading the terminal: the command read the line" grep -q 'read: hello' <<<"$out"
    # Job control from an interactive shell (progs/pty-job.py), on the
    # user's terminal itself (-T: no relay; the relay's job control is
    # tty.sh's): ^Z stops the job and the shell prompts again; then
    #   fg:     the command gets the terminal back and reads the line typed;
    #   bg:     it goes on without the terminal, which the shell keeps (sbx
    #           does not take it back when the command ends);
    #   bgread: it reads the terminal in the background and stops again,
    #           without taking the terminal from the shell; fg, then as fg;
    #   background: started with &, no ^Z: as bgread after its bg;
    #   fgnow:  started with &, fg before it reads the terminal: as fg.
    # job LABEL MODE STEPS WROTE -- CMD...: one session, checked by the
    # steps the shell confirmed and by what the command wrote to typed.
    job() {
        local label=$1 mode=$2 steps=$3 wrote=$4
        shift 5
        rm -f "$d/ready" "$d/typed"
        out=$(cd "$d" && python3 "$here/progs/pty-job.py" "$mode" "$d/ready" -- "$@")
        is "$label, job control, $mode: the steps the shell confirmed" "$steps" "$(echo $out)"
        is "$label, job control, $mode: what the command wrote" "$wrote" "$(cat "$d/typed" 2>/dev/null)"
    }
    # The command's script for a mode, and what the shell and it should show.
    # After it has made ready, the command forks nothing until it has been
    # stopped and continued: dash starts a command with vfork, and a ^Z that
    # lands between a vfork and its exec stops the child while the parent
    # waits for that exec, uninterruptibly, so the job never stops (with or
    # without sbx).  So the scripts wait with the wait builtin for a sleep
    # started before ready (bg, bgread: the command goes on only once
    # continued, the shell's bg, so that the ^Z always finds it running;
    # bounded: 60 s) and exec cat.
    on_cont="c=; trap 'c=1' CONT; sleep 60 & s=\$!"
    until_cont="wait \$s; kill \$s"
    job_mode() {
        case $1 in
            fg) script="touch '$d/ready'; exec cat > '$d/typed'" steps="stopped rc=0" wrote=hello ;;
            bg) script="$on_cont; touch '$d/ready'; $until_cont; echo done > '$d/typed'" steps="stopped rc=0" wrote=done ;;
            bgread) script="$on_cont; touch '$d/ready'; $until_cont; exec cat > '$d/typed'" steps="stopped alive rc=0" wrote=hello ;;
            background) script="touch '$d/ready'; exec cat > '$d/typed'" steps="alive rc=0" wrote=hello ;;
            fgnow) script="touch '$d/ready'; sleep 1; exec cat > '$d/typed'" steps="rc=0" wrote=hello ;;
        esac
    }
    for policy in danger-full-access workspace-write external-sandbox; do
        for mode in fg bg bgread background fgnow; do
            job_mode "$mode"
            job "$policy" "$mode" "$steps" "$wrote" -- "$SBX" run -T -t 30s -p "$policy" -- sh -c "$script"
        done
    done
    # A job that ignores SIGTSTP is not stopped by ^Z: when the command
    # stops anyway (it took SIGTSTP back, as vim does), sbx continues it.
    for policy in danger-full-access workspace-write; do
        job "$policy, SIGTSTP ignored by the job" ignored "ignored rc=0" hello -- sh -c \
            "trap '' TSTP; exec $(printf %q "$SBX") run -T -t 30s -p $policy -- python3 $(printf %q "$here/progs/tstp-reader.py") ready typed"
    done
    # sbx run by a script: ^Z stops the whole job (the script too), as it
    # would without sbx, so that the shell prompts again.
    job_mode fg
    printf '#!/bin/sh\n%q run -T -t 30s -p workspace-write -- sh -c %q\n' "$SBX" "$script" > "$d/job.sh"
    chmod 755 "$d/job.sh"
    job "sbx in a script" fg "$steps" "$wrote" -- "$d/job.sh"
    # The helper run by a shell: its own group is the job.
    for mode in fg fgnow; do
        job_mode "$mode"
        job "the helper run by a shell" "$mode" "$steps" "$wrote" -- \
            "$helper" --sandbox-policy-cwd "$d" --sandbox-policy '{"type":"workspace-write"}' -- sh -c "$script"
    done
else
    not_ok "compiling progs/sig-count.c: $(head -3 "$d/cc.log")"
fi

rm -f "$d/ready"
"$SBX" run "${full[@]}" -- sh -c "echo \$\$ > $d/ready; exec sleep 100" &
sbx_pid=$!
wait_for_file "$d/ready"
kill -TERM "$sbx_pid"
wait "$sbx_pid"
is "SIGTERM to sbx kills a plain command: 128+15" 143 $?

rm -f "$d/ready" "$d/gc"
"$SBX" run "${full[@]}" -- sh -c \
    "setsid sh -c 'trap \"\" TERM; echo \$\$ > $d/gc; exec sleep 100' & echo x > $d/ready; exec sleep 100" &
sbx_pid=$!
wait_for_file "$d/ready"; wait_for_file "$d/gc"
kill -TERM "$sbx_pid"
wait "$sbx_pid"
gc=$(cat "$d/gc")
ok "after SIGTERM, the setsid grandchild that ignores it is gone too" gone "$gc"

# --- after exit: drain for 2 s, then kill ------------------------------------
# (The command ends once its background process has written its pid.  The
# drain is a 2 s timer: the lower bound holds on any machine, and the upper
# one only rules out waiting for the holder's own 100 s.)  Unsandboxed text
# mode gives the command sbx's own stdout, whose holders sbx looks for; with
# --cap-live the command writes to a pipe that sbx reads, whose end tells.
bg_up="while [ ! -s $d/bg ]; do sleep 0.01; done"
for how in given piped; do
    opts=("${full[@]}")
    [ "$how" = piped ] && opts+=(--cap-live)
    rm -f "$d/bg"
    t0=$(now_ms)
    out=$("$SBX" run "${opts[@]}" -- sh -c "sh -c 'echo \$\$ > $d/bg; exec sleep 100' & $bg_up; echo done")
    rc=$?
    elapsed=$(( $(now_ms) - t0 ))
    is "drain, stdout $how: the command's output and status" "done 0" "$out $rc"
    ok "drain, stdout $how: waited ${elapsed} ms (2 s for the pipe holder)" test "$elapsed" -ge 2000 -a "$elapsed" -lt 20000
    ok "drain, stdout $how: the background process that held the pipes is gone" gone "$(cat "$d/bg")"
    # Without the drain: under 2 s, which the drain's timer cannot be (the run
    # itself takes some 20 ms).
    rm -f "$d/bg"
    t0=$(now_ms)
    "$SBX" run "${opts[@]}" -- sh -c "sh -c 'echo \$\$ > $d/bg; exec sleep 100' >/dev/null 2>&1 & $bg_up"
    elapsed=$(( $(now_ms) - t0 ))
    ok "stdout $how, a background process without it: no wait (${elapsed} ms, the drain takes 2000)" test "$elapsed" -lt 2000
    ok "  and it is gone" gone "$(cat "$d/bg")"
    # The background writer writes once the command has ended: during the drain.
    "$SBX" run "${opts[@]}" -- sh -c "(while kill -0 \$\$ 2>/dev/null; do sleep 0.01; done; echo late) & echo early" >"$d/out"
    is "stdout $how: output written during the drain is kept" "early
late" "$(cat "$d/out")"
done

# --- environment, cwd, stdin --------------------------------------------------
out=$(SBX_T_KEEP=k SBX_T_DROP=d "$SBX" run "${full[@]}" --env SBX_T_ADD=a=b --unset-env SBX_T_DROP -- \
    sh -c 'echo "${SBX_T_KEEP-unset} ${SBX_T_DROP-unset} ${SBX_T_ADD-unset} $SBX_SANDBOX"')
is "--env and --unset-env" "k unset a=b none" "$out"
out=$(SBX_T_KEEP=k HOME=/h "$SBX" run "${full[@]}" --clear-env --env SBX_T_ADD=1 -- \
    sh -c 'echo "${SBX_T_KEEP-unset} $HOME ${PATH:+path} $SBX_T_ADD"')
is "--clear-env keeps PATH and HOME, drops the rest" "unset /h path 1" "$out"
out=$("$SBX" run -p read-only -- sh -c 'echo "$SBX_SANDBOX $SBX_SANDBOX_NETWORK_DISABLED"')
is "the sandbox markers" "linux 1" "$out"
is "-C runs in that directory" "/usr/share" "$("$SBX" run "${full[@]}" -C /usr/share -- pwd)"
is "stdin is inherited by default" "hello" "$(echo hello | "$SBX" run "${full[@]}" -- cat)"
is "--stdin null" "" "$(echo hello | "$SBX" run "${full[@]}" --stdin null -- cat)"
is "only fds 0-2 reach the command" "0 1 2 3" \
    "$(exec 7</dev/null; "$SBX" run "${full[@]}" -- ls /proc/self/fd | sort -n | tr '\n' ' ' | sed 's/ $//')"

# --- --json and --events ---------------------------------------------------------
out=$("$SBX" run "${full[@]}" --json -- sh -c 'echo out; printf "e\377" >&2; exit 4')
is "--json: the exit status" 4 $?
is "--json: every field of section 4, and not_enforced" \
    "approval,command,cwd,denials,duration_ms,escalated,exit_code,not_enforced,output_cap,policy,sandbox,sandbox_denied,signal,stderr,stderr_bytes,stderr_omitted_bytes,stderr_omitted_lines,stderr_truncated,stdout,stdout_bytes,stdout_omitted_bytes,stdout_omitted_lines,stdout_truncated,timed_out" \
    "$(jq -r 'keys | join(",")' <<<"$out")"
is "--json: stdout and stderr (invalid UTF-8 replaced)" "$(printf 'out\n|e\357\277\275')" "$(jq -j '.stdout + "|" + .stderr' <<<"$out")"
is "--json: values" "4 4 2 none danger-full-access false null false never []" \
    "$(jq -r '"\(.exit_code) \(.stdout_bytes) \(.stderr_bytes) \(.sandbox) \(.policy.mode) \(.timed_out) \(.signal) \(.escalated) \(.approval.mode) \(.denials)"' <<<"$out")"
is "--json: exactly one line on stdout" 1 "$(wc -l <<<"$out")"
out=$("$SBX" run "${full[@]}" --events -- sh -c 'echo one; sleep 0.1; echo two >&2')
is "--events: begin, output, output, end" "begin output output end" "$(jq -r .type <<<"$out" | tr '\n' ' ' | sed 's/ $//')"
is "--events: output chunks" "stdout:one
|stderr:two" "$(jq -j 'select(.type=="output") | "\(.stream):\(.data)|"' <<<"$out" | sed 's/|$//')"
is "--events: end carries the result" "0 one" "$(jq -r 'select(.type=="end") | "\(.result.exit_code) \(.result.stdout)"' <<<"$out")"
is "--events: begin carries the command and policy" "echo danger-full-access none" \
    "$(jq -r 'select(.type=="begin") | "\(.command[0]) \(.policy.mode) \(.sandbox)"' <<<"$out" | sed 's/^sh/echo/')"
out=$("$SBX" run "${full[@]}" --events --max-output-bytes 4 -- printf 'abcdefgh')
is "--events: output within the caps only (head and tail)" "abgh" "$(jq -j 'select(.type=="output") | .data' <<<"$out")"

# --- dry run -----------------------------------------------------------------------
out=$("$SBX" run -p read-only --dry-run -- touch "$d/dry")
ok "--dry-run runs nothing" test ! -e "$d/dry"
is "--dry-run: the helper argv ends with the command" "--|touch|$d/dry" "$(jq -r '.argv[-3:] | join("|")' <<<"$out")"
is "--dry-run: env additions and cwd" "linux $PWD" "$(jq -r '"\(.env.SBX_SANDBOX) \(.cwd)"' <<<"$out")"
is "--dry-run for danger-full-access: the command itself" '["true"]' "$("$SBX" run "${full[@]}" --dry-run -- true | jq -c .argv)"

# --- denials -----------------------------------------------------------------------
"$SBX" run -p read-only -- touch "/etc/sbx-denied-$$" 2>"$d/err"
rc=$?
ok "read-only: the write fails ($rc)" test "$rc" -ne 0 -a ! -e "/etc/sbx-denied-$$"
ok "read-only: the note names the denial and the flag" \
    grep -qxF "sbx: the sandbox likely denied this (read-only file system): write /etc/sbx-denied-$$ (read :root (read-only preset): nothing is writable but /dev/null; allow with -p workspace-write -w /etc)" "$d/err"
out=$("$SBX" run -p read-only --json -- touch "/etc/sbx-denied-$$")
is "--json: sandbox_denied" true "$(jq .sandbox_denied <<<"$out")"
out=$("$SBX" run "${full[@]}" --json -- sh -c 'echo "Permission denied" >&2; exit 1')
is "no sandbox: never sandbox_denied" false "$(jq .sandbox_denied <<<"$out")"
out=$("$SBX" run -p read-only --json -- sh -c 'echo "Permission denied" >&2; exit 2')
is "status 2: not sandbox_denied" false "$(jq .sandbox_denied <<<"$out")"
"$SBX" run "${full[@]}" -- sh -c 'echo "Permission denied" >&2; exit 1' 2>"$d/err"
is "no note without a sandbox" "Permission denied" "$(cat "$d/err")"
# sh's redirection (status 2) to a relative path: the note names the file,
# taken against the command's directory, and the flag for it.
repo=$(scratch)
mkdir "$repo/.git" "$repo/sub"
(cd "$repo/sub" && "$SBX" run -p read-only -- sh -c 'echo x > new') 2>"$d/err"
rc=$?
ok "read-only, sh redirection: refused ($rc), nothing written" test "$rc" -eq 2 -a ! -e "$repo/sub/new"
ok "read-only, sh redirection: the note names the file (in the workspace: -p workspace-write)" \
    grep -qxF "sbx: the sandbox likely denied this (read-only file system): write $repo/sub/new (read :root (read-only preset): nothing is writable but /dev/null; allow with -p workspace-write)" "$d/err"
(cd "$repo/sub" && "$SBX" run -p workspace-write -w "$repo" -- sh -c 'echo x > ../.git/config') 2>"$d/err"
ok "workspace-write, a protected .git: nothing written" test ! -e "$repo/.git/config"
ok "workspace-write, a protected .git: the note says --unprotect .git" \
    grep -qxF "sbx: the sandbox likely denied this (read-only file system): write $repo/.git/config (protected name .git in $repo; allow with --unprotect .git)" "$d/err"

done_testing
