"""Dealing cards and reading what people type: card and role strings, shuffled deals, seating by role.

The core module between the human notation (``"3C"``, ``"trou_du_cul"``, one list of card strings per player)
and the engine's arrays: :func:`parse_roles` and :func:`parse_deals` validate and convert, :func:`deal_hands`
shuffles a deal in that notation (tournaments' duplicate deals), :func:`table_for_roles` seats a table by role,
and :func:`deal_sizes` says how many cards each seat receives. The engine (``engine.new_games``,
``engine.redeal``) calls them; nothing here touches a game state.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from .cards import deck, validate_deal
from .rules import Rules

ROLE_NAMES: tuple[str, ...] = ("president", "vice_president", "neutre", "vice_trou", "trou_du_cul")
PRESIDENT, VICE_PRESIDENT, NEUTRE, VICE_TROU, TROU_DU_CUL = range(5)
NO_ROLE = -1


def role_by_position(n_players: int) -> np.ndarray:
    """``(P,) int8`` role code by finishing position (RULES.md "Roles"): Président first, Trou du cul last, the
    vices next to them from 4 players, Neutres between."""
    roles = np.full(n_players, NEUTRE, np.int8)
    roles[0], roles[n_players - 1] = PRESIDENT, TROU_DU_CUL
    if n_players >= 4:
        roles[1], roles[n_players - 2] = VICE_PRESIDENT, VICE_TROU
    return roles


def seat_by_position(n_players: int) -> np.ndarray:
    """``(P,) int64`` seat a player of each finishing position takes with ``reseat_by_role`` (seat 0 Président,
    seat 1 Trou du cul, ..., seat P-1 Vice-Président)."""
    seats = np.zeros(n_players, np.int64)
    seats[1:] = n_players - np.arange(1, n_players)
    return seats


def parse_roles(rules: Rules, roles: Mapping | Sequence) -> np.ndarray:
    """Role names per player -> previous finishing position per player ``(P,) int8``.

    ``roles``: a sequence of role names (player order) or a mapping ``{"player_i": name}`` /
    ``{i: name}`` covering every player. Neutres are ordered by player index.
    """
    n = rules.n_players
    if isinstance(roles, Mapping):
        by_player: dict[int, str] = {}
        for key, name in roles.items():
            index = key
            if isinstance(key, str) and key.startswith("player_") and key[7:].isdigit():
                index = int(key[7:])
            if isinstance(index, bool) or not isinstance(index, (int, np.integer)) or not 0 <= int(index) < n:
                raise ValueError(f"roles: unknown player {key!r}; expected player_0..player_{n - 1}")
            by_player[int(index)] = name
        if len(by_player) != n:
            missing = [f"player_{i}" for i in range(n) if i not in by_player]
            raise ValueError(f"roles must name a role for every player; missing {', '.join(missing)}")
        names = [by_player[i] for i in range(n)]
    else:
        names = list(roles)
        if len(names) != n:
            raise ValueError(f"roles must give one role per player ({n}), got {len(names)}")
    for name in names:
        if name not in ROLE_NAMES:
            raise ValueError(f"roles: unknown role {name!r}; expected one of {', '.join(ROLE_NAMES)}")
    expected = sorted(ROLE_NAMES[c] for c in role_by_position(n))
    if sorted(names) != expected:
        raise ValueError(
            f"roles {names} are not a valid assignment for {n} players: expected exactly {', '.join(expected)}"
        )
    code = np.array([ROLE_NAMES.index(x) for x in names])
    # Président first, vice next, neutres by player index, vice-trou, trou du cul last.
    order = np.lexsort((np.arange(n), code))
    positions = np.empty(n, np.int8)
    positions[order] = np.arange(n)
    return positions


def parse_deals(rules: Rules, deals: Sequence, seat_of_player: np.ndarray | None = None) -> np.ndarray:
    """Validate deals (one list of card strings per player each) -> seat of every card id ``(n,N) int8``."""
    p = rules.n_players
    ids: dict[str, list[int]] = {}
    for cid, card in enumerate(deck(rules.decks, rules.jokers)):
        ids.setdefault(card, []).append(cid)
    dealt_to = np.zeros((len(deals), rules.n_cards), np.int8)
    for i, raw in enumerate(deals):
        hands = validate_deal(raw, p, rules.decks, rules.jokers)
        free = {card: list(v) for card, v in ids.items()}
        for player, hand in enumerate(hands):
            seat = player if seat_of_player is None else seat_of_player[i, player]
            for card in hand:
                dealt_to[i, free[card].pop()] = seat
    return dealt_to


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
    first_seat = int(dealer) + 1 if rules.deal_start == "dealer_left" else int(dealer)
    player_at_seat = [seats.index(seat) for seat in range(p)]
    hands: list[list[str]] = [[] for _ in range(p)]
    for i, index in enumerate(order):
        hands[player_at_seat[(first_seat + i) % p]].append(cards[int(index)])
    return hands


def table_for_roles(rules: Rules, roles: Mapping | Sequence) -> tuple[list[int], int]:
    """The seating and dealer of a manche played with ``roles`` (names by player, as :func:`parse_roles`).

    With ``reseat_by_role`` players sit by role (seat 0 Président, seat 1 Trou du cul, ..., seat P-1
    Vice-Président); otherwise player i sits at seat i. The Trou du cul deals. Returns
    ``(seat_of_player, dealer_seat)``.
    """
    p = rules.n_players
    positions = parse_roles(rules, roles)
    seats = seat_by_position(p)[positions] if rules.reseat_by_role else np.arange(p)
    seat_of_player = [int(s) for s in seats]
    return seat_of_player, seat_of_player[int(np.argmax(positions == p - 1))]


__all__ = [
    "NEUTRE",
    "NO_ROLE",
    "PRESIDENT",
    "ROLE_NAMES",
    "TROU_DU_CUL",
    "VICE_PRESIDENT",
    "VICE_TROU",
    "deal_hands",
    "deal_sizes",
    "parse_deals",
    "parse_roles",
    "role_by_position",
    "seat_by_position",
    "table_for_roles",
]
