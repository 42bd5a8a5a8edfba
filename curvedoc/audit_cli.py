"""``curvedoc audit ROOT...``: the command line of :func:`curvedoc.audit.audit`."""

from __future__ import annotations

import argparse
import shutil
import sys
from pathlib import Path

from curvedoc.cli import (EXIT_USAGE, add_diagnosis_options, emit, fail, gate, settings_from_args, wants_color,
                          write_report)
from curvedoc.errors import CurvedocError

# What `-o DIR` holds besides each run's own report: the index in every format, for people and for machines.
TERMINAL_ROWS = 40
INDEX_FILES = {"html": "index.html", "markdown": "index.md", "json": "index.json", "csv": "runs.csv"}


def build_audit_parser() -> argparse.ArgumentParser:
    from curvedoc.report.index import INDEX_RENDERERS

    parser = argparse.ArgumentParser(
        prog="curvedoc audit",
        description="Diagnose every training run under folders or buckets, in parallel, and compare runs: seeds "
                    "that do not reproduce, sweeps that all fail the same way, results too good to be true.",
    )
    parser.add_argument("roots", nargs="+", metavar="ROOT",
                        help="a folder of runs, or an fsspec URL such as s3://bucket/prefix (needs curvedoc[remote])")
    parser.add_argument("-j", "--jobs", type=int, metavar="N", help="worker processes (default: every core)")
    parser.add_argument("--format", choices=sorted(INDEX_RENDERERS), default="text",
                        help="the index printed on stdout (default: text)")
    parser.add_argument("-o", "--output", metavar="DIR",
                        help=f"write the index ({', '.join(INDEX_FILES.values())}) and each run's own HTML and "
                             "Markdown report under DIR/runs/")
    parser.add_argument("-q", "--quiet", action="store_true", help="print totals and failing runs only")
    cache = parser.add_mutually_exclusive_group()
    cache.add_argument("--cache-dir", metavar="DIR",
                       help="where results of unchanged runs are remembered (default: the user cache folder, "
                            "or $CURVEDOC_CACHE_DIR); always safe to delete")
    cache.add_argument("--no-cache", action="store_true", help="read and diagnose every run again")
    parser.add_argument("--dask", metavar="ADDRESS",
                        help="run the per-run work on this Dask scheduler (tcp://host:8786; needs curvedoc[dask])")
    parser.add_argument("--storage-option", action="append", default=[], metavar="KEY=VALUE",
                        help="an fsspec storage option for remote roots, e.g. endpoint_url=http://127.0.0.1:9000 "
                             "(repeatable)")
    add_diagnosis_options(parser)
    return parser


def audit_command(argv: list[str]) -> int:
    from curvedoc.audit import audit
    from curvedoc.audit.remote import parse_storage_options
    from curvedoc.report.index import IndexOptions, render_index

    args = build_audit_parser().parse_args(argv)
    try:
        if args.jobs is not None and args.jobs < 1:
            raise CurvedocError(None, "-j must be at least 1")
        config = settings_from_args(args)
        result = audit(
            args.roots, config=config, jobs=args.jobs,
            cache=False if args.no_cache else (args.cache_dir or True),
            report_dir=args.output, dask=args.dask, storage_options=parse_storage_options(args.storage_option),
            progress=sys.stderr.isatty(),
        )
        to_terminal = sys.stdout.isatty()
        options = IndexOptions(
            quiet=args.quiet,
            color=args.format == "text" and wants_color("auto", to_terminal),
            width=shutil.get_terminal_size((100, 24)).columns if to_terminal else 100,
            cut_to_width=to_terminal,
            # a terminal shows the worst runs and counts the rest; a file or a pipe gets every run
            rows=TERMINAL_ROWS if to_terminal else None,
        )
        if args.output:
            for fmt, name in INDEX_FILES.items():
                path = Path(args.output) / name
                write_report(render_index(fmt, result, IndexOptions(output=path)), path)
        emit(render_index(args.format, result, options))
        if args.output:
            print(f"curvedoc: wrote {Path(args.output) / INDEX_FILES['html']} and {len(result.runs)} run reports "
                  f"under {Path(args.output) / 'runs'}", file=sys.stderr)
    except CurvedocError as exc:
        return fail(exc)
    except KeyboardInterrupt:
        print("curvedoc: audit interrupted", file=sys.stderr)
        return EXIT_USAGE
    severities = [f.severity for run in result.runs for f in run.findings]
    severities += [finding.severity for finding in result.cross_run]
    return gate(args.fail_on, severities)
