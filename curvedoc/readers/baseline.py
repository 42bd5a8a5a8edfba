"""The base model's own run, read for the loss a fine-tune's first loss is judged against (CD901).

Given with ``--baseline RUN``, or found by itself: a fine-tune whose config names its base by a local path
(``model_name_or_path: ./outputs/pretrain``, an adapter's ``base_model_name_or_path``) that holds the base's own
run — the pretraining output folder sitting in the same archive — is given that run's loss. The path is tried as
written when absolute, else against the run's folder and up to three folders above it (where an archive's runs
sit side by side). A folder that holds the fine-tune itself is not its base.
"""

from __future__ import annotations

import os
from pathlib import Path

from curvedoc.errors import CurvedocError
from curvedoc.model import Run

LEVELS_UP = 3
_reading: set[str] = set()  # base folders being read now: a base whose config names a base of its own stops here
# A base read once per process while its files are unchanged: an archive's many fine-tunes of one base read it once
_read_bases: dict[str, tuple[dict, tuple[float, str, list[str]]]] = {}


def base_loss_of(path: str | os.PathLike[str]) -> tuple[float, str, list[str]]:
    """(loss, where it was read, files read) of the one run at ``path``: its held-out loss at the end, else its
    train loss at the end (medians of the last tenth). Raises :class:`CurvedocError` when ``path`` holds no run,
    several, or no finite loss."""
    import curvedoc
    from curvedoc.features import RunCurves
    from curvedoc.roles import Role

    found = curvedoc.load(path)
    if len(found) != 1:
        raise CurvedocError(str(path), f"{len(found)} runs here; name the one run of the base model")
    curves = RunCurves(found[0])
    for role in (Role.VAL_LOSS, Role.TEST_LOSS, Role.TRAIN_LOSS):
        curve = curves.curve(role)
        if curve is not None and len(curve.finite_values):
            return curve.end, f"{found[0].path}: {curve.tag} at the end", list(found[0].meta.files)
    raise CurvedocError(str(path), "this run logs no finite loss to compare a fine-tune with")


def complete(runs: list[Run], source_path: Path) -> None:
    """Gives ``runs`` whose config names their base by a local path holding its run that run's loss."""
    anchor = (source_path if source_path.is_dir() else source_path.parent).resolve()
    for run in runs:
        if run.meta.base_loss is not None or not run.meta.base_model:
            continue
        folder = _base_folder(run.meta.base_model, anchor)
        if folder is None or str(folder) in _reading:
            continue
        try:
            loss, where, files = cached_base_loss(folder)
        except CurvedocError:
            continue  # a model folder with weights but no logs: nothing to compare with
        run.meta.base_loss, run.meta.base_loss_source = loss, f"{where}, the base the config names"
        run.meta.files.extend(name for name in files if name not in run.meta.files)


def cached_base_loss(folder: str | os.PathLike[str]) -> tuple[float, str, list[str]]:
    """:func:`base_loss_of`, read once per process while the base run's files are unchanged."""
    from curvedoc.audit.cache import stamp

    cached = _read_bases.get(str(folder))
    if cached is not None and stamp(cached[1][2]) == cached[0]:
        return cached[1]
    _reading.add(str(folder))
    try:
        found = base_loss_of(folder)
    finally:
        _reading.discard(str(folder))
    _read_bases[str(folder)] = (stamp(found[2]), found)
    return found


def _base_folder(base_model: str, anchor: Path) -> Path | None:
    named = Path(base_model).expanduser()
    candidates = [named] if named.is_absolute() else [folder / named for folder in (anchor, *anchor.parents[:LEVELS_UP])]
    for candidate in candidates:
        try:
            if not candidate.is_dir():
                continue
            resolved = candidate.resolve()
        except OSError:
            continue
        if resolved == anchor or resolved in anchor.parents:
            continue  # the fine-tune's own folder, or one that holds it
        return resolved
    return None
