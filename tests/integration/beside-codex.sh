#!/usr/bin/env bash
# sbx and the real Codex 0.169 helper running at the same time on the same
# directories: nothing either creates for a run (protected-name placeholders
# in the workspace and in /tmp) may make the other fail or leave anything
# behind.  Needs $CODEX_LINUX_SANDBOX, the real helper (.ci/fetch-codex gets
# it), and bubblewrap, which it runs; skipped visibly otherwise.
set -u
. "$(dirname "$0")/lib.sh"
require_helper
codex=${CODEX_LINUX_SANDBOX:-}
# (exit 0: under the TAP protocol meson takes the plan's SKIP; 77 is an error)
if [ -z "$codex" ] || [ ! -x "$codex" ]; then
    echo "1..0 # SKIP the real Codex helper is not here (set CODEX_LINUX_SANDBOX; .ci/fetch-codex)"
    exit 0
elif ! command -v bwrap >/dev/null; then
    echo "1..0 # SKIP no bwrap (bubblewrap), which Codex's helper runs"
    exit 0
fi

ws=$(scratch)
mkdir "$ws/proj"
# The marker and the release fifo: in /tmp, writable in both sandboxes.
sig=$(mktemp -d /tmp/sbx-beside.XXXXXX)
chmod 777 "$sig"
# Codex's workspace-write profile (CODEX-HELPER.md section 7, example 2).
profile() {
    printf '{"type":"managed","file_system":{"type":"restricted","entries":[{"path":{"type":"special","value":{"kind":"root"}},"access":"read"},{"path":{"type":"path","path":"%s"},"access":"write"},{"path":{"type":"special","value":{"kind":"slash_tmp"}},"access":"write"},{"path":{"type":"special","value":{"kind":"tmpdir"}},"access":"write"}]},"network":"restricted"}' "$1"
}
codex_run() {  # DIR CMD...: Codex's helper, as Codex launches it
    local dir=$1; shift
    (cd "$dir" && "$codex" --sandbox-policy-cwd "$dir" --command-cwd "$dir" --permission-profile "$(profile "$dir")" -- "$@")
}
# A command that says it is running, then waits until released.
hold="touch '$sig/running'; read _ < '$sig/release'"
# What the other side runs meanwhile: a write in the workspace, and two
# writes that must fail (a .git hook, a first /tmp/.codex).
probe='echo hi > out; { mkdir -p .git/hooks && echo x > .git/hooks/pre-commit && echo wrote .git; } 2>/dev/null; { echo x > /tmp/.codex/x && echo wrote /tmp/.codex; } 2>/dev/null; true'

for who in sbx codex; do
    rm -f "$sig/running" "$sig/release"
    mkfifo -m 666 "$sig/release"
    if [ "$who" = sbx ]; then
        (cd "$ws/proj" && "$SBX" run -p workspace-write -- sh -c "$hold") >/dev/null 2>&1 &
        other() { codex_run "$ws/proj" "$@"; }
    else
        codex_run "$ws/proj" sh -c "$hold" >/dev/null 2>&1 &
        other() { (cd "$ws/proj" && "$SBX" run -p workspace-write -- "$@"); }
    fi
    holder=$!
    ok "$who holds its sandbox open" eventually test -e "$sig/running"
    out=$(other sh -c "$probe" 2>&1)
    is "while $who runs, the other runs a workspace-write command (exit 0, no protected write)" "0 " "$? $out"
    is "... and its write landed" hi "$(cat "$ws/proj/out" 2>/dev/null)"
    echo go 1<>"$sig/release"  # read-write: never blocks, also when the holder is gone
    wait "$holder"
    is "$who's held command ended well" 0 $?
    rm -f "$ws/proj/out"
done
# What sbx made is gone; Codex removes its own placeholders when its run ends.
is "nothing is left in the workspace" "" "$(cd "$ws/proj" && ls -A)"

# Across users: a root sbx run's placeholders in the shared /tmp must not
# break the Codex run of another user (uid 65534) in its own workspace.
if [ "$(id -u)" != 0 ]; then
    skip "across users" "needs root"
elif ! why=$(has_user_namespaces as_nobody); then
    skip "across users" "$why"
else
    theirs=$sig/theirs  # reachable by uid 65534 (the scratch root is not)
    mkdir "$theirs" && chown 65534:65534 "$theirs"
    rm -f "$sig/running" "$sig/release"
    mkfifo -m 666 "$sig/release"
    (cd "$ws/proj" && "$SBX" run -p workspace-write -- sh -c "$hold") >/dev/null 2>&1 &
    holder=$!
    ok "root's sbx holds its sandbox open" eventually test -e "$sig/running"
    out=$(cd "$theirs" && setpriv --reuid=65534 --regid=65534 --clear-groups -- \
        "$codex" --sandbox-policy-cwd "$theirs" --command-cwd "$theirs" \
        --permission-profile "$(profile "$theirs")" -- sh -c "$probe" 2>&1)
    is "meanwhile uid 65534's Codex runs a workspace-write command (exit 0, no protected write)" "0 " "$? $out"
    is "... and its write landed" hi "$(cat "$theirs/out" 2>/dev/null)"
    echo go 1<>"$sig/release"
    wait "$holder"
    is "root's held command ended well" 0 $?
fi
rm -rf "$sig"
done_testing
