#!/usr/bin/env bash
# The helper's --status-fd (codex-linux-sandbox(1)): JSON lines on the
# descriptor instead of lines on stderr, the descriptor hidden from the
# command; and what sbx makes of them: a command that cannot be executed is
# told in sbx's words, naming the file's mode or the sandbox's entry.
. "$(dirname "$0")/lib.sh"
require_helper
HELPER=$helper
ws=$(scratch)
cd "$ws" || exit 1
RO='{"mode":"read-only"}'
printf '#!/bin/sh\necho ran\n' > noexec.sh
chmod 644 noexec.sh
printf '#!/bin/sh\necho ran\n' > denied.sh
chmod 755 denied.sh
mkdir adir
json_field() { python3 -c 'import json,sys
for line in sys.stdin:
    print(json.dumps(json.loads(line)[sys.argv[1]], sort_keys=True))' "$1"; }

# --- the helper alone --------------------------------------------------------
out=$("$HELPER" --sandbox-policy-cwd "$ws" --sandbox-policy "$RO" --status-fd 3 -- ./noexec.sh 3>status 2>err)
rc=$?
is "--status-fd: a file without execute permission exits 126" 126 "$rc"
is "... the command did not run" "" "$out"
is "... nothing on stderr" "" "$(cat err)"
is "... one exec_error line with the file's mode" \
    '{"argv0": "./noexec.sh", "errno": 13, "error": "Permission denied", "mode": 33188, "path": "./noexec.sh"}' \
    "$(json_field exec_error < status)"
"$HELPER" --sandbox-policy-cwd "$ws" --sandbox-policy "$RO" --status-fd 3 -- sbx-no-such-command 3>status 2>err
is "--status-fd: not found exits 127" 127 $?
is "... exec_error without a path" '{"argv0": "sbx-no-such-command", "errno": 2, "error": "No such file or directory"}' \
    "$(json_field exec_error < status)"
"$HELPER" --sandbox-policy-cwd "$ws" --sandbox-policy '{"mode":"nonsense"}' --status-fd 3 -- true 3>status 2>err
is "--status-fd: a bad policy exits 125" 125 $?
is "... nothing on stderr" "" "$(cat err)"
is "... one error line with the message" \
    '"--sandbox-policy: key '"'mode'"': '"'nonsense'"' is not one of: read-only, workspace-write, danger-full-access, external-sandbox"' \
    "$(python3 -c 'import json,sys; print(json.dumps(json.load(sys.stdin)["error"]["message"]))' < status)"
"$HELPER" --sandbox-policy-cwd "$ws" --sandbox-policy "$RO" --status-fd 3 -- true 3>status
is "--status-fd: a run that succeeds reports nothing" "0:" "$?:$(cat status)"
is "--status-fd: the command does not inherit the descriptor" "closed" \
    "$("$HELPER" --sandbox-policy-cwd "$ws" --sandbox-policy "$RO" --status-fd 3 -- \
        sh -c '{ true >&3; } 2>/dev/null && echo open || echo closed' 3>status)"
is "without --status-fd the helper says it on stderr, as Codex's does" \
    "codex-linux-sandbox: exec ./noexec.sh: Permission denied" \
    "$("$HELPER" --sandbox-policy-cwd "$ws" --sandbox-policy "$RO" -- ./noexec.sh 2>&1)"
for bad in 7 2 x -1 ""; do
    err=$("$HELPER" --sandbox-policy-cwd "$ws" --sandbox-policy "$RO" --status-fd "$bad" -- true 2>&1)
    rc=$?
    case $rc:$err in
        "125:codex-linux-sandbox: arguments: --status-fd"*) _tap_result ok "--status-fd '$bad' is refused with one line" ;;
        *) _tap_result fail "--status-fd '$bad' is refused with one line" "$rc: $err" ;;
    esac
done

# --- through sbx ---------------------------------------------------------------
noexec_line="sbx: cannot run './noexec.sh': Permission denied: its mode 0644 has no execute permission (the file's, not the sandbox's); chmod +x ./noexec.sh, or run it through its interpreter"
for mode in read-only danger-full-access; do
    err=$("$SBX" run -p "$mode" -- ./noexec.sh 2>&1 >/dev/null)
    is "sbx -p $mode: a file without execute permission: 126" 126 $?
    is "... one line in sbx's words naming the mode, not the sandbox" "$noexec_line" "$err"
done
is "sbx --json: the line is the result's stderr" "126 $noexec_line" \
    "$("$SBX" run --json -- ./noexec.sh | python3 -c 'import json,sys; r=json.load(sys.stdin); print(r["exit_code"], r["stderr"].rstrip())')"
is "sbx: a file the policy denies names the entry" \
    "sbx: cannot run '$ws/denied.sh': Permission denied: denied by the sandbox's entry deny $ws/denied.sh (--deny)" \
    "$("$SBX" run --deny "$ws/denied.sh" -- "$ws/denied.sh" 2>&1)"
is "sbx: a directory" "sbx: cannot run './adir': Permission denied: it is a directory" \
    "$("$SBX" run -- ./adir 2>&1)"
is "sbx: not found: 127 and one line" "127 sbx: cannot run 'sbx-no-such-command': No such file or directory" \
    "$(err=$("$SBX" run -- sbx-no-such-command 2>&1); echo "$? $err")"
is "sbx: no 'codex-linux-sandbox:' line reaches the user" "0" \
    "$("$SBX" run -- ./noexec.sh 2>&1 | grep -c codex-linux-sandbox)"

done_testing
