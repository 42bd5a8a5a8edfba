"""User configuration: ``[tool.curvedoc]`` in a ``pyproject.toml``, or a ``curvedoc.toml``.

The nearest file from the current folder upwards wins, as with ruff or pytest. Command-line options override it.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from curvedoc.diagnose import RuleSettings, settings_from
from curvedoc.errors import CurvedocError
from curvedoc.model import CLASSES, VOCABULARY
from curvedoc.roles import Role

VALID_ROLES = {role.value for role in Role}


@dataclass
class Config:
    roles: dict[str, str] = field(default_factory=dict)  # role → tag
    num_classes: int | None = None
    source: str | None = None
    rules: RuleSettings = field(default_factory=RuleSettings)

    def merged(self, roles: dict[str, str] | None = None, num_classes: int | None = None) -> "Config":
        return Config({**self.roles, **(roles or {})}, num_classes or self.num_classes, self.source, self.rules)

    def apply(self, runs) -> None:
        """Give freshly read runs the user's role overrides, and the class count where their config lacks one."""
        for run in runs:
            run.set_roles(self.roles)
            if run.meta.n_classes is None and self.num_classes:
                # a language model's count is its vocabulary: its chance level, ln(V), is not a class prior's
                run.set_n_classes(self.num_classes, "--num-classes", VOCABULARY if run.meta.language_model else CLASSES)


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
    if table is None and path.name == "curvedoc.toml":
        table = document
    return table


def parse_config(table: dict[str, Any], source: str) -> Config:
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
    return Config(dict(roles), num_classes, source, rules)


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
