#!/usr/bin/env bash
# CPython's own tests of what programs do with files, processes, ptys and
# signals (issue 35), natively and under `sbx run -p workspace-write -n
# limited`, each in a fresh workspace of its own (the current directory):
# every test that passes natively must pass inside, but for the known
# differences below, each needing what the policy denies (docs/limits.md
# lists them with the reason).  One check per module; a difference is named
# with the test's own message.  SKIP without Debian's libpython3.11-testsuite.
#
# By default the fast modules (CI; about a minute natively and inside);
# SBX_CPYTHON_MODULES=all runs the twelve of issue 35 (test_subprocess,
# test_signal and test_threading add about 2 minutes each way), or give a
# list: SBX_CPYTHON_MODULES="test_os test_pty".  Runs as root and again as
# uid 65534 (unprivileged.sh).
set -u
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
require_helper

py=/usr/bin/python3
all="test_os test_posix test_pty test_subprocess test_signal test_tempfile test_shutil test_fcntl test_select
test_pathlib test_glob test_threading"
fast="test_os test_posix test_pty test_tempfile test_shutil test_fcntl test_select test_pathlib test_glob"
modules=${SBX_CPYTHON_MODULES:-$fast}
[ "$modules" = all ] && modules=$all
if ! "$py" -c 'import test.test_pty, test.libregrtest' 2>/dev/null; then
    echo "1..0 # SKIP CPython's test modules are not installed (apt install libpython3.11-testsuite)"
    exit 0
fi

# Known differences: TEST-ID-SUFFIX REASON (a test whose id ends with the
# suffix may fail or skip inside while it passes natively).
known=$(cat <<'EOF'
test_os.MakedirTests.test_exist_ok_s_isgid_directory no set-group-ID mode can be set (seccomp; SPEC section 5): the test skips
test_os.ChownFileTests.test_chown_without_permission uid 0 is not mapped in the user namespace of uid 65534's sandbox: chown to it fails with EINVAL, not EPERM
test_shutil.TestCopy.test_copy2_xattr trusted.* extended attributes need CAP_SYS_ADMIN (root): the test skips
test_shutil.TestCopy.test_copyxattr trusted.* extended attributes need CAP_SYS_ADMIN (root): the test skips
test_shutil.TestCopy.test_copyxattr_symlinks trusted.* extended attributes need CAP_SYS_ADMIN (root): the test skips
test_subprocess.POSIXProcessTestCase.test_group uid 65534's sandbox maps its own group alone: setresgid to another fails with EINVAL, not EPERM
test_subprocess.POSIXProcessTestCase.test_user uid 65534's sandbox maps its own uid alone: setresuid to another fails with EINVAL, not EPERM
test_posix.PosixGroupsTester.test_setgroups setgroups needs CAP_SETGID, which root keeps no more (only CAP_CHOWN, CAP_FOWNER)
test_posix.PosixGroupsTester.test_initgroups setgroups needs CAP_SETGID, which root keeps no more (only CAP_CHOWN, CAP_FOWNER)
EOF
)

d=$(scratch)
# run WHERE MODULE: the module's results as "STATUS ID" lines (pass, skip,
# failure, error), in a workspace of its own; WHERE is native or sbx.
results() {
    local where=$1 module=$2 ws
    ws=$d/$where-$module
    mkdir -p "$ws"
    # Its temporary files in the workspace too: regrtest names its directory
    # in $TMPDIR by its pid, which is 2 in every sandbox.
    mkdir -p "$ws/tmp"
    if [ "$where" = native ]; then
        (cd "$ws" && TMPDIR=$ws/tmp "$py" -m test "$module" --junit-xml "$ws/junit.xml" >"$ws/log" 2>&1 </dev/null)
    else
        (cd "$ws" && TMPDIR=$ws/tmp "$SBX" run -p workspace-write -n limited -- \
            "$py" -m test "$module" --junit-xml "$ws/junit.xml" >"$ws/log" 2>&1 </dev/null)
    fi
    "$py" - "$ws/junit.xml" <<'EOF'
import sys, xml.etree.ElementTree as ET
try:
    cases = ET.parse(sys.argv[1]).iter("testcase")
except (OSError, ET.ParseError) as e:
    print("error", "(no results: %s)" % e)
    sys.exit(0)
for case in cases:
    status = "pass"
    for child in case:
        if child.tag in ("failure", "error", "skipped"):
            status = {"skipped": "skip"}.get(child.tag, child.tag)
            # The message, or the traceback's last line, for a failure's diagnostic.
            reason = (child.get("message") or (child.text or "")).strip().splitlines()[-1:]
            print(status, case.get("name"), *reason)
            break
    else:
        print(status, case.get("name"))
EOF
}

start=$SECONDS
for module in $modules; do
    native=$(results native "$module")
    inside=$(results sbx "$module")
    # Every test that passes natively and not inside, but the known ones.
    differ=$(join -j 2 -o 1.1,2.1,0 <(awk '{print $1, $2}' <<<"$native" | sort -k2) \
        <(awk '{print $1, $2}' <<<"$inside" | sort -k2) | awk '$1 == "pass" && $2 != "pass" {print $3}')
    missing=$(comm -23 <(awk '$1 == "pass" {print $2}' <<<"$native" | sort) <(awk '{print $2}' <<<"$inside" | sort))
    unexplained=""
    for id in $differ $missing; do
        grep -q "^${id#test.} " <<<"$known" || unexplained+="$id: $(grep -F " $id " <<<"$inside" | cut -d' ' -f3- | head -1)"$'\n'
    done
    counts() { awk '{n[$1]++} END {printf "%d passed, %d skipped, %d failed", n["pass"], n["skip"], n["failure"] + n["error"]}' <<<"$1"; }
    if [ -z "$unexplained" ]; then
        _tap_result ok "$module: what passes natively passes inside (native: $(counts "$native"); inside: $(counts "$inside"))"
    else
        _tap_result fail "$module: what passes natively passes inside" "${unexplained%$'\n'}"
    fi
done
echo "# $(echo "$modules" | wc -w) modules natively and inside in $((SECONDS - start)) s"

done_testing
