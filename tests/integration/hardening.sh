#!/usr/bin/env bash
# The escapes of an outside attack run (issue 13), each checked by its effect
# on the host: IPC objects, files' modes and times, protected names, process
# counts; and the protected names above a nested workspace (issue 29).  Each
# of these attacks got through the binaries before the fix.
# Runs as root and again as uid 65534 (unprivileged.sh).  The seccomp attacks
# (setuid bits, terminal ioctls) are in enforcement-syscalls.sh, the stopped
# timeout in supervisor.sh.
set -u
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
require_helper
python=/usr/bin/python3
ipc="$python $here/progs/ipc.py"
unprivileged=${SBX_TEST_UNPRIVILEGED:-}

d=$(scratch)
ws=$d/ws
host=$d/host
mkdir -p "$ws" "$host"

# --- 1. IPC: every sandbox has its own SysV IPC and message queues ------------
key=$(( ($$ << 8) + 17 ))
queue=/sbx-test-$$
modes=("-p read-only" "-p workspace-write" "-p external-sandbox -n limited")
mq_missing=$(has_posix_mqueue)
for mode in "${modes[@]}"; do
    # shellcheck disable=SC2086  # $mode is two or four words
    run() { "$SBX" run $mode -C "$ws" --stdin null -- "$@"; }
    ok "ipc $mode: the sandbox can use SysV shared memory of its own" run $ipc shm-create "$key"
    not_ok "ipc $mode: a segment made in the sandbox is not the host's" $ipc shm-exists "$key"
    $ipc shm-remove "$key" 2>/dev/null

    $ipc shm-create "$key"
    not_ok "ipc $mode: a host segment is not reachable" run $ipc shm-exists "$key"
    run ipcrm --all=shm >/dev/null 2>&1
    ok "ipc $mode: ipcrm --all=shm inside leaves the host's segment" $ipc shm-exists "$key"
    $ipc shm-remove "$key"

    if [ -n "$mq_missing" ]; then
        skip "ipc $mode: POSIX message queues" "$mq_missing"
        continue
    fi
    $ipc mq-create "$queue" && $ipc mq-send "$queue"
    not_ok "ipc $mode: a host message queue cannot be sent to" run $ipc mq-send "$queue"
    not_ok "ipc $mode: nor received from" run $ipc mq-receive "$queue"
    run $ipc mq-unlink "$queue" >/dev/null 2>&1
    ok "ipc $mode: nor removed, and its message is still there" $ipc mq-receive "$queue"
    $ipc mq-unlink "$queue"
    run $ipc mq-create "$queue-inside" >/dev/null 2>&1
    not_ok "ipc $mode: a queue made inside does not outlive the run" $ipc mq-exists "$queue-inside"
    $ipc mq-unlink "$queue-inside" 2>/dev/null
done
if [ -n "$mq_missing" ]; then
    skip "ipc: /dev/mqueue inside shows the sandbox's own queues" "$mq_missing"
elif [ -d /dev/mqueue ]; then
    ok "ipc: /dev/mqueue inside shows the sandbox's own queues" \
        "$SBX" run -p read-only -- sh -c "$ipc mq-create /in-$$ 2>/dev/null; test -e /dev/mqueue/in-$$ || exit 1"
else
    skip "ipc: /dev/mqueue inside shows the sandbox's own queues" "the host has no /dev/mqueue"
fi

# --- 2. Inherited descriptors refer to the sandbox's view -------------------
mode_and_times() { stat -c '%a %Y %Z' "$1"; }
echo content > "$host/f"
chmod 644 "$host/f"
touch -d '2020-01-01 00:00:00' "$host/f"
before=$(mode_and_times "$host/f")
for mode in read-only workspace-write; do
    ro() { "$SBX" run -p $mode -C "$ws" -- "$@" < "$host/f"; }
    not_ok "fds $mode: chmod of /proc/self/fd/0 (a file outside the roots) is refused" ro chmod 666 /proc/self/fd/0
    not_ok "fds $mode: fchmod of stdin is refused" ro $python -c 'import os; os.fchmod(0, 0o666)'
    not_ok "fds $mode: futimens of stdin is refused" ro $python -c 'import os; os.utime(0, (0, 0))'
    not_ok "fds $mode: utimes through /proc/self/fd/0 is refused" ro touch -d 2001-01-01 /proc/self/fd/0
    not_ok "fds $mode: fsetxattr of stdin is refused" ro $python -c 'import os; os.setxattr(0, "user.sbx", b"1")'
    not_ok "fds $mode: chgrp of /proc/self/fd/0 is refused" ro chgrp "$(id -g)" /proc/self/fd/0
done
is "fds: the file's mode, mtime and ctime are unchanged" "$before" "$(mode_and_times "$host/f")"
is "fds: the file has no xattr" "" "$(getfattr --absolute-names -d "$host/f" 2>/dev/null | grep -v '^#' | grep . || true)"

mkdir -p "$host/d/sub"
echo x > "$host/d/sub/x"
chmod 644 "$host/d/sub/x"
not_ok "fds: with a directory on stdin, .. does not reach the host's mounts" \
    "$SBX" run -p read-only -- sh -c 'chmod 600 /proc/self/fd/0/../d/sub/x' < "$host/d"
not_ok "fds: nor does the directory itself" \
    "$SBX" run -p read-only -- sh -c 'chmod 600 /proc/self/fd/0/sub/x' < "$host/d"
is "fds: the file under the directory keeps its mode" "644" "$(stat -c %a "$host/d/sub/x")"

mkdir -p "$ws/.git/hooks"
(cd "$d" && "$SBX" run -p workspace-write -C ws -- \
    sh -c 'echo evil > /proc/self/fd/0/ws/.git/hooks/pre-commit' < . ) >/dev/null 2>&1
is "fds: a protected name is not writable through a directory on stdin" "<missing>" \
    "$(cat "$ws/.git/hooks/pre-commit" 2>/dev/null || echo '<missing>')"
"$SBX" run -p workspace-write -C "$ws" -- sh -c 'echo evil > /proc/self/fd/0/.git/hooks/pre-commit' \
    < "$ws" >/dev/null 2>&1
is "fds: nor through the workspace itself on stdin" "<missing>" \
    "$(cat "$ws/.git/hooks/pre-commit" 2>/dev/null || echo '<missing>')"

# A terminal on stdin: the command cannot make the user's terminal writable
# for everyone (the previous binaries left it crw-rw-rw-).
tty_mode_after() {
    "$python" - "$@" <<'PY'
import os, pty, stat, subprocess, sys
master, slave = pty.openpty()
name = os.ttyname(slave)
os.chmod(name, 0o600)
subprocess.run(sys.argv[1:], stdin=slave, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
print(oct(stat.S_IMODE(os.stat(name).st_mode)))
PY
}
is "fds: chmod of a terminal on stdin is refused, its mode unchanged" "0o600" \
    "$(tty_mode_after "$SBX" run -p read-only -- chmod 666 /proc/self/fd/0)"
is "fds: ... and through fchmod" "0o600" \
    "$(tty_mode_after "$SBX" run -p workspace-write -C "$ws" -- $python -c 'import os; os.fchmod(0, 0o666)')"
ok "fds: the terminal still works for the command (isatty, a termios read)" \
    "$python" -c '
import os, pty, subprocess, sys
master, slave = pty.openpty()
sys.exit(subprocess.run([sys.argv[1], "run", "-p", "read-only", "--", "sh", "-c", "test -t 0 && stty -g"],
                        stdin=slave, stdout=subprocess.DEVNULL).returncode)' "$SBX"

# The helper run directly (as Codex runs it) with stdout and stderr on a file
# outside the writable roots: the command gets the writes, not the file.
: > "$host/log"
chmod 644 "$host/log"
touch -d '2020-01-01 00:00:00' "$host/log"
helper_ww() {
    "$SBX_LINUX_SANDBOX_EXE" --sandbox-policy-cwd "$ws" --sandbox-policy '{"type":"workspace-write"}' -- "$@"
}
helper_ww sh -c 'chmod 666 /proc/self/fd/1; touch -d 2001-01-01 /proc/self/fd/2
    python3 -c "import os; os.fchmod(1, 0o666); os.utime(2, (0, 0))"' >> "$host/log" 2>&1
is "fds: stdout and stderr on a file outside the roots: its mode and mtime are unchanged" \
    "644 1577836800 0" "$(stat -c '%a %Y %s' "$host/log")"
helper_ww sh -c 'echo written; echo also >&2; echo end' > "$host/log" 2>&1
is "fds: ... the command ran" "0" "$?"
is "fds: ... and its writes reached the file, in order" "written also end" \
    "$(tr '\n' ' ' < "$host/log" | sed 's/ $//')"
{ echo before; helper_ww echo inside; echo after; } > "$host/log"
is "fds: ... at the caller's offset" "before inside after" "$(tr '\n' ' ' < "$host/log" | sed 's/ $//')"
: > "$host/rw"
"$SBX_LINUX_SANDBOX_EXE" --sandbox-policy-cwd "$ws" --sandbox-policy '{"type":"read-only"}' -- true <> "$host/rw" \
    2>"$d/err"
is "fds: stdin open for reading and writing on a file outside the roots is refused (125)" "125" "$?"
is "fds: ... with one line naming it" "1" "$(grep -c "stdio: stdin is $host/rw" "$d/err")"

# What must keep working: the offset, a shared description, FIFOs, heredocs.
printf 'a\nb\nc\n' > "$host/lines"
is "fds: stdin's offset is carried over" "b c" \
    "$( { read -r _; "$SBX" run -p read-only -- cat; } < "$host/lines" | tr '\n' ' ' | sed 's/ $//')"
"$SBX_LINUX_SANDBOX_EXE" --sandbox-policy-cwd "$ws" --sandbox-policy '{"type":"workspace-write"}' -- \
    sh -c 'echo one; echo two >&2; echo three' > "$ws/log" 2>&1
is "fds: >log 2>&1 still shares one offset" "one two three" "$(tr '\n' ' ' < "$ws/log" | sed 's/ $//')"
mkfifo "$host/fifo"
chmod 644 "$host/fifo"
(echo through-fifo > "$host/fifo") &
is "fds: a named FIFO on stdin is read" "through-fifo" \
    "$("$SBX" run -p read-only -- sh -c 'chmod 666 /proc/self/fd/0 2>/dev/null; cat' < "$host/fifo")"
wait
is "fds: ... and its mode is unchanged" "644" "$(stat -c %a "$host/fifo")"
big=$(head -c 200000 /dev/zero | tr '\0' x)
is "fds: a heredoc larger than a pipe (a deleted file) still reaches the command" "200001" \
    "$("$SBX" run -p read-only -- wc -c <<EOF
$big
EOF
)"
exec 3<"$host/lines"
ln "$host/lines" "$host/lines-link"
rm "$host/lines"
"$SBX" run -p read-only -- cat <&3 >/dev/null 2>"$d/err"
is "fds: a deleted name of a file that has another name is refused (125)" "125" "$?"
exec 3<&-

# --- 3. Protected names where no placeholder can be made ---------------------
w=$d/w555
mkdir "$w"
chmod 555 "$w"
"$SBX" run -p workspace-write -C "$w" -- \
    sh -c 'chmod u+w . && mkdir -p .git/hooks && echo evil > .git/hooks/pre-commit' >/dev/null 2>"$d/err"
rc=$?
if [ -n "$unprivileged" ]; then
    is "0555 root: a protected name the sandbox cannot hold is refused (125)" "125" "$rc"
    is "0555 root: ... with one line and the fix" "1" "$(grep -c '^sbx: .*chmod u+w' "$d/err")"
else
    is "0555 root: root makes its placeholders there, and the command fails" "1" "$rc"
fi
is "0555 root: no .git was created" "" "$(protected_names_in "$w")"
chmod 755 "$w"
if [ -n "$unprivileged" ]; then
    # A root of another user that the command cannot write either: runs.
    ok "a root of another user, which the command cannot change, still runs" \
        "$SBX" run -p workspace-write -w /usr/share -C "$ws" -- true
else
    skip "a root of another user still runs" "needs an unprivileged user"
fi

# --- 6. --limit-procs counts the sandbox's processes, and only them ---------
# As root the count is a pids cgroup's (linux-helper/cgroup.h): where the
# machine gives root none, sbx refuses --limit-procs, naming the fix.
forks() { "$SBX" run "$@" -- $python "$here/progs/forks.py" 40; }
if [ -n "$unprivileged" ] || [ "$(id -u)" != 0 ] || no_cgroup=$(has_pids_cgroup); then
    is "limit-procs 8: the command and 7 children, not 40" "7" "$(forks --limit-procs 8 -p workspace-write -C "$ws")"
    is "limit-procs 3 under external-sandbox" "2" "$(forks --limit-procs 3 -p external-sandbox)"
    # Other processes of the same user on the machine do not count.
    for _ in 1 2 3 4 5 6 7 8 9 10; do sleep 600 & done
    is "limit-procs 8 with 10 other processes of this user running" "7" "$(forks --limit-procs 8)"
    kill $(jobs -p) 2>/dev/null
    wait 2>/dev/null
else
    "$SBX" run --limit-procs 8 -p workspace-write -C "$ws" -- touch "$ws/ran" 2>"$d/err"
    is "limit-procs as root without a pids cgroup: refused (125)" "125" "$?"
    is "... naming the cause and the fix" "1" "$(grep -c -- '--limit-procs cannot be enforced for root.*pids cgroup' "$d/err")"
    is "... nothing ran" "no" "$([ -e "$ws/ran" ] && echo yes || echo no)"
    skip "limit-procs counts the sandbox's processes as root" "$no_cgroup"
fi
"$SBX" run -p danger-full-access --limit-procs 3 -- true 2>"$d/err"
is "limits under danger-full-access are refused (125)" "125" "$?"
is "... naming external-sandbox" "1" "$(grep -c 'external-sandbox' "$d/err")"
is "limit-open-files holds: the command cannot raise it" "fail 64" \
    "$("$SBX" run --limit-open-files 64 -- sh -c 'ulimit -n 1024 2>/dev/null && echo raised || echo fail; ulimit -n' | tr '\n' ' ' | sed 's/ $//')"

# --- 7. Protected names above the workspace (issue 29) -----------------------
# A workspace nested in a writable root: every directory from the root's top
# down to the workspace holds the protected names, as the top does.  Without
# that, `git init ..` in the sandbox made a repository above the workspace
# whose core.fsmonitor ran on the host at the next `git status` there.  Once
# with /tmp as the outer root (as the issue reports it), once with a -w root;
# a repository that exists in between (a/.git) stays unchanged.
if command -v git >/dev/null; then
    above=$(mktemp -d /tmp/sbx-test-above.XXXXXX)
    chmod 755 "$above"
    trap '_cleanup_scratch; rm -rf "$above"' EXIT
    pwned=$d/pwned
    for outer in "$above" "$d/outer"; do
        case $outer in
            /tmp/*) how=/tmp; extra=(); root=/tmp ;;
            *) how=-w; extra=(-w "$outer"); root=$outer ;;
        esac
        ws3=$outer/a/b/ws
        mkdir -p "$ws3"
        rm -f "$pwned"
        git init -q "$outer/a"
        config_before=$(sha1sum < "$outer/a/.git/config")
        in_ws3() { "$SBX" run -p workspace-write "${extra[@]}" -C "$ws3" -- sh -c "$1" >/dev/null 2>&1; }
        is "above ($how): sbx check denies a write to ../.git/config, naming the rule" \
            "denied   write    $outer/a/b/.git/config  (protected name .git in $outer/a/b, on the way from the writable root $root down to the workspace $ws3; allow with --unprotect .git)" \
            "$(cd "$ws3" && "$SBX" check -p workspace-write "${extra[@]}" --write ../.git/config)"
        not_ok "above ($how): git init .. and core.fsmonitor there are refused" \
            in_ws3 "git init -q .. && git -C .. config core.fsmonitor 'touch $pwned'"
        not_ok "above ($how): mkdir ../.git is refused" in_ws3 "mkdir ../.git"
        not_ok "above ($how): touch ../.sbx is refused" in_ws3 "touch ../.sbx"
        not_ok "above ($how): mkdir -p ../.codex/x is refused" in_ws3 "mkdir -p ../.codex/x"
        not_ok "above ($how): a symlink ../.agents is refused" in_ws3 "ln -s '$d' ../.agents"
        not_ok "above ($how): a file ../.aws is refused" in_ws3 "echo x > ../.aws"
        not_ok "above ($how): core.fsmonitor in the repository above (../../.git) is refused" \
            in_ws3 "git -C ../.. config core.fsmonitor 'touch $pwned'"
        not_ok "above ($how): a hook in ../../.git is refused" \
            in_ws3 "echo 'touch $pwned' > ../../.git/hooks/post-checkout"
        not_ok "above ($how): renaming ../../.git away is refused" in_ws3 "mv ../../.git ../../git-old"
        if [ "$how" = /tmp ]; then
            not_ok "above ($how): git init at the top of the nesting (../../..) is refused" \
                in_ws3 "git init -q ../../.."
            is "above ($how): nothing was created in ../../.." "" "$(protected_names_in "$outer")"
        fi
        ok "above ($how): the workspace and the rest of ../.. stay writable" \
            in_ws3 "echo x > new-file && echo y > ../../beside-git && rm ../../beside-git"
        is "above ($how): nothing was created in ../" "" "$(protected_names_in "$outer/a/b")"
        is "above ($how): ../.. holds only its .git" ".git" "$(protected_names_in "$outer/a" | xargs)"
        is "above ($how): ../../.git/config is unchanged" "$config_before" \
            "$(cat "$outer/a/.git/config" 2>/dev/null | sha1sum)"
        is "above ($how): no hook was made" "<missing>" \
            "$(cat "$outer/a/.git/hooks/post-checkout" 2>/dev/null || echo '<missing>')"
        (cd "$ws3" && git status >/dev/null 2>&1)
        is "above ($how): a git status on the host afterwards runs nothing planted" "<missing>" \
            "$(cat "$pwned" 2>/dev/null || echo '<missing>')"
    done
    # A -w root inside /tmp: the directories above it hold the names too.
    mkdir -p "$above/w/r"
    not_ok "above (-w inside /tmp): git init in the directory above the root is refused" \
        "$SBX" run -p workspace-write -w "$above/w/r" -C "$ws" -- git init -q "$above/w"
    is "above (-w inside /tmp): nothing was created there" "" "$(protected_names_in "$above/w")"
else
    skip "protected names above the workspace (issue 29)" "no git"
fi

# --- The host replaces a covered path while the command runs (issue 29, class 7)
# A mount covers a dentry, not a name: a file the host renames over a denied
# or read-only path (as editors save), or makes where one was missing, shows
# uncovered.  The helper watches the way of each covered path and kills the
# sandbox at the first such event (linux-helper/host_watch.h); the run ends
# 125 naming the path.  The command below ends on its own, exit 0, only if it
# got through (it read the new secret, or wrote the read-only file): what
# the binaries before the fix did.  The time between the host's rename and
# the kill remains (a command that keeps trying may win it: noted below,
# never failed on).
hw=$(scratch)
host_replaces() {  # DESC SETUP-IN-WS HOST-ACTION COMMAND [sbx options...]
    local desc=$1 setup=$2 action=$3 cmd=$4; shift 4
    rm -rf "$hw/ws" "$hw/new"
    mkdir -p "$hw/ws"
    (cd "$hw/ws" && sh -c "$setup")
    local err=$hw/err
    "$SBX" run -p workspace-write -C "$hw/ws" --stdin null "$@" -- \
        sh -c "touch ready; until $cmd; do sleep 0.01; done" >"$hw/out" 2>"$err" &
    local pid=$!
    if ! eventually test -e "$hw/ws/ready"; then
        kill "$pid" 2>/dev/null
        _tap_result fail "host replaces: $desc" "the command never started: $(cat "$err")"
        return
    fi
    (cd "$hw/ws" && sh -c "$action")
    wait "$pid"
    local code=$?
    is "host replaces: $desc: the run is stopped (125)" 125 "$code"
    ok "host replaces: $desc: sbx names what the host replaced" \
        grep -q "^sbx: the run was stopped: host watch: the host replaced $hw/ws/" "$err"
    grep -q got-through "$hw/out" && echo "# host replaces: $desc: the command got through before the kill (the window)"
}
host_replaces "a denied file renamed over" "echo old > .env" \
    "echo new > ../new && mv ../new .env" "grep -qs new .env && echo got-through" --deny .env
host_replaces "a missing denied file made" "" \
    "rmdir .env 2>/dev/null; echo new > .env" "grep -qs new .env && echo got-through" --deny .env
host_replaces "a directory on a denied file's way renamed and made again" "mkdir sub && echo old > sub/.env" \
    "mv sub sub-old && mkdir sub && echo new > sub/.env" "grep -qs new sub/.env && echo got-through" --deny sub/.env
host_replaces "a read-only file saved by rename" "echo old > notes" \
    "echo new > ../new && mv ../new notes" "(echo x >> notes) 2>/dev/null && echo got-through" --read-only notes
host_replaces "a protected name (.git) made by rename" "" \
    "mkdir ../g && rmdir .git 2>/dev/null; mv ../g .git" "mkdir .git/hooks 2>/dev/null && echo got-through"
# What the host may do meanwhile: write the denied file in place, make other
# files, and rename beside it.
rm -rf "$hw/ws" && mkdir -p "$hw/ws" && echo old > "$hw/ws/.env"
"$SBX" run -p workspace-write -C "$hw/ws" --stdin null --deny .env -- \
    sh -c 'touch ready; until [ -e go ]; do sleep 0.01; done' >/dev/null 2>"$hw/err" &
pid=$!
if eventually test -e "$hw/ws/ready"; then
    echo new >>"$hw/ws/.env" && echo a >"$hw/ws/x" && mv "$hw/ws/x" "$hw/ws/y" && mkdir "$hw/ws/d" && touch "$hw/ws/go"
fi
wait "$pid"
is "host replaces: in-place writes and other names leave the run alone" "0 " "$? $(cat "$hw/err")"

done_testing
