"""Rule-of-conduct baselines, levels 1–3, batched: one call decides for thousands of games.

Each level scores every legal action with a *cost* (lower is better) built from
features of the action and of what the observation shows, and takes the cheapest;
ties go to the lowest action index, so the agents are deterministic (the Monte-Carlo
agents rely on that for paired rollouts). The habits, after seed 003, a source of
``docs/RULES.md`` ("ne pas casser ses paires, garder ses 2, reprendre la main
pour sortir, bloquer un adversaire sur le point de finir"):

- **level 1** plays the weakest play it can (leading, the whole group of its weakest
  rank); it passes only when it cannot play.
- **level 2** adds: leading, pairs and triples before lower singles; among the plays,
  it does not break a group when a play that keeps its groups will do, keeps its top
  cards (2s, jokers; the 3s in a revolution) while it has more than two groups, avoids
  completing plays with wild 2s, goes out whenever a play empties its hand, and with
  ``finish_on_two: penalty`` never keeps only 2s/jokers for the end. It still passes
  only when it cannot play: measured over duplicate deals, passing to keep a group
  intact loses to playing on (``docs/baselines.md``). Under ``equal_rank: or_nothing``
  it matches the rank in force whenever it can, even breaking a pair (it binds the
  next player; :func:`weights_for`).
- **level 3** adds card counting: a play is a *master* when no card still hidden can
  beat it. When at most one group of its hand is not a master, it takes the lead with
  masters to go out; it blocks an opponent about to finish (following: when the next
  player could go out on the trick and a master can stop him, its strongest play;
  leading, when every play has a count an opponent holding one or two cards could
  match: its strongest); with ``revolution`` it starts one when its hand is weak and
  avoids one when it is strong. It breaks groups even more reluctantly and leads
  pairs and triples even more readily.

All levels give back, in the exchange, their weakest card that is not part of a
group (never a pair) and never a top card when they can avoid it.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, NamedTuple

import numpy as np

from president_env.core import compiled
from president_env.core.actions import KIND_PASS, KIND_PLAY, action_tables
from president_env.core.autoplay import CompiledPolicy
from president_env.core.cards import JOKER, N_NATURAL_RANKS, TWO
from president_env.core.engine import GameState, allocate
from president_env.core.engine import tables as engine_tables
from president_env.core.observation import StateViews, layout
from president_env.core.rules import Rules

from .base import Agent, ObsView, check_batch, decode, view_of

LEVELS = (1, 2, 3)


@dataclass(frozen=True)
class Weights:
    """Cost terms of a heuristic. Unit: one step of rank strength costs ``step``; penalties of 60+
    outweigh any difference of strength, bonuses of 100+ outweigh every penalty."""

    step: float = 4.0  # per step of strength of the rank played (play low first)
    group: float = 1.0  # bonus per card when leading (lead the whole group; more: pairs before singles)
    pass_: float = 1e6  # cost of a voluntary pass (1e6: only when forced)
    break_: float = 0.0  # following with part of a group
    break_pairs: float = 1.0  # factor of ``break_`` when the group broken is a pair
    match: float = 0.0  # equal_rank variants: bonus for a play of the rank in force
    wild: float = 0.0  # completing a play with wild 2s
    keep_top: float = 0.0  # spending a top card while more than two groups remain
    bad_end: float = 0.0  # finish_on_two: penalty -- going out on, or keeping only, 2s/jokers
    go_out: float = 0.0  # a play that empties the hand (negative: a bonus)
    card_counting: bool = False  # level 3: masters, control, blocking, revolutions (the terms below)
    control: float = 0.0  # a master play when at most ``control_groups`` groups of the rest are not masters
    control_groups: int = 1
    block: float = 0.0  # leading a non-master of a count an opponent holding 1-2 cards could match
    block_following: bool = False  # following: play the strongest when an opponent could go out on the trick
    revolt: float = 0.0  # a revolution with a weak hand (bonus), with a strong one (cost)


WEIGHTS = {
    1: Weights(),
    # Measured over duplicate deals (docs/baselines.md): passing to keep a group intact loses to
    # playing on, so levels 2-3 pass only when they must; their habits choose *which* play.
    2: Weights(group=6.0, pass_=1000.0, break_=60.0, wild=25.0, keep_top=60.0, bad_end=150.0, go_out=-1000.0),
    # Level 3 leads pairs and triples before singles even more; with that, also avoiding leads an
    # opponent about to finish could match (block > 0) measured as a loss, so block stays 0 here.
    3: Weights(
        group=10.0,
        pass_=1000.0,
        break_=150.0,
        wild=25.0,
        keep_top=60.0,
        bad_end=150.0,
        go_out=-1000.0,
        card_counting=True,
        control=-100.0,
        block=0.0,
        block_following=True,
        revolt=60.0,
    ),
}


def weights_for(rules: Rules, level: int) -> Weights:
    """The weights of ``level`` under ``rules``: the level's own, adjusted where a variant changes what pays.

    Under ``equal_rank: or_nothing`` a play of the rank in force binds the next player to that rank,
    which is worth more than keeping a pair (measured: docs/baselines.md), so levels 2-3 match the
    rank in force when they can and do not mind breaking a pair to do it.
    """
    if level not in LEVELS:
        raise ValueError(f"heuristic level must be one of {LEVELS}, got {level!r}")
    weights = WEIGHTS[level]
    if level >= 2 and rules.equal_rank == "or_nothing":
        weights = dataclasses.replace(weights, match=200.0, break_pairs=0.0)
    return weights


@dataclass(frozen=True)
class _Tables:
    kind: np.ndarray  # (A,) KIND_PASS / KIND_PLAY / KIND_GIVE of each action
    rank: np.ndarray  # (A,) rank of each play or give (0 for the pass)
    count: np.ndarray  # (A,) cards of each play (1 for a give, 0 for the pass)
    strength: np.ndarray  # (2, R) strength of each rank, normal order and in a revolution (the engine's)
    top: np.ndarray  # (2, R) bool: the top cards to keep (2s and jokers; 3s and jokers in a revolution)
    bad_end: np.ndarray  # (R,) bool: ranks that may not end a manche under finish_on_two: penalty (2, joker)
    wild: np.ndarray  # (R,) bool: ranks a wild 2 can complete


@lru_cache(maxsize=64)
def _tables(rules: Rules) -> _Tables:
    r = rules.n_ranks
    kind, rank, count = action_tables(rules)
    strength = engine_tables(rules).strength
    top = strength >= N_NATURAL_RANKS - 1
    bad_end = np.zeros(r, bool)
    bad_end[TWO:] = True
    wild = np.zeros(r, bool)
    if rules.twos_wild:
        wild[:TWO] = True
    return _Tables(
        kind=kind.astype(np.int64),
        rank=np.maximum(rank, 0).astype(np.int64),
        count=count.astype(np.int64),
        strength=strength,
        top=top,
        bad_end=bad_end,
        wild=wild,
    )


def costs(rules: Rules, view: ObsView, masks: np.ndarray, level: int | Weights) -> np.ndarray:
    """``(B, A) float64`` cost of every action at ``level`` (or under explicit weights); illegal: +inf. Only legal
    actions are scored (a handful of the ~60 per row), which keeps the heuristics cheap enough to drive the
    Monte-Carlo rollouts."""
    dense = np.full(masks.shape, np.inf)
    _choose_on_view(rules, view, masks, level, dense)
    return dense


class HeuristicAgent(Agent):
    """Rules of conduct of ``level`` 1, 2 or 3 (see the module docstring); deterministic.

    ``weights`` replaces the level's :class:`Weights` (for experiments: ``dataclasses.replace``
    one of :data:`WEIGHTS`); the name is then ``heuristic-custom``.
    """

    def __init__(self, rules: Rules, level: int = 3, seed=None, weights: Weights | None = None) -> None:
        super().__init__(rules, seed)
        self.level = level
        self.weights = weights if weights is not None else weights_for(rules, level)
        self.name = f"heuristic-{level}" if weights is None else "heuristic-custom"

    def act_batch(self, observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
        """The heuristic's choice per row: the legal action of least cost under its level's weights."""
        observations, masks = check_batch(self.rules, observations, masks)
        return choose(self.rules, decode(self.rules, observations), masks, self.weights)

    def act_views(self, views: Mapping[str, np.ndarray], masks: np.ndarray) -> np.ndarray:
        """:meth:`act_batch` on the named views of the observations (``layout(rules).view``, ``view_state`` or the
        lazy ``StateViews``): the vector env's opponents skip encoding and decoding the observation."""
        return choose(self.rules, view_of(views), np.asarray(masks, dtype=bool), self.weights)

    def compiled_policy(self, rules: Rules) -> CompiledPolicy | None:
        """Its choice for a batched env's compiled loop (:mod:`president_env.core.autoplay`): the kernel's scoring of
        one row, the acting seat's segments gathered from the state (:func:`choose_in_state`'s reading, which chooses
        what :meth:`act_batch` chooses on that seat's observation). ``None`` under other rules than its own, or for a
        subclass that chooses otherwise."""
        own = all(getattr(type(self), m) is getattr(HeuristicAgent, m) for m in ("act_batch", "act_views", "act"))
        if rules != self.rules or not own:
            return None
        p, r = rules.n_players, rules.n_ranks
        return CompiledPolicy(_decide_in_state, _scorer(rules, self.weights), scratch=6 * r + 3 * p + 1)

    def explain(self, observation: dict[str, np.ndarray], info: dict | None = None) -> dict[str, Any]:
        """The decision and the cost of every legal action under the level's weights (the cheapest is played)."""
        obs, masks = check_batch(
            self.rules, np.asarray(observation["observation"])[None], observation["action_mask"][None]
        )
        cost = costs(self.rules, decode(self.rules, obs), masks, self.weights)[0]
        values = {int(a): float(cost[a]) for a in np.flatnonzero(masks[0])}
        return {"action": self.act(observation, info), "measure": "cost (the cheapest is played)", "values": values}


def choose(rules: Rules, view: ObsView, masks: np.ndarray, level: int | Weights) -> np.ndarray:
    """``(B,) int64`` the cheapest legal action at ``level`` or under ``Weights`` (lowest index on ties).

    A compiled kernel scores the rows one by one (:func:`_choose_kernel`; ``tests/test_heuristic_golden.py`` pins
    every choice). It is compiled at its first use in a fresh install (seconds) and cached on disk.
    """
    return _choose_on_view(rules, view, masks, level)


# ---- the kernel: every cost term, row by row (Numba) ----------------------------------------------------------------
@lru_cache(maxsize=1)
def _kernel():
    """:func:`_choose_kernel` compiled."""
    return compiled.borrowing(_choose_kernel)  # one thread: its scratch rows are shared


class _Scorer(NamedTuple):
    """The weights, the rules and the tables as the kernel reads them, by name (:func:`_scorer`)."""

    # the Weights, as floats
    step: float
    group: float
    pass_: float
    break_: float
    break_pairs: float
    match: float
    wild: float
    keep_top: float
    bad_end: float
    go_out: float
    control: float
    control_groups: float
    block: float
    revolt: float
    card_counting: bool
    block_following: bool
    # the rules
    penalty: bool  # finish_on_two: penalty
    revolution: bool  # the revolution rule
    equal: bool  # equal_rank is not "none": a play of the same rank may follow
    # the tables (_Tables), by action and by rank
    kind: np.ndarray  # (A,) int64
    rank: np.ndarray  # (A,) int64
    count: np.ndarray  # (A,) int64
    strength: np.ndarray  # (2, R) int64
    top: np.ndarray  # (2, R) bool
    bad_end_ranks: np.ndarray  # (R,) bool
    wild_ranks: np.ndarray  # (R,) bool
    copies: np.ndarray  # (R,) int64: cards of each rank in the deck
    no_costs: np.ndarray  # (0, 0) float64: the costs argument of a decision that wants none (_decide_in_state)


@lru_cache(maxsize=256)
def _scorer(rules: Rules, w: Weights) -> _Scorer:
    """The weights, the rules' flags and tables as the kernel takes them."""
    tab = _tables(rules)
    weights = {field.name: float(getattr(w, field.name)) for field in dataclasses.fields(w)}
    weights["card_counting"], weights["block_following"] = bool(w.card_counting), bool(w.block_following)
    return _Scorer(
        **weights,
        penalty=rules.finish_on_two == "penalty",
        revolution=rules.revolution,
        equal=rules.equal_rank != "none",
        kind=tab.kind,
        rank=tab.rank,
        count=tab.count,
        strength=np.ascontiguousarray(tab.strength, dtype=np.int64),
        top=np.ascontiguousarray(tab.top),
        bad_end_ranks=tab.bad_end,
        wild_ranks=tab.wild,
        copies=np.asarray(rules.copies, np.int64),
        no_costs=_NO_COSTS,
    )


def _as(array: np.ndarray, dtype: type) -> np.ndarray:
    return np.ascontiguousarray(array, dtype=dtype)


def _choose_on_view(
    rules: Rules, view: ObsView, masks: np.ndarray, level: int | Weights, costs_out: np.ndarray | None = None
) -> np.ndarray:
    """The kernel's choices on a decoded view; ``costs_out (n, A)``: also every legal action's cost, written there."""
    w = level if isinstance(level, Weights) else weights_for(rules, level)
    hand = _as(view.hand, np.int64)
    n = hand.shape[0]
    if w.card_counting:  # the segments only card counting reads
        played, held = _as(view.played, np.int64), _as(view.held, np.int64)
        passed, out_order = _as(view.passed, np.bool_), _as(view.out_order, np.int64)
        trick_count = view.trick_count
    else:
        played, held = np.zeros((n, 0, 0), np.int64), np.zeros((n, 0), np.int64)
        passed, out_order, trick_count = np.zeros((n, 0), np.bool_), held, np.zeros(n, np.int64)
    return _call_kernel(
        rules, w, hand, played, view.revolution, view.trick_rank, trick_count, held, passed, out_order, masks,
        costs_out=costs_out,
    )  # fmt: skip


def rollout_view(rules: Rules, state: GameState) -> ObsView:
    """What ``decode(rules, observe(rules, state))`` gives, read straight from the state (the spec's
    lazy ``StateViews``: cheaper than encoding then decoding, and a segment is read only when the
    heuristic reads it). The state must not change while the view is in use.

    Only for rollouts in sampled worlds, where every seat is simulated: it reads the acting
    seat's own hand and the public fields, exactly what its observation holds (tested equal).
    """
    return ObsView(StateViews(layout(rules), state))


def choose_in_state(rules: Rules, state: GameState, masks: np.ndarray, level: int | Weights) -> np.ndarray:
    """:func:`choose` for the seat to act in every slot of ``state``, as its observation shows the game (the lazy
    ``observation.StateViews`` of the state): for rollouts in sampled worlds, where every seat is simulated.

    The kernel reads the state itself: for each row with a choice it gathers the segments it
    scores from into one row of scratch (the same values as the view, ``tests/test_monte_carlo.py``), rather than
    a NumPy read of every segment for every row, which cost as much as the scoring in the Monte-Carlo rollouts
    (two thirds of their positions are forced moves, which need no segment at all).
    """
    w = level if isinstance(level, Weights) else weights_for(rules, level)
    _, p, r = state.hands.shape
    hand, played = np.zeros((1, r), np.int64), np.zeros((1, 1, r), np.int64)  # the row being scored
    held, passed, out_order = np.zeros((1, p), np.int64), np.zeros((1, p), np.bool_), np.zeros((1, p), np.int64)
    return _call_kernel(
        rules, w, hand, played, state.revolution, state.trick_rank, state.trick_count, held, passed, out_order,
        masks, state,
    )  # fmt: skip


_NO_STATE = allocate(Rules(), 1).take(np.zeros(0, np.int64))
"""The kernel's state where it reads a view: no slot (the engine's dtypes, so one compiled form serves)."""


def _call_kernel(
    rules: Rules, w: Weights, hand, played, revolution, trick_rank, trick_count, held, passed, out_order, masks,
    state: GameState = _NO_STATE, costs_out=None,
) -> np.ndarray:  # fmt: skip
    n = masks.shape[0]
    out = np.empty(n, np.int64)
    _kernel()(
        hand, played, _as(revolution, np.bool_).reshape(n), _as(trick_rank, np.int64).reshape(n),
        _as(trick_count, np.int64).reshape(n), held, passed, out_order, _as(masks, np.bool_), _scorer(rules, w), out,
        _NO_COSTS if costs_out is None else costs_out, state, *_scratch(hand.shape[1], masks.shape[1]),
    )  # fmt: skip
    return out


def _scratch(n_ranks: int, n_actions: int) -> tuple[np.ndarray, ...]:
    """The kernel's scratch rows: ``hidden`` (cards of each rank outside the viewer's hand and the discard),
    ``usable`` (those that can play the rank: its own, and wild 2s), ``most``, ``master_group`` (see
    :func:`_choose_row`) and the row's legal actions."""
    rows = np.zeros((3, n_ranks), np.int64)
    return rows[0], rows[1], rows[2], np.zeros(n_ranks, np.bool_), np.zeros(n_actions, np.int64)


_NO_COSTS = np.zeros((0, 0))
"""The kernel's ``costs`` where only the choices are wanted."""


def _choose_kernel(
    hand, played, revolution, trick_rank, trick_count, held, passed, out_order, masks, k, out, costs, state,
    hidden, usable, most, master_group, legal,
):  # fmt: skip
    """``out[i]``: the cheapest legal action of row ``i`` (lowest index on ties), under ``k`` (:class:`_Scorer`);
    where ``costs`` is not empty, every legal action's cost too (``costs[i, a]``; forced moves are then scored as
    well).

    The per-seat segments come from a view, ``hand (n, R)``, ``played (n, P, R)`` (or summed over the seats,
    ``(n, 1, R)``: only its total per rank is read), ``held``, ``passed``, ``out_order (n, P)``; or, where
    ``state`` (a ``GameState``) has slots, from the state: for each row with a choice, the acting seat's segments
    are gathered into row 0 of those arrays (:func:`_gather`). Each row is scored by :func:`_choose_row`.
    ``hidden``, ``usable``, ``most``, ``master_group``, ``legal``: scratch (:func:`_scratch`): the kernel allocates
    nothing, so it compiles without reference counting (``compiled.borrowing``), which would cost more than the
    scoring in the functions it inlines."""
    n = masks.shape[0]
    n_actions = masks.shape[1]
    from_state = state.hands.shape[0] > 0
    with_costs = costs.shape[0] > 0
    for i in range(n):
        n_legal = 0
        for a in range(n_actions):
            if masks[i, a]:
                legal[n_legal] = a
                n_legal += 1
        if n_legal == 1 and not with_costs:  # a forced move (in the rollouts, often a pass): nothing to score
            out[i] = legal[0]
            continue
        v = i  # the row of the per-seat segments
        if from_state:
            v = 0
            _gather(state, i, hand, played, held, passed, out_order)
        out[i] = _score_row(
            k, legal, n_legal, hand, played, held, passed, out_order, v, revolution[i], trick_rank[i], trick_count[i],
            hidden, usable, most, master_group, costs, i, with_costs,
        )  # fmt: skip


@compiled.slot_function
def _gather(state, s, hand, played, held, passed, out_order):
    """The segments of the seat to act in slot ``s`` of ``state``, as its observation shows them, into row 0 of
    ``hand``, ``played`` (summed over the seats), ``held``, ``passed`` and ``out_order`` (relative seat ``j`` is
    seat ``current + j``)."""
    n_ranks = hand.shape[1]
    cur = state.current[s]
    n_all = state.hands.shape[1]
    for r in range(n_ranks):
        hand[0, r] = state.hands[s, cur, r]
        total = 0
        for seat in range(n_all):
            total += state.played[s, seat, r]
        played[0, 0, r] = total
    for j in range(n_all):
        seat = cur + j if cur + j < n_all else cur + j - n_all
        held[0, j] = state.n_held[s, seat]
        passed[0, j] = (state.passed_bits[s] >> seat) & 1
        out_order[0, j] = state.out_order[s, seat]


def _choose_row(
    k, legal, n_legal, hand, played, held, passed, out_order, v, revolution, trick_rank, trick_count,
    hidden, usable, most, master_group, costs, i, with_costs,
):  # fmt: skip
    """The cheapest of the ``n_legal`` actions ``legal`` (lowest index on ties) for the per-seat segments of row
    ``v`` (see :func:`_choose_kernel`) and the trick's ``revolution``, ``trick_rank``, ``trick_count``; with
    ``with_costs``, every one's cost into ``costs[i]``. ``hidden``, ``usable``, ``most``, ``master_group`` ``(R,)``:
    scratch."""
    n_ranks = hand.shape[1]
    kind, rank, count, strength, top = k.kind, k.rank, k.count, k.strength, k.top
    step, group, pass_w, break_w, break_pairs, match_w, wild_w = (
        k.step, k.group, k.pass_, k.break_, k.break_pairs, k.match, k.wild
    )  # fmt: skip
    keep_top, bad_end_w, go_out_w, control, control_groups, block, revolt_w = (
        k.keep_top, k.bad_end, k.go_out, k.control, k.control_groups, k.block, k.revolt
    )  # fmt: skip
    penalty, has_match = k.penalty, k.match != 0
    n_seats = held.shape[1]
    # A play is a *master* where no rank that beats it (or matches it, when equal_rank allows) has as many cards
    # outside the viewer's hand and the discard (wild 2s counted; counts of single opponents ignored: an upper
    # bound). most[r]: the most usable hidden cards of a rank that beats rank r: k + 1 cards of rank r can be
    # beaten where most[r] >= k + 1.
    rev = 1 if revolution else 0
    leading = trick_rank < 0
    n_cards = 0
    groups = 0
    good_held = 0
    for r in range(n_ranks):
        h = hand[v, r]
        n_cards += h
        if h > 0:
            groups += 1
        if not k.bad_end_ranks[r]:
            good_held += h
    threat = False
    not_master = 0
    no_choice = False
    weak = False
    one = False
    two = False
    if k.card_counting:
        for r in range(n_ranks):
            hidden[r] = k.copies[r] - hand[v, r]
        for s in range(played.shape[1]):  # seat by seat: the rows of played are contiguous
            for r in range(n_ranks):
                hidden[r] -= played[v, s, r]
        for r in range(n_ranks):
            usable[r] = hidden[r] + (hidden[TWO] if k.wild_ranks[r] else 0)
        # most: a suffix maximum of usable, or in a revolution a prefix one over the naturals.
        if rev and k.revolution:
            jokers = 0  # jokers beat every natural rank in a revolution
            for r in range(JOKER, n_ranks):
                jokers = max(jokers, usable[r])
            below = 0
            for r in range(N_NATURAL_RANKS):
                if k.equal:
                    below = max(below, usable[r])
                    most[r] = max(below, jokers)
                else:
                    most[r] = max(below, jokers)
                    below = max(below, usable[r])
            for r in range(N_NATURAL_RANKS, n_ranks):
                most[r] = usable[r] if r == JOKER and k.equal else 0
        else:
            above = 0
            for r in range(n_ranks - 1, -1, -1):
                if k.equal:
                    above = max(above, usable[r])
                    most[r] = above
                else:
                    most[r] = above
                    above = max(above, usable[r])
        for r in range(n_ranks):
            h = hand[v, r]
            master_group[r] = h > 0 and most[r] < max(h, 1)
            if h > 0 and not master_group[r]:
                not_master += 1
        # Blocking the next player (following) and opponents holding one or two cards (leading).
        if k.block_following and trick_rank >= 0:
            first = -1
            for s in range(1, n_seats):
                if not passed[v, s] and held[v, s] > 0 and out_order[v, s] < 0:
                    first = s
                    break
            if first >= 0 and held[v, first] == trick_count:
                for j in range(n_legal):
                    a = legal[j]
                    if kind[a] == KIND_PLAY and most[rank[a]] < max(count[a], 1):
                        threat = True
                        break
        for s in range(1, n_seats):
            one = one or held[v, s] == 1
            two = two or held[v, s] == 2
        n_lead = 0
        n_risky = 0
        for j in range(n_legal):
            a = legal[j]
            if leading and count[a] > 0:
                n_lead += 1
                if (count[a] == 1 and one) or (count[a] == 2 and two):
                    n_risky += 1
        no_choice = n_risky == n_lead
        if k.revolution:
            total = 0
            for r in range(n_ranks):
                total += hand[v, r] * strength[rev, r]
            weak = total / max(n_cards, 1) < (N_NATURAL_RANKS - 1) / 2
    best = -1
    best_cost = 0.0
    for j in range(n_legal):
        a = legal[j]
        rk, c = rank[a], count[a]
        natural = hand[v, rk]
        if kind[a] == KIND_PLAY:
            wild_used = max(c - natural, 0)
            leftover = natural - min(natural, c)
            st = float(strength[rev, rk])
            goes_out = c == n_cards
            habits = break_w * (1.0 if leftover > 0 and not goes_out else 0.0) * (break_pairs if natural == 2 else 1.0)
            habits += wild_w * (1.0 if wild_used > 0 else 0.0)
            habits += keep_top * (1.0 if top[rev, rk] and not goes_out and groups > 2 else 0.0)
            cost = step * st - group * (c if leading else 0)
            if has_match:
                cost -= match_w * (1.0 if rk == trick_rank else 0.0)
            clean_out = goes_out and wild_used == 0
            if penalty:
                bad = k.bad_end_ranks[rk]
                good_left = good_held - (0 if bad else c - wild_used)
                cost += bad_end_w * (1.0 if n_cards > c and good_left <= 0 else 0.0)
                cost += bad_end_w * (1.0 if goes_out and (bad or wild_used > 0) else 0.0)
                clean_out = clean_out and not bad
            cost += go_out_w * (1.0 if clean_out else 0.0)
            if k.card_counting:
                master_play = most[rk] < max(c, 1)
                empties_rank = leftover == 0 and natural > 0
                not_master_after = not_master - (1 if empties_rank and not master_group[rk] else 0)
                extra = control if master_play and not_master_after <= control_groups and not goes_out else 0.0
                risky = leading and c > 0 and ((c == 1 and one) or (c == 2 and two))
                if risky and not no_choice:
                    extra += block * (0.0 if master_play else 1.0)
                if risky and no_choice:
                    extra -= 2 * step * st
                if k.revolution:
                    extra += (-revolt_w if weak else revolt_w) * (1.0 if c >= 4 and not goes_out else 0.0)
                cost += extra
                if threat:
                    cost -= 2 * step * st
            if not threat:
                cost += habits
        elif kind[a] == KIND_PASS:
            cost = pass_w + (1e6 if threat else 0.0)
        else:
            cost = 4.0 * strength[0, rk] + 60.0 * (1.0 if natural >= 2 else 0.0) + 120.0 * (1.0 if top[0, rk] else 0.0)
        if with_costs:
            costs[i, a] = cost
        if best < 0 or cost < best_cost:
            best, best_cost = a, cost
    return best


_score_row = compiled.slot_function(_choose_row)
""":func:`_choose_row` inlined into the batched kernel and into :func:`_decide_in_state`."""


@compiled.slot_function
def _decide_in_state(k, state, s, legal, n_legal, word, scratch):
    """:meth:`HeuristicAgent.compiled_policy`'s decision in slot ``s``: as :func:`choose_in_state` chooses it,
    its rows carved from ``scratch`` (``k``: the :class:`_Scorer`)."""
    if n_legal == 1:  # a forced move: nothing to score
        return legal[0]
    r, p = state.hands.shape[2], state.hands.shape[1]
    hand = scratch[0:r].reshape((1, r))
    played = scratch[r : 2 * r].reshape((1, 1, r))
    held = scratch[2 * r : 2 * r + p].reshape((1, p))
    passed = scratch[2 * r + p : 2 * r + 2 * p].reshape((1, p))
    out_order = scratch[2 * r + 2 * p : 2 * r + 3 * p].reshape((1, p))
    hidden = scratch[2 * r + 3 * p : 3 * r + 3 * p]
    usable = scratch[3 * r + 3 * p : 4 * r + 3 * p]
    most = scratch[4 * r + 3 * p : 5 * r + 3 * p]
    master_group = scratch[5 * r + 3 * p : 6 * r + 3 * p + 1].view(np.bool_)[:r]
    _gather(state, s, hand, played, held, passed, out_order)
    return _score_row(
        k, legal, n_legal, hand, played, held, passed, out_order, 0, state.revolution[s], state.trick_rank[s],
        state.trick_count[s], hidden, usable, most, master_group, k.no_costs, 0, False,
    )  # fmt: skip
