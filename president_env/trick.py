"""The trick rules: the legal mask and every decision of a manche, per slot, in loops that Numba compiles.

What the player to act may do (the legal mask, ``_mask_kernel``), and what a give, a pass or a play does (cards
leave the hand, wild 2s complete a play, a revolution turns the order, a player goes out and takes his place in the
finishing order, the turn passes clockwise, a trick ends and its winner leads: ``_play_kernel``). The manche's start
and end (the deal, the exchange's automatic half, scoring, the game's end) live in :mod:`president_env.manche`;
:mod:`president_env.engine` is the state machine that calls both, on a :class:`~president_env.engine.GameState`.

:func:`legal_mask` and :func:`play` run the kernels over chosen slots; :class:`Slot` binds them to one slot for a
caller that steps one game. Each rule is written once, here; a change of a trick rule changes this file and the
oracle, ``tests/oracle/reference.py`` (``tests/test_differential.py`` plays both in lockstep). The tables derived
from the rules (:func:`rank_tables`) are gathered by ``engine.tables``.
"""

from __future__ import annotations

from functools import lru_cache
from typing import TYPE_CHECKING, Any

import numpy as np

from .actions import KIND_GIVE, KIND_PASS, KIND_PLAY
from .cards import JOKER, N_NATURAL_RANKS, TWO
from .compiled import jit
from .rules import Rules

if TYPE_CHECKING:
    from .engine import GameState, Tables

PHASE_EXCHANGE, PHASE_PLAY, PHASE_OVER = 0, 1, 2
"""A slot's ``phase``: giving back cards in the exchange, playing tricks, or the game over (nothing is legal)."""


# --------------------------------------------------------------------------------------
# Seats as bits, and the clockwise order
# --------------------------------------------------------------------------------------
SEAT_BITS = np.unpackbits(np.arange(256, dtype=np.uint8)[:, None], axis=1, bitorder="little").astype(bool)
"""``SEAT_BITS[bits, s]``: whether seat ``s`` is in the byte ``bits`` (bit s = seat s)."""
SEAT_BITS.flags.writeable = False


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
def legal_mask(rules: Rules, tab: Tables, state: GameState, slots: np.ndarray) -> np.ndarray:
    """``(n, num_actions) bool``: the legal actions of the player to act in the slots ``slots (n,) int64``
    (``tab``: ``engine.tables(rules)``)."""
    flags, kind, rank, count, rank_ok, playable, wild, next_seat = _kernel_args(rules, tab)
    mask = np.zeros((slots.size, rules.num_actions), bool)
    _kernels()[0](
        flags, rank_ok, playable, wild, slots, state.hands, state.current, state.phase, state.trick_rank,
        state.trick_count, state.revolution, state.constrained, mask,
    )  # fmt: skip
    return mask


def _mask_kernel(
    flags, rank_ok, playable, wild, slots, hands, current, phase, trick_rank, trick_count, revolution, constrained,
    mask,
):  # fmt: skip
    """The legal mask, slot by slot (compiled by :func:`_kernels`), into ``mask`` all False: only the entries
    that may be True are written (a play of ``j + 1`` cards needs ``j + 1`` usable ones: ``playable[key, j]`` is
    False from ``j = usable`` on, and a rank not held is skipped)."""
    r, c, twos_wild = flags[1], flags[2], flags[3]
    for i in range(slots.size):
        s = slots[i]
        seat = current[s]
        in_play = phase[s] == PHASE_PLAY
        exchange = phase[s] == PHASE_EXCHANGE
        mask[i, 0] = in_play and trick_rank[s] >= 0
        context = (int(revolution[s]) * 2 + int(constrained[s])) * (r + 1) + trick_rank[s] + 1
        tc = trick_count[s]
        twos = hands[s, seat, TWO]
        for k in range(r):
            h = hands[s, seat, k]
            if h == 0:  # nothing to give, and 2s complete only a rank held
                continue
            mask[i, 1 + r * c + k] = exchange
            usable = h
            if twos_wild and wild[k]:
                usable = min(h + twos, c)
            if not (in_play and rank_ok[context, k]):
                continue
            key = usable * (c + 1) + tc
            for j in range(min(usable, c)):
                mask[i, 1 + k * c + j] = playable[key, j]


# --------------------------------------------------------------------------------------
# A decision: a give, a pass or a play
# --------------------------------------------------------------------------------------
PLAY_STATE = (
    "hands", "n_held", "played", "passed_bits", "holding_bits", "out_order", "out_rank", "penalized", "gives_left",
    "partner", "gave", "received", "prev_pos", "current", "leader", "trick_rank", "trick_count", "trick_owner",
    "revolution", "constrained", "phase", "n_out", "n_normal_out", "n_penalized", "manche_steps",
)  # fmt: skip
"""The ``GameState`` fields the play kernel takes, in its order: no other field changes in a play that ends no
manche."""
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


def play(rules: Rules, tab: Tables, state: GameState, slots: np.ndarray, actions: np.ndarray) -> np.ndarray:
    """Apply the legal ``actions (n,) int64`` in the distinct slots ``slots (n,) int64``, in place: gives, passes
    and plays, a player going out, the turn order and the trick's end. Returns the rows (indices into ``slots``)
    whose manche ended: every player but one is out (``engine`` scores them and deals the next manche,
    :mod:`president_env.manche`)."""
    flags, kind, rank, count, rank_ok, playable, wild, next_seat = _kernel_args(rules, tab)
    ended = np.zeros(slots.size, bool)
    _kernels()[1](flags, kind, rank, count, next_seat, slots, actions, *[getattr(state, f) for f in PLAY_STATE], ended)
    return ended.nonzero()[0]


class Slot:
    """The compiled mask and play kernels bound to slot ``slot`` of ``state`` (whose arrays must stay the same
    objects, as the kernels and the engine's manche ends keep them), for a caller that steps one game: the arguments
    are gathered once, so a call pays Numba's dispatch only."""

    def __init__(self, rules: Rules, tab: Tables, state: GameState, slot: int = 0) -> None:
        mask_kernel, play_kernel = _kernels()
        flags, kind, rank, count, rank_ok, playable, wild, next_seat = _kernel_args(rules, tab)
        s = state
        self._slots = np.array([slot], np.int64)
        self._action = np.zeros(1, np.int64)
        self._ended = np.zeros(1, bool)
        self._mask = np.zeros((1, rules.num_actions), bool)
        self._mask_call = mask_kernel
        self._mask_args = (
            flags, rank_ok, playable, wild, self._slots, s.hands, s.current, s.phase, s.trick_rank, s.trick_count,
            s.revolution, s.constrained, self._mask,
        )  # fmt: skip
        self._play_call = play_kernel
        fields = [getattr(state, f) for f in PLAY_STATE]
        self._play_args = (flags, kind, rank, count, next_seat, self._slots, self._action, *fields, self._ended)

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
def _kernels() -> tuple[Any, Any]:
    """The compiled ``(mask, play)`` kernels (each compiled at its first call in a process, cached on disk)."""
    return jit(_mask_kernel), jit(_play_kernel)


_ARGS: dict[Rules, tuple] = {}


def _kernel_args(rules: Rules, tab: Tables) -> tuple:
    """The trick rules and the tables ``tab`` (``engine.tables(rules)``) as the kernels' arguments."""
    args = _ARGS.get(rules)
    if args is not None:
        return args
    equal_rank = {"none": 0, "skip": 1, "or_nothing": 2}[rules.equal_rank]
    flags = np.array(
        [
            rules.n_players,
            rules.n_ranks,
            rules.max_count,
            int(rules.twos_wild),
            int(rules.top_rank_ends_trick),
            int(rules.jokers > 0),
            int(rules.revolution),
            int(rules.finish_on_two == "penalty"),
            int(rules.pass_rule == "can_return"),
            equal_rank,
        ],
        np.int64,
    )
    args = _ARGS[rules] = (
        flags,
        np.ascontiguousarray(tab.kind, dtype=np.int64),
        np.ascontiguousarray(tab.rank, dtype=np.int64),
        np.ascontiguousarray(tab.count, dtype=np.int64),
        np.ascontiguousarray(tab.rank_ok),
        np.ascontiguousarray(tab.play_words.view(bool).reshape(-1, rules.max_count)),
        np.ascontiguousarray(tab.wild_ranks),
        np.array(_next_seat_table(rules.n_players)),  # a writeable copy, as the kernels take it
    )
    return args


def _play_kernel(
    flags, kind_of, rank_of, count_of, next_seat, slots, actions, hands, n_held, played, passed_bits, holding_bits,
    out_order, out_rank, penalized, gives_left, partner, gave, received, prev_pos, current, leader, trick_rank,
    trick_count, trick_owner, revolution, constrained, phase, n_out, n_normal_out, n_penalized, manche_steps, ended,
):  # fmt: skip
    """:func:`play`, slot by slot (compiled by :func:`_kernels`)."""
    p, twos_wild, top_ends, jokers = flags[0], flags[3], flags[4], flags[5]
    revolution_rule, penalty, can_return, equal_rank = flags[6], flags[7], flags[8], flags[9]
    for i in range(slots.size):
        s = slots[i]
        a = actions[i]
        manche_steps[s] += 1
        kind = kind_of[a]
        rank = rank_of[a]
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
        count = count_of[a] if is_play else 0
        bit = 1 << cur
        # Cards leave the hand: naturals first, wild 2s complete.
        naturals = min(hands[s, cur, rank], count)
        hands[s, cur, rank] -= naturals
        played[s, cur, rank] += naturals
        used_twos = 0
        if twos_wild:
            used_twos = count - naturals
            hands[s, cur, TWO] -= used_twos
            played[s, cur, TWO] += used_twos
        n_held[s, cur] -= count
        # What the play means, judged by the order in force before it.
        old_rank = trick_rank[s]
        is_match = is_play and old_rank == rank
        ends_by_top = False
        if top_ends:
            top = JOKER if jokers else (0 if revolution[s] else TWO)
            ends_by_top = is_play and rank == top
        if revolution_rule and is_play and count >= 4:
            revolution[s] = not revolution[s]
        holding = np.int64(holding_bits[s])
        went_out = is_play and n_held[s, cur] == 0
        if went_out:  # the player takes his place in the finishing order (among offenders under penalty)
            out_order[s, cur] = n_out[s]
            n_out[s] += 1
            bad = penalty and (rank == TWO or rank == JOKER or used_twos > 0)
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
        if can_return and is_play:
            passed = 0
        owner = cur if is_play else trick_owner[s]
        eligible = holding & ~passed & ~bit & 255
        nxt = next_seat[cur * 256 + eligible]
        if equal_rank == 1 and is_match and nxt >= 0:
            nxt = next_seat[nxt * 256 + (eligible & ~(1 << nxt) & 255)]
        trick_ends = nxt < 0 or nxt == owner or ends_by_top
        if trick_ends:
            owner_seat = max(owner, 0)
            if holding & (1 << owner_seat):
                current[s] = owner
            else:
                current[s] = next_seat[owner_seat * 256 + holding]
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
        if equal_rank == 2:
            constrained[s] = (not trick_ends) and is_match
        if went_out:
            left = 0
            for seat in range(p):
                left += (holding >> seat) & 1
            ended[i] = left <= 1
