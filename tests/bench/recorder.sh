#!/usr/bin/env bash
# The cost of the denial recorder (--record-denials, linux-helper/recorder.h)
# on a file-heavy and on a read-only workload, in a tmpfs workspace
# (/dev/shm), three ways in one run:
#   native     the workload with no sandbox
#   sbx        sbx run -p workspace-write -- WORKLOAD
#   recorded   sbx run -p workspace-write --record-denials -- WORKLOAD
# Workloads (FILES small files, 9000 by default):
#   write   untar them, grep them, delete them (every file: an openat with
#           O_CREAT, a utimensat of its directory, an unlinkat)
#   read    grep and cat an extracted tree (no write-class call at all)
# The variants run interleaved, ROUNDS rounds (order rotated each round), so
# that the machine's drift falls on all of them alike; the script prints the
# medians, sbx/native, and recorded/sbx (the recorder's own cost; the bound
# of issue 15: at most 1.02 on write, 1.00 on read).  Figures, not assertions.
#
#   tests/bench/recorder.sh [BUILD_DIR]     (default: build; ROUNDS=15, FILES=9000)
set -eu
build=${1:-build}
SBX=$(realpath "${SBX:-$build/sbx}")
export SBX_LINUX_SANDBOX_EXE=$(realpath "${SBX_LINUX_SANDBOX_EXE:-$build/codex-linux-sandbox}")
rounds=${ROUNDS:-15}
files=${FILES:-9000}
command -v python3 >/dev/null || { echo "recorder.sh: python3 is needed" >&2; exit 1; }

ws=$(mktemp -d /dev/shm/sbx-bench-recorder.XXXXXX)
trap 'rm -rf "$ws"' EXIT
cd "$ws"
# The tree: 90 directories of files of 100-400 bytes, one in 50 with the needle.
python3 - "$files" <<'PY'
import os, sys
n = int(sys.argv[1])
for i in range(n):
    d = f"src/d{i % 90:02d}"
    os.makedirs(d, exist_ok=True)
    with open(f"{d}/f{i:05d}.txt", "w") as f:
        f.write(("line %d of some text\n" % i) * (5 + i % 15) + ("needle\n" if i % 50 == 0 else ""))
PY
tar cf tree.tar -C src . && rm -rf src
mkdir ro && tar xf tree.tar -C ro
echo "recorder.sh: $files files, $rounds rounds; load before: $(cut -d' ' -f1-3 /proc/loadavg)" >&2

python3 - "$SBX" "$rounds" "$ws" <<'PY'
import os, statistics, subprocess, sys, time
sbx, rounds, ws = sys.argv[1], int(sys.argv[2]), sys.argv[3]
workloads = {
    "write": "mkdir t && tar xf tree.tar -C t && grep -rl needle t >/dev/null && rm -rf t",
    "read": "grep -rl needle ro >/dev/null && cat ro/*/* >/dev/null",
}
variants = {
    "native": lambda w: ["sh", "-c", w],
    "sbx": lambda w: [sbx, "run", "-p", "workspace-write", "--", "sh", "-c", w],
    "recorded": lambda w: [sbx, "run", "-p", "workspace-write", "--record-denials", "--", "sh", "-c", w],
}
names = list(variants)
times = {(w, v): [] for w in workloads for v in names}
for r in range(rounds + 1):  # round 0 warms up, not counted
    order = names[r % 3:] + names[:r % 3]
    for w, script in workloads.items():
        for v in order:
            t = time.perf_counter()
            subprocess.run(variants[v](script), cwd=ws, check=True, stdout=subprocess.DEVNULL)
            if r > 0:
                times[(w, v)].append((time.perf_counter() - t) * 1000.0)
print(f"\nmedians over {rounds} interleaved rounds (ms):")
print(f"{'workload':9} {'native':>8} {'sbx':>8} {'recorded':>9} {'sbx/native':>11} {'recorded/sbx':>13} {'recorded/native':>16}")
for w in workloads:
    m = {v: statistics.median(times[(w, v)]) for v in names}
    print(f"{w:9} {m['native']:8.1f} {m['sbx']:8.1f} {m['recorded']:9.1f} {m['sbx'] / m['native']:11.3f}"
          f" {m['recorded'] / m['sbx']:13.3f} {m['recorded'] / m['native']:16.3f}")
print(f"load after: {' '.join(open('/proc/loadavg').read().split()[:3])}")
PY
