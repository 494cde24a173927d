# What the shell benchmarks share (sourced by output.sh and proxy.sh): wall
# times, ratios, medians, and two commands timed in turn.
now_ns() { date +%s%N; }
ms_of() {  # wall time in ms of: bash -c "$1" (its stdout discarded; a failure said on stderr)
    local t0; t0=$(now_ns)
    bash -c "$1" >/dev/null || echo "$(basename "$0"): failed: $1" >&2
    echo $(( ($(now_ns) - t0) / 1000000 ))
}
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b == 0) b = 1; printf "%.2f", a / b }'; }
median() { sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
q() { printf '%q ' "$@"; }

# in_turn RUNS FIRST SECOND: FIRST then SECOND (bash -c strings), RUNS turns,
# so that a machine whose speed drifts treats both alike.  Sets best_first
# and best_second (the least ms of each) and pair_ratio (the median over the
# turns of first/second).
in_turn() {
    local runs=$1 first=$2 second=$3 i a b ratios=""
    best_first="" best_second=""
    for i in $(seq 1 "$runs"); do
        a=$(ms_of "$first")
        b=$(ms_of "$second")
        if [ -z "$best_first" ] || [ "$a" -lt "$best_first" ]; then best_first=$a; fi
        if [ -z "$best_second" ] || [ "$b" -lt "$best_second" ]; then best_second=$b; fi
        ratios+="$(ratio "$a" "$b")"$'\n'
    done
    pair_ratio=$(printf '%s' "$ratios" | median)
}
