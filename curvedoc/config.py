"""User configuration: ``[tool.curvedoc]`` in a ``pyproject.toml``, or a ``curvedoc.toml``.

The nearest file from the current folder upwards wins, as with ruff or pytest. Command-line options override it.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from curvedoc.diagnose import RuleSettings, closest, settings_from
from curvedoc.errors import CurvedocError
from curvedoc.model import CLASSES, VOCABULARY
from curvedoc.readers.limits import ReadLimits
from curvedoc.roles import Role
from curvedoc.vocabularies import complete_vocabulary

VALID_ROLES = {role.value for role in Role}


# The keys of [tool.curvedoc]: any other is a mistake (a typo must not silently leave a setting at its default)
KNOWN_KEYS = ("roles", "num_classes", "select", "disable", "ignore", "per-run-ignores", "thresholds", "limits")


@dataclass
class Config:
    roles: dict[str, str] = field(default_factory=dict)  # role → tag
    num_classes: int | None = None
    source: str | None = None
    rules: RuleSettings = field(default_factory=RuleSettings)
    role_origins: dict[str, str] = field(default_factory=dict)  # role → where its override was given
    limits: ReadLimits = field(default_factory=ReadLimits)  # what one input file may cost

    def merged(self, roles: dict[str, str] | None = None, num_classes: int | None = None,
               origin: str = "--role") -> "Config":
        origins = {**self.role_origins, **{role: origin for role in roles or {}}}
        return Config({**self.roles, **(roles or {})}, num_classes or self.num_classes, self.source, self.rules,
                      origins, self.limits)

    def apply(self, runs, strict: bool = True) -> None:
        """Give freshly read runs the user's role overrides, and the class count where their config lacks one (a
        language model's: else the vocabulary of the base model its files name, see curvedoc.vocabularies).

        A role override naming a tag that none of ``runs`` has is an error when ``strict`` (a typo would otherwise
        leave the checks of that role without their curve and the run "healthy"); a run that lacks a tag other
        runs have gets a warning.
        """
        runs = list(runs)
        for role, tag in self.roles.items():
            lacking = [run for run in runs if tag not in run.roles]
            if not lacking:
                continue
            where = self.role_origins.get(role) or self.source or "roles"
            if strict and len(lacking) == len(runs):
                tags = sorted({name for run in runs for name in run.roles})
                listed = ", ".join(repr(name) for name in tags[:8]) + (" …" if len(tags) > 8 else "")
                raise CurvedocError(where, f"role {role} = {tag!r}: no run has that tag{closest(tag, tags)} "
                                           f"(tags: {listed or 'none'})")
            for run in lacking:
                run.warnings.append(f"{where}: role {role} = {tag!r}, but this run has no such tag; the checks of "
                                    f"{role} ran without it")
        for run in runs:
            run.set_roles(self.roles)
            if run.meta.n_classes is None and self.num_classes:
                # a language model's count is its vocabulary: its chance level, ln(V), is not a class prior's
                run.set_n_classes(self.num_classes, "--num-classes", VOCABULARY if run.meta.language_model else CLASSES)
            # after every file and the user's count: the table of base models is the last resort, never an override
            complete_vocabulary(run)


def find_config(start: Path | None = None) -> Config:
    folder = (start or Path.cwd()).resolve()
    for candidate in [folder, *folder.parents]:
        for name in ("curvedoc.toml", "pyproject.toml"):
            path = candidate / name
            if path.is_file():
                table = _table(path)
                if table is not None:
                    return parse_config(table, str(path))
    return Config()


def load_config(path: str | Path) -> Config:
    table = _table(Path(path))
    return parse_config(table or {}, str(path))


def _table(path: Path) -> dict[str, Any] | None:
    try:
        with open(path, "rb") as handle:
            document = tomllib.load(handle)
    except OSError as exc:
        raise CurvedocError(path, exc.strerror or "cannot be read") from None
    except tomllib.TOMLDecodeError as exc:
        raise CurvedocError(path, f"not valid TOML ({exc})") from None
    table = document.get("tool", {}).get("curvedoc")
    if table is None and path.name != "pyproject.toml":  # curvedoc.toml, or any file named with --config
        table = document
    return table


def parse_config(table: dict[str, Any], source: str) -> Config:
    for key in table:
        if key not in KNOWN_KEYS:
            raise CurvedocError(source, f"unknown key {key!r}{closest(key, KNOWN_KEYS)} "
                                        f"(keys: {', '.join(KNOWN_KEYS)})")
    roles = table.get("roles", {})
    if not isinstance(roles, dict):
        raise CurvedocError(source, "[tool.curvedoc] roles must be a table of role = \"tag\"")
    for role, tag in roles.items():
        check_role(role, source)
        if not isinstance(tag, str):
            raise CurvedocError(source, f"role {role} must name a tag as a string")
    num_classes = table.get("num_classes")
    if num_classes is not None and (not isinstance(num_classes, int) or num_classes < 2):
        raise CurvedocError(source, "num_classes must be a whole number of at least 2")
    try:
        rules = settings_from(table)
        rules.validate(source)
    except CurvedocError as exc:
        raise CurvedocError(source, exc.problem) from None
    return Config(dict(roles), num_classes, source, rules, {role: source for role in roles},
                  ReadLimits.from_table(table.get("limits", {}), source))


def check_role(role: str, where: str | None) -> None:
    if role not in VALID_ROLES:
        raise CurvedocError(where, f"unknown role {role!r}; roles are {', '.join(sorted(VALID_ROLES))}")


def parse_role_option(text: str) -> tuple[str, str]:
    """``val_loss=my/tag`` → (``val_loss``, ``my/tag``)."""
    role, sep, tag = text.partition("=")
    if not sep or not tag:
        raise CurvedocError(None, f"--role takes ROLE=TAG, got {text!r}")
    check_role(role.strip(), "--role")
    return role.strip(), tag
