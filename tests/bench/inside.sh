#!/usr/bin/env bash
# The cost inside the sandbox (issue 20) and of the denial recorder (issue 15)
# on a file-heavy and on a read-only workload, in a tmpfs workspace
# (/dev/shm), side by side in one run:
#   native      the workload with no sandbox
#   bwrap       bubblewrap with the view of workspace-write: the root read-only,
#               the workspace writable, a fresh /dev and /proc, every namespace
#   seccomp     sbx run -p external-sandbox -n restricted (seccomp and the
#               network layer only: no view, no Landlock)
#   ro          sbx run -p read-only --read-only /dev/shm (the host's
#               /dev/shm, where the workspace is, instead of its own)
#   ww          sbx run -p workspace-write
#   recorded    sbx run -p workspace-write --record-denials
#   codex       Codex 0.171's own helper (bubblewrap, seccomp) with Codex's
#               workspace-write profile of the same workspace: the peer users
#               would otherwise pick.  $CODEX_LINUX_SANDBOX_0171, by default
#               /var/tmp/sbx-ci/codex-0.171.0-linux-x64/codex-linux-sandbox
#               (.ci/fetch-codex); the column is left out, with a note, when
#               it is not there.
#   recorded-alt  with ALT_HELPER=PATH: recorded, with that helper instead
#               (another build's codex-linux-sandbox: a change to the
#               recorder measured against the recorder as it is, in one run);
#               ALT_ENV="VAR=VALUE ..." adds to its environment only (a
#               scratch build's switch, the same binary on both sides)
# Workloads (FILES small files, 9000 by default):
#   write   untar them, grep them, delete them (every file: an openat with
#           O_CREAT, a utimensat of its directory, an unlinkat)
#   read    grep and cat an extracted tree (no write-class call at all)
# read-only runs the read workload only (it cannot write the workspace).
# ABLATE=1 adds workspace-write with its layers taken away one at a time, to
# show what each costs: a helper built from HEAD in a scratch git worktree
# (under /var/tmp, removed at the end), patched so that the environment
# variable SBX_BENCH_WITHOUT=landlock|seccomp|both skips those layers.  The
# patch exists only in that scratch build; no product build has it.
#   ww-bare     the mount view and the namespaces only
#   ww-nolock   without Landlock (seccomp kept)
#   ww-nosecc   without seccomp (Landlock kept)
# The variants run interleaved, ROUNDS rounds (order rotated each round), so
# that the machine's drift falls on all of them alike; the script prints the
# medians and each against native (issue 32's bounds: ww at most 1.03;
# recorded at most 1.10 on write and unmeasurable on read for the recorder
# to be every run's default), and recorded/ww.  Figures, not assertions.
#
#   tests/bench/inside.sh [BUILD_DIR]     (default: build; ROUNDS=15, FILES=9000)
set -eu
build=${1:-build}
SBX=$(realpath "${SBX:-$build/sbx}")
export SBX_LINUX_SANDBOX_EXE=$(realpath "${SBX_LINUX_SANDBOX_EXE:-$build/codex-linux-sandbox}")
rounds=${ROUNDS:-15}
alt=${ALT_HELPER:+$(realpath "$ALT_HELPER")}
files=${FILES:-9000}
command -v python3 >/dev/null || { echo "inside.sh: python3 is needed" >&2; exit 1; }
command -v bwrap >/dev/null || { echo "inside.sh: bubblewrap (bwrap) is needed" >&2; exit 1; }
codex=${CODEX_LINUX_SANDBOX_0171:-/var/tmp/sbx-ci/codex-0.171.0-linux-x64/codex-linux-sandbox}
if [ ! -x "$codex" ]; then
    echo "inside.sh: SKIP the codex column: no Codex 0.171 helper at $codex (set CODEX_LINUX_SANDBOX_0171)" >&2
    codex=
fi

ws=$(mktemp -d /dev/shm/sbx-bench-inside.XXXXXX)
ablated= scratch=
cleanup() {
    rm -rf "$ws"
    [ -z "$scratch" ] || git -C "$scratch" worktree remove --force "$scratch" 2>/dev/null || rm -rf "$scratch"
}
trap cleanup EXIT
if [ "${ABLATE:-0}" = 1 ]; then
    scratch=$(mktemp -d /var/tmp/sbx-ablate.XXXXXX) && rmdir "$scratch"
    git -C "$(dirname "$0")" worktree add -q --detach "$scratch" HEAD
    python3 - "$scratch/linux-helper/main.cc" <<'PY'
import sys
path = sys.argv[1]
text = open(path).read()
old = "    apply_landlock(policy, mount_layer, socket_files);\n    return install_seccomp(policy, watch, transparent);"
new = ('    const char* without = ::getenv("SBX_BENCH_WITHOUT");\n'
       '    const std::string skip = without ? without : "";\n'
       '    if (skip != "landlock" && skip != "both") apply_landlock(policy, mount_layer, socket_files);\n'
       '    if (skip == "seccomp" || skip == "both") return Fd();\n'
       '    return install_seccomp(policy, watch, transparent);')
if old not in text:
    sys.exit("inside.sh: linux-helper/main.cc no longer has the lines ABLATE patches")
open(path, "w").write(text.replace(old, new))
PY
    echo "inside.sh: building the ablation helper in $scratch" >&2
    meson setup "$scratch/build" "$scratch" >/dev/null && ninja -C "$scratch/build" codex-linux-sandbox >/dev/null
    ablated=$scratch/build/codex-linux-sandbox
fi
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
echo "inside.sh: $files files, $rounds rounds; load before: $(cut -d' ' -f1-3 /proc/loadavg)" >&2

python3 - "$SBX" "$rounds" "$ws" "$ablated" "$codex" "$alt" <<'PY'
import json, os, statistics, subprocess, sys, time
sbx, rounds, ws, ablated, codex, alt = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4], sys.argv[5], sys.argv[6]
workloads = {
    "write": "mkdir t && tar xf tree.tar -C t && grep -rl needle t >/dev/null && rm -rf t",
    "read": "grep -rl needle ro >/dev/null && cat ro/*/* >/dev/null",
}
# The workspace after --dev: it lives in /dev/shm, which --dev replaces.
bwrap = ["bwrap", "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--bind", ws, ws,
         "--unshare-all", "--die-with-parent", "--new-session", "--chdir", ws]
variants = {
    "native": lambda w: ["sh", "-c", w],
    "bwrap": lambda w: bwrap + ["sh", "-c", w],
    "seccomp": lambda w: [sbx, "run", "-p", "external-sandbox", "-n", "restricted", "--", "sh", "-c", w],
    # read-only's /dev/shm is the sandbox's own unless an entry names it.
    "ro": lambda w: [sbx, "run", "-p", "read-only", "--read-only", "/dev/shm", "--", "sh", "-c", w],
    "ww": lambda w: [sbx, "run", "-p", "workspace-write", "--", "sh", "-c", w],
    "recorded": lambda w: [sbx, "run", "-p", "workspace-write", "--record-denials", "--", "sh", "-c", w],
}
if codex:
    # Codex's workspace-write (CODEX-HELPER.md section 7): / read, the
    # workspace and /tmp written, no network; launched as Codex launches it.
    entry = lambda path, access: {"path": path, "access": access}
    profile = json.dumps({"type": "managed", "network": "restricted", "file_system": {"type": "restricted", "entries": [
        entry({"type": "special", "value": {"kind": "root"}}, "read"),
        entry({"type": "path", "path": ws}, "write"),
        entry({"type": "special", "value": {"kind": "slash_tmp"}}, "write")]}})
    variants["codex"] = lambda w: [codex, "--sandbox-policy-cwd", ws, "--command-cwd", ws,
                                   "--permission-profile", profile, "--", "sh", "-c", w]
env = {v: None for v in variants}
if ablated:
    for name, without in (("ww-bare", "both"), ("ww-nolock", "landlock"), ("ww-nosecc", "seccomp")):
        variants[name] = variants["ww"]
        env[name] = dict(os.environ, SBX_LINUX_SANDBOX_EXE=ablated, SBX_BENCH_WITHOUT=without)
if alt:
    variants["recorded-alt"] = variants["recorded"]
    env["recorded-alt"] = dict(os.environ, SBX_LINUX_SANDBOX_EXE=alt)
    env["recorded-alt"].update(kv.split("=", 1) for kv in os.environ.get("ALT_ENV", "").split())
runs = {w: [v for v in variants if not (w == "write" and v == "ro")] for w in workloads}
times = {(w, v): [] for w in workloads for v in runs[w]}
for r in range(rounds + 1):  # round 0 warms up, not counted
    for w, script in workloads.items():
        names = runs[w]
        order = names[r % len(names):] + names[:r % len(names)]
        for v in order:
            t = time.perf_counter()
            subprocess.run(variants[v](script), cwd=ws, env=env[v], check=True, stdout=subprocess.DEVNULL)
            if r > 0:
                times[(w, v)].append((time.perf_counter() - t) * 1000.0)
print(f"\nmedians over {rounds} interleaved rounds (ms), and each against native:")
for w in workloads:
    m = {v: statistics.median(times[(w, v)]) for v in runs[w]}
    print(f"{w}:")
    for v in runs[w]:
        print(f"  {v:12} {m[v]:8.1f} ms  {m[v] / m['native']:6.3f}x")
    print(f"  recorded/ww {m['recorded'] / m['ww']:.3f}")
    if alt:
        print(f"  recorded-alt/recorded {m['recorded-alt'] / m['recorded']:.3f}")
print(f"load after: {' '.join(open('/proc/loadavg').read().split()[:3])}")
PY
