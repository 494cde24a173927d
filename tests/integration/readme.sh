#!/usr/bin/env bash
# Every command in README.md runs as written (issue 31).  The convention,
# stated at the top of README.md and in docs/development.md ("The README's
# commands"):
#   ```sh                  a block run here: it must exit 0
#   ```sh exit=N           a block run here: it must exit N
#   ```sh skip="REASON"    a block not run here: reported as SKIP with REASON
#   ```text                output shown, not run: it may hold no command
#                          (no line starting "$ " or "sbx ")
#   ```text right after a run block (blank lines between): that block's
#                          output; each of its lines but "..." must be a line
#                          the block printed (the scratch HOME written
#                          /home/u, the project /home/u/proj)
# Any other fence, and any indented code block, fails: a command cannot be
# shown without being run or named as skipped.
#
# Each block runs as one script, `bash -e -o pipefail`, in a session of its
# own (setsid: no terminal, as in CI, so an approval prompt is answered no),
# with `sbx` the sbx under test ($SBX, first on PATH; the helper is
# $SBX_LINUX_SANDBOX_EXE as for every test here), in a small project made
# below (a git repository, with a committer, and a Makefile whose `test` writes in
# the workspace and whose `install` writes outside it), HOME a scratch
# directory with ~/.ssh/id_ed25519 and ~/.cache, TMPDIR a scratch directory.
# The blocks share the project, in the README's order.
#
# Two skipped blocks are still checked here: the quick start's sandboxed
# command (the last of its line, `build/sbx run ...`) runs with build/sbx the
# sbx under test and must print what it says; the test command must be what
# .ci/run runs as its stage 1.  The package list of the quick start is
# checked against .ci/run's by cli.sh.
#
# SBX_README=FILE checks another file (a copy with a command broken must
# fail); SBX_README_SHOW=1 prints each block's output on stderr.
. "$(dirname "$0")/lib.sh"
src=$(cd "$(dirname "$0")/../.." && pwd)
readme=${SBX_README:-$src/README.md}  # another file, to check that a broken one fails

if [ "$(id -u)" != 0 ] && ! why=$(has_user_namespaces); then
    echo "1..0 # SKIP $why"
    exit 0
fi

d=$(scratch)
blocks=$d/blocks
mkdir -p "$blocks" "$d/bin" "$d/home/.ssh" "$d/home/.cache" "$d/tmp" "$d/project"
ln -s "$SBX" "$d/bin/sbx"
echo 'not a key' >"$d/home/.ssh/id_ed25519"
chmod 700 "$d/home/.ssh"
cat >"$d/project/Makefile" <<'EOF'
test:
	mkdir -p out
	echo 'tests passed' > out/result
	cat out/result
install: test
	install -D -m 644 out/result $(HOME)/.local/share/project/result
EOF
git -C "$d/project" init -q
git -C "$d/project" config user.name readme && git -C "$d/project" config user.email readme@example.org

# The README's fenced blocks, one file each: blocks/N.sh (the block's text),
# and one line per block on stdout: N LINE KIND ARG (KIND: run EXIT, skip
# REASON, text, or bad INFO); indented code blocks as "N LINE indented".
python3 - "$readme" "$blocks" >"$d/index" <<'EOF'
import re, sys
path, out = sys.argv[1], sys.argv[2]
lines = open(path, encoding="utf-8").read().split("\n")
n = 0
i = 0
last_run = None  # (block number, index of its closing fence) of the last run block
prev_blank = True
in_comment = False
while i < len(lines):
    line = lines[i]
    if in_comment or line.lstrip().startswith("<!--"):
        in_comment = "-->" not in line
        i += 1
        prev_blank = False
        continue
    m = re.match(r"^(```+|~~~+)(.*)$", line)
    if m:
        fence, info = m.group(1), m.group(2).strip()
        start = i + 1
        body = []
        i += 1
        while i < len(lines) and not lines[i].startswith(fence):
            body.append(lines[i])
            i += 1
        if i == len(lines):
            print(f"{n} {start} bad unclosed fence")
            sys.exit(0)
        n += 1
        open(f"{out}/{n}.sh", "w", encoding="utf-8").write("\n".join(body) + "\n")
        # A text block right after a run block (blank lines between) is its output.
        follows = last_run[0] if last_run and all(not l.strip() for l in lines[last_run[1] + 1:start - 1]) else None
        last_run = (n, i) if info.startswith("sh") and "skip=" not in info else None
        if info == "sh":
            print(f"{n} {start} run 0")
        elif re.fullmatch(r"sh exit=[0-9]+", info):
            print(f"{n} {start} run {info.split('=')[1]}")
        elif re.fullmatch(r'sh skip="[^"]+"', info):
            print(f"{n} {start} skip {info[len('sh skip=') + 1:-1]}")
        elif info == "text" and follows:
            print(f"{n} {start} output {follows}")
        elif info == "text":
            print(f"{n} {start} text")
        else:
            print(f"{n} {start} bad {info or '(no info string)'}")
        i += 1
        prev_blank = False
        continue
    if prev_blank and (line.startswith("    ") or line.startswith("\t")) and line.strip():
        n += 1
        print(f"{n} {i + 1} indented")
    prev_blank = line.strip() == ""
    i += 1
EOF

ran=0 skipped=0
[ -n "${SBX_README_SHOW:-}" ] && exec 3>&2 || exec 3>/dev/null  # each block's output on stderr
while read -r n line kind arg; do
    block=$blocks/$n.sh
    # The block's first command, for the test's name: no "#" (TAP's directive).
    first=$(grep -m1 -v '^[[:space:]]*\(#.*\)\?$' "$block" 2>/dev/null | cut -c1-70 | sed 's/[[:space:]]*#.*//; s/[[:space:]]*$//')
    where="README.md:$line"
    case $kind in
    run)
        out=$(cd "$d/project" && env HOME="$d/home" TMPDIR="$d/tmp" PATH="$d/bin:$PATH" \
            setsid -w bash -e -o pipefail "$block" </dev/null 2>&1)
        status=$?
        printf '%s (exit %s):\n%s\n\n' "$where" "$status" "$out" >&3
        # As the README shows it: the scratch HOME as /home/u, the project as /home/u/proj.
        printf '%s\n' "$out" | sed "s|$d/project|/home/u/proj|g; s|$d/home|/home/u|g" >"$blocks/$n.out"
        ran=$((ran + 1))
        if [ "$status" = "$arg" ]; then
            _tap_result ok "$where: $first (exit $arg)"
        else
            _tap_result fail "$where: $first (exit $arg)" "exit $status, output:
$out"
        fi
        ;;
    skip)
        skipped=$((skipped + 1))
        skip "$where: $first" "$arg"
        ;;
    output)
        # Each line shown, but "...", is a line of what the block above printed.
        missing=$(grep -vx '\.\.\.' "$block" | grep -vxF -f "$blocks/$arg.out")
        if [ -z "$missing" ]; then
            _tap_result ok "$where: the output shown is what the command above printed"
        else
            _tap_result fail "$where: the output shown is what the command above printed" "not printed:
$missing
printed:
$(cat "$blocks/$arg.out")"
        fi
        ;;&
    text | output)
        if bad=$(grep -n '^\(\$ \|sbx \)' "$block"); then
            _tap_result fail "$where: a text block holds no command" "a command in a text block is never run (fence it \`\`\`sh): $bad"
        fi
        ;;
    indented)
        _tap_result fail "$where: an indented code block" "fence it: \`\`\`sh (run here), \`\`\`sh skip=\"REASON\" or \`\`\`text"
        ;;
    *)
        _tap_result fail "$where: a fenced block the test knows" "info string '$arg': use sh, sh exit=N, sh skip=\"REASON\" or text"
        ;;
    esac
done <"$d/index"
# A README whose blocks the parser lost would pass with nothing run.
ok "README.md has commands that run here ($ran run, $skipped skipped)" test "$ran" -ge 10

# The quick start: its line installs packages and builds (skipped above);
# its sandboxed command runs here with build/sbx the sbx under test.
quick=$(grep -m1 'apt-get install -y' "$readme")
cmd=${quick##*&& ninja -C build && }
if [ "$cmd" = "$quick" ] || [[ $cmd != "build/sbx run "* ]]; then
    _tap_result fail "the quick start ends with '&& ninja -C build && build/sbx run ...'" "$quick"
else
    q=$(scratch)
    mkdir "$q/build" && ln -s "$SBX" "$q/build/sbx"
    rm -f /etc/sbx-test 2>/dev/null
    out=$(cd "$q" && setsid -w bash -e -o pipefail -c "$cmd" </dev/null 2>&1)
    status=$?
    is "the quick start's sandboxed command: exit 0, hello, and /etc refused" "0
hello
writing /etc was denied" "$status
$(grep -x 'hello\|writing /etc was denied' <<<"$out")"
    is "... hello.txt written in the workspace" hello "$(cat "$q/hello.txt" 2>&1)"
    not_ok "... /etc/sbx-test not made" test -e /etc/sbx-test
fi

# The quick start's test command is what CI runs as its stage 1.
tests=$(grep -m1 -x 'meson test -C build[^&|;]*' "$readme")
ok "the README's test command ($tests) is CI's stage 1" grep -qx -- "$tests" "$src/.ci/run"

done_testing
