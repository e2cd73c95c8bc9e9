"""The rule space: a documented distribution over every field of ``Rules``, and the held-out rule-set suite.

    space = RuleSpace.from_dict({"preset_share": 0.25, "weights": {"n_players": {3: 1, 8: 2}}})
    rules = space.draw(seed=7, n=16)        # 16 valid Rules, the same for the same seed
    suite = rule_suite(20261204, 20)        # the benchmark's 20 rule sets (the default space, no preset)

A draw is a preset (with probability ``preset_share``, one of ``presets`` by weight, at its own match length)
or a free rule set: every field drawn on its own from ``weights`` (value -> weight), in the order of
:data:`FIELD_ORDER`. Combinations ``Rules`` refuses are never drawn: ``jokers`` is drawn among the values
``decks`` allows (at most 2 per deck, the weights of the others renormalized; none when every count it allows
weighs 0). The exchange is drawn in three parts: ``exchange_pairs`` (how many pairs exchange, capped at the
pairs the table seats, ``n_players // 2``),
``exchange_cards`` (the top pair's cards) and ``exchange_shape``: ``descending`` (one card fewer each pair down,
at least 1: 3-2-1), ``equal`` (every pair the same) or ``any`` (each entry drawn 1..4 on its own), so every
exchange ``Rules`` accepts can be drawn. Every value ``Rules`` accepts has a default weight above 0 (``manches``
1..9). ``docs/training.md`` says why the default weights are what they are.

Draws come from ``numpy.random.Generator`` s seeded by ``SeedSequence``: the same seed gives the same rule sets
on every machine. This module imports only the core's ``rules`` and ``presets``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from president_env.core.presets import PRESETS, load_preset
from president_env.core.rules import RULE_CHOICES, Rules
from president_env.core.user_input import short_repr

MAX_MANCHES = 9
"""The longest match the space draws (``Rules`` accepts any ``manches >= 1``; longer matches change little but cost)."""

EXCHANGE_SHAPES = ("descending", "equal", "any")

_BOOL = {False: 1.0, True: 1.0}
DEFAULT_WEIGHTS: dict[str, dict[Any, float]] = {
    "n_players": {3: 1.0, 4: 1.5, 5: 1.5, 6: 1.0, 7: 1.0, 8: 1.0},
    "decks": {1: 2.0, 2: 1.0},
    "jokers": {0: 2.0, 1: 1.0, 2: 1.0, 3: 0.5, 4: 0.5},
    "reseat_by_role": dict(_BOOL),
    "deal_start": {v: 1.0 for v in RULE_CHOICES["deal_start"]},
    "initial_roles": {"none": 2.0, "draw": 1.0},
    "exchange_pairs": {0: 1.0, 1: 2.0, 2: 3.0, 3: 1.0, 4: 1.0},
    "exchange_cards": {1: 2.0, 2: 2.0, 3: 1.0, 4: 0.5},
    "exchange_shape": {"descending": 3.0, "equal": 1.0, "any": 1.0},
    "first_lead": {v: 1.0 for v in RULE_CHOICES["first_lead"]},
    "lead": {v: 1.0 for v in RULE_CHOICES["lead"]},
    "pass_rule": {v: 1.0 for v in RULE_CHOICES["pass_rule"]},
    "top_rank_ends_trick": dict(_BOOL),
    "revolution": dict(_BOOL),
    "equal_rank": {v: 1.0 for v in RULE_CHOICES["equal_rank"]},
    "finish_on_two": {v: 1.0 for v in RULE_CHOICES["finish_on_two"]},
    "twos_wild": dict(_BOOL),
    "scoring": {v: 1.0 for v in RULE_CHOICES["scoring"]},
    "manches": {1: 1.0, 2: 0.5, 3: 1.5, 4: 0.5, 5: 2.0, 6: 0.5, 7: 1.0, 8: 0.25, 9: 0.5},
}
"""Default weight of each value of each drawn field (weights, not probabilities: each field's are normalized)."""

FIELD_ORDER: tuple[str, ...] = tuple(DEFAULT_WEIGHTS)
"""The order fields are drawn in (part of what a seed means: never reorder)."""

ALLOWED_VALUES: dict[str, tuple[Any, ...]] = {
    "n_players": (3, 4, 5, 6, 7, 8),
    "decks": (1, 2),
    "jokers": (0, 1, 2, 3, 4),
    "exchange_pairs": (0, 1, 2, 3, 4),
    "exchange_cards": (1, 2, 3, 4),
    "exchange_shape": EXCHANGE_SHAPES,
    "manches": tuple(range(1, MAX_MANCHES + 1)),
    **{name: (False, True) for name in ("reseat_by_role", "top_rank_ends_trick", "revolution", "twos_wild")},
    **{name: tuple(values) for name, values in RULE_CHOICES.items()},
}
"""Every value each drawn field may take: all that ``Rules`` accepts (``manches`` up to :data:`MAX_MANCHES`)."""

DEFAULT_PRESETS: tuple[tuple[str, int | None, float], ...] = (
    ("standard", None, 2.0),
    ("standard", 3, 1.0),
    ("standard", 5, 1.0),
    ("quebec", None, 1.0),
    ("big_table", None, 1.0),
    ("family", None, 1.0),
    ("party", None, 1.0),
    ("or_nothing", None, 1.0),
)
"""``(preset, n_players or None for the preset's own, weight)``: the eight tables ``ppo-universal`` trained on."""

DEFAULT_PRESET_SHARE = 0.25
"""The share of draws that are a preset."""


@dataclass(frozen=True)
class RuleSpace:
    """A distribution over ``Rules``: ``preset_share`` presets, the rest free draws by ``weights``."""

    weights: Mapping[str, Mapping[Any, float]] = field(default_factory=lambda: DEFAULT_WEIGHTS)
    presets: tuple[tuple[str, int | None, float], ...] = DEFAULT_PRESETS
    preset_share: float = DEFAULT_PRESET_SHARE

    def __post_init__(self) -> None:
        merged = {name: dict(DEFAULT_WEIGHTS[name]) for name in FIELD_ORDER}
        for name, values in self.weights.items():
            if name not in DEFAULT_WEIGHTS:
                raise ValueError(f"weights: unknown field {short_repr(name)}; fields: {', '.join(FIELD_ORDER)}")
            merged[name] = _check_weights(f"weights.{name}", values, ALLOWED_VALUES[name])
        object.__setattr__(self, "weights", merged)
        presets = tuple(tuple(entry) for entry in self.presets)
        for entry in presets:
            _check_preset(entry)
        object.__setattr__(self, "presets", presets)
        share = self.preset_share
        if isinstance(share, bool) or not isinstance(share, (int, float)) or not 0.0 <= share <= 1.0:
            raise ValueError(f"preset_share must be a number from 0 to 1, got {short_repr(share)}")
        if share > 0 and not any(w > 0 for _, _, w in presets):
            raise ValueError("presets: preset_share is above 0 but no preset has a weight above 0")

    # ---- drawing ---------------------------------------------------------------------------------
    def sample(self, rng: np.random.Generator) -> Rules:
        """One rule set: a preset with probability ``preset_share``, else every field drawn by ``weights``."""
        if self.preset_share > 0 and rng.random() < self.preset_share:
            name, n_players, _ = self.presets[_pick(rng, [w for _, _, w in self.presets])]
            rules = load_preset(name)
            return rules if n_players is None else rules.replace(n_players=n_players)
        drawn: dict[str, Any] = {}
        for name in FIELD_ORDER:
            values = self.weights[name]
            if name == "jokers":  # only the counts the decks allow: at most 2 per deck
                values = {k: w for k, w in values.items() if k <= 2 * drawn["decks"]}
                if not any(w > 0 for w in values.values()):
                    values = {0: 1.0}
            drawn[name] = _draw(rng, values)
        pairs = min(drawn.pop("exchange_pairs"), drawn["n_players"] // 2)
        cards, shape = drawn.pop("exchange_cards"), drawn.pop("exchange_shape")
        if shape == "descending":
            exchange = tuple(max(cards - i, 1) for i in range(pairs))
        elif shape == "equal":
            exchange = (cards,) * pairs
        else:
            exchange = tuple(int(k) for k in rng.integers(1, 5, size=pairs))
        return Rules(exchange=exchange, **drawn)

    def draw(self, seed: int | np.random.SeedSequence, n: int) -> list[Rules]:
        """``n`` rule sets drawn from ``seed`` (an int >= 0 or a ``SeedSequence``): the same for the same seed,
        and the first ``k`` of ``n`` are those of ``draw(seed, k)``."""
        if (
            isinstance(seed, bool)
            or not isinstance(seed, (int, np.integer, np.random.SeedSequence))
            or (not isinstance(seed, np.random.SeedSequence) and seed < 0)
        ):
            raise ValueError(f"rule seed must be an integer >= 0, got {short_repr(seed)}")
        if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 0:
            raise ValueError(f"number of rule sets must be an integer >= 0, got {short_repr(n)}")
        sequence = seed if isinstance(seed, np.random.SeedSequence) else np.random.SeedSequence(int(seed))
        rng = np.random.default_rng(sequence)
        return [self.sample(rng) for _ in range(int(n))]

    # ---- as data (a config section) ------------------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        return {
            "preset_share": float(self.preset_share),
            "presets": [{"rules": name, "n_players": players, "weight": float(w)} for name, players, w in self.presets],
            "weights": {name: {k: float(w) for k, w in values.items()} for name, values in self.weights.items()},
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any] | None) -> RuleSpace:
        """A space from plain data (a config section): any of ``preset_share``, ``presets`` (a list of ``{rules,
        n_players, weight}``) and ``weights`` (field -> value -> weight; a field named replaces its defaults
        whole). ``ValueError`` of one line naming what is wrong."""
        data = {} if data is None else data
        if not isinstance(data, Mapping):
            raise ValueError(f"rule_space must be a mapping, got {type(data).__name__}")
        unknown = sorted(str(k) for k in set(data) - {"preset_share", "presets", "weights"})
        if unknown:
            raise ValueError(f"unknown key(s) {', '.join(unknown)}; allowed: preset_share, presets, weights")
        weights = data.get("weights") or {}
        if not isinstance(weights, Mapping):
            raise ValueError(f"weights must be a mapping of fields, got {type(weights).__name__}")
        presets = DEFAULT_PRESETS
        if "presets" in data:
            presets = tuple(_preset_entry(i, entry) for i, entry in enumerate(_as_list(data["presets"])))
        return cls(weights=dict(weights), presets=presets, preset_share=data.get("preset_share", DEFAULT_PRESET_SHARE))


HELDOUT_RULE_SEED = 20261204
"""The held-out suite's rule seed (``--rule-suite 20261204:20``), reserved for the final held-out measurements: no
training run, evaluation during training or choice of what to ship may draw from it."""
HELDOUT_DEAL_SEED = 20261205
"""The held-out suite's deal seed (``president-eval --seed 20261205``), reserved likewise."""


def rule_suite(seed: int, n: int) -> list[Rules]:
    """The benchmark's ``n`` rule sets of rule seed ``seed``: ``SUITE_SPACE.draw(seed, n)``.

    Deterministic given ``seed``; every rule set is valid. ``ValueError`` for a negative seed or count."""
    return SUITE_SPACE.draw(seed, n)


def parse_suite(text: str) -> tuple[int, int]:
    """``"SEED:N"`` as ``(seed, n)``: an integer seed >= 0 and 1 <= N <= 1000; ``ValueError`` of one line."""
    seed_text, sep, n_text = str(text).partition(":")
    try:
        if not sep:
            raise ValueError
        seed, n = int(seed_text), int(n_text)
    except ValueError:
        raise ValueError(
            f"--rule-suite must be SEED:N (two integers, e.g. 20261204:20), got {short_repr(text)}"
        ) from None
    if seed < 0:
        raise ValueError(f"--rule-suite seed must be >= 0, got {seed}")
    if not 1 <= n <= 1000:
        raise ValueError(f"--rule-suite N must be from 1 to 1000 rule sets, got {n}")
    return seed, n


def describe(rules: Rules) -> str:
    """A short name of a rule set: its fields that differ from the standard game (``standard`` when none)."""
    base = Rules().to_dict()
    changed = [f"{name}={_short(value)}" for name, value in rules.to_dict().items() if value != base[name]]
    return " ".join(changed) or "standard"


# ---- helpers ---------------------------------------------------------------------------------------
def _short(value: Any) -> str:
    if isinstance(value, list):
        return "-".join(str(v) for v in value) or "none"
    return str(value).lower() if isinstance(value, bool) else str(value)


def _pick(rng: np.random.Generator, weights: Sequence[float]) -> int:
    p = np.asarray(weights, dtype=np.float64)
    return int(rng.choice(len(p), p=p / p.sum()))


def _draw(rng: np.random.Generator, values: Mapping[Any, float]) -> Any:
    keys = list(values)
    return keys[_pick(rng, [values[k] for k in keys])]


def _check_weights(where: str, values: Any, allowed: tuple[Any, ...]) -> dict[Any, float]:
    if not isinstance(values, Mapping) or not values:
        raise ValueError(f"{where} must be a non-empty mapping of value -> weight, got {short_repr(values)}")
    out: dict[Any, float] = {}
    for key, weight in values.items():
        match = [a for a in allowed if a == key and type(a) is type(key)]
        if not match:
            listed = ", ".join(_short(a) for a in allowed)
            raise ValueError(f"{where}: {short_repr(key)} is not a value of the field (allowed: {listed})")
        if isinstance(weight, bool) or not isinstance(weight, (int, float)) or not 0 <= weight < float("inf"):
            raise ValueError(f"{where}.{_short(key)}: weight must be a finite number >= 0, got {short_repr(weight)}")
        out[match[0]] = float(weight)
    if not any(w > 0 for w in out.values()):
        raise ValueError(f"{where}: at least one weight must be above 0")
    return {a: out[a] for a in allowed if a in out}  # a fixed order: the draw does not depend on the YAML's


def _as_list(value: Any) -> list[Any]:
    if not isinstance(value, (list, tuple)):
        raise ValueError(f"presets must be a list of {{rules, n_players, weight}}, got {short_repr(value)}")
    return list(value)


def _preset_entry(index: int, entry: Any) -> tuple[str, int | None, float]:
    if not isinstance(entry, Mapping) or set(entry) - {"rules", "n_players", "weight"} or "rules" not in entry:
        raise ValueError(
            f"presets[{index}] must be a mapping with rules (a preset name), optional n_players and "
            f"weight; got {short_repr(entry)}"
        )
    return (entry["rules"], entry.get("n_players"), entry.get("weight", 1.0))


def _check_preset(entry: tuple[Any, ...]) -> None:
    name, n_players, weight = entry
    if name not in PRESETS:
        raise ValueError(f"presets: unknown preset {short_repr(name)}; presets: {', '.join(PRESETS)}")
    if n_players is not None and (
        not isinstance(n_players, int) or isinstance(n_players, bool) or not 3 <= n_players <= 8
    ):
        raise ValueError(f"presets: n_players must be 3 to 8 or null, got {short_repr(n_players)}")
    if isinstance(weight, bool) or not isinstance(weight, (int, float)) or not 0 <= weight < float("inf"):
        raise ValueError(f"presets: weight must be a finite number >= 0, got {short_repr(weight)}")


DEFAULT_SPACE = RuleSpace()
"""The documented distribution (:data:`DEFAULT_WEIGHTS`, :data:`DEFAULT_PRESETS`, :data:`DEFAULT_PRESET_SHARE`)."""

SUITE_SPACE = RuleSpace(preset_share=0.0)
"""The held-out suite's distribution: the default weights, no preset (the presets are measured on their own)."""


__all__ = [
    "ALLOWED_VALUES",
    "DEFAULT_PRESETS",
    "DEFAULT_PRESET_SHARE",
    "DEFAULT_SPACE",
    "DEFAULT_WEIGHTS",
    "FIELD_ORDER",
    "HELDOUT_DEAL_SEED",
    "HELDOUT_RULE_SEED",
    "RuleSpace",
    "SUITE_SPACE",
    "describe",
    "parse_suite",
    "rule_suite",
]
