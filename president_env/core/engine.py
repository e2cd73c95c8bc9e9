"""The batched engine: Président as a state machine over a state of arrays, batch axis first.

Everything a game is lives in :class:`~president_env.core.state.GameState` (``B`` slots, ``P`` seats, ``R`` ranks; one
comment per field in :mod:`president_env.core.state`). The functions of this module take the
:class:`~president_env.core.rules.Rules` first and work on all slots at once — there is no Python loop over games:

- :func:`new_games` deals fresh games into some slots (random or supplied deals,
  optional starting roles), including the exchange set-up;
- :func:`legal_mask` gives ``(B, num_actions) bool``; :func:`why_illegal` decides why an action is not legal (an
  :class:`IllegalMove`: a reason code of :data:`ILLEGAL_REASONS` and the facts behind it), which
  :func:`describe_illegal` words for the errors and each front end words its own way;
- :func:`step` applies one action per slot (all slots, or a chosen subset) and reports
  per-player rewards and the manche-over and game-over events (:class:`StepResult`). It
  deals the next manche of a game (a rule), never a new game: a finished game stays
  terminal until the layer above calls :func:`new_games` (``VecGame`` does, by default).

The rules themselves are applied, slot by slot, by the compiled kernels of two modules:
:mod:`president_env.core.trick` (the legal mask and every decision of a manche) and :mod:`president_env.core.manche`
(the deal, the exchange's automatic half, scoring and the game's end). This module checks the input, keeps the state and
calls them. The observation lives in :mod:`president_env.core.observation`; the human notation (card and role strings)
in :mod:`president_env.core.deals`.

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

from president_env.core import manche, trick
from president_env.core.actions import KIND_GIVE, KIND_PASS, KIND_PLAY, action_tables, decode
from president_env.core.cards import RANK_NAMES, TWO, deck_card_ranks
from president_env.core.deals import parse_deals, parse_roles, role_by_position
from president_env.core.rules import Rules
from president_env.core.state import PHASE_EXCHANGE, PHASE_OVER, GameState, StepResult
from president_env.core.state import (
    PHASE_PLAY as PHASE_PLAY,  # the state's names, re-exported: the engine works on them
)
from president_env.core.state import allocate as allocate
from president_env.core.trick import index_range

REWARD_MODES = ("zero_sum", "normalized", "points")


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
    """The tables of ``rules`` (read-only, cached): the actions', the trick rules' (``trick.rank_tables``) and the
    manche's (points, roles and seats by finishing position), the deck's."""
    kind, rank, count = action_tables(rules)
    result = Tables(
        kind=kind,
        rank=np.maximum(rank, 0).astype(np.int64),
        count=count.astype(np.int64),
        **trick.rank_tables(rules),
        points=manche.points_by_position(rules),
        role_by_pos=role_by_position(rules.n_players),
        seat_by_pos=manche.seat_by_position(rules.n_players),
        deck_ranks=deck_card_ranks(rules.decks, rules.jokers),
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
# Starting games and manches (the rules of it in manche.py, the human notation in deals.py)
# --------------------------------------------------------------------------------------
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
    A first manche with roles is seated by role with ``reseat_by_role`` (see ``manche.deal``).
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
    if dealers is not None:
        dealers = np.asarray(dealers)
        if (
            dealers.shape != (n,)
            or not np.issubdtype(dealers.dtype, np.integer)
            or not np.all((dealers >= 0) & (dealers < p))
        ):
            raise ValueError(f"dealers must be {n} seat numbers in 0..{p - 1}, got {dealers.tolist()}")
    manche.start_games(rules, state, index, rng, _shuffled_decks, dealt_to, start_pos, dealers)


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
    dealer = state.dealer[index].copy()
    manche.check_regular_deal(rules, index, dealt_to, dealer)
    positions = state.prev_pos[index[:, None], state.seat_of_player[index]]  # by player: seated as before
    held_by = parse_deals(rules, deals)  # the player holding each card id
    manche.deal(rules, state, index, positions, dealer, held_by, supplied=True)


def _shuffled_decks(rules: Rules, state: GameState, index: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """``(n, N) int64``: a shuffled deck of card ids for each slot of ``index`` about to be dealt, the one random
    draw of a deal (``state`` unused here: a test deals each game from its own history through it)."""
    return rng.permuted(np.broadcast_to(np.arange(rules.n_cards), (index.size, rules.n_cards)), axis=1)


# --------------------------------------------------------------------------------------
# Legal actions (the rules of it in trick.py)
# --------------------------------------------------------------------------------------
def legal_mask(rules: Rules, state: GameState, slots: np.ndarray | None = None) -> np.ndarray:
    """``(B, num_actions) bool``: the legal actions of the player to act in every slot, or ``(n, num_actions)``
    in the slots ``slots (n,) int`` only (``trick.legal_mask``)."""
    index = index_range(state.batch_size) if slots is None else np.asarray(slots, dtype=np.int64)
    return trick.legal_mask(rules, state, index)


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
        if tab.wild_ranks[rank] and held > 0:  # only where 2s are wild (trick.rank_tables)
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
# Step (the rules of it in trick.py and manche.py)
# --------------------------------------------------------------------------------------
def step(
    rules: Rules,
    state: GameState,
    actions: np.ndarray,
    rng: np.random.Generator,
    mask: np.ndarray | None = None,
    reward_mode: str = "zero_sum",
    slots: np.ndarray | None = None,
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

    The actions are played, and the manches that end scored and dealt, slot by slot by the kernels
    (``trick.play``, ``manche.score`` and ``manche.deal``).

    ``check=False``: the caller vouches that every action is legal (drawn from ``mask``), so the legality check
    is skipped (an illegal action would then corrupt the state): for a batched caller's own random draws.
    """
    p = rules.n_players
    full = slots is None
    if full:
        b = state.batch_size
        slot = index_range(b)
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
        local = index_range(b)
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

    result = StepResult(np.zeros((b, p), np.float32), np.zeros(b, bool), np.zeros(b, bool))
    over = trick.play(rules, state, slot, actions.astype(np.int64, copy=False))
    if over.size:
        _end_manche(rules, state, slot[over], over, rng, result, reward_mode)
    return result


def end_manches(
    rules: Rules, state: GameState, slots: np.ndarray, rng: np.random.Generator, reward_mode: str = "zero_sum"
) -> StepResult:
    """The end of the manches that a play in ``slots (n,) int64`` just ended (every player but one out), as
    :func:`step` plays it: scoring, then the next deal or the game's end. For a caller that played the step
    by :class:`president_env.core.trick.Slot`; returns the step's :class:`StepResult` for those slots."""
    n = slots.size
    result = StepResult(np.zeros((n, rules.n_players), np.float32), np.zeros(n, bool), np.zeros(n, bool))
    _end_manche(rules, state, slots, index_range(n), rng, result, reward_mode)
    return result


def _end_manche(rules, state, index, local, rng, result: StepResult, reward_mode) -> None:
    """Score the manche in slots ``index`` (rows ``local`` of ``result``, ``manche.score``), then deal the next
    manche from shuffled decks drawn here (``manche.deal``), or leave the slot terminal (``PHASE_OVER``) where the
    game ended."""
    positions, over = manche.score(rules, state, index, local, result, reward_table(rules, reward_mode))
    going_on = ~over
    if going_on.any():
        cont = index[going_on]
        dealers = np.zeros(cont.size, np.int64)  # unused: the Trou du cul deals
        manche.deal(rules, state, cont, positions[going_on], dealers, _shuffled_decks(rules, state, cont, rng))


def sample_legal(mask: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """One uniformly random legal action per row of ``mask (B, A) bool`` -> ``(B,) int64``.

    Every row must have a legal action (the engine guarantees it for the player to act).
    """
    b, a = mask.shape
    flat = mask.ravel().nonzero()[0]
    bounds = np.searchsorted(flat, index_range(b + 1) * a)
    n_legal = bounds[1:] - bounds[:-1]
    if not n_legal.all():
        raise ValueError(f"row {int(np.flatnonzero(n_legal == 0)[0])} of the mask has no legal action")
    pick = (rng.random(b) * n_legal).astype(np.int64)
    return flat[bounds[:-1] + pick] - index_range(b) * a
