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
ok "audit says whether exact denials are listed" grep -q "^exact denials \(listed\|not listed\): " <<<"$(field 'd["audit"]["summary"]')"

text=$("$SBX" doctor); rc=$?
is "sbx doctor (text) exits 0" "0" "$rc"
case $text in *"every mode is enforced"*) _tap_result ok "the text says every mode is enforced" ;;
    *) _tap_result fail "the text says every mode is enforced" "$text" ;; esac
case $text in *"landlock:         ABI $abi"*) _tap_result ok "the text shows the Landlock ABI" ;;
    *) _tap_result fail "the text shows the Landlock ABI" "$text" ;; esac

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
# executable (after libexecdir), even when started through a symlink elsewhere.
beside=$(dirname "$(realpath "$SBX")")/codex-linux-sandbox
installed=$(sed -n 's/^#define SBX_LIBEXECDIR "\(.*\)"$/\1/p' "$(dirname "$(realpath "$SBX")")/sbx_config.h" 2>/dev/null)
if [ -x "$beside" ] && [ -n "$installed" ] && [ ! -e "$installed/codex-linux-sandbox" ]; then
    link=$(scratch)
    ln -s "$(realpath "$SBX")" "$link/sbx"
    is "through a symlink, sbx finds the helper beside the real sbx" "$beside" \
        "$(env -u SBX_LINUX_SANDBOX_EXE "$link/sbx" run --dry-run -p workspace-write -- true |
           python3 -c 'import json,sys; print(json.load(sys.stdin)["argv"][0])')"
else
    skip "through a symlink, sbx finds the helper beside the real sbx" "no build-tree helper beside sbx, or one is installed in libexecdir"
fi

done_testing
