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

from collections.abc import Sequence
from functools import lru_cache

import numpy as np

from president_env.core.cards import RANK_NAMES, TWO, rank_index
from president_env.core.rules import Rules

PASS = 0
"""The pass action: index 0 of every action space."""
KIND_PASS, KIND_PLAY, KIND_GIVE = 0, 1, 2


def num_actions(rules: Rules) -> int:
    """Size of the action space for ``rules`` (``rules.num_actions``)."""
    return rules.num_actions


def _rank_of_name(rules: Rules, rank: str) -> int:
    """Index of a rank name in ``rules``' deck; anything but a rank name raises ``ValueError``.

    An int is refused rather than read as a rank index: ``rank=7`` would otherwise silently mean a 10
    (index 7 of ``3 4 5 6 7 8 9 10 ...``). Pass ``RANK_NAMES[i]`` for an index ``i``.
    """
    if not isinstance(rank, str):
        raise ValueError(
            f"rank must be a rank name ({', '.join(RANK_NAMES)}; T for 10), got {rank!r} of type "
            f"{type(rank).__name__}; for a rank index i pass president_env.core.cards.RANK_NAMES[i]"
        )
    r = rank_index(rank)
    if r >= rules.n_ranks:
        raise ValueError(f"rank {RANK_NAMES[r]} is not in this deck (jokers=0)")
    return r


def encode_play(rules: Rules, rank: str, count: int) -> int:
    """Action index of playing ``count`` cards of ``rank``, a rank name (``"7"``, ``"10"`` or ``"T"``, ``"JK"`` ...)."""
    r = _rank_of_name(rules, rank)
    if isinstance(count, bool) or not isinstance(count, (int, np.integer)) or not 1 <= count <= rules.max_count:
        raise ValueError(f"count must be an integer from 1 to {rules.max_count}, got {count!r}")
    return 1 + r * rules.max_count + int(count) - 1


def encode_give(rules: Rules, rank: str) -> int:
    """Action index of giving back one card of ``rank`` (a rank name, as for :func:`encode_play`) in the exchange."""
    r = _rank_of_name(rules, rank)
    return 1 + rules.n_ranks * rules.max_count + r


def typed_action(rules: Rules, kind: str, ranks: Sequence[int]) -> int:
    """The action of cards a person typed or picked: ``kind`` ``"play"`` or ``"give"`` and the rank of every card
    (``cards.rank_index``; ``7 7 2`` is ``[4, 4, 12]``). A play is cards of one rank, where with ``twos_wild`` 2s
    may complete one other rank (naturals are played first); a give is one card. ``ValueError`` with a sentence
    for a person when the cards are no action of these rules; whether the action is legal now is the engine's
    (``engine.why_illegal``). The one place where typed cards become an action (``president-play``,
    ``president-web``)."""
    ranks = [int(r) for r in ranks]
    if not ranks:
        raise ValueError(f"{kind} what? name one or more cards")
    if any(r >= rules.n_ranks for r in ranks):
        raise ValueError("there are no jokers in this game")
    if kind == "give":
        if len(ranks) != 1:
            raise ValueError("give back one card at a time")
        return encode_give(rules, RANK_NAMES[ranks[0]])
    if kind != "play":
        raise ValueError(f'kind must be "play" or "give", got {kind!r}')
    others = sorted(set(ranks) - {TWO})
    if not others:
        rank = TWO
    elif len(others) == 1 and (rules.twos_wild or TWO not in ranks):
        rank = others[0]
    else:
        names = " ".join(RANK_NAMES[r] for r in sorted(set(ranks)))
        why = "" if rules.twos_wild else " (2s are not wild in these rules)"
        raise ValueError(f"a play is cards of one rank, not {names}{why}")
    if len(ranks) > rules.max_count:
        raise ValueError(f"a play holds at most {rules.max_count} cards of one rank")
    return encode_play(rules, RANK_NAMES[rank], len(ranks))


def as_action(action, num_actions: int) -> int:
    """``action`` as a plain int: a Python int, a NumPy integer scalar of any dtype, or an integer array of shape
    ``()`` or ``(1,)``. Booleans, floats, strings and other shapes raise ``ValueError``; the range is not checked
    here (the engine says why an out-of-range or illegal action is refused)."""
    if isinstance(action, np.ndarray) and action.shape in ((), (1,)) and action.dtype.kind in "iu":
        return int(action.reshape(()).item())
    if isinstance(action, (int, np.integer)) and not isinstance(action, (bool, np.bool_)):
        return int(action)
    shape = f" of shape {action.shape} and dtype {action.dtype}" if isinstance(action, np.ndarray) else ""
    raise ValueError(
        f"action must be an integer in 0..{num_actions - 1} (an int, a NumPy integer or an integer array of shape "
        f"(1,)), got {action!r}{shape}"
    )


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
