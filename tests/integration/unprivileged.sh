#!/usr/bin/env bash
# Runs an integration script as the unprivileged user 65534 when the tests run
# as root (users mostly are not root).  When not root, the ordinary run already
# is unprivileged, so this one is skipped (exit 77).
set -u
. "$(dirname "$0")/lib.sh"
if [ "$(id -u)" != 0 ]; then
    echo "1..0 # SKIP already unprivileged"
    exit 77
fi
script=$1; shift
# A sandbox of another user needs unprivileged user namespaces: where the
# machine forbids them (a sysctl, AppArmor), sbx refuses such a user's
# workspace sandboxes (125: the root run checks that refusal), and every
# check of this run would fail for that one reason.
if ! why=$(has_user_namespaces as_nobody); then
    echo "1..0 # SKIP $why"
    exit 0
fi
# The build tree must be reachable by the unprivileged user.
if ! as_nobody test -x "$SBX"; then
    echo "Bail out! $SBX is not executable by uid 65534 (a parent directory is not world-searchable)"
    exit 1
fi
as_nobody bash "$script" "$@"
