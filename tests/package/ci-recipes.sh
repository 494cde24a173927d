#!/usr/bin/env bash
# The CI recipes (examples/ci/github-actions.yml, gitlab-ci.yml) run here as
# the shell steps they contain, against a release archive of this tree
# (scripts/release): each YAML file is read with python3-yaml, its shell
# steps are written out and run in turn as the runner would (GitHub: each
# step with bash -e, PATH extended by $GITHUB_PATH; GitLab: before_script
# and script in one shell, set -eo pipefail), with the YAML's variables and
# two of the test's own: SBX_RELEASE_URL, a file:// URL of the release
# directory (curl reads it), and SBX_PREFIX, a directory of the test's
# instead of /usr/local.  The checkout is a directory with a Makefile whose
# `make test` writes a file there and must be refused one beside it.  sudo,
# where there is none (root), is a shim that runs its command.  Checked: the
# steps succeed, sbx is installed in SBX_PREFIX, make test ran in the
# sandbox; the AppArmor step does nothing on this kernel (no AppArmor) and,
# with the restriction emulated (the step's sysctl and /etc/apparmor.d
# rewritten to files of the test's, an apparmor_parser shim), writes the
# profile for SBX_PREFIX's helper and loads it (and the profile parses, where
# SBX_APPARMOR_PARSER and SBX_APPARMOR_D name AppArmor 4's parser, as for
# apparmor-profile.sh); a tampered archive stops each recipe at its checksum.
# GitHub and GitLab themselves are not run (docs/ci.md).  TAP on stdout; SKIP (the whole test) without python3-yaml.
# Usage: tests/package/ci-recipes.sh RELEASE_DIR
#   RELEASE_DIR: scripts/release's output (sbx-VERSION-ARCH-linux.tar.gz, SHA256SUMS)
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
release=$(realpath "${1:?usage: $0 RELEASE_DIR}")
# The scratch directories outside /tmp, which workspace-write leaves writable:
# make test must be refused the directory beside the checkout.
SBX_TEST_TMP=/var/tmp . "$root/tests/integration/lib.sh"
cd "$root" || exit 1

if ! python3 -c 'import yaml' 2>/dev/null; then
    echo "1..0 # SKIP no python3-yaml to read the recipes (Debian: apt-get install python3-yaml)"
    exit 0
fi
version=$(meson introspect --projectinfo meson.build | python3 -c 'import json, sys; print(json.load(sys.stdin)["version"])')
archive=sbx-$version-$(uname -m)-linux.tar.gz
if [ ! -f "$release/$archive" ] || [ ! -f "$release/SHA256SUMS" ]; then
    echo "Bail out! $release has no $archive and SHA256SUMS (scripts/release --build-dir BUILD $release)"
    exit 1
fi

d=$(scratch)
# Each recipe's shell steps as files: github-NN.sh (one per step with run:),
# gitlab-NN.sh (one per before_script and script item), and NAME.env: the
# YAML's variables as export lines.
if python3 - "$d" examples/ci/github-actions.yml examples/ci/gitlab-ci.yml >"$d/extract.log" 2>&1 <<'PY'; then
import shlex, sys, yaml

out, github_file, gitlab_file = sys.argv[1:]


def write(name, env, scripts):
    with open(f"{out}/{name}.env", "w") as f:
        f.writelines(f"export {k}={shlex.quote(str(v))}\n" for k, v in env.items())
    for i, script in enumerate(scripts, 1):
        with open(f"{out}/{name}-{i:02}.sh", "w") as f:
            f.write(script.rstrip("\n") + "\n")
    print(f"{name}: {len(scripts)} shell steps")


workflow = yaml.safe_load(open(github_file))
(job,) = workflow["jobs"].values()
env = dict(workflow.get("env") or {}, **(job.get("env") or {}))
assert not any("env" in s for s in job["steps"]), "a step's own env: not handled here"
write("github", env, [s["run"] for s in job["steps"] if "run" in s])

pipeline = yaml.safe_load(open(gitlab_file))
jobs = [v for k, v in pipeline.items() if isinstance(v, dict) and "script" in v]
(job,) = jobs
env = dict(pipeline.get("variables") or {}, **(job.get("variables") or {}))
write("gitlab", env, list(job.get("before_script") or []) + list(job["script"]))
PY
    _tap_result ok "both recipes read, their shell steps written out ($(tr '\n' ' ' <"$d/extract.log"))"
else
    _tap_result fail "both recipes read, their shell steps written out" "$(cat "$d/extract.log")"
fi
for r in github gitlab; do
    is "$r: its SBX_VERSION is meson.build's version" "$version" "$(. "$d/$r.env" && echo "${SBX_VERSION:-}")"
done

# sudo where there is none: this test runs as root.
mkdir -p "$d/shims"
if ! command -v sudo >/dev/null; then
    printf '#!/bin/sh\nexec "$@"\n' >"$d/shims/sudo" && chmod +x "$d/shims/sudo"
fi
# The checkout: make test writes here, and must be refused the directory beside it.
mkdir -p "$d/outside"
new_checkout() {  # DIR
    mkdir -p "$1"
    printf 'test:\n\techo sandboxed >made-by-make-test\n\t! touch %s/escaped 2>/dev/null\n' "$d/outside" >"$1/Makefile"
}

# run_recipe NAME PREFIX RELEASE_DIR LOG [STEP...]: the recipe's steps (all
# of them, or the numbered ones) in a fresh checkout, as its runner would;
# their output in LOG, the exit status in LOG.status; prints the checkout.
run_recipe() {
    local name=$1 prefix=$2 rel=$3 log=$4 ws step
    ws=$(mktemp -d "$d/checkout.XXXXXX")
    shift 4
    local steps=("$@")
    [ ${#steps[@]} -gt 0 ] || mapfile -t steps < <(cd "$d" && ls "$name"-[0-9]*.sh | sed "s/^$name-0*//; s/\.sh\$//")
    new_checkout "$ws"
    (
        . "$d/$name.env"
        export SBX_RELEASE_URL=file://$rel SBX_PREFIX=$prefix PATH=$d/shims:$PATH
        unset TMPDIR
        cd "$ws" || exit 1
        if [ "$name" = github ]; then
            export GITHUB_PATH=$ws.github-path
            : >"$GITHUB_PATH"
            for step in "${steps[@]}"; do
                PATH=$(tac "$GITHUB_PATH" | tr '\n' ':')$PATH bash -e "$d/github-$(printf %02d "$step").sh" || exit
            done
        else
            { echo "set -eo pipefail"; for step in "${steps[@]}"; do cat "$d/gitlab-$(printf %02d "$step").sh"; done; } >"$d/gitlab-job.sh"
            bash "$d/gitlab-job.sh"
        fi
    ) >"$log" 2>&1
    echo $? >"$log.status"
    echo "$ws"
}
step_of() {  # NAME PATTERN: the number of the recipe's step whose text matches PATTERN
    grep -l -- "$2" "$d/$1"-[0-9]*.sh | head -n 1 | sed "s|^$d/$1-0*||; s/\.sh\$//"
}

apparmor_before=$(ls -l /etc/apparmor.d/sbx-helper 2>&1)
for r in github gitlab; do
    prefix=$d/prefix-$r
    rm -f "$d/outside/escaped"
    ws=$(run_recipe "$r" "$prefix" "$release" "$d/$r.log")
    if [ "$(cat "$d/$r.log.status")" = 0 ] && grep -q "^$archive: OK\$" "$d/$r.log"; then
        _tap_result ok "$r: its shell steps run here in turn: checksum, install, AppArmor, doctor, make test"
    else
        _tap_result fail "$r: its shell steps run here in turn: checksum, install, AppArmor, doctor, make test" "$(tail -n 30 "$d/$r.log")"
    fi
    is "$r: sbx and its helper are installed in SBX_PREFIX, and the steps ran that sbx (doctor's helper line)" \
        "sbx $version yes 1" "$("$prefix/bin/sbx" --version 2>&1) $([ -x "$prefix/libexec/sbx/codex-linux-sandbox" ] && echo yes) \
$(grep -c "^helper: *$prefix/libexec/sbx/codex-linux-sandbox\$" "$d/$r.log")"
    is "$r: make test wrote in the checkout, and was refused outside it (in the sandbox)" "sandboxed no" \
        "$(cat "$ws/made-by-make-test" 2>&1) $([ -e "$d/outside/escaped" ] && echo yes || echo no)"
    is "$r: without AppArmor's restriction (this kernel) the AppArmor step loads no profile" \
        "$apparmor_before 1" "$(ls -l /etc/apparmor.d/sbx-helper 2>&1) $(grep -c '^user namespaces are not restricted by AppArmor here' "$d/$r.log")"

    # The restriction emulated: the step's sysctl and /etc/apparmor.d are the
    # test's, apparmor_parser a shim that says how it was called.
    aa=$d/apparmor-$r
    mkdir -p "$aa/apparmor.d" "$aa/bin"
    echo 1 >"$aa/restrict"
    printf '#!/bin/sh\necho "$@" >>%s/parser.log\n' "$aa" >"$aa/bin/apparmor_parser" && chmod +x "$aa/bin/apparmor_parser"
    aa_step=$(step_of "$r" apparmor_parser)
    sed -i -e "s|/proc/sys/kernel/apparmor_restrict_unprivileged_userns|$aa/restrict|g" \
        -e "s|/etc/apparmor.d|$aa/apparmor.d|g" "$d/$r-$(printf %02d "$aa_step").sh"
    # GitLab's step needs its sudo=... line before it.
    pre=$([ "$r" = gitlab ] && step_of gitlab 'sudo=')
    PATH=$aa/bin:$PATH run_recipe "$r" "$prefix" "$release" "$d/$r-apparmor.log" $pre "$aa_step" >/dev/null
    is "$r: under AppArmor's restriction (emulated) the step installs the profile for SBX_PREFIX's helper and loads it" \
        "profile sbx-helper $prefix/libexec/sbx/codex-linux-sandbox flags=(unconfined) {|-r $aa/apparmor.d/sbx-helper" \
        "$(grep '^profile ' "$aa/apparmor.d/sbx-helper" 2>&1)|$(cat "$aa/parser.log" 2>&1)"
    # That profile parses: AppArmor 4's parser (.ci/fetch-apparmor, as
    # apparmor-profile.sh takes it), without loading it.
    if [ -n "${SBX_APPARMOR_PARSER:-}" ] && [ -n "${SBX_APPARMOR_D:-}" ]; then
        ok "$r: the profile it wrote parses (apparmor_parser -Q -K)" \
            "$SBX_APPARMOR_PARSER" --base="$SBX_APPARMOR_D" -Q -K "$aa/apparmor.d/sbx-helper"
    else
        skip "$r: the profile it wrote parses (apparmor_parser -Q -K)" \
            "no AppArmor 4 parser (SBX_APPARMOR_PARSER and SBX_APPARMOR_D: .ci/fetch-apparmor)"
    fi

    # A tampered archive (one byte more, SHA256SUMS as released).
    mkdir -p "$d/tampered" && cp "$release/$archive" "$release/SHA256SUMS" "$d/tampered/" && echo >>"$d/tampered/$archive"
    ws=$(run_recipe "$r" "$d/tampered-prefix-$r" "$d/tampered" "$d/$r-tampered.log")
    if [ "$(cat "$d/$r-tampered.log.status")" != 0 ] && grep -q "^$archive: FAILED\$" "$d/$r-tampered.log" \
        && [ ! -e "$d/tampered-prefix-$r/bin/sbx" ] \
        && [ ! -e "$ws/made-by-make-test" ]; then
        _tap_result ok "$r: a tampered archive stops the recipe at its checksum, nothing installed"
    else
        _tap_result fail "$r: a tampered archive stops the recipe at its checksum, nothing installed" "$(tail -n 20 "$d/$r-tampered.log")"
    fi
done
done_testing
