#!/usr/bin/env bash
# The helper's command line (SPEC section 6), as Codex calls it: both forms,
# both policy JSON forms, exit statuses, signals and the process structure.
. "$(dirname "$0")/lib.sh"
require_helper
HELPER=$helper

ws=$(scratch)
out=$(scratch)
content() { cat "$1" 2>/dev/null || echo "<missing>"; }
RO='{"type":"read-only"}'
WW='{"type":"workspace-write"}'

# --- the two command-line forms -------------------------------------------
is "flag form runs the command" "hello" \
    "$("$HELPER" --sandbox-policy-cwd "$ws" --sandbox-policy "$RO" -- echo hello)"
is "flag=value form runs the command" "hello" \
    "$("$HELPER" --sandbox-policy-cwd="$ws" --sandbox-policy="$RO" -- echo hello)"
is "older positional form runs the command" "hello" "$("$HELPER" "$ws" "$RO" -- echo hello)"
is "--command-cwd sets the command's directory" "$out" \
    "$("$HELPER" --sandbox-policy-cwd "$ws" --command-cwd "$out" --sandbox-policy "$RO" -- pwd)"
is "without --command-cwd the command runs where the helper was started" "$out" \
    "$(cd "$out" && "$HELPER" --sandbox-policy-cwd "$ws" --sandbox-policy "$RO" -- pwd)"
is "the policy cwd is the workspace, not the command cwd" "written" \
    "$(cd "$out" && "$HELPER" --sandbox-policy-cwd "$ws" --sandbox-policy "$WW" -- sh -c "echo written > '$ws/w'" ; content "$ws/w")"
not_ok "the command cwd does not become writable" \
    "$HELPER" --sandbox-policy-cwd "$ws" --command-cwd "$out" --sandbox-policy "$WW" -- sh -c 'echo x > here'
is "arguments reach the command unchanged" "a b|--|-x|" \
    "$("$HELPER" --sandbox-policy-cwd "$ws" --sandbox-policy "$RO" -- sh -c 'printf "%s|" "$@"' sh "a b" -- -x)"
is "stdin reaches the command" "from stdin" \
    "$(echo "from stdin" | "$HELPER" --sandbox-policy-cwd "$ws" --sandbox-policy "$RO" -- cat)"
is "the environment reaches the command" "bar" \
    "$(FOO=bar "$HELPER" --sandbox-policy-cwd "$ws" --sandbox-policy "$RO" -- sh -c 'echo $FOO')"

# --- policy JSON: Codex's SandboxPolicy and sbx's canonical form -----------
extra=$(scratch)
ok "Codex workspace-write with writable_roots makes the root writable" \
    "$HELPER" --sandbox-policy-cwd "$ws" --sandbox-policy \
    "{\"type\":\"workspace-write\",\"writable_roots\":[\"$extra\"],\"network_access\":false,\"exclude_tmpdir_env_var\":false,\"exclude_slash_tmp\":false}" \
    -- sh -c "echo r > '$extra/r'"
is "the extra root was written" "r" "$(content "$extra/r")"
ok "Codex danger-full-access runs without a sandbox" \
    "$HELPER" --sandbox-policy-cwd "$ws" --sandbox-policy '{"type":"danger-full-access"}' -- sh -c "echo d > '$out/d'"
is "danger-full-access wrote outside the workspace" "d" "$(content "$out/d")"
ok "Codex external-sandbox leaves the filesystem alone" \
    "$HELPER" --sandbox-policy-cwd "$ws" --sandbox-policy '{"type":"external-sandbox","network_access":"restricted"}' \
    -- sh -c "echo e > '$out/e'"
is "external-sandbox wrote outside the workspace" "e" "$(content "$out/e")"
not_ok "Codex external-sandbox restricted still refuses sockets" \
    "$HELPER" --sandbox-policy-cwd "$ws" --sandbox-policy '{"type":"external-sandbox","network_access":"restricted"}' \
    -- python3 -c 'import socket; socket.socket()'
if [ -n "${SBX:-}" ] && canonical=$(cd "$ws" && "$SBX" policy --json -p workspace-write 2>/dev/null); then
    ok "sbx's canonical policy JSON is accepted" \
        "$HELPER" --sandbox-policy-cwd "$ws" --sandbox-policy "$canonical" -- sh -c "echo c > '$ws/c'"
    is "the canonical workspace-write policy wrote the file" "c" "$(content "$ws/c")"
else
    skip "sbx's canonical policy JSON is accepted" "sbx policy --json is not available"
fi
is "policy limits become rlimits" "37" \
    "$("$HELPER" --sandbox-policy-cwd "$ws" --sandbox-policy '{"mode":"read-only","limits":{"open_files":37}}' -- sh -c 'ulimit -n')"

# --- exit statuses --------------------------------------------------------
status() { "$@" >/dev/null 2>&1; echo $?; }
is "the command's own exit status" "42" "$(status "$HELPER" --sandbox-policy-cwd "$ws" --sandbox-policy "$RO" -- sh -c 'exit 42')"
is "a command killed by SIGTERM: the helper ends by SIGTERM too" "143" \
    "$(status "$HELPER" --sandbox-policy-cwd "$ws" --sandbox-policy "$RO" -- sh -c 'kill -TERM $$')"
is "a command killed by SIGKILL: 137" "137" \
    "$(status "$HELPER" --sandbox-policy-cwd "$ws" --sandbox-policy "$RO" -- sh -c 'kill -KILL $$')"
is "command not found: 127" "127" "$(status "$HELPER" --sandbox-policy-cwd "$ws" --sandbox-policy "$RO" -- no-such-command-sbx)"
printf 'not a program\n' > "$ws/not-exec"
chmod 644 "$ws/not-exec"
is "command not executable: 126" "126" "$(status "$HELPER" --sandbox-policy-cwd "$ws" --sandbox-policy "$RO" -- "$ws/not-exec")"
is "a directory as the command: 126" "126" "$(status "$HELPER" --sandbox-policy-cwd "$ws" --sandbox-policy "$RO" -- /)"

refusal() {  # DESC ARGS...: exit 125 and exactly one line on stderr naming the helper
    local desc=$1; shift
    local err rc
    err=$("$HELPER" "$@" 2>&1 >/dev/null); rc=$?
    is "$desc: exit 125" "125" "$rc"
    is "$desc: one line on stderr" "1" "$(printf '%s\n' "$err" | wc -l)"
    case $err in
        "codex-linux-sandbox: "*) _tap_result ok "$desc: the line names the helper" ;;
        *) _tap_result fail "$desc: the line names the helper" "$err" ;;
    esac
}
refusal "bad JSON" --sandbox-policy-cwd "$ws" --sandbox-policy '{"type":' -- true
refusal "unknown policy type" --sandbox-policy-cwd "$ws" --sandbox-policy '{"type":"wide-open"}' -- true
refusal "unknown policy key" --sandbox-policy-cwd "$ws" --sandbox-policy '{"type":"read-only","extra":1}' -- true
refusal "unknown option" --sandbox-policy-cwd "$ws" --bogus --sandbox-policy "$RO" -- true
refusal "missing policy" --sandbox-policy-cwd "$ws" -- true
refusal "missing command" --sandbox-policy-cwd "$ws" --sandbox-policy "$RO" --
refusal "danger-full-access with restricted network" --sandbox-policy-cwd "$ws" \
    --sandbox-policy '{"mode":"danger-full-access","network":"restricted"}' -- true
err=$("$HELPER" --sandbox-policy-cwd "$ws" --sandbox-policy '{"type":' -- touch "$ws/never" 2>&1)
is "a refused run runs nothing" "<missing>" "$(content "$ws/never")"

# --- signals and the process structure ------------------------------------
# Background jobs of a script start with SIGINT and SIGQUIT ignored, which a
# shell cannot trap: env --default-signal gives the helper (and so the
# command) the default dispositions.  Every loop is bounded (by the test's
# own time limit: 60 s); every wait is for a condition (eventually).
ready() { eventually test -s "$ws/ready-file"; }
"$HELPER" --sandbox-policy-cwd "$ws" --command-cwd "$ws" --sandbox-policy "$WW" -- \
    sh -c 'trap "echo got-term > term-file; exit 3" TERM; echo ready > ready-file; for i in $(seq 1200); do sleep 0.05; done' &
pid=$!
ready
kill -TERM "$pid"
wait "$pid"
is "SIGTERM to the helper reaches the command (its exit status)" "3" "$?"
is "SIGTERM to the helper reaches the command (its trap ran)" "got-term" "$(content "$ws/term-file")"

for sig in INT HUP QUIT; do
    rm -f "$ws/ready-file" "$ws/sig-file"
    env --default-signal "$HELPER" --sandbox-policy-cwd "$ws" --command-cwd "$ws" --sandbox-policy "$WW" -- \
        sh -c "trap 'echo $sig > sig-file; exit 4' $sig; echo ready > ready-file; for i in \$(seq 1200); do sleep 0.05; done" &
    pid=$!
    ready
    kill -"$sig" "$pid"
    wait "$pid"
    is "SIG$sig to the helper is forwarded to the command" "4 $sig" "$? $(content "$ws/sig-file")"
done

marker="sbx-helper-cli-$$-$RANDOM"
rm -f "$ws/ready-file"
"$HELPER" --sandbox-policy-cwd "$ws" --command-cwd "$ws" --sandbox-policy "$WW" -- \
    bash -c "setsid bash -c 'trap \"\" TERM HUP; exec -a $marker sleep 60' </dev/null >/dev/null 2>&1 & echo ready > ready-file; exec -a $marker sleep 60" &
pid=$!
ready
running() { test "$(pgrep -f "^$marker" | wc -l)" = "$1"; }
ok "the command and its setsid grandchild are running" eventually running 2
pid1=$(pgrep -P "$pid")
kill -KILL "$pid"
wait "$pid" 2>/dev/null
ok "SIGKILL of the helper kills everything in the sandbox" eventually running 0
pkill -f "^$marker" 2>/dev/null
ok "... and its pid 1 removes the placeholders" eventually placeholders_gone "$ws"
# That pid 1 has ended too (it is a zombie of init, or gone): the next run
# below must not meet its cleanup (its locks) half done.
ok "... and that pid 1 ends" eventually ended "$pid1"
# A helper killed together with its pid 1 leaves its placeholders behind.
# The helper is stopped first (it cannot clean up), then pid 1 is killed
# (it never learns of the helper's end), then the helper.  (Stopping pid 1
# instead did not hold: when the helper died, the kernel continued pid 1,
# whose process group it had orphaned, with SIGHUP and SIGCONT, and pid 1
# then removed the placeholders before the test could kill it.)
rm -f "$ws/ready-file"
"$HELPER" --sandbox-policy-cwd "$ws" --command-cwd "$ws" --sandbox-policy "$WW" -- \
    sh -c 'echo ready > ready-file; exec sleep 60' &
pid=$!
ok "the helper's command runs" ready
pid1=$(pgrep -P "$pid")
in_state() { [ "$(awk '{print $3}' "/proc/$1/stat" 2>/dev/null)" = "$2" ]; }
kill -STOP "$pid"
ok "the helper is stopped" eventually in_state "$pid" T
kill -KILL "$pid1"
# dead, its namespace gone; the stopped helper has not reaped it
ok "its pid 1 ($pid1) is dead and not reaped" eventually in_state "$pid1" Z
kill -KILL "$pid"
wait "$pid" 2>/dev/null
ok "a helper killed with its pid 1 leaves its placeholder behind (empty, mode 0000)" is_placeholder "$ws/.sbx"
is "the next run keeps the leftover placeholder masked (an empty read-only directory)" "555 empty" \
    "$("$HELPER" --sandbox-policy-cwd "$ws" --command-cwd "$ws" --sandbox-policy "$WW" -- \
        sh -c 'mkdir .sbx/x 2>/dev/null && echo HOLE; echo "$(stat -c %a .sbx) $(ls -A .sbx | wc -l | sed s/^0$/empty/)"')"
is "... and removes it when it ends" "" "$(protected_names_in "$ws")"

# --- the helper picks nothing from the workspace or PATH for itself --------
for name in mount umount ip newuidmap newgidmap sh unshare; do
    printf '#!/bin/sh\necho ran > "%s/hijacked-%s"\n' "$ws" "$name" > "$ws/$name"
    chmod 755 "$ws/$name"
done
(cd "$ws" && PATH="$ws:/usr/bin:/bin" "$HELPER" --sandbox-policy-cwd "$ws" \
    --sandbox-policy '{"mode":"workspace-write","network":"limited"}' -- /bin/true)
is "no helper step ran a program from the workspace or PATH" "" "$(cd "$ws" && ls hijacked-* 2>/dev/null)"

# --- inherited descriptors ----------------------------------------------------
# A descriptor the caller leaves open (here a socket of the host's network
# namespace, and a file) must not reach the command.
exec 7</etc/hostname
is "an inherited file descriptor does not reach the command" "closed" \
    "$("$HELPER" --sandbox-policy-cwd "$ws" --sandbox-policy "$RO" -- sh -c 'if [ -e /proc/self/fd/7 ]; then echo open; else echo closed; fi')"
exec 7<&-
is "an inherited host socket does not reach the command" "closed" \
    "$(python3 -c '
import os, socket, subprocess, sys
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
os.set_inheritable(s.fileno(), True)
probe = "import os, sys; print(\"open\" if os.path.exists(\"/proc/self/fd/%d\") else \"closed\")" % s.fileno()
r = subprocess.run([sys.argv[1], "--sandbox-policy-cwd", sys.argv[2], "--sandbox-policy", "{\"type\":\"read-only\"}",
                    "--", "python3", "-c", probe], pass_fds=[s.fileno()], capture_output=True, text=True)
print(r.stdout.strip() or r.stderr.strip())
' "$HELPER" "$ws")"

done_testing
