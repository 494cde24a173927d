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
# ratios.  Figures, not assertions.
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
s = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Blob)
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
