"""The ``Rules`` object: every variant of RULES.md as one frozen, validated dataclass.

``Rules`` is the single source of rule truth; every engine function takes it
first. It validates on construction (``ValueError`` naming the field and the
allowed values), round-trips exactly through YAML (unknown keys rejected) and
derives every size the engine needs (ranks, largest play, action count).
"""

from __future__ import annotations

import dataclasses
import os
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any, Literal

import yaml

from president_env.core.cards import JOKER, N_NATURAL_RANKS
from president_env.core.user_input import load_yaml, read_text, short_repr

_CHOICES: dict[str, tuple[str, ...]] = {
    "deal_start": ("dealer_left", "dealer"),
    "initial_roles": ("none", "draw"),
    "first_lead": ("three_of_clubs", "dealer_left"),
    "lead": ("trou_du_cul", "president"),
    "pass_rule": ("out_until_trick_end", "can_return"),
    "equal_rank": ("none", "skip", "or_nothing"),
    "finish_on_two": ("allowed", "penalty"),
    "scoring": ("per_opponent_behind", "president_vice"),
}
_BOOLS = ("reseat_by_role", "top_rank_ends_trick", "revolution", "twos_wild")
MAX_MANCHES = 100
"""Most manches in a game, everywhere (envs, agents, tournaments, training, the apps). A long evening of
Président is a few dozen manches; 100 (plus a decisive one) keeps every game, and its replay, bounded: at most
101 manches of at most 874 decisions each (8 players, 108 cards, a pass by every other player after every card),
88,374 actions, within the replay reader's limits (``replay.MAX_ACTIONS``), and the counters far from their
types' ends (the manche index is ``int16``, the totals ``int32``)."""


@dataclass(frozen=True)
class Rules:
    """One table's rules. Defaults give the standard 4-player game of RULES.md.

    Every field is documented in ``docs/RULES.md`` under the same name;
    ``docs/semantics.md`` states how open points are read.
    """

    n_players: int = 4
    """Players at the table, 3..8."""
    decks: int = 1
    """1 (52 cards) or 2 (104 cards)."""
    jokers: int = 0
    """Jokers added, at most 2 per deck; a joker ranks above the 2."""
    reseat_by_role: bool = False
    """Before each manche that starts with roles (every manche after the first, and the first when roles are
    drawn or supplied), players sit by role: Président at seat 0, Trou du cul at seat 1, Vice-Président last."""
    deal_start: Literal["dealer_left", "dealer"] = "dealer_left"
    """Who receives the first card of the deal."""
    initial_roles: Literal["none", "draw"] = "none"
    """First manche without roles, or roles drawn (then it has an exchange)."""
    exchange: tuple[int, ...] = (2, 1)
    """Cards exchanged per pair: entry i pairs the i-th best and i-th worst finisher."""
    first_lead: Literal["three_of_clubs", "dealer_left"] = "three_of_clubs"
    """Who leads a manche without roles."""
    lead: Literal["trou_du_cul", "president"] = "trou_du_cul"
    """Who leads a manche with roles, after the exchange."""
    pass_rule: Literal["out_until_trick_end", "can_return"] = "out_until_trick_end"
    """Whether a player who passed may play again in the same trick."""
    top_rank_ends_trick: bool = False
    """A play of the strongest rank in force wins the trick at once."""
    revolution: bool = False
    """A play of 4 or more cards inverts the rank order."""
    equal_rank: Literal["none", "skip", "or_nothing"] = "none"
    """Whether a play may match the previous rank, and what that does."""
    finish_on_two: Literal["allowed", "penalty"] = "allowed"
    """Going out with a 2 or a joker is allowed, or ranks the player last."""
    twos_wild: bool = False
    """A 2 completes a play of naturals of rank 3..A."""
    scoring: Literal["per_opponent_behind", "president_vice"] = "per_opponent_behind"
    """Points per manche."""
    manches: int = 5
    """Manches in a game, a match (a decisive manche is added on a tie), 1 to ``MAX_MANCHES`` (100); 1 gives
    single-manche games."""

    def __post_init__(self) -> None:
        if isinstance(self.exchange, (list, tuple)):
            object.__setattr__(self, "exchange", tuple(self.exchange))
        _validate(self)

    # ---- derived sizes -------------------------------------------------
    @cached_property
    def n_ranks(self) -> int:
        """Ranks in play: 13, or 14 with jokers (index 13 is the joker)."""
        return N_NATURAL_RANKS + (1 if self.jokers > 0 else 0)

    @cached_property
    def max_count(self) -> int:
        """The largest play: as many cards as there are copies of a natural rank."""
        return 4 * self.decks

    @cached_property
    def n_cards(self) -> int:
        """Cards in the deck: 52 a deck plus the jokers."""
        return 52 * self.decks + self.jokers

    @cached_property
    def copies(self) -> tuple[int, ...]:
        """Copies of each rank in the deck, ``(n_ranks,)``."""
        return (4 * self.decks,) * N_NATURAL_RANKS + ((self.jokers,) if self.jokers else ())

    @cached_property
    def num_actions(self) -> int:
        """Size of the action space: pass, every (rank, count) play, and one give per rank."""
        return 1 + self.n_ranks * self.max_count + self.n_ranks

    @cached_property
    def exchange_pairs(self) -> tuple[tuple[int, int, int], ...]:
        """``(high_position, low_position, cards)`` for every pair that exists at this table."""
        n = self.n_players
        return tuple((i, n - 1 - i, k) for i, k in enumerate(self.exchange) if i < n - 1 - i)

    @cached_property
    def top_rank(self) -> int:
        """The strongest rank in the normal order: the joker when present, else the 2."""
        return JOKER if self.jokers else N_NATURAL_RANKS - 1

    # ---- YAML ------------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        """Every field as plain Python values (``exchange`` as a list); :meth:`from_dict` reads it back equal."""
        data = dataclasses.asdict(self)
        data["exchange"] = list(self.exchange)
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Rules:
        """Rules from a mapping of field names to values; an unknown field or a bad value is a ``ValueError``."""
        if not isinstance(data, dict):
            raise ValueError(f"rules must be a mapping of field names to values, got {type(data).__name__}")
        names = [f.name for f in dataclasses.fields(cls)]
        unknown = sorted((short_repr(key, 40) for key in set(data) - set(names)), key=str)
        if unknown:
            more = f" and {len(unknown) - 5} more" if len(unknown) > 5 else ""
            listed = ", ".join(unknown[:5]) + more
            raise ValueError(f"unknown rules field(s) {listed}; allowed fields: {', '.join(names)}")
        return cls(**data)

    def to_yaml(self, path: str | Path | None = None) -> str:
        """YAML text of every field (written to ``path`` when given); ``from_yaml`` reads it back equal."""
        text = yaml.safe_dump(self.to_dict(), sort_keys=False)
        if path is not None:
            Path(path).write_text(text, encoding="utf-8")
        return text

    @classmethod
    def from_yaml(cls, source: str | Path) -> Rules:
        """Rules from a YAML file (a ``Path``, or a string naming a file) or from YAML text.

        A string that looks like a file path (one line ending in ``.yaml`` / ``.yml`` or holding a ``/``, neither
        starting with ``{`` nor holding ``": "``) names a file, even one with a ``:`` in its name; else a string
        holding a newline, ``:`` or ``{`` is read as YAML text, and any other string names a file. Unknown keys are
        an error; an empty document gives the defaults. Any bad input (a missing, binary or oversized file, invalid
        YAML, a key given twice, a YAML alias bomb) is a short ``ValueError`` (see ``user_input``).
        """
        text = str(source)
        what = "rules YAML text"
        if isinstance(source, Path) or looks_like_path(text) or not any(ch in text for ch in "\n:{"):
            what = f"rules file {short_repr(text, 200)}"
            text = read_text(text, "rules file")
        data = load_yaml(text, what)
        if data is None:
            data = {}
        if not isinstance(data, dict) and what == "rules YAML text":
            raise ValueError(
                f"rules YAML text {short_repr(text, 200)} is not a mapping of rules fields (nor the path of a file)"
            )
        return cls.from_dict(data)

    def replace(self, **changes: Any) -> Rules:
        """A copy with the given fields changed, validated as a new ``Rules``."""
        return dataclasses.replace(self, **changes)


def looks_like_path(text: str) -> bool:
    """Whether a rules spec string is a file path rather than YAML text: one line, neither a flow mapping nor a
    ``key: value`` pair, ending in ``.yaml`` / ``.yml`` or holding a path separator (no rules field takes a value
    with a ``/``)."""
    yaml_like = "\n" in text or ": " in text or text.lstrip().startswith("{")
    return not yaml_like and (text.endswith((".yaml", ".yml")) or "/" in text or os.sep in text)


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _validate(rules: Rules) -> None:
    if not _is_int(rules.n_players) or not 3 <= rules.n_players <= 8:
        raise ValueError(f"n_players must be an integer from 3 to 8, got {short_repr(rules.n_players)}")
    if not _is_int(rules.decks) or rules.decks not in (1, 2):
        raise ValueError(f"decks must be 1 or 2, got {short_repr(rules.decks)}")
    if not _is_int(rules.jokers) or not 0 <= rules.jokers <= 2 * rules.decks:
        raise ValueError(
            f"jokers must be an integer from 0 to {2 * rules.decks} (at most 2 per deck) with decks={rules.decks}, "
            f"got {short_repr(rules.jokers)}"
        )
    for name in _BOOLS:
        value = getattr(rules, name)
        if not isinstance(value, bool):
            raise ValueError(f"{name} must be true or false, got {short_repr(value)}")
    for name, allowed in _CHOICES.items():
        value = getattr(rules, name)
        if value not in allowed:
            raise ValueError(f"{name} must be one of {', '.join(allowed)}; got {short_repr(value)}")
    if not isinstance(rules.exchange, tuple) or not all(_is_int(k) and 1 <= k <= 4 for k in rules.exchange):
        raise ValueError(
            f"exchange must be a list of card counts, each an integer from 1 to 4, got {short_repr(rules.exchange)}"
        )
    if len(rules.exchange) > 4:
        raise ValueError(f"exchange has {len(rules.exchange)} entries; at most 4 pairs exist (8 players)")
    # Hands hold at least 6 cards (52 cards, 8 players) and an entry at most 4: every exchange fits.
    if not _is_int(rules.manches) or not 1 <= rules.manches <= MAX_MANCHES:
        raise ValueError(f"manches must be an integer from 1 to {MAX_MANCHES}, got {short_repr(rules.manches)}")


RULE_FIELDS: tuple[str, ...] = tuple(f.name for f in dataclasses.fields(Rules))
RULE_CHOICES = _CHOICES
__all__ = ["MAX_MANCHES", "Rules", "RULE_FIELDS", "RULE_CHOICES"]
