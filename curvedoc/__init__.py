"""curvedoc: reads the logs of a training run and tells what silently went wrong."""

from __future__ import annotations

import os

from curvedoc.config import Config
from curvedoc.errors import CurvedocError, NotALog
from curvedoc.model import Run, RunMeta
from curvedoc.readers import LOOKED_FOR, RunList, discover, limits, read_source
from curvedoc.roles import Role

__version__ = "0.3.380"
__all__ = ["CurvedocError", "Config", "Role", "Run", "RunList", "RunMeta", "diagnose", "load", "plot"]


def load(
    path: str | os.PathLike[str],
    *,
    roles: dict[str, str] | None = None,
    num_classes: int | None = None,
    config: Config | str | os.PathLike[str] | None = None,
) -> RunList:
    """Every run found under ``path`` (a log file, a run folder, or a folder of runs).

    ``roles`` maps a role to the tag that plays it (``{"val_loss": "my/tag"}``) and ``num_classes`` supplies
    the class count when no config records it; both override ``config``: the configuration the command line
    reads (``[tool.curvedoc]`` in the nearest ``pyproject.toml`` or a ``curvedoc.toml``, from the current folder
    up) unless a :class:`Config` or a file's path is given. Sources that cannot be read at all are listed in the
    result's ``problems``; a path with nothing readable raises :class:`CurvedocError`.
    """
    settings = configuration(config).merged(roles, num_classes, origin="load(roles=…)")
    found = discover(path)
    runs, problems = [], list(found.problems)
    for source in found.sources:
        try:
            with limits.using(settings.limits):
                runs.extend(read_source(source))
        except NotALog:
            if source.explicit:
                raise
            # a .txt or .log found in a folder that turned out to be notes, not a log: passed over like a .md
        except CurvedocError as exc:
            if source.explicit:
                raise
            problems.append(str(exc))
    settings.apply(runs)
    if not runs and problems:
        raise CurvedocError(None, problems[0] if len(problems) == 1 else f"{problems[0]} (and {len(problems) - 1} more)")
    if not runs:
        raise CurvedocError(path, f"no training logs found; looked for {LOOKED_FOR}")
    return RunList(runs, problems)


def diagnose(
    path: str | os.PathLike[str],
    *,
    roles: dict[str, str] | None = None,
    num_classes: int | None = None,
    config: Config | str | os.PathLike[str] | None = None,
    baseline: str | os.PathLike[str] | None = None,
) -> RunList:
    """:func:`load`, then every enabled rule on every run: each run's ``findings`` filled, most severe first.
    ``baseline``: the base model's run, whose last loss a fine-tune's first loss is judged against (CD901)."""
    from curvedoc.diagnose import apply_baseline, diagnose_runs

    config = configuration(config)
    runs = load(path, roles=roles, num_classes=num_classes, config=config)
    if baseline is not None:
        apply_baseline(runs, baseline)
    diagnose_runs(runs, config.rules)
    return runs


def configuration(config: Config | str | os.PathLike[str] | None) -> Config:
    """The configuration the API uses: the one given, the file named, or the one the command line would find."""
    from curvedoc.config import find_config, load_config

    if isinstance(config, Config):
        return config
    return load_config(config) if config is not None else find_config()


def plot(run: Run):
    """A matplotlib figure of the run's key curves with its findings drawn on them (NaN step, spike, best
    validation step, chance line …)."""
    from curvedoc.report.plots import figure_for_run

    return figure_for_run(run)
