"""The trick rules: the legal mask and every decision of a manche, per slot, in loops that Numba compiles.

What the player to act may do (the legal mask, ``_mask_kernel``), and what a give, a pass or a play does (cards
leave the hand, wild 2s complete a play, a revolution turns the order, a player goes out and takes his place in the
finishing order, the turn passes clockwise, a trick ends and its winner leads: ``_play_kernel``). The manche's start
and end (the deal, the exchange's automatic half, scoring, the game's end) live in :mod:`president_env.core.manche`;
:mod:`president_env.core.engine` is the state machine that calls both, on a
:class:`~president_env.core.engine.GameState`.

:func:`legal_mask` and :func:`play` run the kernels over chosen slots; :class:`Slot` binds them to one slot for a
caller that steps one game. Each rule is written once, here; a change of a trick rule changes this file and the
oracle, ``tests/oracle/reference.py`` (``tests/test_differential.py`` plays both in lockstep). The tables derived
from the rules (:func:`rank_tables`) are gathered by ``engine.tables``.
"""

from __future__ import annotations

from functools import lru_cache
from typing import NamedTuple

import numba
import numpy as np

from president_env.core.actions import KIND_GIVE, KIND_PASS, KIND_PLAY, action_tables
from president_env.core.cards import JOKER, N_NATURAL_RANKS, TWO
from president_env.core.compiled import Kernel, jit, numba_entry, run
from president_env.core.rules import Rules
from president_env.core.state import PHASE_EXCHANGE, PHASE_PLAY, GameState


# --------------------------------------------------------------------------------------
# Seats as bits, and the clockwise order
# --------------------------------------------------------------------------------------
@lru_cache(maxsize=8)
def _next_seat_table(p: int) -> np.ndarray:
    """``table[start * 256 + bits]``: first seat clockwise after ``start`` whose bit is set, else -1 (read-only)."""
    table = np.full((p, 256), -1, np.int64)
    for start in range(p):
        for bits in range(1 << p):
            for step in range(1, p + 1):
                seat = (start + step) % p
                if bits >> seat & 1:
                    table[start, bits] = seat
                    break
    table = table.ravel()
    table.flags.writeable = False
    return table


_ARANGE = np.arange(1)


def index_range(n: int) -> np.ndarray:
    """A cached ``arange(n)`` (read-only) for the hot path."""
    global _ARANGE
    if _ARANGE.shape[0] < n:
        _ARANGE = np.arange(max(n, 2 * _ARANGE.shape[0]))
        _ARANGE.flags.writeable = False
    return _ARANGE[:n]


# --------------------------------------------------------------------------------------
# What may follow what
# --------------------------------------------------------------------------------------
def rank_tables(rules: Rules) -> dict[str, np.ndarray]:
    """The trick rules as tables (fields of ``engine.Tables``): ``strength (2, R)`` the order of the ranks,
    normal and in a revolution (jokers stay on top); ``rank_ok (2 rev * 2 constrained * (R+1) trick ranks, R)``
    may this rank follow; ``play_words ((C+1)*(C+1),)`` the C flags "k cards may be played" packed by (usable,
    trick count); ``wild_ranks (R,)`` the ranks a wild 2 may complete."""
    n_ranks, max_count = rules.n_ranks, rules.max_count
    strength = np.zeros((2, n_ranks), np.int64)
    strength[0, :N_NATURAL_RANKS] = np.arange(N_NATURAL_RANKS)
    strength[1, :N_NATURAL_RANKS] = N_NATURAL_RANKS - 1 - np.arange(N_NATURAL_RANKS)
    if n_ranks > N_NATURAL_RANKS:
        strength[:, JOKER] = N_NATURAL_RANKS  # the joker stays strongest in a revolution
    allow_equal = rules.equal_rank != "none"
    rank_ok = np.zeros((2, 2, n_ranks + 1, n_ranks), bool)
    for rev in range(2):
        for constrained in range(2):
            rank_ok[rev, constrained, 0, :] = True  # a lead: any rank
            for t in range(n_ranks):
                higher = strength[rev] > strength[rev, t]
                equal = np.arange(n_ranks) == t
                if constrained:
                    rank_ok[rev, constrained, t + 1] = equal
                else:
                    rank_ok[rev, constrained, t + 1] = higher | (equal & allow_equal)
    # play_words[usable * (C+1) + trick_count] packs the C flags "k cards may be played" for a rank
    # of which `usable` cards may be played, so the mask is one table lookup per (slot, rank).
    usable = np.arange(max_count + 1)[:, None, None]
    trick_count = np.arange(max_count + 1)[None, :, None]
    k = np.arange(1, max_count + 1)[None, None, :]
    playable = (usable >= k) & ((trick_count == 0) | (trick_count == k))
    word = np.uint32 if max_count == 4 else np.uint64
    play_words = np.ascontiguousarray(playable.reshape(-1, max_count)).view(word).ravel()
    wild_ranks = np.zeros(n_ranks, bool)
    if rules.twos_wild:
        wild_ranks[:TWO] = True
    return {
        "strength": strength,
        "rank_ok": rank_ok.reshape(-1, n_ranks),
        "play_words": play_words,
        "wild_ranks": wild_ranks,
    }


# --------------------------------------------------------------------------------------
# The legal mask
# --------------------------------------------------------------------------------------
def legal_mask(rules: Rules, state: GameState, slots: np.ndarray) -> np.ndarray:
    """``(n, num_actions) bool``: the legal actions of the player to act in the slots ``slots (n,) int64``."""
    mask = np.zeros((slots.size, rules.num_actions), bool)
    run(kernels()[0], slots.size, kernel_rules(rules), state, slots, mask)
    return mask


def _mask_kernel(t, state, slots, mask):
    """The legal mask, slot by slot (compiled by :func:`kernels`; ``t``: :class:`TrickRules`), into ``mask`` all
    False: only the entries that may be True are written (a play of ``j + 1`` cards needs ``j + 1`` usable ones:
    ``t.playable[key, j]`` is False from ``j = usable`` on, and a rank not held is skipped)."""
    r, c = t.n_ranks, t.max_count
    for i in numba.prange(slots.size):  # each slot alone: the same results on any number of threads
        s = slots[i]
        seat = state.current[s]
        in_play = state.phase[s] == PHASE_PLAY
        exchange = state.phase[s] == PHASE_EXCHANGE
        mask[i, 0] = in_play and state.trick_rank[s] >= 0
        context = (int(state.revolution[s]) * 2 + int(state.constrained[s])) * (r + 1) + state.trick_rank[s] + 1
        tc = state.trick_count[s]
        twos = state.hands[s, seat, TWO]
        for k in range(r):
            h = state.hands[s, seat, k]
            if h == 0:  # nothing to give, and 2s complete only a rank held
                continue
            mask[i, 1 + r * c + k] = exchange
            usable = h
            if t.twos_wild and t.wild_ranks[k]:
                usable = min(h + twos, c)
            if not (in_play and t.rank_ok[context, k]):
                continue
            key = usable * (c + 1) + tc
            for j in range(min(usable, c)):
                mask[i, 1 + k * c + j] = t.playable[key, j]


# --------------------------------------------------------------------------------------
# A decision: a give, a pass or a play
# --------------------------------------------------------------------------------------
PLAY_STATE = (
    "hands", "n_held", "played", "passed_bits", "holding_bits", "out_order", "out_rank", "penalized", "gives_left",
    "partner", "gave", "received", "prev_pos", "current", "leader", "trick_rank", "trick_count", "trick_owner",
    "revolution", "constrained", "phase", "n_out", "n_normal_out", "n_penalized", "manche_steps",
)  # fmt: skip
"""The ``GameState`` fields the play kernel may change: no other field changes in a play that ends no manche."""
MASK_STATE = ("hands", "current", "phase", "trick_rank", "trick_count", "revolution", "constrained")
"""The ``GameState`` fields the mask kernel reads."""
OUT_CHANGES = ("out_order", "out_rank", "penalized", "holding_bits", "n_out", "n_normal_out", "n_penalized")
"""What a play changes only where its player goes out (``_play_kernel``'s ``went_out`` branch)."""
PLAY_CHANGES = (
    "manche_steps", "n_held", "passed_bits", "current", "trick_rank", "trick_count", "trick_owner", "revolution",
    "constrained",
)  # fmt: skip
"""What a play or a pass (not a give) that ends no manche may change, besides the ``hands`` and ``played`` rows of
the seat that acted and, where that seat went out, :data:`OUT_CHANGES`: the exchange's fields, the leader, the phase
and the scores stay (``_play_kernel``). The one-game holder copies only these after such a step; its lockstep test
(``tests/test_single_game.py``) compares whole states after every step, so a kernel change that writes another
field fails there."""


def play(rules: Rules, state: GameState, slots: np.ndarray, actions: np.ndarray) -> np.ndarray:
    """Apply the legal ``actions (n,) int64`` in the distinct slots ``slots (n,) int64``, in place: gives, passes
    and plays, a player going out, the turn order and the trick's end. Returns the rows (indices into ``slots``)
    whose manche ended: every player but one is out (``engine`` scores them and deals the next manche,
    :mod:`president_env.core.manche`)."""
    ended = np.zeros(slots.size, bool)
    run(kernels()[1], slots.size, kernel_rules(rules), state, slots, actions, ended)
    return ended.nonzero()[0]


MaskFields = NamedTuple("MaskFields", [(name, np.ndarray) for name in MASK_STATE])
"""The ``GameState`` fields the mask kernel reads, by name: what :class:`Slot` hands it (fewer arrays to convert)."""
PlayFields = NamedTuple("PlayFields", [(name, np.ndarray) for name in PLAY_STATE])
"""The ``GameState`` fields the play kernel reads and writes, by name: what :class:`Slot` hands it."""


class Slot:
    """The mask and play kernels bound to slot ``slot`` of ``state`` (whose arrays must stay the same objects, as
    the kernels and the engine's manche ends keep them), for a caller that steps one game: the arguments are
    gathered and typed once (:func:`~president_env.core.compiled.numba_entry`), and each kernel gets only the
    fields it reads (:data:`MaskFields`, :data:`PlayFields`: the kernels read fields by name, so they take these as
    they take a ``GameState``), so a call pays only the conversion of those arrays."""

    def __init__(self, rules: Rules, state: GameState, slot: int = 0) -> None:
        mask_kernel, play_kernel = kernels()
        t = kernel_rules(rules)
        self._slots = np.array([slot], np.int64)
        self._action = np.zeros(1, np.int64)
        self._ended = np.zeros(1, bool)
        self._mask = np.zeros((1, rules.num_actions), bool)
        self._mask_args = (t, MaskFields(*(getattr(state, name) for name in MASK_STATE)), self._slots, self._mask)
        self._mask_call = numba_entry(mask_kernel.serial, self._mask_args)
        fields = PlayFields(*(getattr(state, name) for name in PLAY_STATE))
        self._play_args = (t, fields, self._slots, self._action, self._ended)
        self._play_call = numba_entry(play_kernel.serial, self._play_args)

    def mask_bytes(self) -> bytes:
        """The slot's legal mask (:func:`legal_mask`) as ``num_actions`` bytes 0/1."""
        self._mask[:] = False  # the kernel writes only the entries that may be True
        self._mask_call(*self._mask_args)
        return self._mask.tobytes()

    def play(self, action: int) -> bool:
        """Play the legal ``action`` as :func:`play` does; whether the slot's manche ended (``engine.end_manches``
        scores it)."""
        self._action[0] = action
        self._ended[0] = False
        self._play_call(*self._play_args)
        return bool(self._ended[0])


@lru_cache(maxsize=1)
def kernels() -> tuple[Kernel, Kernel]:
    """The compiled ``(mask, play)`` kernels (each compiled at its first call in a process, cached on disk), which
    :func:`legal_mask` and :func:`play` run and the vector env's compiled opponents' loop calls on its games
    (``president_env.core.autoplay``)."""
    return jit(_mask_kernel), jit(_play_kernel)


EQUAL_NONE, EQUAL_SKIP, EQUAL_OR_NOTHING = 0, 1, 2
"""``TrickRules.equal_rank``: the codes of ``Rules.equal_rank`` ``"none"``, ``"skip"``, ``"or_nothing"``."""


class TrickRules(NamedTuple):
    """The trick rules as the kernels read them, by name (:func:`kernel_rules`). ``A`` actions, ``C`` the most
    cards a play may have."""

    n_players: int
    n_ranks: int
    max_count: int  # C
    twos_wild: bool  # a 2 completes a play of a natural rank held
    top_rank_ends_trick: bool  # a play of the top rank ends the trick
    jokers: bool  # the deck has jokers (the top rank then, in a revolution too)
    revolution: bool  # a play of four cards or more turns the order
    penalty: bool  # finish_on_two: penalty (going out on a 2 or a joker places the player last)
    can_return: bool  # pass_rule: can_return (a play clears the passes)
    equal_rank: int  # EQUAL_NONE, EQUAL_SKIP or EQUAL_OR_NOTHING
    kind: np.ndarray  # (A,) int64: KIND_PASS, KIND_PLAY or KIND_GIVE of each action
    rank: np.ndarray  # (A,) int64: the rank of a play or a give, 0 for the pass
    count: np.ndarray  # (A,) int64: cards of a play (1 for a give, 0 for the pass)
    rank_ok: np.ndarray  # (2 rev * 2 constrained * (R+1) trick ranks, R) bool: may this rank follow?
    playable: np.ndarray  # ((C+1)*(C+1), C) bool: by (usable, trick count), may k+1 cards be played
    wild_ranks: np.ndarray  # (R,) bool: ranks a wild 2 may complete
    next_seat: np.ndarray  # (P*256,) int64: [start * 256 + bits] the first seat after start whose bit is set, -1


@lru_cache(maxsize=64)
def kernel_rules(rules: Rules) -> TrickRules:
    """The trick rules and their tables (:func:`rank_tables`, the action tables) as the kernels take them."""
    kind, rank, count = action_tables(rules)
    tables = rank_tables(rules)
    return TrickRules(
        n_players=rules.n_players,
        n_ranks=rules.n_ranks,
        max_count=rules.max_count,
        twos_wild=rules.twos_wild,
        top_rank_ends_trick=rules.top_rank_ends_trick,
        jokers=rules.jokers > 0,
        revolution=rules.revolution,
        penalty=rules.finish_on_two == "penalty",
        can_return=rules.pass_rule == "can_return",
        equal_rank={"none": EQUAL_NONE, "skip": EQUAL_SKIP, "or_nothing": EQUAL_OR_NOTHING}[rules.equal_rank],
        kind=np.ascontiguousarray(kind, dtype=np.int64),
        rank=np.maximum(rank, 0).astype(np.int64),
        count=np.ascontiguousarray(count, dtype=np.int64),
        rank_ok=np.ascontiguousarray(tables["rank_ok"]),
        playable=np.ascontiguousarray(tables["play_words"].view(bool).reshape(-1, rules.max_count)),
        wild_ranks=np.ascontiguousarray(tables["wild_ranks"]),
        next_seat=np.array(_next_seat_table(rules.n_players)),  # a writeable copy: Numba types read-only arrays apart
    )


def _play_kernel(t, state, slots, actions, ended):
    """:func:`play`, slot by slot (compiled by :func:`kernels`; ``t``: :class:`TrickRules`)."""
    p = t.n_players
    # The arrays written in the loop, bound by name first: Numba's threaded loop drops writes made through a
    # named tuple's field (numba 0.68: reads work, writes are lost).
    constrained = state.constrained
    current = state.current
    gave = state.gave
    gives_left = state.gives_left
    hands = state.hands
    holding_bits = state.holding_bits
    leader = state.leader
    manche_steps = state.manche_steps
    n_held = state.n_held
    n_normal_out = state.n_normal_out
    n_out = state.n_out
    n_penalized = state.n_penalized
    out_order = state.out_order
    out_rank = state.out_rank
    partner = state.partner
    passed_bits = state.passed_bits
    penalized = state.penalized
    phase = state.phase
    played = state.played
    prev_pos = state.prev_pos
    received = state.received
    revolution = state.revolution
    trick_count = state.trick_count
    trick_owner = state.trick_owner
    trick_rank = state.trick_rank
    for i in numba.prange(slots.size):  # each slot alone: the same results on any number of threads
        s = slots[i]
        a = actions[i]
        manche_steps[s] += 1
        kind = t.kind[a]
        rank = t.rank[a]
        cur = current[s]
        if kind == KIND_GIVE:  # the giver's card goes to the partner; the next giver, or the lead
            other = partner[s, cur]
            hands[s, cur, rank] -= 1
            hands[s, other, rank] += 1
            n_held[s, cur] -= 1
            n_held[s, other] += 1
            gave[s, cur, rank] += 1
            received[s, other, rank] += 1
            gives_left[s, cur] -= 1
            giver, best = -1, p
            for seat in range(p):  # the pending giver best placed in the previous manche (lowest seat on ties)
                if gives_left[s, seat] > 0 and prev_pos[s, seat] < best:
                    giver, best = seat, prev_pos[s, seat]
            if giver >= 0:
                current[s] = giver
                phase[s] = PHASE_EXCHANGE
            else:
                current[s] = leader[s]
                phase[s] = PHASE_PLAY
            continue
        is_play = kind == KIND_PLAY
        is_pass = kind == KIND_PASS
        count = t.count[a] if is_play else 0
        bit = 1 << cur
        # Cards leave the hand: naturals first, wild 2s complete.
        naturals = min(hands[s, cur, rank], count)
        hands[s, cur, rank] -= naturals
        played[s, cur, rank] += naturals
        used_twos = 0
        if t.twos_wild:
            used_twos = count - naturals
            hands[s, cur, TWO] -= used_twos
            played[s, cur, TWO] += used_twos
        n_held[s, cur] -= count
        # What the play means, judged by the order in force before it.
        old_rank = trick_rank[s]
        is_match = is_play and old_rank == rank
        ends_by_top = False
        if t.top_rank_ends_trick:
            top = JOKER if t.jokers else (0 if revolution[s] else TWO)
            ends_by_top = is_play and rank == top
        if t.revolution and is_play and count >= 4:
            revolution[s] = not revolution[s]
        holding = np.int64(holding_bits[s])
        went_out = is_play and n_held[s, cur] == 0
        if went_out:  # the player takes his place in the finishing order (among offenders under penalty)
            out_order[s, cur] = n_out[s]
            n_out[s] += 1
            bad = t.penalty and (rank == TWO or rank == JOKER or used_twos > 0)
            penalized[s, cur] = bad
            if bad:
                out_rank[s, cur] = n_penalized[s]
                n_penalized[s] += 1
            else:
                out_rank[s, cur] = n_normal_out[s]
                n_normal_out[s] += 1
            holding = holding & ~bit
            holding_bits[s] = holding
        # Turn order: the next eligible seat clockwise; the trick ends when the turn would reach the last
        # player to have played, or nobody else can act.
        passed = np.int64(passed_bits[s])
        if is_pass:
            passed |= bit
        if t.can_return and is_play:
            passed = 0
        owner = cur if is_play else trick_owner[s]
        eligible = holding & ~passed & ~bit & 255
        nxt = t.next_seat[cur * 256 + eligible]
        if t.equal_rank == EQUAL_SKIP and is_match and nxt >= 0:
            nxt = t.next_seat[nxt * 256 + (eligible & ~(1 << nxt) & 255)]
        trick_ends = nxt < 0 or nxt == owner or ends_by_top
        if trick_ends:
            owner_seat = max(owner, 0)
            if holding & (1 << owner_seat):
                current[s] = owner
            else:
                current[s] = t.next_seat[owner_seat * 256 + holding]
            trick_rank[s] = -1
            trick_count[s] = 0
            trick_owner[s] = -1
            passed_bits[s] = 0
        else:
            current[s] = nxt
            if is_play:
                trick_rank[s] = rank
                trick_count[s] = count
            trick_owner[s] = owner
            passed_bits[s] = passed
        if t.equal_rank == EQUAL_OR_NOTHING:
            constrained[s] = (not trick_ends) and is_match
        if went_out:
            left = 0
            for seat in range(p):
                left += (holding >> seat) & 1
            ended[i] = left <= 1
