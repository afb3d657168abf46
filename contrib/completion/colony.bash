# bash completion for colony(1). Commands and options come from colony's own --help, so they
# never fall behind the binary; job ids from `colony queue`.
_colony_commands() {
        colony --help 2>/dev/null | awk '/^Commands:/ { on = 1; next } on && /^  [a-z]/ { print $1 } on && /^$/ { exit }'
}

_colony_options() { # _colony_options COMMAND: the long options its --help mentions
        colony "$1" --help 2>/dev/null | grep -o -- '--[a-z][a-z-]*' | sort -u
        printf '%s\n' --json --socket --dir --help
}

_colony_nodes() { # the nodes' names, for drain, resume, --nodelist and --exclude
        colony nodes --json 2>/dev/null | jq -r '.nodes[].name' 2>/dev/null
}

_colony() {
        local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD - 1]} cmd="" i
        for ((i = 1; i < COMP_CWORD; i++)); do
                case ${COMP_WORDS[i]} in
                --socket | --dir) ((i++)) ;;
                -*) ;;
                *) cmd=${COMP_WORDS[i]}; break ;;
                esac
        done
        # everything after "submit ... --" (or "run ... --") is the job's own command line
        if [ "$cmd" = submit ] || [ "$cmd" = run ]; then
                for ((i = 1; i < COMP_CWORD; i++)); do
                        [ "${COMP_WORDS[i]}" = -- ] && { COMPREPLY=($(compgen -c -- "$cur")); return; }
                done
        fi
        case $prev in
        --socket | --output | --error | --machines | --jobs | --trace | --controller-config | --instance | --tree | --demands | \
        --google | --google-machines | --jobs-csv | --depts-csv | --script)
                COMPREPLY=($(compgen -f -- "$cur")); return ;;
        --dir | --chdir) COMPREPLY=($(compgen -d -- "$cur")); return ;;
        --order) COMPREPLY=($(compgen -W "fifo backfill reserve" -- "$cur")); return ;;
        --policy) COMPREPLY=($(compgen -W "$(colony place --help 2>/dev/null | grep -o '[a-z]*-fit[a-z-]*\|max-jobs\|tetris\|greedy\|lotes' | sort -u)" -- "$cur")); return ;;
        --workload) COMPREPLY=($(compgen -W "mishra lotes-google lotes-phi: lotes-omega:" -- "$cur")); return ;;
        --dept-by) COMPREPLY=($(compgen -W "group user class none" -- "$cur")); return ;;
        --state) # cancel's are the live states, history's the finished ones
                if [ "$cmd" = cancel ]; then COMPREPLY=($(compgen -W "pending running" -- "$cur"))
                else COMPREPLY=($(compgen -W "completed failed cancelled oom-killed lost" -- "$cur")); fi
                return ;;
        --user) COMPREPLY=($(compgen -u -- "$cur")); return ;;
        --array) COMPREPLY=($(compgen -W "$(colony queue --json 2>/dev/null | jq -r '.jobs[] | select(.array_first == .id) | .id' 2>/dev/null)" -- "$cur")); return ;;
        --group) # the leaf departments of the controller's tree
                COMPREPLY=($(compgen -W "$(colony shares --json 2>/dev/null | tr -d ' \t\n' | grep -o '"path":"[^"]*","parent":"[^"]*","leaf":true' | cut -d'"' -f4 | grep -v '^(none)$')" -- "$cur"))
                return ;;
        --job) COMPREPLY=($(compgen -W "$(colony queue --all 2>/dev/null | awk 'NR > 1 { print $1 }')" -- "$cur")); return ;;
        --nodelist | --exclude) COMPREPLY=($(compgen -W "$(_colony_nodes)" -- "$cur")); return ;;
        esac
        if [ -z "$cmd" ]; then
                COMPREPLY=($(compgen -W "$(_colony_commands) --json --socket --dir --help --version" -- "$cur"))
        elif [[ $cur == -* ]]; then
                COMPREPLY=($(compgen -W "$(_colony_options "$cmd")" -- "$cur"))
        else
                case $cmd in
                show | cancel | wait | hold | release | update | attach)
                        COMPREPLY=($(compgen -W "$(colony queue 2>/dev/null | awk 'NR > 1 { print $1 }')" -- "$cur")) ;;
                drain | resume) COMPREPLY=($(compgen -W "$(_colony_nodes)" -- "$cur")) ;;
                esac
        fi
}
complete -F _colony colony
