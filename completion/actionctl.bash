# SPDX-License-Identifier: Apache-2.0
# bash completion for actionctl(1). Button names and control kinds are asked from the
# running daemon (quietly; nothing is completed when it cannot be reached).

_actionctl_query() {
  # $1: status|list; prints button names or kinds, one per line.
  local socket_args=()
  [[ -n $_actionctl_socket ]] && socket_args=(--socket "$_actionctl_socket")
  case $1 in
    buttons) actionctl "${socket_args[@]}" --timeout 2 --json status 2>/dev/null |
      grep -o '"name":"[^"]*","key"' | sed 's/"name":"\([^"]*\)".*/\1/' ;;
    kinds) actionctl "${socket_args[@]}" --timeout 2 --json list 2>/dev/null |
      grep -o '"kind":"[^"]*"' | sed 's/"kind":"\([^"]*\)"/\1/' | sort -u ;;
  esac
}

_actionctl() {
  local cur prev words cword
  _init_completion || return

  local commands="status list get assign set perform press reload devices watch check-config version"
  local events="pressed released held performing performed failed busy cancelled state assigned device-added device-removed config-reloaded"
  _actionctl_socket=""
  local i command="" command_index=0
  for ((i = 1; i < cword; i++)); do
    case ${words[i]} in
      --socket) _actionctl_socket=${words[i + 1]}; ((i++)) ;;
      --socket=*) _actionctl_socket=${words[i]#--socket=} ;;
      --timeout) ((i++)) ;;
      -*) ;;
      *) command=${words[i]}; command_index=$i; break ;;
    esac
  done

  case $prev in
    --socket) _filedir sock; COMPREPLY+=($(compgen -f -- "$cur")); return ;;
    --timeout) return ;;
    --button) COMPREPLY=($(compgen -W "$(_actionctl_query buttons)" -- "$cur")); return ;;
    --kind) COMPREPLY=($(compgen -W "$(_actionctl_query kinds)" -- "$cur")); return ;;
    --gesture) COMPREPLY=($(compgen -W "hold doublePress longHold" -- "$cur")); return ;;
    --events)
      local prefix=${cur%,*}
      [[ $prefix == "$cur" ]] && prefix="" || prefix+=","
      COMPREPLY=($(compgen -P "$prefix" -W "$events" -- "${cur##*,}"))
      compopt -o nospace
      return ;;
  esac

  if [[ -z $command ]]; then
    if [[ $cur == -* ]]; then
      COMPREPLY=($(compgen -W "--socket --json --timeout --help --version" -- "$cur"))
    else
      COMPREPLY=($(compgen -W "$commands" -- "$cur"))
    fi
    return
  fi

  local position=$((cword - command_index))
  case $command in
    status)
      ((position == 1)) && COMPREPLY=($(compgen -W "$(_actionctl_query buttons)" -- "$cur")) ;;
    press)
      if [[ $cur == -* ]]; then
        COMPREPLY=($(compgen -W "--hold --double" -- "$cur"))
      elif [[ ${words[cword - 1]} != --hold ]]; then
        COMPREPLY=($(compgen -W "$(_actionctl_query buttons)" -- "$cur"))
      fi ;;
    get | reload)
      ((position == 1)) && COMPREPLY=($(compgen -W "$(_actionctl_query kinds)" -- "$cur")) ;;
    assign)
      if [[ $cur == -* ]]; then
        COMPREPLY=($(compgen -W "--gesture --momentary" -- "$cur"))
        return
      fi
      # BUTTON and KIND are the first two words that are not options (--gesture takes a value).
      local j positional=0
      for ((j = command_index + 1; j < cword; j++)); do
        case ${words[j]} in
          --gesture) ((j++)) ;;
          -*) ;;
          *) ((positional++)) ;;
        esac
      done
      case $positional in
        0) COMPREPLY=($(compgen -W "$(_actionctl_query buttons)" -- "$cur")) ;;
        1) COMPREPLY=($(compgen -W "$(_actionctl_query kinds)" -- "$cur")) ;;
      esac ;;
    set)
      case $position in
        1) COMPREPLY=($(compgen -W "$(_actionctl_query kinds)" -- "$cur")) ;;
        2) COMPREPLY=($(compgen -W "on off" -- "$cur")) ;;
      esac ;;
    perform)
      ((position == 1)) && COMPREPLY=($(compgen -W "--kind $(_actionctl_query buttons) $(_actionctl_query kinds)" -- "$cur")) ;;
    watch)
      COMPREPLY=($(compgen -W "--button --kind --events --notify" -- "$cur")) ;;
    check-config)
      ((position == 1)) && _filedir json ;;
  esac
}

complete -F _actionctl actionctl
