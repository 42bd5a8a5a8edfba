"""``curvedoc completion bash|zsh``: shell completion for the commands and their options, generated from the
command line's own parsers so it never lists an option that does not exist.

    source <(curvedoc completion bash)        # or add it to ~/.bashrc
    source <(curvedoc completion zsh)         # zsh, through its bash-completion layer
"""

from __future__ import annotations

import argparse
import importlib
import shlex

SHELLS = ("bash", "zsh")


def _options(parser: argparse.ArgumentParser) -> tuple[list[str], dict[str, list[str]]]:
    """The parser's option strings, and the choices of each option that takes one of a few values."""
    options, choices = [], {}
    for action in parser._actions:  # argparse offers no public listing of its options
        options += [name for name in action.option_strings if name.startswith("--")]
        if action.choices:
            for name in action.option_strings:
                choices[name] = [str(choice) for choice in action.choices]
    return sorted(options), choices


def bash_script() -> str:
    from curvedoc.cli import SUBCOMMANDS, build_parser
    from curvedoc.rules import all_rules

    parsers = {name: getattr(importlib.import_module(module), builder)() if builder else None
               for name, (module, _, builder) in SUBCOMMANDS.items()}
    parsers[""] = build_parser()  # the bare command last: its case is the catch-all
    # subcommands whose arguments are words of their own, not files
    own_words = {"rules": [rule.code for rule in all_rules()], "completion": list(SHELLS)}
    cases, value_cases = [], []
    for name, parser in parsers.items():
        words = list(SUBCOMMANDS) if name == "" else list(own_words.get(name, []))
        if parser is not None:
            options, choices = _options(parser)
            words += options
            value_cases += [f"        {shlex.quote(name) if name else '*'}\\ {option}) "
                            f"values={shlex.quote(' '.join(values))} ;;" for option, values in choices.items()]
        cases.append(f"        {name or '*'}) words={shlex.quote(' '.join(words))} ;;")
    words_only = " || ".join(f'"$sub" == {name}' for name in own_words)
    return f"""_curvedoc() {{
    local cur="${{COMP_WORDS[COMP_CWORD]}}" prev="${{COMP_WORDS[COMP_CWORD-1]}}" words="" values="" sub=""
    [[ $COMP_CWORD -gt 1 ]] && sub="${{COMP_WORDS[1]}}"
    case "$sub" in
        {'|'.join(SUBCOMMANDS)}) ;;
        *) sub="" ;;
    esac
    case "$sub $prev" in
{chr(10).join(value_cases)}
    esac
    if [[ -n "$values" ]]; then
        COMPREPLY=( $(compgen -W "$values" -- "$cur") )
        return 0
    fi
    case "$sub" in
{chr(10).join(cases)}
    esac
    if [[ "$cur" == -* || ( -z "$sub" && $COMP_CWORD -eq 1 ) || {words_only} ]]; then
        COMPREPLY=( $(compgen -W "$words" -- "$cur") )
    fi
    [[ "$cur" != -* && ! ( {words_only} ) ]] && COMPREPLY+=( $(compgen -f -- "$cur") )
    return 0
}}
complete -o filenames -F _curvedoc curvedoc
"""


def completion_command(argv: list[str]) -> int:
    from curvedoc.cli import EXIT_OK, emit

    parser = argparse.ArgumentParser(prog="curvedoc completion", description="Print shell completion for curvedoc.")
    parser.add_argument("shell", choices=SHELLS)
    args = parser.parse_args(argv)
    prelude = "autoload -U +X bashcompinit && bashcompinit\n" if args.shell == "zsh" else ""
    emit(prelude + bash_script())
    return EXIT_OK
