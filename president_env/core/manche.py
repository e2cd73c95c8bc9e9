"""The manche's start and end, per slot, in loops that Numba compiles.

Everything between two manches lives here: a game's first manche (roles drawn or given, the first dealer), the
deal (who receives the first card, one card at a time clockwise), seating by role, the automatic half of the
exchange and who acts first (:func:`deal`, ``_deal_kernel``); and at a manche's end the finishing positions, the
points, the game's end (a decisive manche on a tie: :func:`score`, ``_score_kernel``). The decisions inside a
manche live in :mod:`president_env.core.trick`; :mod:`president_env.core.engine` is the state machine that calls both,
and draws the shuffled decks (the one random draw of a deal, ``engine._shuffled_decks``).

The deal in the human notation, for tournaments' duplicate deals: :func:`deal_hands`, :func:`deal_sizes`,
:func:`table_for_roles`. Each rule is written once, here; a change of one changes this file and the oracle,
``tests/oracle/reference.py`` (``tests/test_differential.py`` plays both in lockstep).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from functools import lru_cache
from typing import NamedTuple

import numba
import numpy as np

from president_env.core.cards import deck, deck_card_ranks
from president_env.core.compiled import Kernel, jit, run
from president_env.core.deals import NO_ROLE, ROLE_NAMES, parse_roles, role_by_position
from president_env.core.rules import Rules
from president_env.core.state import PHASE_EXCHANGE, PHASE_OVER, PHASE_PLAY, GameState, StepResult


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
# Starting games and manches
# --------------------------------------------------------------------------------------
ShuffledDecks = Callable[[Rules, GameState, np.ndarray, np.random.Generator], np.ndarray]
"""``engine._shuffled_decks``: ``(n, N) int64`` a shuffled deck of card ids for each slot about to be dealt."""


def start_games(
    rules: Rules,
    state: GameState,
    index: np.ndarray,
    rng: np.random.Generator,
    shuffled_decks: ShuffledDecks,
    dealt_to: np.ndarray | None = None,
    start_pos: np.ndarray | None = None,
    dealers: np.ndarray | None = None,
) -> None:
    """Start new games in slots ``index (n,) int64`` (``engine.new_games`` read the input): scores cleared, first
    manche dealt and set up. ``dealt_to (n,N)``: the player holding every card id, else the deck is shuffled;
    ``start_pos (n,P)``: previous finishing positions by player to start from (-1 rows: none); ``dealers (n,)``:
    valid seats of the first dealers, else drawn. Everything is checked before the state changes."""
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
        _check_exchange_fits(rules, index, dealt_to, prev_pos, has_roles)
    # Nothing below raises: the state changes only now.
    state.scores[index] = 0
    state.manche[index] = 0
    state.decisive[index] = False
    state.tied[index] = False
    seats = np.arange(p, dtype=np.int8)
    state.player_at_seat[index] = seats
    state.seat_of_player[index] = seats
    if dealt_to is None:
        deal(rules, state, index, prev_pos, dealer, shuffled_decks(rules, state, index, rng))
    else:
        deal(rules, state, index, prev_pos, dealer, dealt_to, supplied=True)


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
            role = ROLE_NAMES[role_by_position(p)[low_pos]]
            raise ValueError(
                f"deal for slot {int(index[i])}: player_{int(low[i])} ({role}) must give {k} cards in the "
                f"exchange but holds only {int(held[i, low[i]])}"
            )


# --------------------------------------------------------------------------------------
# The kernels: a manche's start (seating, deal, exchange, lead) and its end (scoring, the game's end)
# --------------------------------------------------------------------------------------
class MancheRules(NamedTuple):
    """The rules of a manche's start and end as the kernels read them, by name (:func:`kernel_rules`)."""

    n_players: int
    manches: int  # regular manches in a game
    dealer_left: bool  # deal_start: dealer_left (the dealer's left receives the first card; else the dealer)
    reseat_by_role: bool  # players sit by role in a manche with roles
    lead_pos: int  # the finishing position of the previous manche that leads a manche with roles
    three_of_clubs_leads: bool  # first_lead: three_of_clubs (else the dealer's left leads a manche without roles)
    points: np.ndarray  # (P,) int32: points by finishing position
    deck_ranks: np.ndarray  # (N,) int64: the rank of each card id of cards.deck()
    seat_by_pos: np.ndarray  # (P,) int64: the seat a player of each finishing position takes with reseat_by_role
    role_by_pos: np.ndarray  # (P,) int64: the role code of each finishing position
    exchange_pairs: np.ndarray  # (k, 3) int64: (high position, low position, cards) of each exchange pair
    three_of_clubs: np.ndarray  # (decks,) int64: the card ids of the 3C


@lru_cache(maxsize=64)
def kernel_rules(rules: Rules) -> MancheRules:
    """The manche's rules and tables as the kernels take them."""
    return MancheRules(
        n_players=rules.n_players,
        manches=rules.manches,
        dealer_left=rules.deal_start == "dealer_left",
        reseat_by_role=rules.reseat_by_role,
        lead_pos=rules.n_players - 1 if rules.lead == "trou_du_cul" else 0,
        three_of_clubs_leads=rules.first_lead == "three_of_clubs",
        points=points_by_position(rules),
        deck_ranks=deck_card_ranks(rules.decks, rules.jokers).astype(np.int64),
        seat_by_pos=seat_by_position(rules.n_players),
        role_by_pos=role_by_position(rules.n_players).astype(np.int64),
        exchange_pairs=np.array(rules.exchange_pairs, np.int64).reshape(-1, 3),
        three_of_clubs=np.arange(rules.decks, dtype=np.int64) * 52,
    )


def score(
    rules: Rules, state: GameState, index: np.ndarray, local: np.ndarray, result: StepResult, rewards: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Score the manches that just ended in slots ``index (n,) int64`` into rows ``local`` of the step's ``result``
    (``rewards``: ``engine.reward_table``, by finishing position): points, the game's end or a decisive manche on a
    tie, and ``PHASE_OVER`` where the game ended. Returns the finishing positions by player ``(n,P) int64`` and
    ``(n,) bool`` the games over (the others go on: :func:`deal`)."""
    positions = np.empty((index.size, rules.n_players), np.int64)
    over = np.zeros(index.size, bool)
    local = np.asarray(local, dtype=np.int64)
    run(_kernels()[0], index.size, kernel_rules(rules), state, index, local, rewards, result, positions, over)
    return positions, over


def deal(
    rules: Rules,
    state: GameState,
    index: np.ndarray,
    positions: np.ndarray,
    dealers: np.ndarray,
    cards: np.ndarray,
    supplied: bool = False,
) -> None:
    """Set up a manche in slots ``index (n,) int64``: seated by role, dealt, the automatic half of the exchange made,
    and who acts first.

    ``positions (n,P)``: the previous manche's finishing positions by player (-1 rows: a manche without roles).
    With roles, players sit by role under ``reseat_by_role`` and the Trou du cul deals; without, ``dealers (n,)``
    deal. ``cards (n,N)``: a shuffled deck of card ids dealt one card at a time clockwise from the first receiver
    (``engine._shuffled_decks``), or with ``supplied`` the player holding each card id."""
    run(
        _kernels()[1], index.size, kernel_rules(rules), state, index, np.ascontiguousarray(positions, dtype=np.int64),
        np.ascontiguousarray(dealers, dtype=np.int64), np.ascontiguousarray(cards, dtype=np.int64), supplied,
    )  # fmt: skip


@lru_cache(maxsize=1)
def _kernels() -> tuple[Kernel, Kernel]:
    """The compiled ``(score, deal)`` kernels (each compiled at its first call in a process, cached on disk)."""
    return jit(_score_kernel), jit(_deal_kernel)


def _score_kernel(m, state, slots, rows, reward_of, result, positions, over):
    """:func:`score`, slot by slot (compiled by :func:`_kernels`; ``m``: :class:`MancheRules`)."""
    p = m.n_players
    # The arrays written in the loop, bound by name first: Numba's threaded loop drops writes made through a
    # named tuple's field (numba 0.68: reads work, writes are lost).
    decisive = state.decisive
    last_positions = state.last_positions
    last_scores = state.last_scores
    last_winner = state.last_winner
    manche = state.manche
    n_held = state.n_held
    n_normal_out = state.n_normal_out
    out_rank = state.out_rank
    penalized = state.penalized
    phase = state.phase
    player_at_seat = state.player_at_seat
    scores = state.scores
    tied = state.tied
    result_game_over = result.game_over
    result_manche_over = result.manche_over
    result_rewards = result.rewards
    for i in numba.prange(slots.size):  # each slot alone: the same results on any number of threads
        s, row = slots[i], rows[i]
        normal = n_normal_out[s]
        for seat in range(p):  # the final positions: normal finishers, the last holder, offenders
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
            result_rewards[row, player] = reward_of[pos]
            if not was_decisive:
                scores[s, player] += m.points[pos]
            last_positions[s, player] = pos
        result_manche_over[row] = True
        manche[s] += 1
        best = scores[s, 0]
        for player in range(1, p):
            best = max(best, scores[s, player])
        n_tied = 0
        for player in range(p):
            n_tied += scores[s, player] == best
        last_regular = manche[s] >= m.manches and not was_decisive
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
        result_game_over[row] = ended
        over[i] = ended


def _deal_kernel(m, state, slots, positions, dealers, cards, supplied):
    """:func:`deal`, slot by slot (compiled by :func:`_kernels`; ``m``: :class:`MancheRules`)."""
    p = m.n_players
    r = state.hands.shape[2]
    # The arrays written in the loop, bound by name first: Numba's threaded loop drops writes made through a
    # named tuple's field (numba 0.68: reads work, writes are lost).
    constrained = state.constrained
    current = state.current
    dealer = state.dealer
    dealt_to = state.dealt_to
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
    player_at_seat = state.player_at_seat
    prev_pos = state.prev_pos
    received = state.received
    revolution = state.revolution
    roles = state.roles
    seat_of_player = state.seat_of_player
    trick_count = state.trick_count
    trick_owner = state.trick_owner
    trick_rank = state.trick_rank
    for i in numba.prange(slots.size):  # each slot alone: the same results on any number of threads
        s = slots[i]
        has_roles = positions[i, 0] >= 0
        # Seated by role, the previous positions by seat; the Trou du cul deals.
        if has_roles and m.reseat_by_role:
            for player in range(p):
                seat = m.seat_by_pos[positions[i, player]]
                seat_of_player[s, player] = seat
                player_at_seat[s, seat] = player
        d, lead = dealers[i], 0
        for player in range(p):
            prev_pos[s, seat_of_player[s, player]] = positions[i, player]
        for seat in range(p - 1, -1, -1):  # the first seat with the position
            if has_roles and prev_pos[s, seat] == p - 1:
                d = seat
            if prev_pos[s, seat] == m.lead_pos:
                lead = seat
        # The deal: cards[i, j] goes to the j-th seat clockwise from the first receiver (or, supplied, the seat of
        # the player holding card id j).
        first = d + 1 if m.dealer_left else d
        hands[s] = 0
        for j in range(cards.shape[1]):
            if supplied:
                cid, seat = j, seat_of_player[s, cards[i, j]]
            else:
                cid, seat = cards[i, j], (first + j) % p
            dealt_to[s, cid] = seat
            hands[s, seat, m.deck_ranks[cid]] += 1
        # The automatic half of the exchange: each lower-ranked player gives his k best cards to his partner.
        gives_left[s] = 0
        partner[s] = -1
        gave[s] = 0
        received[s] = 0
        for pair in range(m.exchange_pairs.shape[0] if has_roles else 0):
            high_pos, low_pos, k = m.exchange_pairs[pair, 0], m.exchange_pairs[pair, 1], m.exchange_pairs[pair, 2]
            high, low = 0, 0
            for seat in range(p - 1, -1, -1):
                if prev_pos[s, seat] == high_pos:
                    high = seat
                if prev_pos[s, seat] == low_pos:
                    low = seat
            above = 0  # from the strongest rank down
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
        # Who leads: by role; without roles the first holder of a 3C clockwise after the dealer (the dealer last),
        # or the dealer's left.
        if not has_roles:
            lead = (d + 1) % p
            if m.three_of_clubs_leads:
                for step in range(1, p + 1):
                    seat = (d + step) % p
                    holds = False
                    for cid in m.three_of_clubs:
                        holds = holds or dealt_to[s, cid] == seat
                    if holds:
                        lead = seat
                        break
        giver, best = -1, p
        for seat in range(p):
            roles[s, seat] = m.role_by_pos[prev_pos[s, seat]] if prev_pos[s, seat] >= 0 else NO_ROLE
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
        # Every seat is dealt cards; one whose whole hand went in the exchange gets as many back before the lead.
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
