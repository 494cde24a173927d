#!/usr/bin/env bash
# TLS termination for masked secrets (issue 36): a 1 GiB download over HTTPS
# from `openssl s_server -WWW` on the host's loopback, in one run, three ways
# alternating (after one untimed download each):
#   direct       curl on the host
#   tunnel       sbx run --allow-domain 127.0.0.1 -- curl ...  (the proxy
#                splices the command's TLS through, as for any host)
#   terminated   the same with --secret-env TOKEN@127.0.0.1: sbx-tls
#                terminates the command's TLS and makes its own to the server,
#                replacing the stand-in in each direction
# Prints the best of RUNS of each and the throughput ratios against direct
# (direct time / time; issue 36's bound for terminated: >= 0.8), and the
# median of the per-round ratios.  Figures, not assertions.
#   tests/bench/tls.sh [BUILD_DIR [SIZE]]   (default: build 1G; RUNS=5)
set -u
build=$(cd "${1:-build}" && pwd) || exit 1
SIZE=${2:-1G}
SBX=${SBX:-$build/sbx}
export SBX_LINUX_SANDBOX_EXE=${SBX_LINUX_SANDBOX_EXE:-$build/codex-linux-sandbox}
RUNS=${RUNS:-5}
for tool in openssl curl python3; do
    command -v $tool >/dev/null || { echo "tls.sh: $tool is needed" >&2; exit 1; }
done
d=$(mktemp -d) || exit 1
server=
trap '[ -n "$server" ] && kill $server 2>/dev/null; rm -rf "$d"' EXIT
cd "$d" || exit 1
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout ca.key -out ca.pem -subj /CN=bench-ca \
    -days 1 -addext basicConstraints=critical,CA:TRUE -addext keyUsage=critical,keyCertSign 2>/dev/null &&
    openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout leaf.key -out leaf.csr -subj /CN=127.0.0.1 \
        2>/dev/null &&
    printf 'subjectAltName=IP:127.0.0.1\nextendedKeyUsage=serverAuth\n' >leaf.ext &&
    openssl x509 -req -in leaf.csr -CA ca.pem -CAkey ca.key -CAcreateserial -out leaf.pem -days 1 -extfile leaf.ext \
        2>/dev/null || { echo "tls.sh: openssl could not make the certificates" >&2; exit 1; }
mkdir www && truncate -s "$SIZE" www/blob
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
(cd www && exec openssl s_server -quiet -WWW -accept "127.0.0.1:$port" -cert ../leaf.pem -key ../leaf.key) \
    >/dev/null 2>&1 &
server=$!
until curl -s --cacert ca.pem -o /dev/null "https://127.0.0.1:$port/blob" -r 0-0; do sleep 0.05; done
export TOKEN=tok_benchmark_value_0123456789
url="https://127.0.0.1:$port/blob"
get="curl -sS -f --noproxy '' -o /dev/null -w %{time_total} -H 'Authorization: Bearer \$TOKEN' $url"
direct() { curl -sS -f -o /dev/null -w '%{time_total}' --cacert ca.pem -H "Authorization: Bearer $TOKEN" "$url"; }
tunnel() { "$SBX" run -p workspace-write --stdin null --allow-domain 127.0.0.1 --env SSL_CERT_FILE="$d/ca.pem" \
        --env CURL_CA_BUNDLE="$d/ca.pem" -- sh -c "$get"; }
terminated() {
    SSL_CERT_FILE=$d/ca.pem "$SBX" run -p workspace-write --stdin null --allow-domain 127.0.0.1 \
        --secret-env TOKEN@127.0.0.1 -- sh -c "$get"
}
for f in direct tunnel terminated; do $f >/dev/null || { echo "tls.sh: the $f download failed" >&2; exit 1; }; done
: >times
for i in $(seq 1 "$RUNS"); do
    echo "$(direct) $(tunnel) $(terminated)" >>times
done
python3 - times "$SIZE" <<'PY'
import statistics, sys
rows = [list(map(float, l.split())) for l in open(sys.argv[1]) if l.strip()]
names = ("direct", "tunnel", "terminated")
best = [min(r[i] for r in rows) for i in range(3)]
print(f"{len(rows)} rounds of {sys.argv[2]} over HTTPS (seconds, best):")
for n, b in zip(names, best):
    print(f"  {n:11s} {b:.3f}")
for i in (1, 2):
    med = statistics.median(r[0] / r[i] for r in rows)
    print(f"ratio {names[i]} (direct/{names[i]}): best {best[0] / best[i]:.2f}, median of rounds {med:.2f}"
          + ("   (issue 36's bound: >= 0.8)" if i == 2 else ""))
PY
