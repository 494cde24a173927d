# bash completion for sbx(1)
_sbx() {
    local cur prev words cword
    _init_completion || return

    local policy_opts="-p --policy -n --network -w --writable-root --read-only --deny --deny-glob --minimal
        --workspace --exclude-slash-tmp
        --exclude-tmpdir-env-var --protect --unprotect --allow-unprotected --policy-file --policy-json
        --limit-memory --limit-cpu --limit-procs --limit-file-size --limit-open-files --allow-domain --deny-domain"
    local run_opts="-C --cwd -t --timeout --max-output-bytes --max-output-lines --no-output-cap --keep --cap-live --json --events
        --env --unset-env --clear-env --stdin --dry-run --target-os -a --ask-for-approval --reject --approver
        --approver-timeout --session --rules --escalate --justification --record-denials --explain --control-fd"

    case $prev in
        -p|--policy) COMPREPLY=($(compgen -W "read-only workspace-write danger-full-access external-sandbox" -- "$cur")); return ;;
        -n|--network) COMPREPLY=($(compgen -W "restricted limited full" -- "$cur")); return ;;
        -a|--ask-for-approval) COMPREPLY=($(compgen -W "never on-failure on-request untrusted" -- "$cur")); return ;;
        --stdin) COMPREPLY=($(compgen -W "inherit null" -- "$cur")); return ;;
        --keep) COMPREPLY=($(compgen -W "head tail both" -- "$cur")); return ;;
        --target-os) COMPREPLY=($(compgen -W "linux macos" -- "$cur")); return ;;
        --reject) COMPREPLY=($(compgen -W "sandbox rules sandbox,rules" -- "$cur")); return ;;
        -w|--writable-root|--workspace|-C|--cwd) _filedir -d; return ;;
        --policy-file|--rules|--approver|--read-only|--deny) _filedir; return ;;
    esac

    local sub="" i
    for ((i = 1; i < cword; i++)); do
        case ${words[i]} in
            run|policy|check|doctor) sub=${words[i]}; break ;;
            --) return ;;
        esac
    done
    # After "run ... --", complete the command itself.
    if [[ $sub == run ]]; then
        for ((i = i + 1; i < cword; i++)); do
            if [[ ${words[i]} == -- ]]; then _command_offset $((i + 1)); return; fi
        done
    fi

    case $sub in
        "") COMPREPLY=($(compgen -W "run policy check doctor --help --version" -- "$cur")) ;;
        run) COMPREPLY=($(compgen -W "$policy_opts $run_opts --help --" -- "$cur")) ;;
        policy) COMPREPLY=($(compgen -W "$policy_opts --json --seatbelt --help" -- "$cur")) ;;
        check) COMPREPLY=($(compgen -W "$policy_opts --read --write --exec --connect --json --help" -- "$cur")) ;;
        doctor) COMPREPLY=($(compgen -W "--json --help" -- "$cur")) ;;
    esac
}
complete -F _sbx sbx
