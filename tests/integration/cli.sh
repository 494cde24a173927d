#!/usr/bin/env bash
# The command line: sbx policy, sbx check, --help/--version, and bad input
# (exit 125, one "sbx: " line, nothing changed).
. "$(dirname "$0")/lib.sh"
src=$(cd "$(dirname "$0")/../.." && pwd)

ws=$(scratch)
mkdir -p "$ws/repo/.git/hooks" "$ws/extra"
ln -s "$ws/extra" "$ws/extra-link"
cd "$ws/repo" || exit 1

# One line on stderr starting with "sbx: ", exit 125, nothing on stdout.
refuses() {
    local desc=$1 want=$2; shift 2
    local out err status
    out=$("$@" 2>"$ws/err"); status=$?
    err=$(cat "$ws/err")
    if [ "$status" = 125 ] && [ -z "$out" ] && [ "$(printf '%s\n' "$err" | wc -l)" = 1 ] &&
        [[ $err == "sbx: "* ]] && [[ $err == *"$want"* ]]; then
        _tap_result ok "$desc"
    else
        _tap_result fail "$desc" "status $status, stdout '$out', stderr '$err' (wanted '$want')"
    fi
}

# sbx policy --json: the canonical policy.
json=$("$SBX" policy --json -p workspace-write -w "$ws/extra-link")
is "policy --json names the mode" workspace-write "$(python3 -c 'import json,sys; print(json.load(sys.stdin)["mode"])' <<<"$json")"
is "writable roots are symlink-resolved" "$ws/extra" \
    "$(python3 -c 'import json,sys; print(*[e["path"] for e in json.load(sys.stdin)["entries"] if e.get("path","").endswith("/extra")])' <<<"$json")"
is "the workspace's .git is protected" yes \
    "$(python3 -c 'import json,sys; d=json.load(sys.stdin); print("yes" if any("'"$ws"'/repo/.git" in w["protected"] for w in d["writable"]) else "no")' <<<"$json")"

# Printing a policy file's canonical JSON and reading it back is the identity.
printf '%s\n' "$json" >"$ws/policy.json"
again=$("$SBX" policy --json --policy-file "$ws/policy.json")
is "policy file round trip is the identity" "$json" "$again"
again=$(SBX_POLICY_FILE="$ws/policy.json" "$SBX" policy --json)
is "\$SBX_POLICY_FILE is read" "$json" "$again"
printf '{"mode":"workspace-write"}' >"$ws/partial.json"
ok "a partial policy file takes defaults" bash -c "'$SBX' policy --json --policy-file '$ws/partial.json' | grep -q '\"network\": \"restricted\"'"
is "flags override the file" read-only \
    "$("$SBX" policy --json --policy-file "$ws/partial.json" -p read-only | python3 -c 'import json,sys; print(json.load(sys.stdin)["mode"])')"
ok "Codex SandboxPolicy JSON is accepted" bash -c "'$SBX' policy --json --policy-json '{\"type\":\"workspace-write\",\"network_access\":true}' | grep -q '\"network\": \"full\"'"
ok "text form lists the read-only protected paths" bash -c "'$SBX' policy -p workspace-write | grep -q 'read-only: $ws/repo/.git'"

# Bad input: exit 125, one line naming the flag or file and the cause.
refuses "bad mode" "--policy: 'sideways' is not a mode" "$SBX" policy -p sideways
refuses "bad network" "--network: 'some'" "$SBX" policy -n some
refuses "unknown JSON key" "unknown key 'colour'" "$SBX" policy --policy-json '{"colour":"red"}'
refuses "wrongly typed JSON" "key 'mode': expected a string, got a number" "$SBX" policy --policy-json '{"mode":5}'
refuses "malformed JSON" "--policy-json: invalid JSON" "$SBX" policy --policy-json '{"mode":'
refuses "danger-full-access with a restricted network points to external-sandbox" "external-sandbox" \
    "$SBX" policy -p danger-full-access -n restricted
refuses "missing policy file" "--policy-file $ws/none.json: cannot read" "$SBX" policy --policy-file "$ws/none.json"
refuses "relative writable root whose parent does not exist" "--writable-root: no-such-dir/sub: no such directory" \
    "$SBX" policy -p workspace-write -w no-such-dir/sub
refuses "unknown flag" "--frobnicate" "$SBX" policy --frobnicate
refuses "contradictory output formats" "--json and --events" "$SBX" run --json --events -- true
refuses "bad timeout" "--timeout: 'soon'" "$SBX" run -t soon -- true
refuses "bad size" "--limit-memory: 'lots'" "$SBX" run --limit-memory lots -- true
refuses "no command" "no command given" "$SBX" run -p read-only
refuses "--target-os without --dry-run" "--target-os: only with --dry-run" "$SBX" run --target-os macos -- true
refuses "--record-denials with --no-record-denials" "--record-denials and --no-record-denials: choose one" \
    "$SBX" run --record-denials --no-record-denials -- true
refuses "--explain without the recorder" "--explain needs the recorded denials" \
    "$SBX" run --explain --no-record-denials -- true
refuses "a policy file whose derived keys disagree" "key 'writable' does not match" \
    "$SBX" policy --policy-json "$(sed 's/"\/dev\/null"/"\/dev\/zero"/' "$ws/policy.json")"
ok "refusals changed nothing in the workspace" test -z "$(find "$ws/repo" -newer "$ws/policy.json" -mindepth 1 -not -path '*/.git*')"

# sbx check
"$SBX" check -p workspace-write --write "$ws/repo/src/a.c" --read /etc/passwd >"$ws/out"
is "check: all allowed exits 0" 0 $?
grep -q "^allowed  write    $ws/repo/src/a.c  (write $ws/repo (workspace-write preset: the workspace))" "$ws/out"
is "check names the deciding rule" 0 $?
"$SBX" check -p workspace-write --write .git/hooks/pre-commit --write /etc/passwd --connect 127.0.0.1:80 >"$ws/out"
is "check: any denied exits 1" 1 $?
is "check answers in command-line order" "write write connect" "$(awk '{print $2}' "$ws/out" | xargs)"
ok "a protected path is denied by the protected rule" grep -q "denied   write    $ws/repo/.git/hooks/pre-commit  (protected name .git in $ws/repo; allow with --unprotect .git)" "$ws/out"
ok "check --json: -n limited does not reach the host's loopback (issue 35)" bash -c "'$SBX' check --json -n limited --connect localhost:8080 | python3 -c 'import json,sys; a=json.load(sys.stdin)[0]; assert not a[\"allowed\"] and \"out of reach\" in a[\"rule\"]'"

# The exit status and the whole of stderr, for a command that prints nothing
# on stdout: "125 sbx: ...", compared byte for byte.
answer() {
    local out err status
    out=$("$@" 2>"$ws/err"); status=$?
    err=$(cat "$ws/err")
    [ -z "$out" ] || err="stdout '$out'; $err"
    printf '%s %s' "$status" "$err"
}

# -t 0 means no timeout, as with timeout(1).
for zero in 0 0s 0ms; do
    out=$("$SBX" run -t "$zero" -- sh -c 'sleep 0.2; echo done' 2>"$ws/err"); status=$?
    is "-t $zero means no timeout" "0 done " "$status $out $(cat "$ws/err")"
done

# Writable roots only mean something in workspace-write.
is "-w under the default read-only is refused" \
    "125 sbx: --writable-root: writable roots need -p workspace-write (the policy is read-only)" \
    "$(answer "$SBX" policy -w "$ws/extra")"
is "-w with -p read-only is refused" \
    "125 sbx: --writable-root: writable roots need -p workspace-write (the policy is read-only)" \
    "$(answer "$SBX" run -p read-only -w "$ws/extra" -- true)"
is "-w with danger-full-access is refused" \
    "125 sbx: --writable-root: danger-full-access makes everything writable already, so writable roots add nothing; drop them, or use -p workspace-write to write only there" \
    "$(answer "$SBX" run -p danger-full-access -w "$ws/extra" -- true)"
is "-w with external-sandbox is refused" \
    "125 sbx: --writable-root: external-sandbox leaves the filesystem to the sandbox outside sbx, so writable roots add nothing; drop them, or use -p workspace-write to write only there" \
    "$(answer "$SBX" policy -p external-sandbox -w "$ws/extra")"
printf '{"mode":"read-only","writable_roots":["%s"]}' "$ws/extra" >"$ws/ro-roots.json"
is "a policy file with read-only and writable_roots is refused" \
    "125 sbx: --policy-file $ws/ro-roots.json: key 'writable_roots': writable roots need mode workspace-write (the policy is read-only, from --policy-file $ws/ro-roots.json: key 'mode')" \
    "$(answer "$SBX" policy --policy-file "$ws/ro-roots.json")"
printf '{"writable_roots":["%s"]}' "$ws/extra" >"$ws/roots.json"
is "a policy file's writable_roots under the default mode are refused" \
    "125 sbx: --policy-file $ws/roots.json: key 'writable_roots': writable roots need -p workspace-write (the policy is read-only)" \
    "$(answer "$SBX" policy --policy-file "$ws/roots.json")"
is "a policy file's writable_roots with -p workspace-write are taken" "$ws/extra" \
    "$("$SBX" policy --json --policy-file "$ws/roots.json" -p workspace-write | python3 -c 'import json,sys; print(*[w["path"] for w in json.load(sys.stdin)["writable"] if w["path"].endswith("/extra")])')"
is "Codex read-only JSON with -w is refused" \
    "125 sbx: --writable-root: writable roots need mode workspace-write (the policy is read-only, from --policy-json: key 'type')" \
    "$(answer "$SBX" policy --policy-json '{"type":"read-only"}' -w "$ws/extra")"

# The command word.
is "no command" "125 sbx: no command given (commands: run, learn, policy, check, doctor, trust); see sbx --help" "$(answer "$SBX")"
is "an unknown command" \
    "125 sbx: unknown command 'frobnicate' (commands: run, learn, policy, check, doctor, trust); see sbx --help" \
    "$(answer "$SBX" frobnicate)"
is "a policy option before the command" \
    "125 sbx: -p: options go after the command: sbx run -p workspace-write -- ..." \
    "$(answer "$SBX" -p workspace-write run ls)"
is "an option of doctor before it" "125 sbx: --json: options go after the command: sbx doctor --json" \
    "$(answer "$SBX" --json doctor)"
is "an option no command has" "125 sbx: --frobnicate: not an option of sbx nor of sbx run; see sbx --help" \
    "$(answer "$SBX" --frobnicate run ls)"

# Numeric options: negative numbers and garbage, named as such.
neg="is negative; give a whole number, 0 or more"
is "--max-output-bytes -5" "125 sbx: --max-output-bytes: '-5' $neg" "$(answer "$SBX" run --max-output-bytes -5 -- true)"
is "--max-output-bytes abc" "125 sbx: --max-output-bytes: 'abc' is not a whole number" \
    "$(answer "$SBX" run --max-output-bytes abc -- true)"
is "--max-output-lines -1" "125 sbx: --max-output-lines: '-1' $neg" "$(answer "$SBX" run --max-output-lines -1 -- true)"
is "--max-output-lines 1x" "125 sbx: --max-output-lines: '1x' is not a whole number" \
    "$(answer "$SBX" run --max-output-lines 1x -- true)"
is "--limit-procs -2" "125 sbx: --limit-procs: '-2' $neg" "$(answer "$SBX" policy --limit-procs -2)"
is "--limit-cpu abc" "125 sbx: --limit-cpu: 'abc' is not a whole number" "$(answer "$SBX" policy --limit-cpu abc)"
is "--limit-open-files -1" "125 sbx: --limit-open-files: '-1' $neg" "$(answer "$SBX" policy --limit-open-files -1)"
is "--limit-memory -1G" "125 sbx: --limit-memory: '-1G' is negative; give a size such as 4096, 100k, 512M, 2G" \
    "$(answer "$SBX" policy --limit-memory -1G)"
is "--limit-file-size abc" "125 sbx: --limit-file-size: 'abc' is not a size (examples: 4096, 100k, 512M, 2G)" \
    "$(answer "$SBX" policy --limit-file-size abc)"
is "-t -1" "125 sbx: --timeout: '-1' is negative; give a duration such as 500ms, 10s, 2m, 1h" \
    "$(answer "$SBX" run -t -1 -- true)"
is "-t abc" "125 sbx: --timeout: 'abc' is not a duration (examples: 500ms, 10s, 2m, 1h; a bare number is seconds)" \
    "$(answer "$SBX" run -t abc -- true)"
out=$("$SBX" run --max-output-bytes 0 --max-output-lines 0 -- echo fine)
is "--max-output-bytes 0 --max-output-lines 0 are accepted" "0 fine" "$? $out"

# --help, --version
is "run --help: the usage names the command" "Usage: sbx run [OPTIONS] -- COMMAND [ARG...]" \
    "$("$SBX" run --help | grep '^Usage')"
is "policy --help ends with its own exit status" \
    "Exit status: 0 the policy was printed; 125 sbx refused (one line on stderr starting with
'sbx: ').  See sbx(1)." "$("$SBX" policy --help | tail -n 2)"
is "check --help ends with its own exit status" \
    "Exit status: 0 every query is allowed; 1 any is denied; 125 sbx refused (one line on stderr
starting with 'sbx: ').  See sbx(1)." "$("$SBX" check --help | tail -n 2)"
is "doctor --help ends with its own exit status" \
    "Exit status: 0 every mode is enforced on this machine; 1 otherwise.  See sbx(1)." \
    "$("$SBX" doctor --help | tail -n 1)"
is "run --help ends with the exit status of sbx run" "cannot be executed; 127 it is not found.  See sbx(1)." \
    "$("$SBX" run --help | tail -n 1)"
for cmd in run policy check doctor; do
    ok "sbx.1 has a section for sbx $cmd" grep -qx ".SS sbx $cmd" "$src/man/sbx.1"
done
ok "--version" bash -c "'$SBX' --version | grep -qx 'sbx [0-9.]*'"
for flag in --policy --network --writable-root --workspace --exclude-slash-tmp --exclude-tmpdir-env-var \
    --protect --unprotect --allow-unprotected --policy-file --policy-json --limit-memory --limit-cpu \
    --limit-procs --limit-file-size --limit-open-files --cwd --timeout --max-output-bytes --max-output-lines \
    --no-output-cap --cap-live --json --events --env --unset-env --clear-env --stdin --dry-run --target-os \
    --ask-for-approval --reject --approver --approver-timeout --session --rules --escalate --justification \
    --keep --read-only --deny --deny-glob --minimal; do
    "$SBX" run --help | grep -q -- "$flag" || { _tap_result fail "run --help explains $flag"; continue; }
    grep -qF -- "${flag//-/\\-}" "$src/man/sbx.1" || { _tap_result fail "sbx.1 documents $flag"; continue; }
    cat "$src/README.md" "$src"/docs/*.md | grep -q -- "$flag" ||
        { _tap_result fail "README.md or docs/*.md mentions $flag"; continue; }
    _tap_result ok "$flag is in run --help, sbx.1 and README.md or docs/"
done

# A writable root that does not exist yet is made (its last component, where
# this user may), as on a fresh CI runner without ~/.cache/pip; --dry-run
# says so and makes nothing; ~ in a policy file is $HOME.
roots=$(scratch)
is "--dry-run names the writable root it would make" '["'"$roots"'/pip"]' \
    "$("$SBX" run --dry-run -p workspace-write -w "$roots/pip" -- true | python3 -c 'import json,sys; print(json.dumps(json.load(sys.stdin)["makes"]))')"
ok "... and makes nothing" test ! -e "$roots/pip"
is "sbx policy says sbx run makes it" "note: $roots/pip does not exist yet; sbx run makes it" \
    "$("$SBX" policy -p workspace-write -w "$roots/pip" | tail -n 1)"
ok "... and makes nothing" test ! -e "$roots/pip"
"$SBX" run -p workspace-write -w "$roots/pip" -- sh -c "echo cached > '$roots/pip/f'"
is "sbx run makes the missing writable root, and the command writes in it" "cached" "$(cat "$roots/pip/f" 2>&1)"
is "a root whose parent is missing is refused (125), nothing made" "125 sbx: --writable-root: $roots/a/b: no such directory" \
    "$(err=$("$SBX" run -p workspace-write -w "$roots/a/b" -- true 2>&1); echo "$? $err")"
ok "... nothing made" test ! -e "$roots/a"
printf '{"mode":"workspace-write","writable_roots":["~/.cache/sbx-test"]}' > "$roots/p.json"
mkdir "$roots/home"
HOME=$roots/home "$SBX" run --policy-file "$roots/p.json" -- sh -c 'echo home > ~/.cache/sbx-test/f' 2>/dev/null
is "~ in a policy file is \$HOME (its parent missing: refused)" "<none>" "$(cat "$roots/home/.cache/sbx-test/f" 2>/dev/null || echo '<none>')"
mkdir "$roots/home/.cache"
HOME=$roots/home "$SBX" run --policy-file "$roots/p.json" -- sh -c 'echo home > ~/.cache/sbx-test/f'
is "~ in a policy file is \$HOME, and the missing root is made there" "home" "$(cat "$roots/home/.cache/sbx-test/f" 2>&1)"
is "~ without \$HOME is refused with the fix" \
    "sbx: --policy-file $roots/p.json: key 'writable_roots': '~/.cache/sbx-test': ~ needs \$HOME set to an absolute path; write the path in full" \
    "$(env -u HOME "$SBX" run --policy-file "$roots/p.json" -- true 2>&1)"
if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null; then
    chmod 755 "$roots"
    is "a root this user may not make is refused before anything runs" \
        "125 sbx: writable root $roots/nobody: no such directory, and this user cannot make it in $roots: Permission denied; make it first" \
        "$(err=$(cd / && setpriv --reuid 65534 --regid 65534 --clear-groups "$SBX" run -p workspace-write -w "$roots/nobody" -- true 2>&1); echo "$? $err")"
else
    skip "a root this user may not make is refused" "not root"
fi

# A path that is not UTF-8 cannot travel in the policy's JSON: one clear
# refusal before anything runs, for a -w root (existing or to be made), the
# workspace and an entry; the bytes come back as \xHH.  A command argument
# that is not UTF-8 is only bytes to pass on, and runs.
bad=$'\xff'
mkdir -p "$ws/latin-$bad"
is "a -w root that is not UTF-8 is refused" \
    "125 sbx: write $ws/latin-\\xFF (--writable-root): the path $ws/latin-\\xFF is not valid UTF-8; sbx passes the policy to its helper and reports results as JSON, which holds UTF-8 only: rename it, or leave it out of the policy" \
    "$(answer "$SBX" run -p workspace-write -w "$ws/latin-$bad" -- touch "$ws/latin-$bad/made")"
not_ok "nothing ran under the refused -w root" test -e "$ws/latin-$bad/made"
refuses "a -w root to be made that is not UTF-8 is refused" "is not valid UTF-8" \
    "$SBX" run -p workspace-write -w "$ws/new-$bad" -- true
not_ok "the refused root was not made" test -e "$ws/new-$bad"
refuses "a workspace that is not UTF-8 is refused" "workspace (--cwd or the current directory): the path $ws/latin-\\xFF is not valid UTF-8" \
    "$SBX" run -p workspace-write --cwd "$ws/latin-$bad" -- true
refuses "a --deny path that is not UTF-8 is refused" "is not valid UTF-8" "$SBX" run --deny "$ws/latin-$bad" -- true
refuses "sbx policy refuses it too" "is not valid UTF-8" "$SBX" policy --json -p workspace-write -w "$ws/latin-$bad"
is "a command argument that is not UTF-8 runs, its bytes unchanged" "61ff62" \
    "$("$SBX" run -- printf 'a%sb' "$bad" | od -An -tx1 | tr -d ' \n')"
is "exec of a path that is not UTF-8 fails as a command, not as sbx" 126 \
    "$("$SBX" run -- "$ws/latin-$bad" 2>/dev/null; echo $?)"

# --json and --events: a refusal before the command runs is still one
# result (one end event), exit 125, the message as "error"; stderr has the
# one line (issue 35).
echo '{"bogus": 1}' >"$ws/bad-policy.json"
refused_result() {  # DESC FORMAT WANT sbx-run-args...
    local desc=$1 format=$2 want=$3; shift 3
    local out err status
    out=$("$SBX" run "$format" "$@" 2>"$ws/err"); status=$?
    err=$(cat "$ws/err")
    local got
    got=$(printf '%s' "$out" | python3 -c '
import json, sys
lines = sys.stdin.read().splitlines()
assert len(lines) == 1, lines
o = json.loads(lines[0])
if "type" in o:
    assert o["type"] == "end", o
    o = o["result"]
print(o["exit_code"], o["sandbox"], o["policy"], o["command"], "|", o["error"])' 2>&1)
    if [ "$status" = 125 ] && [[ $got == "125 None None ['true'] | "*"$want"* ]] && [[ $err == "sbx: "*"$want"* ]] &&
        [ "$(printf '%s\n' "$err" | wc -l)" = 1 ]; then
        _tap_result ok "$desc"
    else
        _tap_result fail "$desc" "status $status, result '$got', stderr '$err'"
    fi
}
refused_result "--json: a bad -p gives one result" --json "is not a mode" -p bogus -- true
refused_result "--events: -t -5 gives one end event" --events "is negative" -t -5 -- true
refused_result "--json: an unknown key in a policy file" --json "unknown key 'bogus'" --policy-file "$ws/bad-policy.json" -- true
refused_result "--events: a missing --rules file" --events "cannot read the file" --rules "$ws/none.rules" -- true
SBX_LINUX_SANDBOX_EXE=$ws/no-helper refused_result "--json: a missing helper" --json "not an executable file" \
    -p workspace-write -- true

# The README's install line (its quick start, the first apt-get install -y)
# and CI's package list agree.
readme_pkgs=$(grep -o 'apt-get install -y [^&]*' "$src/README.md" | head -n 1 | sed 's/apt-get install -y //' | tr ' ' '\n' | grep -v '^$' | sort | xargs)
ci_pkgs=$(sed -n 's/^packages="\(.*\)"$/\1/p' "$src/.ci/run" | tr ' ' '\n' | sort | xargs)
is "README quick start installs what CI installs" "$ci_pkgs" "$readme_pkgs"

done_testing
