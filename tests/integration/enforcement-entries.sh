#!/usr/bin/env bash
# Filesystem entries enforced by the Linux helper (issue 14): deny entries,
# read-only carve-outs, deny globs, writable holes below a denied directory,
# protected names' placeholders, and the refusal of a symlink planted on the
# way of a denied path.  Real sandboxes through `sbx run`, checked by their
# effects; runs as root and again as uid 65534 (unprivileged.sh).
. "$(dirname "$0")/lib.sh"
: "${SBX:?the sbx under test}"
require_helper

d=$(scratch)
home=$d/home     # a home directory outside every writable root
ws=$d/ws         # the workspace
mkdir -p "$home/.ssh" "$ws/docs" "$ws/src"
secret="SBX-SECRET-$$-$RANDOM"
echo "$secret" >"$home/.ssh/id_test"
echo readme >"$ws/docs/readme"
echo code >"$ws/src/main.c"

# run ARGS... -- CMD...: sbx run in the workspace, workspace-write.
run() { (cd "$ws" && "$SBX" run -p workspace-write --stdin null "$@"); }
content() { cat "$1" 2>/dev/null || echo "<missing>"; }

# --- hide ~/.ssh ----------------------------------------------------------
out=$(run --deny "$home/.ssh" -- sh -c "cat '$home/.ssh/id_test'; ls -la '$home/.ssh'; grep -r . '$home' ; true" 2>&1)
case $out in *"$secret"*) found=yes ;; *) found=no ;; esac
is "deny ~/.ssh: the key's content never appears in the output" "no" "$found"
not_ok "deny ~/.ssh: cat of the key fails" run --deny "$home/.ssh" -- cat "$home/.ssh/id_test"
not_ok "deny ~/.ssh: ls of the directory fails" run --deny "$home/.ssh" -- ls "$home/.ssh"
is "deny ~/.ssh: it shows as an empty directory of mode 000" "0 0" \
    "$(run --deny "$home/.ssh" -- sh -c "echo \$(stat -c %a '$home/.ssh') \$(find '$home/.ssh' -mindepth 1 2>/dev/null | wc -l)")"
not_ok "deny ~/.ssh: nothing can be created in it (even with the home writable)" \
    run --deny "$home/.ssh" -w "$home" -- sh -c "echo x > '$home/.ssh/new'"
is "deny ~/.ssh: nothing was created" "<missing>" "$(content "$home/.ssh/new")"
ok "deny ~/.ssh: the rest of the home stays readable" run --deny "$home/.ssh" -- test -d "$home"
for net in full limited; do
    not_ok "deny ~/.ssh holds with -n $net" run -n "$net" --deny "$home/.ssh" -- cat "$home/.ssh/id_test"
done

# --- a workspace with a read-only docs/ -----------------------------------
not_ok "read-only docs: appending to a file fails" run --read-only "$ws/docs" -- sh -c 'echo x >> docs/readme'
not_ok "read-only docs: creating a file fails" run --read-only "$ws/docs" -- touch docs/new
not_ok "read-only docs: renaming docs fails" run --read-only "$ws/docs" -- mv docs docs-moved
not_ok "read-only docs: removing docs fails" run --read-only "$ws/docs" -- rm -rf docs
not_ok "read-only docs: unlinking a file in docs fails" run --read-only "$ws/docs" -- rm -f docs/readme
ok "read-only docs: reading docs works" run --read-only "$ws/docs" -- cat docs/readme
ok "read-only docs: the rest of the workspace is writable" \
    run --read-only "$ws/docs" -- sh -c 'echo more >> src/main.c && echo new > src/new.c && mkdir build'
is "read-only docs: docs/readme unchanged" "readme" "$(content "$ws/docs/readme")"
is "read-only docs: nothing created in docs" "readme" "$(ls "$ws/docs" | xargs)"
is "read-only docs: the write beside it happened" "new" "$(content "$ws/src/new.c")"
not_ok "a missing carve-out cannot be created" run --read-only "$ws/gen" -- mkdir -p gen/x
is "... and no placeholder is left" "<missing>" "$(ls -d "$ws/gen" 2>/dev/null || echo "<missing>")"
rm -rf "$ws/build" "$ws/src/new.c"

# --- a denied file in a writable root -------------------------------------
echo "$secret" >"$ws/secret.txt"
out=$(run --deny "$ws/secret.txt" -- sh -c 'cat secret.txt; wc -c < secret.txt' 2>&1)
case $out in *"$secret"*) found=yes ;; *) found=no ;; esac
is "denied file: its content never appears" "no" "$found"
not_ok "denied file: cat fails" run --deny "$ws/secret.txt" -- cat secret.txt
is "denied file: it shows as an empty file of mode 000" "0 0" \
    "$(run --deny "$ws/secret.txt" -- stat -c '%a %s' secret.txt)"
not_ok "denied file: overwriting fails" run --deny "$ws/secret.txt" -- sh -c 'echo evil > secret.txt'
not_ok "denied file: rename fails" run --deny "$ws/secret.txt" -- mv secret.txt moved.txt
not_ok "denied file: unlink fails" run --deny "$ws/secret.txt" -- rm -f secret.txt
not_ok "denied file: replacing it by rename fails" \
    run --deny "$ws/secret.txt" -- sh -c 'echo evil > other.txt && mv other.txt secret.txt'
is "denied file: unchanged on the host" "$secret" "$(content "$ws/secret.txt")"
rm -f "$ws/other.txt" "$ws/moved.txt"
not_ok "a missing denied path in the workspace cannot be created" \
    run --deny "$ws/later.key" -- sh -c 'echo x > later.key'
is "... and nothing is left on the host" "<missing>" "$(content "$ws/later.key")"

# --- a deny glob: expanded when the command starts ------------------------
mkdir -p "$ws/conf/deep"
echo "$secret" >"$ws/conf/a.env"
echo "$secret" >"$ws/conf/deep/b.env"
echo public >"$ws/conf/c.txt"
out=$(run --deny-glob "$ws/conf/**/*.env" -- sh -c 'cat conf/a.env conf/deep/b.env; cat conf/c.txt' 2>&1)
case $out in *"$secret"*) found=yes ;; *) found=no ;; esac
is "deny glob: no matched file's content appears" "no" "$found"
case $out in *public*) found=yes ;; *) found=no ;; esac
is "deny glob: a file that does not match is readable" "yes" "$found"
# Documented: the pattern is expanded once, at start; a file created later
# matches it but is not hidden.
is "deny glob: a file created after the start is not hidden (expanded at start)" "late" \
    "$(run --deny-glob "$ws/conf/**/*.env" -- sh -c 'echo late > conf/late.env && cat conf/late.env')"
rm -f "$ws/conf/late.env"

# --- a writable hole in a denied directory --------------------------------
mkdir -p "$ws/vault/open"
echo "$secret" >"$ws/vault/key"
echo inside >"$ws/vault/open/f"
hole() { run --deny "$ws/vault" -w "$ws/vault/open" -- "$@"; }
not_ok "hole: the denied directory cannot be listed" hole ls vault
not_ok "hole: its other names are invisible" hole cat vault/key
is "hole: the denied directory is traverse-only (mode 111)" "111" "$(hole stat -c %a vault)"
ok "hole: the hole's files are readable" hole cat vault/open/f
ok "hole: the hole is writable" hole sh -c 'echo made > vault/open/new'
is "hole: the write reached the host" "made" "$(content "$ws/vault/open/new")"
not_ok "hole: nothing can be created in the denied directory" hole touch vault/new
is "hole: nothing was created there" "<missing>" "$(content "$ws/vault/new")"
out=$(hole sh -c 'cat vault/key; ls -R vault' 2>&1)
case $out in *"$secret"*) found=yes ;; *) found=no ;; esac
is "hole: the denied directory's content never appears" "no" "$found"

# --- protected names: placeholders are empty read-only directories --------
rm -rf "$ws/.git" "$ws/.codex" "$ws/.agents" "$ws/.sbx" "$ws/.aws"
is "placeholder: .codex is an empty directory of mode 555" "555 0" \
    "$(run -- sh -c 'echo $(stat -c %a .codex) $(ls -A .codex | wc -l)')"
not_ok "placeholder: mkdir .codex fails" run -- mkdir .codex
is "placeholder: mkdir .codex says File exists" "1" \
    "$(run -- mkdir .codex 2>&1 | grep -c 'File exists')"
not_ok "placeholder: writing below .codex fails" run -- sh -c 'echo x > .codex/x'
is "placeholder: ... read-only, not 'nonexistent'" "1" \
    "$(run -- sh -c 'echo x > .codex/x' 2>&1 | grep -c 'Read-only file system')"
not_ok "placeholder: rmdir .git fails" run -- rmdir .git
is "placeholder: no placeholder is left on the host" "" "$(protected_names_in "$ws")"
if command -v git >/dev/null; then
    repo=$d/repo
    mkdir -p "$repo/ws"
    git -C "$repo" init -q 2>/dev/null
    git -C "$repo" -c user.email=t@t -c user.name=t commit -q --allow-empty -m init 2>/dev/null
    is "placeholder: git status shows nothing for the placeholders" "" \
        "$(cd "$repo/ws" && "$SBX" run -p workspace-write --stdin null -- git status --porcelain . 2>&1)"
    is "placeholder: git rev-parse still finds the enclosing repository" "$repo" \
        "$(cd "$repo/ws" && "$SBX" run -p workspace-write --stdin null -- git rev-parse --show-toplevel 2>&1)"
    not_ok "placeholder: git init in the workspace fails" \
        sh -c "cd '$repo/ws' && '$SBX' run -p workspace-write --stdin null -- git init -q"
    is "placeholder: ... and leaves nothing behind" "" "$(protected_names_in "$repo/ws")"
else
    skip "placeholders and git" "git is not installed"
fi

# --- beside Codex's own helper ---------------------------------------------
# Its helper refused to run while an sbx run's symlink placeholders stood in
# a shared writable root ("crosses writable symlink /tmp/.git"); directory
# placeholders must not disturb it, in either direction.  Set
# CODEX_LINUX_SANDBOX to Codex 0.169's helper (its codex binary through a
# symlink named codex-linux-sandbox) to run these.
codex=${CODEX_LINUX_SANDBOX:-}
if [ -n "$codex" ] && [ -x "$codex" ]; then
    shared=$d/shared; cws=$d/codex-ws
    mkdir -p "$shared" "$cws"
    profile='{"type":"managed","file_system":{"type":"restricted","entries":[{"path":{"type":"special","value":{"kind":"root"}},"access":"read"},{"path":{"type":"path","path":"'$cws'"},"access":"write"},{"path":{"type":"path","path":"'$shared'"},"access":"write"}]},"network":"restricted"}'
    codex_run() { (cd "$cws" && "$codex" --sandbox-policy-cwd "$cws" --command-cwd "$cws" --permission-profile "$profile" -- "$@"); }
    (cd "$ws" && "$SBX" run -p workspace-write -w "$shared" --stdin null -- sh -c "touch '$shared/sbx-up'; while [ ! -e '$shared/codex-done' ]; do sleep 0.05; done") &
    sbx_run=$!
    ok "codex beside sbx: the sbx run is up" eventually test -e "$shared/sbx-up"
    ok "codex beside sbx: an sbx run's placeholders stand in the shared root" is_placeholder "$shared/.git"
    ok "codex beside sbx: Codex's helper runs" codex_run sh -c "echo x > '$cws/from-codex'"
    touch "$shared/codex-done"; wait "$sbx_run"
    is "codex beside sbx: ... and wrote" "x" "$(content "$cws/from-codex")"
    (codex_run sh -c "touch '$shared/codex-up'; while [ ! -e '$shared/sbx-done' ]; do sleep 0.05; done") &
    codex_pid=$!
    ok "sbx beside codex: the Codex run is up" eventually test -e "$shared/codex-up"
    ok "sbx beside codex: sbx runs while Codex's placeholders stand" run -w "$shared" -- sh -c 'echo y > from-sbx'
    not_ok "sbx beside codex: Codex's placeholder is read-only for sbx's command" run -w "$shared" -- mkdir "$shared/.git/x"
    touch "$shared/sbx-done"; wait "$codex_pid"
    is "sbx beside codex: ... and wrote" "y" "$(content "$ws/from-sbx")"
    is "nothing is left in the shared root" "" "$(protected_names_in "$shared")"
else
    skip "beside Codex's helper" "CODEX_LINUX_SANDBOX is not set"
fi

# --- a symlink planted on the way of a denied path ------------------------
ln -s "$home/.ssh" "$ws/keys"
run --deny "$ws/keys/id_test" -- touch "$ws/ran" 2>"$d/err"
is "planted symlink: refused (125)" "125" "$?"
is "planted symlink: nothing ran" "<missing>" "$(content "$ws/ran")"
is "planted symlink: one line naming the path" "1" "$(grep -c "^sbx: .*$ws/keys" "$d/err")"
rm "$ws/keys"

# --- denies meeting protected names and nested roots ----------------------
mkdir -p "$ws/.git" "$ws/nested/secret"
echo "[core] $secret" >"$ws/.git/config"
echo "$secret" >"$ws/nested/secret/k"
not_ok "deny below a protected .git: its file is unreadable" run --deny "$ws/.git/config" -- cat .git/config
ok "... and the rest of .git stays readable" run --deny "$ws/.git/config" -- ls .git
rm -rf "$ws/.git"
is "deny of a missing protected name: an empty unlistable directory" "0" \
    "$(run --deny "$ws/.git" -- stat -c %a .git)"
not_ok "... which cannot be created" run --deny "$ws/.git" -- sh -c 'rmdir .git; mkdir .git/hooks'
is "... and nothing is left" "" "$(protected_names_in "$ws")"
not_ok "deny inside a nested writable root" run -w "$ws/nested" --deny "$ws/nested/secret" -- cat nested/secret/k
ok "... the nested root stays writable" run -w "$ws/nested" --deny "$ws/nested/secret" -- touch nested/new
rm -rf "$ws/nested"

# --- a deny of / is refused -------------------------------------------------
run --deny / -- touch "$ws/ran" 2>"$d/err"
is "deny /: refused (125)" "125" "$?"
is "deny /: nothing ran" "<missing>" "$(content "$ws/ran")"

# --- without a user namespace: Landlock alone cannot enforce these --------
# Simulated: a user namespace where no further one can be made, and no
# CAP_SYS_ADMIN, so the helper falls back to Landlock and seccomp.
alone() {
    unshare -Ur sh -c 'echo 0 > /proc/sys/user/max_user_namespaces && exec setpriv --bounding-set -sys_admin -- "$@"' \
        sh "$SBX" run --allow-unprotected -p workspace-write -C "$ws" --stdin null "$@"
}
# (The probe makes the same nest without sbx: a nested user namespace must fail there.)
if ! command -v setpriv >/dev/null; then
    skip "Landlock alone" "no setpriv"
elif ! unshare -Ur sh -c 'echo 0 > /proc/sys/user/max_user_namespaces && exec setpriv --bounding-set -sys_admin -- sh -c "! unshare -U true 2>/dev/null"' 2>/dev/null; then
    skip "Landlock alone" "cannot make a user namespace without further ones here"
else
    if why=$(has_landlock_abi 3 "Landlock alone (--allow-unprotected: denying truncation)"); then
        alone -- true 2>"$d/err"
        is "Landlock alone: sbx runs the command, saying there is no user namespace" "0 1" \
            "$? $(grep -c 'no user namespace' "$d/err")"
    else
        skip "Landlock alone: sbx runs the command" "$why"
    fi
    alone --deny "$home/.ssh" -- touch "$ws/ran" 2>"$d/err"
    is "Landlock alone: a deny entry is refused (125)" "125" "$?"
    alone --read-only "$ws/docs" -- touch "$ws/ran" 2>"$d/err"
    is "Landlock alone: a carve-out in a writable root is refused (125)" "125" "$?"
    is "Landlock alone: ... naming it" "1" "$(grep -c "^sbx: .*read-only path $ws/docs" "$d/err")"
    is "Landlock alone: nothing ran" "<missing>" "$(content "$ws/ran")"
fi

# --- issue 29: a hard link made before the run ---------------------------------
# The sandbox withholds paths: another name of a denied or read-only file,
# made before the run (by the host, or by an earlier run under another
# policy), would be open.  sbx refuses such a policy (125), naming the file.
mkdir -p "$home/.aws" "$ws/cache"
echo "$secret" >"$home/.aws/credentials"
ln "$home/.aws/credentials" "$ws/cache/creds"
out=$(run --deny "$home/.aws" -- cat cache/creds 2>&1)
is "a hard link to a file of a denied directory: refused (125)" 125 $?
case $out in *"$secret"*) found=yes ;; *) found=no ;; esac
is "... the secret never appears" no "$found"
case $out in *"sbx: $home/.aws/credentials has 1 other hard link, which the entry 'deny $home/.aws (--deny)' does not cover"*"find / -xdev -samefile $home/.aws/credentials"*) said=yes ;; *) said=no ;; esac
is "... one line names the file, the count and how to find the link" yes "$said"
echo keep >"$ws/docs/pinned"
ln "$ws/docs/pinned" "$ws/pinned-alias"
run --read-only docs/pinned -- sh -c 'echo changed > pinned-alias' 2>/dev/null
is "a hard link to a read-only file: refused (125)" 125 $?
is "... the file is unchanged" keep "$(content "$ws/docs/pinned")"
rm "$ws/cache/creds" "$ws/pinned-alias"
is "without the other names: the same runs go ahead" "0 0" \
    "$(run --deny "$home/.aws" -- true; echo -n "$? "; run --read-only docs/pinned -- true; echo $?)"

done_testing
