#!/usr/bin/env bash
# git under workspace-write, with real repositories (issue 35, "git").
#
# Every place git executes or takes its configuration from is an attack on the
# person who runs git on the host after the sandboxed command: a hook (also
# where hooks/ is missing), the config (core.hooksPath, core.fsmonitor, filter
# and diff drivers, include.path, includeIf, core.sshCommand, credential
# helpers; the config is also where every other command git runs is named:
# core.pager, core.editor, aliases with !, gpg.program), a config.worktree, a commondir that sends
# git to a directory the command filled, info/attributes,
# objects/info/alternates, the same in a linked worktree's gitdir and its
# common directory and in a submodule's gitdir (.git/modules/NAME), and a
# repository the command makes in the workspace, staged in the index as a
# submodule.  Each attack runs under the default policy, where it must fail
# and leave the host's git as it was (a `git status`, `git diff`, `git add`
# and `git commit` on the host run nothing planted); each has a control under
# --unprotect .git, where the same attack gets through and the host's git
# runs what was planted, which proves that the probe sees it.
#
# With --git-write (linux-helper/git_view.h) git commits, branches, merges,
# stashes and gcs in the sandbox and the host sees it all, while every attack
# above again changes nothing of .git on the host but the object store and
# the host's git runs nothing planted; what may not come back (an index that
# stages a new gitlink, a HEAD naming no ref, an index the host's git held or
# changed meanwhile) stays behind with a warning.  A submodule's own .git is
# held too (policy.cc add_submodule_dot_gits).
#
# Also run as uid 65534 (unprivileged.sh).
set -u
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"

require_helper
command -v git >/dev/null || { echo "1..0 # SKIP no git"; exit 0; }
d=$(scratch)
# Neither the user's nor the system's git configuration: only what the
# repositories hold decides what git runs.
export HOME=$d/home GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null
export GIT_AUTHOR_NAME=t GIT_AUTHOR_EMAIL=t@example.org GIT_COMMITTER_NAME=t GIT_COMMITTER_EMAIL=t@example.org
mkdir -p "$HOME"
marker=$d/PLANTED-CODE-RAN

# sbx run with a workspace-write policy in DIR: ww DIR [sbx options] -- CMD...
ww() {
    local dir=$1; shift
    "$SBX" run -p workspace-write -C "$dir" --stdin null "$@"
}

# A repository with one commit: mkrepo DIR
mkrepo() {
    git init -q -b main "$1" && echo one >"$1/f" && git -C "$1" add f && git -C "$1" commit -q -m one
}

# What the host's git runs when someone works in DIR (status, diff, an ssh
# fetch, a credential, add and commit), told in one line: "nothing planted ran", "planted code ran", or
# "git failed" (which proves nothing either way).
host_git() {
    rm -f "$marker"
    echo more >>"$1/f"
    git -C "$1" status >/dev/null 2>&1
    git -C "$1" diff >/dev/null 2>&1
    # A fetch over ssh (core.sshCommand) and a credential asked for (its helpers).
    GIT_TERMINAL_PROMPT=0 git -C "$1" ls-remote ssh://sbx.invalid/r >/dev/null 2>&1
    printf 'protocol=https\nhost=sbx.invalid\n\n' | GIT_TERMINAL_PROMPT=0 git -C "$1" credential fill >/dev/null 2>&1
    if ! git -C "$1" add f >/dev/null 2>&1 || ! git -C "$1" commit -q -m host >/dev/null 2>&1; then
        echo "git failed"
    elif [ -e "$marker" ]; then
        echo "planted code ran"
    else
        echo "nothing planted ran"
    fi
}

# A fingerprint of a git directory's files (path, type, content), to show
# that nothing in it changed.
fingerprint() {
    (cd "$1" && find . \( -type f -o -type l -o -type d \) -print0 | LC_ALL=C sort -z |
        while IFS= read -r -d '' p; do
            if [ -f "$p" ]; then printf '%s %s\n' "$p" "$(cksum <"$p")"; else printf '%s %s\n' "$p" "$(stat -c %F "$p")"; fi
        done)
}

# An executable hook that touches the marker, in FILE.
hook_text="#!/bin/sh
touch '$marker'"

# The attacks: shell scripts run with the repository as cwd.  $1 in each is
# the git directory to attack (.git, a worktree's gitdir, a module's); the
# last step, a write in it, decides the status.
declare -A attacks
attacks[hook]='printf "%s\n" "$HOOK" >"$1/hooks/pre-commit" && chmod +x "$1/hooks/pre-commit"'
attacks[missing-hooks-dir]='mkdir "$1/hooks" && printf "%s\n" "$HOOK" >"$1/hooks/pre-commit" && chmod +x "$1/hooks/pre-commit"'
attacks[config-hookspath]='mkdir -p evilhooks && printf "%s\n" "$HOOK" >evilhooks/pre-commit && chmod +x evilhooks/pre-commit && git config -f "$1/config" core.hooksPath "$PWD/evilhooks"'
attacks[config-fsmonitor]='git config -f "$1/config" core.fsmonitor "touch $MARKER; false"'
attacks[config-filter]='echo "f filter=evil" >.gitattributes && git config -f "$1/config" filter.evil.clean "touch $MARKER; cat"'
attacks[config-diff-textconv]='echo "f diff=evil" >.gitattributes && git config -f "$1/config" diff.evil.textconv "touch $MARKER; cat"'
attacks[config-includeif]='printf "[core]\n\tfsmonitor = \"touch %s; false\"\n" "$MARKER" >evil.cfg && git config -f "$1/config" "includeIf.gitdir:/.path" "$PWD/evil.cfg"'
attacks[config-sshcommand]='git config -f "$1/config" core.sshCommand "touch $MARKER; false"'
attacks[config-credential]='git config -f "$1/config" credential.helper "!touch $MARKER; false"'
attacks[config-include]='printf "[core]\n\tfsmonitor = \"touch %s; false\"\n" "$MARKER" >evil.cfg && git config -f "$1/config" include.path "$PWD/evil.cfg"'
attacks[config-worktree]='git config -f "$1/config" extensions.worktreeConfig true; printf "[core]\n\tfsmonitor = \"touch %s; false\"\n" "$MARKER" >"$1/config.worktree"'
attacks[commondir]='mkdir -p evil; cp -R "$1/objects" "$1/refs" "$1/HEAD" evil/ 2>/dev/null; printf "[core]\n\tfsmonitor = \"touch %s; false\"\n" "$MARKER" >evil/config; echo "$PWD/evil" >"$1/commondir"'
attacks[info-attributes]='mkdir -p "$1/info" && echo "f filter=evil" >"$1/info/attributes" && git config -f "$1/config" filter.evil.clean "touch $MARKER; cat"'
# A repository the command makes in the workspace is its own (nested .git
# directories are not protected), but staged as a submodule (a gitlink in the
# index) it is one the host's `git status` in the superproject runs `git
# status` in, with its core.fsmonitor.
attacks[gitlink]='git init -q nested && git -C nested commit -q --allow-empty -m n && git -C nested config core.fsmonitor "touch $MARKER; false" && git update-index --add --cacheinfo "160000,$(git -C nested rev-parse HEAD),nested"'
# A submodule's checkout holds a .git file naming its git directory
# (.git/modules/NAME), and the host's `git status` in the superproject runs
# `git status` there, with the configuration of whatever that .git names:
# rewritten to a directory the command filled, or replaced by a repository of
# the command's own, or made where the submodule is not checked out.
attacks[submodule-gitfile]='mkdir -p evil && cp -R "$1/objects" "$1/refs" "$1/HEAD" evil/ && printf "[core]\n\tfsmonitor = \"touch %s; false\"\n" "$MARKER" >evil/config && echo "gitdir: $PWD/evil" >sub/.git'
attacks[submodule-repo]='rm -f sub/.git && git -C sub init -q && git -C sub config core.fsmonitor "touch $MARKER; false" && git -C sub fetch -q "$SRC" HEAD && git -C sub checkout -q -f FETCH_HEAD'
attacks[submodule-uninit]='git -C sub init -q && git -C sub config core.fsmonitor "touch $MARKER; false" && git -C sub fetch -q "$SRC" HEAD && git -C sub checkout -q -f FETCH_HEAD'
attacks[alternates]='git init -q --bare other && echo "$PWD/other/objects" >"$1/objects/info/alternates"'

# attack NAME GITDIR-RELATIVE-TO-REPO REPO [sbx options]: runs the attack in REPO.
attack() {
    local name=$1 gitdir=$2 repo=$3; shift 3
    HOOK=$hook_text MARKER=$marker SRC=$d/subsrc ww "$repo" "$@" -- sh -c "${attacks[$name]}" attack "$gitdir"
}

# Attacks whose planted code the host's git runs at status, add or commit
# (alternates only changes where objects are read from: its control checks
# the file, not a marker).
runs_code() { [ "$1" != alternates ]; }

# The attacks on a main repository's .git, and a fresh repository for one:
# fresh_repo NAME DIR.
main_attacks="hook missing-hooks-dir config-hookspath config-fsmonitor config-filter config-diff-textconv
    config-include config-includeif config-sshcommand config-credential config-worktree commondir info-attributes
    gitlink alternates"
fresh_repo() {
    mkrepo "$2" && if [ "$1" = missing-hooks-dir ]; then rm -rf "$2/.git/hooks"; fi
}

# --- The main repository's .git -------------------------------------------

for name in $main_attacks; do
    repo=$d/main-$name
    fresh_repo "$name" "$repo"
    before=$(fingerprint "$repo/.git")
    not_ok "$name: refused in .git" attack "$name" .git "$repo"
    is "$name: .git unchanged" "$before" "$(fingerprint "$repo/.git")"
    if runs_code "$name"; then
        is "$name: the host's git runs nothing planted" "nothing planted ran" "$(host_git "$repo")"
    fi
    # Control: the same attack with .git unprotected gets through.
    control=$d/control-$name
    fresh_repo "$name" "$control"
    ok "control $name: --unprotect .git lets it through" attack "$name" .git "$control" --unprotect .git
    if runs_code "$name"; then
        is "control $name: the host's git then runs the planted code" "planted code ran" "$(host_git "$control")"
    else
        ok "control $name: .git/objects/info/alternates written" test -s "$control/.git/objects/info/alternates"
    fi
done

# --- A commit fails, and says what would allow it --------------------------

repo=$d/commit
mkrepo "$repo"
echo two >"$repo/g"
head_before=$(git -C "$repo" rev-parse HEAD)
status=0
out=$(ww "$repo" -- sh -c 'git add g && git commit -q -m two' 2>&1) || status=$?
ok "a commit in a protected repository fails" test "$status" -ne 0
is "HEAD unchanged" "$head_before" "$(git -C "$repo" rev-parse HEAD)"
case $out in
    *index.lock*) ok "git names .git/index.lock" true ;;
    *) ok "git names .git/index.lock" false "$out" ;;
esac
case $out in
    *"allow with --git-write"*) ok "the note names the fix (--git-write)" true ;;
    *) is "the note names the fix (--git-write)" "allow with --git-write" "$out" ;;
esac

# --- No .git is created where there is none --------------------------------

ws=$d/no-git
mkdir -p "$ws"
not_ok "git init in a workspace without .git fails" ww "$ws" -- git init -q
ok "no .git is left on the host" test ! -e "$ws/.git"

# --- A linked worktree: its gitdir and the common directory ----------------

# Both repositories inside one writable root (-w $d/wtroot): the worktree's
# .git file names the gitdir $main/.git/worktrees/wt, whose commondir is
# $main/.git; both are held although $main/.git is not at the top of a root.
main=$d/wtroot/main
mkrepo "$main"
git -C "$main" worktree add -q "$d/wtroot/wt" -b side 2>/dev/null
wt=$d/wtroot/wt
for name in hook config-fsmonitor config-worktree commondir; do
    for target in "$main/.git/worktrees/wt" "$main/.git"; do
        # The hooks of a worktree are its common directory's.
        [ "$name" = hook ] && [ "$target" = "$main/.git/worktrees/wt" ] && continue
        before=$(fingerprint "$main/.git")
        not_ok "worktree $name: refused in $(basename "$(dirname "$target")")/$(basename "$target")" \
            attack "$name" "$target" "$wt" -w "$d/wtroot"
        is "worktree $name: the repository's .git unchanged" "$before" "$(fingerprint "$main/.git")"
    done
done
is "worktree: the host's git runs nothing planted in the worktree" "nothing planted ran" "$(host_git "$wt")"
is "worktree: the host's git runs nothing planted in the main repository" "nothing planted ran" "$(host_git "$main")"
ok "control worktree: --unprotect .git lets config-fsmonitor through in the common directory" \
    attack config-fsmonitor "$main/.git" "$wt" -w "$d/wtroot" --unprotect .git
is "control worktree: the host's git in the worktree then runs the planted code" "planted code ran" "$(host_git "$wt")"

# --- A submodule: the superproject's .git/modules/NAME ---------------------

sup=$d/super
mkrepo "$d/subsrc"
mkrepo "$sup"
git -C "$sup" -c protocol.file.allow=always submodule add -q "$d/subsrc" sub >/dev/null 2>&1
git -C "$sup" commit -q -m sub
ok "the submodule's gitdir is .git/modules/sub" test -d "$sup/.git/modules/sub/hooks"
for name in hook config-fsmonitor; do
    before=$(fingerprint "$sup/.git")
    # From the superproject, and from the submodule's checkout (whose .git
    # file names the module's gitdir) with the superproject writable.
    not_ok "submodule $name: refused from the superproject" attack "$name" .git/modules/sub "$sup"
    not_ok "submodule $name: refused from the submodule" attack "$name" "$sup/.git/modules/sub" "$sup/sub" -w "$sup"
    is "submodule $name: the superproject's .git unchanged" "$before" "$(fingerprint "$sup/.git")"
done
is "submodule: the host's git runs nothing planted" "nothing planted ran" "$(host_git "$sup/sub")"
is "superproject: the host's git runs nothing planted" "nothing planted ran" "$(host_git "$sup")"
ok "control submodule: --unprotect .git lets a hook into .git/modules/sub" attack hook .git/modules/sub "$sup" --unprotect .git
is "control submodule: the host's git in the submodule then runs the planted hook" "planted code ran" "$(host_git "$sup/sub")"

# The submodule's own .git in the superproject's workspace (protected since
# this commit: before, the host's git in the superproject ran the command's
# fsmonitor).  submodule-uninit: the submodule is not checked out, so its
# .git is missing and held by a placeholder.
for name in submodule-gitfile submodule-repo submodule-uninit; do
    s=$d/sup-$name
    git clone -q "$sup" "$s" 2>/dev/null
    if [ "$name" != submodule-uninit ]; then
        git -C "$s" -c protocol.file.allow=always submodule update -q --init >/dev/null 2>&1
        ok "$name: the submodule is checked out" test -f "$s/sub/.git"
    else
        ok "$name: the submodule is not checked out" test ! -e "$s/sub/.git"
    fi
    c=$d/control-$name
    cp -a "$s" "$c"
    before=$(fingerprint "$s/.git")
    gitfile_before=$(cat "$s/sub/.git" 2>/dev/null || echo none)
    not_ok "$name: refused" attack "$name" .git/modules/sub "$s"
    is "$name: the submodule's .git unchanged" "$gitfile_before" "$(cat "$s/sub/.git" 2>/dev/null || echo none)"
    is "$name: the superproject's .git unchanged" "$before" "$(fingerprint "$s/.git")"
    is "$name: the host's git in the superproject runs nothing planted" "nothing planted ran" "$(host_git "$s")"
    # The same attack with .git unprotected gets through.
    ok "control $name: --unprotect .git lets it through" attack "$name" .git/modules/sub "$c" --unprotect .git
    is "control $name: the host's git in the superproject then runs the planted code" "planted code ran" "$(host_git "$c")"
done

# --- --git-write: git can commit; hooks and configuration stay read-only ---

# A fingerprint of everything in .git but the object store, which
# --git-write opens (objects/info/alternates only says where objects are
# read from).
fingerprint_but_objects() {
    fingerprint "$1" | grep -v '^\./objects/'
}

repo=$d/gw-commit
mkrepo "$repo"
echo two >"$repo/g"
ok "--git-write: git add and git commit succeed" ww "$repo" --git-write -- sh -c 'git add g && git commit -q -m two'
is "--git-write: the commit is on the host" "two" "$(git -C "$repo" log -1 --format=%s)"
is "--git-write: the host's index came back (status clean)" "" "$(git -C "$repo" status --porcelain)"
ok "--git-write: git fsck on the host" git -C "$repo" fsck --no-progress
ok "--git-write: a branch, a merge, a stash and a gc" ww "$repo" --git-write -- sh -c \
    'git checkout -q -b side && echo 3 >h && git add h && git commit -q -m three && git checkout -q main &&
     git merge -q --no-ff -m merged side && echo 4 >>f && git stash -q && git gc -q'
is "--git-write: the host's history" "merged one three two" "$(git -C "$repo" log --format=%s | LC_ALL=C sort | tr '\n' ' ' | sed 's/ $//')"
is "--git-write: the host's branches (packed by gc)" "main side" "$(git -C "$repo" for-each-ref --format='%(refname:short)' refs/heads | tr '\n' ' ' | sed 's/ $//')"
is "--git-write: the host is on main" "main" "$(git -C "$repo" symbolic-ref --short HEAD)"
is "--git-write: the stash is on the host" "1" "$(git -C "$repo" stash list | wc -l)"
is "--git-write: status clean on the host" "" "$(git -C "$repo" status --porcelain)"
ok "--git-write: git fsck on the host after gc" git -C "$repo" fsck --no-progress

# Every attack again, now with --git-write: whether or not git inside gets
# it written in the sandbox's own view, nothing of .git outside the object
# store changes on the host and the host's git runs nothing planted.
for name in $main_attacks; do
    repo=$d/gw-$name
    fresh_repo "$name" "$repo"
    before=$(fingerprint_but_objects "$repo/.git")
    out=$(attack "$name" .git "$repo" --git-write 2>&1)
    is "--git-write $name: .git unchanged on the host (but objects/)" "$before" "$(fingerprint_but_objects "$repo/.git")"
    if runs_code "$name"; then
        is "--git-write $name: the host's git runs nothing planted" "nothing planted ran" "$(host_git "$repo")"
    fi
    if [ "$name" = gitlink ]; then
        case $out in
            *"index was not written back"*"new submodule"*) ok "--git-write gitlink: the warning names the new submodule" true ;;
            *) is "--git-write gitlink: the warning names the new submodule" "index was not written back ... new submodule" "$out" ;;
        esac
    fi
done
for name in submodule-gitfile submodule-repo; do
    s=$d/gw-sup-$name
    git clone -q "$sup" "$s" 2>/dev/null
    git -C "$s" -c protocol.file.allow=always submodule update -q --init >/dev/null 2>&1
    gitfile_before=$(cat "$s/sub/.git")
    attack "$name" .git/modules/sub "$s" --git-write >/dev/null 2>&1
    is "--git-write $name: the submodule's .git unchanged" "$gitfile_before" "$(cat "$s/sub/.git" 2>/dev/null || echo none)"
    is "--git-write $name: the host's git in the superproject runs nothing planted" "nothing planted ran" "$(host_git "$s")"
done

# What may not come back: a HEAD that names no ref, an index written while
# the host's git held it, or one the host changed meanwhile.  The command
# and the test take turns through two FIFOs (-w: the command writes one).
repo=$d/gw-head
mkrepo "$repo"
out=$(ww "$repo" --git-write -- sh -c 'printf "ref: ../../../etc/x\n" >.git/HEAD' 2>&1)
is "--git-write: a HEAD that names no ref stays on the host" "ref: refs/heads/main" "$(cat "$repo/.git/HEAD")"
case $out in
    *"HEAD was not written back"*) ok "--git-write: and a warning says so" true ;;
    *) is "--git-write: and a warning says so" "HEAD was not written back" "$out" ;;
esac

turns=$d/turns
mkdir -p "$turns"
# take_turns REPO HOST-STEP: the command commits g, then waits while the
# host runs HOST-STEP; prints what sbx said.
take_turns() {
    local repo=$1 step=$2
    rm -f "$turns/a" "$turns/b" && mkfifo "$turns/a" "$turns/b"
    echo new >"$repo/g"
    ww "$repo" --git-write -w "$turns" -- sh -c \
        "git add g && git commit -q -m inside && echo committed >$turns/a && read go <$turns/b" \
        >"$turns/out" 2>&1 &
    local pid=$!
    read -r _ <"$turns/a"
    (cd "$repo" && eval "$step")
    echo go >"$turns/b"
    wait "$pid"
    cat "$turns/out"
}
repo=$d/gw-locked
mkrepo "$repo"
out=$(take_turns "$repo" 'touch .git/index.lock')
is "--git-write: the commit made while the host's git held the index is in the refs" "inside" "$(git -C "$repo" log -1 --format=%s)"
ok "--git-write: the host's index.lock is left as it was" test -e "$repo/.git/index.lock"
case $out in
    *"index was not written back: index.lock"*) ok "--git-write: a warning names the host's index.lock" true ;;
    *) is "--git-write: a warning names the host's index.lock" "index was not written back: index.lock ..." "$out" ;;
esac
rm -f "$repo/.git/index.lock"
repo=$d/gw-changed
mkrepo "$repo"
out=$(take_turns "$repo" 'echo host >hostfile && git add hostfile')
is "--git-write: the index the host changed during the run is kept" "hostfile" "$(git -C "$repo" diff --cached --name-only HEAD~1 -- hostfile)"
case $out in
    *"index was not written back: it changed on the host"*) ok "--git-write: a warning says the host changed it" true ;;
    *) is "--git-write: a warning says the host changed it" "index was not written back: it changed on the host ..." "$out" ;;
esac

# A .git that is no repository this user can read (another user's
# placeholder, an empty directory) stays read-only as it is.
ws=$d/gw-not-a-repository
mkdir -p "$ws/.git" && touch "$ws/.git/junk" && chmod 0111 "$ws/.git"
ok "--git-write: a .git that is no repository does not stop the run" ww "$ws" --git-write -- true
not_ok "--git-write: and stays read-only" ww "$ws" --git-write -- mkdir .git/x
chmod 700 "$ws/.git"

ws=$d/gw-no-git
mkdir -p "$ws"
not_ok "--git-write: git init where there is no .git fails" ww "$ws" --git-write -- git init -q
ok "--git-write: no .git is left on the host" test ! -e "$ws/.git"
for bad in "-p read-only" "-p danger-full-access" "--unprotect .git"; do
    status=0
    # shellcheck disable=SC2086
    out=$("$SBX" run --git-write $bad -C "$ws" -- true 2>&1) || status=$?
    is "--git-write $bad: refused (125)" 125 "$status"
    case $out in
        "sbx: "*"--git-write"*) ok "--git-write $bad: one line naming --git-write" test "$(printf '%s\n' "$out" | wc -l)" -eq 1 ;;
        *) is "--git-write $bad: one line naming --git-write" "sbx: ... --git-write ..." "$out" ;;
    esac
done

done_testing
