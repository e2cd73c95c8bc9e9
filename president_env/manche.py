"""The manche's start and end, in their two forms side by side: the NumPy batched form and the compiled per-slot form.

Everything between two manches lives here: a game's first manche (roles drawn or given, the first dealer), the
deal (who receives the first card, one card at a time clockwise), seating by role, the automatic half of the
exchange and who acts first; and at a manche's end the finishing positions, the points, the game's end (a
decisive manche on a tie). The decisions inside a manche live in :mod:`president_env.trick`;
:mod:`president_env.engine` is the state machine that calls both, and draws the shuffled decks (the one random
draw of a deal, ``engine._shuffled_decks``) for both forms, so the games and the generator's draws are the same.

- **NumPy, batched** (:func:`start_games`, :func:`start_manche`, :func:`score`, :func:`deal_next`).
- **Compiled, per slot** (:func:`compiled_score`, :func:`compiled_deal_next`): the same work slot by slot in loops
  that Numba compiles (``_score_kernel``, ``_deal_kernel``) where :func:`president_env.compiled.available`.
- The deal in the human notation, for tournaments' duplicate deals: :func:`deal_hands`, :func:`deal_sizes`,
  :func:`table_for_roles`.

A change of one of these rules changes both forms, in this file (and the oracle, ``tests/oracle/reference.py``);
``tests/test_compiled.py`` plays both in lockstep and demands equal results and whole states after every step.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from functools import lru_cache
from typing import TYPE_CHECKING, Any

import numpy as np

from .cards import deck
from .compiled import jit
from .deals import NO_ROLE, ROLE_NAMES, parse_roles
from .rules import Rules
from .trick import PHASE_EXCHANGE, PHASE_OVER, PHASE_PLAY, next_seat

if TYPE_CHECKING:
    from .engine import GameState, StepResult, Tables


# --------------------------------------------------------------------------------------
# Tables: points and seats by finishing position
# --------------------------------------------------------------------------------------
def points_by_position(rules: Rules) -> np.ndarray:
    """``(P,) int32`` points of each finishing position in a manche (``scoring``)."""
    n = rules.n_players
    if rules.scoring == "per_opponent_behind":
        return (n - 1 - np.arange(n)).astype(np.int32)
    points = np.zeros(n, np.int32)
    points[0] = 2
    if n >= 4:
        points[1] = 1
    return points


def seat_by_position(n_players: int) -> np.ndarray:
    """``(P,) int64`` seat a player of each finishing position takes with ``reseat_by_role`` (seat 0 Président,
    seat 1 Trou du cul, ..., seat P-1 Vice-Président)."""
    seats = np.zeros(n_players, np.int64)
    seats[1:] = n_players - np.arange(1, n_players)
    return seats


def first_receiver(rules: Rules, dealer):
    """The seat that receives the first card of a deal by ``dealer`` (an int or an int array): the dealer's left
    or the dealer (``deal_start``)."""
    return (dealer + (1 if rules.deal_start == "dealer_left" else 0)) % rules.n_players


# --------------------------------------------------------------------------------------
# The deal in the human notation (tournaments' duplicate deals)
# --------------------------------------------------------------------------------------
def deal_sizes(rules: Rules, first_seat: np.ndarray) -> np.ndarray:
    """Cards each seat receives when the deck is dealt one at a time from ``first_seat (n,)``: ``(n,P)``."""
    p = rules.n_players
    base, extra = divmod(rules.n_cards, p)
    offset = (np.arange(p) - np.asarray(first_seat)[:, None]) % p
    return base + (offset < extra)


def deal_hands(
    rules: Rules, rng: np.random.Generator, dealer: int, seat_of_player: Sequence[int] | None = None
) -> list[list[str]]:
    """One shuffled deal: card names by player, the form :meth:`VecGame.redeal` takes.

    The deck (``cards.deck``) is shuffled by one ``rng.permutation`` and dealt one card at a time, clockwise,
    from the seat ``deal_start`` names relative to ``dealer``; ``seat_of_player`` (default: player i at seat
    i) says who sits where. Tournaments deal their duplicate deals with it.
    """
    p = rules.n_players
    seats = list(range(p)) if seat_of_player is None else [int(s) for s in seat_of_player]
    if sorted(seats) != list(range(p)):
        raise ValueError(f"seat_of_player must be a permutation of 0..{p - 1}, got {seats}")
    if not 0 <= int(dealer) < p:
        raise ValueError(f"dealer must be a seat in 0..{p - 1}, got {dealer}")
    cards = deck(rules.decks, rules.jokers)
    order = rng.permutation(len(cards))
    first_seat = first_receiver(rules, int(dealer))
    player_at_seat = [seats.index(seat) for seat in range(p)]
    hands: list[list[str]] = [[] for _ in range(p)]
    for i, index in enumerate(order):
        hands[player_at_seat[(first_seat + i) % p]].append(cards[int(index)])
    return hands


def table_for_roles(rules: Rules, roles: Mapping | Sequence) -> tuple[list[int], int]:
    """The seating and dealer of a manche played with ``roles`` (names by player, as ``deals.parse_roles``).

    With ``reseat_by_role`` players sit by role (seat 0 Président, seat 1 Trou du cul, ..., seat P-1
    Vice-Président); otherwise player i sits at seat i. The Trou du cul deals. Returns
    ``(seat_of_player, dealer_seat)``.
    """
    p = rules.n_players
    positions = parse_roles(rules, roles)
    seats = seat_by_position(p)[positions] if rules.reseat_by_role else np.arange(p)
    seat_of_player = [int(s) for s in seats]
    return seat_of_player, seat_of_player[int(np.argmax(positions == p - 1))]


# --------------------------------------------------------------------------------------
# Starting games and manches (NumPy)
# --------------------------------------------------------------------------------------
ShuffledDecks = Callable[[Rules, "GameState", np.ndarray, np.random.Generator], np.ndarray]
"""``engine._shuffled_decks``: ``(n, N) int64`` a shuffled deck of card ids for each slot about to be dealt."""


def start_games(
    rules: Rules,
    tab: Tables,
    state: GameState,
    index: np.ndarray,
    rng: np.random.Generator,
    shuffled_decks: ShuffledDecks,
    dealt_to: np.ndarray | None = None,
    start_pos: np.ndarray | None = None,
    dealers: np.ndarray | None = None,
) -> None:
    """Start new games in slots ``index (n,) int64`` (``engine.new_games`` read the input): scores cleared, first
    manche dealt and set up. ``dealt_to (n,N)``: the seat of every card id by player (seat i = player i), else the
    deck is shuffled; ``start_pos (n,P)``: previous finishing positions by player to start from (-1 rows: none);
    ``dealers (n,)``: valid seats of the first dealers, else drawn. Everything is checked before the state
    changes."""
    n, p = index.size, rules.n_players
    has_roles = np.full(n, rules.initial_roles == "draw")
    if start_pos is not None:
        has_roles |= start_pos[:, 0] >= 0
    if dealers is not None and has_roles.any():
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
        _check_exchange_fits(rules, tab, index, dealt_to, prev_pos, has_roles)
    # Nothing below raises: the state changes only now.
    state.scores[index] = 0
    state.manche[index] = 0
    state.decisive[index] = False
    state.tied[index] = False
    seats = np.arange(p, dtype=np.int8)
    state.player_at_seat[index] = seats
    state.seat_of_player[index] = seats
    if has_roles.any():
        roled = index[has_roles]
        prev_pos[has_roles], dealer[has_roles] = seat_for_roles(rules, tab, state, roled, prev_pos[has_roles])
    if dealt_to is None:
        _deal(rules, tab, state, index, shuffled_decks(rules, state, index, rng), dealer, prev_pos)
    else:
        dealt_to = np.take_along_axis(state.seat_of_player[index], dealt_to.astype(np.int64), axis=1)
        start_manche(rules, tab, state, index, dealt_to.astype(np.int8), dealer, prev_pos)


def check_regular_deal(rules: Rules, index: np.ndarray, dealt_to: np.ndarray, dealer: np.ndarray) -> None:
    """A deal supplied for the manche of slots ``index`` (the seat of each card id ``(n,N)``) must be one the dealers
    ``dealer (n,)`` could have dealt: the first N mod P seats in deal order hold one card more. ``ValueError``
    naming the slot otherwise."""
    expected = deal_sizes(rules, first_receiver(rules, dealer))
    got = (dealt_to[:, :, None] == np.arange(rules.n_players)).sum(axis=1)  # cards dealt to each seat
    wrong = np.flatnonzero((got != expected).any(axis=1))
    if wrong.size:
        i = int(wrong[0])
        raise ValueError(
            f"deal for slot {int(index[i])}: hand sizes by seat {got[i].tolist()} do not match a deal from dealer "
            f"seat {int(dealer[i])} ({rules.deal_start}): expected {expected[i].tolist()}"
        )


def _check_exchange_fits(
    rules: Rules, tab: Tables, index: np.ndarray, dealt_to: np.ndarray, prev_pos: np.ndarray, has_roles: np.ndarray
) -> None:
    """A supplied first deal with roles: every lower-ranked player of a pair must hold the k cards he gives."""
    p = rules.n_players
    held = (dealt_to[:, :, None] == np.arange(p)).sum(axis=1)  # (n,P) cards of each player
    for _, low_pos, k in rules.exchange_pairs:
        low = np.argmax(prev_pos == low_pos, axis=1)
        short = has_roles & (held[np.arange(index.size), low] < k)
        if short.any():
            i = int(np.flatnonzero(short)[0])
            role = ROLE_NAMES[tab.role_by_pos[low_pos]]
            raise ValueError(
                f"deal for slot {int(index[i])}: player_{int(low[i])} ({role}) must give {k} cards in the "
                f"exchange but holds only {int(held[i, low[i]])}"
            )


def seat_for_roles(
    rules: Rules, tab: Tables, state: GameState, index: np.ndarray, prev_by_player: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Seat slots ``index`` for a manche with roles, from the previous finishing positions by player ``(n,P)``.

    With ``reseat_by_role`` players sit by role (seat 0 Président, seat 1 Trou du cul, ..., seat P-1
    Vice-Président); otherwise the seats stay. Returns the previous positions by seat ``(n,P) int8`` and the
    dealer ``(n,) int64``: the Trou du cul's seat.
    """
    p = rules.n_players
    rows = np.arange(index.size)[:, None]
    if rules.reseat_by_role:
        new_seat = tab.seat_by_pos[prev_by_player]  # (n,P) by player
        state.seat_of_player[index] = new_seat
        player_at = np.empty_like(new_seat)
        player_at[rows, new_seat] = np.arange(p)
        state.player_at_seat[index] = player_at
    seat_of = state.seat_of_player[index].astype(np.int64)
    prev_by_seat = np.empty_like(prev_by_player)
    prev_by_seat[rows, seat_of] = prev_by_player
    return prev_by_seat, _first_seat_with(prev_by_seat, p - 1)


def _first_seat_with(values: np.ndarray, target: np.ndarray | int) -> np.ndarray:
    """Seat where ``values == target`` for each slot, ``(n,) int64`` (the target exists)."""
    return np.argmax(values == np.asarray(target).reshape(-1, 1), axis=1)


def _deal(rules: Rules, tab: Tables, state: GameState, index, card_ids, dealer, prev_pos) -> None:
    """Deal the shuffled decks ``card_ids (n,N)`` one card at a time clockwise from the first receiver, then set the
    manche up (:func:`start_manche`)."""
    n, n_cards = index.size, rules.n_cards
    dealt_to = np.empty((n, n_cards), np.int8)
    dealt_to[np.arange(n)[:, None], card_ids] = (first_receiver(rules, dealer)[:, None] + np.arange(n_cards)) % (
        rules.n_players
    )
    start_manche(rules, tab, state, index, dealt_to, dealer, prev_pos)


def _cards_of_deal(rules: Rules, tab: Tables, dealt_to: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """From the seat each card id was dealt to ``(n,N)``: hands ``(n,P,R) int8`` and 3C holders ``(n,P) bool``."""
    n = dealt_to.shape[0]
    p, r = rules.n_players, rules.n_ranks
    flat = (np.arange(n)[:, None] * p + dealt_to) * r + tab.deck_ranks
    hands = np.bincount(flat.ravel(), minlength=n * p * r).reshape(n, p, r).astype(np.int8)
    holders = np.zeros((n, p), bool)
    for cid in tab.three_of_clubs:
        holders[np.arange(n), dealt_to[:, cid]] = True
    return hands, holders


def start_manche(rules: Rules, tab: Tables, state: GameState, index, dealt_to, dealer, prev_pos) -> None:
    """Set up a manche in slots ``index``: the deal (seat of each card id), roles from ``prev_pos`` (by seat),
    the automatic half of the exchange, and who acts first."""
    n, p = index.size, rules.n_players
    hands, three_holders = _cards_of_deal(rules, tab, dealt_to)
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
# The end of a manche (NumPy)
# --------------------------------------------------------------------------------------
def final_positions(rules: Rules, state: GameState, index: np.ndarray) -> np.ndarray:
    """Finishing positions by seat ``(n,P) int8`` of slots whose manche just ended: the normal finishers in their
    order, the last holder next, the offenders of ``finish_on_two: penalty`` last in theirs."""
    out_rank = state.out_rank[index].astype(np.int64)
    n_normal = state.n_normal_out[index].astype(np.int64)[:, None]
    holder = state.n_held[index] > 0
    positions = np.where(state.penalized[index], n_normal + 1 + out_rank, out_rank)
    return np.where(holder, n_normal, positions).astype(np.int8)


def score(
    rules: Rules,
    tab: Tables,
    state: GameState,
    index: np.ndarray,
    local: np.ndarray,
    result: StepResult,
    rewards: np.ndarray,
) -> tuple[np.ndarray, np.ndarray]:
    """Score the manches that just ended in slots ``index (n,) int64`` into rows ``local`` of the step's ``result``
    (``rewards``: ``engine.reward_table``, by finishing position): points, the game's end or a decisive manche on a
    tie, and ``PHASE_OVER`` where the game ended. Returns the finishing positions by player ``(n,P)`` and ``(n,)
    bool`` the games over (the others go on: :func:`deal_next`)."""
    p = rules.n_players
    sub_rows = np.arange(index.size)[:, None]
    pos_by_seat = final_positions(rules, state, index)
    players = state.player_at_seat[index].astype(np.int64)
    pos_by_player = np.empty_like(pos_by_seat)
    pos_by_player[sub_rows, players] = pos_by_seat
    result.rewards[local] = rewards[pos_by_player]
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
    state.phase[index[over]] = PHASE_OVER
    return pos_by_player, over


def deal_next(
    rules: Rules, tab: Tables, state: GameState, index: np.ndarray, positions: np.ndarray, card_ids: np.ndarray
) -> None:
    """The next manche of slots ``index (n,) int64`` whose manche ended and whose game goes on: seated by role
    (:func:`seat_for_roles`), dealt by the Trou du cul from the shuffled decks ``card_ids (n,N)`` and set up
    (:func:`start_manche`); ``positions (n,P)``: the finishing positions by player (:func:`score`)."""
    prev_by_seat, dealer = seat_for_roles(rules, tab, state, index, positions)
    _deal(rules, tab, state, index, card_ids, dealer, prev_by_seat)


# --------------------------------------------------------------------------------------
# The end of a manche, compiled per slot
# --------------------------------------------------------------------------------------
SCORE_STATE = (
    "out_rank", "n_normal_out", "n_held", "penalized", "player_at_seat", "scores", "manche", "decisive", "tied",
    "last_positions", "last_winner", "last_scores", "phase",
)  # fmt: skip
"""The ``GameState`` fields the score kernel reads or sets, in its order."""


def compiled_score(
    rules: Rules,
    tab: Tables,
    state: GameState,
    index: np.ndarray,
    local: np.ndarray,
    result: StepResult,
    rewards: np.ndarray,
) -> tuple[np.ndarray, np.ndarray]:
    """:func:`score` by the compiled kernel (only where ``compiled.available()``); the positions come as int64."""
    flags = np.array([rules.n_players, rules.manches], np.int64)
    positions = np.empty((index.size, rules.n_players), np.int64)
    over = np.zeros(index.size, bool)
    _kernels()[0](
        flags, tab.points, rewards, index, np.asarray(local, dtype=np.int64), result.rewards, result.manche_over,
        result.game_over, positions, over, *[getattr(state, f) for f in SCORE_STATE],
    )  # fmt: skip
    return positions, over


DEAL_STATE = (
    "seat_of_player", "player_at_seat", "prev_pos", "dealt_to", "hands", "n_held", "played", "gives_left", "partner",
    "gave", "received", "roles", "leader", "current", "phase", "dealer", "manche_steps", "passed_bits", "holding_bits",
    "out_order", "out_rank", "penalized", "trick_rank", "trick_count", "trick_owner", "revolution", "constrained",
    "n_out", "n_normal_out", "n_penalized",
)  # fmt: skip
"""The ``GameState`` fields the deal kernel sets, in its order."""
_DEAL_ARGS: dict[Rules, tuple] = {}


def compiled_deal_next(
    rules: Rules, tab: Tables, state: GameState, index: np.ndarray, positions: np.ndarray, card_ids: np.ndarray
) -> None:
    """:func:`deal_next` by the compiled kernel (only where ``compiled.available()``)."""
    args = _DEAL_ARGS.get(rules)
    if args is None:
        lead_pos = rules.n_players - 1 if rules.lead == "trou_du_cul" else 0
        flags = np.array([rules.n_players, int(rules.deal_start == "dealer_left"), int(rules.reseat_by_role), lead_pos])
        pairs = np.array(rules.exchange_pairs, np.int64).reshape(-1, 3)
        args = _DEAL_ARGS[rules] = (
            flags.astype(np.int64),
            np.ascontiguousarray(tab.deck_ranks, dtype=np.int64),
            np.ascontiguousarray(tab.seat_by_pos, dtype=np.int64),
            np.ascontiguousarray(tab.role_by_pos, dtype=np.int64),
            pairs,
        )
    positions = np.ascontiguousarray(positions, dtype=np.int64)
    _kernels()[1](*args, index, positions, card_ids, *[getattr(state, f) for f in DEAL_STATE])


@lru_cache(maxsize=1)
def _kernels() -> tuple[Any, Any]:
    """The compiled ``(score, deal)`` kernels (each compiled at its first call in a process, cached on disk)."""
    return jit(_score_kernel), jit(_deal_kernel)


def _score_kernel(
    flags, points, reward_of, slots, rows, rewards, manche_over, game_over, positions, over, out_rank, n_normal_out,
    n_held, penalized, player_at_seat, scores, manche, decisive, tied, last_positions, last_winner, last_scores, phase,
):  # fmt: skip
    """:func:`score`, slot by slot (compiled by :func:`_kernels`; each step follows the NumPy form)."""
    p, manches = flags[0], flags[1]
    for i in range(slots.size):
        s, row = slots[i], rows[i]
        normal = n_normal_out[s]
        for seat in range(p):  # final_positions
            if n_held[s, seat] > 0:
                pos = normal
            elif penalized[s, seat]:
                pos = normal + 1 + out_rank[s, seat]
            else:
                pos = out_rank[s, seat]
            positions[i, player_at_seat[s, seat]] = pos
        was_decisive = decisive[s]
        for player in range(p):
            pos = positions[i, player]
            rewards[row, player] = reward_of[pos]
            if not was_decisive:
                scores[s, player] += points[pos]
            last_positions[s, player] = pos
        manche_over[row] = True
        manche[s] += 1
        best = scores[s, 0]
        for player in range(1, p):
            best = max(best, scores[s, player])
        n_tied = 0
        for player in range(p):
            n_tied += scores[s, player] == best
        last_regular = manche[s] >= manches and not was_decisive
        needs_decider = last_regular and n_tied > 1
        ended = was_decisive or (last_regular and not needs_decider)
        if ended:
            # Winner: the best total, or among the tied players the best placed in the decisive manche.
            winner, best_pos = 0, p + 1
            for player in range(p):
                contender = tied[s, player] if was_decisive else scores[s, player] == best
                if contender and positions[i, player] < best_pos:
                    winner, best_pos = player, positions[i, player]
            last_winner[s] = winner
            last_scores[s] = scores[s]
            phase[s] = PHASE_OVER
        decisive[s] = needs_decider
        if needs_decider:
            for player in range(p):
                tied[s, player] = scores[s, player] == best
        game_over[row] = ended
        over[i] = ended


def _deal_kernel(
    flags, deck_ranks, seat_by_pos, role_by_pos, pairs, slots, positions, card_ids, seat_of_player, player_at_seat,
    prev_pos, dealt_to, hands, n_held, played, gives_left, partner, gave, received, roles, leader, current, phase,
    dealer, manche_steps, passed_bits, holding_bits, out_order, out_rank, penalized, trick_rank, trick_count,
    trick_owner, revolution, constrained, n_out, n_normal_out, n_penalized,
):  # fmt: skip
    """:func:`deal_next`, slot by slot (compiled by :func:`_kernels`; each step follows the NumPy form)."""
    p, dealer_left, reseat, lead_pos = flags[0], flags[1], flags[2], flags[3]
    r = hands.shape[2]
    for i in range(slots.size):
        s = slots[i]
        # seat_for_roles: seated by role, the previous positions by seat; the Trou du cul deals.
        if reseat:
            for player in range(p):
                seat = seat_by_pos[positions[i, player]]
                seat_of_player[s, player] = seat
                player_at_seat[s, seat] = player
        for player in range(p):
            prev_pos[s, seat_of_player[s, player]] = positions[i, player]
        d, lead = 0, 0
        for seat in range(p - 1, -1, -1):  # the first seat with the position, as _first_seat_with
            if prev_pos[s, seat] == p - 1:
                d = seat
            if prev_pos[s, seat] == lead_pos:
                lead = seat
        # _deal: card_ids[i, j] goes to the j-th seat clockwise from the first receiver.
        first = d + 1 if dealer_left else d
        hands[s] = 0
        for j in range(card_ids.shape[1]):
            cid = card_ids[i, j]
            seat = (first + j) % p
            dealt_to[s, cid] = seat
            hands[s, seat, deck_ranks[cid]] += 1
        # start_manche with roles: the automatic half of the exchange, then who acts first.
        gives_left[s] = 0
        partner[s] = -1
        gave[s] = 0
        received[s] = 0
        for m in range(pairs.shape[0]):
            high_pos, low_pos, k = pairs[m, 0], pairs[m, 1], pairs[m, 2]
            high, low = 0, 0
            for seat in range(p - 1, -1, -1):
                if prev_pos[s, seat] == high_pos:
                    high = seat
                if prev_pos[s, seat] == low_pos:
                    low = seat
            above = 0  # the lower-ranked player gives his k best cards: from the strongest rank down
            for rank in range(r - 1, -1, -1):
                held = hands[s, low, rank]
                take = min(max(k - above, 0), held)
                above += held
                hands[s, low, rank] -= take
                hands[s, high, rank] += take
                gave[s, low, rank] = take
                received[s, high, rank] = take
            gives_left[s, high] = k
            partner[s, high] = low
            partner[s, low] = high
        giver, best = -1, p
        for seat in range(p):
            roles[s, seat] = role_by_pos[prev_pos[s, seat]]
            total = 0
            for rank in range(r):
                total += hands[s, seat, rank]
            n_held[s, seat] = total
            if gives_left[s, seat] > 0 and prev_pos[s, seat] < best:  # the Président's pair first
                giver, best = seat, prev_pos[s, seat]
        leader[s] = lead
        if giver >= 0:
            current[s] = giver
            phase[s] = PHASE_EXCHANGE
        else:
            current[s] = lead
            phase[s] = PHASE_PLAY
        dealer[s] = d
        manche_steps[s] = 0
        played[s] = 0
        passed_bits[s] = 0
        holding_bits[s] = (1 << p) - 1
        out_order[s] = -1
        out_rank[s] = -1
        penalized[s] = False
        trick_rank[s] = -1
        trick_count[s] = 0
        trick_owner[s] = -1
        revolution[s] = False
        constrained[s] = False
        n_out[s] = 0
        n_normal_out[s] = 0
        n_penalized[s] = 0
