#!/usr/bin/env bash
# Red-team attacks on the Linux sandbox, through sbx and the helper.  Each
# attack checks its effect (the file is unchanged, no connection arrived, the
# process is gone) and comes with an unsandboxed control proving the probe
# works when nothing stops it.  Also run as uid 65534 (unprivileged.sh).
#
# The tests marked HOLE failed when written: they describe attacks that
# got through (see the red-team report); they pass once the hole is fixed.
set -u
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"

require_helper
d=$(scratch)
if ! cc -O1 -o "$d/probe" "$here/progs/redteam-probe.c" 2>"$d/cc.log"; then
    echo "Bail out! cannot compile redteam-probe.c: $(head -3 "$d/cc.log")"
    exit 1
fi
probe=$d/probe
python=/usr/bin/python3
[ -x "$python" ] || { echo "1..0 # SKIP no /usr/bin/python3"; exit 0; }

# sbx run with a workspace-write policy in DIR: ww DIR [sbx options] -- CMD...
ww() {
    local dir=$1; shift
    "$SBX" run -p workspace-write -C "$dir" --stdin null "$@"
}
# The helper's canonical policy for sbx OPTIONS (as sbx would pass it).
policy_of() {
    "$SBX" run --dry-run "$@" -- true |
        "$python" -c 'import json,sys; a=json.load(sys.stdin)["argv"]; print(a[a.index("--sandbox-policy")+1])'
}

# --- Filesystem: protected names and writable roots ------------------------

# 1. HOLE: the workspace nested two levels inside another writable root: the
# command renames the workspace's parent away (only the workspace itself is
# a mount point) and creates a new workspace path with its own .git.
outer=$d/outer1; ws=$outer/a/ws
mkdir -p "$ws" "$d/twin1/a/ws"
attack1='mv "$1/a" "$1/moved" && mkdir -p "$1/a/ws/.git/hooks" && echo evil > "$1/a/ws/.git/hooks/post-commit"'
sh -c "$attack1" sh "$d/twin1"
ok "control: unsandboxed, renaming the parent plants .git at the workspace path" test -f "$d/twin1/a/ws/.git/hooks/post-commit"
not_ok "direct: .git cannot be created at the top of the workspace" ww "$ws" -w "$outer" -- mkdir "$ws/.git/x"
ww "$ws" -w "$outer" -- sh -c "$attack1" sh "$outer" >/dev/null 2>&1
not_ok "HOLE rename-parent: no .git planted at the workspace path by renaming its parent" \
    test -e "$outer/a/ws/.git/hooks/post-commit"

# 1b. HOLE, the same rename used to redirect the next run: the first run
# leaves the workspace path as a symlink to another directory (a home, say);
# the next run given the same workspace path gets that directory writable.
outer=$d/outer1b; ws=$outer/a/ws
mkdir -p "$ws" "$d/home1b"
ww "$ws" -w "$outer" -- sh -c 'mv "$1/a" "$1/gone" && mkdir "$1/a" && ln -s "$2" "$1/a/ws"' sh "$outer" "$d/home1b" \
    >/dev/null 2>&1
ww "$ws" -w "$outer" -- sh -c "echo evil > '$d/home1b/.bashrc'" >/dev/null 2>&1
not_ok "HOLE rename-parent-redirect: the next run cannot write a directory outside its roots" test -e "$d/home1b/.bashrc"

# 2. HOLE: a .git file whose gitdir lies in a subdirectory of the workspace:
# the gitdir is bound read-only, but its parent can be renamed and a new
# gitdir with hooks put in its place (git then runs them outside the sandbox).
ws=$d/ws2
mkdir -p "$ws/sub/gd/hooks" "$d/twin2/sub/gd/hooks"
echo "gitdir: $ws/sub/gd" >"$ws/.git"
echo "gitdir: $d/twin2/sub/gd" >"$d/twin2/.git"
attack2='mv sub sub2 && mkdir -p sub/gd/hooks && echo evil > sub/gd/hooks/pre-commit'
(cd "$d/twin2" && sh -c "$attack2")
ok "control: unsandboxed, renaming the gitdir's parent plants a hook" test -f "$d/twin2/sub/gd/hooks/pre-commit"
not_ok "direct: the gitdir's hooks are read-only" ww "$ws" -- sh -c 'echo evil > sub/gd/hooks/pre-commit'
ww "$ws" -- sh -c "$attack2" >/dev/null 2>&1
not_ok "HOLE gitdir-parent: no hook planted in the gitdir by renaming its parent" test -e "$ws/sub/gd/hooks/pre-commit"

# 2b. HOLE: the same with a user's protected symlink .codex -> sub/codexcfg:
# its target is bound read-only, but the target's parent can be renamed.
ws=$d/ws2b
mkdir -p "$ws/sub/codexcfg"
echo good >"$ws/sub/codexcfg/config.toml"
ln -s sub/codexcfg "$ws/.codex"
not_ok "direct: the protected symlink's target is read-only" ww "$ws" -- sh -c 'echo evil > .codex/config.toml'
ww "$ws" -- sh -c 'mv sub sub2 && mkdir -p sub/codexcfg && echo evil > sub/codexcfg/config.toml' >/dev/null 2>&1
is "HOLE symlink-target-parent: .codex still leads to the original config" "good" "$(cat "$ws/.codex/config.toml")"

# 2c. HOLE: a gitdir path through a symlink in the workspace: the policy
# protects the resolved gitdir, git follows the link, which stays writable.
ws=$d/ws2c
mkdir -p "$ws/real/gd/hooks"
echo "gitdir: $ws/link/gd" >"$ws/.git"
ln -s real "$ws/link"
not_ok "direct: the resolved gitdir's hooks are read-only" ww "$ws" -- sh -c 'echo evil > link/gd/hooks/pre-commit'
ww "$ws" -- sh -c 'mkdir -p evil/gd/hooks && echo evil > evil/gd/hooks/pre-commit && rm link && ln -s evil link' \
    >/dev/null 2>&1
not_ok "HOLE gitdir-symlink: the gitdir path still leads to no planted hook" test -e "$ws/link/gd/hooks/pre-commit"

# 3. A concurrent run that may write the same directory (here with
# --unprotect .git; a run whose writable root contains the workspace, such
# as the default /tmp, does the same) unlinks the placeholder, which detaches
# the pin in the protected run's mount namespace.  The host watch
# (linux-helper/host_watch.h) sees the new .git appear and stops the
# protected run (125, naming it); the moment before the kill remains, so
# whether the command got to write is noted, not checked.
ws=$d/ws3
mkdir -p "$ws"
ww "$ws" -- sh -c 'touch started; i=0; while [ ! -e replaced ] && [ $i -lt 1200 ]; do sleep 0.05; i=$((i+1)); done; mkdir .git/hooks && echo evil > .git/hooks/x' \
    >/dev/null 2>"$d/protected.err" &
protected_run=$!
eventually test -e "$ws/started"
ww "$ws" --unprotect .git -- sh -c 'rmdir .git && mkdir .git && touch replaced' >/dev/null 2>&1
ok "control: the concurrent --unprotect run may replace the placeholder" test -e "$ws/replaced"
wait $protected_run
is "concurrent-unprotect: the protected run is stopped (125) by the host watch, naming .git" \
    "125 1" "$? $(grep -c "^sbx: the run was stopped: host watch: the host replaced $ws/.git " "$d/protected.err")"
[ -e "$ws/.git/hooks/x" ] && echo "# concurrent-unprotect: the command wrote before the kill (the window)"

# 4. HOLE: a concurrent sandboxed command swaps an ancestor of another run's
# workspace with a symlink (RENAME_EXCHANGE) while that run's helper sets up
# its mounts; the helper re-resolves the path and makes the symlink's target
# writable (and creates its placeholders there).
outer=$d/outer4
mkdir -p "$outer/a/ws" "$d/victim/ws"
ln -s "$d/victim" "$outer/evil"
policy4=$(policy_of -p workspace-write -C "$outer/a/ws")
[ -n "$policy4" ] || echo "Bail out! cannot read the helper's policy from sbx run --dry-run"
ww "$d" -w "$outer" -- "$probe" exchange "$outer/a" "$outer/evil" 8 >"$d/swaps" 2>&1 &
swapper=$!
# The attempts go on for as long as the swapper swaps (it started once
# $outer/a has been a symlink).
eventually test -L "$outer/a"
while ! ended "$swapper"; do
    "$helper" --sandbox-policy-cwd "$outer/a/ws" --command-cwd / --sandbox-policy "$policy4" -- \
        sh -c "touch '$d/victim/ws/planted'" >/dev/null 2>&1
    [ -e "$d/victim/ws/planted" ] && break
done
wait $swapper
# "swapping" once it has: its own host watch may stop it before its count
# (millions of renames in $outer, a directory that watch holds for the
# placeholders there, can overflow the inotify queue where the watch thread
# is slow, as under ASan, and an overflow stops the run).
sed 's/^/# swapper: /' "$d/swaps"
ok "control: the sandboxed swapper swapped the ancestor" grep -q '^swapping$' "$d/swaps"
not_ok "HOLE swap-ancestor: nothing written in a directory outside the writable roots" test -e "$d/victim/ws/planted"
is "HOLE swap-ancestor: the helper created no placeholder outside the writable roots" "" \
    "$(ls -A "$d/victim/ws" | grep -vx planted | tr '\n' ' ')"

# 4b. HOLE (denial of service): any process that can open a writable root
# (for /tmp and /dev/shm: any local user) holds flock LOCK_EX on it, and
# every sbx run using that root hangs in the helper's LOCK_SH.
ws=$d/ws4b; mkdir -p "$ws"
# The lock is held until the check is over; the helper gives up after
# about a second.  (The 30 s bound only ends a hang: sbx returning at all
# while the lock is held shows that it does not wait for it.)
( exec 9<"$ws"; flock -x 9; touch "$d/locked"; exec sleep 600 ) &
locker=$!
eventually test -e "$d/locked"
timeout 30 "$SBX" run -p workspace-write -C "$ws" --stdin null -- true >/dev/null 2>&1
rc=$?
if ended "$locker"; then held=no; else held=yes; fi
kill $locker 2>/dev/null; wait $locker 2>/dev/null
ok "HOLE flock-dos: sbx run does not hang on a writable root locked by another process (rc $rc, lock still held: $held)" \
    test "$rc" != 124 -a "$held" = yes

# 5. Metadata of a file outside the writable roots: chmod, chown, utimes,
# xattr, truncate.
ws=$d/ws5; mkdir -p "$ws"
echo data >"$d/meta-file"; echo data >"$d/meta-twin"
before=$(stat -c '%a %u %g %Y %s' "$d/meta-file")
ok "control: unsandboxed, every metadata change works" "$probe" meta "$d/meta-twin"
not_ok "metadata changes outside the writable roots refused" ww "$ws" -- "$probe" meta "$d/meta-file"
is "the file outside is unchanged" "$before" "$(stat -c '%a %u %g %Y %s' "$d/meta-file")"
has_xattr() { "$python" -c 'import os, sys; os.getxattr(sys.argv[1], "user.sbx-redteam")' "$1" 2>/dev/null; }
ok "control: the unsandboxed probe set the xattr" has_xattr "$d/meta-twin"
not_ok "no xattr was set" has_xattr "$d/meta-file"

# 6. Hard link and rename from outside into the workspace, rename of the
# workspace itself and of a writable root's protected name.
ln "$d/meta-twin" "$d/hl-control"
ok "control: unsandboxed hard link works" test -e "$d/hl-control"
not_ok "hard link of an outside file into the workspace refused" ww "$ws" -- ln "$d/meta-file" "$ws/hl"
not_ok "rename of an outside file into the workspace refused" ww "$ws" -- mv "$d/meta-file" "$ws/moved"
ok "the outside file is still there" test -f "$d/meta-file"
outer=$d/outer6; mkdir -p "$outer/ws" "$d/twin6/ws"
mv "$d/twin6/ws" "$d/twin6/ws2"
ok "control: unsandboxed rename of a directory works" test -d "$d/twin6/ws2"
not_ok "the workspace itself cannot be renamed (direct child of a writable root)" \
    ww "$outer/ws" -w "$outer" -- mv "$outer/ws" "$outer/ws-moved"
ok "the workspace is still in place" test -d "$outer/ws"

# 7. Placeholders: deleting one from inside, from a new user+mount
# namespace, through a symlinked alias of the workspace, and through a
# symlink into another writable root.
ws=$d/ws7; mkdir -p "$ws" "$d/other7" "$d/twin7"
mkdir -m 0 "$d/twin7/.git"
ok "control: unsandboxed, rmdir + mkdir of a placeholder-like directory works" \
    sh -c "rmdir '$d/twin7/.git' && mkdir '$d/twin7/.git'"
not_ok "the placeholder cannot be removed from inside" ww "$ws" -- sh -c 'rmdir .git && mkdir .git/hooks'
not_ok "no .git directory was created" test -d "$ws/.git"
if "$probe" userns-unlink "$d/twin7/.git-none" 2>/dev/null | grep -q 'unshare-mount:ok'; then
    out=$(ww "$ws" -- "$probe" userns-unlink .git 2>/dev/null | tr '\n' ' ')
    is "a new user and mount namespace cannot unmount or unlink the pinned placeholder" \
        "unshare-user:ok unshare-mount:ok umount2:EPERM unlink:EBUSY " "$out"
else
    skip "placeholder from a new user namespace" "unprivileged user namespaces are unavailable"
fi
not_ok "no .git directory was created" test -d "$ws/.git"
not_ok ".git through a symlinked alias of the workspace refused" \
    ww "$ws" -- sh -c 'ln -s . alias && mkdir alias/.git'
not_ok ".git at the top of another writable root through a symlink refused" \
    ww "$ws" -w "$d/other7" -- sh -c "ln -s '$d/other7' link && mkdir link/.sbx"
not_ok "no .sbx in the other root" test -d "$d/other7/.sbx"

# 7b. An existing .git directory: moved away, replaced, hard-linked out,
# removed, appended to, its times and mode changed.
ws=$d/ws7b; mkdir -p "$ws/.git/hooks" "$d/twin7b/.git"
echo '[core]' >"$ws/.git/config"; echo data >"$ws/f"
before=$(cd "$ws" && stat -c '%n %a %Y %s %i' .git .git/config)
(cd "$d/twin7b" && mv .git g2 && ln "$ws/f" hl)
ok "control: unsandboxed, moving .git and hard-linking work" test -d "$d/twin7b/g2" -a -f "$d/twin7b/hl"
ww "$ws" -- sh -c 'mv .git g2; mv f .git; ln .git/config hl; rm -rf .git; echo x >> .git/config; touch -d 2000-01-01 .git/config; chmod 777 .git' \
    >/dev/null 2>&1
is "an existing .git is unchanged (name, mode, time, size, inode)" "$before" \
    "$(cd "$ws" && stat -c '%n %a %Y %s %i' .git .git/config 2>&1)"
not_ok "no hard link to .git/config in the workspace" test -e "$ws/hl"

# 8. '/' as a writable root, by flag and by Codex JSON: refused or harmless.
ws=$d/ws8; mkdir -p "$ws"
ww "$ws" -w / -- touch "$d/slash-flag" >/dev/null 2>&1
not_ok "-w / does not make the filesystem writable" test -e "$d/slash-flag"
"$SBX" run -C "$ws" --stdin null --policy-json '{"type":"workspace-write","writable_roots":["/"],"network_access":false}' \
    -- touch "$d/slash-json" >/dev/null 2>&1
not_ok "writable_roots [\"/\"] does not make the filesystem writable" test -e "$d/slash-json"

# 9. A nested sbx told to use a fake helper from the workspace (which just
# runs the command) still runs inside the outer sandbox.
printf '#!/bin/sh\nwhile [ "$1" != "--" ]; do shift; done; shift; exec "$@"\n' >"$ws/fake-helper"
chmod +x "$ws/fake-helper"
SBX_LINUX_SANDBOX_EXE="$ws/fake-helper" "$SBX" run -C "$ws" -p workspace-write -- touch "$d/fake-control" >/dev/null 2>&1
ok "control: the fake helper runs the command unsandboxed" test -e "$d/fake-control"
ww "$ws" -- env SBX_LINUX_SANDBOX_EXE="$ws/fake-helper" "$SBX" run -p workspace-write -- touch "$d/fake-nested" >/dev/null 2>&1
not_ok "a nested sbx with a workspace helper cannot write outside" test -e "$d/fake-nested"

# --- Network ----------------------------------------------------------------

"$python" "$here/progs/listener.py" "$d/log" "$d/ready" 3600 "unix:$d/host.sock" &
listener=$!
trap 'kill $listener 2>/dev/null; _cleanup_scratch' EXIT  # it listens until killed
eventually test -e "$d/ready" || echo "Bail out! the host listener did not start"
logged() { grep -qx -- "unix $1" "$d/log"; }
reached() { eventually logged "$1"; }  # MSG: the host listener logged it (it polls)
# MSG never reached the host: once a marker sent after it from outside is
# logged, everything sent before it is (one socket, its queue in order).
never_reached() {
    local tag=settle-${EPOCHREALTIME/./}
    "$probe" opath-connect "$d/host.sock" "$tag" >/dev/null 2>&1
    reached "$tag" || { echo "Bail out! the host listener did not log $tag"; exit 1; }
    ! logged "$1"
}
"$probe" opath-connect "$d/host.sock" control-opath >/dev/null 2>&1
ok "control: connect via /proc/self/fd/N of an O_PATH fd reaches the host socket" reached control-opath
"$probe" notify-connect "$d/host.sock" control-notify >/dev/null 2>&1
ok "control: connect through a notify filter answering CONTINUE reaches the host socket" reached control-notify
for net in restricted limited; do
    ww "$ws" -n $net -- "$probe" opath-connect "$d/host.sock" "$net-opath" >/dev/null 2>&1
    ok "$net: no connection via /proc/self/fd/N of an O_PATH fd" never_reached "$net-opath"
    ww "$ws" -n $net -- "$probe" x32-connect "$d/host.sock" "$net-x32" >/dev/null 2>&1
    ok "$net: no connection through x32 syscall numbers" never_reached "$net-x32"
    # A seccomp filter of the command's own whose listener answers
    # CONTINUE would take connect away from the mediator.
    ww "$ws" -n $net -- "$probe" notify-connect "$d/host.sock" "$net-notify" >/dev/null 2>&1
    ok "$net: no connection through a notify filter of the command's own" never_reached "$net-notify"
done
kill $listener 2>/dev/null
wait $listener 2>/dev/null

# --- Processes --------------------------------------------------------------

# 9b. HOLE (root): the kernel keyrings.  Without a user namespace (sbx as
# root) the command shares the user keyring (@u) of its uid with every
# process outside: it reads the host's keys and plants keys that outlive it.
# (Where the host refuses add_key itself, as a container's seccomp profile
# may, there is no keyring to reach: SKIP with its answer.)
key=sbx-redteam-$$-$RANDOM
if ! keys=$("$probe" key-add "$key-control" v 2>&1); then
    skip "HOLE keyring: the kernel keyrings" "add_key is refused on this host, unsandboxed: $keys"
else
    ok "control: a key added to @u is found by another process" "$probe" key-read "$key-control" drop
    "$probe" key-add "$key-host" hostsecret >/dev/null 2>&1
    out=$(ww "$ws" -- "$probe" key-read "$key-host" 2>/dev/null | grep '^value:')
    is "HOLE keyring: the sandbox cannot read a key of the host's user keyring" "" "$out"
    "$probe" key-read "$key-host" drop >/dev/null 2>&1
    ww "$ws" -- "$probe" key-add "$key-planted" planted >/dev/null 2>&1
    not_ok "HOLE keyring: no key planted by the sandbox is found outside" "$probe" key-read "$key-planted" drop
fi

# 10. No descriptor beyond stdio reaches the command.
for net in restricted limited; do
    is "$net: no inherited descriptor beyond 0-2" "none" "$(ww "$ws" -n $net -- "$probe" fds 2>&1)"
done

# 11. kill(0) reaches the whole process group; outside the sandbox that is
# the helper (and sbx's supervisor side): it must survive.
out=$(setsid sh -c "sh -c 'trap \"\" USR1; \"$probe\" kill-group' >/dev/null; echo survived" 2>/dev/null)
is "control: unsandboxed, kill(0) kills an ancestor in the group" "" "$out"
out=$(ww "$ws" -- sh -c "trap '' USR1; '$probe' kill-group >/dev/null; echo survived" 2>/dev/null)
is "workspace-write: kill(0) does not reach the helper" "survived" "$out"

# 12. Nothing outlives sbx run: setsid + double fork.  The daemon says it
# runs (DIR/up), waits for the file DIR/go (bounded: 60 s), then writes
# DIR/alive.  The command ends once the daemon is up; sbx returns after the
# sandbox's pid 1 was reaped, which the kernel does only once every process
# of its pid namespace is gone: no daemon process may be left then.
printf '%s\n' 'touch "$1/up"; i=0' \
    'while [ ! -e "$1/go" ] && [ $i -lt 1200 ]; do sleep 0.05; i=$((i+1)); done' \
    'echo alive > "$1/alive"' >"$d/daemon12.sh"
mkdir -p "$d/control12"
sh -c "setsid sh '$d/daemon12.sh' '$d/control12' </dev/null >/dev/null 2>&1 &"
eventually test -e "$d/control12/up"
ok "control: unsandboxed, the daemon is running after its parent ended" pgrep -f "daemon12\.sh $d/control12"
touch "$d/control12/go"
ok "control: unsandboxed, the daemon outlives its parent" eventually test -e "$d/control12/alive"
ww "$ws" -- sh -c "setsid sh '$d/daemon12.sh' '$ws' </dev/null >/dev/null 2>&1 &
    i=0; while [ ! -e '$ws/up' ] && [ \$i -lt 1200 ]; do sleep 0.05; i=\$((i+1)); done" >/dev/null 2>&1
ok "the sandboxed daemon was up before sbx run ended" test -e "$ws/up"
is "a setsid double-forked daemon does not outlive sbx run (no process of it is left)" "" \
    "$(pgrep -f "daemon12\.sh $ws" || true)"
touch "$ws/go"
not_ok "... and it wrote nothing" test -e "$ws/alive"

done_testing
