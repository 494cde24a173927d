#!/usr/bin/env bash
# Configuration (issue 35): the user's defaults in $XDG_CONFIG_HOME/sbx and
# the project policy in .sbx/policy.json, with real runs: a project policy
# may only narrow unless trusted by its exact bytes; nothing the sandboxed
# command can write decides anything outside the sandbox (each attack checked
# against a control that shows the check can fail); --no-config; origins;
# --relative round trips.
. "$(dirname "$0")/lib.sh"
require_helper

ws=$(scratch)
cfg=$(scratch)
state=$(scratch)
export XDG_CONFIG_HOME=$cfg XDG_STATE_HOME=$state
mkdir -p "$cfg/sbx" "$ws/repo/src" "$ws/repo/.sbx"
cd "$ws/repo" || exit 1

# One line on stderr starting with "sbx: ", exit 125, and the marker not made.
refuses() {
    local desc=$1 want=$2; shift 2
    local err status
    rm -f "$ws/marker"
    "$@" >/dev/null 2>"$ws/err"; status=$?
    err=$(cat "$ws/err")
    if [ "$status" = 125 ] && [ "$(printf '%s\n' "$err" | wc -l)" = 1 ] && [[ $err == "sbx: "* ]] &&
        [[ $err == *"$want"* ]] && [ ! -e "$ws/marker" ]; then
        _tap_result ok "$desc"
    else
        _tap_result fail "$desc" "status $status, stderr '$err' (wanted '$want'), marker $([ -e "$ws/marker" ] && echo made || echo absent)"
    fi
}
mark="touch $ws/marker"

# --- The user's config -------------------------------------------------------
echo '{"mode": "workspace-write"}' >"$cfg/sbx/config.json"
rm -f made
ok "the user config's mode applies: the workspace is writable" "$SBX" run -- touch made
not_ok "control: with --no-config the default read-only mode refuses that write" "$SBX" run --no-config -- touch made2
ok "sbx policy says the mode came from the user config" \
    grep -q "mode  *user config $cfg/sbx/config.json" <<<"$("$SBX" policy)"
ok "sbx policy says the network is the default" grep -q "network  *built-in default" <<<"$("$SBX" policy)"
ok "sbx policy says a flag came from the command line" \
    grep -q "network  *command line" <<<"$("$SBX" policy -n limited)"
echo '{"mode": "workspace-write",' >"$cfg/sbx/config.json"
refuses "a malformed user config is refused, nothing runs" "$cfg/sbx/config.json: " "$SBX" run -- sh -c "$mark"
echo '{"mode": "workspace-write", "colour": 1}' >"$cfg/sbx/config.json"
refuses "an unknown key in the user config is refused" "unknown key 'colour'" "$SBX" run -- sh -c "$mark"
echo '{"mode": "workspace-write"}' >"$cfg/sbx/config.json"

# --- A project policy that narrows --------------------------------------------
"$SBX" policy --no-config -p workspace-write --deny src --relative >.sbx/policy.json
ok "--relative names the workspace's paths relative to it" grep -q '"path": "src"' .sbx/policy.json
not_ok "--relative leaves out the workspace" grep -q '"workspace"' .sbx/policy.json
not_ok "a narrowing project policy applies: a write it denies is refused" "$SBX" run -- sh -c 'echo x >src/f'
ok "... while the rest of the workspace stays writable" "$SBX" run -- touch made3
ok "control: without it (--no-config) that write succeeds" "$SBX" run --no-config -p workspace-write -- sh -c 'echo x >src/f'
ok "sbx policy says the project policy is not trusted and may only narrow" \
    grep -q "project policy $ws/repo/.sbx/policy.json (not trusted: it may only narrow)" <<<"$("$SBX" policy)"
ok "sbx policy says where the entries came from" grep -q "entries  *project policy $ws/repo/.sbx/policy.json" \
    <<<"$("$SBX" policy)"

# --- A project policy that widens ---------------------------------------------
"$SBX" policy --no-config -p workspace-write -n full --relative >.sbx/policy.json
refuses "a widening project policy is refused with the fix, nothing runs" \
    "network full (without it: restricted): a project policy may only narrow the sandbox unless you trust it; review it, then run 'sbx trust $ws/repo/.sbx/policy.json'" \
    "$SBX" run -- sh -c "$mark"
refuses "sbx policy refuses it too" "sbx trust" "$SBX" policy
ok "--no-config ignores it" "$SBX" run --no-config -- true
is "a flag may widen past the user's config and a project policy: -n full given, nothing to refuse" "" \
    "$("$SBX" run -n full -- sh -c 'echo $SBX_SANDBOX_NETWORK_DISABLED')"
ok "sbx trust trusts it" "$SBX" trust
ok "the trust store holds its hash, as sha256sum prints it" \
    grep -qx "$(sha256sum .sbx/policy.json | cut -d' ' -f1)  $ws/repo/.sbx/policy.json" "$state"/sbx/trust/*
is "once trusted it applies: the network is full" "" "$("$SBX" run -- sh -c 'echo $SBX_SANDBOX_NETWORK_DISABLED')"
ok "sbx policy says it is trusted" grep -q "(trusted)" <<<"$("$SBX" policy)"
echo " " >>.sbx/policy.json
refuses "edited, it is untrusted again, and the message says it changed" "(it changed since you trusted it)" \
    "$SBX" run -- sh -c "$mark"
"$SBX" trust >/dev/null
ok "trusted again after review" "$SBX" run -- true
ok "sbx trust --revoke" "$SBX" trust --revoke
ok "sbx trust makes a missing state directory (0700)" env XDG_STATE_HOME="$ws/fresh/state" "$SBX" trust
is "... of mode 0700" 700 "$(stat -c %a "$ws/fresh/state/sbx/trust")"
refuses "revoked, it is refused again" "sbx trust" "$SBX" run -- sh -c "$mark"

# --- Bad project policies: one line, exit 125, nothing runs --------------------
bad() {
    printf '%s\n' "$2" >.sbx/policy.json
    refuses "$1" "$3" "$SBX" run -- sh -c "$mark"
}
bad "malformed JSON" '{"mode": ' ".sbx/policy.json: not valid JSON"
bad "an unknown key" '{"colour": 1}' "unknown key 'colour'"
bad "a wrong type" '{"network": 1}' "key 'network': expected a string"
bad "an absolute path inside the workspace" '{"entries": [{"path": "'"$ws"'/repo/src", "access": "deny"}]}' \
    "is inside the workspace; a project policy names it relative to the workspace ('src')"
bad "a path escaping via .." '{"entries": [{"path": "../x", "access": "deny"}]}' "holds '..'"
ln -s / "$ws/repo/out"
bad "a path escaping through a symlink" '{"writable_roots": ["out/etc"]}' "leads out of the workspace (to /etc)"
bad "the workspace key" '{"workspace": "."}' "key 'workspace': not in a project policy"
rm -f "$ws/repo/out" .sbx/policy.json

# --- --relative round trips as a project policy --------------------------------
mkdir -p "$ws/rt/src" "$ws/rt/.sbx"
cd "$ws/rt" || exit 1
flags=(-p workspace-write --deny src --read-only docs --limit-cpu 30 -n limited)
"$SBX" policy --no-config "${flags[@]}" --relative >.sbx/policy.json
"$SBX" trust >/dev/null
is "sbx policy --relative, read back as the project policy, gives the same canonical policy" \
    "$("$SBX" policy --no-config --json "${flags[@]}")" "$(XDG_CONFIG_HOME=$ws/none "$SBX" policy --json)"
cd "$ws/repo" || exit 1

# --- Attacks: nothing the command can write decides anything outside it -------
# The workspace is $HOME, which holds the user config, the trust store and a
# trusted project policy.
home=$(scratch)
mkdir -p "$home/.config/sbx" "$home/.local/state" "$home/.sbx"
echo '{"network": "restricted"}' >"$home/.config/sbx/config.json"
cd "$home" || exit 1
export XDG_CONFIG_HOME=$home/.config XDG_STATE_HOME=$home/.local/state
"$SBX" policy --no-config -p workspace-write --relative >.sbx/policy.json
"$SBX" trust >/dev/null
record=$(echo "$home"/.local/state/sbx/trust/*)
attack() {  # DESC FILE [CONTROL FLAGS...]: the command cannot change FILE; with the control flags it can
    local desc=$1 file=$2; shift 2
    local before
    before=$(sha256sum "$file")
    not_ok "attack: $desc" "$SBX" run -p workspace-write -- sh -c "echo '{}' >'$file'"
    is "attack: $desc: unchanged" "$before" "$(sha256sum "$file")"
    ok "control: with $* the same write succeeds" "$SBX" run -p workspace-write "$@" -- sh -c "echo '{}' >'$file'"
}
ok "the workspace (\$HOME) is writable" "$SBX" run -p workspace-write -- touch "$home/made"
attack "the command cannot write the user config" "$home/.config/sbx/config.json" -w "$home/.config/sbx"
echo '{"network": "restricted"}' >"$home/.config/sbx/config.json"
attack "the command cannot write the trust store" "$record" -w "$home/.local/state/sbx"
"$SBX" trust >/dev/null
attack "the command cannot write .sbx/policy.json" "$home/.sbx/policy.json" --unprotect .sbx
not_ok "attack: nor create a new trust record" "$SBX" run -p workspace-write -- touch "$home/.local/state/sbx/trust/new"
rm -rf "$home/.config/sbx"
not_ok "attack: nor create a missing user config" "$SBX" run -p workspace-write -- \
    sh -c "mkdir -p '$home/.config/sbx' && echo '{}' >'$home/.config/sbx/config.json'"
not_ok "... which is not there after the run" test -e "$home/.config/sbx/config.json"

done_testing
