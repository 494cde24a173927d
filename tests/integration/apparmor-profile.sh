#!/usr/bin/env bash
# The helper's AppArmor profile (apparmor/sbx-helper.in, as meson configured
# it), checked by apparmor_parser without loading it (-Q: skip the kernel
# load; -K: no cache): it parses, it is named sbx-helper and attaches to the
# helper's installed path, and it builds the same structure (an unconfined
# profile whose one rule is `userns,`) as the profiles Ubuntu ships for the
# programs that need user namespaces (chrome, code: AppArmor 4's
# profiles/apparmor.d).  This machine's kernel has no AppArmor: the
# profile's effect is not run here (docs/install.md, "Ubuntu's AppArmor
# restriction").
#   SBX_APPARMOR_PROFILE_BUILT  the configured profile (meson)
#   SBX_HELPER_INSTALLED        the helper's installed path (meson)
#   SBX_APPARMOR_PARSER         an apparmor_parser command (.ci/fetch-apparmor:
#                               Debian 13's 4.1); else apparmor_parser on PATH
#   SBX_APPARMOR_D              its apparmor.d (abi/, tunables/, the
#                               reference profiles); else /etc/apparmor.d
source "$(dirname "$0")/lib.sh"

profile=$SBX_APPARMOR_PROFILE_BUILT
parser=${SBX_APPARMOR_PARSER:-$(command -v apparmor_parser || command -v /sbin/apparmor_parser || true)}
base=${SBX_APPARMOR_D:-/etc/apparmor.d}

is "the profile names the helper's installed path, unconfined" 1 \
    "$(grep -c "^profile sbx-helper $SBX_HELPER_INSTALLED flags=(unconfined) {\$" "$profile")"

version=$([ -n "$parser" ] && $parser --version 2>/dev/null | sed -n 's/^AppArmor parser version \([0-9.]*\).*/\1/p')
if [ -z "$parser" ]; then
    reason="no apparmor_parser (install Debian's apparmor package 4.x, or run .ci/fetch-apparmor and set SBX_APPARMOR_PARSER)"
elif [ "${version%%.*}" -lt 4 ] 2>/dev/null || [ -z "$version" ]; then
    reason="apparmor_parser ${version:-of unknown version} predates AppArmor 4, which brought the userns rule (Debian 12 has 3.0.8; .ci/fetch-apparmor fetches Debian 13's 4.1)"
elif [ ! -e "$base/abi/4.0" ] || [ ! -e "$base/tunables/global" ]; then
    reason="$base has no abi/4.0 or tunables/global (set SBX_APPARMOR_D)"
else
    reason=
fi
checks=("it parses (apparmor_parser -Q -K)" "its one profile is named sbx-helper"
    "it builds as Ubuntu's own unconfined userns profiles do" "a broken copy is refused (the parser really parses)")
if [ -n "$reason" ]; then
    for c in "${checks[@]}"; do skip "$c" "$reason"; done
    done_testing
    exit
fi

parse() { $parser --base="$base" -Q -K "$@"; }
dir=$(scratch)
ok "${checks[0]}" parse "$profile"
is "${checks[1]}" "sbx-helper" "$($parser --base="$base" -N "$profile" 2>/dev/null)"
# The structure the parser built (--debug), beside that of a profile Ubuntu
# ships: the same but for the name.
reference=
for r in chrome code; do [ -f "$base/$r" ] && grep -q 'flags=(unconfined)' "$base/$r" && reference=$base/$r && break; done
if [ -n "$reference" ]; then
    parse --debug "$profile" 2>/dev/null | grep -v '^Name:' >"$dir/ours"
    parse --debug "$reference" 2>/dev/null | grep -v '^Name:' >"$dir/theirs"
    if grep -qx 'userns,' "$dir/ours" && cmp -s "$dir/ours" "$dir/theirs"; then
        ok "${checks[2]} ($(basename "$reference"))" true
    else
        not_ok "${checks[2]} ($(basename "$reference"))" true
        diff "$dir/ours" "$dir/theirs" | sed 's/^/# /'
    fi
else
    skip "${checks[2]}" "no chrome or code profile in $base to compare with"
fi
sed 's/^  userns,$/  userns, not_a_rule,/' "$profile" >"$dir/broken"
if parse "$dir/broken" >"$dir/broken.out" 2>&1; then
    not_ok "${checks[3]}" true
else
    ok "${checks[3]}" grep -q 'syntax error' "$dir/broken.out"
fi
done_testing
