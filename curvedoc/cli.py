"""``curvedoc PATH...``: read training logs, diagnose them, report; ``curvedoc rules [CODE]``: the rule registry."""

from __future__ import annotations

import argparse
import importlib
import os
from dataclasses import replace
import shutil
import sys
from pathlib import Path

import curvedoc
from curvedoc.config import Config, find_config, load_config, parse_role_option
from curvedoc.diagnose import RuleSettings, apply_baseline, diagnose_runs
from curvedoc.errors import CurvedocError
from curvedoc.report import RENDERERS, SUFFIXES, ReportOptions, printable, render, rules_doc

# Like a linter: 0 nothing reached --fail-on, 1 something did, 2 the command line or the input was unusable.
EXIT_OK, EXIT_FINDINGS, EXIT_USAGE = 0, 1, 2
PLOT_FORMATS = {"text", "json", "markdown"}  # the reports that name a PNG written with --plots
PLOT_REFUSALS = {"html": "draws its plots into the page itself"}
FAIL_ON = {"error": {"error"}, "warning": {"error", "warning"}, "info": {"error", "warning", "info"}, "never": set()}
# Each subcommand's module, the function that runs it and the one that builds its parser (whose options shell
# completion offers; none where its only argument is a word of its own), imported when used: a bare
# `curvedoc PATH` loads none of them. Shell completion (curvedoc.completion) offers exactly these.
SUBCOMMANDS = {
    "audit": ("curvedoc.audit_cli", "audit_command", "build_audit_parser"),
    "watch": ("curvedoc.cli", "watch_command", "build_watch_parser"),
    "rules": ("curvedoc.cli", "rules_command", "build_rules_parser"),
    "completion": ("curvedoc.completion", "completion_command", None),
}


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="curvedoc",
        description="Read the logs of a training run and report what silently went wrong.",
        epilog="`curvedoc rules` lists every rule; `curvedoc rules CODE` explains one; "
               "`curvedoc audit ROOT` audits a whole archive of runs; `curvedoc watch PATH` follows runs that are "
               "still training; `curvedoc completion bash|zsh` prints shell completion.",
    )
    parser.add_argument("paths", nargs="+", metavar="PATH", help="a log file, a run folder, or a folder of runs")
    parser.add_argument("--format", choices=sorted(RENDERERS),
                        help="output format (default: text, or what the -o file's extension says)")
    parser.add_argument("-o", "--output", metavar="FILE", help="write the report to FILE instead of printing it")
    parser.add_argument("-q", "--quiet", action="store_true", help="print only each run's verdict")
    parser.add_argument("--color", choices=("auto", "always", "never"), default="auto",
                        help="colour the text report: auto (a terminal, unless NO_COLOR; FORCE_COLOR forces it, as "
                             "CI logs want), always or never")
    parser.add_argument("-v", "--verbose", action="store_true",
                        help="also show the notes (info findings) and read warnings of healthy runs")
    parser.add_argument("--plots", metavar="DIR", help="also write a PNG of each run with findings into DIR and "
                                                        "name it in the report (text, json, markdown)")
    parser.add_argument("--baseline", metavar="RUN",
                        help="the base model's run: a fine-tune whose first loss is 1.5x its last loss starts high")
    add_diagnosis_options(parser)
    return parser


def add_diagnosis_options(parser: argparse.ArgumentParser) -> None:
    """What the single-run command and the audit share: the CI gate and how runs are read and judged."""
    parser.add_argument("--fail-on", choices=sorted(FAIL_ON), default="error",
                        help="exit 1 when a finding of this severity or worse exists (default: error)")
    parser.add_argument(
        "--role", action="append", default=[], metavar="ROLE=TAG",
        help="say which tag plays a role, e.g. --role val_loss=my/tag (repeatable)",
    )
    parser.add_argument("--select", action="append", default=[], metavar="CODES",
                        help="run only these rules: codes (CD402), code prefixes (CD4) or symptom ids (spike), "
                             "comma-separated; replaces the config's select")
    parser.add_argument("--ignore", action="append", default=[], metavar="CODES",
                        help="skip these rules (codes, code prefixes or symptom ids, comma-separated), on top of "
                             "the config's disable")
    parser.add_argument("--num-classes", type=int, metavar="N", help="number of classes, when the run's config lacks it")
    parser.add_argument("--config", metavar="FILE", help="a curvedoc.toml or pyproject.toml to use instead of the nearest one")
    parser.add_argument("--version", action="version", version=f"curvedoc {curvedoc.__version__}")


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] and argv[0] in SUBCOMMANDS:
        module, function, _ = SUBCOMMANDS[argv[0]]
        return getattr(importlib.import_module(module), function)(argv[1:])
    args = build_parser().parse_args(argv)
    try:
        settings = settings_from_args(args)
    except CurvedocError as exc:
        return fail(exc)
    runs, problems, failed = [], [], []
    # One unreadable path must not hide the runs of the others: report it and go on.
    for path in args.paths:
        try:
            found = curvedoc.load(path, config=settings)
            if args.baseline:
                apply_baseline(found, args.baseline)
        except CurvedocError as exc:
            failed.append(exc)
            continue
        diagnose_runs(found, settings.rules)
        runs.extend(found)
        problems.extend(found.problems)
    try:
        fmt, options = report_choice(args)
        if options.output is not None or fmt != "text":
            # a report kept as a file or read by a program lists every path it could not read, not only stderr
            problems.extend(str(exc) for exc in failed)
        if runs or not failed:
            write_report(render(fmt, runs, problems, options), options.output)
    except CurvedocError as exc:
        failed.append(exc)
    for exc in failed:
        fail(exc)
    if failed:
        return EXIT_USAGE
    return gate(args.fail_on, (f.severity for run in runs for f in run.findings))


def settings_from_args(args) -> Config:
    """The configuration file (``--config`` or the nearest one) with the command line's overrides on top."""
    config = load_config(args.config) if args.config else find_config()
    roles = dict(parse_role_option(option) for option in args.role)
    if args.num_classes is not None and args.num_classes < 2:
        raise CurvedocError(None, "--num-classes must be at least 2")
    selected, ignored = split_names(args.select), split_names(args.ignore)
    RuleSettings(set(ignored), select=set(selected)).validate(None, disable="--ignore", select="--select")
    rules = config.rules.merged(selected, ignored)
    return replace(config.merged(roles, args.num_classes), rules=rules)


def split_names(options: list[str]) -> list[str]:
    return [name.strip() for option in options for name in option.split(",") if name.strip()]


def gate(fail_on: str, severities) -> int:
    return EXIT_FINDINGS if any(severity in FAIL_ON[fail_on] for severity in severities) else EXIT_OK


def report_choice(args) -> tuple[str, ReportOptions]:
    output = Path(args.output) if args.output else None
    fmt = args.format
    if fmt is None and output is not None:
        fmt = SUFFIXES.get(output.suffix.lower())
        if fmt is None:
            raise CurvedocError(output, f"cannot tell the report format from {output.suffix or 'no extension'!r}; "
                                        f"use --format ({', '.join(sorted(RENDERERS))})")
    fmt = fmt or "text"
    if args.plots and fmt not in PLOT_FORMATS:
        raise CurvedocError(None, f"--plots: the {fmt} report {PLOT_REFUSALS.get(fmt, 'has no place for them')}; "
                                  f"use it with --format {', '.join(sorted(PLOT_FORMATS))}")
    to_terminal = output is None and sys.stdout.isatty()
    options = ReportOptions(
        quiet=args.quiet,
        verbose=args.verbose,
        color=fmt == "text" and wants_color(args.color, to_terminal),
        width=shutil.get_terminal_size((100, 24)).columns if to_terminal else 100,
        cut_to_width=to_terminal,
        plots_dir=Path(args.plots) if args.plots else None,
        output=output,
    )
    return fmt, options


def wants_color(choice: str, to_terminal: bool) -> bool:
    """--color, then the FORCE_COLOR / NO_COLOR conventions (https://force-color.org, https://no-color.org)."""
    if choice != "auto":
        return choice == "always"
    if os.environ.get("FORCE_COLOR", "") not in ("", "0", "false"):
        return True
    return to_terminal and not os.environ.get("NO_COLOR")


def write_report(text: str, output: Path | None) -> None:
    if output is None:
        emit(text)
        return
    try:
        output.parent.mkdir(parents=True, exist_ok=True)
        output.write_text(text + "\n", encoding="utf-8")
    except OSError as exc:
        raise CurvedocError(output, f"cannot write the report: {exc.strerror or exc}") from None


def build_watch_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="curvedoc watch",
        description="Follow runs that are still training: print each finding once it is certain (a NaN at once), "
                    "then, on exit, the report `curvedoc PATH` gives on the logs as they are then.")
    parser.add_argument("paths", nargs="+", metavar="PATH", help="a run folder, a log file, or a folder of runs")
    parser.add_argument("--interval", type=float, default=5.0, metavar="SECONDS", help="seconds between looks "
                        "(default: 5)")
    parser.add_argument("--idle", type=float, default=600.0, metavar="SECONDS",
                        help="finish when no run has changed for this long (default: 600; 0: never)")
    parser.add_argument("--once", action="store_true", help="look once, print every finding there is now, and exit "
                        "with the status --fail-on gives (cron)")
    parser.add_argument("--exit-on-finding", action="store_true",
                        help="exit (status 1) at the first finding as severe as --fail-on says")
    parser.add_argument("--format", choices=("text", "json"), default="text",
                        help="json: one JSON object per finding (JSON Lines), and the final report as JSON")
    add_diagnosis_options(parser)
    return parser


def watch_command(argv: list[str]) -> int:
    from curvedoc.watch import Watch, finding_line, follow

    parser = build_watch_parser()
    args = parser.parse_args(argv)
    if args.interval <= 0 or args.idle < 0:
        return fail(CurvedocError(None, "--interval must be above 0 and --idle at least 0"))
    try:
        settings = settings_from_args(args)
    except CurvedocError as exc:
        return fail(exc)
    gate_severities = FAIL_ON[args.fail_on]
    stopping = []

    def report(run, finding) -> None:
        emit(finding_line(run, finding, args.format))
        if args.exit_on_finding and finding.severity in gate_severities:
            stopping.append(finding)

    watch = Watch(args.paths, settings, report, confirm=1 if args.once else 2)
    if args.once:  # what a cron job wants: the findings there are now, nothing when healthy, and the exit status
        watch.look()
        return EXIT_FINDINGS if stopping else gate(args.fail_on, (f.severity for run in watch.runs
                                                                    for f in run.findings))
    try:
        follow(watch, args.interval, args.idle or None, stop_when=lambda: bool(stopping))
    except KeyboardInterrupt:
        pass
    if stopping:
        return EXIT_FINDINGS
    final = [*args.paths, "--fail-on", args.fail_on, *(f"--role={option}" for option in args.role)]
    final += [f"--num-classes={args.num_classes}"] if args.num_classes is not None else []
    final += [f"--config={args.config}"] if args.config else []
    final += [f"--select={option}" for option in args.select] + [f"--ignore={option}" for option in args.ignore]
    return main(final + (["--format", "json"] if args.format == "json" else []))


def build_rules_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="curvedoc rules", description="List the rules, or explain one.")
    parser.add_argument("code", nargs="?", help="a rule code (CD101) or symptom id (nan_inf) to explain")
    parser.add_argument("--format", choices=("text", "json", "markdown"), default="text",
                        help="markdown: the whole reference as one page (docs/rules.md is this)")
    return parser


def rules_command(argv: list[str]) -> int:
    args = build_rules_parser().parse_args(argv)
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
