"""The batched engine: Président as functions over a state of arrays, batch axis first.

Everything a game is lives in :class:`GameState` (``B`` slots, ``P`` seats,
``R`` ranks). The functions of this module take the :class:`~president_env.rules.Rules`
first and work on all slots at once — there is no Python loop over games:

- :func:`new_games` deals fresh games into some slots (random or supplied deals,
  optional starting roles), including the exchange set-up;
- :func:`legal_mask` gives ``(B, num_actions) bool``; :func:`why_illegal` decides why an action is
  not legal (an :class:`IllegalMove`: a reason code of :data:`ILLEGAL_REASONS` and the facts behind it),
  which :func:`describe_illegal` words for the errors and each front end words its own way;
- :func:`step` applies one action per slot (all slots, or a chosen subset) and reports
  per-player rewards and the manche-over and game-over events (:class:`StepResult`). It
  deals the next manche of a game (a rule), never a new game: a finished game stays
  terminal until the layer above calls :func:`new_games` (``VecGame`` does, by default);
- the observation lives in :mod:`president_env.observation`; the human notation (card and role strings,
  shuffled deals in that notation, seating by role) in :mod:`president_env.deals`.

For speed the state is updated in place (NumPy has no cheap functional update);
``GameState.copy()`` gives an independent snapshot. An illegal action raises
``ValueError`` before anything is changed.

State arrays are indexed by *seat* (turn order is clockwise = increasing seat);
``player_at_seat`` maps seats to players, which only differ with
``reseat_by_role``. Open points of RULES.md are read as ``docs/semantics.md`` says.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import NamedTuple

import numpy as np

from . import compiled as _compiled
from .actions import KIND_GIVE, KIND_PASS, KIND_PLAY, action_tables, decode
from .cards import JOKER, N_NATURAL_RANKS, RANK_NAMES, TWO, deck_card_ranks
from .deals import (  # noqa: F401  (reachable as engine.* for callers before deals.py)
    NO_ROLE,
    ROLE_NAMES,
    deal_hands,
    deal_sizes,
    parse_deals,
    parse_roles,
    role_by_position,
    seat_by_position,
    table_for_roles,
)
from .rules import Rules

PHASE_EXCHANGE, PHASE_PLAY, PHASE_OVER = 0, 1, 2  # PHASE_OVER: the game ended, nothing is legal
REWARD_MODES = ("zero_sum", "normalized", "points")


@dataclass
class GameState:
    """All slots of a batch. Shapes use ``B`` slots, ``P`` seats, ``R`` ranks.

    Per manche, by seat:
      hands ``(B,P,R) int8`` cards held by rank; n_held ``(B,P) int16``;
      played ``(B,P,R) int8`` cards each seat played this manche (wild 2s as 2s);
      passed_bits ``(B,) uint8`` seats that passed (in this trick, or since the last play with
      ``can_return``), bit s = seat s; holding_bits ``(B,) uint8`` seats still holding cards;
      out_order ``(B,P) int8`` order of going out (-1 still in); out_rank ``(B,P) int8``
      place among normal finishers, or among offenders when penalized ``(B,P) bool``;
      gives_left ``(B,P) int8`` cards still to give back; partner ``(B,P) int8`` exchange
      partner seat (-1); gave, received ``(B,P,R) int8`` the exchange as each seat knows it;
      prev_pos ``(B,P) int8`` finishing position in the previous manche (-1: no roles);
      roles ``(B,P) int8`` role code (-1 none).
    Per manche, by slot ``(B,)``: current (seat to act), leader (seat that leads
      after the exchange), trick_rank (-1 when the next play leads), trick_count,
      trick_owner (seat, -1), revolution, constrained ("or nothing" binds the
      player to act), phase, n_out, n_normal_out, n_penalized, dealer.
    Per game, by player: scores ``(B,P) int32``; player_at_seat / seat_of_player
      ``(B,P) int8``; manche ``(B,) int16``; decisive ``(B,) bool``; tied ``(B,P) bool``.
    Last results: last_positions ``(B,P) int8`` by player of the last finished
      manche; last_winner ``(B,)`` player who won the last finished game (-1) and
      last_scores ``(B,P) int32`` its final totals by player.
    Bookkeeping: dealt_to ``(B,N) int8`` seat each card of ``cards.deck()`` was dealt to
      (views use it to show real suits); manche_steps ``(B,) int32`` decisions so far in the manche.
    """

    hands: np.ndarray
    n_held: np.ndarray
    played: np.ndarray
    passed_bits: np.ndarray
    holding_bits: np.ndarray
    out_order: np.ndarray
    out_rank: np.ndarray
    penalized: np.ndarray
    gives_left: np.ndarray
    partner: np.ndarray
    gave: np.ndarray
    received: np.ndarray
    prev_pos: np.ndarray
    roles: np.ndarray
    current: np.ndarray
    leader: np.ndarray
    trick_rank: np.ndarray
    trick_count: np.ndarray
    trick_owner: np.ndarray
    revolution: np.ndarray
    constrained: np.ndarray
    phase: np.ndarray
    n_out: np.ndarray
    n_normal_out: np.ndarray
    n_penalized: np.ndarray
    dealer: np.ndarray
    scores: np.ndarray
    player_at_seat: np.ndarray
    seat_of_player: np.ndarray
    manche: np.ndarray
    decisive: np.ndarray
    tied: np.ndarray
    last_positions: np.ndarray
    last_winner: np.ndarray
    last_scores: np.ndarray
    dealt_to: np.ndarray
    manche_steps: np.ndarray

    @property
    def batch_size(self) -> int:
        return self.current.shape[0]

    @property
    def passed(self) -> np.ndarray:
        """``(B,P) bool`` seats that have passed (a view of ``passed_bits``)."""
        return SEAT_BITS[self.passed_bits, : self.hands.shape[1]]

    def copy(self) -> GameState:
        return GameState(**{f.name: getattr(self, f.name).copy() for f in dataclasses.fields(self)})

    def take(self, index: np.ndarray) -> GameState:
        """A new, independent state of the slots ``index`` (``(n,) int``, repeats allowed, or a ``(B,) bool``
        mask): every field indexed along the batch axis, so ``take(np.repeat(np.arange(B), W))`` repeats
        each slot ``W`` times."""
        index = np.atleast_1d(np.asarray(index))
        if index.dtype == bool:
            index = np.flatnonzero(index)
        # ndarray.take along axis 0 is several times faster than fancy indexing for these small rows.
        return GameState(**{f.name: getattr(self, f.name).take(index, axis=0) for f in dataclasses.fields(self)})


def allocate(rules: Rules, batch_size: int) -> GameState:
    """An empty state of ``batch_size`` slots (call :func:`new_games` to deal them)."""
    if isinstance(batch_size, bool) or not isinstance(batch_size, (int, np.integer)) or batch_size < 1:
        raise ValueError(f"batch_size must be a positive integer, got {batch_size!r}")
    b, p, r = int(batch_size), rules.n_players, rules.n_ranks
    seats = np.tile(np.arange(p, dtype=np.int8), (b, 1))
    return GameState(
        hands=np.zeros((b, p, r), np.int8),
        n_held=np.zeros((b, p), np.int16),
        played=np.zeros((b, p, r), np.int8),
        passed_bits=np.zeros(b, np.uint8),
        holding_bits=np.zeros(b, np.uint8),
        out_order=np.full((b, p), -1, np.int8),
        out_rank=np.full((b, p), -1, np.int8),
        penalized=np.zeros((b, p), bool),
        gives_left=np.zeros((b, p), np.int8),
        partner=np.full((b, p), -1, np.int8),
        gave=np.zeros((b, p, r), np.int8),
        received=np.zeros((b, p, r), np.int8),
        prev_pos=np.full((b, p), -1, np.int8),
        roles=np.full((b, p), NO_ROLE, np.int8),
        current=np.zeros(b, np.int64),
        leader=np.zeros(b, np.int64),
        trick_rank=np.full(b, -1, np.int64),
        trick_count=np.zeros(b, np.int64),
        trick_owner=np.full(b, -1, np.int64),
        revolution=np.zeros(b, bool),
        constrained=np.zeros(b, bool),
        phase=np.full(b, PHASE_PLAY, np.int8),
        n_out=np.zeros(b, np.int8),
        n_normal_out=np.zeros(b, np.int8),
        n_penalized=np.zeros(b, np.int8),
        dealer=np.zeros(b, np.int64),
        scores=np.zeros((b, p), np.int32),
        player_at_seat=seats.copy(),
        seat_of_player=seats.copy(),
        manche=np.zeros(b, np.int16),
        decisive=np.zeros(b, bool),
        tied=np.zeros((b, p), bool),
        last_positions=np.full((b, p), -1, np.int8),
        last_winner=np.full(b, -1, np.int8),
        last_scores=np.zeros((b, p), np.int32),
        dealt_to=np.zeros((b, rules.n_cards), np.int8),
        manche_steps=np.zeros(b, np.int32),
    )


# --------------------------------------------------------------------------------------
# Tables derived once per rules object
# --------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Tables:
    kind: np.ndarray  # (A,) action kind
    rank: np.ndarray  # (A,) rank, 0 for pass (safe to index with)
    count: np.ndarray  # (A,) cards played or given
    strength: np.ndarray  # (2, R) order of the ranks, normal and in a revolution (jokers stay on top)
    rank_ok: np.ndarray  # (2 rev * 2 constrained * (R+1) trick ranks, R) bool: may this rank follow?
    play_words: np.ndarray  # ((C+1)*(C+1),) uint32/uint64: C bools "play k cards" packed, by (usable, trick count)
    wild_ranks: np.ndarray  # (R,) bool: ranks a wild 2 may complete
    points: np.ndarray  # (P,) int32 points by finishing position
    role_by_pos: np.ndarray  # (P,) role code by finishing position
    seat_by_pos: np.ndarray  # (P,) seat a player of that position takes with reseat_by_role
    deck_ranks: np.ndarray  # (N,) rank of each card id of cards.deck()
    three_of_clubs: np.ndarray  # (decks,) card ids of the 3C


@lru_cache(maxsize=64)
def tables(rules: Rules) -> Tables:
    n_ranks, max_count, n = rules.n_ranks, rules.max_count, rules.n_players
    kind, rank, count = action_tables(rules)
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
    positions = np.arange(n)
    if rules.scoring == "per_opponent_behind":
        points = (n - 1 - positions).astype(np.int32)
    else:
        points = np.zeros(n, np.int32)
        points[0] = 2
        if n >= 4:
            points[1] = 1
    role_by_pos, seat_by_pos = role_by_position(n), seat_by_position(n)
    deck_ranks = deck_card_ranks(rules.decks, rules.jokers)
    result = Tables(
        kind=kind,
        rank=np.maximum(rank, 0).astype(np.int64),
        count=count.astype(np.int64),
        strength=strength,
        rank_ok=rank_ok.reshape(-1, n_ranks),
        play_words=play_words,
        wild_ranks=wild_ranks,
        points=points,
        role_by_pos=role_by_pos,
        seat_by_pos=seat_by_pos,
        deck_ranks=deck_ranks,
        three_of_clubs=np.arange(rules.decks) * 52,
    )
    for value in dataclasses.asdict(result).values():
        value.flags.writeable = False
    return result


@lru_cache(maxsize=128)
def reward_table(rules: Rules, reward_mode: str = "zero_sum") -> np.ndarray:
    """Reward of each finishing position, ``(P,) float32``.

    ``zero_sum`` (default): points minus the table's mean points, so each manche's
    rewards sum to 0. ``normalized``: the same divided by its largest magnitude, so
    rewards lie in [-1, 1] whatever the table size and scoring (still summing to 0).
    ``points``: the raw points (their sum is the same every manche).
    """
    if reward_mode not in REWARD_MODES:
        raise ValueError(f"reward_mode must be one of {', '.join(REWARD_MODES)}, got {reward_mode!r}")
    points = tables(rules).points.astype(np.float32)
    table = points if reward_mode == "points" else points - points.mean()
    if reward_mode == "normalized":
        table = table / np.abs(table).max()
    table.flags.writeable = False
    return table


# --------------------------------------------------------------------------------------
# Helpers over seats
# --------------------------------------------------------------------------------------
def next_seat(eligible: np.ndarray, start: np.ndarray) -> np.ndarray:
    """First eligible seat clockwise strictly after ``start`` (``start`` itself last); -1 if none.

    eligible ``(n,P) bool``, start ``(n,) int`` -> ``(n,) int64``.
    """
    return next_seat_bits(np.packbits(eligible, axis=1, bitorder="little")[:, 0], start, eligible.shape[1])


def next_seat_bits(bits: np.ndarray, start: np.ndarray, n_players: int) -> np.ndarray:
    """:func:`next_seat` for seats packed as bits (bit s = seat s, P <= 8): one table lookup."""
    return _next_seat_table(n_players)[start * 256 + bits]


SEAT_BIT = (1 << np.arange(8)).astype(np.uint8)  # bit of each seat
SEAT_BITS = np.unpackbits(np.arange(256, dtype=np.uint8)[:, None], axis=1, bitorder="little").astype(bool)
POPCOUNT = SEAT_BITS.sum(axis=1)
for _table in (SEAT_BIT, SEAT_BITS, POPCOUNT):
    _table.flags.writeable = False


@lru_cache(maxsize=8)
def _next_seat_table(p: int) -> np.ndarray:
    """``table[start * 256 + bits]``: first seat clockwise after ``start`` whose bit is set, else -1."""
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


def _first_seat_with(values: np.ndarray, target: np.ndarray | int) -> np.ndarray:
    """Seat where ``values == target`` for each slot, ``(n,) int64`` (the target exists)."""
    return np.argmax(values == np.asarray(target).reshape(-1, 1), axis=1)


# --------------------------------------------------------------------------------------
# Starting games and manches (the human notation is read in deals.py)
# --------------------------------------------------------------------------------------
def _cards_of_deal(rules: Rules, dealt_to: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """From the seat each card id was dealt to ``(n,N)``: hands ``(n,P,R) int8`` and 3C holders ``(n,P) bool``."""
    n = dealt_to.shape[0]
    p, r = rules.n_players, rules.n_ranks
    tab = tables(rules)
    flat = (np.arange(n)[:, None] * p + dealt_to) * r + tab.deck_ranks
    hands = np.bincount(flat.ravel(), minlength=n * p * r).reshape(n, p, r).astype(np.int8)
    holders = np.zeros((n, p), bool)
    for cid in tab.three_of_clubs:
        holders[np.arange(n), dealt_to[:, cid]] = True
    return hands, holders


def new_games(
    rules: Rules,
    state: GameState,
    index: np.ndarray,
    rng: np.random.Generator,
    deals: Sequence | None = None,
    dealers: Sequence[int] | np.ndarray | None = None,
    roles: Sequence | None = None,
) -> None:
    """Start new games in slots ``index``: scores cleared, first manche dealt and set up.

    deals: optional list (one per slot of ``index``) of hands, one list of card strings per player.
    dealers: optional seat of each first dealer (else uniformly random); only for first manches without
        roles: a manche with roles (drawn or supplied) is dealt by its Trou du cul, so a dealer given for a
        slot that starts with roles raises ``ValueError``.
    roles: optional list (one per slot, ``None`` allowed) of role assignments to start from.
    A first manche with roles is seated by role with ``reseat_by_role`` (see :func:`_seat_for_roles`).
    Everything is validated before the state is touched.
    """
    index = np.asarray(index, dtype=np.int64).reshape(-1)
    n, p = index.size, rules.n_players
    dealt_to = None
    if deals is not None:
        if len(deals) != n:
            raise ValueError(f"deals: expected {n} deals (one per slot), got {len(deals)}")
        dealt_to = parse_deals(rules, deals)  # by player for now: seat i = player i
    start_pos = None
    if roles is not None:
        if len(roles) != n:
            raise ValueError(f"roles: expected {n} entries (one per slot), got {len(roles)}")
        start_pos = np.full((n, p), -1, np.int8)
        for i, assignment in enumerate(roles):
            if assignment is not None:
                start_pos[i] = parse_roles(rules, assignment)
    has_roles = np.full(n, rules.initial_roles == "draw")
    if start_pos is not None:
        has_roles |= start_pos[:, 0] >= 0
    if dealers is not None:
        dealers = np.asarray(dealers)
        if (
            dealers.shape != (n,)
            or not np.issubdtype(dealers.dtype, np.integer)
            or not np.all((dealers >= 0) & (dealers < p))
        ):
            raise ValueError(f"dealers must be {n} seat numbers in 0..{p - 1}, got {dealers.tolist()}")
        if has_roles.any():
            i = int(np.flatnonzero(has_roles)[0])
            why = "supplied roles" if start_pos is not None and start_pos[i, 0] >= 0 else "initial_roles='draw'"
            raise ValueError(
                f"a dealer was given for slot {int(index[i])}, which starts with roles ({why}): a manche with "
                "roles is dealt by its Trou du cul, so no dealer may be given for it"
            )
    if n == 0:
        return
    dealer = rng.integers(0, p, size=n) if dealers is None else dealers.astype(np.int64)
    prev_pos = np.full((n, p), -1, np.int8)  # by player
    if rules.initial_roles == "draw":
        prev_pos[:] = np.argsort(rng.random((n, p)), axis=1)
    if start_pos is not None:
        given = start_pos[:, 0] >= 0
        prev_pos[given] = start_pos[given]
    if dealt_to is not None and has_roles.any():
        _check_exchange_fits(rules, index, dealt_to, prev_pos, has_roles)
    # Nothing below raises: the state changes only now.
    state.scores[index] = 0
    state.manche[index] = 0
    state.decisive[index] = False
    state.tied[index] = False
    seats = np.arange(p, dtype=np.int8)
    state.player_at_seat[index] = seats
    state.seat_of_player[index] = seats
    if has_roles.any():
        prev_pos[has_roles], dealer[has_roles] = _seat_for_roles(rules, state, index[has_roles], prev_pos[has_roles])
    if dealt_to is None:
        _deal_and_start(rules, state, index, rng, dealer, prev_pos)
    else:
        dealt_to = np.take_along_axis(state.seat_of_player[index], dealt_to.astype(np.int64), axis=1)
        _start_manche(rules, state, index, dealt_to.astype(np.int8), dealer, prev_pos)


def _check_exchange_fits(
    rules: Rules, index: np.ndarray, dealt_to: np.ndarray, prev_pos: np.ndarray, has_roles: np.ndarray
) -> None:
    """A supplied first deal with roles: every lower-ranked player of a pair must hold the k cards he gives."""
    p = rules.n_players
    held = (dealt_to[:, :, None] == np.arange(p)).sum(axis=1)  # (n,P) cards of each player
    for _, low_pos, k in rules.exchange_pairs:
        low = np.argmax(prev_pos == low_pos, axis=1)
        short = has_roles & (held[np.arange(index.size), low] < k)
        if short.any():
            i = int(np.flatnonzero(short)[0])
            role = ROLE_NAMES[tables(rules).role_by_pos[low_pos]]
            raise ValueError(
                f"deal for slot {int(index[i])}: player_{int(low[i])} ({role}) must give {k} cards in the "
                f"exchange but holds only {int(held[i, low[i]])}"
            )


def _seat_for_roles(
    rules: Rules, state: GameState, index: np.ndarray, prev_by_player: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Seat slots ``index`` for a manche with roles, from the previous finishing positions by player ``(n,P)``.

    With ``reseat_by_role`` players sit by role (seat 0 Président, seat 1 Trou du cul, ..., seat P-1
    Vice-Président); otherwise the seats stay. Returns the previous positions by seat ``(n,P) int8`` and the
    dealer ``(n,) int64``: the Trou du cul's seat.
    """
    p = rules.n_players
    rows = np.arange(index.size)[:, None]
    if rules.reseat_by_role:
        new_seat = tables(rules).seat_by_pos[prev_by_player]  # (n,P) by player
        state.seat_of_player[index] = new_seat
        player_at = np.empty_like(new_seat)
        player_at[rows, new_seat] = np.arange(p)
        state.player_at_seat[index] = player_at
    seat_of = state.seat_of_player[index].astype(np.int64)
    prev_by_seat = np.empty_like(prev_by_player)
    prev_by_seat[rows, seat_of] = prev_by_player
    return prev_by_seat, _first_seat_with(prev_by_seat, p - 1)


def redeal(rules: Rules, state: GameState, index: np.ndarray, deals: Sequence) -> None:
    """Replace the deal of the manche that slots ``index`` are about to play (replays, duplicate deals).

    Only before the manche's first decision; roles, dealer and seating stay. ``deals``: one list of card
    strings per player for each slot. Raises ``ValueError`` (state unchanged) on bad input.
    """
    index = np.asarray(index, dtype=np.int64).reshape(-1)
    if len(deals) != index.size:
        raise ValueError(f"deals: expected {index.size} deals (one per slot), got {len(deals)}")
    started = state.manche_steps[index] > 0
    if started.any():
        raise ValueError(f"slot {int(index[started][0])} has already started its manche; redeal only before it")
    dealt_to = parse_deals(rules, deals, state.seat_of_player[index])
    # A regular deal: the first N mod P seats in deal order hold one card more.
    first = (state.dealer[index] + (1 if rules.deal_start == "dealer_left" else 0)) % rules.n_players
    expected = deal_sizes(rules, first)
    got = (dealt_to[:, :, None] == np.arange(rules.n_players)).sum(axis=1)  # cards dealt to each seat
    wrong = np.flatnonzero((got != expected).any(axis=1))
    if wrong.size:
        i = int(wrong[0])
        raise ValueError(
            f"deal for slot {int(index[i])}: hand sizes by seat {got[i].tolist()} do not match a deal from dealer "
            f"seat {int(state.dealer[index[i]])} ({rules.deal_start}): expected {expected[i].tolist()}"
        )
    _start_manche(rules, state, index, dealt_to, state.dealer[index].copy(), state.prev_pos[index].copy())


def _shuffled_decks(rules: Rules, state: GameState, index: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """``(n, N) int64``: a shuffled deck of card ids for each slot of ``index`` about to be dealt, the one random
    draw of a deal on both paths (``state`` unused here: a test deals each game from its own history through it)."""
    return rng.permuted(np.broadcast_to(np.arange(rules.n_cards), (index.size, rules.n_cards)), axis=1)


def _deal_and_start(rules, state, index, rng, dealer, prev_pos) -> None:
    n, n_cards = index.size, rules.n_cards
    card_ids = _shuffled_decks(rules, state, index, rng)
    first = dealer + 1 if rules.deal_start == "dealer_left" else dealer
    dealt_to = np.empty((n, n_cards), np.int8)
    # The deck is dealt one card at a time clockwise from the first receiver.
    dealt_to[np.arange(n)[:, None], card_ids] = (first[:, None] + np.arange(n_cards)) % rules.n_players
    _start_manche(rules, state, index, dealt_to, dealer, prev_pos)


def _start_manche(rules, state, index, dealt_to, dealer, prev_pos) -> None:
    """Set up a manche in slots ``index``: the deal (seat of each card id), roles from ``prev_pos`` (by seat),
    the automatic half of the exchange, and who acts first."""
    n, p = index.size, rules.n_players
    hands, three_holders = _cards_of_deal(rules, dealt_to)
    tab = tables(rules)
    rows = np.arange(n)
    has_roles = prev_pos[:, 0] >= 0
    gives_left = np.zeros((n, p), np.int8)
    partner = np.full((n, p), -1, np.int8)
    gave = np.zeros_like(hands)
    received = np.zeros_like(hands)
    for high_pos, low_pos, k in rules.exchange_pairs if has_roles.any() else ():
        high = _first_seat_with(prev_pos, high_pos)
        low = _first_seat_with(prev_pos, low_pos)
        sub = rows[has_roles]
        high, low = high[has_roles], low[has_roles]
        # The lower-ranked player gives his k best cards: take from the strongest rank down.
        low_hand = hands[sub, low].astype(np.int64)
        above = np.cumsum(low_hand[:, ::-1], axis=1)[:, ::-1] - low_hand  # cards strictly stronger
        take = np.clip(k - above, 0, low_hand).astype(np.int8)
        hands[sub, low] -= take
        hands[sub, high] += take
        gave[sub, low] = take
        received[sub, high] = take
        gives_left[sub, high] = k
        partner[sub, high] = low
        partner[sub, low] = high
    roles = np.where(prev_pos >= 0, tab.role_by_pos[np.maximum(prev_pos, 0)], NO_ROLE).astype(np.int8)
    # Lead of the first trick.
    if rules.first_lead == "three_of_clubs":
        first_lead = next_seat(three_holders, dealer)
    else:
        first_lead = (dealer + 1) % p
    role_lead = _first_seat_with(prev_pos, p - 1 if rules.lead == "trou_du_cul" else 0)
    leader = np.where(has_roles, role_lead, first_lead)
    exchanging = gives_left.any(axis=1)
    giver = np.argmin(np.where(gives_left > 0, prev_pos, p), axis=1)  # Président's pair first

    state.dealt_to[index] = dealt_to
    state.manche_steps[index] = 0
    state.hands[index] = hands
    state.n_held[index] = hands.sum(axis=2, dtype=np.int16)
    state.played[index] = 0
    state.passed_bits[index] = 0
    # Every seat is dealt cards; one whose whole hand went in the exchange gets as many back before the lead.
    state.holding_bits[index] = (1 << p) - 1
    state.out_order[index] = -1
    state.out_rank[index] = -1
    state.penalized[index] = False
    state.gives_left[index] = gives_left
    state.partner[index] = partner
    state.gave[index] = gave
    state.received[index] = received
    state.prev_pos[index] = prev_pos
    state.roles[index] = roles
    state.leader[index] = leader
    state.current[index] = np.where(exchanging, giver, leader)
    state.phase[index] = np.where(exchanging, PHASE_EXCHANGE, PHASE_PLAY)
    state.trick_rank[index] = -1
    state.trick_count[index] = 0
    state.trick_owner[index] = -1
    state.revolution[index] = False
    state.constrained[index] = False
    state.n_out[index] = 0
    state.n_normal_out[index] = 0
    state.n_penalized[index] = 0
    state.dealer[index] = dealer


# --------------------------------------------------------------------------------------
# Legal actions
# --------------------------------------------------------------------------------------
def legal_mask(rules: Rules, state: GameState, slots: np.ndarray | None = None, compiled: bool = False) -> np.ndarray:
    """``(B, num_actions) bool``: the legal actions of the player to act in every slot, or ``(n, num_actions)``
    in the slots ``slots (n,) int`` only. ``compiled``: by the Numba kernel where it is available
    (:mod:`president_env.compiled`, the same mask)."""
    if compiled and _compiled.available():
        index = _arange(state.batch_size) if slots is None else np.asarray(slots, dtype=np.int64)
        return _compiled.legal_mask(rules, tables(rules), state, index)
    tab = tables(rules)
    r, c, p = rules.n_ranks, rules.max_count, rules.n_players
    if slots is None:
        b = state.batch_size
        current, phase, trick_rank = state.current, state.phase, state.trick_rank
        revolution, constrained, trick_count = state.revolution, state.constrained, state.trick_count
        seat_row = _flat_seat(current, p)
    else:
        slots = np.asarray(slots, dtype=np.int64)
        b = slots.size
        current, phase, trick_rank = state.current.take(slots), state.phase.take(slots), state.trick_rank.take(slots)
        revolution, constrained = state.revolution.take(slots), state.constrained.take(slots)
        trick_count = state.trick_count.take(slots)
        seat_row = slots * p + current
    hand = state.hands.reshape(-1, r).take(seat_row, axis=0)
    usable = hand
    if rules.twos_wild:
        # A natural rank can be completed by 2s when at least one natural card is held.
        usable = np.where(tab.wild_ranks & (hand > 0), np.minimum(hand + hand[:, TWO : TWO + 1], c), hand)
    in_play = phase == PHASE_PLAY
    context = (revolution * 2 + constrained) * (r + 1) + (trick_rank + 1)
    usable = usable * (tab.rank_ok[context] & in_play[:, None])
    key = usable * (c + 1) + trick_count[:, None]
    mask = np.empty((b, rules.num_actions), bool)
    mask[:, 0] = in_play & (trick_rank >= 0)
    mask[:, 1 : 1 + r * c] = tab.play_words[key].view(bool).reshape(b, r * c)
    mask[:, 1 + r * c :] = (hand > 0) & (phase == PHASE_EXCHANGE)[:, None]
    return mask


def _flat_seat(seat: np.ndarray, n_players: int) -> np.ndarray:
    """Row of ``(slot, seat)`` in a ``(B*P, ...)`` view of a seat-indexed array."""
    return _arange(seat.shape[0]) * n_players + seat


_ARANGE = np.arange(1)


def _arange(n: int) -> np.ndarray:
    """A cached ``arange(n)`` (read-only) for the hot path."""
    global _ARANGE
    if _ARANGE.shape[0] < n:
        _ARANGE = np.arange(max(n, 2 * _ARANGE.shape[0]))
        _ARANGE.flags.writeable = False
    return _ARANGE[:n]


# Why an action is illegal: the reason codes of IllegalMove.reason, in the order why_illegal decides them.
OUT_OF_RANGE = "out_of_range"  # not an action of these rules (not an int in 0..num_actions-1)
GAME_OVER = "game_over"  # the game in the slot ended: nothing is legal until new_games
MUST_GIVE = "must_give"  # exchange phase: only a give is legal, the action is a pass or a play
NOTHING_TO_GIVE = "nothing_to_give"  # exchange phase: a give of a rank the player does not hold
GIVE_OUTSIDE_EXCHANGE = "give_outside_exchange"  # a give in the play phase
LEADER_CANNOT_PASS = "leader_cannot_pass"  # a pass by the player who leads the trick
NOT_ENOUGH_CARDS = "not_enough_cards"  # a play of more cards of the rank than the player can use (held < count)
WRONG_COUNT = "wrong_count"  # a play of another number of cards than the trick's
OR_NOTHING = "or_nothing"  # "or nothing" binds the player: only the trick's rank (or a pass) is legal
DOES_NOT_BEAT = "does_not_beat"  # the rank does not beat the trick's under the current order (revolution)
ILLEGAL_REASONS: tuple[str, ...] = (
    OUT_OF_RANGE,
    GAME_OVER,
    MUST_GIVE,
    NOTHING_TO_GIVE,
    GIVE_OUTSIDE_EXCHANGE,
    LEADER_CANNOT_PASS,
    NOT_ENOUGH_CARDS,
    WRONG_COUNT,
    OR_NOTHING,
    DOES_NOT_BEAT,
)


class IllegalMove(NamedTuple):
    """Why an action is illegal (:func:`why_illegal`): a reason of :data:`ILLEGAL_REASONS` and the facts a message
    needs. ``out_of_range`` and ``game_over`` carry the action only (the other fields stay -1, ``""``, False)."""

    reason: str
    action: object  # as passed: an out-of-range action may not even be an int
    player: int = -1  # the player to act
    kind: str = ""  # "pass", "play" or "give"
    rank: int = -1  # of a play or a give (cards.RANK_NAMES); -1 for a pass
    count: int = -1  # cards the action plays: 0 for a pass, 1 for a give
    held: int = -1  # cards of `rank` the player may use: with wild 2s, the 2s count when a natural is held
    wild: int = -1  # the 2s counted in `held`
    trick_rank: int = -1  # the rank on the pile, -1 when the next play leads
    trick_count: int = -1  # cards per play in the trick, 0 when the next play leads
    revolution: bool = False  # lower ranks are stronger
    constrained: bool = False  # "or nothing" binds the player to the trick's rank
    gives_left: int = -1  # cards the player still has to give back in the exchange


def why_illegal(rules: Rules, state: GameState, slot: int, action: int) -> IllegalMove:
    """Why ``action`` is illegal for the player to act in ``slot``: the one place that decides it (the front ends
    only word it). ``ValueError`` when ``action`` is legal there."""
    if isinstance(action, bool) or not isinstance(action, (int, np.integer)) or not 0 <= action < rules.num_actions:
        return IllegalMove(OUT_OF_RANGE, action)
    action = int(action)
    phase = int(state.phase[slot])
    if phase == PHASE_OVER:
        return IllegalMove(GAME_OVER, action)
    if legal_mask(rules, state, np.array([slot]))[0, action]:
        raise ValueError(f"action {action} {decode(rules, action)} is legal in slot {slot}: nothing to explain")
    tab = tables(rules)
    seat = int(state.current[slot])
    hand = state.hands[slot, seat]
    kind = {KIND_PASS: "pass", KIND_PLAY: "play", KIND_GIVE: "give"}[int(tab.kind[action])]
    rank = -1 if kind == "pass" else int(tab.rank[action])
    count = {"pass": 0, "play": int(tab.count[action]), "give": 1}[kind]
    held = wild = -1
    if rank >= 0:
        held, wild = int(hand[rank]), 0
        if rules.twos_wild and tab.wild_ranks[rank] and held > 0:
            wild = int(hand[TWO])
            held += wild
    trick_rank, trick_count = int(state.trick_rank[slot]), int(state.trick_count[slot])
    constrained = bool(state.constrained[slot])
    if phase == PHASE_EXCHANGE:
        reason = MUST_GIVE if kind != "give" else NOTHING_TO_GIVE
    elif kind == "give":
        reason = GIVE_OUTSIDE_EXCHANGE
    elif kind == "pass":
        reason = LEADER_CANNOT_PASS
    elif held < count:
        reason = NOT_ENOUGH_CARDS
    elif trick_rank >= 0 and count != trick_count:
        reason = WRONG_COUNT
    elif constrained:
        reason = OR_NOTHING
    else:
        reason = DOES_NOT_BEAT
    return IllegalMove(
        reason,
        action,
        player=int(state.player_at_seat[slot, seat]),
        kind=kind,
        rank=rank,
        count=count,
        held=held,
        wild=wild,
        trick_rank=trick_rank,
        trick_count=trick_count,
        revolution=bool(state.revolution[slot]),
        constrained=constrained,
        gives_left=int(state.gives_left[slot, seat]),
    )


def describe_illegal(rules: Rules, state: GameState, slot: int, action: int) -> str:
    """Why ``action`` is illegal in ``slot`` (:func:`why_illegal`): a sentence for the error message."""
    why = why_illegal(rules, state, slot, action)
    reason, player = why.reason, f"player_{why.player}"
    rank = RANK_NAMES[why.rank] if why.rank >= 0 else ""
    if reason == OUT_OF_RANGE:
        return f"action {why.action!r} is not in 0..{rules.num_actions - 1}"
    if reason == GAME_OVER:
        return "the game in this slot is over; start a new game (engine.new_games or VecGame.reset) first"
    if reason == MUST_GIVE:
        return f"{player} must give back a card in the exchange phase (a give action), not {why.kind}"
    if reason == NOTHING_TO_GIVE:
        return f"{player} holds no {rank} to give back"
    if reason == GIVE_OUTSIDE_EXCHANGE:
        return "give actions are only legal in the exchange phase"
    if reason == LEADER_CANNOT_PASS:
        return f"{player} leads this trick and may not pass"
    if reason == NOT_ENOUGH_CARDS:
        return f"{player} cannot play {why.count} × {rank}: holds {why.held} usable"
    if reason == WRONG_COUNT:
        return f"the trick is played with {why.trick_count} card(s), not {why.count}"
    if reason == OR_NOTHING:
        return "or nothing: player must play the same rank as the previous play, or pass"
    return f"{rank} does not beat the trick in force under the current rank order"


# --------------------------------------------------------------------------------------
# Step
# --------------------------------------------------------------------------------------
class StepResult(NamedTuple):
    """What :func:`step` reports for each stepped slot (``n`` = number of slots stepped)."""

    rewards: np.ndarray  # (n, P) float32 by player: the manche's rewards where one ended, else 0
    manche_over: np.ndarray  # (n,) bool: a manche ended (the next one is dealt unless the game ended)
    game_over: np.ndarray  # (n,) bool: the game ended; the slot stays terminal until new_games


def step(
    rules: Rules,
    state: GameState,
    actions: np.ndarray,
    rng: np.random.Generator,
    mask: np.ndarray | None = None,
    reward_mode: str = "zero_sum",
    slots: np.ndarray | None = None,
    compiled: bool = False,
    check: bool = True,
) -> StepResult:
    """Apply one action per slot and report what happened (:class:`StepResult`).

    ``slots``: the slots to step, ``(n,) int`` distinct (default: all, ``n = B``); the others are
    left exactly as they are. ``actions (n,) int`` and ``mask`` (the current legal mask of those
    slots, ``(n, num_actions) bool``, when the caller already has it) follow ``slots``. Illegal
    actions raise ``ValueError`` (naming slot, player and reason) with the state unchanged.

    A slot whose manche ended is dealt its next manche (a rule of the game). A slot whose game
    ended is never dealt anew here: it stays terminal (phase ``PHASE_OVER``, no legal action,
    stepping it raises) until the caller starts a new game with :func:`new_games`.

    ``compiled``: the actions are played slot by slot by the Numba kernel where it is available
    (:mod:`president_env.compiled`; the manche ends stay here), which changes nothing but the speed on a few slots.

    ``check=False``: the caller vouches that every action is legal (drawn from ``mask``), so the legality check
    is skipped (an illegal action would then corrupt the state): for a batched caller's own random draws.
    """
    tab = tables(rules)
    p = rules.n_players
    full = slots is None
    if full:
        b = state.batch_size
        slot = _arange(b)
    else:
        slot = np.asarray(slots)
        if slot.ndim != 1 or slot.dtype.kind not in "iu":
            raise ValueError(f"slots must be a 1-d integer array, got {slot.dtype} {slot.shape}")
        slot = slot.astype(np.int64, copy=False)
        b = slot.size
    actions = np.asarray(actions)
    if actions.shape != (b,) or actions.dtype.kind not in "iu":
        raise ValueError(f"actions must be an integer array of shape ({b},), got {actions.dtype} {actions.shape}")
    if check:
        if mask is None:
            mask = legal_mask(rules, state)
            if not full:
                mask = mask[slot]
        local = _arange(b)
        if b and (actions.min() < 0 or actions.max() >= rules.num_actions):
            legal = (actions >= 0) & (actions < rules.num_actions)
        else:
            legal = mask.reshape(-1)[local * rules.num_actions + actions]
        if not legal.all():
            i = int(np.flatnonzero(~legal)[0])
            s = int(slot[i])
            player = int(state.player_at_seat[s, state.current[s]])
            reason = describe_illegal(rules, state, s, int(actions[i]))
            raise ValueError(f"illegal action {int(actions[i])} for player_{player} in slot {s}: {reason}")

    def get(name: str) -> np.ndarray:
        return getattr(state, name) if full else getattr(state, name)[slot]

    def put(name: str, value: np.ndarray) -> None:
        if full:
            setattr(state, name, value)
        else:
            getattr(state, name)[slot] = value

    rewards = np.zeros((b, p), np.float32)
    manche_over = np.zeros(b, bool)
    game_over = np.zeros(b, bool)
    result = StepResult(rewards, manche_over, game_over)
    if compiled and _compiled.available():
        over = _compiled.play(rules, tab, state, slot, actions.astype(np.int64, copy=False)).nonzero()[0]
        if over.size:
            _end_manche(rules, state, slot[over], over, rng, result, reward_mode, compiled=True)
        return result
    if full:
        state.manche_steps += 1
    else:
        state.manche_steps[slot] += 1
    kind = tab.kind[actions]
    is_give = kind == KIND_GIVE
    if is_give.any():
        _apply_gives(rules, state, slot[is_give], tab.rank[actions[is_give]])
        if is_give.all():
            return result
    is_play = kind == KIND_PLAY
    is_pass = kind == KIND_PASS
    rank = tab.rank[actions]
    count = np.where(is_play, tab.count[actions], 0)  # passes and gives move no card here
    cur = get("current")
    seat_row = slot * p + cur  # row of the acting seat in (B*P, ...) views of seat-indexed arrays
    hands, played = state.hands.reshape(-1), state.played.reshape(-1)
    n_held = state.n_held.reshape(-1)
    bit = SEAT_BIT[cur]

    # Cards leave the hand: naturals first, wild 2s complete.
    card_at = seat_row * rules.n_ranks + rank
    naturals = np.minimum(hands[card_at], count).astype(np.int8)
    hands[card_at] -= naturals
    played[card_at] += naturals
    used_twos = None
    if rules.twos_wild:
        used_twos = (count - naturals).astype(np.int8)
        two_at = seat_row * rules.n_ranks + TWO
        hands[two_at] -= used_twos
        played[two_at] += used_twos
    n_held[seat_row] -= count.astype(np.int16)

    # What the play means, judged by the order in force before it.
    trick_rank = get("trick_rank")
    revolution = get("revolution")
    is_match = is_play & (trick_rank == rank)
    ends_by_top = None
    if rules.top_rank_ends_trick:
        top_rank = JOKER if rules.jokers else np.where(revolution, 0, TWO)
        ends_by_top = is_play & (rank == top_rank)
    if rules.revolution:
        put("revolution", revolution ^ (is_play & (count >= 4)))

    holding = get("holding_bits")
    went_out = is_play & (n_held[seat_row] == 0)
    out_local = went_out.nonzero()[0]
    if out_local.size:
        twos_out = None if used_twos is None else used_twos[out_local]
        _go_out(rules, state, slot[out_local], cur[out_local], rank[out_local], twos_out)
        holding = holding & ~np.where(went_out, bit, 0).astype(np.uint8)
        put("holding_bits", holding)

    # Turn order: the next eligible seat clockwise; the trick ends when the turn would
    # reach the last player to have played, or nobody else can act.
    passed = get("passed_bits") | np.where(is_pass, bit, 0).astype(np.uint8)
    if rules.pass_rule == "can_return":
        passed = np.where(is_play, 0, passed).astype(np.uint8)
    owner = np.where(is_play, cur, get("trick_owner"))
    eligible = holding & ~passed & ~bit
    nxt = next_seat_bits(eligible, cur, p)
    if rules.equal_rank == "skip":
        skipping = is_match & (nxt >= 0)
        if skipping.any():
            skipped = np.maximum(nxt, 0)
            after_skip = next_seat_bits(eligible & ~SEAT_BIT[skipped], skipped, p)
            nxt = np.where(skipping, after_skip, nxt)
    trick_ends = (nxt < 0) | (nxt == owner)
    if ends_by_top is not None:
        trick_ends |= ends_by_top
    trick_ends &= ~is_give

    # The winner leads the next trick, or the next seat holding cards if he went out.
    owner_seat = np.maximum(owner, 0)  # owner is -1 only where a give was made
    winner_holds = (holding & SEAT_BIT[owner_seat]) > 0
    new_leader = np.where(winner_holds, owner, next_seat_bits(holding, owner_seat, p))
    acted = ~is_give
    put("current", np.where(acted, np.where(trick_ends, new_leader, nxt), cur))
    put("trick_rank", np.where(trick_ends, -1, np.where(is_play, rank, trick_rank)))
    put("trick_count", np.where(trick_ends, 0, np.where(is_play, count, get("trick_count"))))
    put("trick_owner", np.where(trick_ends, -1, owner))
    put("passed_bits", np.where(trick_ends, 0, passed).astype(np.uint8))
    if rules.equal_rank == "or_nothing":
        put("constrained", np.where(acted, ~trick_ends & is_match, get("constrained")))

    if out_local.size:
        over = out_local[POPCOUNT[holding[out_local]] <= 1]
        if over.size:
            _end_manche(rules, state, slot[over], over, rng, result, reward_mode)
    return result


def _apply_gives(rules: Rules, state: GameState, index: np.ndarray, rank: np.ndarray) -> None:
    """Exchange phase: the seat to act gives one card of ``rank`` to its partner."""
    giver = state.current[index]
    partner = state.partner[index, giver].astype(np.int64)
    state.hands[index, giver, rank] -= 1
    state.hands[index, partner, rank] += 1
    state.n_held[index, giver] -= 1
    state.n_held[index, partner] += 1
    state.gave[index, giver, rank] += 1
    state.received[index, partner, rank] += 1
    state.gives_left[index, giver] -= 1
    pending = state.gives_left[index] > 0
    more = pending.any(axis=1)
    next_giver = np.argmin(np.where(pending, state.prev_pos[index], rules.n_players), axis=1)
    state.current[index] = np.where(more, next_giver, state.leader[index])
    state.phase[index] = np.where(more, PHASE_EXCHANGE, PHASE_PLAY)


def _go_out(rules: Rules, state: GameState, index: np.ndarray, seat: np.ndarray, rank: np.ndarray, used_twos) -> None:
    """Players at ``seat`` of slots ``index`` just played their last card (``rank``, ``used_twos`` wild 2s):
    they leave the manche (penalised with ``finish_on_two``)."""
    state.out_order[index, seat] = state.n_out[index]
    state.n_out[index] += 1
    if rules.finish_on_two != "penalty":  # nobody is penalized (``penalized`` stays as the deal set it: False)
        state.out_rank[index, seat] = state.n_normal_out[index]
        state.n_normal_out[index] += 1
        return
    bad = (rank == TWO) | (rank == JOKER)
    if used_twos is not None:
        bad |= used_twos > 0
    state.penalized[index, seat] = bad
    state.out_rank[index, seat] = np.where(bad, state.n_penalized[index], state.n_normal_out[index])
    state.n_penalized[index] += bad
    state.n_normal_out[index] += ~bad


def final_positions(rules: Rules, state: GameState, index: np.ndarray) -> np.ndarray:
    """Finishing positions by seat ``(n,P) int8`` of slots whose manche just ended."""
    out_rank = state.out_rank[index].astype(np.int64)
    n_normal = state.n_normal_out[index].astype(np.int64)[:, None]
    holder = state.n_held[index] > 0
    positions = np.where(state.penalized[index], n_normal + 1 + out_rank, out_rank)
    return np.where(holder, n_normal, positions).astype(np.int8)


def end_manches(
    rules: Rules, state: GameState, slots: np.ndarray, rng: np.random.Generator, reward_mode: str = "zero_sum"
) -> StepResult:
    """The end of the manches that a play in ``slots (n,) int64`` just ended (every player but one out), as
    :func:`step` plays it: scoring, then the next deal or the game's end. For a caller that played the step
    by :class:`president_env.compiled.Slot`; returns the step's :class:`StepResult` for those slots."""
    n = slots.size
    result = StepResult(np.zeros((n, rules.n_players), np.float32), np.zeros(n, bool), np.zeros(n, bool))
    _end_manche(rules, state, slots, _arange(n), rng, result, reward_mode)
    return result


def _end_manche(rules, state, index, local, rng, result: StepResult, reward_mode, compiled: bool = False) -> None:
    """Score the manche in slots ``index`` (rows ``local`` of ``result``), then deal the next manche, or leave
    the slot terminal (``PHASE_OVER``) where the game ended. ``compiled``: by the Numba kernels where they are
    available (``compiled.score`` and ``compiled.deal_next``: the same scores and deals from the same draws)."""
    tab = tables(rules)
    if compiled and _compiled.available():
        positions, over = _compiled.score(rules, tab, state, index, local, result, reward_table(rules, reward_mode))
        if not over.all():
            going_on = ~over
            cont = index[going_on]
            _compiled.deal_next(rules, tab, state, cont, positions[going_on], _shuffled_decks(rules, state, cont, rng))
        return
    p = rules.n_players
    sub_rows = np.arange(index.size)[:, None]
    pos_by_seat = final_positions(rules, state, index)
    players = state.player_at_seat[index].astype(np.int64)
    pos_by_player = np.empty_like(pos_by_seat)
    pos_by_player[sub_rows, players] = pos_by_seat
    result.rewards[local] = reward_table(rules, reward_mode)[pos_by_player]
    result.manche_over[local] = True
    decisive = state.decisive[index]
    state.scores[index] += np.where(decisive[:, None], 0, tab.points[pos_by_player])
    state.manche[index] += 1
    state.last_positions[index] = pos_by_player

    last_regular = (state.manche[index] >= rules.manches) & ~decisive
    scores = state.scores[index]
    tied = scores == scores.max(axis=1, keepdims=True)
    needs_decider = last_regular & (tied.sum(axis=1) > 1)
    over = decisive | (last_regular & ~needs_decider)
    # Winner: the best total, or among the tied players the best placed in the decisive manche.
    contenders = np.where(decisive[:, None], state.tied[index], tied)
    winner = np.argmin(np.where(contenders, pos_by_player, p + 1), axis=1)
    state.last_winner[index[over]] = winner[over]
    state.last_scores[index[over]] = scores[over]
    state.decisive[index] = needs_decider
    state.tied[index[needs_decider]] = tied[needs_decider]
    result.game_over[local] = over

    going_on = ~over
    if going_on.any():
        cont = index[going_on]
        prev_by_seat, dealer = _seat_for_roles(rules, state, cont, pos_by_player[going_on])  # the Trou du cul deals
        _deal_and_start(rules, state, cont, rng, dealer, prev_by_seat)
    state.phase[index[over]] = PHASE_OVER


def sample_legal(mask: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """One uniformly random legal action per row of ``mask (B, A) bool`` -> ``(B,) int64``.

    Every row must have a legal action (the engine guarantees it for the player to act).
    """
    b, a = mask.shape
    flat = mask.ravel().nonzero()[0]
    bounds = np.searchsorted(flat, _arange(b + 1) * a)
    n_legal = bounds[1:] - bounds[:-1]
    if not n_legal.all():
        raise ValueError(f"row {int(np.flatnonzero(n_legal == 0)[0])} of the mask has no legal action")
    pick = (rng.random(b) * n_legal).astype(np.int64)
    return flat[bounds[:-1] + pick] - _arange(b) * a
