#!/usr/bin/env bash
# The terminal relay (issue 35): at a terminal the command runs on a
# pseudo-terminal of its own that sbx relays (docs/running.md, "Terminals").
# Each case drives sbx through a pseudo-terminal (progs/pty-talk.py), as a
# user at a terminal would, and waits on what the terminal shows.
. "$(dirname "$0")/lib.sh"
progs=$(cd "$(dirname "$0")" && pwd)/progs
d=$(scratch)
mkdir -p "$d/work" "$d/outside"
cd "$d/work" || exit 1
talk() { python3 "$progs/pty-talk.py" "$@"; }
run() { "$SBX" run -p workspace-write "$@"; }
export -f run
export SBX d

# 1. The command's stdin, stdout and stderr are a terminal; its size is the
#    user's, and a resize reaches it.
out=$(talk --rows 33 --cols 101 -- "$SBX" run -p workspace-write -- \
    sh -c 'for f in 0 1 2; do [ -t $f ] && printf "tty%s " $f; done; echo; stty size')
ok "isatty on 0, 1 and 2 inside" grep -q "tty0 tty1 tty2" <<<"$out"
ok "stty size inside is the terminal's (33 101)" grep -q "^33 101" <<<"$out"
out=$(talk expect:ready winsize:40,120 expect:'size 120 40' -- "$SBX" run -p workspace-write -- python3 -c '
import os, signal
signal.pthread_sigmask(signal.SIG_BLOCK, [signal.SIGWINCH])
print("ready", flush=True)
signal.sigwait([signal.SIGWINCH])
print("size", *os.get_terminal_size(), flush=True)')
is "a resize of the terminal is seen inside (SIGWINCH, 120x40)" 0 "$?"

# The pty is the command's own (the helper is told --private-terminal): it
# may resize it, as tmux or script would.
out=$(talk -- "$SBX" run -p workspace-write -- sh -c 'stty rows 50 cols 100 && stty size')
ok "the command resizes its own terminal (TIOCSWINSZ on the relay's pty)" grep -q "^50 100" <<<"$out"

# 2. Raw mode: one byte read without Enter; ^C kills the foreground program.
out=$(talk expect:ready send:x expect:"got 'x'" -- "$SBX" run -p workspace-write -- python3 -c '
import sys, tty
tty.setraw(0)
print("ready", end="\r\n", flush=True)
print("got", repr(sys.stdin.read(1)), end="\r\n", flush=True)')
is "raw mode inside: one byte read without Enter" 0 "$?"
talk expect:ready send:'\x03' -- "$SBX" run -p workspace-write -- sh -c 'echo ready; exec sleep 100' >/dev/null
is "^C kills the command: exit 130" 130 "$?"
talk -- "$SBX" run -p workspace-write -- sh -c 'exit 7' >/dev/null
is "exit status: 7" 7 "$?"

# 3. Programs: colour, a pager, a password prompt through /dev/tty, and all
#    of a long output.
mkdir -p "$d/work/subdir"
out=$(talk -- "$SBX" run -p workspace-write -- ls --color=auto "$d/work")
ok "ls --color=auto colours (an escape sequence)" grep -q $'\e\[' <<<"$out"
talk expect:'>>> ' send:'print(6 * 7)\r' expect:'\r\n42\r\n' send:'exit()\r' -- \
    "$SBX" run -p workspace-write -- python3 -q >/dev/null
is "the python3 REPL: a line in, its answer out, exit()" 0 "$?"
if command -v less >/dev/null; then
    seq 1 500 >"$d/work/numbers"
    talk expect:'\r\n23\r\n' send:q -- "$SBX" run -p workspace-write -- less numbers >/dev/null
    is "less pages a file and q quits" 0 "$?"
else
    skip "less pages a file and q quits" "less is not installed"
fi
out=$(talk expect:'Password: ' send:'secret\r' expect:'pw=secret' -- "$SBX" run -p workspace-write -- \
    python3 -c 'import getpass; print("pw=" + getpass.getpass())' 2>&1)
is "a password prompt on /dev/tty (getpass) works" 0 "$?"
not_ok "... without the fallback's warning" grep -q GetPassWarning <<<"$out"
not_ok "... without echo" grep -q "Password: secret" <<<"$out"
# (getpass falls back to stdin when /dev/tty cannot be opened: so directly.)
out=$(talk -- "$SBX" run -p workspace-write -- python3 -c '
import os
fd = os.open("/dev/tty", os.O_RDWR)
os.write(fd, b"written to /dev/tty\r\n")
print("the same terminal as stdin:", os.ttyname(0) == os.ttyname(1) == os.ttyname(2))' 2>&1)
ok "/dev/tty inside opens read-write, and what is written there shows" grep -q "^written to /dev/tty" <<<"$out"
ok "... the command's stdin, stdout and stderr are one terminal" grep -q "the same terminal as stdin: True" <<<"$out"
talk -- "$SBX" run -p workspace-write -- seq 1 100000 >"$d/seq.out"
is "seq 1 100000 through the relay: every line" 100000 "$(tr -d '\r' <"$d/seq.out" | grep -c .)"
is "... the last one last" 100000 "$(tr -d '\r' <"$d/seq.out" | tail -n 1)"

# A command that cannot be run: its one line shows where stderr goes (one
# stream for both at a terminal and with 2>&1: the line was lost there).
out=$(talk -- "$SBX" run -p danger-full-access -- ./no-such-command)
ok "a command not found at a terminal: the line says so" grep -q "^sbx: cannot run './no-such-command'" <<<"$out"
out=$("$SBX" run -p danger-full-access -- ./no-such-command 2>&1 | cat)
ok "... and with 2>&1 into a pipe" grep -q "^sbx: cannot run './no-such-command'" <<<"$out"

# 4. No relay: with -T, and with stdout a pipe (stdin stays the terminal).
out=$(talk -- "$SBX" run -T -p workspace-write -- sh -c '[ -t 0 ] && echo in-tty; [ -t 1 ] || echo out-pipe')
ok "-T: today's streams (stdin the terminal, stdout a pipe)" grep -q "in-tty" <<<"$out"
ok "... stdout not a terminal" grep -q "out-pipe" <<<"$out"
out=$(talk -- sh -c '"$SBX" run -p workspace-write -- sh -c "[ -t 1 ] || echo out-pipe" | cat')
ok "stdout a pipe: no pseudo-terminal (isatty(1) false inside)" grep -q "out-pipe" <<<"$out"
out=$(talk -- sh -c '"$SBX" run --tty -p workspace-write -- sh -c "[ -t 1 ] && echo out-tty" | cat')
ok "--tty with stdout a pipe: the command still gets a terminal" grep -q "out-tty" <<<"$out"
json_stdout() { python3 -c 'import json, sys; print(repr(json.loads(sys.stdin.read())["stdout"]))'; }
out=$(talk -- "$SBX" run --json -p workspace-write -- sh -c '[ -t 1 ] && echo tty || echo no-tty' | json_stdout)
is "--json at a terminal: no pseudo-terminal" "'no-tty\\n'" "$out"
out=$(talk -- "$SBX" run --tty --json -p workspace-write -- sh -c '[ -t 1 ] && echo tty || echo no-tty' | json_stdout)
is "--tty --json: a terminal, its output in the result" "'tty\\r\\n'" "$out"
out=$("$SBX" run --tty -p workspace-write -- true </dev/null 2>&1)
is "--tty without a terminal on stdin: refused (125)" 125 "$?"
ok "... with one line that says why" grep -q "^sbx: --tty: stdin is not a terminal" <<<"$out"

# 5. Job control: ^Z stops the job at the user's shell, fg resumes it.
out=$(talk expect:'JOB> ' send:'run -- sh -c "echo re""ady; exec cat"\r' expect:'\rready' send:'\x1a' \
    expect:'Stopped' expect:'JOB> ' send:'fg\r' send:'hello\r' expect:'hello\r\nhello' send:'\x04' expect:'JOB> ' \
    send:'echo rc=$?\r' expect:'rc=0' send:'exit\r' -- \
    env PS1='JOB> ' bash --norc --noprofile -i 2>&1)
is "^Z stops the job, the shell prompts, fg resumes it and cat reads the terminal" 0 "$?"

# A SIGTSTP sent to sbx itself (kill -TSTP) stops sbx, with the terminal
# back in its mode; fg makes it raw again and the command reads on.
printf '#!/bin/sh\necho $$ >"%s/sbx.pid"\nexec "$SBX" run -p workspace-write -- sh -c %s\n' \
    "$d" "'touch $d/work/ready; exec cat'" >"$d/tstp.sh"
chmod +x "$d/tstp.sh"
rm -f "$d/work/ready" "$d/tstp-sent"
talk expect:'JOB> ' send:"$d/tstp.sh\r" wait:"$d/tstp-sent" expect:'Stopped' expect:'JOB> ' send:'fg\r' \
    send:'hello\r' expect:'hello\r\nhello' send:'\x04' expect:'JOB> ' send:'echo rc=$?\r' expect:'rc=0' \
    send:'exit\r' -- env PS1='JOB> ' bash --norc --noprofile -i >"$d/tstp.out" 2>&1 &
talker=$!
eventually test -e "$d/work/ready"
kill -TSTP "$(cat "$d/sbx.pid")"
touch "$d/tstp-sent"
wait "$talker"
is "SIGTSTP to sbx: the job stops, fg continues it and the command reads the terminal" 0 "$?"

# 6. The user's terminal never reaches the command: no fd of the command or
#    of the helper is it, and TIOCSTI from inside types nothing at the shell.
rm -f "$d/work/ready" "$d/checked"
talk wait:"$d/checked" -- sh -c 'stat -L -c %t:%T /proc/self/fd/0 >"$d/outer"; echo $$ >"$d/sbx.pid";
    exec "$SBX" run -p workspace-write -- sh -c "touch $d/work/ready; exec sleep 100"' >/dev/null &
talker=$!
eventually test -e "$d/work/ready"
sbx_pid=$(cat "$d/sbx.pid")
# Every process under sbx (the helper, its pid 1, the command): each fd's device.
leaked=0 looked=0
for p in $(ps -e -o pid=,ppid= | awk -v root="$sbx_pid" '{ parent[$1] = $2 } END {
        for (p in parent) { q = p; while (q in parent && q != root && q > 1) q = parent[q]; if (q == root && p != root) print p } }'); do
    for f in /proc/"$p"/fd/*; do
        dev=$(stat -L -c %t:%T "$f" 2>/dev/null) || continue
        looked=$((looked + 1))
        [ "$dev" = "$(cat "$d/outer")" ] && leaked=$((leaked + 1))
    done
done
ok "the processes under sbx were looked at ($looked fds)" test "$looked" -gt 3
is "... none of them has the user's terminal open" 0 "$leaked"
kill -TERM "$sbx_pid"
touch "$d/checked"
wait "$talker"
cat >"$d/inject.py" <<'PY'
import fcntl, os, termios
for fd in [0, 1, 2] + ([os.open("/dev/tty", os.O_RDWR)] if os.path.exists("/dev/tty") else []):
    for c in b"echo INJ''ECTED\r":
        try:
            fcntl.ioctl(fd, termios.TIOCSTI, bytes([c]))
        except OSError:
            pass
PY
out=$(talk expect:'INJ> ' send:'run -- python3 "$d/inject.py"; echo rc=$?\r' expect:'rc=' \
    send:'echo after\r' expect:'after\r\n' send:'exit\r' -- env PS1='INJ> ' bash --norc --noprofile -i 2>&1)
ok "TIOCSTI from inside: the session went on" grep -q "rc=0" <<<"$out"
not_ok "... and the shell never ran the injected line" grep -q "^INJECTED" <<<"$(tr -d '\r' <<<"$out")"

# 7. SIGTERM to sbx: the command ends and the terminal's mode is restored.
rm -f "$d/work/ready" "$d/checked"
talk wait:"$d/checked" -- sh -c 'stty -g >"$d/before"; sh -c "echo \$\$ >$d/sbx.pid; exec $SBX run -p workspace-write -- sh -c \"touch $d/work/ready; exec sleep 100\""; stty -g >"$d/after"' >/dev/null &
talker=$!
eventually test -e "$d/work/ready"
kill -TERM "$(cat "$d/sbx.pid")"
eventually test -e "$d/after"
touch "$d/checked"
wait "$talker"
is "SIGTERM to sbx: the terminal's mode is restored" "$(cat "$d/before")" "$(cat "$d/after")"

# 8. The approval prompt reads the real terminal, in its own mode, and what
#    was typed for the command answers nothing.
out=$(talk expect:'Allow\?' send:'y\r' -- "$SBX" run -p workspace-write -a on-failure -- touch "$d/outside/yes" 2>&1)
is "approval at the terminal: y, the retry ran" 0 "$?"
ok "... the file exists" test -e "$d/outside/yes"
out=$(talk expect:ready send:'x\ry\ry\ry\r' expect:'Allow\?' send:'n\r' -- "$SBX" run -p workspace-write \
    -a on-failure -- sh -c "echo ready; read line; touch $d/outside/no" 2>&1)
ok "approval at the terminal: n refuses" grep -q "approval denied by the terminal" <<<"$out"
not_ok "... lines typed for the command did not answer it" test -e "$d/outside/no"

done_testing
