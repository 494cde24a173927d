#!/usr/bin/env bash
# 1 GiB of output through `sbx run` (every byte reaches sbx's stdout) against
# a plain pipe, in one run: wall time and sbx's peak RSS, printed side by side
# with the ratio.
#   tests/bench/output.sh [BUILD_DIR [SIZE]]   (default: build 1G; RUNS=5;
#                                              SBX=path overrides BUILD_DIR/sbx)
# sbx and the plain pipe run in turn (sbx, plain, sbx, plain, ...) so that a
# machine whose speed drifts treats both alike; each line gives the best of
# RUNS and the ratio of the bests, and the median of the per-pair ratios.
# Figures, not assertions: the targets are <= 1.2x the time and < 8 MiB RSS.
set -u
build=${1:-build}
SIZE=${2:-1G}
SBX=${SBX:-$build/sbx}
[ -x "$SBX" ] || { echo "output.sh: $SBX is not an executable sbx (build it, or pass BUILD_DIR)" >&2; exit 1; }
RUNS=${RUNS:-5}
cmd=(head -c "$SIZE" /dev/zero)
full=("$SBX" run -p danger-full-access)

. "$(dirname "$0")/lib.sh"

plain_pipe="$(q "${cmd[@]}") | cat >/dev/null"
# pair LABEL SBX_COMMAND: RUNS turns of plain pipe and sbx; one line of figures.
pair() {
    in_turn "$RUNS" "$2" "$plain_pipe"
    printf '  %-46s %6s ms   plain pipe %6s ms   ratio %s (median of pairs %s)\n' \
        "$1" "$best_first" "$best_second" "$(ratio "$best_first" "$best_second")" "$pair_ratio"
}

rss() {  # peak RSS in KiB of the program run by: bash -c "$1" (wrapped in time)
    local f; f=$(mktemp)
    bash -c "/usr/bin/time -v -o $f $1" >/dev/null
    awk -F': ' '/Maximum resident/ {print $2}' "$f"
    rm -f "$f"
}

echo "sbx output benchmark: $SIZE of /dev/zero, $RUNS runs each, in turn with a plain pipe"
echo "  load before: $(cut -d' ' -f1-3 /proc/loadavg)"
pair "sbx run | cat (pass-through)" "$(q "${full[@]}" -- "${cmd[@]}") | cat >/dev/null"
pair "sbx run >/dev/null" "$(q "${full[@]}" -- "${cmd[@]}") >/dev/null"
pair "sbx run -p read-only | cat (spliced, end read)" "$(q "$SBX" run -p read-only -- "${cmd[@]}") | cat >/dev/null"
pair "sbx run --cap-live | cat (a short log)" "$(q "${full[@]}" --cap-live -- "${cmd[@]}") 2>/dev/null | cat >/dev/null"
echo "  load after:  $(cut -d' ' -f1-3 /proc/loadavg)"
if [ -x /usr/bin/time ]; then
    rss_cat=$(rss "cat </dev/zero | head -c $SIZE >/dev/null")
    rss_sbx=$(rss "$(q "${full[@]}" -- "${cmd[@]}") | cat >/dev/null")
    rss_ro=$(rss "$(q "$SBX" run -p read-only -- "${cmd[@]}") | cat >/dev/null")
    rss_capped=$(rss "$(q "${full[@]}" --json -- "${cmd[@]}") >/dev/null")
    printf '  %-46s %6s KiB  ratio to cat %s\n' "peak RSS: sbx, to a pipe" "$rss_sbx" "$(ratio "$rss_sbx" "$rss_cat")"
    printf '  %-46s %6s KiB  ratio to cat %s\n' "peak RSS: sbx -p read-only, to a pipe" "$rss_ro" "$(ratio "$rss_ro" "$rss_cat")"
    printf '  %-46s %6s KiB  ratio to cat %s\n' "peak RSS: sbx --json (default caps)" "$rss_capped" "$(ratio "$rss_capped" "$rss_cat")"
    printf '  %-46s %6s KiB\n' "peak RSS: cat (the plain pipe's reader)" "$rss_cat"
fi
