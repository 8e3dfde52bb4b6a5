# bash completion for sqlock(1). Installed by `cmake --install` into
# share/bash-completion/completions/sqlock, where bash-completion finds it.
_sqlock() {
    local cur prev words cword
    if declare -F _init_completion >/dev/null; then
        _init_completion -n = || return
    else
        cur=${COMP_WORDS[COMP_CWORD]}
        prev=${COMP_WORDS[COMP_CWORD - 1]}
        words=("${COMP_WORDS[@]}")
        cword=$COMP_CWORD
    fi

    local commands="run elect leader acquire release renew list show history pause resume check metrics reap init doctor help"
    local global="--db --table --db-timeout -q --quiet -v --verbose -h --help"

    # The command word: the first word that is not an option or the value of
    # --db/--table; after `run ... --` complete the command to run.
    local i command="" separator=0
    for ((i = 1; i < cword; i++)); do
        case ${words[i]} in
            --db | --table | --db-timeout) ((i++)) ;;
            --) [[ -n $command ]] && separator=$i && break ;;
            -*) ;;
            *) [[ -z $command ]] && command=${words[i]} ;;
        esac
    done
    if ((separator > 0)); then
        mapfile -t COMPREPLY < <(compgen -c -- "$cur" | sort -u)
        return
    fi

    case $prev in
        --db | --table | --token | --label | --slots | --conflict-exit-code | -E | --reason | \
            --retry | --notify | --after | --value | --max-names)
            return ;;
        --tz)
            local zones
            zones=$(cd /usr/share/zoneinfo 2>/dev/null && compgen -f -- "$cur")
            COMPREPLY=($(compgen -W "$zones" -- "$cur"))
            return ;;
        --limit)
            return ;;
        --expires | --min-hold | --max-runtime | --kill-grace | --db-timeout | --once-per | \
            --queue-lease | \
            --once-per-offset | --splay | --retry-delay | --notify-timeout | --after-within | \
            --since | --history-retention | --for | --max-age)
            COMPREPLY=($(compgen -W "30s 5m 10m 1h 2h 1d" -- "$cur"))
            return ;;
        --poll)
            COMPREPLY=($(compgen -W "10ms 100ms 250ms 1s" -- "$cur"))
            return ;;
        --wait | --timeout | -w)
            COMPREPLY=($(compgen -W "0 30s 5m 1h forever" -- "$cur"))
            return ;;
        --on-lost)
            COMPREPLY=($(compgen -W "term ignore" -- "$cur"))
            return ;;
        --log-format)
            COMPREPLY=($(compgen -W "text json" -- "$cur"))
            return ;;
    esac

    if [[ -z $command ]]; then
        if [[ $cur == -* ]]; then
            COMPREPLY=($(compgen -W "$global --version" -- "$cur"))
        else
            COMPREPLY=($(compgen -W "$commands" -- "$cur"))
        fi
        return
    fi

    local options=""
    case $command in
        run) options="--expires -w --wait --timeout -n --nonblock --queue-lease --slots --shared --min-hold --heartbeat
                      --no-heartbeat --on-lost --max-runtime --kill-grace -E --conflict-exit-code --label
                      --once-per --once-per-offset --once-per-any-outcome --tz --no-history
                      --splay --retry --retry-delay --notify --notify-output --notify-skips
                      --notify-timeout --after --after-within --log-format --" ;;
        elect) options="--value --expires -w --wait --timeout -n --nonblock --queue-lease --min-hold --heartbeat
                        --no-heartbeat --on-lost --max-runtime --kill-grace -E --conflict-exit-code
                        --label --no-history --log-format --" ;;
        leader) options="--watch --poll --json" ;;
        acquire) options="--expires -w --wait --timeout -n --nonblock --queue-lease --slots --shared --json" ;;
        release) options="--token --force" ;;
        renew) options="--token --expires" ;;
        list) options="--held --expired --json" ;;
        show) options="--json" ;;
        history) options="--since --limit --json --tz" ;;
        pause) options="--for --reason" ;;
        check) options="--max-age --json --tz" ;;
        metrics) options="--max-names" ;;
        reap) options="--dry-run --history-retention --json" ;;
        doctor) options="--json" ;;
        help)
            COMPREPLY=($(compgen -W "$commands" -- "$cur"))
            return ;;
    esac
    if [[ $cur == -* ]]; then
        COMPREPLY=($(compgen -W "$options $global" -- "$cur"))
    fi
}
complete -F _sqlock sqlock
