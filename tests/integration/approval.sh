#!/usr/bin/env bash
# Approvals (section 7), end to end with scripted approvers: a retry without
# the sandbox after an approved denial, a denied retry, `never` never asking,
# session approvals reused across processes (also concurrently), rules that
# forbid and allow, `untrusted`, `--escalate`, `--reject`, and the refusals.
. "$(dirname "$0")/lib.sh"
progs=$(cd "$(dirname "$0")" && pwd)/progs

ws=$(scratch)
state=$(scratch)
mkdir -p "$ws/bin" "$ws/log" "$ws/work"
cd "$ws/work" || exit 1
export XDG_STATE_HOME="$state"

# approver NAME ANSWER [SLEEP]: a program that appends each request (one JSON
# line) to $ws/log/NAME and prints ANSWER.
approver() {
    local name=$1 answer=$2 nap=${3:-0}
    cat >"$ws/bin/$name" <<EOF
#!/bin/sh
cat >>"$ws/log/$name"
sleep $nap
printf '%s\n' '$answer'
EOF
    chmod +x "$ws/bin/$name"
    : >"$ws/log/$name"
    echo "$ws/bin/$name"
}
asked() { wc -l <"$ws/log/$1" | tr -d ' '; }
# field FILE EXPR: a Python expression over the JSON document d in FILE.
field() { python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$1" "$2"; }
# last_request NAME EXPR: the same over the last request approver NAME got.
last_request() { tail -n 1 "$ws/log/$1" >"$ws/log/last.json"; field "$ws/log/last.json" "$2"; }

yes_prog=$(approver yes approved)
no_prog=$(approver deny denied)
session_prog=$(approver session approved_for_session)
json_yes=$(approver json_yes '{"decision": "approved"}')
abort_prog=$(approver abort abort)

# 1. on-failure: the sandboxed touch fails, the approver approves, the retry
#    without the sandbox creates the file.
target="$ws/created-by-retry"
"$SBX" run -p read-only -a on-failure --approver "$yes_prog" --json -- touch "$target" >"$ws/r1.json"
status=$?
is "approved retry: exit status of the retry" 0 "$status"
ok "approved retry: the file exists" test -f "$target"
is "approved retry: the approver was asked once" 1 "$(asked yes)"
is "approved retry: the request's kind" sandbox "$(last_request yes 'd["kind"]')"
is "approved retry: the request's command" "['touch', '$target']" "$(last_request yes 'd["command"]')"
is "approved retry: the request's cwd" "$ws/work" "$(last_request yes 'd["cwd"]')"
is "approved retry: the request carries the canonical policy" read-only "$(last_request yes 'd["policy"]["mode"]')"
is "approved retry: escalated in the result" True "$(field "$ws/r1.json" 'd["escalated"]')"
# The result keeps why: the sandboxed attempt's exit, denial and stderr (issue 35).
is "approved retry: the first attempt is kept in the result" "1 True True" \
    "$(field "$ws/r1.json" '" ".join(str(x) for x in (d["first_attempt"]["exit_code"], d["first_attempt"]["sandbox_denied"], "Read-only file system" in d["first_attempt"]["stderr_tail"]))')"
# An approval flow records the denials without --record-denials (issue 32).
is "... with its exact denials, recorded without a flag" "create $target" \
    "$(field "$ws/r1.json" '" ".join(x["operation"] + " " + x["path"] for x in d["first_attempt"]["denials"])')"
"$SBX" run -p read-only --no-record-denials -a on-failure --approver "$yes_prog" --json -- touch "$ws/kept" >"$ws/r1k.json"
is "... with --no-record-denials, none listed" "[]" "$(field "$ws/r1k.json" 'd["first_attempt"]["denials"]')"
is "approved retry: who answered" approver "$(field "$ws/r1.json" 'd["approval"]["requests"][0]["answered_by"]')"
is "approved retry: what was answered" approved "$(field "$ws/r1.json" 'd["approval"]["requests"][0]["decision"]')"
is "approved retry: the JSON decision form works too" 0 \
    "$("$SBX" run -p read-only -a on-failure --approver "$json_yes" -- touch "$ws/json-form" 2>/dev/null; echo $?)"
ok "approved retry: JSON form created the file" test -f "$ws/json-form"

# 1a. The prompt at a terminal (no --approver), stdin the terminal too: it
#     waits for the user's answer there.  It read EIO at once before ("the
#     terminal closed"): the sandboxed command's process group had the
#     terminal last, and sbx took it back only from its own child's group
#     (issue 35).
tty_target="$ws/created-at-the-terminal"
out=$(cd "$ws/work" && python3 "$progs/pty-answer.py" "Allow?" y -- \
    "$SBX" run -p read-only -a on-failure -- touch "$tty_target")
is "terminal prompt: answered y at the terminal, the retry ran (exit 0)" 0 "$?"
ok "... the file exists" test -f "$tty_target"
ok "... the prompt was shown there" grep -q "approval needed (sandbox)" <<<"$out"
out=$(cd "$ws/work" && python3 "$progs/pty-answer.py" "Allow?" n -- \
    "$SBX" run -p read-only -a on-failure -- touch "$ws/refused-at-the-terminal")
ok "terminal prompt: answered n, refused by the terminal, not closed" \
    grep -q "approval denied by the terminal (sandbox" <<<"$out"
not_ok "... nothing ran without the sandbox" test -e "$ws/refused-at-the-terminal"

# 1b. The retry's request tells why: the failed attempt's denials (recorded
#     by default in an approval flow), each with its rule and fix, and the
#     end of its stderr; without the recorder the list is empty and the
#     stderr is there.
why_prog=$(approver why denied)
"$SBX" run -p read-only -a on-failure --approver "$why_prog" -- touch "$ws/why" 2>/dev/null
is "why: the request lists the denied create" "create $ws/why" \
    "$(last_request why 'd["denials"][0]["operation"] + " " + d["denials"][0]["path"]')"
is "why: ... with the rule that refused it" "read :root (read-only preset): nothing is writable but /dev/null" \
    "$(last_request why 'd["denials"][0]["rule"]')"
ok "why: ... and a fix" test -n "$(last_request why 'd["denials"][0]["fix"]')"
ok "why: the end of the attempt's stderr" grep -q "touch: cannot touch" <<<"$(last_request why 'd["stderr_tail"]')"
"$SBX" run -p read-only -a on-failure --no-record-denials --approver "$why_prog" -- touch "$ws/why" 2>/dev/null
is "why, without the recorder: no denials listed" "[]" "$(last_request why 'd["denials"]')"
ok "why, without the recorder: the stderr still" grep -q "touch: cannot touch" <<<"$(last_request why 'd["stderr_tail"]')"
# A refused connect reads like an outage (curl: exit 7, no known message); it
# is recorded on every run under restricted, so on-failure asks, and says why.
net_prog=$(approver net denied)
"$SBX" run -p read-only -a on-failure --approver "$net_prog" -- curl -sS http://192.0.2.7:8080/ 2>/dev/null
is "a refused connect (no recorder): the approver is asked, with the destination and -n full" \
    "connect 192.0.2.7:8080 -n full" \
    "$(last_request net 'd["denials"][0]["operation"] + " " + d["denials"][0]["address"] + " " + d["denials"][0]["fix"]')"

# 2. A denied (or aborted) retry keeps the failure of the first attempt.
for prog in "$no_prog" "$abort_prog"; do
    name=$(basename "$prog")
    target="$ws/not-created-$name"
    "$SBX" run -p read-only -a on-failure --approver "$prog" --json -- touch "$target" >"$ws/r2.json" 2>/dev/null
    status=$?
    is "$name retry: the first attempt's status" 1 "$status"
    not_ok "$name retry: no file" test -e "$target"
    is "$name retry: the approver was asked" 1 "$(asked "$name")"
    is "$name retry: sandbox_denied stays" True "$(field "$ws/r2.json" 'd["sandbox_denied"]')"
    is "$name retry: not escalated" False "$(field "$ws/r2.json" 'd["escalated"]')"
    want=denied; [ "$name" = abort ] && want=abort
    is "$name retry: the answer is recorded" "$want" "$(field "$ws/r2.json" 'd["approval"]["requests"][0]["decision"]')"
done

# 2b. An approver that prints garbage, or crashes after a valid word: denied.
garbage=$(approver garbage 'sure, go ahead')
printf '#!/bin/sh\ncat >/dev/null\necho approved\nkill -SEGV $$\n' >"$ws/bin/crash"
chmod +x "$ws/bin/crash"
for prog in "$garbage" "$ws/bin/crash"; do
    name=$(basename "$prog")
    "$SBX" run -p read-only -a on-failure --approver "$prog" --json -- touch "$ws/by-$name" >"$ws/r2b.json" 2>/dev/null
    is "$name approver: the failure stands" 1 "$?"
    not_ok "$name approver: no file" test -e "$ws/by-$name"
    is "$name approver: counted as denied" denied "$(field "$ws/r2b.json" 'd["approval"]["requests"][0]["decision"]')"
done

# 3. never and on-request never ask, and report the denial.
for mode in never on-request; do
    marker=$(approver "marker-$mode" approved)
    target="$ws/never-$mode"
    "$SBX" run -p read-only -a "$mode" --approver "$marker" --json -- touch "$target" >"$ws/r3.json" 2>/dev/null
    status=$?
    is "$mode: the failure stands" 1 "$status"
    is "$mode: nobody was asked" 0 "$(asked "marker-$mode")"
    not_ok "$mode: no file" test -e "$target"
    is "$mode: the denial is reported" True "$(field "$ws/r3.json" 'd["sandbox_denied"]')"
done

# 4. A session approval is reused by a second process; the session file
#    lives under $XDG_STATE_HOME.
target="$ws/session-file"
"$SBX" run -p read-only -a on-failure --session s1 --approver "$session_prog" -- touch "$target" 2>/dev/null
ok "session: first run created the file" test -f "$target"
is "session: first run asked" 1 "$(asked session)"
ok "session: the session file exists" test -f "$state/sbx/sessions/s1.json"
rm -f "$target"
"$SBX" run -p read-only -a on-failure --session s1 --approver "$session_prog" --json -- touch "$target" >"$ws/r4.json" 2>/dev/null
ok "session: second run created the file again" test -f "$target"
is "session: second run asked nobody" 1 "$(asked session)"
is "session: answered by the cache" cache "$(field "$ws/r4.json" 'd["approval"]["requests"][0]["answered_by"]')"
# Another policy (or another session) is another request.
rm -f "$target"
"$SBX" run -p read-only --limit-open-files 512 -a on-failure --session s1 --approver "$session_prog" -- touch "$target" 2>/dev/null
is "session: another policy asks again" 2 "$(asked session)"
"$SBX" run -p read-only -a on-failure --session s2 --approver "$session_prog" -- touch "$target" 2>/dev/null
is "session: another session asks again" 3 "$(asked session)"
# Without --session the approval lasts for that run only.
"$SBX" run -p read-only -a on-failure --approver "$session_prog" -- touch "$ws/no-session" 2>/dev/null
"$SBX" run -p read-only -a on-failure --approver "$session_prog" -- touch "$ws/no-session" 2>/dev/null
is "no session: each run asks" 5 "$(asked session)"

# 5. Two (here four) concurrent sbx processes writing the same session lose
#    no approval.
slow=$(approver slow approved_for_session 1)
pids=()
for i in 1 2 3 4; do
    "$SBX" run -p read-only -a on-failure --session shared --approver "$slow" -- touch "$ws/c$i" 2>/dev/null &
    pids+=($!)
done
for p in "${pids[@]}"; do wait "$p"; done
is "concurrent: every process asked" 4 "$(asked slow)"
is "concurrent: every approval is in the session file" 4 \
    "$(field "$state/sbx/sessions/shared.json" 'len(d["approvals"])')"
marker=$(approver after-concurrent denied)
for i in 1 2 3 4; do
    rm -f "$ws/c$i"
    "$SBX" run -p read-only -a on-failure --session shared --approver "$marker" -- touch "$ws/c$i" 2>/dev/null
done
is "concurrent: each approval is reused" 0 "$(asked after-concurrent)"
ok "concurrent: the retries ran" test -f "$ws/c1" -a -f "$ws/c2" -a -f "$ws/c3" -a -f "$ws/c4"

# 6. Rules: forbidden refuses before anything runs, allow skips the question.
cat >"$ws/forbid.json" <<'EOF'
{"rules": [{"pattern": ["touch"], "decision": "forbidden", "justification": "no new files"}]}
EOF
cat >"$ws/allow.json" <<'EOF'
{"rules": [{"pattern": ["touch"], "decision": "allow"},
           {"pattern": ["cp", ["-v", "-n"]], "decision": "allow"}]}
EOF
marker=$(approver rules-marker approved)
err=$("$SBX" run -p workspace-write -a on-failure --rules "$ws/forbid.json" --approver "$marker" -- touch "$ws/work/forbidden" 2>&1 >/dev/null)
status=$?
is "forbidden rule: exit 125" 125 "$status"
not_ok "forbidden rule: nothing ran" test -e "$ws/work/forbidden"
is "forbidden rule: one sbx: line" 1 "$(printf '%s\n' "$err" | grep -c '^sbx: ')"
ok "forbidden rule: the line names the rule and the reason" \
    bash -c '[[ $1 == *"rule 1 in $2"*"no new files"* ]]' _ "$err" "$ws/forbid.json"
is "forbidden rule: nobody was asked" 0 "$(asked rules-marker)"
"$SBX" run -p read-only -a never --rules "$ws/forbid.json" -- touch "$ws/work/forbidden" 2>/dev/null
is "forbidden rule: refuses under never too" 125 "$?"
printf '{"rules": [{"pattern": ["touch"], "decision": "forbidden"}]}' >"$ws/forbid-bare.json"
out=$("$SBX" run --json --max-output-bytes 100 -a never --rules "$ws/forbid-bare.json" -- touch "$ws/work/forbidden" 2>"$ws/err")
is "forbidden rule without a justification: the line, byte for byte" \
    "sbx: command forbidden by rule 1 in $ws/forbid-bare.json" "$(cat "$ws/err")"
is "  and --json's result tells the caps that would have applied" '{"keep":"both","max_bytes":100,"max_lines":256}' \
    "$(jq -c .output_cap <<<"$out")"
"$SBX" run -p read-only -a on-failure --rules "$ws/allow.json" --approver "$marker" -- touch "$ws/allowed" 2>/dev/null
is "allow rule: the retry ran" 0 "$?"
ok "allow rule: the file exists" test -f "$ws/allowed"
is "allow rule: the retry without the sandbox was still asked (issue 29)" "1 sandbox" "$(asked rules-marker) $(last_request rules-marker 'd["kind"]')"
echo data >"$ws/work/src"
"$SBX" run -p workspace-write -a untrusted --rules "$ws/allow.json" --approver "$marker" -- cp -n src dst 2>/dev/null
ok "allow rule with alternatives: cp ran under untrusted" test -f "$ws/work/dst"
is "allow rule with alternatives: nobody more was asked" 1 "$(asked rules-marker)"
cat >"$ws/prompt.json" <<'EOF'
{"rules": [{"pattern": ["echo"], "decision": "prompt", "justification": "echo is audited"}]}
EOF
"$SBX" run -p workspace-write -a on-failure --rules "$ws/prompt.json" --approver "$marker" -- bash -lc 'echo a && echo b' >/dev/null 2>&1
is "prompt rule on a plain script: asked" 2 "$(asked rules-marker)"
is "prompt rule: the request's kind" rules "$(last_request rules-marker 'd["kind"]')"
is "prompt rule: the justification is the reason" "echo is audited" "$(last_request rules-marker 'd["reason"]')"
"$SBX" run -p workspace-write -a never --rules "$ws/prompt.json" -- echo hi >/dev/null 2>&1
is "prompt rule under never: refused" 125 "$?"
"$SBX" run -p workspace-write -a on-failure --reject rules --rules "$ws/prompt.json" --approver "$marker" -- echo hi >/dev/null 2>&1
is "prompt rule with --reject rules: refused" 125 "$?"
is "prompt rule with --reject rules: nobody was asked" 2 "$(asked rules-marker)"
# Issue 17: a forbidden ["rm","-rf"] holds for a script with another part, for
# reordered or split flags and for /bin/rm; nothing is removed.
cat >"$ws/no-rm.json" <<'EOF'
{"rules": [{"pattern": ["rm", "-rf"], "decision": "forbidden", "justification": "no recursive deletes"}]}
EOF
marker=$(approver rm-marker approved)
# refuse_rm NAME ARGV...: sbx refuses ARGV with 125 and the file survives.
refuse_rm() {
    local name=$1 err status
    shift
    mkdir -p "$ws/work/victim" && echo keep >"$ws/work/victim/file"
    err=$("$SBX" run -p workspace-write -a on-failure --rules "$ws/no-rm.json" --approver "$marker" -- "$@" 2>&1 >/dev/null)
    status=$?
    is "forbidden rm -rf ($name): exit 125" 125 "$status"
    ok "forbidden rm -rf ($name): the file is still there" test -f "$ws/work/victim/file"
    ok "forbidden rm -rf ($name): the line gives the reason" bash -c '[[ $1 == *"no recursive deletes"* ]]' _ "$err"
}
refuse_rm "in a script after ls" bash -lc 'ls && rm -rf victim'
refuse_rm "flags reordered" rm -fr victim
refuse_rm "/bin/rm" /bin/rm -rf victim
refuse_rm "flags split" rm -r -f victim
refuse_rm "/usr/bin/bash, split and reordered" /usr/bin/bash -c 'ls; rm -f -r victim'
refuse_rm "a script that is not plain" bash -lc 'ls >/dev/null && rm -rf "$PWD/victim" 2>&1'
is "forbidden rm -rf: nobody was asked" 0 "$(asked rm-marker)"
"$SBX" run -p workspace-write -a never --rules "$ws/no-rm.json" -- rm -r victim 2>/dev/null
is "rm without -f is not forbidden: it ran" 0 "$?"
not_ok "rm without -f is not forbidden: the directory is gone" test -e "$ws/work/victim"
# A malformed rules file: 125 naming the file and the rule.
printf '{"rules": [{"pattern": ["ls"], "decision": "allow"}, {"pattern": [], "decision": "allow"}]}' >"$ws/bad.json"
err=$("$SBX" run --rules "$ws/bad.json" -- true 2>&1)
is "malformed rules: exit 125" 125 "$?"
is "malformed rules: the message" "sbx: --rules $ws/bad.json: rule 2: 'pattern' is empty" "$err"

# 7. untrusted: ls runs without asking, cp asks.
marker=$(approver untrusted-yes approved)
refuser=$(approver untrusted-no denied)
out=$("$SBX" run -p workspace-write -a untrusted --approver "$refuser" -- ls "$ws/work" 2>/dev/null)
is "untrusted: ls ran" 0 "$?"
ok "untrusted: ls printed the listing" bash -c '[[ $1 == *src* ]]' _ "$out"
"$SBX" run -p workspace-write -a untrusted --approver "$refuser" -- bash -lc 'ls && pwd' >/dev/null 2>&1
is "untrusted: a plain script of safe commands ran" 0 "$?"
is "untrusted: nobody was asked for ls" 0 "$(asked untrusted-no)"
err=$("$SBX" run -p workspace-write -a untrusted --approver "$refuser" -- cp src copy1 2>&1)
is "untrusted: a denied cp is refused with 125" 125 "$?"
is "untrusted: the refusal is one line" 1 "$(printf '%s\n' "$err" | wc -l | tr -d ' ')"
ok "untrusted: the line says who denied" bash -c '[[ $1 == "sbx: approval denied by --approver "* ]]' _ "$err"
not_ok "untrusted: the denied cp did not run" test -e "$ws/work/copy1"
is "untrusted: cp was asked about" untrusted "$(last_request untrusted-no 'd["kind"]')"
"$SBX" run -p workspace-write -a untrusted --approver "$marker" -- cp src copy2 2>/dev/null
is "untrusted: an approved cp runs" 0 "$?"
ok "untrusted: the approved cp copied" cmp "$ws/work/src" "$ws/work/copy2"
"$SBX" run -p workspace-write -a untrusted --approver "$refuser" -- bash -lc 'ls > listing' 2>/dev/null
is "untrusted: a redirection is not safe" 125 "$?"
not_ok "untrusted: the redirection did not run" test -e "$ws/work/listing"

# 8. --escalate under on-request: the approved command runs without the
#    sandbox from the start; a denied one does not run.
marker=$(approver esc-yes approved)
"$SBX" run -p read-only -a on-request --escalate --justification "needs to write outside" \
    --approver "$marker" --json -- touch "$ws/escalated" >"$ws/r8.json" 2>/dev/null
is "escalate: ran" 0 "$?"
ok "escalate: the file exists" test -f "$ws/escalated"
is "escalate: the request's kind" escalation "$(last_request esc-yes 'd["kind"]')"
is "escalate: the justification is the reason" "needs to write outside" "$(last_request esc-yes 'd["reason"]')"
is "escalate: escalated in the result" True "$(field "$ws/r8.json" 'd["escalated"]')"
is "escalate: no sandboxed attempt ran, none kept" False "$(field "$ws/r8.json" '"first_attempt" in d')"
"$SBX" run -p read-only -a on-request --escalate --approver "$refuser" -- touch "$ws/not-escalated" 2>/dev/null
is "escalate denied: 125" 125 "$?"
not_ok "escalate denied: nothing ran" test -e "$ws/not-escalated"
"$SBX" run -p read-only -a on-failure --escalate -- true 2>/dev/null
is "escalate outside on-request: 125" 125 "$?"

# 9. --reject sandbox: the retry prompt is refused without asking.
marker=$(approver reject-marker approved)
"$SBX" run -p read-only -a on-failure --reject sandbox --approver "$marker" -- touch "$ws/rejected" 2>/dev/null
is "reject sandbox: the failure stands" 1 "$?"
not_ok "reject sandbox: no file" test -e "$ws/rejected"
is "reject sandbox: nobody was asked" 0 "$(asked reject-marker)"

# 10. No approver and no terminal: denied.
setsid -w "$SBX" run -p read-only -a on-failure -- touch "$ws/no-tty" </dev/null >/dev/null 2>&1
is "no approver, no terminal: the failure stands" 1 "$?"
not_ok "no approver, no terminal: no file" test -e "$ws/no-tty"

# 11. A corrupt session file: 125, the file untouched; bad names refused.
printf '{"version": 1, "approvals": [' >"$state/sbx/sessions/broken.json"
err=$("$SBX" run -p read-only -a on-failure --session broken --approver "$yes_prog" -- touch "$ws/corrupt" 2>&1)
is "corrupt session: 125" 125 "$?"
ok "corrupt session: the message names the file" bash -c '[[ $1 == "sbx: session file "*"broken.json is corrupt"* ]]' _ "$err"
is "corrupt session: the file is untouched" '{"version": 1, "approvals": [' "$(cat "$state/sbx/sessions/broken.json")"
not_ok "corrupt session: nothing ran" test -e "$ws/corrupt"
"$SBX" run --session ../escape -- true 2>/dev/null
is "a session name with / is refused" 125 "$?"
"$SBX" run -a sometimes -- true 2>/dev/null
is "an unknown mode is refused" 125 "$?"

# --- text mode and --dry-run ---------------------------------------------------
outside=$(scratch)
chmod 755 "$outside"
rm -f "$outside/text-retry"
"$SBX" run -p read-only -a on-failure --approver "$yes_prog" -C "$ws" -- \
    sh -c "touch '$outside/text-retry'" >/dev/null 2>"$state/text-retry.err"
is "text mode: an approved retry created the file" yes "$([ -e "$outside/text-retry" ] && echo yes || echo no)"
ok "text mode: a note says the command ran again without the sandbox" \
    grep -qx "sbx: ran the command again without the sandbox, as approved" "$state/text-retry.err"
# A refused retry says who refused it, in text mode (byte for byte).
why="(sandbox: the command failed and the sandbox likely caused it; retry without the sandbox)"
"$SBX" run -p read-only -a on-failure --approver "$no_prog" -C "$ws" -- \
    sh -c "touch '$outside/denied-retry'" >/dev/null 2>"$state/denied-retry.err"
is "text mode: a retry the approver denied keeps the first status" 1 $?
is "... and says so" "sbx: not run again without the sandbox: approval denied by --approver $no_prog $why" \
    "$(tail -n 1 "$state/denied-retry.err")"
"$SBX" run -p read-only -a on-failure --reject sandbox -C "$ws" -- \
    sh -c "touch '$outside/denied-retry'" >/dev/null 2>"$state/denied-retry.err"
is "text mode: a retry refused by --reject says so" \
    "sbx: not run again without the sandbox: approval refused: --reject sandbox refuses this prompt $why" \
    "$(tail -n 1 "$state/denied-retry.err")"
setsid -w "$SBX" run -p read-only -a on-failure -C "$ws" -- \
    sh -c "touch '$outside/denied-retry'" </dev/null >/dev/null 2>"$state/denied-retry.err"
is "text mode: a retry with no one to ask says so" \
    "sbx: not run again without the sandbox: approval denied: no --approver and no terminal to ask on; use --approver PROGRAM $why" \
    "$(tail -n 1 "$state/denied-retry.err")"
is "... and none of them ran the command again" no "$([ -e "$outside/denied-retry" ] && echo yes || echo no)"
"$SBX" run -p read-only -a on-failure --approver "$no_prog" --json -C "$ws" -- \
    sh -c "touch '$outside/denied-retry'" >/dev/null 2>"$state/denied-retry.err"
is "--json: no such line (the result's approval says it)" "" "$(cat "$state/denied-retry.err")"

# A misspelled approver is refused before anything runs, not found after a denial.
rm -f "$outside/never"
"$SBX" run -p read-only -a on-failure --approver sbx-no-such-approver -C "$ws" -- \
    sh -c "touch '$outside/never'" >/dev/null 2>"$state/no-approver.err"
is "an --approver not on PATH is refused (125)" 125 $?
is "... with one line naming it" \
    "sbx: --approver: 'sbx-no-such-approver' is not an executable program on PATH; give its path, or fix the name" \
    "$(cat "$state/no-approver.err")"
is "... before anything ran" no "$([ -e "$outside/never" ] && echo yes || echo no)"
printf '{"rules":[{"pattern":[],"decision":"allow"}]}' >"$state/bad-rules.json"
"$SBX" run --dry-run --rules "$state/bad-rules.json" -- true >/dev/null 2>"$state/dry.err"
is "--dry-run still refuses a malformed rules file (125)" 125 $?
ok "... naming the file and the rule" grep -q "rules $state/bad-rules.json: rule 1" "$state/dry.err"

# --- issue 17: --json and --events when refused before anything ran -----------
# One JSON result (the schema of a run's result; nothing ran: sandbox and
# duration_ms null, exit_code 125) whose approval says what was asked, who
# answered and the refusal; the one sbx: line stays on stderr.
# fields FILE EXPR: field for a tuple of values, printed space-separated.
fields() { python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(" ".join(str(x) for x in eval(sys.argv[2])))' "$1" "$2"; }
keys() { python3 -c 'import json,sys; print(sorted(json.load(open(sys.argv[1])).keys()))' "$1"; }
"$SBX" run -p workspace-write --json -- true >"$state/ran.json" 2>/dev/null
refuser=$(approver refused-json denied)
rm -f "$ws/work/copy-json"
"$SBX" run -p workspace-write -a untrusted --approver "$refuser" --json -- cp src copy-json \
    >"$state/refused.json" 2>"$state/refused.err"
is "refused --json: exit 125" 125 $?
want="sbx: approval denied by --approver $refuser (untrusted: untrusted mode: the command is not known to be safe)"
is "refused --json: the one stderr line" "$want" "$(cat "$state/refused.err")"
is "refused --json: one line of JSON on stdout" 1 "$(wc -l <"$state/refused.json" | tr -d ' ')"
is "refused --json: the keys of a run's result" "$(keys "$state/ran.json")" "$(keys "$state/refused.json")"
is "refused --json: exit_code" 125 "$(field "$state/refused.json" 'd["exit_code"]')"
is "refused --json: nothing ran (sandbox, duration_ms, signal null)" "None None None" \
    "$(fields "$state/refused.json" 'd["sandbox"], d["duration_ms"], d["signal"]')"
is "refused --json: no output, not denied, not escalated" "'' '' 0 0 False [] False False" \
    "$(fields "$state/refused.json" 'repr(d["stdout"]), repr(d["stderr"]), d["stdout_bytes"], d["stderr_bytes"], d["sandbox_denied"], d["denials"], d["escalated"], d["timed_out"]')"
is "refused --json: the command and cwd" "['cp', 'src', 'copy-json'] $ws/work" \
    "$(fields "$state/refused.json" 'd["command"], d["cwd"]')"
is "refused --json: what was asked, who answered, what" "before untrusted approver $refuser denied" \
    "$(field "$state/refused.json" '" ".join(d["approval"]["requests"][0][k] for k in ("stage", "kind", "answered_by", "approver", "decision"))')"
is "refused --json: approval.refusal is the stderr line" "$want" \
    "$(field "$state/refused.json" '"sbx: " + d["approval"]["refusal"]')"
not_ok "refused --json: cp did not run" test -e "$ws/work/copy-json"
"$SBX" run -p workspace-write -a untrusted --approver "$refuser" --events -- cp src copy-json \
    >"$state/refused.events" 2>"$state/refused.err"
is "refused --events: exit 125" 125 $?
is "refused --events: the one stderr line" "$want" "$(cat "$state/refused.err")"
is "refused --events: only the end event" "end" \
    "$(python3 -c 'import json,sys; print(" ".join(json.loads(l)["type"] for l in open(sys.argv[1])))' "$state/refused.events")"
tail -n 1 "$state/refused.events" >"$state/refused-end.json"
is "refused --events: the end event's result" "125 None denied" \
    "$(fields "$state/refused-end.json" 'd["result"]["exit_code"], d["result"]["sandbox"], d["result"]["approval"]["requests"][0]["decision"]')"
# Every way of refusing: abort, a forbidden rule, --reject, a prompt rule
# under never, no approver and no terminal.
refused_json() {  # DESC ANSWERED_BY DECISION sbx-args...
    local desc=$1 by=$2 decision=$3 out
    shift 3
    out=$(setsid -w "$SBX" run --json "$@" </dev/null 2>"$state/refused.err")
    is "refused --json ($desc): 125" 125 $?
    printf '%s\n' "$out" >"$state/refused.json"
    is "refused --json ($desc): who answered, what" "$by $decision 125" \
        "$(fields "$state/refused.json" 'd["approval"]["requests"][0]["answered_by"], d["approval"]["requests"][0]["decision"], d["exit_code"]')"
    is "refused --json ($desc): the line is the refusal" "$(cat "$state/refused.err")" \
        "$(field "$state/refused.json" '"sbx: " + d["approval"]["refusal"]')"
}
refused_json abort approver abort -p workspace-write -a untrusted --approver "$abort_prog" -- cp src copy-json
refused_json "forbidden rule" rule denied -p workspace-write --rules "$ws/forbid.json" -- touch x
is "refused --json (forbidden rule): the rule" "forbidden no new files" \
    "$(fields "$state/refused.json" 'd["approval"]["requests"][0]["rule"]["decision"], d["approval"]["requests"][0]["rule"]["justification"]')"
refused_json "--reject rules" reject denied -p workspace-write -a on-failure --reject rules --rules "$ws/prompt.json" -- echo hi
refused_json "prompt rule under never" mode denied -p workspace-write --rules "$ws/prompt.json" -- echo hi
refused_json "no approver, no terminal" default-deny denied -p workspace-write -a untrusted -- cp src copy-json
not_ok "refused --json: none of them ran" test -e "$ws/work/copy-json"

# --- issue 29: the retry is always asked ---------------------------------------
# A yes to the sandboxed attempt (untrusted) does not cover the retry without
# the sandbox: that run is asked about on its own (stricter than Codex, whose
# orchestrator lets an approved command bypass the second question).
once=$(approver once approved)
rm -f "$outside/asked-once"
"$SBX" run -p read-only -a untrusted --approver "$once" --json -C "$ws" -- touch "$outside/asked-once" \
    >"$state/once.json" 2>/dev/null
is "asked twice: the approved retry ran" 0 $?
ok "asked twice: the file exists" test -f "$outside/asked-once"
is "asked twice: before the first attempt, then before the retry" "2 sandbox" \
    "$(asked once) $(last_request once 'd["kind"]')"
is "asked twice: the retry's answer" "retry approver approved" \
    "$(field "$state/once.json" '" ".join(d["approval"]["requests"][1][k] for k in ("stage", "answered_by", "decision"))')"
# Approved for the session: a later run's first prompt is answered by the
# cache; its retry is answered by the retry's own approval for the session.
session_once=$(approver session-once approved_for_session)
for i in 1 2; do
    rm -f "$outside/session-once"
    "$SBX" run -p read-only -a untrusted --session once --approver "$session_once" -C "$ws" -- \
        touch "$outside/session-once" 2>/dev/null
    is "session run $i: the retry ran" 0 $?
done
is "session: two questions for both runs (the first attempt's, the retry's)" 2 "$(asked session-once)"
# An untrusted yes followed by a no to the retry: the failure stands.
yes_no=$ws/bin/yes-then-no
printf '#!/bin/sh\ncat >>"%s"\nif [ "$(wc -l <"%s")" -le 1 ]; then echo approved; else echo denied; fi\n' \
    "$ws/log/yes-then-no" "$ws/log/yes-then-no" >"$yes_no"
chmod +x "$yes_no"
: >"$ws/log/yes-then-no"
rm -f "$outside/yes-no"
"$SBX" run -p read-only -a untrusted --approver "$yes_no" -C "$ws" -- touch "$outside/yes-no" 2>/dev/null
is "untrusted yes, retry no: the failure stands" 1 $?
not_ok "untrusted yes, retry no: nothing ran unsandboxed" test -e "$outside/yes-no"
is "untrusted yes, retry no: asked twice" 2 "$(asked yes-then-no)"
# --reject sandbox still refuses the retry of an approved command.
rm -f "$outside/asked-once"
"$SBX" run -p read-only -a untrusted --reject sandbox --approver "$once" --json -C "$ws" -- \
    touch "$outside/asked-once" >"$state/once.json" 2>/dev/null
is "--reject sandbox: the failure stands" 1 $?
is "--reject sandbox: refused by reject" reject \
    "$(field "$state/once.json" 'd["approval"]["requests"][1]["answered_by"]')"

# --- issue 29: nothing the command writes decides what runs outside --------------
# 1. An approver in the workspace is refused before anything runs: the
#    command could replace it (here it tries) and approve its own retry.
mkdir -p "$ws/w29"
w29=$(cd "$ws/w29" && pwd -P)
printf '#!/bin/sh\necho denied\n' >"$w29/approve.sh"
chmod +x "$w29/approve.sh"
rm -f "$outside/pwned-approver"
err=$(cd "$w29" && "$SBX" run -p workspace-write -a on-failure --approver ./approve.sh -- sh -c \
    'printf "#!/bin/sh\necho approved\n" > approve.sh; touch "$1"; exit 1' sh "$outside/pwned-approver" 2>&1 >/dev/null)
is "approver in a writable root: refused (125)" 125 $?
not_ok "approver in a writable root: nothing ran unsandboxed" test -e "$outside/pwned-approver"
ok "approver in a writable root: the program is unchanged" grep -q denied "$w29/approve.sh"
is "approver in a writable root: the line, byte for byte" \
    "sbx: --approver: $w29/approve.sh lies in $w29, which the sandboxed command may write, so the command could replace the program that judges it; install the approver outside every writable root (e.g. ~/.local/bin) and give that path" \
    "$err"
# ... also through a symlink from outside, and found on PATH.
ln -sf "$w29/approve.sh" "$ws/bin/linked-approver"
(cd "$w29" && "$SBX" run -p workspace-write -a on-failure --approver "$ws/bin/linked-approver" -- true 2>/dev/null)
is "approver linked from outside into a writable root: refused" 125 $?
(cd "$w29" && PATH="$w29:$PATH" "$SBX" run -p workspace-write -a on-failure --approver approve.sh -- true 2>/dev/null)
is "approver found on PATH in a writable root: refused" 125 $?

# 2. A session store in a writable root is refused: the command could write
#    an approval for itself there.
rm -f "$outside/pwned-session"
(cd "$w29" && XDG_STATE_HOME="$w29/state" "$SBX" run -p workspace-write -a on-failure --session forged \
    --approver "$no_prog" -- sh -c 'touch "$1"; exit 1' sh "$outside/pwned-session" 2>"$state/w29-session.err")
is "session store in a writable root: refused (125)" 125 $?
not_ok "session store in a writable root: nothing ran" test -e "$outside/pwned-session"
is "session store in a writable root: the line, byte for byte" \
    "sbx: --session: the session store $w29/state/sbx/sessions lies in $w29, which the sandboxed command may write, so it could approve itself; set XDG_STATE_HOME to a directory outside every writable root" \
    "$(cat "$state/w29-session.err")"

#    Nor can any sandboxed command write sbx's state directory: with the
#    workspace at $HOME it tries to forge an approval (computed with sbx
#    policy) for a later run in a project below, which must then be asked.
fh=$ws/fakehome
mkdir -p "$fh/proj"
fpolicy=$(cd "$fh/proj" && HOME="$fh" env -u XDG_STATE_HOME "$SBX" policy --json -p workspace-write)
forged=$(jq -cn --arg cwd "$(cd "$fh/proj" && pwd -P)" --arg out "$outside/pwned-forged" --argjson policy "$fpolicy" \
    '{version: 1, approvals: [{command: ["sh", "-c", "touch \"$1\"", "sh", $out], cwd: $cwd, policy: $policy, unsandboxed: true}]}')
(cd "$fh" && HOME="$fh" env -u XDG_STATE_HOME "$SBX" run -p workspace-write -- \
    sh -c 'mkdir -p .local/state/sbx/sessions && printf "%s" "$1" >.local/state/sbx/sessions/forged.json' sh "$forged" \
    2>/dev/null)
not_ok "workspace at \$HOME: the command cannot write sbx's state directory" \
    test -e "$fh/.local/state/sbx/sessions/forged.json"
ok "... which sbx made, so that it alone is held (0700)" test "$(stat -c %a "$fh/.local/state/sbx")" = 700
forge_no=$(approver forge-no denied)
rm -f "$outside/pwned-forged"
(cd "$fh/proj" && HOME="$fh" env -u XDG_STATE_HOME "$SBX" run -p workspace-write -a on-failure --session forged \
    --approver "$forge_no" -- sh -c 'touch "$1"' sh "$outside/pwned-forged" 2>/dev/null)
is "a later run's retry: the failure stands" 1 $?
not_ok "... nothing ran without the sandbox" test -e "$outside/pwned-forged"
is "... and its retry was asked" 1 "$(asked forge-no)"

# 3. An allow rule skips the prompt for the sandboxed attempt only: the retry
#    without the sandbox is asked (here denied), never run on the rule's word.
printf '{"rules": [{"pattern": ["sh"], "decision": "allow"}]}' >"$ws/allow-sh.json"
refuse29=$(approver refuse29 denied)
rm -f "$outside/pwned-rule"
"$SBX" run -p read-only -a on-failure --rules "$ws/allow-sh.json" --approver "$refuse29" -C "$ws" -- \
    sh -c 'touch "$1"' sh "$outside/pwned-rule" 2>/dev/null
is "allow rule: the failure stands" 1 $?
not_ok "allow rule: the retry did not run without the sandbox" test -e "$outside/pwned-rule"
is "allow rule: the retry was asked" "1 sandbox" "$(asked refuse29) $(last_request refuse29 'd["kind"]')"
# ... nor an --escalate.
"$SBX" run -p read-only -a on-request --escalate --rules "$ws/allow-sh.json" --approver "$refuse29" -C "$ws" -- \
    sh -c 'touch "$1"' sh "$outside/pwned-rule" 2>/dev/null
is "allow rule, --escalate: refused (125)" 125 $?
not_ok "allow rule, --escalate: nothing ran" test -e "$outside/pwned-rule"
is "allow rule, --escalate: asked" "2 escalation" "$(asked refuse29) $(last_request refuse29 'd["kind"]')"

# 4. The approver's request holds every string from the command's side
#    escaped: control bytes and bidi overrides as \uXXXX (JSON, ASCII only).
spoof=$(approver spoof denied)
"$SBX" run -p read-only -a on-failure --approver "$spoof" -C "$ws" -- \
    sh -c 'touch "$1"' "$(printf 'x\342\200\256\033[2J')" "$outside/$(printf 'a\342\200\256b')" 2>/dev/null
is "the prompted run: the failure stands" 1 $?
ok "the approver's request is ASCII" bash -c '! LC_ALL=C grep -q "[^ -~]" "$1"' _ "$ws/log/spoof"
ok "... with the override and ESC escaped" grep -qF 'x\u202e\u001b[2J' "$ws/log/spoof"

# 5. Forbidden rules match what will run, not its spelling.
printf '{"rules": [{"pattern": ["rm", "-rf"], "decision": "forbidden"}]}' >"$ws/no-rm-rf.json"
mkdir -p "$ws/work/victim"
spelt() {  # DESC ARGV...: refused, and the victim is still there
    local desc=$1
    shift
    "$SBX" run -p workspace-write -a on-failure --rules "$ws/no-rm-rf.json" -- "$@" 2>/dev/null
    is "forbidden rm -rf, $desc: refused (125)" 125 $?
    ok "forbidden rm -rf, $desc: the victim is still there" test -d "$ws/work/victim"
}
spelt "as /usr/bin//rm" /usr/bin//rm -rf victim
spelt "as /bin/./rm" /bin/./rm -rf victim
spelt "through env" env -i A=1 rm -rf victim
spelt "through timeout" timeout -s KILL 5 rm -rf victim
spelt "as a glob in a script" sh -c '/bin/r[m] -rf victim'
spelt "as a glob over directories" sh -c '/usr/*/rm -rf victim'
spelt "through command in a script" sh -c 'command rm -rf victim'
spelt "quoted in a script" sh -c "'r'm -rf victim"
ln -sf "$(command -v rm)" "$ws/bin/not-rm"
spelt "through a symlink named otherwise" "$ws/bin/not-rm" -rf victim
if command -v busybox >/dev/null; then
    spelt "through busybox" busybox rm -rf victim
else
    skip "forbidden rm -rf, through busybox" "no busybox on this machine"
fi

# --- issue 17: --approver-timeout ----------------------------------------------
printf '#!/bin/sh\necho $$ >"%s"\ncat >/dev/null\nsleep 30 & wait\necho approved\n' "$ws/log/slow.pid" >"$ws/bin/silent"
chmod +x "$ws/bin/silent"
rm -f "$outside/timeout"
"$SBX" run -p read-only -a on-failure --approver "$ws/bin/silent" --approver-timeout 0.3 -C "$ws" -- \
    touch "$outside/timeout" >/dev/null 2>"$state/timeout.err"
is "--approver-timeout 0.3: the failure stands" 1 $?
is "--approver-timeout 0.3: denied, and why (byte for byte)" \
    "sbx: not run again without the sandbox: approval denied by --approver $ws/bin/silent: no answer within 300 ms; killed $why" \
    "$(tail -n 1 "$state/timeout.err")"
not_ok "--approver-timeout 0.3: the approver is gone" kill -0 "$(cat "$ws/log/slow.pid")"
# 0: no limit; an approver slower than the 300 ms above answers.
printf '#!/bin/sh\ncat >/dev/null\nsleep 1\necho approved\n' >"$ws/bin/patient"
chmod +x "$ws/bin/patient"
"$SBX" run -p read-only -a on-failure --approver "$ws/bin/patient" --approver-timeout 0 -C "$ws" -- \
    touch "$outside/timeout" >/dev/null 2>&1
is "--approver-timeout 0: the slow approver's approval counts" 0 $?
ok "--approver-timeout 0: the retry ran" test -f "$outside/timeout"
for bad in "-1|'-1' is negative; give a duration such as 500ms, 10s, 2m, 1h" \
           "abc|'abc' is not a duration (examples: 500ms, 10s, 2m, 1h; a bare number is seconds)"; do
    "$SBX" run -a on-failure --approver "$yes_prog" --approver-timeout "${bad%%|*}" -- true 2>"$state/bad.err"
    is "--approver-timeout ${bad%%|*}: 125" 125 $?
    is "--approver-timeout ${bad%%|*}: the message" "sbx: --approver-timeout: ${bad#*|}" "$(cat "$state/bad.err")"
done
"$SBX" run -a on-failure --approver-timeout 10 -- true 2>"$state/bad.err"
is "--approver-timeout without --approver: 125" 125 $?
is "--approver-timeout without --approver: the message" \
    "sbx: --approver-timeout: only with --approver (the terminal prompt waits for its answer)" "$(cat "$state/bad.err")"

# --- issue 17: external-sandbox's network restriction is sbx's to lift ----------
# The command opens an INET socket (refused by sbx's seccomp filter under
# -n restricted), then records whether the network marker was set.
net_cmd=(python3 -c 'import os, socket, sys
socket.socket(socket.AF_INET, socket.SOCK_STREAM).close()
open(sys.argv[1], "w").write(os.environ.get("SBX_SANDBOX_NETWORK_DISABLED", "unset"))')
net_yes=$(approver net-yes approved)
rm -f "$outside/net"
"$SBX" run -p external-sandbox -n restricted -a on-failure --approver "$net_yes" --json -C "$ws" -- \
    "${net_cmd[@]}" "$outside/net" >"$state/net.json" 2>/dev/null
is "external-sandbox: the approved retry ran" 0 $?
is "external-sandbox: with the network (no marker)" unset "$(cat "$outside/net" 2>/dev/null)"
is "external-sandbox: asked about the sandbox kind, with the reason" \
    "sandbox the command failed and sbx's network restriction likely caused it; retry without it (with the full network; the outer sandbox stays)" \
    "$(last_request net-yes 'd["kind"] + " " + d["reason"]')"
is "external-sandbox: escalated, still external-sandbox in the result" "True external-sandbox linux" \
    "$(fields "$state/net.json" 'd["escalated"], d["policy"]["mode"], d["sandbox"]')"
rm -f "$outside/net"
"$SBX" run -p external-sandbox -a on-failure --approver "$net_yes" -C "$ws" -- \
    "${net_cmd[@]}" "$outside/net" >/dev/null 2>"$state/net.err"
is "external-sandbox, text mode: the note (byte for byte)" \
    "sbx: ran the command again without sbx's network restriction, as approved" "$(tail -n 1 "$state/net.err")"
rm -f "$outside/net"
"$SBX" run -p external-sandbox -a on-failure --approver "$no_prog" -C "$ws" -- \
    "${net_cmd[@]}" "$outside/net" >/dev/null 2>"$state/net.err"
is "external-sandbox, denied: the first status" 1 $?
is "external-sandbox, denied: who refused (byte for byte)" \
    "sbx: not run again without sbx's network restriction: approval denied by --approver $no_prog (sandbox: the command failed and sbx's network restriction likely caused it; retry without it (with the full network; the outer sandbox stays))" \
    "$(tail -n 1 "$state/net.err")"
not_ok "external-sandbox, denied: nothing written" test -e "$outside/net"
# With -n full sbx restricts nothing it could lift: no retry, and why.
before=$(asked net-yes)
"$SBX" run -p external-sandbox -n full -a on-failure --approver "$net_yes" --json -C "$ws" -- \
    sh -c 'echo "x: Operation not permitted" >&2; exit 1' >"$state/net.json" 2>/dev/null
is "external-sandbox -n full: no retry, nobody asked" "1 $before" "$(field "$state/net.json" 'd["exit_code"]') $(asked net-yes)"
is "external-sandbox -n full: the sandbox likely denied it" True "$(field "$state/net.json" 'd["sandbox_denied"]')"
is "external-sandbox -n full: why not" \
    "the external-sandbox policy with -n full has no restriction that sbx could lift (the filesystem sandbox is the outer one's)" \
    "$(field "$state/net.json" 'd["approval"].get("retry")')"

# --- issue 17: --dry-run --escalate shows both plans ----------------------------
"$SBX" run --dry-run -p read-only -a on-request --escalate -C "$ws" -- touch x >"$state/dry.json"
is "--dry-run --escalate: exit 0" 0 $?
is "--dry-run --escalate: argv is the sandboxed plan" "$SBX_LINUX_SANDBOX_EXE x linux" \
    "$(fields "$state/dry.json" 'd["argv"][0], d["argv"][-1], d["env"]["SBX_SANDBOX"]')"
is "--dry-run --escalate: escalation.if_approved is the unsandboxed plan" "['touch', 'x'] none $ws" \
    "$(fields "$state/dry.json" 'd["escalation"]["if_approved"]["argv"], d["escalation"]["if_approved"]["env"]["SBX_SANDBOX"], d["escalation"]["if_approved"]["cwd"]')"
is "--dry-run --escalate: escalation.if_refused" "nothing runs (exit 125)" \
    "$(field "$state/dry.json" 'd["escalation"]["if_refused"]')"
"$SBX" run --dry-run --json -p read-only -a on-request --escalate -C "$ws" -- touch x >"$state/dry2.json"
ok "--dry-run --escalate --json: the same bytes" cmp "$state/dry.json" "$state/dry2.json"
"$SBX" run --dry-run -p read-only -C "$ws" -- touch x >"$state/dry3.json"
is "--dry-run without --escalate: no escalation key" False "$(field "$state/dry3.json" '"escalation" in d')"
"$SBX" run --dry-run -p external-sandbox -a on-request --escalate -C "$ws" -- touch x >"$state/dry.json"
is "--dry-run --escalate, external-sandbox: if approved, the full network" "restricted full False" \
    "$(fields "$state/dry.json" 'json.loads(d["argv"][d["argv"].index("--sandbox-policy") + 1])["network"], json.loads(d["escalation"]["if_approved"]["argv"][d["escalation"]["if_approved"]["argv"].index("--sandbox-policy") + 1])["network"], "SBX_SANDBOX_NETWORK_DISABLED" in d["escalation"]["if_approved"]["env"]')"
"$SBX" run --dry-run -p danger-full-access -a on-request --escalate -C "$ws" -- touch x >"$state/dry.json"
is "--dry-run --escalate, danger-full-access: a note, one plan" \
    "--escalate has no effect: the danger-full-access policy has no sandbox that sbx could lift; the plan above runs" \
    "$(field "$state/dry.json" 'd["escalation"]["note"]')"

done_testing
