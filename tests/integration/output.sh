#!/usr/bin/env bash
# The output cap through `sbx run`: the head and the tail (--keep), the one
# omission note (its exact text, on a line of its own, singular and plural),
# the --json and --events fields that say what was omitted, and uncapped text
# mode handing the command sbx's own stream.  Every text is checked byte for
# byte (files compared with cmp).
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
require_helper

d=$(scratch)
full=(-p danger-full-access)
note() {  # STREAM WHAT: the note's exact line
    printf 'sbx: %s: omitted %s here; to see all output use --no-output-cap\n' "$1" "$2"
}
same() {  # DESC EXPECTED_FILE GOT_FILE: byte for byte
    if cmp -s "$2" "$3"; then is "$1" same same; else is "$1" "$(od -c <"$2" | head -20)" "$(od -c <"$3" | head -20)"; fi
}

# --- the issue's example: 400 ok lines, then the summary ------------------------
tests='for i in $(seq 1 400); do echo "ok $i"; done; echo "=== 1 failed, 400 passed ==="'
for mode in danger-full-access read-only; do
    "$SBX" run -p "$mode" -- sh -c "$tests" >"$d/out" 2>&1
    is "$mode: 400 ok lines: exit 0" 0 $?
    { seq 1 128 | sed 's/^/ok /'
      note stdout "145 lines ($(seq 129 273 | sed 's/^/ok /' | wc -c) bytes)"
      seq 274 400 | sed 's/^/ok /'
      echo "=== 1 failed, 400 passed ==="; } >"$d/want"
    same "$mode: the first 128 lines, the note, the last 128 lines with the summary (2>&1)" "$d/want" "$d/out"
done
is "the summary is the last line by default" "=== 1 failed, 400 passed ===" "$(tail -1 "$d/out")"
"$SBX" run "${full[@]}" -- sh -c "$tests" >"$d/out" 2>"$d/err"
grep -v '^sbx:' "$d/want" >"$d/want.out"
same "stdout alone holds only the command's bytes: head, then tail" "$d/want.out" "$d/out"
note stdout "145 lines ($(seq 129 273 | sed 's/^/ok /' | wc -c) bytes)" >"$d/want.err"
same "stderr holds the note alone" "$d/want.err" "$d/err"

# --- within the budget: everything, no note ------------------------------------------
"$SBX" run "${full[@]}" -- seq 1 200 >"$d/out" 2>"$d/err"
seq 1 200 >"$d/want"
same "200 lines (over the head's half, within the cap): all of them" "$d/want" "$d/out"
is "  and no note" "" "$(cat "$d/err")"

# --- a line cut mid-way: the note starts on a line of its own ----------------------
"$SBX" run "${full[@]}" --max-output-bytes 10 -- printf 'aaaaaaaaaaaaaaaaaaaaaaaaa' >"$d/out" 2>&1
{ printf 'aaaaa\n'; note stdout "15 bytes (no whole line)"; printf 'aaaaa'; } >"$d/want"
same "cut mid-line (2>&1): head, newline, note, tail" "$d/want" "$d/out"
"$SBX" run "${full[@]}" --max-output-bytes 10 -- printf 'aaaaaaaaaaaaaaaaaaaaaaaaa' >"$d/out" 2>"$d/err"
note stdout "15 bytes (no whole line)" >"$d/want"
same "  stderr elsewhere: the note without an empty line" "$d/want" "$d/err"
is "  stdout: head and tail" "aaaaaaaaaa" "$(cat "$d/out")"
"$SBX" run "${full[@]}" --max-output-bytes 10 -- sh -c 'printf "bbbbbbbbbbbbbbbbbbbb" >&2' 2>"$d/err"
{ printf 'bbbbb\n'; note stderr "10 bytes (no whole line)"; printf 'bbbbb'; } >"$d/want"
same "stderr's own note, on stderr, between its head and tail" "$d/want" "$d/err"

# --- singular and plural, CRLF, no trailing newline ------------------------------------
"$SBX" run "${full[@]}" --max-output-lines 2 -- printf 'a\nb\nc\n' >"$d/out" 2>&1
{ printf 'a\n'; note stdout "1 line (2 bytes)"; printf 'c\n'; } >"$d/want"
same "1 line (2 bytes)" "$d/want" "$d/out"
"$SBX" run "${full[@]}" --max-output-lines 2 -- printf 'one\r\ntwo\r\nthree\r\nfour' >"$d/out" 2>&1
{ printf 'one\r\n'; note stdout "2 lines (12 bytes)"; printf 'four'; } >"$d/want"
same "CRLF lines and no trailing newline" "$d/want" "$d/out"
"$SBX" run "${full[@]}" --max-output-bytes 1 -- printf 'xy' >"$d/out" 2>&1
{ note stdout "1 byte (no whole line)"; printf 'y'; } >"$d/want"
same "1 byte: the tail gets the odd byte" "$d/want" "$d/out"

# --- --keep head, tail -----------------------------------------------------------------
"$SBX" run "${full[@]}" --keep head --max-output-lines 4 -- seq 1 10 >"$d/out" 2>&1
{ seq 1 4; note stdout "6 lines (13 bytes)"; } >"$d/want"
same "--keep head: the first 4 lines, then the note" "$d/want" "$d/out"
"$SBX" run "${full[@]}" --keep tail --max-output-lines 4 -- seq 1 10 >"$d/out" 2>&1
{ note stdout "6 lines (12 bytes)"; seq 7 10; } >"$d/want"
same "--keep tail: the note, then the last 4 lines" "$d/want" "$d/out"
"$SBX" run "${full[@]}" --keep both --max-output-lines 4 -- seq 1 10 >"$d/out" 2>&1
{ seq 1 2; note stdout "6 lines (12 bytes)"; seq 9 10; } >"$d/want"
same "--keep both: 2 lines, the note, 2 lines" "$d/want" "$d/out"
"$SBX" run "${full[@]}" --keep head --max-output-bytes 9 -- printf 'abcdefgh\303\251' >"$d/out" 2>/dev/null
is "a UTF-8 sequence at the cut is not split" "abcdefgh" "$(cat "$d/out")"
"$SBX" run "${full[@]}" --keep middle -- true 2>"$d/err"
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

# --- uncapped: the command gets sbx's own stream when nothing needs the bytes --------------
"$SBX" run "${full[@]}" --no-output-cap -- readlink /proc/self/fd/1 >"$d/out"
is "uncapped text mode: the command writes to sbx's stdout itself" "$d/out" "$(cat "$d/out")"
"$SBX" run "${full[@]}" --no-output-cap -- sh -c 'readlink /proc/self/fd/2 >&2' 2>"$d/err"
is "  and to sbx's stderr" "$d/err" "$(cat "$d/err")"
"$SBX" run "${full[@]}" -- readlink /proc/self/fd/1 >"$d/out"
ok "capped: a pipe that sbx reads" grep -q '^pipe:' "$d/out"
"$SBX" run -p read-only --no-output-cap -- readlink /proc/self/fd/1 >"$d/out"
ok "uncapped but sandboxed (the denial notes read the output): a pipe" grep -q '^pipe:' "$d/out"
out=$("$SBX" run "${full[@]}" --no-output-cap --json -- readlink /proc/self/fd/1)
ok "uncapped --json: a pipe" grep -q '^pipe:' <<<"$(jq -r .stdout <<<"$out")"
head -c 3000000 /dev/urandom >"$d/bin"
"$SBX" run "${full[@]}" --no-output-cap -- cat "$d/bin" | cat >"$d/bin.out"
ok "uncapped through a pipe: every byte" cmp "$d/bin" "$d/bin.out"

# --- sbx's later notes start on a line of their own too ------------------------------
"$SBX" run "${full[@]}" -t 300ms -- sh -c 'printf partial >&2; exec sleep 30' 2>"$d/err"
is "a timeout after output cut mid-line: 124" 124 $?
printf 'partial\nsbx: timed out after 300ms: every process of the command was killed\n' >"$d/want"
same "  the note on a line of its own" "$d/want" "$d/err"

done_testing
