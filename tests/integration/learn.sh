#!/usr/bin/env bash
# sbx learn (issue 34): real tools run once with every write in a throwaway
# layer; the line sbx prints lets the same command succeed under sbx run,
# the policy without that line's flags does not, and nothing on the host
# changed during the learning run (the project, $HOME, /etc).
#
# The tools: a make build that also fills a tool's cache under $HOME, a git
# commit, npm install of a local tarball, pip install of a local wheel into
# a venv in the project (npm and pip where this machine has them).  Also run
# as uid 65534 (unprivileged.sh).
set -u
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"

require_helper
require_learning_view  # overlayfs with its layers given by descriptor (Linux 6.8)
d=$(scratch)
export HOME=$d/home GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null
export GIT_AUTHOR_NAME=t GIT_AUTHOR_EMAIL=t@example.org GIT_COMMITTER_NAME=t GIT_COMMITTER_EMAIL=t@example.org
mkdir -p "$HOME/.cache"  # as on any machine a user works on
proj=$d/proj
mkdir -p "$proj"
logs=$(scratch)  # sbx's stderr, outside what the manifest covers

# Everything under the scratch directory and what a learning run might have
# written elsewhere, one line per file: its path, size and content's hash.
manifest() {
    (cd "$d" && find . -print0 | sort -z | xargs -0 -r sh -c '
        for f; do if [ -f "$f" ] && [ ! -L "$f" ]; then echo "$f $(wc -c <"$f") $(md5sum <"$f")"; else echo "$f"; fi; done' sh)
    ls -la /etc 2>/dev/null | md5sum
}

# sbx learn in the project: learn OUT [OPTIONS] -- CMD...; OUT gets stderr.
learn() {
    local out=$1; shift
    "$SBX" learn -C "$proj" --stdin null "$@" 2>"$out"
}

# The line a learning run printed ("sbx: learn: it needs: LINE"), as words.
needed_line() {
    sed -n 's/^sbx: learn: it needs: //p' "$1"
}

# One tool: learn it, check the host, run the line, and the policy without it.
#   check_tool NAME RESET FLAGS -- CMD...   (RESET: a shell snippet that
#   undoes what a run changed, so that each run starts from the same state;
#   FLAGS: what the line must hold, "" for none: the policy as given)
check_tool() {
    local name=$1 reset=$2 expect=$3; shift 4
    local err=$logs/learn-$name.err before after line status
    eval "$reset"
    before=$(manifest)
    learn "$err" -p workspace-write -- "$@" >/dev/null
    status=$?
    after=$(manifest)
    is "$name: the learning run succeeded" 0 "$status"
    [ "$status" = 0 ] || sed 's/^/# /' "$err"
    is "$name: nothing on the host changed during the learning run" "$before" "$after"
    line=$(needed_line "$err")
    if [ -n "$expect" ]; then
        case " $line " in
            *" $expect "*) _tap_result ok "$name: the line has $expect" ;;
            *) _tap_result fail "$name: the line has $expect" "$(cat "$err")" ;;
        esac
    fi
    case " $line " in
        *" -w $HOME "* | *" -w $HOME/ "* | *" -n full "* | *" -w / "*)
            _tap_result fail "$name: the line is no wider than needed" "$line" ;;
        *) _tap_result ok "$name: the line is no wider than needed" ;;
    esac
    eval "$reset"
    ok "$name: the learned line works first time" eval "$line >/dev/null"
    eval "$reset"
    [ -z "$expect" ] ||
        not_ok "$name: sbx run without $expect fails" "$SBX" run -p workspace-write -C "$proj" --stdin null -- "$@"
}

# make: the build writes out/ in the project, and a tool's cache in $HOME.
cat >"$proj/Makefile" <<'EOF'
all:
	mkdir -p out $(HOME)/.cache/mytool
	echo built > out/result
	echo stamp > $(HOME)/.cache/mytool/stamp
EOF
check_tool make 'rm -rf "$proj/out" "$HOME/.cache/mytool"' "-w $HOME/.cache/mytool" -- make -s

# --write-policy FILE: the same line as a policy file, which works first time
# (sbx run makes the missing ~/.cache/mytool of its write entry, as of a -w);
# the workspace's .sbx/policy.json as its project policy, which widens the
# sandbox only once trusted.  A file that cannot be written is refused
# before anything runs.
rm -rf "$proj/out" "$HOME/.cache/mytool"
learn "$logs/wp.err" -p workspace-write --write-policy "$logs/learned.json" -- make -s >/dev/null
ok "--write-policy: says where it wrote" grep -q "^sbx: learn: wrote $logs/learned.json: sbx run --policy-file" "$logs/wp.err"
not_ok "... the run line has no --write-policy" grep -q -- "--write-policy" <(needed_line "$logs/wp.err")
rm -rf "$proj/out" "$HOME/.cache/mytool"
ok "... sbx run --policy-file FILE works first time" "$SBX" run -C "$proj" --stdin null --policy-file "$logs/learned.json" -- make -s
rm -rf "$proj/out" "$HOME/.cache/mytool"
mkdir -p "$proj/.sbx"
learn "$logs/wp-project.err" -p workspace-write --write-policy "$proj/.sbx/policy.json" -- make -s >/dev/null
ok "... .sbx/policy.json: written as the project policy" grep -q "^sbx: learn: wrote $proj/.sbx/policy.json, the project policy" "$logs/wp-project.err"
is "... its paths in the workspace relative" '{"access":"write","path":"."}' \
    "$(jq -c '.entries[] | select(.path == ".")' "$proj/.sbx/policy.json")"
export XDG_STATE_HOME=$d/state
is "... untrusted, it may not widen the sandbox (125)" 125 \
    "$("$SBX" run -C "$proj" --stdin null -- make -s 2>/dev/null; echo $?)"
"$SBX" trust "$proj/.sbx/policy.json" >/dev/null
ok "... trusted, sbx run with no flag works first time" "$SBX" run -C "$proj" --stdin null -- make -s
unset XDG_STATE_HOME
rm -rf "$proj/.sbx" "$proj/out" "$HOME/.cache/mytool" "$d/state"
is "--write-policy into a missing directory is refused before anything runs (125)" "125 no" \
    "$("$SBX" learn -C "$proj" --write-policy "$d/none/p.json" -- touch "$proj/ran" 2>/dev/null; echo "$? $([ -e "$proj/ran" ] && echo yes || echo no)")"

# git commit in a repository (the default protects .git).
git init -q -b main "$proj"
git -C "$proj" add Makefile && git -C "$proj" commit -q -m one
echo two >>"$proj/Makefile"
base=$(git -C "$proj" rev-parse HEAD)
check_tool git 'git -C "$proj" reset -q --soft "$base"' "--git-write" -- git commit -q -am two
git -C "$proj" reset -q --hard main

# npm install of a local tarball: npm's cache is ~/.npm.
if command -v npm >/dev/null; then
    mkdir -p "$d/pkg"
    printf '{"name":"learnpkg","version":"1.0.0"}\n' >"$d/pkg/package.json"
    echo 'module.exports = 1;' >"$d/pkg/index.js"
    (cd "$d" && npm pack --silent --cache "$d/npm-prep" ./pkg >/dev/null 2>&1)
    rm -rf "$d/npm-prep"
    if [ -f "$d/learnpkg-1.0.0.tgz" ]; then
        check_tool npm 'rm -rf "$proj/node_modules" "$proj/package.json" "$proj/package-lock.json" "$HOME/.npm"' \
            "-w $HOME/.npm" -- npm install --offline --no-audit --no-fund --silent "$d/learnpkg-1.0.0.tgz"
    else
        skip "npm: learned" "npm pack made no tarball here"
    fi
else
    skip "npm: learned" "no npm"
fi

# pip install of a local wheel into a venv in the project: all in the
# workspace (pip caches nothing of a local file), so the line is the policy
# as given.
if python3 -m venv "$d/venv-probe" >/dev/null 2>&1 && "$d/venv-probe/bin/python" -m pip --version >/dev/null 2>&1; then
    rm -rf "$d/venv-probe"
    python3 - "$d/learnwheel-1.0-py3-none-any.whl" <<'EOF'
import sys, zipfile, hashlib, base64
files = {"learnwheel/__init__.py": b"x = 1\n",
         "learnwheel-1.0.dist-info/METADATA": b"Metadata-Version: 2.1\nName: learnwheel\nVersion: 1.0\n",
         "learnwheel-1.0.dist-info/WHEEL": b"Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\nTag: py3-none-any\n"}
record = ""
with zipfile.ZipFile(sys.argv[1], "w") as z:
    for name, data in files.items():
        z.writestr(name, data)
        digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
        record += f"{name},sha256={digest},{len(data)}\n"
    record += "learnwheel-1.0.dist-info/RECORD,,\n"
    z.writestr("learnwheel-1.0.dist-info/RECORD", record)
EOF
    check_tool pip 'rm -rf "$proj/venv"' "" -- \
        sh -c "python3 -m venv venv && venv/bin/pip install -q --no-index --disable-pip-version-check $d/learnwheel-1.0-py3-none-any.whl"
else
    rm -rf "$d/venv-probe"
    skip "pip: learned" "no python3 venv with pip"
fi

# What it will not suggest: a write to /etc is listed, with the reason.
learn "$logs/etc.err" -p workspace-write -- sh -c 'echo x > /etc/sbx-learn-probe' >/dev/null
ok "a write to /etc is not suggested, and says why" \
    grep -q "^sbx: learn: not suggested for create /etc/sbx-learn-probe: -w /etc would open a system directory" \
    "$logs/etc.err"
not_ok "... and /etc on the host has no such file" test -e /etc/sbx-learn-probe

# The policy's denied paths stay hidden in a learning run, as in its own.
mkdir -p "$HOME/secret" && echo key >"$HOME/secret/id"
is "a denied directory is empty in the learning run" "" \
    "$("$SBX" learn -p workspace-write --deny "$HOME/secret" --stdin null -- sh -c "ls -A '$HOME/secret'; cat '$HOME/secret/id'" 2>/dev/null)"
is "a denied file reads as empty" "" \
    "$("$SBX" learn -p workspace-write --deny "$HOME/secret/id" --stdin null -- cat "$HOME/secret/id" 2>/dev/null)"
is "... and is there to read without the deny (the probe sees it)" "key" \
    "$("$SBX" learn -p workspace-write --stdin null -- cat "$HOME/secret/id" 2>/dev/null)"
rm -rf "$HOME/secret"

# The host's device nodes are no layer: only /dev/null is written, as in
# the policy's own view.
not_ok "a device node other than /dev/null is not written" \
    "$SBX" learn -p workspace-write --stdin null -- sh -c 'echo x > /dev/zero'
ok "... /dev/null is" "$SBX" learn -p workspace-write --stdin null -- sh -c 'echo x > /dev/null'

# The network, by name through sbx's proxy: each name the policy does not
# allow is refused and recorded, through the proxy variables and by a raw
# connect (transparent TCP) alike; the line allows the names, never -n full,
# and drops a -n restricted given (an allowlist is -n limited's network).
# Names under .invalid never resolve (RFC 6761): refused by name first.
learn "$logs/net.err" -p workspace-write -n restricted -- sh -c \
    "curl -sS -f --noproxy '' -o /dev/null http://fetch.invalid/; bash -c 'exec 3<>/dev/tcp/raw.invalid/7000'" \
    >/dev/null
line=$(needed_line "$logs/net.err")
case " $line " in
    *" -p workspace-write --allow-domain fetch.invalid --allow-domain raw.invalid -- "*)
        _tap_result ok "a name through the proxy and one by a raw connect: --allow-domain each" ;;
    *) _tap_result fail "a name through the proxy and one by a raw connect: --allow-domain each" "$(cat "$logs/net.err")" ;;
esac
case " $line " in
    *" -n "*) _tap_result fail "... and no -n (restricted dropped, never full)" "$line" ;;
    *) _tap_result ok "... and no -n (restricted dropped, never full)" ;;
esac
# A name that answers, on an address of a network namespace made for this
# check (its own /etc/hosts names learn.test), never the machine's real
# ones; root only (unshare).  The address is allowed as the user would
# (the proxy refuses a host's own address unless allowed); the name is what
# is learned.  --let-connect lets it through in the learning run.
if [ "$(id -u)" = 0 ] && command -v unshare >/dev/null && command -v ip >/dev/null && [ -x /usr/bin/python3 ]; then
    printf '127.0.0.1 localhost\n203.0.113.7 learn.test\n' >"$d/hosts"
    chmod 644 "$d/hosts"
    cat >"$logs/netns.sh" <<SH
mount --make-rprivate / && mount --bind "$d/hosts" /etc/hosts && ip link set lo up &&
    ip addr add 203.0.113.7/32 dev lo || exit 1
/usr/bin/python3 -c '
import http.server, os, sys
class H(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        self.send_response(200); self.send_header("Content-Length", "6"); self.end_headers(); self.wfile.write(b"hello\n")
    def log_message(self, *a): pass
s = http.server.HTTPServer(("0.0.0.0", 0), H)
open(sys.argv[1] + ".tmp", "w").write(str(s.server_address[1])); os.rename(sys.argv[1] + ".tmp", sys.argv[1])
s.serve_forever()' "$logs/port" &
while [ ! -e "$logs/port" ]; do sleep 0.01; done
get="curl -sS -f --noproxy '' http://learn.test:\$(cat "$logs/port")/"
cd "$proj"
echo "refused: \$("$SBX" learn -p workspace-write --allow-domain 203.0.113.7 --stdin null -- sh -c "\$get" 2>"$logs/refused.err")"
echo "let through: \$("$SBX" learn -p workspace-write --allow-domain 203.0.113.7 --let-connect --stdin null -- sh -c "\$get" 2>"$logs/let.err")"
line=\$(sed -n 's/^sbx: learn: it needs: //p' "$logs/let.err")
case "\$line" in *" --allow-domain 203.0.113.7 --stdin null --allow-domain learn.test -- "*) echo "line: the name" ;; *) echo "line: \$line" ;; esac
echo "the line: \$(eval "\$line" 2>&1)"
echo "without: \$("$SBX" run -p workspace-write --allow-domain 203.0.113.7 --stdin null -- sh -c "\$get" 2>/dev/null)"
kill %1
SH
    out=$(unshare -n -m bash "$logs/netns.sh" 2>&1)
    is "a name that answers: refused in the learning run, let through with --let-connect; the line works first time, the policy without it does not" \
        "refused: 
let through: hello
line: the name
the line: hello
without: " "$out"
    ok "... the refused one's line names it too" grep -q -- "--allow-domain learn.test -- " "$logs/refused.err"
else
    skip "a name that answers: refused, let through with --let-connect, the line works" "needs root (unshare -n -m), ip and python3"
    skip "... the refused one's line names it too" "needs root"
fi
# A socket to the host's loopback is never suggested, --let-connect or not:
# said once, with the reason (the proxy refuses the address).
if [ -x /usr/bin/python3 ]; then
    /usr/bin/python3 -c '
import http.server, os, sys
s = http.server.HTTPServer(("127.0.0.1", 0), http.server.BaseHTTPRequestHandler)
open(sys.argv[1] + ".tmp", "w").write(str(s.server_address[1])); os.rename(sys.argv[1] + ".tmp", sys.argv[1])
s.serve_forever()' "$logs/host-port" &
    host_server=$!
    eventually test -e "$logs/host-port"
    port=$(cat "$logs/host-port")
    learn "$logs/loopback.err" -p workspace-write --let-connect -- curl -sS -f --noproxy '' -o /dev/null \
        "http://127.0.0.1:$port/" >/dev/null
    kill "$host_server"
    is "the host's loopback: not suggested, once, with why" \
        "sbx: learn: not suggested for connect 127.0.0.1:$port: the suggested flags do not allow it (network limited: the host's 127.0.0.1:$port is out of reach (the sandbox's loopback is its own: only what the command itself listens on answers there))" \
        "$(grep '^sbx: learn: not suggested' "$logs/loopback.err")"
    not_ok "... and the line adds nothing for it" grep -Eq -- "--allow-domain|-n full" <(needed_line "$logs/loopback.err")
else
    skip "the host's loopback: not suggested" "no /usr/bin/python3"
    skip "... and the line adds nothing for it" "no /usr/bin/python3"
fi
not_ok "--let-connect is sbx learn's alone" "$SBX" run --let-connect -- true
out=$("$SBX" learn -p workspace-write -n full --let-connect -- true 2>&1)
is "... and refused under -n full (125), with the cause" \
    "125 sbx: learn: --let-connect: the network is full (the host's), so there is no name to let through; learn under -n restricted or an allowlist to learn the names" \
    "$? $out"

# A learning run is to learn everything at once: past sbx run's 256.
out=$("$SBX" learn -C "$proj" --stdin null -p workspace-write --json -- sh -c \
    'mkdir -p "$HOME/many" && for i in $(seq 1 600); do mkdir "$HOME/many/x$i"; done' 2>/dev/null |
    jq -c '[(.denials | length), .denials_omitted, .explain.added]')
is "601 refused operations all recorded (sbx run keeps 256), the line one flag" \
    "[601,null,[\"-w\",\"$HOME/many\"]]" "$out"

# Nothing to learn: the policy as given lets the command run.
learn "$logs/none.err" -p workspace-write -- true
is "nothing refused: the line is the invocation as given" \
    "sbx: learn: it needs: $SBX run -C $proj --stdin null -p workspace-write -- true
sbx: learn: the policy refused nothing" "$(cat "$logs/none.err")"

# Refusals: no sandbox to learn from; an approval flow.
is "danger-full-access is refused (125)" 125 "$("$SBX" learn -p danger-full-access -- true 2>/dev/null; echo $?)"
ok "... naming the cause" sh -c "'$SBX' learn -p danger-full-access -- true 2>&1 | grep -q '^sbx: learn: -p danger-full-access sandboxes no files'"
is "-a on-request is refused (125)" 125 "$("$SBX" learn -a on-request -- true 2>/dev/null; echo $?)"
is "--minimal without --reads is refused (125)" 125 \
    "$("$SBX" learn -p workspace-write --minimal -- true 2>/dev/null; echo $?)"

done_testing
