#!/usr/bin/env bash
# Launch overhead of the Linux sandbox, side by side with bubblewrap:
#   bare /bin/true, `sbx run -p workspace-write -- /bin/true`, `sbx run -p
#   read-only -- /bin/true`, the helper directly (workspace-write),
#   `sbx run -p danger-full-access -- /bin/true` (sbx's own share: no helper,
#   no sandbox), and bubblewrap with a comparable view
#   (`bwrap --ro-bind / / --dev /dev --proc /proc --bind $PWD $PWD
#    --unshare-net --unshare-pid -- /bin/true`).
# One hyperfine run covers all six commands; the script makes REPEAT such
# runs (this VM's speed drifts from one minute to the next, and a ratio from
# one run can be off by a fifth), prints each run's overheads over bare
# /bin/true and ratios to bwrap's, then the median over the runs (target:
# sbx's overhead at most half of bwrap's).  Figures, not assertions.
#
#   tests/bench/launch.sh [BUILD_DIR]      (default: build; RUNS=300 per
#                                           command and run, REPEAT=5)
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
repeat=${REPEAT:-5}
for tool in hyperfine bwrap python3; do
    command -v "$tool" >/dev/null || { echo "launch.sh: $tool is needed (apt-get install $tool)" >&2; exit 1; }
done

ws=$(mktemp -d "${TMPDIR:-/tmp}/sbx-bench.XXXXXX")
trap 'rm -rf "$ws"' EXIT
cd "$ws"

for i in $(seq 1 "$repeat"); do
    echo "run $i of $repeat: hyperfine, $runs runs of each command" >&2
    hyperfine -N --style none --warmup 20 --runs "$runs" --export-json "$ws/results-$i.json" \
        -n bare "/bin/true" \
        -n sbx "$SBX run -p workspace-write -- /bin/true" \
        -n sbx-ro "$SBX run -p read-only -- /bin/true" \
        -n sbx-full "$SBX run -p danger-full-access -- /bin/true" \
        -n helper "$HELPER --sandbox-policy-cwd $ws --sandbox-policy '{\"type\":\"workspace-write\"}' -- /bin/true" \
        -n bwrap "bwrap --ro-bind / / --dev /dev --proc /proc --bind $ws $ws --unshare-net --unshare-pid -- /bin/true"
done

python3 - "$ws" "$repeat" <<'PY'
import json, statistics, sys
ws, repeat = sys.argv[1], int(sys.argv[2])
names = ("bare", "sbx", "sbx-ro", "sbx-full", "helper", "bwrap")
runs = []
for i in range(1, repeat + 1):
    results = {r["command"]: r for r in json.load(open(f"{ws}/results-{i}.json"))["results"]}
    runs.append({n: {k: results[n][k] * 1000.0 for k in ("mean", "median")} for n in names})

def overhead(run, name, key):
    return run[name][key] - run["bare"][key]

def ratio(run, name, key):
    bwrap = overhead(run, "bwrap", key)
    return overhead(run, name, key) / bwrap if bwrap > 0 else float("inf")

print()
print("overhead over bare /bin/true (mean, ms), and ratio to bwrap's, per run:")
print(f"{'run':>4} {'bare':>7} {'sbx':>7} {'sbx-ro':>7} {'sbx-full':>9} {'helper':>7} {'bwrap':>7}"
      f" {'sbx/bwrap':>10} {'sbx-ro/bwrap':>13} {'helper/bwrap':>13}")
for i, run in enumerate(runs, 1):
    print(f"{i:>4} {run['bare']['mean']:7.2f} {overhead(run, 'sbx', 'mean'):7.2f} {overhead(run, 'sbx-ro', 'mean'):7.2f}"
          f" {overhead(run, 'sbx-full', 'mean'):9.2f} {overhead(run, 'helper', 'mean'):7.2f}"
          f" {overhead(run, 'bwrap', 'mean'):7.2f} {ratio(run, 'sbx', 'mean'):10.2f} {ratio(run, 'sbx-ro', 'mean'):13.2f}"
          f" {ratio(run, 'helper', 'mean'):13.2f}")

print()
print(f"median over {repeat} runs:")
print(f"{'':8} {'mean':>9} {'median':>9} {'overhead (mean)':>16} {'overhead (median)':>18}")
for name in names:
    med = lambda f: statistics.median(f(run) for run in runs)
    print(f"{name:8} {med(lambda r: r[name]['mean']):8.2f}ms {med(lambda r: r[name]['median']):8.2f}ms"
          f" {med(lambda r: overhead(r, name, 'mean')):15.2f}ms {med(lambda r: overhead(r, name, 'median')):17.2f}ms")
for key in ("mean", "median"):
    for name in ("sbx", "sbx-ro", "helper"):
        values = [ratio(run, name, key) for run in runs]
        r = statistics.median(values)
        print(f"ratio {name}/bwrap overhead ({key}): {r:.2f}"
              f"  (runs: {' '.join(f'{v:.2f}' for v in values)}; target <= 0.50: {'met' if r <= 0.5 else 'missed'})")
PY
