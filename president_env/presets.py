"""Named rule presets: the YAML files of ``configs/rules/`` as ready ``Rules`` objects.

Each preset models one table of a source document of ``docs/RULES.md`` (seed 000, 001,
003 or 004); the YAML files say which and why. They ship inside the package
(``president_env/configs/rules/`` once installed) and are read from the
repository's ``configs/rules/`` when running from a checkout.
"""

from __future__ import annotations

from pathlib import Path

from .rules import Rules
from .user_input import short_repr

PRESETS: tuple[str, ...] = ("standard", "quebec", "big_table", "family", "party", "or_nothing")
"""Names accepted by :func:`load_preset`."""

_PACKAGE_DIR = Path(__file__).resolve().parent
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
    """The ``Rules`` of a named preset (one of ``president_env.presets.PRESETS``), e.g. ``load_preset("quebec")``."""
    return Rules.from_yaml(preset_path(name))


def resolve_rules(rules: Rules | str | None) -> Rules:
    """A ``Rules`` from a ``Rules``, a preset name or ``None`` (the standard game)."""
    if rules is None:
        return Rules()
    if isinstance(rules, str):
        return load_preset(rules)
    if not isinstance(rules, Rules):
        raise ValueError(f"rules must be a president_env.Rules or a preset name, got {type(rules).__name__}")
    return rules


__all__ = ["PRESETS", "load_preset", "preset_path", "resolve_rules"]
