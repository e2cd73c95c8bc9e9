"""Named rule presets: the YAML files of ``configs/rules/`` as ready ``Rules`` objects.

Each preset models one table of a source document of ``docs/RULES.md`` (seed 000, 001,
003 or 004); the YAML files say which and why. They ship inside the package
(``president_env/configs/rules/`` once installed) and are read from the
repository's ``configs/rules/`` when running from a checkout.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

from president_env.core.rules import Rules, looks_like_path
from president_env.core.user_input import is_file, short_repr

PRESETS: tuple[str, ...] = ("standard", "quebec", "big_table", "family", "party", "or_nothing")
"""Names accepted by :func:`load_preset`."""

_PACKAGE_DIR = Path(__file__).resolve().parents[1]  # president_env/
# Installed (wheel or sdist): the configs travel as package data inside the package.
# Checkout (editable install or plain sys.path): they sit in the repository's top-level configs/.
_SEARCH_DIRS: tuple[Path, ...] = (
    _PACKAGE_DIR / "configs" / "rules",
    _PACKAGE_DIR.parent / "configs" / "rules",
)


def preset_path(name: str) -> Path:
    """Path of the YAML file of preset ``name``; ``ValueError`` listing the valid names if unknown."""
    if name not in PRESETS:
        raise ValueError(f"unknown rules preset {short_repr(name)}; valid presets: {', '.join(PRESETS)}")
    for directory in _SEARCH_DIRS:
        path = directory / f"{name}.yaml"
        if path.is_file():
            return path
    searched = ", ".join(str(d) for d in _SEARCH_DIRS)
    raise FileNotFoundError(f"rules preset {name!r} is known but its file {name}.yaml is not in {searched}")


def load_preset(name: str) -> Rules:
    """The ``Rules`` of a named preset (one of ``president_env.core.presets.PRESETS``), e.g.
    ``load_preset("quebec")``."""
    return Rules.from_yaml(preset_path(name))


RulesSpec = Rules | str | os.PathLike | Mapping[str, Any] | None
"""What names a table: a ``Rules``, a preset name, a YAML file path, a mapping of fields, YAML text, or ``None``."""


def resolve_rules(spec: RulesSpec) -> Rules:
    """The one door for a rules spec: every entry point (envs, agents, CLIs, trainers) calls it.

    - ``None``: the standard game, ``Rules()``;
    - a ``Rules``: itself;
    - a mapping of field names to values: ``Rules.from_dict``;
    - a ``Path`` (any ``os.PathLike``): that YAML file;
    - a string: a preset name (:data:`PRESETS`), else an existing file, else the path of a missing YAML file
      when it looks like a path (one line without ``": "``, ending in ``.yaml`` / ``.yml`` or holding a ``/``: an
      error naming it, even with a ``:`` in its name), else YAML text when it holds a newline, ``:`` or ``{``.

    Files and text go through the bounded YAML loader (:mod:`.user_input`). Anything else, a missing
    file or an unknown name is a ``ValueError`` that names it.
    """
    if spec is None:
        return Rules()
    if isinstance(spec, Rules):
        return spec
    if isinstance(spec, Mapping):
        return Rules.from_dict(dict(spec))
    if isinstance(spec, os.PathLike):
        path = os.fspath(spec)
        if not isinstance(path, str):
            raise ValueError(f"rules path must be text, got {short_repr(path)}")
        return Rules.from_yaml(Path(path))
    if not isinstance(spec, str):
        raise ValueError(
            "rules must be a president_env.Rules, a preset name, a YAML file path, a mapping of rules fields "
            f"or YAML text; got {type(spec).__name__} {short_repr(spec)}"
        )
    source = rules_source(spec)
    if source == "preset":
        return load_preset(spec)
    if source == "file":
        return Rules.from_yaml(Path(spec))  # a missing file (its name may hold a ':'): the loader's error names it
    if source == "text":
        return Rules.from_yaml(spec)
    raise ValueError(
        f"{short_repr(spec, 200)} is neither a rules preset ({', '.join(PRESETS)}), nor an existing YAML file, "
        "nor YAML text"
    )


def rules_source(spec: str) -> Literal["preset", "file", "text"] | None:
    """How :func:`resolve_rules` reads the string ``spec``: a preset name, a YAML file (existing, or a missing one
    that looks like a path), YAML text, or none of them (``None``)."""
    if spec in PRESETS:
        return "preset"
    if is_file(spec) or looks_like_path(spec):
        return "file"
    if any(ch in spec for ch in "\n:{"):
        return "text"
    return None


__all__ = ["PRESETS", "RulesSpec", "load_preset", "preset_path", "resolve_rules", "rules_source"]
