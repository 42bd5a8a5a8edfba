"""The tidy model every reader fills and every rule reads: runs of scalar curves with roles and metadata.

A run's scalars are one long DataFrame (``tag, step, wall_time, value``). NaN and ±Inf that the training
logged stay in ``value``: they are the evidence. "Not logged at this step" is simply the absence of a row,
so the two can never be confused.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    import pandas as pd

from curvedoc.roles import Role, infer_role, is_total_norm, primary_tag


# Keys under which configs of real frameworks record the number of output classes (HF: num_labels; LMs: vocab_size).
N_CLASSES_KEYS = (
    "num_classes", "n_classes", "nb_classes", "num_class", "n_class", "nclasses", "numclasses",
    "num_labels", "n_labels", "vocab_size", "n_vocab", "ntokens",
)


def n_classes_from(params: Mapping[str, Any]) -> tuple[int, str] | None:
    """The class count a config declares, and the key it came from; nested keys are searched by their last part.

    Nesting shows as dicts or as flattened names (``model.num_classes``, MLflow's ``model/num_classes``).
    """
    for wanted in N_CLASSES_KEYS:
        for key, value in _flatten(params):
            if _last_part(key) == wanted:
                count = _as_count(value)
                if count is not None:
                    return count, key
    for key, value in _flatten(params):
        if _last_part(key) in {"id2label", "label2id"} and isinstance(value, Mapping) and value:
            return len(value), key
    return None


def _last_part(key: str) -> str:
    return re.split(r"[./]", key)[-1].lower()


def _as_count(value: Any) -> int | None:
    if isinstance(value, bool):
        return None
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    return int(number) if number.is_integer() and number >= 2 else None


def _flatten(params: Mapping[str, Any], prefix: str = "") -> Iterable[tuple[str, Any]]:
    for key, value in params.items():
        name = f"{prefix}{key}"
        if isinstance(value, Mapping) and not {"id2label", "label2id"} & {str(key).lower()}:
            yield from _flatten(value, name + ".")
        yield name, value


@dataclass
class RunMeta:
    n_classes: int | None = None
    n_classes_source: str | None = None  # where n_classes came from: "hparams: num_classes", "--num-classes"
    hparams: dict[str, Any] = field(default_factory=dict)
    files: list[str] = field(default_factory=list)
    start_time: float | None = None  # unix seconds, when the format records it


@dataclass
class Run:
    path: str
    format: str
    scalars: pd.DataFrame
    roles: dict[str, Role]
    meta: RunMeta = field(default_factory=RunMeta)
    warnings: list[str] = field(default_factory=list)
    name: str = ""
    findings: list = field(default_factory=list)  # filled by curvedoc.diagnose
    insufficient: str | None = None  # filled by curvedoc.diagnose: why the run holds too little to judge

    def __post_init__(self) -> None:
        if not self.name:
            self.name = os.path.basename(os.path.normpath(self.path)) or self.path

    @property
    def tags(self) -> list[str]:
        return list(self.roles)

    def series(self, tag: str) -> pd.DataFrame:
        """One tag's curve, sorted by step: columns ``step, wall_time, value``."""
        rows = self.scalars[self.scalars["tag"] == tag]
        return rows[["step", "wall_time", "value"]].reset_index(drop=True)

    def tags_with(self, role: Role | str) -> list[str]:
        role = Role(role)
        return [tag for tag, tag_role in self.roles.items() if tag_role == role]

    def primary(self, role: Role | str) -> str | None:
        """The tag a person would plot for ``role`` (the total loss, not one of its components). For gradient norms
        only a total norm qualifies: None when the run logs per-layer norms alone (see ``roles.is_total_norm``)."""
        tags = self.tags_with(role)
        if Role(role) is Role.GRAD_NORM:
            tags = [tag for tag in tags if is_total_norm(tag)]
        return primary_tag(tags, self.point_counts())

    def point_counts(self) -> dict[str, int]:
        # numpy over the categorical codes: rules ask for this per role, and pandas' value_counts cost ~1 ms a call
        import pandas as pd

        tags = self.scalars["tag"]
        if not isinstance(tags.dtype, pd.CategoricalDtype):
            tags = tags.astype("category")
        names = tags.cat.categories.tolist()
        return dict(zip(names, np.bincount(tags.cat.codes.to_numpy(), minlength=len(names)).tolist()))

    def set_roles(self, overrides: Mapping[str, str]) -> None:
        """Apply user overrides ``{role: tag}``; a tag named for a role takes it, other tags keep theirs."""
        for role, tag in overrides.items():
            if tag in self.roles:
                self.roles[tag] = Role(role)

    def set_n_classes(self, n_classes: int, source: str) -> None:
        self.meta.n_classes = n_classes
        self.meta.n_classes_source = source


class RunBuilder:
    """Collects one run's points as numpy chunks and turns them into a :class:`Run` once.

    Readers hand over whole arrays per tag, never rows, so building stays linear in the number of points.
    ``split_hint`` records that a tag came from a folder naming its split (Keras's ``validation/``).
    """

    def __init__(self, path: str | os.PathLike[str], fmt: str, name: str = ""):
        self.path = os.fspath(path)
        self.format = fmt
        self.name = name
        self.meta = RunMeta()
        self.warnings: list[str] = []
        self._chunks: dict[str, list[tuple[np.ndarray, np.ndarray, np.ndarray]]] = {}
        self._split_hint: dict[str, str] = {}

    def add(self, tag: str, steps, values, wall_times=None, split_hint: str | None = None) -> None:
        steps = np.asarray(steps, dtype=np.int64).reshape(-1)
        values = np.asarray(values, dtype=np.float64).reshape(-1)
        if wall_times is None:
            wall_times = np.full(len(steps), np.nan)
        wall_times = np.asarray(wall_times, dtype=np.float64).reshape(-1)
        if not (len(steps) == len(values) == len(wall_times)):
            raise ValueError(f"tag {tag!r}: steps, values and wall times differ in length")
        self._chunks.setdefault(tag, []).append((steps, values, wall_times))
        if split_hint:
            self._split_hint[tag] = split_hint

    def warn(self, message: str) -> None:
        self.warnings.append(" ".join(message.split()))

    def add_file(self, path: str | os.PathLike[str]) -> None:
        self.meta.files.append(os.fspath(path))

    @property
    def has_points(self) -> bool:
        return any(len(c[0]) for chunks in self._chunks.values() for c in chunks)

    def build(self) -> Run:
        frames = []
        roles: dict[str, Role] = {}
        repeated_by_tag: dict[str, int] = {}
        for tag, chunks in self._chunks.items():
            steps = np.concatenate([c[0] for c in chunks])
            values = np.concatenate([c[1] for c in chunks])
            walls = np.concatenate([c[2] for c in chunks])
            if len(steps) == 0:
                continue
            if len(steps) > 1 and not (steps[1:] >= steps[:-1]).all():
                # Stable sort keeps logging order among equal steps, so the last value logged wins below.
                order = np.argsort(steps, kind="stable")
                steps, values, walls = steps[order], values[order], walls[order]
            keep = np.ones(len(steps), dtype=bool)
            keep[:-1] = steps[1:] != steps[:-1]
            repeated = int(len(steps) - np.count_nonzero(keep))
            if repeated:
                repeated_by_tag[tag] = repeated
                steps, walls, values = steps[keep], walls[keep], values[keep]
            frames.append((tag, steps, walls, values))
            roles[tag] = infer_role(tag, self._split_hint.get(tag))
        if repeated_by_tag:
            named = ", ".join(list(repeated_by_tag)[:3]) + (" and more" if len(repeated_by_tag) > 3 else "")
            self.warn(
                f"{self.path}: {sum(repeated_by_tag.values())} point(s) logged again at a step that already had "
                f"a value (in {named}); each curve keeps the last value logged per step"
            )
        scalars = _frame(frames)
        if self.meta.n_classes is None:
            found = n_classes_from(self.meta.hparams)
            if found:
                self.meta.n_classes, key = found
                self.meta.n_classes_source = f"config: {key}"
        return Run(self.path, self.format, scalars, roles, self.meta, self.warnings, self.name)


def _frame(parts: list[tuple[str, np.ndarray, np.ndarray, np.ndarray]]) -> pd.DataFrame:
    # pandas is imported where a frame is built, not with the model: an audit served from its cache builds none,
    # and importing pandas was a third of its time.
    import pandas as pd

    if not parts:
        return empty_scalars()
    tags = [p[0] for p in parts]
    lengths = [len(p[1]) for p in parts]
    codes = np.repeat(np.arange(len(tags), dtype=np.int32), lengths)
    return pd.DataFrame({
        "tag": pd.Categorical.from_codes(codes, categories=tags),
        "step": np.concatenate([p[1] for p in parts]),
        "wall_time": np.concatenate([p[2] for p in parts]),
        "value": np.concatenate([p[3] for p in parts]),
    })


def empty_scalars() -> pd.DataFrame:
    import pandas as pd

    return pd.DataFrame({
        "tag": pd.Categorical([]),
        "step": np.array([], dtype=np.int64),
        "wall_time": np.array([], dtype=np.float64),
        "value": np.array([], dtype=np.float64),
    })
