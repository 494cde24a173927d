#!/usr/bin/env bash
# Secrets the command can use but never read (issue 36): --secret-env and
# --secret-file with hosts (masked: a stand-in of the same length inside, the
# real value put back by sbx-tls in what the command sends over TLS to those
# hosts only), without hosts (withheld), and --tls-passthrough.
#
# What the sandbox can read is checked as root and as uid 65534: the
# variable, every process's environment, the masked file, the real file
# through other paths.  What the hosts receive is checked against a local
# HTTPS server on an address of a network namespace made for the test, with
# its own /etc/hosts and its own CA (root only: unshare -n -m; as 65534 it
# says SKIP).
set -u
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"

require_helper
d=$(scratch)
export HOME=$d/home
mkdir -p "$HOME" "$d/proj"
cd "$d/proj" || exit 1
real=ghp_REALVALUE0123456789abcdefXYZ
npm_real=npm_FILEVALUE9876543210zz
printf 'registry=https://registry.npmjs.org/\n//secret.test/:_authToken=%s\n' "$npm_real" >"$HOME/.npmrc"
chmod 600 "$HOME/.npmrc"
cp "$HOME/.npmrc" "$d/npmrc.before"
export GH_TOKEN=$real AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMIK7MDENGbPxRfiCYEXAMPLEKEY
# The file's token alone (extract): a policy file, the flags' counterpart;
# its host is admitted by the flags' --allow-domain (the merged policy).
cat >"$d/secrets.json" <<'JSON'
{"secrets": [{"file": "~/.npmrc", "hosts": ["secret.test"], "extract": "_authToken=(\\S+)"}]}
JSON
masked=(-p workspace-write --stdin null --allow-domain secret.test --allow-domain other.test
    --allow-domain 203.0.113.7 --secret-env GH_TOKEN@secret.test
    --policy-file "$d/secrets.json" --secret-env AWS_SECRET_ACCESS_KEY)

# What the sandbox shows: the variable, every environment and command line
# it can read, the masked file, the real file by other names.
"$SBX" run "${masked[@]}" -- sh -c '
    printf "env=%s\n" "$GH_TOKEN"
    printf "aws=%s\n" "${AWS_SECRET_ACCESS_KEY-unset}"
    cat /proc/[0-9]*/environ /proc/[0-9]*/cmdline 2>/dev/null | tr "\0" "\n" >environs
    cat "$HOME/.npmrc" >npmrc.seen
    cat "/proc/self/root$HOME/.npmrc" >>npmrc.seen 2>&1
    ls "$(dirname "$SSL_CERT_FILE")" >ca.files
    printf "ca=%s\n" "$SSL_CERT_FILE"' >"$d/seen" 2>"$d/seen.err"
is "a masked run starts (exit 0)" 0 "$?"
sentinel=$(sed -n 's/^env=//p' "$d/seen")
is "the variable is a stand-in as long as the value" "${#real}" "${#sentinel}"
ok "... not the value" test "$sentinel" != "$real"
ok "... letters and digits" sh -c "printf %s '$sentinel' | grep -qE '^[A-Za-z0-9]+\$'"
is "a withheld variable is unset" "aws=unset" "$(grep '^aws=' "$d/seen")"
not_ok "the real value is in no environment or command line the sandbox can read" grep -qF "$real" environs
ok "... which were read (the stand-in is there)" grep -qF "$sentinel" environs
not_ok "... nor is the withheld value" grep -qF "$AWS_SECRET_ACCESS_KEY" environs
not_ok "the masked file shows no real value, by its path or through /proc/self/root" grep -qF "$npm_real" npmrc.seen
ok "... its other lines are there" grep -qF "registry=https://registry.npmjs.org/" npmrc.seen
file_sentinel=$(sed -n 's|^//secret.test/:_authToken=||p' npmrc.seen | head -1)
is "... its token is a stand-in as long as the value" "${#npm_real}" "${#file_sentinel}"
ok "the host's file is unchanged" cmp "$HOME/.npmrc" "$d/npmrc.before"
ca_dir=$(sed -n 's|^ca=||p' "$d/seen")
ca_dir=${ca_dir%/*}
is "the CA's files were there for the command" "bundle.pem ca.pem" "$(tr '\n' ' ' <ca.files | sed 's/ $//')"
not_ok "... and are gone after the run" test -e "$ca_dir"

# $XDG_RUNTIME_DIR a symlink to a directory the command may write: the CA's
# files go elsewhere (the policy decides the directory the name leads to).
mkdir -p "$d/ws/run" && ln -sfn "$d/ws/run" "$d/runlink"
ca=$(cd "$d/ws" && XDG_RUNTIME_DIR=$d/runlink "$SBX" run -p workspace-write --stdin null --allow-domain secret.test \
    --secret-env GH_TOKEN@secret.test -- sh -c 'printf %s "$SSL_CERT_FILE"' 2>&1)
case $ca in
    /*/bundle.pem) case $ca in "$d/ws/"* | "$d/runlink/"*) _tap_result fail "the CA's files: never where the command may write, a symlinked \$XDG_RUNTIME_DIR neither" "$ca" ;;
        *) _tap_result ok "the CA's files: never where the command may write, a symlinked \$XDG_RUNTIME_DIR neither" ;; esac ;;
    *) _tap_result fail "the CA's files: never where the command may write, a symlinked \$XDG_RUNTIME_DIR neither" "$ca" ;;
esac
ok "... nothing left in that directory" test -z "$(ls -A "$d/ws/run")"
rm -rf "$d/ws" "$d/runlink"

# Writing the masked file fails, inside a writable root or not.
"$SBX" run "${masked[@]}" -w "$HOME" -- sh -c 'echo x >"$HOME/.npmrc"' 2>/dev/null
ok "the masked file cannot be written inside a writable root" test $? -ne 0
ok "... and the host's file is unchanged" cmp "$HOME/.npmrc" "$d/npmrc.before"

# Without extract the whole file (less its final newline) is the secret.
printf 'tok_WHOLEFILEVALUE42\n' >"$d/token"
out=$("$SBX" run -p workspace-write --stdin null --allow-domain secret.test --secret-file "$d/token@secret.test" \
    -- cat "$d/token" 2>&1)
case $out in
    tok_* | *$'\n'*) _tap_result fail "--secret-file without extract: the whole token a stand-in" "$out" ;;
    *) is "--secret-file without extract: the whole token a stand-in" 20 "${#out}" ;;
esac

# A withheld file is denied.
out=$("$SBX" run -p workspace-write --stdin null --secret-file "$HOME/.npmrc" -- cat "$HOME/.npmrc" 2>&1)
case $out in *"$npm_real"*) _tap_result fail "a withheld file cannot be read" "$out" ;; *) _tap_result ok "a withheld file cannot be read" ;; esac

# Refused before anything runs (125, one line naming the fix).
refused() {  # DESC WANT ARGS...
    local desc=$1 want=$2; shift 2
    local err rc
    err=$("$SBX" run --stdin null "$@" -- touch "$d/ran" 2>&1)
    rc=$?
    if [ "$rc" = 125 ] && [ ! -e "$d/ran" ] && printf '%s' "$err" | grep -qF -- "$want"; then
        _tap_result ok "$desc"
    else
        _tap_result fail "$desc" "exit $rc: $err"
    fi
}
refused "a masked secret whose host the allowlist does not admit" "add --allow-domain evil.test" \
    -p workspace-write --allow-domain secret.test --secret-env GH_TOKEN@evil.test
refused "... a policy file's, where no document admits it (naming the file)" \
    "--policy-file $d/secrets.json: key 'secrets' [0]: the secret $HOME/.npmrc may reach secret.test" \
    -p workspace-write --policy-file "$d/secrets.json"
refused "a masked variable sbx does not have" "it is not set in sbx's environment" \
    -p workspace-write --allow-domain secret.test --secret-env NOT_SET_ANYWHERE@secret.test
refused "a masked secret where the filesystem is not sandboxed" "leaves the filesystem open" \
    -p external-sandbox --allow-domain secret.test --secret-env GH_TOKEN@secret.test
ln "$HOME/.npmrc" "$d/npmrc.link"
refused "a masked file with another hard link" "hard links" \
    -p workspace-write --allow-domain secret.test --secret-file "$HOME/.npmrc@secret.test"
rm -f "$d/npmrc.link"
SHORT=abc refused "a value too short to mask" "too few to mask" \
    -p workspace-write --allow-domain secret.test --secret-env SHORT@secret.test
LONG=$(head -c 16385 /dev/zero | tr '\0' x) refused "a value longer than a token (16384 bytes)" \
    "more than a token's 16384" -p workspace-write --allow-domain secret.test --secret-env LONG@secret.test
printf 'tok\377\376-0123456789' >"$d/binary"
refused "a value that is not UTF-8 text" "not UTF-8 text" \
    -p workspace-write --allow-domain secret.test --secret-file "$d/binary@secret.test"

# Eight values of 16,000 bytes (sbx-tls's configuration is larger than one
# packet of its channel can hold): the run starts, each a stand-in.
big=()
i=0
for letter in a b c d e f g h; do
    i=$((i + 1))
    export "BIG$i=$(head -c 16000 /dev/zero | tr '\0' "$letter")"
    big+=(--secret-env "BIG$i@secret.test")
done
out=$("$SBX" run -p workspace-write --stdin null --allow-domain secret.test "${big[@]}" -- \
    sh -c 'printf "%s %s" "${#BIG1}" "${#BIG8}"; case $BIG1$BIG8 in *aaaaaaaa* | *hhhhhhhh*) echo " real" ;; esac' 2>&1)
is "eight values of 16,000 bytes: the run starts, each a stand-in as long" "16000 16000" "$out"
unset BIG1 BIG2 BIG3 BIG4 BIG5 BIG6 BIG7 BIG8

# The hosts: a local HTTPS server in a network namespace of the test's own,
# with its own CA (sbx-tls trusts it through sbx's SSL_CERT_FILE; the
# command's bundle is that file and sbx's CA).  It answers each request with
# the Authorization header it received, and logs it.
if [ "$(id -u)" = 0 ] && command -v unshare >/dev/null && command -v ip >/dev/null && command -v openssl >/dev/null &&
    command -v curl >/dev/null && [ -x /usr/bin/python3 ]; then
    (
        cd "$d" &&
            openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout ca.key -out ca.pem \
                -subj /CN=sbx-test-ca -days 2 -addext basicConstraints=critical,CA:TRUE \
                -addext keyUsage=critical,keyCertSign &&
            openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout leaf.key -out leaf.csr \
                -subj /CN=secret.test &&
            printf 'subjectAltName=DNS:secret.test,DNS:other.test\nextendedKeyUsage=serverAuth\n' >leaf.ext &&
            openssl x509 -req -in leaf.csr -CA ca.pem -CAkey ca.key -CAcreateserial -out leaf.pem -days 2 \
                -extfile leaf.ext
    ) >"$d/openssl.log" 2>&1 || echo "# openssl failed: $(cat "$d/openssl.log")"
    printf '127.0.0.1 localhost\n203.0.113.7 secret.test other.test\n' >"$d/hosts"
    chmod 644 "$d/hosts" "$d/ca.pem"
    cat >"$d/netns.sh" <<SH
mount --make-rprivate / && mount --bind "$d/hosts" /etc/hosts && ip link set lo up &&
    ip addr add 203.0.113.7/32 dev lo || exit 1
/usr/bin/python3 -c '
import http.server, os, ssl, sys
class H(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    def do_GET(self):
        got = self.headers.get("Authorization", "") + " " + self.headers.get("X-Npm", "")
        with open(sys.argv[2], "a") as log: log.write(self.headers.get("Host", "") + " " + got + "\n")
        body = ("received: " + got + "\n").encode()
        self.send_response(200); self.send_header("Content-Length", str(len(body))); self.end_headers()
        self.wfile.write(body)
    def log_message(self, *a): pass
s = http.server.ThreadingHTTPServer(("0.0.0.0", 0), H)
c = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER); c.load_cert_chain("$d/leaf.pem", "$d/leaf.key")
s.socket = c.wrap_socket(s.socket, server_side=True)
open(sys.argv[1] + ".tmp", "w").write(str(s.server_address[1])); os.rename(sys.argv[1] + ".tmp", sys.argv[1])
s.serve_forever()' "$d/port" "$d/received" &
while [ ! -e "$d/port" ]; do sleep 0.01; done
port=\$(cat "$d/port")
cd "$d/proj"
get='curl -sS -f https://\$0:'\$port'/ -H "Authorization: Bearer \$GH_TOKEN" -H "X-Npm: \$(sed -n "s|^//secret.test/:_authToken=||p" "\$HOME/.npmrc")"'
echo "bound: \$(SSL_CERT_FILE="$d/ca.pem" "$SBX" run ${masked[*]} -- sh -c "\$get" secret.test 2>&1)"
echo "other: \$(SSL_CERT_FILE="$d/ca.pem" "$SBX" run ${masked[*]} -- sh -c "\$get" other.test 2>&1)"
echo "passthrough: \$(SSL_CERT_FILE="$d/ca.pem" "$SBX" run ${masked[*]} --tls-passthrough secret.test -- sh -c "\$get" secret.test 2>&1 | head -c 300)"
echo "untrusted: \$("$SBX" run ${masked[*]} -- sh -c "\$get" secret.test 2>&1 | head -c 300)"
# No proxy variables, and no /etc/hosts (which names the test's address): the
# name goes to the sandbox's resolver, the connect through transparent TCP.
echo "transparent: \$(SSL_CERT_FILE="$d/ca.pem" "$SBX" run ${masked[*]} --deny /etc/hosts -- env -u https_proxy -u HTTPS_PROXY -u all_proxy -u ALL_PROXY sh -c "\$get" secret.test 2>&1)"
# The header's value split across two TLS records (two writes of the
# command's): put back whole all the same.
echo "split: \$(SSL_CERT_FILE="$d/ca.pem" "$SBX" run ${masked[*]} --deny /etc/hosts -- env -u https_proxy -u HTTPS_PROXY /usr/bin/python3 -c '
import os, socket, ssl, sys
host, port = sys.argv[1], int(sys.argv[2])
s = ssl.create_default_context().wrap_socket(socket.create_connection((host, port)), server_hostname=host)
token = os.environ["GH_TOKEN"]
s.sendall(("GET / HTTP/1.1\r\nHost: %s:%d\r\nAuthorization: Bearer %s" % (host, port, token[:9])).encode())
s.sendall(("%s\r\nConnection: close\r\n\r\n" % token[9:]).encode())
answer = b""
while True:
    chunk = s.recv(4096)
    if not chunk: break
    answer += chunk
print(answer.decode().splitlines()[-1])' secret.test \$port 2>&1)"
# A client offering HTTP/2 alone (its compressed headers would hide the
# stand-ins): refused in the handshake, nothing sent.
echo "h2: \$(SSL_CERT_FILE="$d/ca.pem" "$SBX" run ${masked[*]} --deny /etc/hosts -- env -u https_proxy -u HTTPS_PROXY /usr/bin/python3 -c '
import socket, ssl, sys
c = ssl.create_default_context(); c.set_alpn_protocols(["h2"])
try:
    s = c.wrap_socket(socket.create_connection((sys.argv[1], int(sys.argv[2]))), server_hostname=sys.argv[1])
    s.sendall(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n"); print("handshake done", s.recv(100))
except (ssl.SSLError, OSError) as e:
    print("refused", type(e).__name__)' secret.test \$port 2>"$d/h2.err")"
kill %1
SH
    out=$(unshare -n -m bash "$d/netns.sh" 2>&1)
    printf '%s\n' "$out" | sed 's/^/# /'
    cat "$d/received" | sed "s/^/# received: /"
    received=$(cat "$d/received" 2>/dev/null)
    ok "the bound host received the real values, in the header" \
        grep -qF "secret.test:$(cat "$d/port") Bearer $real $npm_real" "$d/received"
    bound_line=$(printf '%s\n' "$out" | grep '^bound: ')
    case $bound_line in
        *"$real"* | *"$npm_real"*) _tap_result fail "... and echoed back, the command reads stand-ins" "$bound_line" ;;
        "bound: received: Bearer "*) _tap_result ok "... and echoed back, the command reads stand-ins" ;;
        *) _tap_result fail "... and echoed back, the command reads stand-ins" "$bound_line" ;;
    esac
    ok "another allowed host received the stand-ins" grep -qE "^other.test:[0-9]+ Bearer [A-Za-z0-9]{${#real}} [A-Za-z0-9]{${#npm_real}}\$" "$d/received"
    n_real=$(grep -cF "$real" "$d/received")
    is "the real value reached the bound host three times (proxy variables, transparent TCP, split), nothing else" \
        3 "$n_real"
    split_line=$(printf '%s\n' "$out" | grep '^split: ')
    case $split_line in
        *"$real"*) _tap_result fail "a value split across two TLS records: put back whole, echoed as the stand-in" "$split_line" ;;
        "split: received: Bearer "*) _tap_result ok "a value split across two TLS records: put back whole, echoed as the stand-in" ;;
        *) _tap_result fail "a value split across two TLS records: put back whole, echoed as the stand-in" "$split_line" ;;
    esac
    transparent_line=$(printf '%s\n' "$out" | grep '^transparent: ')
    case $transparent_line in
        "transparent: received: Bearer "*"$real"*) _tap_result fail "transparent TCP (no proxy variables): terminated too, stand-ins echoed" "$transparent_line" ;;
        "transparent: received: Bearer "*) _tap_result ok "transparent TCP (no proxy variables): terminated too, stand-ins echoed" ;;
        *) _tap_result fail "transparent TCP (no proxy variables): terminated too, stand-ins echoed" "$transparent_line" ;;
    esac
    # Not terminated: the command's own TLS reaches the host (whose CA its
    # bundle holds here), with the stand-ins.
    ok "--tls-passthrough: the bound host, not terminated, received the stand-ins" \
        grep -qE "^secret.test:[0-9]+ Bearer [A-Za-z0-9]{${#real}} [A-Za-z0-9]{${#npm_real}}\$" "$d/received"
    case $(printf '%s\n' "$out" | grep '^untrusted: ') in
        *"received"*) _tap_result fail "a host sbx-tls does not trust gets nothing" "$out" ;;
        *) _tap_result ok "a host sbx-tls does not trust gets nothing" ;;
    esac
    case $(printf '%s\n' "$out" | grep '^h2: ') in
        "h2: refused "*) _tap_result ok "a client offering HTTP/2 alone is refused in the handshake" ;;
        *) _tap_result fail "a client offering HTTP/2 alone is refused in the handshake" "$out" ;;
    esac
    ok "... and sbx says why" grep -q "^sbx: TLS to secret.test:[0-9]*: the command's handshake failed: .*no application protocol" "$d/h2.err"
    is "... (the server saw five requests: bound, other, passthrough, transparent, split)" 5 "$(wc -l <"$d/received")"
else
    for c in "the bound host received the real values" "... echoed back as stand-ins" \
        "another allowed host received the stand-ins" "the real value reached the bound host three times" \
        "a value split across two TLS records" "a client offering HTTP/2 alone is refused" "... and sbx says why" \
        "transparent TCP: terminated too" \
        "--tls-passthrough" "a host sbx-tls does not trust gets nothing" "... five requests"; do
        skip "$c" "needs root (unshare -n -m for a network namespace of the test's), ip, openssl, curl and python3"
    done
fi
done_testing
