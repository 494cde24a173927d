#!/usr/bin/env bash
# Output through `sbx run`: by default every byte the command writes reaches
# sbx's stdout and stderr, whole (100,000 lines, 50 MB of binary, stderr too,
# sandboxed or not, into files and pipes); the caps bound what sbx keeps (the
# --json and --events fields that say what was omitted); --cap-live caps the
# live stream too: the head and the tail (--keep), the one omission note (its
# exact text, on a line of its own, singular and plural).  Text mode with
# nothing that needs the bytes hands the command sbx's own stream.  Every
# text is checked byte for byte (files compared with cmp).
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
require_helper

d=$(scratch)
full=(-p danger-full-access)
note() {  # STREAM WHAT: the note's exact line
    printf 'sbx: %s: omitted %s here; to see all output run without --cap-live\n' "$1" "$2"
}
same() {  # DESC EXPECTED_FILE GOT_FILE: byte for byte
    if cmp -s "$2" "$3"; then is "$1" same same; else is "$1" "$(od -c <"$2" | head -20)" "$(od -c <"$3" | head -20)"; fi
}

# --- by default, every byte: the command's output as it would be without sbx ------
# Unsandboxed (the command writes to sbx's streams itself) and sandboxed
# (sbx reads every byte for the denial notes and writes it on).
seq 1 100000 >"$d/seq"
head -c 50000000 /dev/urandom >"$d/50M"
for mode in danger-full-access read-only; do
    is "$mode: seq 1 100000 | wc -l through sbx" 100000 "$("$SBX" run -p "$mode" -- seq 1 100000 | wc -l)"
    "$SBX" run -p "$mode" -- seq 1 100000 >"$d/out" 2>"$d/err"
    is "$mode: seq 1 100000 into a file: exit 0, nothing on stderr" "0 0" "$? $(wc -c <"$d/err")"
    same "  byte for byte" "$d/seq" "$d/out"
    "$SBX" run -p "$mode" -- cat "$d/50M" | cat >"$d/out"
    ok "$mode: 50 MB of binary through a pipe: byte for byte" cmp "$d/50M" "$d/out"
    "$SBX" run -p "$mode" -- cat "$d/50M" >"$d/out"
    ok "$mode: 50 MB of binary into a file: byte for byte" cmp "$d/50M" "$d/out"
    "$SBX" run -p "$mode" -- sh -c 'cat "$1" >&2' sh "$d/50M" 2>&1 >/dev/null | cat >"$d/out"
    ok "$mode: 50 MB of binary on stderr, through a pipe: byte for byte" cmp "$d/50M" "$d/out"
    "$SBX" run -p "$mode" -- sh -c 'seq 1 100000 >&2' 2>"$d/out"
    same "$mode: seq 1 100000 on stderr, into a file" "$d/seq" "$d/out"
done
# 2>&1 through a pipe: stdout and stderr in the order the command wrote them,
# unsandboxed (given sbx's own stream, or one pipe for both) and sandboxed
# (one pipe for both, which sbx reads for the denial notes): two pipes read
# in turn would interleave them otherwise.
for i in $(seq 1 2000); do echo "out $i"; echo "err $i"; done >"$d/want"
for mode in danger-full-access workspace-write; do
    "$SBX" run -p "$mode" -- sh -c 'i=1; while [ $i -le 2000 ]; do echo "out $i"; echo "err $i" >&2; i=$((i+1)); done' \
        2>&1 | cat >"$d/out"
    same "$mode: 2>&1 through a pipe: stdout and stderr interleaved as written" "$d/want" "$d/out"
done
# The denial note still reads what the command wrote on stderr, through the
# one pipe.
(cd "$d" && "$SBX" run -p workspace-write -- sh -c 'touch /etc/sbx-output-test; s=$?; echo after; exit $s' 2>&1 |
    cat >"$d/out")
is "2>&1, sandboxed: the message, then the later stdout line, then the note" \
    "touch: cannot touch '/etc/sbx-output-test': Read-only file system
after" "$(grep -v '^sbx: ' "$d/out")"
ok "  and the denial note names the path" grep -q '^sbx: .*write /etc/sbx-output-test' "$d/out"
# What sbx keeps stays capped.
out=$("$SBX" run "${full[@]}" --json -- seq 1 100000)
is "--json: the kept copy capped: 256 lines, 10240 bytes at most, truncated, every byte counted" \
    "256 true $(wc -c <"$d/seq") true" \
    "$(jq -r '"\(.stdout | split("\n") | length - 1) \(.stdout | length <= 10240) \(.stdout_bytes) \(.stdout_truncated)"' <<<"$out")"
out=$("$SBX" run -p read-only --json -- sh -c 'seq 1 100000 >&2')
is "--json, sandboxed, stderr: 256 lines, truncated, the omitted lines counted" "256 true 99744 false" \
    "$(jq -r '"\(.stderr | split("\n") | length - 1) \(.stderr_truncated) \(.stderr_omitted_lines) \(.stdout_truncated)"' <<<"$out")"
out=$("$SBX" run "${full[@]}" --events -- seq 1 100000)
is "--events: capped output events (128 + 128 lines), one omitted event" "256 1 99744" \
    "$(jq -rs '"\([.[] | select(.type == "output") | .data] | add | split("\n") | length - 1) \([.[] | select(.type == "omitted")] | length) \(.[] | select(.type == "omitted") | .lines)"' <<<"$out")"
# --cap-live: only in text mode.
"$SBX" run "${full[@]}" --cap-live --json -- true >/dev/null 2>"$d/err"
is "--cap-live --json: 125, one line" "125 sbx: --cap-live: only in text mode (--json prints nothing while the command runs)" \
    "$? $(cat "$d/err")"
"$SBX" run "${full[@]}" --cap-live --events -- true >/dev/null 2>"$d/err"
is "--cap-live --events: 125, one line" \
    "125 sbx: --cap-live: only in text mode (the output events of --events are capped already)" "$? $(cat "$d/err")"
rm -f "$d/50M"

# --- --cap-live: the live stream capped too, a short log ----------------------------
"$SBX" run "${full[@]}" --cap-live -- seq 1 1000 >"$d/out" 2>"$d/err"
is "--cap-live: seq 1 1000 shows 256 lines" 256 "$(wc -l <"$d/out")"
is "  and says on stderr what was omitted and how to see it all" "$(note stdout "744 lines ($(seq 129 872 | wc -c) bytes)")" \
    "$(cat "$d/err")"

# --- the issue's example: 400 ok lines, then the summary ------------------------
tests='for i in $(seq 1 400); do echo "ok $i"; done; echo "=== 1 failed, 400 passed ==="'
for mode in danger-full-access read-only; do
    "$SBX" run -p "$mode" --cap-live -- sh -c "$tests" >"$d/out" 2>&1
    is "$mode: 400 ok lines: exit 0" 0 $?
    { seq 1 128 | sed 's/^/ok /'
      note stdout "145 lines ($(seq 129 273 | sed 's/^/ok /' | wc -c) bytes)"
      seq 274 400 | sed 's/^/ok /'
      echo "=== 1 failed, 400 passed ==="; } >"$d/want"
    same "$mode: the first 128 lines, the note, the last 128 lines with the summary (2>&1)" "$d/want" "$d/out"
done
is "the summary is the last line with --cap-live" "=== 1 failed, 400 passed ===" "$(tail -1 "$d/out")"
"$SBX" run "${full[@]}" --cap-live -- sh -c "$tests" >"$d/out" 2>"$d/err"
grep -v '^sbx:' "$d/want" >"$d/want.out"
same "stdout alone holds only the command's bytes: head, then tail" "$d/want.out" "$d/out"
note stdout "145 lines ($(seq 129 273 | sed 's/^/ok /' | wc -c) bytes)" >"$d/want.err"
same "stderr holds the note alone" "$d/want.err" "$d/err"

# --- within the budget: everything, no note ------------------------------------------
"$SBX" run "${full[@]}" --cap-live -- seq 1 200 >"$d/out" 2>"$d/err"
seq 1 200 >"$d/want"
same "200 lines (over the head's half, within the cap): all of them" "$d/want" "$d/out"
is "  and no note" "" "$(cat "$d/err")"

# --- a line cut mid-way: the note starts on a line of its own ----------------------
"$SBX" run "${full[@]}" --cap-live --max-output-bytes 10 -- printf 'aaaaaaaaaaaaaaaaaaaaaaaaa' >"$d/out" 2>&1
{ printf 'aaaaa\n'; note stdout "15 bytes (no whole line)"; printf 'aaaaa'; } >"$d/want"
same "cut mid-line (2>&1): head, newline, note, tail" "$d/want" "$d/out"
"$SBX" run "${full[@]}" --cap-live --max-output-bytes 10 -- printf 'aaaaaaaaaaaaaaaaaaaaaaaaa' >"$d/out" 2>"$d/err"
note stdout "15 bytes (no whole line)" >"$d/want"
same "  stderr elsewhere: the note without an empty line" "$d/want" "$d/err"
is "  stdout: head and tail" "aaaaaaaaaa" "$(cat "$d/out")"
"$SBX" run "${full[@]}" --cap-live --max-output-bytes 10 -- sh -c 'printf "bbbbbbbbbbbbbbbbbbbb" >&2' 2>"$d/err"
{ printf 'bbbbb\n'; note stderr "10 bytes (no whole line)"; printf 'bbbbb'; } >"$d/want"
same "stderr's own note, on stderr, between its head and tail" "$d/want" "$d/err"

# --- singular and plural, CRLF, no trailing newline ------------------------------------
"$SBX" run "${full[@]}" --cap-live --max-output-lines 2 -- printf 'a\nb\nc\n' >"$d/out" 2>&1
{ printf 'a\n'; note stdout "1 line (2 bytes)"; printf 'c\n'; } >"$d/want"
same "1 line (2 bytes)" "$d/want" "$d/out"
"$SBX" run "${full[@]}" --cap-live --max-output-lines 2 -- printf 'one\r\ntwo\r\nthree\r\nfour' >"$d/out" 2>&1
{ printf 'one\r\n'; note stdout "2 lines (12 bytes)"; printf 'four'; } >"$d/want"
same "CRLF lines and no trailing newline" "$d/want" "$d/out"
"$SBX" run "${full[@]}" --cap-live --max-output-bytes 1 -- printf 'xy' >"$d/out" 2>&1
{ note stdout "1 byte (no whole line)"; printf 'y'; } >"$d/want"
same "1 byte: the tail gets the odd byte" "$d/want" "$d/out"

# --- --keep head, tail -----------------------------------------------------------------
"$SBX" run "${full[@]}" --cap-live --keep head --max-output-lines 4 -- seq 1 10 >"$d/out" 2>&1
{ seq 1 4; note stdout "6 lines (13 bytes)"; } >"$d/want"
same "--keep head: the first 4 lines, then the note" "$d/want" "$d/out"
"$SBX" run "${full[@]}" --cap-live --keep tail --max-output-lines 4 -- seq 1 10 >"$d/out" 2>&1
{ note stdout "6 lines (12 bytes)"; seq 7 10; } >"$d/want"
same "--keep tail: the note, then the last 4 lines" "$d/want" "$d/out"
"$SBX" run "${full[@]}" --cap-live --keep both --max-output-lines 4 -- seq 1 10 >"$d/out" 2>&1
{ seq 1 2; note stdout "6 lines (12 bytes)"; seq 9 10; } >"$d/want"
same "--keep both: 2 lines, the note, 2 lines" "$d/want" "$d/out"
"$SBX" run "${full[@]}" --cap-live --keep head --max-output-bytes 9 -- printf 'abcdefgh\303\251' >"$d/out" 2>/dev/null
is "a UTF-8 sequence at the cut is not split" "abcdefgh" "$(cat "$d/out")"
"$SBX" run "${full[@]}" --cap-live --keep middle -- true 2>"$d/err"
is "--keep middle: 125" 125 $?
is "  one line naming the flag" "sbx: --keep: 'middle' is not head, tail or both" "$(cat "$d/err")"

# --- --json and --events say what was omitted ---------------------------------------
out=$("$SBX" run "${full[@]}" --json --max-output-lines 4 -- seq 1 10)
is "--json: head and tail, omitted bytes and lines, the cap" \
    '"1\n2\n9\n10\n" 21 12 6 0 0 {"keep":"both","max_bytes":10240,"max_lines":4} true' \
    "$(jq -rc '"\(.stdout|tojson) \(.stdout_bytes) \(.stdout_omitted_bytes) \(.stdout_omitted_lines) \(.stderr_omitted_bytes) \(.stderr_omitted_lines) \(.output_cap) \(.stdout_truncated)"' <<<"$out")"
out=$("$SBX" run "${full[@]}" --json --no-output-cap -- seq 1 10)
is "--json, uncapped: every byte, nothing omitted" '21 0 {"keep":"both","max_bytes":0,"max_lines":0}' \
    "$(jq -rc '"\(.stdout_bytes) \(.stdout_omitted_bytes) \(.output_cap)"' <<<"$out")"
out=$("$SBX" run "${full[@]}" --events --keep tail --max-output-lines 3 -- sh -c 'seq 1 5; seq 1 5 >&2')
is "--events: the omitted event where output was omitted, before each tail" \
    'begin|omitted stdout 4 2|output stdout "3\n4\n5\n"|omitted stderr 4 2|output stderr "3\n4\n5\n"|end' \
    "$(jq -rc 'if .type == "omitted" then "omitted \(.stream) \(.bytes) \(.lines)" elif .type == "output" then "output \(.stream) \(.data|tojson)" else .type end' <<<"$out" | paste -sd'|')"
is "--events: the end event's counts" "4 2 tail" \
    "$(jq -r 'select(.type=="end") | .result | "\(.stderr_omitted_bytes) \(.stderr_omitted_lines) \(.output_cap.keep)"' <<<"$out")"

# --- the command gets sbx's own stream when nothing needs the bytes ----------------
# (The Linux supervisor; the portable one, without a subreaper to find who
# still holds a stream for the drain, always gives the command pipes.)
given() {  # DESC FILE: the command wrote to FILE itself (portable: to a pipe)
    if [ "${SBX_SUPERVISOR:-linux}" = linux ]; then
        is "$1" "$2" "$(cat "$2")"
    else
        ok "$1 (portable: a pipe)" grep -q '^pipe:' "$2"
    fi
}
"$SBX" run "${full[@]}" -- readlink /proc/self/fd/1 >"$d/out"
given "text mode, unsandboxed: the command writes to sbx's stdout itself" "$d/out"
"$SBX" run "${full[@]}" -- sh -c 'readlink /proc/self/fd/2 >&2' 2>"$d/err"
given "  and to sbx's stderr" "$d/err"
"$SBX" run "${full[@]}" --max-output-lines 1 -- readlink /proc/self/fd/1 >"$d/out"
given "  whatever the caps (they bound what sbx keeps)" "$d/out"
"$SBX" run "${full[@]}" --cap-live -- readlink /proc/self/fd/1 >"$d/out"
ok "--cap-live: a pipe that sbx reads" grep -q '^pipe:' "$d/out"
"$SBX" run "${full[@]}" --cap-live --no-output-cap -- readlink /proc/self/fd/1 >"$d/out"
given "--cap-live --no-output-cap (nothing to cut): sbx's stdout itself" "$d/out"
"$SBX" run -p read-only -- readlink /proc/self/fd/1 >"$d/out"
ok "sandboxed (the denial notes read the output): a pipe" grep -q '^pipe:' "$d/out"
out=$("$SBX" run "${full[@]}" --no-output-cap --json -- readlink /proc/self/fd/1)
ok "uncapped --json: a pipe" grep -q '^pipe:' <<<"$(jq -r .stdout <<<"$out")"
head -c 3000000 /dev/urandom >"$d/bin"
"$SBX" run "${full[@]}" --cap-live --no-output-cap -- cat "$d/bin" | cat >"$d/bin.out"
ok "--cap-live uncapped through a pipe: every byte" cmp "$d/bin" "$d/bin.out"

# --- sbx's later notes start on a line of their own too ------------------------------
"$SBX" run "${full[@]}" -t 300ms -- sh -c 'printf partial >&2; exec sleep 30' 2>"$d/err"
is "a timeout after output cut mid-line: 124" 124 $?
printf 'partial\nsbx: timed out after 300ms: every process of the command was killed\n' >"$d/want"
same "  the note on a line of its own" "$d/want" "$d/err"
"$SBX" run "${full[@]}" -t 300ms -- sh -c 'printf partial; exec sleep 30' >"$d/err" 2>&1
same "  stdout and stderr one file (2>&1), written by the command itself: the same" "$d/want" "$d/err"
"$SBX" run -p read-only -t 300ms -- sh -c 'printf partial >&2; exec sleep 30' 2>"$d/err"
same "  sandboxed (sbx reads and writes the output): the same" "$d/want" "$d/err"

done_testing
