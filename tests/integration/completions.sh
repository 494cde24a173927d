#!/usr/bin/env bash
# The shell completions (completions/) against sbx's own --help, so that they
# cannot drift from it: bash's is run in a plain bash (no bash-completion
# package) and must offer exactly each subcommand's options; zsh's and fish's
# are scripts/completions.py's output from --help, which must be what is
# committed; where zsh or fish is installed, each is also run.
. "$(dirname "$0")/lib.sh"
src=$(cd "$(dirname "$0")/../.." && pwd)
d=$(scratch)

# A subcommand's options as its --help lists them, sorted, one per line.
help_options() {
    "$SBX" "$@" --help | sed -nE 's/^  (-[a-zA-Z]),(--[a-z][a-z0-9-]*).*/\1\n\2/p; s/^  (--[a-z][a-z0-9-]*).*/\1/p' | sort -u
}

# What bash's completion offers for `sbx WORDS... CUR`, sorted.
bash_offers() {
    bash --norc --noprofile -c '
        . "$1"; shift
        COMP_WORDS=(sbx "$@"); COMP_CWORD=$(( ${#COMP_WORDS[@]} - 1 ))
        _sbx; printf "%s\n" "${COMPREPLY[@]}"' bash "$src/completions/sbx.bash" "$@" | sort -u
}

for sub in run learn policy check doctor trust; do
    want=$(help_options "$sub")
    got=$(bash_offers "$sub" - | grep -v '^--$')
    is "bash: sbx $sub - offers exactly the options of sbx $sub --help" "$want" "$got"
done
is "bash: sbx offers the subcommands" "--help
--version
-h
check
doctor
learn
policy
run
trust" "$(bash_offers "")"
is "bash: -p offers the modes" "danger-full-access external-sandbox read-only workspace-write" \
    "$(bash_offers run -p "" | xargs)"
is "bash: --network offers the networks" "full limited restricted" "$(bash_offers run --network "" | xargs)"
is "bash: after run -- the command is a program on PATH" "true" "$(bash_offers run -- tru | grep -x true)"
mkdir -p "$d/dir.d" && touch "$d/file.f"
is "bash: --workspace offers directories only" "$d/dir.d" "$(bash_offers run --workspace "$d/")"
is "bash: --deny offers files" "$d/dir.d $d/file.f" "$(bash_offers run --deny "$d/" | xargs)"

# zsh and fish: the generator's output is what is committed.
if python3 "$src/scripts/completions.py" "$SBX" "$d"; then
    ok "zsh: completions/_sbx is scripts/completions.py's output from this sbx's --help" \
        diff -u "$src/completions/_sbx" "$d/_sbx"
    ok "fish: completions/sbx.fish is scripts/completions.py's output from this sbx's --help" \
        diff -u "$src/completions/sbx.fish" "$d/sbx.fish"
else
    _tap_result fail "scripts/completions.py runs" ""
fi

if command -v fish >/dev/null; then
    offers=$(fish -c "source '$src/completions/sbx.fish'; complete -C 'sbx run --po'" | cut -f1 | xargs)
    is "fish: sbx run --po offers the three --policy options" "--policy --policy-file --policy-json" "$offers"
    offers=$(fish -c "source '$src/completions/sbx.fish'; complete -C 'sbx run -n '" | cut -f1 | xargs)
    is "fish: -n offers the networks" "full limited restricted" "$offers"
else
    skip "fish: the completion runs" "fish is not installed"
fi
if command -v zsh >/dev/null; then
    ok "zsh: completions/_sbx loads under compinit" zsh -fc "
        fpath=('$src/completions' \$fpath); autoload -Uz compinit; compinit -u -d '$d/zcompdump'
        autoload -Uz _sbx; (( \$+functions[_sbx] ))"
else
    skip "zsh: the completion loads" "zsh is not installed"
fi

done_testing
