"""The action space: one fixed ``Discrete(num_actions)`` per rules object.

Layout (``R`` ranks, ``C = 4 * decks`` the largest play):

========================  =====================================
index                     meaning
========================  =====================================
``0``                     ``PASS``
``1 + r*C + (k-1)``       play ``k`` cards of rank ``r`` (k = 1..C)
``1 + R*C + r``           exchange phase: give back one card of rank ``r``
========================  =====================================

Rank ``r`` indexes ``3 4 5 6 7 8 9 10 J Q K A 2 JK`` (0..13). Most plays are
illegal at any moment; the legal mask says which.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from .cards import RANK_NAMES, rank_index
from .rules import Rules

PASS = 0
KIND_PASS, KIND_PLAY, KIND_GIVE = 0, 1, 2


def num_actions(rules: Rules) -> int:
    return rules.num_actions


def encode_play(rules: Rules, rank: str | int, count: int) -> int:
    """Action index of playing ``count`` cards of ``rank`` (``"7"``, ``"10"``, ``"JK"`` ...)."""
    r = rank_index(rank)
    if r >= rules.n_ranks:
        raise ValueError(f"rank {RANK_NAMES[r]} is not in this deck (jokers=0)")
    if isinstance(count, bool) or not isinstance(count, (int, np.integer)) or not 1 <= count <= rules.max_count:
        raise ValueError(f"count must be an integer from 1 to {rules.max_count}, got {count!r}")
    return 1 + r * rules.max_count + int(count) - 1


def encode_give(rules: Rules, rank: str | int) -> int:
    """Action index of giving back one card of ``rank`` in the exchange phase."""
    r = rank_index(rank)
    if r >= rules.n_ranks:
        raise ValueError(f"rank {RANK_NAMES[r]} is not in this deck (jokers=0)")
    return 1 + rules.n_ranks * rules.max_count + r


def decode(rules: Rules, action: int) -> tuple:
    """``("pass",)``, ``("play", rank_name, count)`` or ``("give", rank_name)``."""
    if isinstance(action, bool) or not isinstance(action, (int, np.integer)):
        raise ValueError(f"action must be an integer, got {action!r}")
    a = int(action)
    if not 0 <= a < rules.num_actions:
        raise ValueError(f"action {a} out of range 0..{rules.num_actions - 1}")
    kind, rank, count = (int(x[a]) for x in action_tables(rules))
    if kind == KIND_PASS:
        return ("pass",)
    if kind == KIND_PLAY:
        return ("play", RANK_NAMES[rank], count)
    return ("give", RANK_NAMES[rank])


@lru_cache(maxsize=64)
def action_tables(rules: Rules) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(kind, rank, count)`` of every action, each ``(num_actions,) int8``; rank -1 and count 0 for pass."""
    n_ranks, max_count = rules.n_ranks, rules.max_count
    kind = np.zeros(rules.num_actions, dtype=np.int8)
    rank = np.full(rules.num_actions, -1, dtype=np.int8)
    count = np.zeros(rules.num_actions, dtype=np.int8)
    plays = slice(1, 1 + n_ranks * max_count)
    kind[plays] = KIND_PLAY
    rank[plays] = np.repeat(np.arange(n_ranks), max_count)
    count[plays] = np.tile(np.arange(1, max_count + 1), n_ranks)
    gives = slice(1 + n_ranks * max_count, None)
    kind[gives] = KIND_GIVE
    rank[gives] = np.arange(n_ranks)
    count[gives] = 1
    for table in (kind, rank, count):
        table.flags.writeable = False
    return kind, rank, count


def action_name(rules: Rules, action: int) -> str:
    """Short human text: ``"pass"``, ``"play 7 7"``, ``"give 3"``."""
    decoded = decode(rules, action)
    if decoded[0] == "play":
        return "play " + " ".join([decoded[1]] * decoded[2])
    return " ".join(map(str, decoded))
