#!/usr/bin/env bash
# Codex's --managed-network (CODEX-HELPER.md sections 2, 5 and 7 item 15): the
# helper run alone, as Codex runs it, with a "proxy" (an HTTP server that
# answers every request with its path) on the host's 127.0.0.1:PROXY and a
# second host listener that the command must not reach.  Through the proxy
# variables the command reaches the proxy; a direct connection to another
# host port is refused (ECONNREFUSED); nothing listens on the host for the
# bridge; no proxy variable or a malformed JSON is refused (125, one line) and
# nothing runs.  With CODEX_LINUX_SANDBOX (Codex 0.169's own helper), the same
# run through it for comparison.  Also run as uid 65534 (unprivileged.sh).
set -u
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"

require_helper
for tool in python3 curl ss pgrep; do
    command -v $tool >/dev/null || { echo "1..0 # SKIP no $tool"; exit 0; }
done
d=$(scratch) && ws=$d/ws && mkdir "$ws" || exit 1
cat >"$d/servers.py" <<'PY'
import http.server, os, socket, sys, threading
d = sys.argv[1]
class Proxy(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        body = ("proxied " + self.path + "\n").encode()  # a proxy sees the whole URL
        self.wfile.write(b"HTTP/1.0 200 OK\r\nContent-Length: %d\r\n\r\n%s" % (len(body), body))
        self.close_connection = not self.path.endswith("/hold")  # /hold: kept open, waiting for more
    log_message = lambda *a: None
proxy = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Proxy)
threading.Thread(target=proxy.serve_forever, daemon=True).start()
other = socket.socket()
other.bind(("127.0.0.1", 0))
other.listen(16)
def drop():
    while True:
        other.accept()[0].close()
threading.Thread(target=drop, daemon=True).start()
host = socket.socket(socket.AF_UNIX)  # a UNIX socket of the host's
host.bind(d + "/host.sock")
host.listen(16)
def hello():
    while True:
        c = host.accept()[0]
        c.sendall(b"host socket\n")
        c.close()
threading.Thread(target=hello, daemon=True).start()
open(d + "/ports.tmp", "w").write("proxy %d\nother %d\n" % (proxy.server_address[1], other.getsockname()[1]))
os.rename(d + "/ports.tmp", d + "/ready")
threading.Event().wait()
PY
python3 "$d/servers.py" "$d" &
servers_pid=$!
trap 'kill $servers_pid 2>/dev/null; _cleanup_scratch' EXIT
eventually test -e "$d/ready" || { echo "Bail out! the servers did not start"; exit 1; }
proxy=$(awk '$1 == "proxy" {print $2}' "$d/ready")
other=$(awk '$1 == "other" {print $2}' "$d/ready")

# Section 7 item 15, with the scratch workspace for /home/u/proj.
profile='{"type":"managed","file_system":{"type":"restricted","entries":[{"path":{"type":"special","value":{"kind":"root"}},"access":"read"},{"path":{"type":"special","value":{"kind":"slash_tmp"}},"access":"write"},{"path":{"type":"special","value":{"kind":"tmpdir"}},"access":"write"},{"path":{"type":"path","path":"'$ws'"},"access":"write"}]},"network":"enabled"}'
managed='{"loopbackPorts":['$proxy'],"allowLocalBinding":false,"allowUnixSockets":[],"dangerouslyAllowAllUnixSockets":false}'
# The proxy variables as Codex sets them (a few of its ~25), nothing else of the caller's.
proxy_env=(env -i PATH="$PATH" HOME="$ws" HTTP_PROXY="http://127.0.0.1:$proxy" http_proxy="http://127.0.0.1:$proxy"
    HTTPS_PROXY="http://127.0.0.1:$proxy" https_proxy="http://127.0.0.1:$proxy" NO_PROXY=localhost,127.0.0.1
    CODEX_NETWORK_PROXY_ACTIVE=1)

# What the command sees: the proxy's answer through http_proxy, then a direct
# connect to the other host listener (its errno name).
cat >"$ws/probe.sh" <<SH
curl -sS --max-time 20 http://example.invalid/through-the-proxy
python3 -c '
import errno, socket
s = socket.socket()
try:
    s.connect(("127.0.0.1", $other))
    print("direct: connected")
except OSError as e:
    print("direct:", errno.errorcode.get(e.errno, e.errno))
try:
    socket.socket(socket.AF_UNIX).bind("$ws/bound.sock")
    print("unix bind: bound")
except OSError as e:
    print("unix bind:", "refused" if e.errno in (errno.EPERM, errno.EACCES) else errno.errorcode.get(e.errno, e.errno))
'
SH
# A UNIX socket bound to a path in a writable root would be a door that host
# processes could open: Codex's helper refuses (EPERM, already the UNIX
# socket itself), ours refuses the bind (Landlock, EACCES).
expected="proxied http://example.invalid/through-the-proxy
direct: ECONNREFUSED
unix bind: refused"

# The host's listening sockets held by the processes of the runs (the helper,
# anything started from $d), the servers aside; ss shows a process's owner to
# its own user, so this holds as uid 65534 too, and other users' listeners
# (other tests on the machine) do not count.
run_listeners() {
    local pids
    pids=$(pgrep -d '|' -f "codex-linux-sandbox|$d" | sed "s/\b$servers_pid\b//g; s/||*/|/g; s/^|//; s/|$//")
    [ -z "$pids" ] && return 0
    ss -ltnpH | grep -E "pid=($pids)," || true
}

# --- the bridge ---------------------------------------------------------------
# run_as HELPER: Codex's argv (section 7 item 15) with --managed-network.
run_as() {
    (cd "$ws" && "${proxy_env[@]}" "$1" --sandbox-policy-cwd "$ws" --command-cwd "$ws" \
        --permission-profile "$profile" --managed-network "$managed" -- /bin/sh "$ws/probe.sh" 2>"$d/stderr")
}
out=$(run_as "$helper")
is "--managed-network: the command runs" "0" "$?"
is "... through http_proxy it reaches the host's proxy; a direct connect to another host port is refused" \
    "$expected" "$out"
is "... nothing on stderr" "" "$(cat "$d/stderr")"
is "... and no socket file was made" "<none>" "$(ls "$ws/bound.sock" 2>/dev/null || echo "<none>")"

# While the sandbox runs (with a connection open through the bridge), and
# after: nothing of the run listens on the host.
rm -f "$ws/up" "$ws/go"
(cd "$ws" && exec "${proxy_env[@]}" "$helper" --sandbox-policy-cwd "$ws" --command-cwd "$ws" \
    --permission-profile "$profile" --managed-network "$managed" -- /bin/bash -c \
    "exec 3<>/dev/tcp/127.0.0.1/$proxy && : > '$ws/up' && while [ ! -e '$ws/go' ]; do sleep 0.05; done") &
running=$!
eventually test -e "$ws/up" || _tap_result fail "the sandboxed command started"
is "while the sandbox runs: nothing of it listens on the host" "" "$(run_listeners)"
is "... the helper holds no socket listening on the host" "" "$(ss -ltnpH | grep "pid=$running," || true)"
: >"$ws/go"
wait "$running"
is "... the run ends well" "0" "$?"
is "after the runs: nothing of them listens on the host" "" "$(run_listeners)"

# --- issue 29: the bridge's threads are bounded ----------------------------------
# Each connection through the bridge is a thread of the helper on the host
# (two while it relays), outside every limit of the sandbox.  The command
# opens 200 connections to the proxy port one after the other, each asking
# for /hold (answered, then kept open), and holds those the bridge relays;
# meanwhile the tasks of the helper's process tree are counted from /proc,
# against the count before the first connection.  The bridge relays 64 at
# once, and under --limit-procs N half of N; one more is closed at once.
# Once the command closes them, the bridge relays again.
cat >"$ws/many.py" <<'PY'
import os, socket, sys, time
port, n = int(sys.argv[1]), int(sys.argv[2])
def signal(name, text=""):
    open(name + ".tmp", "w").write(text)
    os.rename(name + ".tmp", name)
def wait_for(name):  # the test's go, bounded
    end = time.monotonic() + 120
    while not os.path.exists(name) and time.monotonic() < end:
        time.sleep(0.01)
def ask(path):  # the connection and its answer (what came before the end)
    s = socket.create_connection(("127.0.0.1", port))
    s.sendall(b"GET http://example.invalid/%s HTTP/1.0\r\n\r\n" % path)
    got = b""
    try:
        while not got.endswith(path + b"\n"):
            c = s.recv(4096)
            if not c:
                break
            got += c
    except OSError:
        pass
    return s, got
signal("started")
wait_for("open")
held, refused = [], 0
for i in range(n):
    s, got = ask(b"hold")
    if got.endswith(b"proxied http://example.invalid/hold\n"):
        held.append(s)
    else:
        refused += 1
        s.close()
signal("held", "%d %d\n" % (len(held), refused))
wait_for("go")
for s in held:
    s.close()
# Relayed again once those have ended (retried: their threads end meanwhile).
end = time.monotonic() + 30
while True:
    s, got = ask(b"after")
    s.close()
    if got.endswith(b"/after\n") or time.monotonic() > end:
        print(got.decode().split("\r\n")[-1].strip())
        break
    time.sleep(0.01)
PY
# many LABEL CAP POLICY-ARGS...: 200 connections through the bridge.
many() {
    local label=$1 cap=$2 before during
    shift 2
    rm -f "$ws/started" "$ws/open" "$ws/held" "$ws/go"
    (cd "$ws" && exec "${proxy_env[@]}" "$helper" --sandbox-policy-cwd "$ws" --command-cwd "$ws" "$@" \
        --managed-network "$managed" -- python3 many.py "$proxy" 200 >"$d/many.out" 2>"$d/many.err") &
    local running=$!
    eventually test -e "$ws/started"
    before=$(tree_tasks $running)
    : >"$ws/open"
    eventually test -e "$ws/held"
    during=$(tree_tasks $running)
    : >"$ws/go"
    wait $running
    is "$label: the run ended well" "0 " "$? $(cat "$d/many.err")"
    is "$label: $cap relayed at once, $((200 - cap)) closed at once" "$cap $((200 - cap))" "$(cat "$ws/held")"
    ok "$label: the helper's process tree had $before tasks, $during with 200 connections: at most $((2 * cap)) more" \
        test "$during" -le $((before + 2 * cap))
    is "$label: afterwards the bridge relays again" "proxied http://example.invalid/after" "$(cat "$d/many.out")"
}
many "200 connections through the bridge" 64 --permission-profile "$profile"
many "--limit-procs 8, 200 connections through the bridge" 4 \
    --sandbox-policy '{"mode":"workspace-write","network":"limited","limits":{"processes":8}}'

# --- refusals: 125, one line, nothing runs -------------------------------------
# refused DESC EXPECTED-LINE ENV-AND-HELPER-ARGS...
n=0
refused() {
    local desc=$1 line=$2 status
    shift 2
    n=$((n + 1))
    local marker="$ws/ran-$n"
    (cd "$ws" && "$@" -- /bin/sh -c ": > '$marker'" 2>"$d/stderr")
    status=$?
    is "$desc: exit 125" "125" "$status"
    is "$desc: the line" "$line" "$(cat "$d/stderr")"
    is "$desc: nothing ran" "no" "$([ -e "$marker" ] && echo yes || echo no)"
}
codex_argv=(--sandbox-policy-cwd "$ws" --command-cwd "$ws" --permission-profile "$profile")
refused "no proxy variable" \
    "codex-linux-sandbox: network: --managed-network: no proxy variable (HTTP_PROXY, HTTPS_PROXY, ALL_PROXY...) is set, so the command would have no way out; set HTTP_PROXY (and HTTPS_PROXY, ALL_PROXY) to http://127.0.0.1:PORT of Codex's proxy, as Codex does" \
    env -i PATH="$PATH" "$helper" "${codex_argv[@]}" --managed-network "$managed"
refused "a proxy variable naming another host" \
    "codex-linux-sandbox: network: --managed-network: no proxy variable (HTTP_PROXY, HTTPS_PROXY, ALL_PROXY...) names a proxy on 127.0.0.1 or localhost, and the command may reach nothing else; set HTTP_PROXY (and HTTPS_PROXY, ALL_PROXY) to http://127.0.0.1:PORT of Codex's proxy, as Codex does" \
    env -i PATH="$PATH" HTTP_PROXY="http://example.invalid:$proxy" "$helper" "${codex_argv[@]}" --managed-network "$managed"
refused "a proxy variable naming a host port outside loopbackPorts" \
    "codex-linux-sandbox: network: --managed-network: ALL_PROXY names 127.0.0.1:$other, which is not one of loopbackPorts; point the proxy variables at Codex's proxy (a port listed in loopbackPorts)" \
    env -i PATH="$PATH" HTTP_PROXY="http://127.0.0.1:$proxy" ALL_PROXY="socks5h://127.0.0.1:$other" \
    "$helper" "${codex_argv[@]}" --managed-network "$managed"
refused "malformed JSON" \
    "codex-linux-sandbox: arguments: --managed-network: not valid JSON; pass the JSON Codex sends, such as {\"loopbackPorts\":[3128],\"allowLocalBinding\":false}" \
    "${proxy_env[@]}" "$helper" "${codex_argv[@]}" --managed-network '{"loopbackPorts":[3128'
refused "a port that is not one" \
    "codex-linux-sandbox: arguments: --managed-network: loopbackPorts: 70000 is not a port number (1-65535); pass the JSON Codex sends, such as {\"loopbackPorts\":[3128],\"allowLocalBinding\":false}" \
    "${proxy_env[@]}" "$helper" "${codex_argv[@]}" --managed-network '{"loopbackPorts":[70000]}'

# --- UNIX socket allowances, as Codex 0.169's helper reads them (observed) ------
# allowUnixSockets opens nothing at the helper: the host's socket stays out
# of reach; dangerouslyAllowAllUnixSockets opens every pathname socket of the
# host, and binding to a path.
cat >"$ws/unix.py" <<PY
import errno, socket
try:
    s = socket.socket(socket.AF_UNIX)
    s.connect("$d/host.sock")
    print("host socket:", s.recv(100).decode().strip())
except OSError as e:
    print("host socket:", "refused" if e.errno in (errno.EPERM, errno.EACCES) else errno.errorcode.get(e.errno, e.errno))
try:
    socket.socket(socket.AF_UNIX).bind("$ws/bound.sock")
    print("bind: bound")
except OSError as e:
    print("bind:", "refused" if e.errno in (errno.EPERM, errno.EACCES) else errno.errorcode.get(e.errno, e.errno))
PY
# unix_run HELPER JSON: the probe under Codex's argv with that --managed-network.
unix_run() {
    rm -f "$ws/bound.sock"
    (cd "$ws" && "${proxy_env[@]}" "$1" "${codex_argv[@]}" --managed-network "$2" -- python3 "$ws/unix.py" 2>"$d/stderr")
}
listed='{"loopbackPorts":['$proxy'],"allowUnixSockets":["'$d'/host.sock"]}'
all='{"loopbackPorts":['$proxy'],"dangerouslyAllowAllUnixSockets":true}'
out=$(unix_run "$helper" "$listed")
is "allowUnixSockets: accepted; the host's socket stays refused and no path is bound, as by Codex's helper" \
    "0:host socket: refused
bind: refused" "$?:$out"
out=$(unix_run "$helper" "$all")
is "dangerouslyAllowAllUnixSockets: the host's socket is reached and a path can be bound, as by Codex's helper" \
    "0:host socket: host socket
bind: bound" "$?:$out"

# --- beside Codex 0.169's own helper ---------------------------------------------
codex=${CODEX_LINUX_SANDBOX:-}
if [ -z "$codex" ] || [ ! -x "$codex" ]; then
    skip "Codex's helper: the same run" "CODEX_LINUX_SANDBOX is not set to Codex 0.169's codex-linux-sandbox"
    skip "Codex's helper: the UNIX socket allowances" "CODEX_LINUX_SANDBOX is not set"
    skip "Codex's helper: no proxy variable is refused" "CODEX_LINUX_SANDBOX is not set"
elif ! command -v bwrap >/dev/null && ! (cd "$ws" && "${proxy_env[@]}" "$codex" "${codex_argv[@]}" -- true 2>/dev/null); then
    skip "Codex's helper: the same run" "Codex's helper cannot build its sandbox here"
    skip "Codex's helper: the UNIX socket allowances" "Codex's helper cannot build its sandbox here"
    skip "Codex's helper: no proxy variable is refused" "Codex's helper cannot build its sandbox here"
else
    out=$(run_as "$codex")
    is "Codex's helper: the same run gives the same answers" "0:$expected" "$?:$out"
    out=$(unix_run "$codex" "$listed")
    is "Codex's helper: allowUnixSockets gives the same answers" "0:host socket: refused
bind: refused" "$?:$out"
    out=$(unix_run "$codex" "$all")
    is "Codex's helper: dangerouslyAllowAllUnixSockets gives the same answers" "0:host socket: host socket
bind: bound" "$?:$out"
    (cd "$ws" && env -i PATH="$PATH" "$codex" "${codex_argv[@]}" --managed-network "$managed" -- /bin/sh -c \
        ": > '$ws/ran-codex'" 2>"$d/stderr")
    status=$?
    if [ "$status" != 0 ] && grep -q 'managed proxy mode requires proxy environment variables' "$d/stderr" &&
        [ ! -e "$ws/ran-codex" ]; then
        ok "Codex's helper: no proxy variable is refused as well (its status $status, ours 125)"
    else
        not_ok "Codex's helper: no proxy variable is refused as well" "status $status: $(head -c 300 "$d/stderr")"
    fi
fi

done_testing
