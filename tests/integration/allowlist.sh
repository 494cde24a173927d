#!/usr/bin/env bash
# Network by name (issue 19): --allow-domain / --deny-domain through sbx's
# allowlist proxy.  The servers listen on the host's loopback only: an HTTP
# server and an HTTPS server with a self-signed certificate (CONNECT is a
# tunnel: curl checks the server's own certificate through it).  Names that
# resolve to 127.0.0.1 are refused unless the address is allowed too
# (--allow-domain 127.0.0.1), so the tests allow it where they mean to reach
# the servers; names under .invalid never resolve (RFC 6761).  Also run as
# uid 65534 (unprivileged.sh).
set -u
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"

require_helper
python=/usr/bin/python3
[ -x "$python" ] || { echo "1..0 # SKIP no /usr/bin/python3 for the servers"; exit 0; }
command -v curl >/dev/null || { echo "1..0 # SKIP no curl"; exit 0; }
command -v openssl >/dev/null || { echo "1..0 # SKIP no openssl"; exit 0; }

d=$(scratch)
ws=$d/ws
mkdir -p "$ws"
openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj /CN=localhost -addext subjectAltName=DNS:localhost \
    -keyout "$d/key.pem" -out "$d/cert.pem" 2>"$d/openssl.log" || {
    echo "Bail out! openssl: $(head -3 "$d/openssl.log")"
    exit 1
}
cat >"$d/servers.py" <<'PY'
import http.server, ssl, sys, threading
d = sys.argv[1]
class Hello(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        body = self.server.body
        if self.path.startswith("/big"):
            body = b"x" * int(self.path[4:])
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
    def log_message(self, *a):
        pass
def serve(tls):
    s = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Hello)
    s.body = b"hello over https\n" if tls else b"hello over http\n"
    if tls:
        c = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        c.load_cert_chain(d + "/cert.pem", d + "/key.pem")
        s.socket = c.wrap_socket(s.socket, server_side=True)
    threading.Thread(target=s.serve_forever, daemon=True).start()
    return s.server_address[1]
ports = "http %d\nhttps %d\n" % (serve(False), serve(True))
open(d + "/ports.tmp", "w").write(ports)
import os; os.rename(d + "/ports.tmp", d + "/ready")
threading.Event().wait()
PY
"$python" "$d/servers.py" "$d" &
servers_pid=$!
trap 'kill $servers_pid 2>/dev/null; _cleanup_scratch' EXIT
eventually test -e "$d/ready" || { echo "Bail out! the servers did not start"; exit 1; }
http=$(awk '$1 == "http" {print $2}' "$d/ready")
https=$(awk '$1 == "https" {print $2}' "$d/ready")

sbx() { (cd "$ws" && "$SBX" run "$@"); }
# curl in the sandbox: --noproxy '' because NO_PROXY leaves localhost out of
# the proxy (the sandbox's own loopback), and these servers are the host's.
get() {  # SBX-ARGS... -- URL [CURL-ARGS...]
    local args=()
    while [ "$1" != -- ]; do args+=("$1"); shift; done
    shift
    sbx "${args[@]}" -- curl --noproxy '' -sS "$@" 2>"$d/err"
}
header() {  # SBX-ARGS... -- URL: the X-Sbx-Denied header, or the status line
    local out
    out=$(get "$@" -i | tr -d '\r')
    printf '%s\n' "$out" | grep -m1 '^X-Sbx-Denied:' || printf '%s\n' "$out" | head -1
}
allow_local=(--allow-domain localhost --allow-domain 127.0.0.1)

# Allowed names work: http://, https:// through CONNECT, and SOCKS5.
is "an allowed name: http through the proxy" "hello over http" "$(get "${allow_local[@]}" -- http://localhost:$http/)"
is "an allowed name: https through CONNECT, the server's own certificate" "hello over https" \
    "$(get "${allow_local[@]}" -- https://localhost:$https/ --cacert "$d/cert.pem")"
is "an allowed name: SOCKS5 with the name resolved by sbx" "hello over http" \
    "$(get "${allow_local[@]}" -- http://localhost:$http/ -x socks5h://127.0.0.1:3128)"
is "the variables point at the proxy" \
    "http://127.0.0.1:3128 http://127.0.0.1:3128 socks5h://127.0.0.1:3128 localhost,127.0.0.1,::1" \
    "$(sbx --allow-domain x.invalid -- sh -c 'echo "$HTTP_PROXY $https_proxy $ALL_PROXY $NO_PROXY"')"

# Ports in patterns (issue 36): an allow with a port reaches that port only;
# a deny with a port refuses that port only.
is "--allow-domain HOST:PORT reaches that port" "hello over http" \
    "$(get --allow-domain localhost:$http --allow-domain 127.0.0.1:$http -- http://localhost:$http/)"
is "... and no other" "X-Sbx-Denied: no allow-domain matches localhost" \
    "$(header --allow-domain localhost:$http --allow-domain 127.0.0.1:$http -- http://localhost:$https/)"
is "--deny-domain HOST:PORT refuses that port only" "X-Sbx-Denied: deny-domain localhost:$https" \
    "$(header "${allow_local[@]}" --deny-domain localhost:$https -- http://localhost:$https/)"
is "... the others pass" "hello over http" \
    "$(get "${allow_local[@]}" --deny-domain localhost:$https -- http://localhost:$http/)"
out=$(get "${allow_local[@]}" --deny-domain "localhost:$https=use the http port" -- http://localhost:$https/ -i | tr -d '\r')
is "a deny pattern's reason: in the header" "X-Sbx-Denied: deny-domain localhost:$https (use the http port)" \
    "$(printf '%s\n' "$out" | grep -m1 '^X-Sbx-Denied:')"
is "... in the body the command reads" \
    "sbx: connect to localhost:$https refused: deny-domain localhost:$https (use the http port); no flag suggested: --deny-domain localhost:$https refuses it: use the http port" \
    "$(printf '%s\n' "$out" | tail -1)"
is "... and in sbx's denial line" \
    "sbx: denied 1 operation; first: connect localhost:$https (deny-domain localhost:$https (use the http port); no flag suggested: --deny-domain localhost:$https refuses it: use the http port)" \
    "$(grep '^sbx: denied' "$d/err")"
# --control-fd (issue 36): allowlist updates while the command runs, each
# for the connections after it; a bad line changes nothing and is said; the
# command never holds the descriptor.  localhost alone resolves to a
# loopback address the allowlist does not name (refused) until the control
# line allows 127.0.0.1.
rm -f "$ws/first-done" "$d/control"
mkfifo "$d/control"
exec 5<>"$d/control"
(cd "$ws" && exec "$SBX" run -p workspace-write --allow-domain localhost --control-fd 3 -- sh -c "
    [ -e /proc/self/fd/3 ] && echo 'holds 3' || echo 'no descriptor 3'
    echo first \$(curl --noproxy '' -s -o /dev/null -w '%{http_code}' http://localhost:$http/)
    touch first-done
    until [ \"\$(curl --noproxy '' -s -o /dev/null -w '%{http_code}' http://localhost:$http/)\" = 200 ]; do sleep 0.05; done
    echo then 200" 3<"$d/control" >"$d/control-out" 2>"$d/control-err") &
control_run=$!
eventually test -e "$ws/first-done" || _tap_result fail "--control-fd: the command made its first connection"
printf 'frobnicate 127.0.0.1\nallow-domain 127.0.0.1\n' >&5
wait $control_run
is "--control-fd: refused before the update, reached after it; the command does not hold the descriptor" \
    "no descriptor 3
first 403
then 200" "$(cat "$d/control-out")"
is "... a bad line changes nothing and is said on stderr" \
    "sbx: --control-fd: 'frobnicate 127.0.0.1' is not 'allow-domain PATTERN' or 'deny-domain PATTERN': ignored" \
    "$(grep -- '--control-fd' "$d/control-err")"
exec 5>&-
out=$(cd "$ws" && "$SBX" run --control-fd 3 -- true 3</dev/null 2>&1)
is "--control-fd without an allowlist: refused (125) in one line" "125 sbx: --control-fd: there is no allowlist to update; add --allow-domain" "$? $out"

is "sbx check answers by name and port" "allowed denied" \
    "$(cd "$ws" && "$SBX" check --allow-domain a.org:443 --connect a.org:443 >/dev/null && echo allowed) $(cd "$ws" && "$SBX" check --allow-domain a.org:443 --connect a.org:80 >/dev/null || echo denied)"

# A denied name: 403 at once, with the rule in a header and the body.
out=$(get --allow-domain example.invalid -- http://evil.invalid/ -i | tr -d '\r')
is "a name not allowed: 403" "HTTP/1.1 403 Forbidden" "$(printf '%s\n' "$out" | head -1)"
is "a name not allowed: the header names the rule" "X-Sbx-Denied: no allow-domain matches evil.invalid" \
    "$(printf '%s\n' "$out" | grep '^X-Sbx-Denied')"
is "a name not allowed: the body says why and the fix" \
    "sbx: connect to evil.invalid:80 refused: no allow-domain matches evil.invalid; allow with --allow-domain evil.invalid" \
    "$(printf '%s\n' "$out" | tail -1)"
took=$(get --allow-domain example.invalid -- https://evil.invalid/ -o /dev/null -w '%{time_total}')
bound "a refused CONNECT fails in under 100 ms (curl's time: $took s)" \
    "$python" -c "import sys; sys.exit(0 if float(sys.argv[1].split()[-1]) < 0.1 else 1)" "$took"
not_ok "a refused CONNECT: curl fails" sbx --allow-domain example.invalid -- curl -sSf https://evil.invalid/
get --allow-domain example.invalid -- http://evil.invalid/ -x socks5h://127.0.0.1:3128 >/dev/null
ok "a name not allowed over SOCKS5: reply 2, not allowed by the rules" \
    grep -q "^curl: (97) .*(2)" "$d/err"

# Wildcards: *.NAME is every name below NAME, not NAME itself.
is "*.invalid allows a.invalid (it then cannot be resolved: 502, not 403)" "HTTP/1.1 502 Bad Gateway" \
    "$(header --allow-domain '*.invalid' -- http://a.invalid/)"
is "*.invalid allows a.b.invalid" "HTTP/1.1 502 Bad Gateway" "$(header --allow-domain '*.invalid' -- http://a.b.invalid/)"
is "*.invalid does not allow invalid itself" "X-Sbx-Denied: no allow-domain matches invalid" \
    "$(header --allow-domain '*.invalid' -- http://invalid/)"
is "*.localhost does not allow localhost" "X-Sbx-Denied: no allow-domain matches localhost" \
    "$(header --allow-domain '*.localhost' --allow-domain 127.0.0.1 -- http://localhost:$http/)"

# Deny beats allow.
is "deny-domain beats the same allow-domain" "X-Sbx-Denied: deny-domain localhost" \
    "$(header "${allow_local[@]}" --deny-domain localhost -- http://localhost:$http/)"
is "a deny wildcard beats an exact allow" "X-Sbx-Denied: deny-domain *.invalid" \
    "$(header --allow-domain a.invalid --deny-domain '*.invalid' -- http://a.invalid/)"
is "a deny range beats an allowed name that resolves into it" "X-Sbx-Denied: deny-domain 127.0.0.0/8" \
    "$(header --allow-domain localhost --deny-domain 127.0.0.0/8 -- http://localhost:$http/)"

# A name that resolves to the loopback, and IP literals.
is "a name resolving to 127.0.0.1 is refused unless the address is allowed" \
    "X-Sbx-Denied: localhost resolves to 127.0.0.1, a loopback address" \
    "$(header --allow-domain localhost -- http://localhost:$http/)"
is "an IP literal is refused unless allowed as such" "X-Sbx-Denied: no allow-domain names the address 127.0.0.1" \
    "$(header --allow-domain localhost -- http://127.0.0.1:$http/)"
is "an IP literal allowed as such" "hello over http" "$(get --allow-domain 127.0.0.1 -- http://127.0.0.1:$http/)"

# No other way to the host's loopback.
not_ok "direct: the host's loopback is not the sandbox's" \
    sbx "${allow_local[@]}" -- curl --noproxy '*' -sSf --max-time 5 http://127.0.0.1:$http/
not_ok "direct from python: refused" sbx "${allow_local[@]}" -- "$python" -c \
    "import socket; socket.create_connection(('127.0.0.1', $http), timeout=5)"

# The run's denials: --json, and text mode's summary line.
json=$(sbx --json --allow-domain example.invalid -- curl -sSf http://evil.invalid/x 2>/dev/null)
is "--json: the refusal is a denial with its rule and fix" \
    '[{"address": "evil.invalid:80", "change": {"allow_domains": ["evil.invalid"]}, "fix": "--allow-domain evil.invalid", "operation": "connect", "rule": "no allow-domain matches evil.invalid"}]' \
    "$("$python" -c 'import json,sys; print(json.dumps(json.loads(sys.stdin.read())["denials"], sort_keys=True))' <<<"$json")"
text=$(sbx --allow-domain example.invalid -- curl -sSf http://evil.invalid/x 2>&1 >/dev/null)
is "text mode: the summary names the refusal" \
    "sbx: denied 1 operation; first: connect evil.invalid:80 (no allow-domain matches evil.invalid; allow with --allow-domain evil.invalid)" \
    "$(printf '%s\n' "$text" | tail -1)"

# --explain: the allowlist's own fix, merged into the line (never -n full, a usage error with it).
json=$(sbx --json --explain --allow-domain example.invalid -- curl -sSf http://evil.invalid/x 2>/dev/null)
is "--explain: the line adds --allow-domain for the refused name" \
    "--allow-domain evil.invalid|1" \
    "$("$python" -c 'import json,sys; e=json.loads(sys.stdin.read())["explain"]; print(" ".join(e["added"]) + "|" + str(e["allowed"]))' <<<"$json")"

# The interface: usage errors, sbx policy, sbx check.
out=$("$SBX" run -n full --allow-domain example.com -- true 2>&1)
is "-n full with an allowlist: exit 125" 125 "$?"
is "-n full with an allowlist: one line saying what to use" \
    "sbx: --network: network 'full' cannot go with an allowlist (--allow-domain), which runs the command in the private network of -n limited with sbx's proxy; drop -n full" \
    "$out"
out=$("$SBX" run -n restricted --allow-domain example.com -- true 2>&1)
is "-n restricted with an allowlist: exit 125" 125 "$?"
ok "sbx policy shows the lists" sh -c "'$SBX' policy --allow-domain '*.Example.com' --deny-domain bad.example.com | grep -x 'allow domains     \*.example.com'"
ok "sbx policy --json has the keys" sh -c "'$SBX' policy --json --allow-domain a.com | grep -q '\"allow_domains\"'"
out=$("$SBX" check --allow-domain '*.example.com' --connect a.example.com:443 --connect example.com:443 2>&1)
ok "sbx check --connect answers by name" grep -q '^denied   connect  example.com:443  (no allow-domain matches example.com' <<<"$out"

# --- issue 29: the proxy's threads are bounded ----------------------------------
# Each connection to the proxy is a thread of sbx on the host (two while it
# relays), outside every limit of the sandbox.  The command opens 200 tunnels
# one after the other (CONNECT to the http server; each answered before the
# next) and holds those the proxy serves; meanwhile the tasks of sbx's
# process tree (sbx, the helper, the sandbox) are counted from /proc, against
# the count before the first connection.  The proxy serves 64 at once, and
# under --limit-procs N half of N (two threads each count against it); the
# others are refused at once (503) and recorded as one denial.  Once the
# command closes them, the proxy serves again.
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
def head(s):  # the proxy's answer up to its blank line, or what came before the end
    got = b""
    try:
        while b"\r\n\r\n" not in got:
            c = s.recv(1)
            if not c:
                break
            got += c
    except OSError:
        pass
    return got
signal("started")
wait_for("open")
held, refused = [], 0
for i in range(n):
    s = socket.create_connection(("127.0.0.1", 3128))
    s.sendall(b"CONNECT 127.0.0.1:%d HTTP/1.1\r\n\r\n" % port)
    if head(s).startswith(b"HTTP/1.1 200 "):
        held.append(s)
    else:
        refused += 1
        s.close()
signal("held", "%d %d\n" % (len(held), refused))
wait_for("go")
for s in held:
    s.close()
# Served again once those have ended (retried: their threads end meanwhile).
end = time.monotonic() + 30
while True:
    s = socket.create_connection(("127.0.0.1", 3128))
    s.sendall(b"GET http://127.0.0.1:%d/ HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n" % port)
    answer = head(s)
    s.close()
    if answer.startswith(b"HTTP/1.0 200 ") or time.monotonic() > end:
        print("after:", answer.split(b"\r\n")[0].decode())
        break
    time.sleep(0.01)
PY
# many LABEL CAP SBX-ARGS...: 200 connections under those arguments.
many() {
    local label=$1 cap=$2 before during
    shift 2
    rm -f "$ws/started" "$ws/open" "$ws/held" "$ws/go"
    (cd "$ws" && exec "$SBX" run --json -p workspace-write --allow-domain 127.0.0.1 "$@" -- "$python" many.py "$http" 200 \
        >"$d/many.json" 2>"$d/many.err") &
    local run_pid=$!
    eventually test -e "$ws/started"
    before=$(tree_tasks $run_pid)
    : >"$ws/open"
    eventually test -e "$ws/held"
    during=$(tree_tasks $run_pid)
    : >"$ws/go"
    wait $run_pid
    is "$label: the run ended well" 0 "$?"
    is "$label: $cap tunnels served at once, $((200 - cap)) refused at once" "$cap $((200 - cap))" "$(cat "$ws/held")"
    ok "$label: sbx's process tree had $before tasks, $during with 200 connections: at most $((2 * cap)) more" \
        test "$during" -le $((before + 2 * cap))
    is "$label: afterwards the proxy serves again" "after: HTTP/1.0 200 OK" \
        "$("$python" -c 'import json,sys; print(json.load(sys.stdin)["stdout"].strip())' <"$d/many.json")"
}
many "200 connections" 64
is "200 connections: the refusals are one denial, with the rule and why no flag" \
    '[{"address": "127.0.0.1:3128", "fix": "no flag suggested: open fewer connections at once", "operation": "connect", "rule": "sbx'"'"'s proxy serves at most 64 connections at once"}]' \
    "$("$python" -c 'import json,sys; print(json.dumps(json.load(sys.stdin)["denials"], sort_keys=True))' <"$d/many.json")"
many "--limit-procs 8, 200 connections" 4 --limit-procs 8
is "--limit-procs 8: the denial names the limit" \
    "sbx's proxy serves at most 4 connections at once: two threads each, counted against --limit-procs 8" \
    "$("$python" -c 'import json,sys; print(json.load(sys.stdin)["denials"][0]["rule"])' <"$d/many.json")"
# Text mode: the 503 says why, and the end line names the refusal.
# (--limit-procs 3: bash, then curl, and a thread of curl's; one connection.)
out=$(sbx -p workspace-write --limit-procs 3 --allow-domain 127.0.0.1 -- bash -c \
    "exec 3<>/dev/tcp/127.0.0.1/3128; printf 'CONNECT 127.0.0.1:$http HTTP/1.1\r\n\r\n' >&3; read -r line <&3
     curl -sS -i --noproxy '' -x http://127.0.0.1:3128 http://127.0.0.1:$http/ >answer; grep -a '^X-Sbx-Denied' answer" 2>&1)
is "over the cap, text mode: the header names the rule, the end line the denial" \
    "X-Sbx-Denied: sbx's proxy serves at most 1 connection at once: two threads each, counted against --limit-procs 3
sbx: denied 1 operation; first: connect 127.0.0.1:3128 (sbx's proxy serves at most 1 connection at once: two threads each, counted against --limit-procs 3; no flag suggested: open fewer connections at once, or raise --limit-procs by two per connection)" \
    "$(printf '%s\n' "$out" | tr -d '\r')"

# Nothing listens on the host: not while the command runs, not after.  (Only
# the sockets of this run's sbx and its descendants are looked at, by pid:
# other tests, and other users' sbx runs, may come and go on this machine
# meanwhile.)
ours() { ss -Hltnp | grep -E "pid=($run_pids)," || true; }
port_3128_before=$(ss -Hltn 'sport = :3128')
rm -f "$ws/started" "$ws/go"
(cd "$ws" && exec "$SBX" run -p workspace-write --allow-domain example.invalid -- \
    sh -c 'touch started; while [ ! -e go ]; do sleep 0.05; done') &
run_pid=$!
eventually test -e "$ws/started"
run_pids=$(tree_pids $run_pid | tr ' ' '|')
is "while it runs, sbx and the helper listen on nothing of the host" "" "$(ours)"
is "while it runs, nothing new on the host's port 3128" "$port_3128_before" "$(ss -Hltn 'sport = :3128')"
touch "$ws/go"
wait $run_pid
is "the run ended" 0 "$?"
is "after the run, sbx and the helper listen on nothing of the host" "" "$(ours)"
# The host's own interface addresses (issue 36): a service bound to 0.0.0.0
# answers on each of them as on the loopback, so a name that resolves to one
# is refused unless that address is allowed as well.  On an address of a
# network namespace made for this check (with its own /etc/hosts naming
# own.test), never on the machine's real ones; root only (unshare).
if [ "$(id -u)" = 0 ] && command -v unshare >/dev/null && command -v ip >/dev/null; then
    printf '127.0.0.1 localhost\n203.0.113.5 own.test\n' >"$d/hosts"
    chmod 644 "$d/hosts"
    cat >"$d/own.sh" <<SH
set -e
mount --make-rprivate /
mount --bind "$d/hosts" /etc/hosts
ip link set lo up
ip addr add 203.0.113.5/32 dev lo
"$python" -c '
import http.server, os, sys
class H(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        self.send_response(200); self.send_header("Content-Length", "4"); self.end_headers(); self.wfile.write(b"own\n")
    def log_message(self, *a): pass
s = http.server.HTTPServer(("0.0.0.0", 0), H)
open(sys.argv[1] + ".tmp", "w").write(str(s.server_address[1])); os.rename(sys.argv[1] + ".tmp", sys.argv[1])
s.serve_forever()' "$d/own-port" &
while [ ! -e "$d/own-port" ]; do sleep 0.01; done
port=\$(cat "$d/own-port")
cd "$ws"
"$SBX" run --allow-domain own.test -- curl --noproxy '' -sS -i "http://own.test:\$port/" 2>/dev/null | tr -d '\r' | grep -m1 '^X-Sbx-Denied:' || true
"$SBX" run --allow-domain own.test --allow-domain 203.0.113.5 -- curl --noproxy '' -sS "http://own.test:\$port/" 2>&1 || true
kill %1
SH
    out=$(unshare -n -m bash "$d/own.sh" 2>&1)
    is "a name that resolves to one of the host's own addresses: refused, then reached once that address is allowed" \
        "X-Sbx-Denied: own.test resolves to 203.0.113.5, a host-interface address
own" "$out"
else
    skip "a name that resolves to one of the host's own addresses is refused" "needs root (unshare -n -m) and ip"
fi
# Network requests of the approval flow (issue 36): under on-request (and
# untrusted) with --approver, a connection to a host that no allow-domain
# names asks the approver, once per host and port in a run; its answer lets
# the connection through or refuses it, and approved_for_session holds for
# the --session's later runs.  The approvers log each request and answer.
mkdir -p "$d/bin" "$d/log" "$d/state"
export XDG_STATE_HOME=$d/state
net_approver() {  # NAME ANSWER: the program's path
    printf '#!/bin/sh\ncat >>"%s"\necho >>"%s"\necho %s\n' "$d/log/$1" "$d/log/$1" "$2" >"$d/bin/$1"
    chmod 755 "$d/bin/$1"
    : >"$d/log/$1"
    echo "$d/bin/$1"
}
asked() { grep -c . "$d/log/$1"; }
request() { grep . "$d/log/$1" | tail -n 1 | "$python" -c 'import json,sys; d=json.load(sys.stdin); print(eval(sys.argv[1]))' "$2"; }
yes_net=$(net_approver yes approved)
no_net=$(net_approver no denied)
session_net=$(net_approver session approved_for_session)
ask_local=(-a on-request --allow-domain 127.0.0.1)

is "an unlisted name, approved: the connection goes through" "hello over http" \
    "$(get "${ask_local[@]}" --approver "$yes_net" -- http://localhost:$http/)"
is "... the approver was asked once" 1 "$(asked yes)"
is "... a network request: kind, host, port and the command" "network localhost $http curl" \
    "$(request yes 'd["kind"], d["network"]["host"], d["network"]["port"], d["command"][0]' | tr -d "(),'")"
: >"$d/log/yes"
is "two connections to one host in one run: both go through" "hello over http
hello over http" "$(sbx "${ask_local[@]}" --approver "$yes_net" -- sh -c \
    "curl --noproxy '' -sS http://localhost:$http/; curl --noproxy '' -sS -x socks5h://127.0.0.1:3128 http://localhost:$http/")"
is "... and the approver was asked once (HTTP and SOCKS5 alike)" 1 "$(asked yes)"
# A raw socket that ignores the proxy variables: transparent TCP carries its
# connect to the same proxy, by the name it looked up, and the approver is
# asked the same (a name under .invalid: the approved connect then finds no
# address, a refused one fails with EPERM, as the allowlist's refusal does).
raw="import errno, socket
try:
    socket.create_connection(('approve-me.invalid', 80))
except OSError as e:
    print(errno.errorcode[e.errno])"
: >"$d/log/yes"
sbx -a on-request --allow-domain example.invalid --approver "$yes_net" -- "$python" -c "$raw" >/dev/null 2>&1
is "a raw socket (transparent TCP): the approver is asked about the name it connected to" "approve-me.invalid 80" \
    "$(request yes 'd["network"]["host"], d["network"]["port"]' | tr -d "(),'")"
is "... and, denied, its connect fails with EPERM" EPERM \
    "$(sbx -a on-request --allow-domain example.invalid --approver "$no_net" -- "$python" -c "$raw" 2>/dev/null)"
: >"$d/log/no"
: >"$d/log/yes"
(cd "$ws" && "$SBX" run --json "${ask_local[@]}" --approver "$yes_net" -- \
    curl --noproxy '' -sS http://localhost:$http/ >"$d/r.json" 2>/dev/null)
is "the result's approval lists the request" "during network approved localhost" \
    "$("$python" -c 'import json,sys; r=json.load(open(sys.argv[1]))["approval"]["requests"][0]; print(r["stage"], r["kind"], r["decision"], r["network"]["host"])' "$d/r.json")"

is "an unlisted name, denied: refused as the allowlist would" \
    "X-Sbx-Denied: no allow-domain matches localhost (nor did an approver allow it)" \
    "$(header "${ask_local[@]}" --approver "$no_net" -- http://localhost:$http/)"
is "... the approver was asked once" 1 "$(asked no)"
: >"$d/log/yes"
is "a deny-domain is never asked about" "X-Sbx-Denied: deny-domain localhost" \
    "$(header "${ask_local[@]}" --deny-domain localhost --approver "$yes_net" -- http://localhost:$http/)"
is "--reject network: never asked" "X-Sbx-Denied: no allow-domain matches localhost" \
    "$(header "${ask_local[@]}" --reject network --approver "$yes_net" -- http://localhost:$http/)"
is "on-failure: never asked" "X-Sbx-Denied: no allow-domain matches localhost" \
    "$(header -a on-failure --allow-domain 127.0.0.1 --approver "$yes_net" -- http://localhost:$http/)"
is "... nor in any of those runs" 0 "$(asked yes)"
is "an approved name still has its address checked: loopback stays refused" \
    "X-Sbx-Denied: localhost resolves to 127.0.0.1, a loopback address" \
    "$(header -a on-request --allow-domain example.invalid --approver "$yes_net" -- http://localhost:$http/ -4)"

is "approved_for_session: the connection goes through" "hello over http" \
    "$(get "${ask_local[@]}" --session net --approver "$session_net" -- http://localhost:$http/)"
is "... a later run of the session is not asked again, and goes through" "hello over http 1" \
    "$(get "${ask_local[@]}" --session net --approver "$session_net" -- http://localhost:$http/) $(asked session)"
is "... the session file holds the host and port alone" "[{'network': {'host': 'localhost', 'port': $http}}]" \
    "$("$python" -c 'import json,sys; print(json.load(open(sys.argv[1]))["approvals"])' "$d/state/sbx/sessions/net.json")"
is "... another port of that host is asked about" "2" \
    "$(get "${ask_local[@]}" --session net --approver "$session_net" -- http://localhost:$https/ >/dev/null; asked session)"

kill $servers_pid
wait $servers_pid 2>/dev/null
done_testing
