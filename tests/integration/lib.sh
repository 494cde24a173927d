# Shared helpers for the integration tests (bash, TAP output).
#
# The scripts run real commands through the real sbx and helper, and check
# effects on files, processes and sockets.  Environment, set by meson:
#   SBX                    the sbx executable under test
#   SBX_LINUX_SANDBOX_EXE  the helper under test (sbx honours this variable)
# Sourcing this file gives:
#   ok DESC CMD...         a test that passes when CMD succeeds
#   not_ok DESC CMD...     a test that passes when CMD fails
#   is DESC EXPECTED GOT   a test that passes when the strings are equal
#   todo REASON DESC CMD...  a known, documented hole (TAP TODO; like not_ok)
#   skip DESC REASON       a skipped test
#   scratch                a fresh directory, removed at exit (echoes its path)
#   protected_names_in DIR the default protected names present in DIR (a
#                          placeholder left behind shows here)
#   eventually CMD...      runs CMD until it succeeds; fails after
#                          $SBX_TEST_PATIENCE seconds (default 30)
#   placeholders_gone DIR  DIR holds none of the default protected names
#   ended PID              PID has ended: gone, or a zombie (its files, locks
#                          and mounts are released by then)
#   is_placeholder PATH    PATH is a placeholder as the helper makes them on
#                          the host: an empty directory of mode 0000
#   done_testing           prints the plan; exits non-zero if anything failed
set -u
_tap_n=0
_tap_failed=0

_tap_result() {  # status desc [diagnostic]
    _tap_n=$((_tap_n + 1))
    if [ "$1" = ok ]; then
        echo "ok $_tap_n - $2"
    else
        _tap_failed=$((_tap_failed + 1))
        echo "not ok $_tap_n - $2"
        [ -n "${3:-}" ] && printf '%s\n' "$3" | sed 's/^/# /'
    fi
    return 0
}

ok() {
    local desc=$1; shift
    local out
    if out=$("$@" 2>&1); then _tap_result ok "$desc"; else _tap_result fail "$desc" "$out"; fi
}

not_ok() {
    local desc=$1; shift
    local out
    if out=$("$@" 2>&1); then _tap_result fail "$desc" "unexpectedly succeeded: $out"; else _tap_result ok "$desc"; fi
}

is() {
    if [ "$2" = "$3" ]; then _tap_result ok "$1"; else _tap_result fail "$1" "expected: $2
got:      $3"; fi
}

# A check of a known, documented hole: reported as TAP "TODO", so it shows
# in every run without failing the suite until the hole is closed.
#   todo REASON DESC CMD...   (passes when CMD fails, like not_ok)
todo() {
    local reason=$1 desc=$2; shift 2
    _tap_n=$((_tap_n + 1))
    if "$@" >/dev/null 2>&1; then
        echo "not ok $_tap_n - $desc # TODO $reason"
    else
        echo "ok $_tap_n - $desc # TODO $reason"
    fi
}

skip() {
    _tap_n=$((_tap_n + 1))
    echo "ok $_tap_n - $1 # SKIP $2"
}

# A bound on time or memory that holds for the optimised build: in a
# sanitized build (SBX_SANITIZER, set by tests/integration/meson.build) it is
# reported as SKIP with the reason, since ASan maps about 80 MiB of shadow
# memory and its dynamically loaded executables start slower.
bound() {
    if [ -n "${SBX_SANITIZER:-}" ]; then skip "$1" "a time or memory bound, not checked under -fsanitize=$SBX_SANITIZER"; else ok "$@"; fi
}

# Every scratch directory lives under one root made here, in the script's own
# shell: `$(scratch)` runs in a subshell, which could not record its result.
_scratch_root=$(mktemp -d "${SBX_TEST_TMP:-/var/tmp}/sbx-test.XXXXXX") || exit 1
chmod 755 "$_scratch_root"

scratch() {
    mktemp -d "$_scratch_root/XXXXXX"
}

protected_names_in() {
    (cd "$1" && ls -A | grep -E '^\.(git|sbx|codex|agents|aws)$' || true)
}

placeholders_gone() {
    [ -z "$(protected_names_in "$1")" ]
}

is_placeholder() {
    [ -d "$1" ] && [ ! -L "$1" ] && [ "$(stat -c %a "$1")" = 0 ]
}

# Every wait of the tests goes through here: it waits for a condition, never
# for a time.  The bound only limits how long a failure takes to show: it is
# far above what the slowest loaded machine needs (a sandbox starts in
# milliseconds), so that a pass never depends on the machine's speed.  The
# poll starts at 10 ms and backs off to 100 ms, so a long wait costs no CPU.
eventually() {
    local end=$((SECONDS + ${SBX_TEST_PATIENCE:-30})) nap=0.01
    until "$@"; do
        [ "$SECONDS" -lt "$end" ] || return 1
        sleep "$nap"
        case $nap in 0.01) nap=0.02 ;; 0.02) nap=0.05 ;; *) nap=0.1 ;; esac
    done
}

ended() {
    local st
    read -r st 2>/dev/null <"/proc/$1/stat" || return 0
    st=${st##*) }
    [ "${st%% *}" = Z ]
}

_cleanup_scratch() {
    chmod -R u+w "$_scratch_root" 2>/dev/null
    rm -rf "$_scratch_root"
}
trap _cleanup_scratch EXIT

done_testing() {
    echo "1..$_tap_n"
    [ "$_tap_failed" -eq 0 ]
}

# Sets $helper to the helper under test, or bails out when there is none.
require_helper() {
    helper=${SBX_LINUX_SANDBOX_EXE:-}
    if [ -z "$helper" ] || [ ! -x "$helper" ]; then
        echo "Bail out! SBX_LINUX_SANDBOX_EXE is not an executable helper"
        exit 1
    fi
}

# Run a command as the unprivileged user 65534 (used by unprivileged.sh).
as_nobody() {
    setpriv --reuid=65534 --regid=65534 --clear-groups --reset-env -- \
        env SBX="$SBX" SBX_LINUX_SANDBOX_EXE="${SBX_LINUX_SANDBOX_EXE:-}" \
        ${CODEX_LINUX_SANDBOX:+"CODEX_LINUX_SANDBOX=$CODEX_LINUX_SANDBOX"} \
        SBX_TEST_UNPRIVILEGED=1 PATH=/usr/local/bin:/usr/bin:/bin HOME=/nonexistent \
        ${SBX_SANITIZER:+"SBX_SANITIZER=$SBX_SANITIZER"} ${ASAN_OPTIONS:+"ASAN_OPTIONS=$ASAN_OPTIONS"} \
        ${UBSAN_OPTIONS:+"UBSAN_OPTIONS=$UBSAN_OPTIONS"} ${SBX_TEST_PATIENCE:+"SBX_TEST_PATIENCE=$SBX_TEST_PATIENCE"} \
        TMPDIR=/tmp "$@"
}
