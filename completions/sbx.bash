# bash completion for sbx(1).  Plain bash: the bash-completion package is
# used where it is loaded (for the command after "run --"), never required.
# tests/integration/completions.sh runs it against each subcommand's --help.
_sbx() {
    local cur=${COMP_WORDS[COMP_CWORD]} prev=
    local cword=$COMP_CWORD
    local -a words=("${COMP_WORDS[@]}")
    ((cword > 0)) && prev=${words[cword - 1]}

    local policy_opts="-p --policy -n --network -w --writable-root --read-only --deny --deny-glob --minimal
        --workspace --exclude-slash-tmp
        --exclude-tmpdir-env-var --protect --unprotect --git-write --allow-unprotected --policy-file --policy-json
        --limit-memory --limit-cpu --limit-procs --limit-file-size --limit-open-files --allow-domain --deny-domain --secret-env --secret-file --tls-passthrough
        --no-config"
    local run_opts="-C --cwd -t --timeout --max-output-bytes --max-output-lines --no-output-cap --keep --cap-live --json --events
        --env --unset-env --clear-env --stdin --tty -T --no-tty --dry-run --target-os -a --ask-for-approval --reject --approver
        --approver-timeout --session --rules --escalate --justification --record-denials --no-record-denials --explain
        --control-fd"

    local sub="" i
    for ((i = 1; i < cword; i++)); do
        case ${words[i]} in
            run|learn|policy|check|doctor|trust) sub=${words[i]}; break ;;
            --) return ;;
        esac
    done
    # After "run ... --" (or "learn ... --"), the command itself: a program, then its arguments.
    if [[ $sub == run || $sub == learn ]]; then
        for ((i = i + 1; i < cword; i++)); do
            [[ ${words[i]} == -- ]] || continue
            if declare -F _command_offset >/dev/null; then
                _command_offset $((i + 1))
            elif ((cword == i + 1)); then
                mapfile -t COMPREPLY < <(compgen -c -- "$cur")
            else
                mapfile -t COMPREPLY < <(compgen -f -- "$cur")
            fi
            return
        done
    fi

    local values=
    case $prev in
        -p|--policy) values="read-only workspace-write danger-full-access external-sandbox" ;;
        -n|--network) values="restricted limited full" ;;
        -a|--ask-for-approval) values="never on-failure on-request untrusted" ;;
        --stdin) values="inherit null" ;;
        --keep) values="head tail both" ;;
        --target-os) values="linux macos" ;;
        --reject) values="sandbox rules network sandbox,rules" ;;
        -w|--writable-root|--workspace|-C|--cwd)
            mapfile -t COMPREPLY < <(compgen -d -- "$cur"); return ;;
        --policy-file|--rules|--approver|--read-only|--deny|--read|--write|--exec|--write-policy|--secret-file)
            mapfile -t COMPREPLY < <(compgen -f -- "$cur"); return ;;
    esac
    if [[ -n $values ]]; then
        mapfile -t COMPREPLY < <(compgen -W "$values" -- "$cur")
        return
    fi

    local words_for=
    case $sub in
        "") words_for="run learn policy check doctor trust -h --help --version" ;;
        run) words_for="-h --help $policy_opts $run_opts --" ;;
        learn) words_for="-h --help $policy_opts $run_opts --let-connect --reads --write-policy --" ;;
        policy) words_for="-h --help $policy_opts --json --seatbelt --relative" ;;
        check) words_for="-h --help $policy_opts --read --write --exec --connect --json" ;;
        doctor) words_for="-h --help --json" ;;
        trust)  # the project policy to trust, or --revoke
            if [[ $cur != -* ]]; then
                mapfile -t COMPREPLY < <(compgen -f -- "$cur")
                return
            fi
            words_for="-h --help --revoke" ;;
    esac
    mapfile -t COMPREPLY < <(compgen -W "$words_for" -- "$cur")
}
complete -o filenames -F _sbx sbx
