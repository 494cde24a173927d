#!/usr/bin/env bash
# Codex 0.169's argv against our helper: every captured example of
# CODEX-HELPER.md section 7, replayed with the paths of a scratch fixture and
# checked by effect (create, read, list probes, and a TCP connect to a host
# listener), then the argv grammar of section 2: --flag=value, no "--",
# options in any order, repeated flags, usage errors, --no-proc.
. "$(dirname "$0")/lib.sh"
require_helper
HELPER=$helper

# --- the fixture of section 7 --------------------------------------------------
S=$(scratch)
HOMED=$S/home           # /home/u
CWS=$HOMED/proj          # /home/u/proj
EXTRA=$S/extra           # /srv/extra
FX=$S/fx                 # /srv/fx
TMPD=$FX/tmpd
mkdir -p "$CWS/docs" "$CWS/secrets" "$EXTRA" "$FX/deny/open" "$FX/out" "$FX/ws/sub" "$TMPD"
echo doc > "$CWS/docs/readme.md"
echo key > "$CWS/secrets/key"
echo TOKEN=1 > "$CWS/a.env"
echo secret > "$FX/deny/secret.txt"
echo open > "$FX/deny/open/file"

# A listener on the host's loopback; its port in $S/port once it listens.
python3 -c '
import os, socket, sys
s = socket.socket()
s.bind(("127.0.0.1", 0))
s.listen(64)
with open(sys.argv[1] + ".tmp", "w") as f:
    f.write(str(s.getsockname()[1]))
os.rename(sys.argv[1] + ".tmp", sys.argv[1])
while True:
    c, _ = s.accept()
    c.close()
' "$S/port" &
listener=$!
trap 'kill "$listener" 2>/dev/null; _cleanup_scratch' EXIT
eventually test -s "$S/port" || { echo "Bail out! the host listener did not start"; exit 1; }
PORT=$(cat "$S/port")

# Section 7's paths, as captured, and the scratch paths that replace them.
subst() {
    sed -e "s|/home/u/proj|$CWS|g" -e "s|/home/u|$HOMED|g" -e "s|/srv/extra|$EXTRA|g" -e "s|/srv/fx|$FX|g" <<<"$1"
}

# --- the probe: run inside the sandbox over labelled paths ------------------------
# rw: a directory that lists and takes a new file, a file that reads and opens
# for appending; ro: readable but not writable; none: exists, but cannot be
# listed or read; absent: does not exist (and cannot be created); absent+w:
# does not exist but can be created.  net:PORT: net or nonet.
PROBE='
cls() {
  p=$1
  if [ -d "$p" ]; then
    if ls "$p" >/dev/null 2>&1; then
      if ( : > "$p/.compat-probe" ) 2>/dev/null; then rm -f "$p/.compat-probe"; echo rw; else echo ro; fi
    else echo none; fi
  elif [ -e "$p" ] || [ -L "$p" ]; then
    if cat "$p" >/dev/null 2>&1; then
      if ( : >> "$p" ) 2>/dev/null; then echo rw; else echo ro; fi
    else echo none; fi
  else
    if ( : > "$p" ) 2>/dev/null; then rm -f "$p"; echo absent+w; else echo absent; fi
  fi
}
for p in "$@"; do
  case $p in
    net:*) if bash -c "exec 3<>/dev/tcp/127.0.0.1/${p#net:}" 2>/dev/null; then echo "$p=net"; else echo "$p=nonet"; fi ;;
    *) echo "$p=$(cls "$p")" ;;
  esac
done'

declare -A P=(
    [cws]=$CWS [docs]=$CWS/docs [docs/readme]=$CWS/docs/readme.md [secrets]=$CWS/secrets
    [secrets/key]=$CWS/secrets/key [a.env]=$CWS/a.env [.git]=$CWS/.git [extra]=$EXTRA [extra/.git]=$EXTRA/.git
    [out]=$FX/out [deny]=$FX/deny [deny/secret]=$FX/deny/secret.txt [deny/open]=$FX/deny/open
    [deny/open/file]=$FX/deny/open/file [sub]=$FX/ws/sub [/tmp]=/tmp [tmpdir]=$TMPD [net]=net:$PORT
)
declare -A got=()
rc=0
err=""
# probe HELPER-ARGS... (up to and including "--"): runs the probe over every
# labelled path in $CWS (or $PROBE_CWD), with the environment as given
# (TMPDIR unset unless PROBE_TMPDIR is set).
probe() {
    got=()
    local out line
    local -a env_args=(-u TMPDIR)
    [ -n "${PROBE_TMPDIR:-}" ] && env_args=(TMPDIR="$PROBE_TMPDIR")
    out=$(cd "${PROBE_CWD:-$CWS}" && env "${env_args[@]}" "$HELPER" "$@" /bin/sh -c "$PROBE" sh "${P[@]}" 2>"$S/stderr")
    rc=$?
    err=$(head -c 400 "$S/stderr")
    while IFS= read -r line; do
        [ -n "$line" ] && got[${line%%=*}]=${line#*=}
    done <<<"$out"
}
# expect NAME LABEL=CLASS...
expect() {
    local name=$1 pair label class
    shift
    for pair in "$@"; do
        label=${pair%%=*}
        class=${pair#*=}
        is "$name: $label is $class" "$class" "${got[${P[$label]}]:-<no result: exit $rc: $err>}"
    done
}
# The common flags, as Codex sends them: P == C == $CWS.
cwd_flags=(--sandbox-policy-cwd "$CWS" --command-cwd "$CWS")

# --- section 7, examples 1 to 16 ----------------------------------------------
EX1='{"type":"managed","file_system":{"type":"restricted","entries":[{"path":{"type":"special","value":{"kind":"root"}},"access":"read"}]},"network":"restricted"}'
EX2='{"type":"managed","file_system":{"type":"restricted","entries":[{"path":{"type":"special","value":{"kind":"root"}},"access":"read"},{"path":{"type":"path","path":"/home/u/proj"},"access":"write"},{"path":{"type":"special","value":{"kind":"slash_tmp"}},"access":"write"},{"path":{"type":"special","value":{"kind":"tmpdir"}},"access":"write"},{"path":{"type":"path","path":"/home/u/proj/.git"},"access":"read","missing_path_behavior":"skip"},{"path":{"type":"path","path":"/home/u/proj/.agents"},"access":"read","missing_path_behavior":"skip"},{"path":{"type":"path","path":"/home/u/proj/.codex"},"access":"read","missing_path_behavior":"skip"},{"path":{"type":"path","path":"/home/u/proj/.aws"},"access":"read","missing_path_behavior":"skip"}]},"network":"restricted"}'
EX4='{"type":"managed","file_system":{"type":"restricted","entries":[{"path":{"type":"special","value":{"kind":"root"}},"access":"read"},{"path":{"type":"path","path":"/home/u/proj"},"access":"write"},{"path":{"type":"path","path":"/srv/extra"},"access":"write"},{"path":{"type":"special","value":{"kind":"slash_tmp"}},"access":"write"},{"path":{"type":"special","value":{"kind":"tmpdir"}},"access":"write"},{"path":{"type":"path","path":"/srv/extra"},"access":"write"},{"path":{"type":"path","path":"/home/u/proj/.git"},"access":"read","missing_path_behavior":"skip"},{"path":{"type":"path","path":"/srv/extra/.git"},"access":"read","missing_path_behavior":"skip"},{"path":{"type":"path","path":"/home/u/proj/.agents"},"access":"read","missing_path_behavior":"skip"},{"path":{"type":"path","path":"/srv/extra/.agents"},"access":"read","missing_path_behavior":"skip"},{"path":{"type":"path","path":"/home/u/proj/.codex"},"access":"read","missing_path_behavior":"skip"},{"path":{"type":"path","path":"/srv/extra/.codex"},"access":"read","missing_path_behavior":"skip"},{"path":{"type":"path","path":"/home/u/proj/.aws"},"access":"read","missing_path_behavior":"skip"},{"path":{"type":"path","path":"/srv/extra/.aws"},"access":"read","missing_path_behavior":"skip"}]},"network":"restricted"}'
SLASH_TMP_ENTRY='{"path":{"type":"special","value":{"kind":"slash_tmp"}},"access":"write"},'
TMPDIR_ENTRY='{"path":{"type":"special","value":{"kind":"tmpdir"}},"access":"write"},'
EX5=${EX2/'"network":"restricted"'/'"network":"enabled"'}
EX6=${EX2/"$SLASH_TMP_ENTRY"/}
EX7=${EX2/"$TMPDIR_ENTRY"/}
EX8=${EX6/"$TMPDIR_ENTRY"/}
EX10=${EX2//\/home\/u\/proj/\/srv\/fx\/ws\/sub}
EX11='{"type":"managed","file_system":{"type":"restricted","entries":[{"path":{"type":"path","path":"/srv/fx/deny"},"access":"deny"},{"path":{"type":"path","path":"/srv/fx/deny/open"},"access":"write"},{"path":{"type":"glob_pattern","pattern":"/home/u/proj/**/*.env"},"access":"deny"},{"path":{"type":"path","path":"/home/u/proj"},"access":"write"},{"path":{"type":"path","path":"/home/u/proj/docs"},"access":"read"},{"path":{"type":"special","value":{"kind":"root"}},"access":"read"}]},"network":"restricted"}'
EX12='{"type":"managed","file_system":{"type":"restricted","entries":[{"path":{"type":"special","value":{"kind":"minimal"}},"access":"read"},{"path":{"type":"path","path":"/home/u/proj"},"access":"write"},{"path":{"type":"path","path":"/home/u/proj/secrets"},"access":"deny"},{"path":{"type":"special","value":{"kind":"slash_tmp"}},"access":"write"},{"path":{"type":"special","value":{"kind":"tmpdir"}},"access":"write"},{"path":{"type":"path","path":"/home/u/.codex/tmp/arg0-linux/codex-arg0BQHpDn"},"access":"read"}],"glob_scan_max_depth":3},"network":"enabled"}'
EX13='{"type":"managed","file_system":{"type":"restricted","entries":[{"path":{"type":"path","path":"/srv/extra"},"access":"write"},{"path":{"type":"special","value":{"kind":"root"}},"access":"read"},{"path":{"type":"path","path":"/home/u/.ssh"},"access":"deny"}]},"network":"restricted"}'
EX14='{"type":"managed","file_system":{"type":"restricted","entries":[{"path":{"type":"path","path":"/srv/fx/deny"},"access":"deny"},{"path":{"type":"special","value":{"kind":"root"}},"access":"read"},{"path":{"type":"special","value":{"kind":"slash_tmp"}},"access":"write"},{"path":{"type":"special","value":{"kind":"tmpdir"}},"access":"write"},{"path":{"type":"path","path":"/home/u/proj"},"access":"write"}]},"network":"restricted"}'
EX15='{"type":"managed","file_system":{"type":"restricted","entries":[{"path":{"type":"special","value":{"kind":"root"}},"access":"read"},{"path":{"type":"special","value":{"kind":"slash_tmp"}},"access":"write"},{"path":{"type":"special","value":{"kind":"tmpdir"}},"access":"write"},{"path":{"type":"path","path":"/home/u/proj"},"access":"write"}]},"network":"enabled"}'
MANAGED_NET='{"loopbackPorts":[33423,37243],"allowLocalBinding":false,"allowUnixSockets":[],"dangerouslyAllowAllUnixSockets":false}'
is "example 6 drops the slash_tmp entry" "1" "$([ "$EX6" != "$EX2" ] && [[ $EX6 != *slash_tmp* ]] && echo 1)"
is "example 7 drops the tmpdir entry" "1" "$([ "$EX7" != "$EX2" ] && [[ $EX7 != *tmpdir* ]] && echo 1)"

# 1. read-only: everything ro, .git absent and not creatable, no network
probe "${cwd_flags[@]}" --permission-profile "$(subst "$EX1")" --
is "example 1 (read-only) runs" "0" "$rc"
expect "example 1" cws=ro docs=ro a.env=ro secrets/key=ro .git=absent extra=ro out=ro deny=ro /tmp=ro net=nonet

# 2. workspace-write: the project rw (all of it), .git an empty ro directory, /tmp rw
probe "${cwd_flags[@]}" --permission-profile "$(subst "$EX2")" --
is "example 2 (workspace-write) runs" "0" "$rc"
expect "example 2" cws=rw docs=rw secrets=rw a.env=rw .git=ro /tmp=rw extra=ro out=ro deny=ro tmpdir=ro net=nonet

# 3. the same JSON with TMPDIR set: $TMPDIR rw too
PROBE_TMPDIR=$TMPD probe "${cwd_flags[@]}" --permission-profile "$(subst "$EX2")" --
expect "example 3 (TMPDIR)" cws=rw /tmp=rw tmpdir=rw extra=ro net=nonet

# 4. writable_roots: EXTRA rw, its protected names too
probe "${cwd_flags[@]}" --permission-profile "$(subst "$EX4")" --
is "example 4 (writable_roots) runs" "0" "$rc"
expect "example 4" cws=rw extra=rw extra/.git=ro .git=ro /tmp=rw out=ro net=nonet

# 5. network_access: the host listener is reachable
probe "${cwd_flags[@]}" --permission-profile "$(subst "$EX5")" --
expect "example 5 (network enabled)" cws=rw .git=ro extra=ro net=net

# 6. exclude_slash_tmp (TMPDIR set): /tmp ro, TMPDIR rw
PROBE_TMPDIR=$TMPD probe "${cwd_flags[@]}" --permission-profile "$(subst "$EX6")" --
expect "example 6 (exclude_slash_tmp)" cws=rw /tmp=ro tmpdir=rw

# 7. exclude_tmpdir_env_var (TMPDIR set): /tmp rw, TMPDIR ro
PROBE_TMPDIR=$TMPD probe "${cwd_flags[@]}" --permission-profile "$(subst "$EX7")" --
expect "example 7 (exclude_tmpdir_env_var)" cws=rw /tmp=rw tmpdir=ro

# 8. both exclusions
PROBE_TMPDIR=$TMPD probe "${cwd_flags[@]}" --permission-profile "$(subst "$EX8")" --
expect "example 8 (both exclusions)" cws=rw /tmp=ro tmpdir=ro

# 9. --use-legacy-landlock: Codex 0.169 panics (101); ours enforces as example 2
probe "${cwd_flags[@]}" --permission-profile "$(subst "$EX2")" --use-legacy-landlock --
is "example 9 (--use-legacy-landlock) runs, enforced" "0" "$rc"
expect "example 9" cws=rw .git=ro /tmp=rw extra=ro out=ro net=nonet

# 10. -C $FX/ws/sub: both cwd flags there, the helper started there
PROBE_CWD=$FX/ws/sub probe --sandbox-policy-cwd "$FX/ws/sub" --command-cwd "$FX/ws/sub" \
    --permission-profile "$(subst "$EX10")" --
expect "example 10 (-C elsewhere)" sub=rw /tmp=rw cws=ro extra=ro
is "example 10: the command starts in the -C directory" "$FX/ws/sub" \
    "$(cd "$FX/ws/sub" && env -u TMPDIR "$HELPER" --sandbox-policy-cwd "$FX/ws/sub" --command-cwd "$FX/ws/sub" \
        --permission-profile "$(subst "$EX10")" -- pwd 2>&1)"

# 11. p1: deny, a writable hole in it, a deny glob, a read-only docs/
probe "${cwd_flags[@]}" --permission-profile "$(subst "$EX11")" --
is "example 11 (p1) runs" "0" "$rc"
# What lies below a denied directory reads as absent (the real 0.169 helper
# gives the same answers for deny/secret, secrets/key and deny/open).
expect "example 11" cws=rw docs=ro docs/readme=ro a.env=none .git=ro deny=none deny/secret=absent \
    deny/open=rw deny/open/file=rw /tmp=ro secrets=rw extra=ro net=nonet

# 12. p2: :minimal, no :root: only the platform set, the project and /tmp
probe "${cwd_flags[@]}" --permission-profile "$(subst "$EX12")" --
is "example 12 (p2, minimal) runs /bin/sh" "0" "$rc"
expect "example 12" cws=rw secrets=none secrets/key=absent docs=rw /tmp=rw extra=absent out=absent deny=absent net=net
top=$(subst "$CWS" | cut -d/ -f2)
allowed=" bin sbin usr etc lib lib64 lib32 libx32 nix run dev proc tmp $top "
listing=$(cd "$CWS" && env -u TMPDIR "$HELPER" "${cwd_flags[@]}" --permission-profile "$(subst "$EX12")" -- \
    /bin/sh -c 'ls -A /' 2>&1)
extra_top=""
for name in $listing; do
    case $allowed in *" $name "*) ;; *) extra_top="$extra_top $name" ;; esac
done
is "example 12: / shows nothing but the platform set, /dev, /proc, /tmp and the way to the project" "" "$extra_top"

# 13. p3: EXTRA rw, the project ro (the cwd is not implied), missing ~/.ssh ignored
probe "${cwd_flags[@]}" --permission-profile "$(subst "$EX13")" --
is "example 13 (p3) runs" "0" "$rc"
expect "example 13" extra=rw cws=ro /tmp=ro net=nonet

# 14. p4 (extends :workspace): as 2, and deny
probe "${cwd_flags[@]}" --permission-profile "$(subst "$EX14")" --
is "example 14 (p4) runs" "0" "$rc"
expect "example 14" cws=rw .git=ro /tmp=rw deny=none deny/open=absent out=ro net=nonet

# 15. --managed-network: proxy-only (helper-managed-network.sh tests the bridge
# to the proxy itself): filesystem as 2, the host listener out of reach; without
# the proxy variables Codex sets, refused (125) and nothing runs.
HTTP_PROXY=http://127.0.0.1:33423 probe "${cwd_flags[@]}" --permission-profile "$(subst "$EX15")" \
    --managed-network "$MANAGED_NET" --
is "example 15 (--managed-network) runs" "0" "$rc"
expect "example 15" cws=rw /tmp=rw extra=ro out=ro net=nonet
err=$(cd "$CWS" && env -i PATH="$PATH" "$HELPER" "${cwd_flags[@]}" --permission-profile "$(subst "$EX15")" \
    --managed-network "$MANAGED_NET" -- sh -c "echo ran > '$FX/out/ran15'" 2>&1 >/dev/null)
is "example 15 without proxy variables is refused with 125" "125" "$?"
is "example 15 without proxy variables: one line naming the cause" "1" \
    "$(printf '%s\n' "$err" | grep -c '^codex-linux-sandbox: network: --managed-network: no proxy variable')"
is "example 15 without proxy variables: nothing ran" "no" "$([ -e "$FX/out/ran15" ] && echo yes || echo no)"
# Without network_proxy the same JSON comes without --managed-network: host network open.
probe "${cwd_flags[@]}" --permission-profile "$(subst "$EX15")" --
expect "example 15 without --managed-network" cws=rw /tmp=rw extra=ro net=net

# 16. danger-full-access: Codex runs no helper; the profile that says so is "disabled"
probe "${cwd_flags[@]}" --permission-profile '{"type":"disabled"}' --
expect "example 16 (disabled)" out=rw extra=rw cws=rw net=net

# --- other profile types (section 3.2) -----------------------------------------
probe "${cwd_flags[@]}" --permission-profile '{"type":"external","network":"restricted"}' --
expect "external + restricted: the filesystem is the caller's" out=rw net=nonet
probe "${cwd_flags[@]}" --permission-profile '{"type":"managed","file_system":{"type":"unrestricted"},"network":"enabled"}' --
expect "managed + unrestricted" out=rw net=net
probe "${cwd_flags[@]}" \
    --permission-profile '{"type":"managed","file_system":{"type":"restricted","entries":[{"path":{"type":"special","value":{"kind":"root"}},"access":"write"}]},"network":"restricted"}' --
expect "full-disk write" out=rw extra=rw net=nonet
probe "${cwd_flags[@]}" --permission-profile "{\"file_system\":{\"read\":[\"/\"],\"write\":[\"$EXTRA\"]}}" --
expect "the older untagged shape" extra=rw cws=ro net=nonet
probe "${cwd_flags[@]}" --permission-profile \
    "$(subst '{"type":"managed","x":1,"file_system":{"type":"restricted","y":2,"entries":[{"path":{"type":"special","value":{"kind":"root","z":3}},"access":"read","w":4},{"path":{"type":"path","path":"/home/u/proj","v":5},"access":"write"}]},"network":"restricted"}')" --
expect "unknown keys are ignored" cws=rw extra=ro
probe "${cwd_flags[@]}" --permission-profile \
    "$(subst '{"type":"managed","file_system":{"type":"restricted","entries":[{"path":{"type":"special","value":{"kind":"root"}},"access":"read"},{"path":{"type":"path","path":"/srv/fx/missing"},"access":"write"},{"path":{"type":"special","value":{"kind":"project_roots","subpath":"docs"}},"access":"write"}]},"network":"restricted"}')" --
is "a missing writable root is ignored" "0" "$rc"
expect "project_roots with a subpath" docs=rw cws=ro

# --- sbx's own front end takes the same profile (--policy-json, sbx check) ------
# Example 2, copied from section 7: the workspace takes the write, a write
# outside it and into a (missing) .git are refused.
out=$(cd "$CWS" && env -u TMPDIR "$SBX" run --policy-json "$(subst "$EX2")" -- \
    sh -c "echo ws > '$CWS/via-sbx'; echo out > '$FX/out/via-sbx'; echo hook > '$CWS/.git/via-sbx'; exit 3" 2>&1)
is "sbx run --policy-json PROFILE: the command ran, its status passed through" "3" "$?"
is "... the workspace write landed" "ws" "$(cat "$CWS/via-sbx" 2>&1)"
is "... the write outside was refused" "no" "$([ -e "$FX/out/via-sbx" ] && echo yes || echo no)"
is "... the write in .git was refused" "no" "$([ -e "$CWS/.git/via-sbx" ] && echo yes || echo no)"
rm -f "$CWS/via-sbx"
ok "sbx check --policy-json PROFILE: the workspace is writable" \
    sh -c "cd '$CWS' && '$SBX' check --policy-json '$(subst "$EX2")' --write '$CWS/x'"
not_ok "sbx check --policy-json PROFILE: outside is not" \
    sh -c "cd '$CWS' && '$SBX' check --policy-json '$(subst "$EX2")' --write '$FX/out/x'"
printf '%s' "$(subst "$EX13")" > "$S/p3.json"
is "sbx policy --policy-file PROFILE: example 13's mode" "workspace-write" \
    "$(cd "$CWS" && "$SBX" policy --policy-file "$S/p3.json" --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["mode"])')"
out=$(cd "$CWS" && "$SBX" run --policy-json '{"type":"managed","file_system":{"type":"unrestricted"},"network":"enabled","extra":1}' \
    -- sh -c "echo ran > '$FX/out/bad-profile'" 2>&1)
is "a profile with an unknown key: 125" "125" "$?"
is "... one line starting sbx: and naming the key" "1" \
    "$(grep -c "^sbx: --policy-json: invalid permission profile: key 'extra': unknown key" <<<"$out")$(printf '%s\n' "$out" | sed 1d)"
is "... and nothing ran" "no" "$([ -e "$FX/out/bad-profile" ] && echo yes || echo no)"

# --- where sbx's helper followed Codex's (section 9, "Other differences") ------
# The older --sandbox-policy form with a writable root that does not exist:
# left out, as Codex's helper left it (nothing is there to write); not made.
is "--sandbox-policy with a missing writable root runs" "0" \
    "$(cd "$CWS" && env -u TMPDIR "$HELPER" --sandbox-policy-cwd "$CWS" --sandbox-policy \
        "{\"type\":\"workspace-write\",\"writable_roots\":[\"$FX/missing\",\"$EXTRA\"]}" -- \
        sh -c "echo ws > '$CWS/from-policy' && echo extra > '$EXTRA/from-policy'" >/dev/null 2>&1; echo $?)"
is "... its workspace and the root that exists took the writes" "ws extra" \
    "$(cat "$CWS/from-policy" "$EXTRA/from-policy" 2>&1 | tr '\n' ' ' | sed 's/ $//')"
is "... and the missing root was not made" "no" "$([ -e "$FX/missing" ] && echo yes || echo no)"
rm -f "$CWS/from-policy" "$EXTRA/from-policy"

# /dev/shm under a :root read profile: the sandbox's own (private, empty,
# writable), as in Codex's helper; the host's neither seen nor written.
if shm_missing=$(has_dev_shm); then
    tag=sbx-compat-$$-$(id -u)
    echo host > "/dev/shm/$tag-host"
    is "example 1: /dev/shm is the sandbox's own, writable and without the host's files" "x $tag" \
        "$(cd "$CWS" && "$HELPER" "${cwd_flags[@]}" --permission-profile "$(subst "$EX1")" -- \
            sh -c "echo x > /dev/shm/$tag && cat /dev/shm/$tag && ls -A /dev/shm" 2>&1 | tr '\n' ' ' | sed 's/ $//')"
    is "example 1: nothing written there reaches the host's" "<missing> host" \
        "$(cat "/dev/shm/$tag" 2>/dev/null || echo '<missing>') $(cat "/dev/shm/$tag-host")"
    rm -f "/dev/shm/$tag-host" "/dev/shm/$tag"
else
    skip "example 1: /dev/shm is the sandbox's own" "$shm_missing"
fi

# --command-cwd naming a symlink: the command runs in the real path, and
# $PWD says so (as with Codex's helper), also when the caller's PWD names
# the alias.
ln -s ws/sub "$FX/alias"
is "--command-cwd through a symlink: pwd shows the real path" "$FX/ws/sub $FX/ws/sub" \
    "$(cd "$FX/alias" && PWD=$FX/alias "$HELPER" --sandbox-policy-cwd "$FX/alias" --command-cwd "$FX/alias" \
        --permission-profile "$(subst "$EX1")" -- sh -c 'echo "$(pwd) $PWD"' 2>&1)"
rm "$FX/alias"

# Where sbx's helper keeps its own way (docs/codex.md):
# a :minimal profile whose entries do not include the command's directory
# is refused (Codex's helper runs the command in / then), with one line
# naming the cause and the fix; an outer --proxy-route-spec is refused
# (below, with the other inner-stage flags).
MINIMAL_ONLY='{"type":"managed","file_system":{"type":"restricted","entries":[{"path":{"type":"special","value":{"kind":"minimal"}},"access":"read"}]},"network":"restricted"}'
err=$(cd "$CWS" && "$HELPER" "${cwd_flags[@]}" --permission-profile "$MINIMAL_ONLY" -- sh -c 'echo ran' 2>&1)
is ":minimal without the cwd: refused (125)" "125" "$?"
is ":minimal without the cwd: one line naming the directory and the fix" "1" \
    "$(grep -c "^codex-linux-sandbox: cwd: the command's directory $CWS is not in the sandbox: .*; add an entry that reads it" <<<"$err")"

# --- the argv grammar (section 2) ------------------------------------------------
# Example 15's JSON with the network restricted (example 2's own is checked above).
PROFILE=$(subst "${EX15/'"network":"enabled"'/'"network":"restricted"'}")
run() { (cd "$CWS" && env -u TMPDIR "$HELPER" "$@" 2>&1); }
is "--flag=value" "hi" "$(run --sandbox-policy-cwd="$CWS" --command-cwd="$CWS" --permission-profile="$PROFILE" -- echo hi)"
is "no -- before the command" "hi" "$(run "${cwd_flags[@]}" --permission-profile "$PROFILE" echo hi)"
is "options in any order" "hi" \
    "$(run --permission-profile "$PROFILE" --use-legacy-landlock --command-cwd "$CWS" --sandbox-policy-cwd "$CWS" -- echo hi)"
is "the command's arguments are its own after the first non-option" "-x|--no-proc|" \
    "$(run "${cwd_flags[@]}" --permission-profile "$PROFILE" sh -c 'printf "%s|" "$@"' sh -x --no-proc)"
is "--command-cwd is optional" "$CWS" "$(run --sandbox-policy-cwd "$CWS" --permission-profile "$PROFILE" -- pwd)"
is "the command's exit status" "42" "$(run "${cwd_flags[@]}" --permission-profile "$PROFILE" -- sh -c 'exit 42' >/dev/null; \
    (cd "$CWS" && env -u TMPDIR "$HELPER" "${cwd_flags[@]}" --permission-profile "$PROFILE" -- sh -c 'exit 42' 2>/dev/null); echo $?)"
is "--inherit-pid-namespace: the pid namespace stays the sandbox's" "2" \
    "$(run "${cwd_flags[@]}" --permission-profile "$PROFILE" --inherit-pid-namespace -- sh -c 'echo $$')"
help=$("$HELPER" --help 2>&1)
is "--help exits 0" "0" "$?"
is "--help shows the Codex form" "1" "$(grep -c -- '--permission-profile JSON \[--use-legacy-landlock\]' <<<"$help")"
is "-h is --help" "$help" "$("$HELPER" -h 2>&1)"
is "the older --sandbox-policy form still works" "hi" \
    "$(run --sandbox-policy-cwd "$CWS" --sandbox-policy '{"type":"read-only"}' -- echo hi)"
is "the older positional form still works" "hi" "$(run "$CWS" '{"type":"read-only"}' -- echo hi)"

# --no-proc: no fresh /proc; /proc is an empty read-only directory
is "--no-proc: /proc is empty" "" \
    "$(run "${cwd_flags[@]}" --permission-profile "$PROFILE" --no-proc -- sh -c 'ls -A /proc')"
is "--no-proc: /proc cannot be written" "ro" \
    "$(run "${cwd_flags[@]}" --permission-profile "$PROFILE" --no-proc -- sh -c '( : > /proc/x ) 2>/dev/null && echo rw || echo ro')"
is "--no-proc: no process is visible, not even the sandbox's own" "absent" \
    "$(run "${cwd_flags[@]}" --permission-profile "$PROFILE" --no-proc -- sh -c '[ -e /proc/self ] && echo present || echo absent')"
is "--no-proc: the pid namespace stays private" "2" \
    "$(run "${cwd_flags[@]}" --permission-profile "$PROFILE" --no-proc -- sh -c 'echo $$')"
is "--no-proc: stdin from a file and stdout to a file still reach the command" "doc" \
    "$(run "${cwd_flags[@]}" --permission-profile "$PROFILE" --no-proc -- sh -c 'cat > out.txt' < "$CWS/docs/readme.md"; \
      cat "$CWS/out.txt" 2>&1)"
probe "${cwd_flags[@]}" --permission-profile "$PROFILE" --no-proc --
expect "--no-proc keeps the filesystem rules" cws=rw extra=ro /tmp=rw out=ro net=nonet
probe "${cwd_flags[@]}" --permission-profile "$(subst "$EX2")" --no-proc --
expect "--no-proc with example 2" cws=rw .git=ro extra=ro /tmp=rw net=nonet
is "without --no-proc the sandbox has a /proc of its own" "present" \
    "$(run "${cwd_flags[@]}" --permission-profile "$PROFILE" -- sh -c '[ -e /proc/self ] && echo present || echo absent')"

# --- usage errors: 125, one line naming the helper, nothing runs ---------------
n=0
usage_error() {  # DESC PATTERN ARGS... (the command is appended)
    local desc=$1 pattern=$2
    shift 2
    n=$((n + 1))
    local marker="$FX/out/ran-$n" out status
    out=$(cd "$CWS" && "$HELPER" "$@" sh -c "echo ran > '$marker'" 2>&1 >/dev/null)
    status=$?
    is "$desc: exit 125" "125" "$status"
    is "$desc: one line" "1" "$(printf '%s\n' "$out" | wc -l)"
    if [[ $out == "codex-linux-sandbox: "* && $out == *"$pattern"* ]]; then
        _tap_result ok "$desc: the line says why"
    else
        _tap_result fail "$desc: the line says why" "$out"
    fi
    is "$desc: nothing ran" "no" "$([ -e "$marker" ] && echo yes || echo no)"
}
usage_error "unknown option" "unknown option '--bogus'" "${cwd_flags[@]}" --bogus --permission-profile "$PROFILE" --
usage_error "a repeated option" "--sandbox-policy-cwd given more than once" \
    "${cwd_flags[@]}" --sandbox-policy-cwd "$CWS" --permission-profile "$PROFILE" --
usage_error "a repeated option, =value" "--permission-profile given more than once" \
    "${cwd_flags[@]}" --permission-profile "$PROFILE" --permission-profile="$PROFILE" --
usage_error "a repeated flag" "--no-proc given more than once" \
    "${cwd_flags[@]}" --permission-profile "$PROFILE" --no-proc --no-proc --
usage_error "a value for a flag" "--no-proc takes no value" \
    "${cwd_flags[@]}" --permission-profile "$PROFILE" --no-proc=1 --
usage_error "--sandbox-policy and --permission-profile together" "give one policy" \
    "${cwd_flags[@]}" --permission-profile "$PROFILE" --sandbox-policy '{"type":"read-only"}' --
usage_error "missing --sandbox-policy-cwd" "missing --sandbox-policy-cwd" --permission-profile "$PROFILE" --
usage_error "missing --permission-profile" "missing --permission-profile" "${cwd_flags[@]}" --
usage_error "--apply-seccomp-then-exec" "inner stage" "${cwd_flags[@]}" --permission-profile "$PROFILE" \
    --apply-seccomp-then-exec --
usage_error "--proxy-route-spec" "inner stage" "${cwd_flags[@]}" --permission-profile "$PROFILE" \
    --proxy-route-spec '{"routes":[]}' --
usage_error "--verify-fd-mount" "inner stage" "${cwd_flags[@]}" --permission-profile "$PROFILE" \
    --verify-fd-mount 3:/x --
usage_error "--managed-network, bad JSON" "--managed-network: not valid JSON" "${cwd_flags[@]}" \
    --permission-profile "$PROFILE" --managed-network '{"loopbackPorts":' --
usage_error "--version does not exist" "unknown option '--version'" --version "${cwd_flags[@]}" \
    --permission-profile "$PROFILE" --
usage_error "bad profile JSON" "invalid permission profile JSON" "${cwd_flags[@]}" --permission-profile '{"type":' --
usage_error "an invalid profile" "key 'file_system.entries[0].access'" "${cwd_flags[@]}" --permission-profile \
    '{"type":"managed","file_system":{"type":"restricted","entries":[{"path":{"type":"special","value":{"kind":"root"}},"access":"Write"}]},"network":"restricted"}' --
usage_error "a relative path in a profile" "not an absolute path" "${cwd_flags[@]}" --permission-profile \
    '{"type":"managed","file_system":{"type":"restricted","entries":[{"path":{"type":"path","path":"~/x"},"access":"read"}]},"network":"restricted"}' --
usage_error "an unknown key in the older shape" "unknown key" "${cwd_flags[@]}" --permission-profile \
    '{"file_system":{"read":["/"]},"extra":1}' --
out=$(cd "$CWS" && "$HELPER" "${cwd_flags[@]}" --permission-profile 2>&1)
is "a value missing at the end: 125" "125" "$?"
is "a value missing at the end: the line says so" "1" "$(grep -c '^codex-linux-sandbox: .*--permission-profile needs a value' <<<"$out")"
out=$(cd "$CWS" && "$HELPER" "${cwd_flags[@]}" --permission-profile "$PROFILE" -- 2>&1)
is "missing command: 125" "125" "$?"
is "missing command: the line says so" "1" "$(grep -c '^codex-linux-sandbox: .*missing the command' <<<"$out")"

done_testing
