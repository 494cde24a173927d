#!/usr/bin/env bash
# Launch overhead of the Linux sandbox, in one hyperfine run:
#   bare /bin/true, `sbx run -p workspace-write -- /bin/true`, the helper
#   directly, `sbx run -p danger-full-access -- /bin/true` (sbx's own share:
#   no helper, no sandbox), and bubblewrap with a comparable view
#   (`bwrap --ro-bind / / --dev /dev --proc /proc --bind $PWD $PWD
#    --unshare-net --unshare-pid -- /bin/true`).
# Prints each overhead over bare /bin/true and the ratio sbx/bwrap (target:
# sbx's overhead at most half of bwrap's).  Figures, not assertions.
#
#   tests/bench/launch.sh [BUILD_DIR]      (default: build; RUNS=300)
set -eu
build=${1:-build}
SBX=${SBX:-$build/sbx}
# The helper sits beside sbx in the build directory (older trees: linux-helper/).
default_helper=$build/codex-linux-sandbox
[ -x "$default_helper" ] || default_helper=$build/linux-helper/codex-linux-sandbox
HELPER=${SBX_LINUX_SANDBOX_EXE:-$default_helper}
SBX=$(realpath "$SBX")
HELPER=$(realpath "$HELPER")
export SBX_LINUX_SANDBOX_EXE=$HELPER
runs=${RUNS:-300}
for tool in hyperfine bwrap python3; do
    command -v "$tool" >/dev/null || { echo "launch.sh: $tool is needed (apt-get install $tool)" >&2; exit 1; }
done

ws=$(mktemp -d "${TMPDIR:-/tmp}/sbx-bench.XXXXXX")
trap 'rm -rf "$ws"' EXIT
cd "$ws"

hyperfine -N --warmup 20 --runs "$runs" --export-json "$ws/results.json" \
    -n bare "/bin/true" \
    -n sbx "$SBX run -p workspace-write -- /bin/true" \
    -n sbx-full "$SBX run -p danger-full-access -- /bin/true" \
    -n helper "$HELPER --sandbox-policy-cwd $ws --sandbox-policy '{\"type\":\"workspace-write\"}' -- /bin/true" \
    -n bwrap "bwrap --ro-bind / / --dev /dev --proc /proc --bind $ws $ws --unshare-net --unshare-pid -- /bin/true"

python3 - "$ws/results.json" <<'PY'
import json, sys
results = {r["command"]: r for r in json.load(open(sys.argv[1]))["results"]}
def ms(name, key):
    return results[name][key] * 1000.0
print()
print(f"{'':8} {'mean':>9} {'median':>9} {'overhead (mean)':>16} {'overhead (median)':>18}")
for name in ("bare", "sbx", "sbx-full", "helper", "bwrap"):
    print(f"{name:8} {ms(name, 'mean'):8.2f}ms {ms(name, 'median'):8.2f}ms"
          f" {ms(name, 'mean') - ms('bare', 'mean'):15.2f}ms {ms(name, 'median') - ms('bare', 'median'):17.2f}ms")
for key in ("mean", "median"):
    bwrap = ms("bwrap", key) - ms("bare", key)
    for name in ("sbx", "helper"):
        ratio = (ms(name, key) - ms("bare", key)) / bwrap if bwrap > 0 else float("inf")
        print(f"ratio {name}/bwrap overhead ({key}): {ratio:.2f}"
              f"  (target <= 0.50: {'met' if ratio <= 0.5 else 'missed'})")
PY
