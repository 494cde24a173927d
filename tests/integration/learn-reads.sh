#!/usr/bin/env bash
# sbx learn --reads (issue 34): a policy that does not read every file
# (--minimal) learned from too.  A tool outside the workspace and outside
# what --minimal reads (its script and its data, in a scratch directory under
# /var/tmp) runs once; the line sbx prints makes it readable, no wider than
# the directory it read from, lets the same command succeed under sbx run,
# and the policy without that line's flags does not; a path the policy
# denies is never suggested; nothing on the host changed.  Also run as uid
# 65534 (unprivileged.sh).
set -u
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"

require_helper
require_learning_view  # the same probe as learn.sh's
d=$(scratch)
export HOME=$d/home
mkdir -p "$HOME" "$d/proj"
proj=$d/proj
logs=$(scratch)  # sbx's stderr, outside what the manifest covers

# The tool: its program in bin/, three data files and a secret in share/.
tool=$d/tool
mkdir -p "$tool/bin" "$tool/share"
for f in a b c; do echo "data $f" >"$tool/share/$f.txt"; done
echo key >"$tool/share/secret"
cat >"$tool/bin/tool" <<TOOL
#!/bin/sh
cat '$tool/share/secret' 2>/dev/null
cat '$tool/share/a.txt' '$tool/share/b.txt' '$tool/share/c.txt' >out.txt || exit 1
echo made
TOOL
chmod 755 "$tool/bin/tool"

manifest() {
    (cd "$d" && find . -print0 | sort -z | xargs -0 -r sh -c '
        for f; do if [ -f "$f" ] && [ ! -L "$f" ]; then echo "$f $(wc -c <"$f") $(md5sum <"$f")"; else echo "$f"; fi; done' sh)
}

policy=(-p workspace-write --minimal --deny "$tool/share/secret")
before=$(manifest)
"$SBX" learn -C "$proj" --stdin null "${policy[@]}" --reads -- "$tool/bin/tool" >"$logs/learn.out" 2>"$logs/learn.err"
status=$?
after=$(manifest)
is "the learning run succeeded" 0 "$status"
[ "$status" = 0 ] || sed 's/^/# /' "$logs/learn.err"
is "the tool ran in it (reading its data)" "made" "$(cat "$logs/learn.out")"
is "nothing on the host changed during the learning run" "$before" "$after"
line=$(sed -n 's/^sbx: learn: it needs: //p' "$logs/learn.err")
is "the line makes the tool's program and its data directory readable, no more" \
    "$SBX run -C $proj --stdin null -p workspace-write --minimal --deny $tool/share/secret --read-only $tool/bin/tool --read-only $tool/share -- $tool/bin/tool" \
    "$line"
ok "the denied path is not suggested, and says why" \
    grep -q "^sbx: learn: not suggested for read $tool/share/secret: an entry of the policy denies it" "$logs/learn.err"

is "the learned line works first time" "made" "$(eval "$line" 2>"$logs/run.err")"
is "... and the tool's output is in the workspace" "data a
data b
data c" "$(cat "$proj/out.txt")"
not_ok "... and the denied path stays unread" grep -q key "$proj/out.txt"
rm -f "$proj/out.txt"
not_ok "sbx run without the added flags fails" \
    "$SBX" run -C "$proj" --stdin null "${policy[@]}" -- "$tool/bin/tool"
not_ok "... and wrote nothing" test -e "$proj/out.txt"

# A read in a denied directory (its cover empties it) is named, never suggested.
mkdir -p "$d/private" && echo key >"$d/private/key"
"$SBX" learn -C "$proj" --stdin null -p workspace-write --minimal --deny "$d/private" --reads -- \
    cat "$d/private/key" >/dev/null 2>"$logs/private.err"
ok "a read in a denied directory is not suggested, and says why" \
    grep -q "^sbx: learn: not suggested for read $d/private/key: an entry of the policy denies it" "$logs/private.err"
not_ok "... and the line makes nothing readable" grep -q -- "--read-only" "$logs/private.err"

# A directory listed is a read of it, learned as the directory.
"$SBX" learn -C "$proj" --stdin null -p workspace-write --minimal --reads -- \
    sh -c "ls $tool/share >/dev/null && test -e $tool/share/a.txt" 2>"$logs/ls.err"
line=$(sed -n 's/^sbx: learn: it needs: //p' "$logs/ls.err")
is "a listing is learned as its directory" \
    "$SBX run -C $proj --stdin null -p workspace-write --minimal --read-only $tool/share -- sh -c 'ls $tool/share >/dev/null && test -e $tool/share/a.txt'" \
    "$line"
ok "... and that line works" eval "${line:-false}"

# Refusals: --minimal without --reads names it; sbx run has no --reads.
is "--minimal without --reads is refused (125)" 125 \
    "$("$SBX" learn -p workspace-write --minimal --stdin null -- true 2>"$logs/minimal.err"; echo $?)"
ok "... naming --reads" grep -q "^sbx: learn: .*--minimal.*add --reads" "$logs/minimal.err"
is "sbx run --reads is refused (125)" 125 \
    "$("$SBX" run -p workspace-write --minimal --reads --stdin null -- true 2>/dev/null; echo $?)"

done_testing
