#!/usr/bin/env bash
# sbx doctor: the facts and the live probes, text and JSON.
. "$(dirname "$0")/lib.sh"
: "${SBX:?sbx under test}"

json=$("$SBX" doctor --json); rc=$?
is "sbx doctor --json exits 0 on this machine (every mode enforced)" "0" "$rc"
field() { printf '%s' "$json" | python3 -c "import json,sys; d=json.load(sys.stdin); print($1)"; }
is "it reports the running kernel" "$(uname -r)" "$(field 'd["kernel"]')"
abi=$(field 'd["landlock_abi"]')
ok "it reports a Landlock ABI >= 1 (got $abi)" test "$abi" -ge 1
is "it reports seccomp with user notification" "True True" "$(field 'd["seccomp"]["available"], d["seccomp"]["user_notif"]')"
is "it reports the helper it found" "$SBX_LINUX_SANDBOX_EXE" "$(field 'd["helper"]["path"]')"
is "sandbox-exec is absent on Linux" "False" "$(field 'd["sandbox_exec"]["present"]')"
is "it probes every mode" "read-only,workspace-write,network restricted,network limited" \
    "$(field '",".join(p["mode"] for p in d["probes"])')"
is "every probe check passed" "True" "$(field 'all(c["ok"] for p in d["probes"] for c in p["checks"])')"
ok "audit says whether exact denials are listed" grep -q "^exact denials listed\(: \| with --record-denials; from audit not listed: \)" <<<"$(field 'd["audit"]["summary"]')"

text=$("$SBX" doctor); rc=$?
is "sbx doctor (text) exits 0" "0" "$rc"
case $text in *"every mode is enforced"*) _tap_result ok "the text says every mode is enforced" ;;
    *) _tap_result fail "the text says every mode is enforced" "$text" ;; esac
# One truth about audit in both forms, and no record claimed readable while
# audit is off (none are made).
is "the text's audit line is the JSON's summary" "audit:            $(field 'd["audit"]["summary"]')" \
    "$(grep '^audit:' <<<"$text")"
if [ "$(field 'd["audit"]["enabled"]')" = False ]; then
    is "audit off: the summary says so, and that --record-denials lists them (issue 35)" "exact denials listed with --record-denials; from audit not listed: audit is off (auditctl -e 1 turns it on), so no Landlock denial is recorded" \
        "$(field 'd["audit"]["summary"]')"
    is "audit off: no Landlock record is readable, and none listed" "False False" \
        "$(field 'd["audit"]["landlock_records_readable"], d["audit"]["denials_listed"]')"
    ok "audit off: the records field starts with 'none'" grep -q '^none while audit is off; with it on: ' <<<"$(field 'd["audit"]["records"]')"
else
    skip "audit off: the summary says so" "audit is on here"
fi
if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null; then
    as_nobody=$(cd / && setpriv --reuid 65534 --regid 65534 --clear-groups "$SBX" doctor --json 2>/dev/null)
    is "as uid 65534: whether audit is on is unknown (null), not false" "None False" \
        "$(printf '%s' "$as_nobody" | python3 -c 'import json,sys; a=json.load(sys.stdin)["audit"]; print(a["enabled"], a["denials_listed"])')"
    is "... and the summary says who can tell" "exact denials listed with --record-denials; from audit not listed: this user can neither ask whether audit is on nor read its records: root can" \
        "$(printf '%s' "$as_nobody" | python3 -c 'import json,sys; print(json.load(sys.stdin)["audit"]["summary"])')"
else
    skip "as uid 65534: whether audit is on is unknown" "not root"
fi
case $text in *"landlock:         ABI $abi"*) _tap_result ok "the text shows the Landlock ABI" ;;
    *) _tap_result fail "the text shows the Landlock ABI" "$text" ;; esac

# The facts the tests probe for (lib.sh's has_...), each as the machine
# answers it without sbx.
is "the Landlock ABI is the kernel's" "$(landlock_abi)" "$abi"
is "... and the features sbx uses follow from it (truncate 3, tcp 4, scopes 6)" \
    "$([ "$abi" -ge 3 ] && echo True || echo False) $([ "$abi" -ge 4 ] && echo True || echo False) $([ "$abi" -ge 6 ] && echo True || echo False)" \
    "$(field '" ".join(str(d["landlock"]["features"][k]) for k in ("truncate", "tcp", "scopes"))')"
is "kernel.io_uring_disabled as the kernel has it" "$(cat /proc/sys/kernel/io_uring_disabled 2>/dev/null || echo None)" \
    "$(field 'd["io_uring"]["io_uring_disabled"]')"
is "AppArmor's restriction of user namespaces as the kernel has it" \
    "$(cat /proc/sys/kernel/apparmor_restrict_unprivileged_userns 2>/dev/null || echo None)" \
    "$(field 'd["apparmor"]["restrict_unprivileged_userns"]')"
restricted=$([ "$(cat /proc/sys/kernel/apparmor_restrict_unprivileged_userns 2>/dev/null)" = 1 ] && echo True || echo False)
is "whether that restriction is on" "$restricted" "$(field 'd["apparmor"]["userns_restricted"]')"
# Where it is on, the helper's profile and the fix (the decision itself:
# tests/unit/test_apparmor.cc).
if [ "$restricted" = True ]; then
    ok "the fix loads the helper's profile before any sysctl" python3 -c '
import json, sys
fix = json.loads(sys.argv[1])["apparmor"]["fix"]
sys.exit(not (0 <= fix.find("apparmor_parser -r") < fix.find("apparmor_restrict_unprivileged_userns=0")))' "$json"
else
    ok "no AppArmor fix where nothing restricts user namespaces" python3 -c '
import json, sys
sys.exit("fix" in json.loads(sys.argv[1])["apparmor"])' "$json"
fi
is "the host's IPv6 loopback" "$(has_ipv6_loopback >/dev/null && echo True || echo False)" "$(field 'd["ipv6"]["host_loopback"]')"
is "a new network namespace's IPv6 loopback" "$(has_netns_ipv6_loopback >/dev/null && echo True || echo False)" \
    "$(field 'd["ipv6"]["sandbox_loopback"]')"
is "/dev/shm" "$([ -e /dev/shm ] && echo True || echo False)" "$(field 'd["dev_shm"]')"
if [ "$(id -u)" = 0 ]; then
    is "root's --limit-procs: a pids cgroup" "$(has_pids_cgroup >/dev/null && echo True || echo False)" \
        "$(field 'd["cgroup"]["limit_procs_as_root"]["ok"]')"
    is "uid 65534's user namespaces" "$(has_user_namespaces as_nobody >/dev/null && echo True || echo False)" \
        "$(field 'd["user_namespaces"]["unprivileged"]')"
else
    skip "root's --limit-procs and uid 65534's user namespaces" "not root"
fi
# Another ABI's getpid, unfiltered: sys-probe's answer.
d=$(scratch)
if [ "$(uname -m)" != x86_64 ]; then
    is "other ABIs: not probed off x86_64" "False False" "$(field 'd["other_abis"]["i386_int80"]["runs"], d["other_abis"]["x32"]["runs"]')"
elif cc -O1 -o "$d/sys-probe" "$(dirname "$0")/progs/sys-probe.c" 2>"$d/cc.log"; then
    case $("$d/sys-probe" int80 2>&1) in ok*) int80=True ;; *) int80=False ;; esac
    case $("$d/sys-probe" x32 2>&1) in ok*) x32=True ;; *) x32=False ;; esac
    is "whether i386's int \$0x80 and x32 reach the kernel" "$int80 $x32" \
        "$(field 'd["other_abis"]["i386_int80"]["runs"], d["other_abis"]["x32"]["runs"]')"
else
    not_ok "compiling progs/sys-probe.c: $(head -3 "$d/cc.log")" true
fi
for line in "other ABIs:  " "io_uring:  " "apparmor:  " "cgroup:  " "ipv6:  " "/dev/shm:  "; do
    ok "the text has a line '${line%%:*}:'" grep -q "^$line" <<<"$text"
done

# A helper that enforces nothing must make doctor fail.
fake=$(scratch)
printf '#!/bin/sh\nwhile [ "$1" != "--" ]; do shift; done; shift; exec "$@"\n' > "$fake/codex-linux-sandbox"
chmod 755 "$fake/codex-linux-sandbox"
out=$(SBX_LINUX_SANDBOX_EXE="$fake/codex-linux-sandbox" "$SBX" doctor --json); rc=$?
is "with a helper that enforces nothing, doctor exits 1" "1" "$rc"
is "... and reports read-only as not enforced" "False" \
    "$(printf '%s' "$out" | python3 -c 'import json,sys; d=json.load(sys.stdin); print(d["probes"][0]["enforced"])')"
out=$(SBX_LINUX_SANDBOX_EXE=/nonexistent/helper "$SBX" doctor 2>&1); rc=$?
ok "with no helper, doctor exits non-zero (got $rc)" test "$rc" -ne 0

# Without $SBX_LINUX_SANDBOX_EXE, sbx takes the helper beside its own
# executable (after its installed directory), even when started through a symlink elsewhere.
beside=$(dirname "$(realpath "$SBX")")/codex-linux-sandbox
installed=$(sed -n 's/^#define SBX_HELPER_DIR "\(.*\)"$/\1/p' "$(dirname "$(realpath "$SBX")")/sbx_config.h" 2>/dev/null)
if [ -x "$beside" ] && [ -n "$installed" ] && [ ! -e "$installed/codex-linux-sandbox" ]; then
    link=$(scratch)
    ln -s "$(realpath "$SBX")" "$link/sbx"
    is "through a symlink, sbx finds the helper beside the real sbx" "$beside" \
        "$(env -u SBX_LINUX_SANDBOX_EXE "$link/sbx" run --dry-run -p workspace-write -- true |
           python3 -c 'import json,sys; print(json.load(sys.stdin)["argv"][0])')"
else
    skip "through a symlink, sbx finds the helper beside the real sbx" "no build-tree helper beside sbx, or one is installed in its directory"
fi

done_testing
