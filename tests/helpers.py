"""Helpers shared by the rules tests: deals, actions in a short notation, scripted play, state snapshots.

Plain functions, imported as ``from helpers import ...``; the fixtures stay in ``conftest.py``.
"""

from __future__ import annotations

import copy
from collections import Counter

import numpy as np

from president_env import PASS, Rules, encode_give, encode_play
from president_env.cards import card_name, deck, parse_card


# ---------------------------------------------------------------- building deals
def H(text: str) -> list[str]:
    """``H("3C 3D 7H KS")`` -> ``["3C", "3D", "7H", "KS"]``."""
    return text.split()


def make_deal(rules: Rules, rest: int, **hands: str) -> list[list[str]]:
    """A whole-deck deal: ``p1="3C 9H"`` etc. fix some hands; every other card goes to player ``rest``.

    Players not named and not ``rest`` must be named (every hand must be non-empty).
    """
    fixed: dict[int, list[str]] = {int(name[1:]): H(text) for name, text in hands.items()}
    remaining = Counter(deck(rules.decks, rules.jokers))
    for cards in fixed.values():
        for card in cards:
            canonical = card_name(*parse_card(card))
            if remaining[canonical] == 0:
                raise ValueError(f"card {card} used twice or not in the deck")
            remaining[canonical] -= 1
    out = []
    for player in range(rules.n_players):
        if player == rest:
            out.append(sorted(remaining.elements(), key=lambda c: parse_card(c)))
        else:
            out.append(fixed[player])
    return out


def deal_in_order(rules: Rules, cards: list[str], dealer: int, seat_of_player: list[int]) -> list[list[str]]:
    """Deal ``cards`` one at a time from ``dealer`` per ``deal_start`` (a regular deal, for ``deal()``)."""
    n = rules.n_players
    first = dealer + 1 if rules.deal_start == "dealer_left" else dealer
    hands: list[list[str]] = [[] for _ in range(n)]
    for i, card in enumerate(cards):
        hands[seat_of_player.index((first + i) % n)].append(card)
    return hands


# ---------------------------------------------------------------- actions
def act(rules: Rules, token: str) -> int:
    """``"pass"``; ``"7"`` one 7; ``"7x2"`` two 7s; ``"JK"``; ``"g7"`` give back one 7."""
    if token == "pass":
        return PASS
    if token.startswith("g"):
        return encode_give(rules, token[1:])
    rank, _, count = token.partition("x")
    return encode_play(rules, rank, int(count) if count else 1)


def acts(rules: Rules, text: str) -> set[int]:
    """Set of actions from space-separated tokens (see :func:`act`)."""
    return {act(rules, token) for token in text.split()}


def legal(game) -> set[int]:
    return {a for a, ok in enumerate(game.legal_mask()) if ok}


def run(game, rules: Rules, script: str):
    """Play ``"1:3 2:pass 3:7x2 ..."``: each token asserts who acts, then steps. Returns the last result."""
    result = None
    for token in script.split():
        player, _, action = token.partition(":")
        assert game.current_player == int(player), f"before {token}: player {game.current_player} to act"
        result = game.step(act(rules, action))
    return result


def counts(rules: Rules, text: str) -> list[int]:
    """Counts per rank of a hand in rank notation: ``"3 3 7 K"``."""
    out = [0] * rules.n_ranks
    for name in text.split():
        out[parse_card(name + "C")[0] if name != "JK" else 13] += 1
    return out


def snapshot(game) -> dict:
    """The public state, for proving that an illegal action changed nothing."""
    names = [
        "current_player",
        "phase",
        "finish_positions",
        "finish_order_so_far",
        "scores",
        "roles",
        "seat_of_player",
        "hands",
        "revolution",
        "done",
        "winner",
        "manche_index",
        "next_dealer",
    ]
    state = {name: copy.deepcopy(getattr(game, name)) for name in names}
    state["legal_mask"] = list(game.legal_mask())
    return state


def swap_hidden_cards(rules: Rules, state):
    """A copy of ``state`` (engine ``GameState``) where the two opponents after the player to act
    swap one card of different ranks, in every slot where they can: the acting player's
    observation is unchanged, the hidden hands are not."""
    other = state.copy()
    p = rules.n_players
    for b in range(state.batch_size):
        first, second = (state.current[b] + 1) % p, (state.current[b] + 2) % p
        pairs = [
            (x, y)
            for x in np.flatnonzero(state.hands[b, first] > 0)
            for y in np.flatnonzero(state.hands[b, second] > 0)
            if x != y
        ]
        if pairs:
            x, y = pairs[0]
            other.hands[b, first, x] -= 1
            other.hands[b, first, y] += 1
            other.hands[b, second, y] -= 1
            other.hands[b, second, x] += 1
    assert (other.hands != state.hands).any(), "no slot has two opponents with cards of different ranks"
    return other
