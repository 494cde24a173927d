#!/usr/bin/env bash
# What filesystem entries cost at launch, beside bubblewrap doing the same:
#   - a deny entry: `sbx run -p workspace-write --deny DIR` against
#     `bwrap ... --tmpfs DIR --remount-ro DIR` (an empty read-only directory),
#     each compared with its own run without the deny;
#   - the minimal base: `sbx run -p workspace-write --minimal` against bwrap
#     binding only /usr and /etc (with the /bin, /lib, /lib64 symlinks), each
#     compared with its whole-filesystem view.
# One hyperfine run holds every command; the script prints each overhead over
# bare /bin/true and the extra cost of the deny and of the minimal base, for
# sbx and for bwrap, side by side.  Figures, not assertions.
#
#   tests/bench/entries.sh [BUILD_DIR]      (RUNS=200 per command)
set -eu
build=${1:-build}
SBX=$(realpath "${SBX:-$build/sbx}")
export SBX_LINUX_SANDBOX_EXE=$(realpath "${SBX_LINUX_SANDBOX_EXE:-$build/codex-linux-sandbox}")
runs=${RUNS:-200}
for tool in hyperfine bwrap python3; do
    command -v "$tool" >/dev/null || { echo "entries.sh: $tool is needed (apt-get install $tool)" >&2; exit 1; }
done
ws=$(mktemp -d "${TMPDIR:-/tmp}/sbx-bench.XXXXXX")
trap 'rm -rf "$ws"' EXIT
mkdir -p "$ws/secret" && echo s >"$ws/secret/key"
cd "$ws"
links="--symlink usr/bin /bin --symlink usr/sbin /sbin --symlink usr/lib /lib --symlink usr/lib64 /lib64"
base="--dev /dev --proc /proc --bind $ws $ws --unshare-net --unshare-pid --unshare-ipc"
hyperfine -N --style none --warmup 20 --runs "$runs" --export-json "$ws/results.json" \
    -n bare "/bin/true" \
    -n sbx "$SBX run -p workspace-write -- /bin/true" \
    -n sbx-deny "$SBX run -p workspace-write --deny $ws/secret -- /bin/true" \
    -n sbx-minimal "$SBX run -p workspace-write --minimal -- /bin/true" \
    -n bwrap "bwrap --ro-bind / / $base -- /bin/true" \
    -n bwrap-deny "bwrap --ro-bind / / $base --tmpfs $ws/secret --remount-ro $ws/secret -- /bin/true" \
    -n bwrap-minimal "bwrap --ro-bind /usr /usr --ro-bind /etc /etc $links $base -- /bin/true" >&2
python3 - "$ws/results.json" <<'PY'
import json, sys
r = {x["command"]: x["mean"] * 1000 for x in json.load(open(sys.argv[1]))["results"]}
over = {k: v - r["bare"] for k, v in r.items()}
print("overhead over bare /bin/true (mean, ms):")
for k in ("sbx", "sbx-deny", "sbx-minimal", "bwrap", "bwrap-deny", "bwrap-minimal"):
    print(f"  {k:14} {over[k]:6.2f}")
for what in ("deny", "minimal"):
    s, b = over[f"sbx-{what}"] - over["sbx"], over[f"bwrap-{what}"] - over["bwrap"]
    print(f"extra cost of the {what}: sbx {s:+.2f} ms, bwrap {b:+.2f} ms;"
          f" whole run sbx-{what}/bwrap-{what} = {over[f'sbx-{what}'] / over[f'bwrap-{what}']:.2f}")
PY
