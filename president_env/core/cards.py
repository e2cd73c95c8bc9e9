"""Cards: ranks, suits, the human notation and its parsing.

Ranks are integers, weakest first in the normal order:
``3 4 5 6 7 8 9 10 J Q K A 2`` are ``0..12`` and the joker ``JK`` is ``13``.
Suits matter only for the 3 of clubs (first lead) and for display, so the
engine stores hands as counts per rank; a card's identity as a string is
``rank + suit`` (``"10H"``, ``"QS"``), ``"JK"`` for a joker, ``T`` accepted for 10.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from functools import lru_cache

import numpy as np

RANK_NAMES: tuple[str, ...] = ("3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K", "A", "2", "JK")
SUITS: tuple[str, ...] = ("C", "D", "H", "S")
SUIT_SYMBOLS: dict[str, str] = {"C": "♣", "D": "♦", "H": "♥", "S": "♠"}
TWO = 12
JOKER = 13
THREE = 0
N_NATURAL_RANKS = 13

_RANK_INDEX = {name: i for i, name in enumerate(RANK_NAMES)}
_RANK_INDEX["T"] = _RANK_INDEX["10"]


def rank_index(name: str | int) -> int:
    """Index of a rank given by name (``"7"``, ``"10"``/``"T"``, ``"J"``, ``"2"``, ``"JK"``)."""
    if isinstance(name, (int, np.integer)) and not isinstance(name, bool):
        if 0 <= int(name) <= JOKER:
            return int(name)
        raise ValueError(f"rank index {name} out of range 0..{JOKER}")
    key = str(name).strip().upper()
    if key not in _RANK_INDEX:
        raise ValueError(f"unknown rank {name!r}: expected one of {', '.join(RANK_NAMES)} (T for 10)")
    return _RANK_INDEX[key]


def parse_card(card: str) -> tuple[int, str]:
    """``"10H"`` -> ``(7, "H")``; ``"JK"`` -> ``(13, "")``. Raises ``ValueError`` on bad input."""
    if not isinstance(card, str):
        raise ValueError(f"card must be a string like '7H' or 'JK', got {card!r}")
    text = card.strip().upper()
    if text == "JK":
        return JOKER, ""
    if len(text) < 2 or text[-1] not in SUITS:
        raise ValueError(f"bad card {card!r}: expected rank + suit letter (C D H S), e.g. '10H', or 'JK'")
    rank = text[:-1]
    if rank not in _RANK_INDEX or rank == "JK":
        raise ValueError(f"bad card {card!r}: unknown rank {rank!r}")
    return _RANK_INDEX[rank], text[-1]


def card_name(rank: int, suit: str = "") -> str:
    return "JK" if rank == JOKER else RANK_NAMES[rank] + suit


def deck(decks: int = 1, jokers: int = 0) -> list[str]:
    """The full deck as card strings, deck by deck, rank by rank, suits C D H S."""
    cards = [card_name(r, s) for _ in range(decks) for r in range(N_NATURAL_RANKS) for s in SUITS]
    return cards + ["JK"] * jokers


def deck_card_ranks(decks: int = 1, jokers: int = 0) -> np.ndarray:
    """Rank of each card of :func:`deck`, ``(N,) int8``."""
    return np.array([parse_card(c)[0] for c in deck(decks, jokers)], dtype=np.int8)


def hand_counts(cards: Iterable[str], n_ranks: int) -> np.ndarray:
    """Counts per rank of a list of cards, ``(n_ranks,) int8``."""
    counts = np.zeros(n_ranks, dtype=np.int8)
    for card in cards:
        rank, _ = parse_card(card)
        if rank >= n_ranks:
            raise ValueError(f"card {card!r} is not in this deck (no jokers)")
        counts[rank] += 1
    return counts


def validate_deal(hands: Sequence[Sequence[str]], n_players: int, decks: int, jokers: int) -> list[list[str]]:
    """Check that ``hands`` is a deal: one non-empty hand per player, together exactly the deck.

    Returns the hands normalised to canonical card strings. Raises ``ValueError`` naming the problem.
    """
    if isinstance(hands, (str, bytes)) or not isinstance(hands, Sequence):
        raise ValueError("deal must be a list of hands, one list of card strings per player")
    if len(hands) != n_players:
        raise ValueError(f"deal has {len(hands)} hands, expected one per player ({n_players})")
    normalised: list[list[str]] = []
    for i, hand in enumerate(hands):
        if isinstance(hand, (str, bytes)) or not isinstance(hand, Sequence):
            raise ValueError(f"deal: hand {i} must be a list of card strings, got {type(hand).__name__}")
        if len(hand) == 0:
            raise ValueError(f"deal: hand {i} is empty; every player must hold at least one card")
        try:
            normalised.append([card_name(*parse_card(c)) for c in hand])
        except ValueError as err:
            raise ValueError(f"deal: hand {i}: {err}") from None
    have = Counter(c for hand in normalised for c in hand)
    want = Counter(deck(decks, jokers))
    if have != want:
        missing = sorted((want - have).elements())
        extra = sorted((have - want).elements())
        parts = []
        if missing:
            parts.append(f"missing {' '.join(missing)}")
        if extra:
            parts.append(f"not in the deck or too many copies: {' '.join(extra)}")
        raise ValueError(f"deal is not exactly the deck of {decks} deck(s) and {jokers} joker(s): " + "; ".join(parts))
    return normalised


def format_cards(counts: Sequence[int]) -> str:
    """Human text for counts per rank, weakest first: ``"3 3 7 K 2"``."""
    out = []
    for rank, n in enumerate(counts):
        out.extend([RANK_NAMES[rank]] * int(n))
    return " ".join(out)


@lru_cache(maxsize=256)
def card_sort_key(card: str) -> tuple[int, int]:
    """Weakest first in the normal order, then suits C D H S."""
    rank, suit = parse_card(card)
    return rank, SUITS.index(suit) if suit else 0


def sort_cards(cards: Sequence[str]) -> list[str]:
    """The cards weakest first (:func:`card_sort_key`)."""
    return sorted(cards, key=card_sort_key)


@lru_cache(maxsize=256)
def card_rank(card: str) -> int:
    """The rank of a card's text (``"10H"`` -> 7), cached."""
    return parse_card(card)[0]
