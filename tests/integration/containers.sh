#!/usr/bin/env bash
# sbx inside a container (issue 31): run under progs/container-like.c, which
# gives the command what Docker's and Podman's defaults give a container's
# processes (their capability set, and the part of their seccomp profile
# that matters to a sandbox: no new namespaces, no mounts), sbx refuses what
# needs namespaces (125, one line naming --allow-unprotected or network
# restricted), runs with Landlock and seccomp alone under --allow-unprotected
# (workspace writes land, others are refused, the network is refused) and
# says what it did not enforce; `sbx doctor` says what it can enforce there.
# No container engine runs on this machine (its kernel and setup do not
# start one), so the engines' defaults are applied by the test instead.
# Also run as uid 65534 (unprivileged.sh).
set -u
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"

require_helper
d=$(scratch) && ws=$d/ws && mkdir "$ws" && chmod 777 "$ws" || exit 1
if ! cc -O1 -o "$d/container-like" "$here/progs/container-like.c" -lseccomp 2>"$d/cc.log"; then
    echo "1..0 # SKIP cannot build container-like.c (cc and libseccomp-dev): $(head -1 "$d/cc.log")"
    exit 0
fi
in_container() { (cd "$ws" && "$d/container-like" "$@"); }
one_line() {  # DESC TEXT PATTERN: TEXT is one line starting "sbx: " and matching PATTERN
    if [ "$(printf '%s\n' "$2" | wc -l)" = 1 ] && [[ $2 == "sbx: "* ]] && printf '%s' "$2" | grep -q -- "$3"; then
        _tap_result ok "$1"
    else
        _tap_result fail "$1" "got: $2"
    fi
}

out=$(in_container sh -c 'unshare -U true 2>/dev/null; echo "status: $?"')
is "the container-like process can make no user namespace (as in a container)" "1" "$(printf '%s\n' "$out" | sed -n 's/^status: //p')"

doctor=$(in_container "$SBX" doctor 2>&1)
ok "sbx doctor: user namespaces: no" grep -q '^user namespaces:  no' <<<"$doctor"
ok "... it says what Landlock and seccomp still enforce" grep -q 'enforced then: files: .*network restricted' <<<"$doctor"
ok "... and what they do not" grep -q 'not enforced:  protected paths.*network limited' <<<"$doctor"
ok "... and that sbx runs under a seccomp filter, as a container's processes do" \
    grep -q '^container: .*runs under a seccomp filter' <<<"$doctor"

out=$(in_container "$SBX" run -p workspace-write -- sh -c 'echo hi > f' 2>&1)
is "sbx run -p workspace-write: refused (125)" "125" "$?"
one_line "... in one line naming --allow-unprotected" "$out" "allow-unprotected"
one_line "... whose first fix is the container's seccomp profile, not a sysctl of the host (issue 31)" \
    "$(printf '%s\n' "$out" | grep -v sysctl)" "runs in a container (.*) whose seccomp profile"
is "... and nothing ran" "<none>" "$(ls "$ws/f" 2>/dev/null || echo "<none>")"

out=$(in_container "$SBX" run -p workspace-write --allow-unprotected -- \
    sh -c 'echo hi > f && echo wrote; touch /etc/sbx-container-test 2>/dev/null || echo refused' 2>"$d/err")
is "--allow-unprotected: Landlock and seccomp alone: the workspace write lands, /etc is refused" "wrote
refused" "$out"
is "... the file is there" "hi" "$(cat "$ws/f" 2>/dev/null)"
ok "... /etc/sbx-container-test was not made" test ! -e /etc/sbx-container-test
ok "... and sbx says what it did not enforce" grep -q 'not enforced: protected paths' "$d/err"
rm -f "$ws/f"

out=$(in_container "$SBX" run -p workspace-write --allow-unprotected -n restricted -- python3 -c '
import errno, socket
try:
    socket.create_connection(("127.0.0.1", 9), timeout=5)
    print("connected")
except OSError as e:
    print(errno.errorcode.get(e.errno, e.errno))' 2>/dev/null)
is "... network restricted holds (seccomp): a TCP socket is refused" "EPERM" "$out"

out=$(in_container "$SBX" run -p workspace-write --allow-unprotected -n limited -- true 2>&1)
is "-n limited (a network namespace): refused (125)" "125" "$?"
one_line "... in one line naming --network restricted" "$out" "network restricted"
done_testing
