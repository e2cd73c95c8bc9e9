"""The human notation of deals and roles: role names and codes, and reading what people type.

The core module between the human notation (``"3C"``, ``"trou_du_cul"``, one list of card strings per player)
and the engine's arrays: :func:`parse_roles` and :func:`parse_deals` validate and convert, :func:`role_by_position`
names the roles of a table. The engine (``engine.new_games``, ``engine.redeal``) calls them; nothing here touches a
game state nor applies a rule (the deal itself, in the notation too, is :mod:`president_env.core.manche`'s).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from president_env.core.cards import deck, validate_deal
from president_env.core.rules import Rules

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


def parse_roles(rules: Rules, roles: Mapping | Sequence) -> np.ndarray:
    """Role names per player -> previous finishing position per player ``(P,) int8``.

    ``roles``: a sequence of role names (player order) or a mapping ``{"player_i": name}`` /
    ``{i: name}`` covering every player; Neutres are then ordered by player index. Or a sequence of
    finishing positions (player order, ints, each of ``0..P-1`` once: 0 the Président, P-1 the Trou du cul),
    which orders the Neutres too: the position a role comes from decides its exchange partner and, with
    ``reseat_by_role``, its seat (a replay records the roles so).
    """
    n = rules.n_players
    if _is_positions(roles):
        positions = [int(x) for x in roles]
        if sorted(positions) != list(range(n)):
            raise ValueError(
                f"roles as finishing positions must give each of 0..{n - 1} to one player, got {positions}"
            )
        return np.array(positions, np.int8)
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


def _is_positions(roles: Mapping | Sequence) -> bool:
    """Whether ``roles`` is a non-empty sequence of ints (finishing positions), not of role names."""
    if isinstance(roles, (Mapping, str, bytes)) or not isinstance(roles, (Sequence, np.ndarray)) or not len(roles):
        return False
    return all(isinstance(x, (int, np.integer)) and not isinstance(x, (bool, np.bool_)) for x in roles)


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


__all__ = [
    "NEUTRE",
    "NO_ROLE",
    "PRESIDENT",
    "ROLE_NAMES",
    "TROU_DU_CUL",
    "VICE_PRESIDENT",
    "VICE_TROU",
    "parse_deals",
    "parse_roles",
    "role_by_position",
]
