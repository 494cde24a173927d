#!/usr/bin/env bash
# A download from a server on the host's loopback through the allowlist proxy
# (--allow-domain: the command's connection is accepted by sbx, which
# connects to the server and splices the bytes across) against the same
# download direct (curl on the host), in one run:
#   tests/bench/proxy.sh [BUILD_DIR [SIZE]]   (default: build 1G; RUNS=5;
#                                             SBX=path overrides BUILD_DIR/sbx)
# After one untimed download (the page cache), direct and proxied downloads
# alternate so that a machine whose speed drifts treats both alike; the line
# gives the best of RUNS of each and the ratio of the throughputs (direct
# time / proxied time; the target is >= 0.8), and the median of the per-pair
# ratios.  Then transparent TCP (curl told to ignore the proxy variables, so
# that the helper carries its connect to the proxy as a SOCKS5 CONNECT) on the
# host's non-loopback address, against the proxy variables to the same
# address: the same download, and the setup cost of a connection (CONNS
# connections, CONNS=200, opened and closed by a Python loop that times
# itself; a SOCKS5 CONNECT by hand against a plain connect).  Last, with
# CODEX_LINUX_SANDBOX_0171, both helpers' transparent TCP as Codex 0.171 runs
# them, through one SOCKS5 relay: the download and a connection.  Figures,
# not assertions.
set -u
build=$(cd "${1:-build}" && pwd) || exit 1
SIZE=${2:-1G}
SBX=${SBX:-$build/sbx}
[ -x "$SBX" ] || { echo "proxy.sh: $SBX is not an executable sbx (build it, or pass BUILD_DIR)" >&2; exit 1; }
export SBX_LINUX_SANDBOX_EXE=${SBX_LINUX_SANDBOX_EXE:-$(dirname "$SBX")/codex-linux-sandbox}
RUNS=${RUNS:-5}
d=$(mktemp -d) || exit 1
server_pid=
trap '[ -n "$server_pid" ] && kill $server_pid 2>/dev/null; rm -rf "$d"' EXIT
truncate -s "$SIZE" "$d/blob"  # sparse: the server's reads cost no disk
cat >"$d/server.py" <<'PY'
import http.server, os, sys
blob, ready = sys.argv[1], sys.argv[2]
class Blob(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.0"
    def do_GET(self):
        size = os.path.getsize(blob)
        self.send_response(200)
        self.send_header("Content-Length", str(size))
        self.end_headers()
        self.wfile.flush()
        with open(blob, "rb") as f:
            self.connection.sendfile(f)
    def log_message(self, *a):
        pass
    def do_HEAD(self):
        self.send_response(200)
        self.send_header("Content-Length", "0")
        self.end_headers()
http.server.ThreadingHTTPServer.request_queue_size = 128  # connections made back to back: no SYN dropped
s = http.server.ThreadingHTTPServer(("0.0.0.0", 0), Blob)  # loopback and the host's address
open(ready + ".tmp", "w").write(str(s.server_address[1]))
os.rename(ready + ".tmp", ready)
s.serve_forever()
PY
python3 "$d/server.py" "$d/blob" "$d/port" &
server_pid=$!
for _ in $(seq 1 100); do [ -e "$d/port" ] && break; sleep 0.1; done
port=$(cat "$d/port") || exit 1
url=http://localhost:$port/blob

. "$(dirname "$0")/lib.sh"

direct=$(q curl -sSf --noproxy '*' -o /dev/null "$url")
proxied=$(q "$SBX" run --allow-domain localhost --allow-domain 127.0.0.1 -- curl -sSf --noproxy '' -o /dev/null "$url")
# One download untimed first: the sparse file's pages enter the page cache
# (else the first direct run pays for it and the first pair favours the proxy).
bash -c "$direct" >/dev/null || echo "proxy.sh: failed: $direct" >&2
in_turn "$RUNS" "$direct" "$proxied"
best_d=$best_first best_p=$best_second
echo "proxy.sh: $SIZE from a loopback server, best of $RUNS (load average: $(cut -d' ' -f1-3 /proc/loadavg))"
printf '  direct %6s ms   through the proxy %6s ms   throughput ratio %s (median of pairs %s)\n' \
    "$best_d" "$best_p" "$(ratio "$best_d" "$best_p")" "$pair_ratio"

# Transparent TCP: on the host's first non-loopback IPv4 address.
host_ip=$(ip -4 -o addr show scope global 2>/dev/null | awk '{sub("/.*", "", $4); print $4; exit}')
if [ -z "$host_ip" ]; then
    echo "  transparent TCP: skipped (the host has no non-loopback IPv4 address)"
    exit 0
fi
CONNS=${CONNS:-200}
at=http://$host_ip:$port
allow=(--allow-domain "$host_ip")
variables=$(q "$SBX" run "${allow[@]}" -- curl -sSf --noproxy '' -o /dev/null "$at/blob")
transparent=$(q "$SBX" run "${allow[@]}" -- curl -sSf --noproxy '*' -o /dev/null "$at/blob")
in_turn "$RUNS" "$variables" "$transparent"
best_v=$best_first best_t=$best_second
printf '  at %s: through the proxy variables %6s ms   transparent %6s ms   ratio %s (median of pairs %s)\n' \
    "$host_ip" "$best_v" "$best_t" "$(ratio "$best_v" "$best_t")" "$pair_ratio"
# Setup: CONNS connections opened and closed one after the other, each
# timed by the program itself, in the sandbox: through the proxy by hand (a
# SOCKS5 CONNECT to 127.0.0.1:3128, what a proxy-aware client does) and
# transparently (a plain connect).
cat >"$d/setup.py" <<'PROGRAM'
import socket, struct, sys, time
how, host, port, n = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
def socks():
    s = socket.create_connection(("127.0.0.1", 3128))
    s.sendall(b"\x05\x01\x00")
    s.recv(2)
    s.sendall(b"\x05\x01\x00\x01" + socket.inet_aton(host) + struct.pack("!H", port))
    s.recv(10)
    return s
connect = socks if how == "socks" else lambda: socket.create_connection((host, port))
connect().close()  # warm
t = time.perf_counter()
for _ in range(n):
    connect().close()
print(round((time.perf_counter() - t) / n * 1e6))
PROGRAM
best_of() {  # CMD...: the least of RUNS runs' microseconds per connection
    local best="" us
    for _ in $(seq "$RUNS"); do
        us=$("$@" 2>/dev/null)
        if [ -z "$best" ] || [ "$us" -lt "$best" ]; then best=$us; fi
    done
    echo "$best"
}
us_socks=$(best_of "$SBX" run "${allow[@]}" -- python3 "$d/setup.py" socks "$host_ip" "$port" "$CONNS")
us_transparent=$(best_of "$SBX" run "${allow[@]}" -- python3 "$d/setup.py" transparent "$host_ip" "$port" "$CONNS")
printf '  a connection (best of %s runs of %s): SOCKS5 by hand %s us, transparent %s us; by hand / transparent %s\n' \
    "$RUNS" "$CONNS" "$us_socks" "$us_transparent" "$(ratio "$us_socks" "$us_transparent")"

# Beside Codex 0.171's own helper (CODEX_LINUX_SANDBOX_0171: .ci/fetch-codex
# DIR 0.171.0; it runs bwrap): both helpers alone, as Codex runs them, with
# --transparent-tcp and --managed-network, against one SOCKS5 proxy on the
# host (tests/integration/progs/socks5.py, a Python relay: both pay for it
# alike): the setup cost of a connection, and the same download.
codex=${CODEX_LINUX_SANDBOX_0171:-}
if [ -z "$codex" ] || [ ! -x "$codex" ] || ! command -v bwrap >/dev/null; then
    echo "  beside Codex 0.171's helper: skipped (set CODEX_LINUX_SANDBOX_0171, and install bwrap)"
    exit 0
fi
python3 "$(dirname "$0")/../integration/progs/socks5.py" "$d" "$host_ip" &
socks_pid=$!
trap '[ -n "$server_pid" ] && kill $server_pid 2>/dev/null; kill $socks_pid 2>/dev/null; rm -rf "$d"' EXIT
for _ in $(seq 1 100); do [ -e "$d/socks" ] && break; sleep 0.1; done
socks=$(cat "$d/socks") || exit 1
profile='{"type":"managed","file_system":{"type":"restricted","entries":[{"path":{"type":"special","value":{"kind":"root"}},"access":"read"},{"path":{"type":"path","path":"'$d'"},"access":"write"}]},"network":"enabled"}'
managed='{"loopbackPorts":['$socks']}'
helper_line() {  # HELPER CMD...: the helper as Codex 0.171 runs it
    local helper=$1
    shift
    q env -i PATH=/usr/bin:/bin ALL_PROXY=socks5h://127.0.0.1:$socks "$helper" --transparent-tcp \
        --sandbox-policy-cwd "$d" --command-cwd "$d" --permission-profile "$profile" --managed-network "$managed" -- "$@"
}
ours=$(helper_line "$SBX_LINUX_SANDBOX_EXE" curl -sSf --noproxy '*' -o /dev/null "$at/blob")
theirs=$(helper_line "$codex" curl -sSf --noproxy '*' -o /dev/null "$at/blob")
in_turn "$RUNS" "$theirs" "$ours"
best_c=$best_first best_o=$best_second
us_ours=$(best_of bash -c "$(helper_line "$SBX_LINUX_SANDBOX_EXE" python3 "$d/setup.py" transparent "$host_ip" "$port" "$CONNS")")
us_theirs=$(best_of bash -c "$(helper_line "$codex" python3 "$d/setup.py" transparent "$host_ip" "$port" "$CONNS")")
printf '  beside Codex 0.171 (both through one Python SOCKS5 relay): download %s ms (Codex %s ms, ratio %s, median of pairs %s); a connection %s us (Codex %s us, ratio %s)\n' \
    "$best_o" "$best_c" "$(ratio "$best_c" "$best_o")" "$pair_ratio" "$us_ours" "$us_theirs" "$(ratio "$us_theirs" "$us_ours")"
