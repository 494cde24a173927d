#!/usr/bin/env bash
# The performance tricks in sbx, each measured with and without it in one
# run (the variants interleaved round by round; medians; the saving per
# launch in us and as a ratio).  The programs in tests/bench/tricks/ are
# compiled here with g++ into a temporary directory (they are not part of
# the meson build); the CLI and seccomp ones compile sbx's own
# src/cli/options.cc and linux-helper/seccomp_gen.cc.
#   (a) starting the command: clone(CLONE_VM|CLONE_VFORK) + exec against
#       fork + exec and posix_spawn, from 3 MiB and 30 MiB of RSS
#   (b) static PIE executables against dynamic and plain -static ones
#   (c) the CLI11 argv pre-filter (Wanted in src/cli/options.cc)
#   (d) the seccomp filter built at build time, as a binary tree
#   (e) F_SETPIPE_SZ on the output pipe
# Figures, not assertions.  Needs g++, libseccomp-dev, libfmt-dev, CLI11,
# nlohmann-json (the build's own dependencies).
#
#   tests/bench/tricks.sh        (ROUNDS=15 rounds of every comparison)
set -eu
src=$(cd "$(dirname "$0")/../.." && pwd)
rounds=${ROUNDS:-15}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/sbx-tricks.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
load() { echo "load average $1: $(cut -d' ' -f1-3 /proc/loadavg)"; }

echo "sbx $(git -C "$src" rev-parse --short HEAD 2>/dev/null || echo '?'), $(uname -r), $(nproc) CPUs, $(date -u '+%F %H:%M') UTC"
load "at start"

# Compile (two g++ at a time), then measure: nothing is compiled while measuring.
echo "compiling into $tmp ..." >&2
cxx="g++ -std=c++20 -O2 -w"
t=$src/tests/bench/tricks
printf '#pragma once\n#define SBX_VERSION "bench"\n#define SBX_HELPER_DIR "/nonexistent"\n#define SBX_APPARMOR_PROFILE "/nonexistent/sbx-helper"\n#define SBX_HELPER_NAME "codex-linux-sandbox"\n' \
    >"$tmp/sbx_config.h"
# The copy of options.cc without the pre-filter: Wanted wants every option,
# as it does when -h is in argv.
filter_off='s/if (all_) return true;/return true;/'
[ "$(grep -c 'if (all_) return true;' "$src/src/cli/options.cc")" = 1 ] ||
    { echo "tricks.sh: src/cli/options.cc's Wanted has changed; update filter_off" >&2; exit 1; }
sed "$filter_off" "$src/src/cli/options.cc" >"$tmp/options_all.cc"
jobs_=(
    "$cxx -o $tmp/spawn $t/spawn.cc"
    "$cxx -o $tmp/startup-dynamic $t/startup.cc"
    "$cxx -static -o $tmp/startup-static $t/startup.cc"
    "$cxx -static-pie -o $tmp/startup-static-pie $t/startup.cc"
    "$cxx -I$src/src -o $tmp/seccomp $t/seccomp.cc -lseccomp"
    "$cxx -o $tmp/pipe $t/pipe.cc"
    "$cxx -I$src/src -I$tmp -c $src/src/cli/options.cc -o $tmp/options.o"
    "$cxx -I$src/src -I$tmp -Dcli=cli_all -c $tmp/options_all.cc -o $tmp/options_all.o"
    "$cxx -I$src/src -I$tmp -c $t/cli_stubs.cc -o $tmp/stubs.o"
    "$cxx -I$src/src -I$tmp -Dcli=cli_all -c $t/cli_stubs.cc -o $tmp/stubs_all.o"
    "$cxx -I$src/src -I$tmp -c $t/cli.cc -o $tmp/cli.o"
)
for f in policy/policy policy/policy_json policy/permission_profile policy/units policy/check util/path; do
    jobs_+=("$cxx -I$src/src -I$tmp -c $src/src/$f.cc -o $tmp/lib_${f#*/}.o")
done
printf '%s\n' "${jobs_[@]}" | xargs -P 2 -I{} sh -c '{}'
$cxx -o "$tmp/cli" "$tmp"/*.o -lfmt

load "before measuring"
echo
echo "(a) starting the command"
# Twice the rounds, of 20 launches each: /bin/true's own start varies most.
"$tmp/spawn" methods 3 $((rounds * 2)) 20
"$tmp/spawn" methods 30 $((rounds * 2)) 20
echo
echo "(b) static PIE executables (a C++ program that throws one exception)"
"$tmp/spawn" exes $((rounds * 2)) 20 static-pie="$tmp/startup-static-pie" dynamic="$tmp/startup-dynamic" \
    static="$tmp/startup-static"
echo
echo "(c) the CLI11 argv pre-filter"
"$tmp/cli" "$rounds" 200
echo
echo "(d) the seccomp filter"
"$tmp/seccomp" "$rounds" 20 1 1000000
echo
echo "(e) F_SETPIPE_SZ"
"$tmp/pipe" "$rounds" 128
echo
load "at end"
