"""``curvedoc PATH...``: read training logs, diagnose them, report; ``curvedoc rules [CODE]``: the rule registry."""

from __future__ import annotations

import argparse
import os
import sys

import curvedoc
from curvedoc.config import find_config, load_config, parse_role_option
from curvedoc.diagnose import diagnose_runs
from curvedoc.errors import CurvedocError
from curvedoc.report import json as json_report
from curvedoc.report import printable, rules_doc
from curvedoc.report import terminal

EXIT_OK, EXIT_USAGE = 0, 2
RENDERERS = {"text": terminal.render, "json": json_report.render}


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="curvedoc",
        description="Read the logs of a training run and report what silently went wrong.",
        epilog="`curvedoc rules` lists every rule; `curvedoc rules CODE` explains one.",
    )
    parser.add_argument("paths", nargs="+", metavar="PATH", help="a log file, a run folder, or a folder of runs")
    parser.add_argument("--format", choices=sorted(RENDERERS), default="text", help="output format (default: text)")
    parser.add_argument(
        "--role", action="append", default=[], metavar="ROLE=TAG",
        help="say which tag plays a role, e.g. --role val_loss=my/tag (repeatable)",
    )
    parser.add_argument("--num-classes", type=int, metavar="N", help="number of classes, when the run's config lacks it")
    parser.add_argument("--config", metavar="FILE", help="a curvedoc.toml or pyproject.toml to use instead of the nearest one")
    parser.add_argument("--version", action="version", version=f"curvedoc {curvedoc.__version__}")
    return parser


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["rules"]:
        return rules_command(argv[1:])
    args = build_parser().parse_args(argv)
    try:
        config = load_config(args.config) if args.config else find_config()
        roles = dict(parse_role_option(option) for option in args.role)
        if args.num_classes is not None and args.num_classes < 2:
            raise CurvedocError(None, "--num-classes must be at least 2")
    except CurvedocError as exc:
        return fail(exc)
    settings = config.merged(roles, args.num_classes)
    runs, problems, failed = [], [], []
    # One unreadable path must not hide the runs of the others: report it and go on.
    for path in args.paths:
        try:
            found = curvedoc.load(path, config=settings)
        except CurvedocError as exc:
            failed.append(exc)
            continue
        diagnose_runs(found, settings.rules)
        runs.extend(found)
        problems.extend(found.problems)
    if runs or not failed:
        emit(RENDERERS[args.format](runs, problems))
    for exc in failed:
        fail(exc)
    return EXIT_USAGE if failed else EXIT_OK


def rules_command(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="curvedoc rules", description="List the rules, or explain one.")
    parser.add_argument("code", nargs="?", help="a rule code (CD101) or symptom id (nan_inf) to explain")
    parser.add_argument("--format", choices=("text", "json"), default="text")
    args = parser.parse_args(argv)
    try:
        emit(rules_doc.render(args.code, args.format))
    except CurvedocError as exc:
        return fail(exc)
    return EXIT_OK


def emit(text: str) -> None:
    try:
        print(text)
        sys.stdout.flush()
    except BrokenPipeError:
        # `curvedoc … | head` closed the pipe: the reader has what it wanted. Point stdout at devnull so the
        # interpreter's own flush at exit does not complain again.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())


def fail(exc: CurvedocError) -> int:
    print(f"curvedoc: error: {printable(str(exc))}", file=sys.stderr)
    return EXIT_USAGE


if __name__ == "__main__":
    sys.exit(main())
