#!/usr/bin/env bash
# The helper's --mask-file N:PATH (sbx's masked secret files): inside the
# sandbox the file PATH shows what descriptor N held, read-only, and never its
# own content, by any way to it (its path, a symlink to it, /proc/self/root,
# openat from its directory); writing, truncating, renaming or removing it
# fails even in a writable root; after the run the real file is as it was and
# nothing is left mounted or made on the host.  Under each policy with a
# view, with and without a network namespace of the sandbox's own.  A path
# that is not a regular file the policy reads, a policy with no view, a
# learning run, a descriptor or path given twice: refused (125), the command
# never run.
. "$(dirname "$0")/lib.sh"
require_helper
HELPER=$helper
ws=$(scratch)
other=$(scratch)  # outside the writable root
cd "$ws" || exit 1
REAL='token=REAL-SECRET-4f1c'
MASK='token=SBX-SENTINEL'
printf '%s\n' "$REAL" > secret.txt
printf '%s\n' "$REAL" > "$other/secret.txt"
printf '%s\n' "$MASK" > mask.txt
ln -s secret.txt link.txt
ln -s . dirlink
mkdir adir
before=$(ls -lA --time-style=+%s "$ws" "$other")

# Every way the command could read the file, and every way to change it: one
# word each.  Lines: cat, root, openat, fd7, write, append, truncate, rm, mv,
# chmod, link.
probe='p=$1
echo "cat:$(cat "$p" 2>&1)"
echo "root:$(cat "/proc/self/root$p" 2>&1)"
echo "openat:$(python3 -c "import os,sys
d = os.open(os.path.dirname(sys.argv[1]), os.O_RDONLY | os.O_DIRECTORY)
print(os.read(os.open(os.path.basename(sys.argv[1]), os.O_RDONLY, dir_fd=d), 4096).decode().strip())" "$p" 2>&1)"
(: <&7) 2>/dev/null && echo fd7:open || echo fd7:closed
for op in write append truncate rm mv chmod link; do
    case $op in
        write) (echo x > "$p") ;;
        append) (echo x >> "$p") ;;
        truncate) truncate -s 0 "$p" ;;
        rm) rm -f "$p" ;;
        mv) mv "$p" "$p.moved" ;;
        chmod) chmod 600 "$p" ;;
        link) ln "$p" "$p.link" ;;
    esac 2>/dev/null && echo "$op:done" || echo "$op:refused"
done
echo "after:$(cat "$p" 2>&1)"'
expected="cat:$MASK
root:$MASK
openat:$MASK
fd7:closed
write:refused
append:refused
truncate:refused
rm:refused
mv:refused
chmod:refused
link:refused
after:$MASK"

# sandbox POLICY-OPTION POLICY PATH: the probe on PATH, its mask on descriptor 7
# (and the options in $extra).
extra=()
sandbox() {
    "$HELPER" --sandbox-policy-cwd "$ws" "$1" "$2" ${extra[@]+"${extra[@]}"} --mask-file "7:$3" -- \
        sh -c "$probe" probe "$3" 7<mask.txt 2>&1
}

host_unchanged() {
    [ "$(cat secret.txt)" = "$REAL" ] && [ "$(cat "$other/secret.txt")" = "$REAL" ] &&
        [ "$(ls -lA --time-style=+%s "$ws" "$other")" = "$before" ] &&
        ! grep -q -e "$ws" -e "$other" /proc/self/mountinfo
}

profile() {  # Codex's permission profile: the minimal entries, $ws writable, and $1 (entries, with a comma)
    printf '{"type":"managed","file_system":{"type":"restricted","entries":[{"path":{"type":"special","value":{"kind":"minimal"}},"access":"read"},{"path":{"type":"path","path":"%s"},"access":"write"}%s]},"network":"restricted"}' "$ws" "${1:-}"
}

# --- every policy: the mask, and nothing else -------------------------------
check() {  # DESC POLICY-OPTION POLICY PATH
    local out
    # A learning run says what it recorded (a write to /dev/tty, say) on stderr.
    out=$(sandbox "$2" "$3" "$4" | grep -v '^codex-linux-sandbox: denied ')
    is "$1: the mask by every way, every change refused, descriptor 7 closed" "$expected" "$out"
    case $out in *REAL-SECRET*) _tap_result fail "... the real content never shows" "$out" ;;
        *) _tap_result ok "... the real content never shows" ;; esac
    ok "... the host's files as they were, nothing mounted there" host_unchanged
}
for net in restricted limited full; do
    check "read-only, network $net" --sandbox-policy '{"mode":"read-only","network":"'$net'"}' "$ws/secret.txt"
    check "workspace-write, in the writable root, network $net" \
        --sandbox-policy '{"mode":"workspace-write","network":"'$net'"}' "$ws/secret.txt"
    check "workspace-write, outside the writable root, network $net" \
        --sandbox-policy '{"mode":"workspace-write","network":"'$net'"}' "$other/secret.txt"
done
check "Codex's workspace-write" --sandbox-policy '{"type":"workspace-write"}' "$ws/secret.txt"
check "Codex's read-only with network" --sandbox-policy '{"type":"read-only","network_access":true}' "$ws/secret.txt"
check "entries only (minimal, the workspace writable)" --permission-profile "$(profile)" "$ws/secret.txt"
check "entries only, a file read outside the writable root" \
    --permission-profile "$(profile ',{"path":{"type":"path","path":"'"$other"'"},"access":"read"}')" "$other/secret.txt"
is "--no-proc (the tmpfs is cloned through /proc): the mask, and it stays" "$MASK refused" \
    "$("$HELPER" --sandbox-policy-cwd "$ws" --sandbox-policy '{"mode":"workspace-write"}' --no-proc \
        --mask-file "7:$ws/secret.txt" -- sh -c 'echo "$(cat secret.txt)" "$(rm -f secret.txt 2>/dev/null && echo done ||
            echo refused)"' 7<mask.txt 2>&1)"
ok "... the host's files as they were, nothing mounted there" host_unchanged


# --- how PATH is found in the view ------------------------------------------
ws_policy='{"mode":"workspace-write"}'
is "a symlink as the last component: its target is masked, by either name" "$MASK $MASK" \
    "$("$HELPER" --sandbox-policy-cwd "$ws" --sandbox-policy "$ws_policy" --mask-file "7:$ws/link.txt" -- \
        sh -c 'echo $(cat link.txt) $(cat secret.txt)' 7<mask.txt 2>&1)"
is "a symlink on the way is followed in the view" "$MASK $MASK" \
    "$("$HELPER" --sandbox-policy-cwd "$ws" --sandbox-policy "$ws_policy" --mask-file "7:$ws/dirlink/secret.txt" -- \
        sh -c 'echo $(cat dirlink/secret.txt) $(cat secret.txt)' 7<mask.txt 2>&1)"
is "a path holding ':' (split at the first)" "$MASK" \
    "$(printf '%s\n' "$REAL" > "$other/a:b" && "$HELPER" --sandbox-policy-cwd "$ws" --sandbox-policy "$ws_policy" \
        --mask-file "7:$other/a:b" -- cat "$other/a:b" 7<mask.txt 2>&1; rm -f "$other/a:b")"
is "two files, each its own content" "$MASK|other" \
    "$("$HELPER" --sandbox-policy-cwd "$ws" --sandbox-policy "$ws_policy" --mask-file "7:$ws/secret.txt" \
        --mask-file "8:$other/secret.txt" -- sh -c 'echo "$(cat secret.txt)|$(cat "$1")"' sh "$other/secret.txt" \
        7<mask.txt 8< <(echo other) 2>&1)"
ok "... the host's files as they were" host_unchanged

# --- the content: exact, from any readable descriptor --------------------------
size_of() {  # SOURCE-COMMAND: the size the sandbox sees, its content piped on descriptor 7
    "$HELPER" --sandbox-policy-cwd "$ws" --sandbox-policy "$ws_policy" --mask-file "7:$ws/secret.txt" -- \
        sh -c 'wc -c < secret.txt; stat -c %a secret.txt' 7< <(eval "$1") 2>&1 | tr '\n' ' '
}
chmod 640 secret.txt
is "a pipe: the content as sent, the real file's mode (0640)" "6 640 " \
    "$(size_of 'printf "a:b\nc\n"')"
chmod 600 secret.txt
is "nothing: an empty file (0600, still private)" "0 600 " "$(size_of true)"
chmod 644 secret.txt
is "1 MiB exactly" "1048576 644 " "$(size_of 'head -c 1048576 /dev/zero')"
is "a non-blocking pipe is read to its end" "5 644 " \
    "$(size_of 'python3 -c "import os,sys; os.set_blocking(1, False); sys.stdout.write(\"abcde\")"')"
is "a write fails as in the rest of the view: read-only file system (EROFS), not a permission" \
    "Read-only file system" \
    "$("$HELPER" --sandbox-policy-cwd "$ws" --sandbox-policy "$ws_policy" --mask-file "7:$ws/secret.txt" -- \
        sh -c 'echo x >secret.txt' 7<mask.txt 2>&1 | grep -o 'Read-only file system')"
big=$("$HELPER" --sandbox-policy-cwd "$ws" --sandbox-policy "$ws_policy" --mask-file "7:$ws/secret.txt" -- \
    touch "$ws/ran" 7< <(head -c 1048577 /dev/zero) 2>&1)
is "more than 1 MiB is refused (125), the command not run" \
    "125 codex-linux-sandbox: mask file: the content for $ws/secret.txt is larger than 1 MiB no" \
    "$? $big $([ -e ran ] && echo yes || echo no)"
memfd=$(python3 -c 'import os,sys
fd = os.memfd_create("mask")
os.write(fd, b"from a memfd\n")
os.lseek(fd, 0, 0)
os.dup2(fd, 7)
os.execvp(sys.argv[1], sys.argv[1:])' "$HELPER" --sandbox-policy-cwd "$ws" --sandbox-policy "$ws_policy" \
    --mask-file "7:$ws/secret.txt" -- cat secret.txt 2>&1)
is "a memfd" "from a memfd" "$memfd"

# --- refusals: 125, the command never run -------------------------------------
refused() {  # DESC EXPECTED-LINE POLICY-OPTION POLICY PATH [FD-REDIRECTION-FILE]
    local out rc
    out=$("$HELPER" --sandbox-policy-cwd "$ws" "$3" "$4" --mask-file "7:$5" -- touch "$ws/ran" 7<"${6:-mask.txt}" 2>&1)
    rc=$?
    is "$1" "125 codex-linux-sandbox: $2 no" "$rc $out $([ -e ran ] && echo yes || echo no)"
    rm -f ran
}
fix="mask only a file the policy lets the command read (an existing regular file, not denied)"
usage="usage: codex-linux-sandbox --sandbox-policy-cwd DIR [--command-cwd DIR] (--permission-profile JSON | --sandbox-policy JSON) [--no-proc] [--] CMD..."
refused "a path that does not exist" "mask file: the sandbox's view has no file $ws/missing.txt to show in its place; $fix" \
    --sandbox-policy "$ws_policy" "$ws/missing.txt"
refused "a directory" "mask file: the sandbox's view has no file $ws/adir to show in its place; $fix" \
    --sandbox-policy "$ws_policy" "$ws/adir"
refused "a device" "mask file: the sandbox's view has no file /dev/null to show in its place; $fix" \
    --sandbox-policy "$ws_policy" /dev/null
refused "a file the entries do not show" \
    "mask file: the sandbox's view has no file $other/secret.txt to show in its place; $fix" \
    --permission-profile "$(profile)" "$other/secret.txt"
refused "a file the policy denies" "mask file: $ws/secret.txt: the policy does not let the command read it; $fix" \
    --permission-profile "$(profile ',{"path":{"type":"path","path":"'"$ws/secret.txt"'"},"access":"none"}')" \
    "$ws/secret.txt"
refused "a file under /proc" "mask file: /proc/version lies under /proc, the kernel's files; $fix" \
    --sandbox-policy "$ws_policy" /proc/version
refused "a relative path" "arguments: --mask-file: 'secret.txt' is not an absolute path; $usage" \
    --sandbox-policy "$ws_policy" secret.txt
refused "danger-full-access" \
    "arguments: --mask-file: the policy has no filesystem view (read-only or workspace-write) to mask a file in; $usage" \
    --sandbox-policy '{"type":"danger-full-access"}' "$ws/secret.txt"
refused "external-sandbox (no view: the real file would show)" \
    "arguments: --mask-file: the policy has no filesystem view (read-only or workspace-write) to mask a file in; $usage" \
    --sandbox-policy '{"type":"external-sandbox","network_access":"restricted"}' "$ws/secret.txt"
out=$("$HELPER" --sandbox-policy-cwd "$ws" --sandbox-policy "$ws_policy" --learn --mask-file "7:$ws/secret.txt" -- \
    touch "$ws/ran" 7<mask.txt 2>&1)
is "a learning run (its view is the host's files as they are)" \
    "125 codex-linux-sandbox: arguments: --mask-file: a learning run shows the host's files as they are; $usage no" \
    "$? $out $([ -e ran ] && echo yes || echo no)"
out=$("$HELPER" --sandbox-policy-cwd "$ws" --sandbox-policy "$ws_policy" --mask-file "9:$ws/secret.txt" -- \
    touch "$ws/ran" 2>&1)
is "a descriptor that is not open" \
    "125 codex-linux-sandbox: mask file: reading the content of $ws/secret.txt from descriptor 9: Bad file descriptor; open descriptor 9 on the content (9<FILE) before starting the helper no" \
    "$? $out $([ -e ran ] && echo yes || echo no)"
out=$("$HELPER" --sandbox-policy-cwd "$ws" --sandbox-policy "$ws_policy" --mask-file "7:$ws/secret.txt" \
    --mask-file "8:$ws/link.txt" -- touch "$ws/ran" 7<mask.txt 8<mask.txt 2>&1)
is "two paths to one file" \
    "125 codex-linux-sandbox: mask file: $ws/link.txt is the file masked for $ws/secret.txt; give each file once no" \
    "$? $out $([ -e ran ] && echo yes || echo no)"
out=$("$HELPER" --sandbox-policy-cwd "$ws" --sandbox-policy "$ws_policy" --mask-file "7:$ws/secret.txt" \
    --mask-file "8:$ws/secret.txt" -- touch "$ws/ran" 7<mask.txt 8<mask.txt 2>&1)
is "one path twice" \
    "125 codex-linux-sandbox: arguments: --mask-file: $ws/secret.txt is given twice; give each path once; $usage no" \
    "$? $out $([ -e ran ] && echo yes || echo no)"
out=$("$HELPER" --sandbox-policy-cwd "$ws" --sandbox-policy "$ws_policy" --mask-file "7:$ws/secret.txt" \
    --mask-file "7:$other/secret.txt" -- touch "$ws/ran" 7<mask.txt 2>&1)
is "one descriptor twice" \
    "125 codex-linux-sandbox: arguments: --mask-file: descriptor 7 is given twice (each is read to its end); give each its own; $usage no" \
    "$? $out $([ -e ran ] && echo yes || echo no)"
out=$("$HELPER" --sandbox-policy-cwd "$ws" --sandbox-policy "$ws_policy" --status-fd 7 --mask-file "7:$ws/secret.txt" -- \
    touch "$ws/ran" 7>status.out 2>&1)
is "the status channel's descriptor (the refusal goes to that channel)" "125  no" \
    "$? $out $([ -e ran ] && echo yes || echo no)"
ok "... and names the clash there" grep -q "descriptor 7 is --status-fd's or --proxy-fd's" status.out
rm -f status.out
ok "after the refusals, the host's files as they were" host_unchanged

done_testing
