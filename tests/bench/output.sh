#!/usr/bin/env bash
# 1 GiB of output through `sbx run --no-output-cap` against a plain pipe, in
# one run: wall time (best of $RUNS) and sbx's peak RSS, printed as ratios.
#   tests/bench/output.sh [BUILD_DIR [SIZE]]   (default: build 1G; RUNS=3;
#                                              SBX=path overrides BUILD_DIR/sbx)
# Figures, not assertions: the targets are <= 1.2x the time and < 8 MiB RSS.
set -u
build=${1:-build}
SIZE=${2:-1G}
SBX=${SBX:-$build/sbx}
[ -x "$SBX" ] || { echo "output.sh: $SBX is not an executable sbx (build it, or pass BUILD_DIR)" >&2; exit 1; }
RUNS=${RUNS:-3}
cmd=(head -c "$SIZE" /dev/zero)
sbx=("$SBX" run --no-output-cap -p danger-full-access --)

now_ns() { date +%s%N; }
best() {  # best wall time in ms of RUNS runs of: bash -c "$1"
    local best_ms="" t0 ms i
    for i in $(seq 1 "$RUNS"); do
        t0=$(now_ns)
        bash -c "$1"
        ms=$(( ($(now_ns) - t0) / 1000000 ))
        if [ -z "$best_ms" ] || [ "$ms" -lt "$best_ms" ]; then best_ms=$ms; fi
    done
    echo "$best_ms"
}
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b == 0) b = 1; printf "%.2f", a / b }'; }
q() { printf '%q ' "$@"; }

plain_pipe=$(best "$(q "${cmd[@]}") | cat >/dev/null")
direct=$(best "$(q "${cmd[@]}") >/dev/null")
sbx_null=$(best "$(q "${sbx[@]}" "${cmd[@]}") >/dev/null")
sbx_pipe=$(best "$(q "${sbx[@]}" "${cmd[@]}") | cat >/dev/null")

rss() {  # peak RSS in KiB of the program run by: bash -c "$1" (wrapped in time)
    local f; f=$(mktemp)
    bash -c "/usr/bin/time -v -o $f $1" >/dev/null
    awk -F': ' '/Maximum resident/ {print $2}' "$f"
    rm -f "$f"
}
if [ -x /usr/bin/time ]; then
    rss_sbx=$(rss "$(q "${sbx[@]}" "${cmd[@]}") | cat >/dev/null")
    rss_cat=$(rss "cat </dev/zero | head -c $SIZE >/dev/null")
    rss_capped=$(rss "$(q "$SBX" run -p danger-full-access --json -- "${cmd[@]}") >/dev/null")
fi

echo "sbx output benchmark: $SIZE of /dev/zero, best of $RUNS runs"
printf '  %-44s %6s ms\n' "head | cat >/dev/null (plain pipe)" "$plain_pipe"
printf '  %-44s %6s ms\n' "head >/dev/null (no pipe)" "$direct"
printf '  %-44s %6s ms   ratio to plain pipe %s\n' "sbx run --no-output-cap >/dev/null" "$sbx_null" "$(ratio "$sbx_null" "$plain_pipe")"
printf '  %-44s %6s ms   ratio to plain pipe %s\n' "sbx run --no-output-cap | cat >/dev/null" "$sbx_pipe" "$(ratio "$sbx_pipe" "$plain_pipe")"
if [ -x /usr/bin/time ]; then
    printf '  %-44s %6s KiB  ratio to cat %s\n' "peak RSS: sbx, uncapped, to a pipe" "$rss_sbx" "$(ratio "$rss_sbx" "$rss_cat")"
    printf '  %-44s %6s KiB  ratio to cat %s\n' "peak RSS: sbx --json (default caps)" "$rss_capped" "$(ratio "$rss_capped" "$rss_cat")"
    printf '  %-44s %6s KiB\n' "peak RSS: cat (the plain pipe's reader)" "$rss_cat"
fi
