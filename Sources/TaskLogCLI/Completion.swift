@_spi(Engine) import TaskModel
@_spi(Engine) import TaskStore

/// Shell completion (`tasklog completion bash|zsh|fish`) and what the scripts ask for at each
/// TAB (`tasklog __complete KIND`), both from the command table.
enum Completion {
    /// The candidates of one kind, one per line: `commands`, `options CMD`, `ids`, `deleted`
    /// (id, a tab, the title), `tags`, `lists`. Tags and lists come from any device, so one
    /// holding a control character is left out: completing it would type that character.
    static func candidates(_ kind: [String], store: TaskStore?) throws -> [String] {
        switch kind.first {
        case "commands": return Commands.all.map(\.name) + ["help"]
        case "options":
            guard kind.count > 1, let command = Commands.named(kind[1]) else { return [] }
            return command.options.map { "--" + $0.name } + ["--help"]
        case "ids", "deleted":
            let tasks = try store.map { kind[0] == "ids" ? try $0.tasks(TaskQuery(status: .all)) : try $0.state().allTasks.filter(\.isDeleted) } ?? []
            return tasks.map { Render.shortID($0.id) + "\t" + TerminalText.escaped($0.title) }
        case "tags": return typable(try store?.tasks(TaskQuery(status: .all)).flatMap(\.tags) ?? [])
        case "lists": return typable(try store?.tasks(TaskQuery(status: .all)).compactMap(\.list) ?? [])
        default: return []
        }
    }

    /// The distinct `names` without a control character, sorted.
    private static func typable(_ names: [String]) -> [String] {
        Set(names).filter { !$0.unicodeScalars.contains(where: TerminalText.isControl) }.sorted()
    }

    /// The script for `shell`, or nil if it is not one this knows.
    static func script(_ shell: String) -> String? {
        switch shell {
        case "bash": bash
        case "zsh": zsh
        case "fish": fish
        default: nil
        }
    }

    private static let bash = #"""
        # bash completion for tasklog: eval "$(tasklog completion bash)"
        # Candidates are data (a tag may come from another device): they are compared and
        # quoted with printf %q, never handed to compgen -W, which would expand $(...) in them.
        _tasklog_offer() {
            local c q
            while IFS= read -r c; do
                printf -v q '%q' "$c"
                [[ "$q" == "$cur"* ]] && COMPREPLY+=("$q")
            done
        }
        _tasklog() {
            local cur prev cmd="" store=() i=1
            cur="${COMP_WORDS[COMP_CWORD]}"
            prev="${COMP_WORDS[COMP_CWORD-1]}"
            while [ "$i" -lt "$COMP_CWORD" ]; do
                case "${COMP_WORDS[i]}" in
                    --store) store=(--store "${COMP_WORDS[i+1]}"); i=$((i + 2)); continue ;;
                    -*) ;;
                    *) [ -z "$cmd" ] && cmd="${COMP_WORDS[i]}" ;;
                esac
                i=$((i + 1))
            done
            local IFS=$'\n'
            COMPREPLY=()
            if [ "$prev" = --store ]; then mapfile -t COMPREPLY < <(compgen -d -- "$cur"); return; fi
            if [ -z "$cmd" ] || [ "$cmd" = help ]; then
                _tasklog_offer < <(tasklog __complete commands); return
            fi
            case "$prev" in
                --tag) _tasklog_offer < <(tasklog "${store[@]}" __complete tags); return ;;
                --list) _tasklog_offer < <(tasklog "${store[@]}" __complete lists); return ;;
                --passphrase-file|--token-file|--password-file|--tls-ca|--tls-cert|--tls-key|--from)
                    mapfile -t COMPREPLY < <(compgen -f -- "$cur"); return ;;
            esac
            if [[ "$cur" == -* ]]; then
                _tasklog_offer < <(tasklog __complete options "$cmd"); return
            fi
            case "$cmd" in
                show|edit|tag|done|reopen|rm|history)
                    _tasklog_offer < <(tasklog "${store[@]}" __complete ids | cut -f1) ;;
                restore) _tasklog_offer < <(tasklog "${store[@]}" __complete deleted | cut -f1) ;;
                sync|import|devices) mapfile -t COMPREPLY < <(compgen -f -- "$cur") ;;
                completion) _tasklog_offer < <(printf '%s\n' bash zsh fish) ;;
            esac
        }
        complete -F _tasklog tasklog

        """#

    private static let zsh = #"""
        #compdef tasklog
        # zsh completion for tasklog: eval "$(tasklog completion zsh)"
        _tasklog() {
            local -a items
            local cmd=${words[2]}
            if (( CURRENT == 2 )); then
                items=(${(f)"$(tasklog __complete commands)"}); compadd -a items; return
            fi
            case ${words[CURRENT-1]} in
                --tag) items=(${(f)"$(tasklog __complete tags)"}); compadd -a items; return ;;
                --list) items=(${(f)"$(tasklog __complete lists)"}); compadd -a items; return ;;
            esac
            if [[ ${words[CURRENT]} == -* ]]; then
                items=(${(f)"$(tasklog __complete options $cmd)"}); compadd -a items; return
            fi
            case $cmd in
                show|edit|tag|done|reopen|rm|history)
                    items=(${${(f)"$(tasklog __complete ids)"}/$'\t'/:}); _describe task items ;;
                restore) items=(${${(f)"$(tasklog __complete deleted)"}/$'\t'/:}); _describe task items ;;
                sync|import|devices) _files ;;
                completion) compadd bash zsh fish ;;
            esac
        }
        compdef _tasklog tasklog

        """#

    private static let fish = #"""
        # fish completion for tasklog: tasklog completion fish | source
        complete -c tasklog -f
        complete -c tasklog -n __fish_use_subcommand -a '(tasklog __complete commands)'
        complete -c tasklog -n '__fish_seen_subcommand_from show edit tag done reopen rm history' -a '(tasklog __complete ids)'
        complete -c tasklog -n '__fish_seen_subcommand_from restore' -a '(tasklog __complete deleted)'
        complete -c tasklog -n '__fish_seen_subcommand_from completion' -a 'bash zsh fish'
        complete -c tasklog -l tag -x -a '(tasklog __complete tags)'
        complete -c tasklog -l list -x -a '(tasklog __complete lists)'
        complete -c tasklog -n 'not __fish_use_subcommand' -a '(string match -q -- "-*" (commandline -ct); and tasklog __complete options (commandline -opc)[2])'

        """#
}
