"""Rule-based playing styles: varied opponents for training and for measuring what a learner has not met.

    agent = agents.make("style-patient", rules, seed=0)

Each style is the batched rules of conduct of :mod:`.heuristic` under its own :class:`~.heuristic.Weights`
(one legal action per row, the cheapest; deterministic). They differ from the levels, and from one another,
in *when* they play and *what* they keep; they all give back, in the exchange, as the heuristics do.

- ``style-hoarder`` keeps its high cards and its groups: following, it plays only low cards that break
  nothing and passes otherwise; it leads its weakest cards.
- ``style-dumper`` plays its strongest play first, leading and following, and never passes by choice.
- ``style-patient`` is heuristic-3 that would rather pass than break a group or spend a top card
  (a 2, a joker) while it has more than two groups: it keeps its groups and spends its 2s late.
- ``style-controller`` is heuristic-3 that plays for control: a master play (one nobody can beat) whenever it
  has one (unless more than eight groups of the rest are not masters), top cards spent freely, and no single or
  pair led that a player holding one or two cards could match.
- ``style-shedder`` is heuristic-3 that sheds cards by volume: it leads its largest groups even of high ranks,
  follows with its lowest play even if that breaks a group, and matches the rank in force under ``equal_rank``
  variants.

``style-patient``, ``style-controller`` and ``style-shedder`` are kept out of training: the learned agents are
measured against them as styles they never met.

``style-drawn`` is a different style for every seed: heuristic-3's card counting under cost terms drawn at random
(:func:`draw_weights`), each from off to dominant on the weights' own scale, whatever the styles above use. A
training pool seats many of them, so that a style it never met is less likely to be new to the learner.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np

from president_env.core.rules import Rules

from .heuristic import WEIGHTS, HeuristicAgent, Weights

STYLES: dict[str, Weights] = {
    "style-hoarder": Weights(
        step=4.0, group=6.0, pass_=20.0, break_=200.0, keep_top=300.0, bad_end=150.0, go_out=-1000.0
    ),
    "style-dumper": Weights(step=-4.0, group=0.0, pass_=1e6, bad_end=150.0, go_out=-1000.0),
    "style-patient": dataclasses.replace(WEIGHTS[3], pass_=200.0, break_=1000.0, keep_top=500.0),
    "style-controller": dataclasses.replace(WEIGHTS[3], control=-400.0, control_groups=8, block=80.0, keep_top=0.0),
    "style-shedder": dataclasses.replace(WEIGHTS[3], group=40.0, break_=0.0, match=200.0),
}
"""Each style's weights (cost terms of :class:`.heuristic.Weights`, scored by :func:`.heuristic.costs`)."""

HELD_OUT_STYLES = ("style-patient", "style-controller", "style-shedder")
"""The styles no training config of this project plays against: what the learned agents are measured on."""


DRAWN_STYLE = "style-drawn"
_SCALE = (1.0, 1000.0)
"""Where a drawn cost term lies when it is on: log-uniform over this range, from below a step of strength (4) to
beyond every penalty (the scale of :class:`~.heuristic.Weights`: 60+ outweighs any strength, 100+ every penalty)."""


def draw_weights(rng: np.random.Generator) -> Weights:
    """heuristic-3's weights with its style terms drawn: ``step`` uniform in 1..8; ``group``, ``break_``, ``match``,
    ``keep_top``, ``block`` and (as a bonus) ``control`` each off half the time, else log-uniform over
    :data:`_SCALE`; ``control_groups`` 1..8; ``pass_`` log-uniform over 10..1e6 (passing freely to only when
    forced). The same range for every term: none is fitted to a named style."""

    def term() -> float:
        return 0.0 if rng.random() < 0.5 else float(np.exp(rng.uniform(*np.log(_SCALE))))

    return dataclasses.replace(
        WEIGHTS[3],
        step=float(rng.uniform(1.0, 8.0)),
        group=term(),
        break_=term(),
        match=term(),
        keep_top=term(),
        block=term(),
        control=-term(),
        control_groups=int(rng.integers(1, 9)),
        pass_=float(np.exp(rng.uniform(np.log(10.0), np.log(1e6)))),
    )


class DrawnStyleAgent(HeuristicAgent):
    """``style-drawn`` at ``rules``: the weights :func:`draw_weights` draws from ``seed`` (a new style per seed)."""

    def __init__(self, rules: Rules, seed: Any = None) -> None:
        sequence = seed if isinstance(seed, np.random.SeedSequence) else np.random.SeedSequence(seed)
        weights_seed, play_seed = sequence.spawn(2)
        super().__init__(rules, level=3, seed=play_seed, weights=draw_weights(np.random.default_rng(weights_seed)))
        self.name = DRAWN_STYLE


class StyleAgent(HeuristicAgent):
    """The style ``name`` of :data:`STYLES` at ``rules``."""

    def __init__(self, rules: Rules, name: str, seed: Any = None) -> None:
        if name not in STYLES:
            raise ValueError(f"unknown style {name!r}; styles: {', '.join(STYLES)}")
        super().__init__(rules, level=3, seed=seed, weights=STYLES[name])
        self.name = name


def style_factory(name: str) -> Any:
    """``factory(rules, seed)`` of the style ``name``, for the agent registry."""

    def factory(rules: Rules, seed: Any = None) -> StyleAgent:
        return StyleAgent(rules, name, seed)

    return factory
