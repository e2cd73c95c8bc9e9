"""Helpers shared by the rules tests: deals, actions in a short notation, scripted play, state snapshots.

Plain functions, imported as ``from helpers import ...``; the fixtures stay in ``conftest.py``. Test modules
share code through here, never by importing one another.
"""

from __future__ import annotations

import copy
from collections import Counter
from pathlib import Path

import numpy as np
from hypothesis import strategies as st

from president_env import PASS, Rules, encode_give, encode_play
from president_env.core import engine
from president_env.core.cards import card_name, deck, parse_card, rank_index
from president_env.core.observation import layout, observe
from president_env.core.presets import PRESETS, load_preset
from president_env.core.rules import RULE_CHOICES
from president_env.core.vec_game import VecGame

PER_TABLE_CHECKPOINT = Path(__file__).resolve().parents[1] / "results" / "matches" / "ppo-standard-4p" / "policy.pt"
"""A one-table network's checkpoint (a ``PolicyNet`` of the standard table, once shipped as ``ppo-standard-4p``, now
retired; ``results/README.md``): the tests of the checkpoint format and of what runs on any learned policy load it."""


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


# ---------------------------------------------------------------- rule sets
def random_rules(rng: np.random.Generator) -> Rules:
    decks = int(rng.integers(1, 3))
    return Rules(
        n_players=int(rng.integers(3, 9)),
        decks=decks,
        jokers=int(rng.integers(0, 2 * decks + 1)),
        reseat_by_role=bool(rng.integers(2)),
        exchange=tuple(int(k) for k in rng.integers(1, 5, size=rng.integers(0, 5))),
        top_rank_ends_trick=bool(rng.integers(2)),
        revolution=bool(rng.integers(2)),
        twos_wild=bool(rng.integers(2)),
        manches=int(rng.integers(1, 4)),
        **{name: str(rng.choice(values)) for name, values in RULE_CHOICES.items()},
    )


def rule_sets(n_random: int, seed: int) -> list[Rules]:
    """Every preset, ``n_random`` random rule sets, and as many again seated by a draw before the first manche
    (``initial_roles: draw`` with ``reseat_by_role``)."""
    rng = np.random.default_rng(seed)
    mixed = [random_rules(rng) for _ in range(n_random)]
    drawn = [random_rules(rng).replace(initial_roles="draw", reseat_by_role=True) for _ in range(n_random // 2)]
    return [load_preset(name) for name in PRESETS] + mixed + drawn


def uncovered(rule_sets: list[Rules]) -> dict[str, list]:
    """The values of each rules field that :func:`random_rules` can draw and no rule set of ``rule_sets`` has
    (exchange: by its number of roles that give), empty when every value of every field is played."""
    values = {
        "n_players": range(3, 9), "decks": (1, 2), "jokers": range(5), "reseat_by_role": (False, True),
        "exchange": range(5), "top_rank_ends_trick": (False, True), "revolution": (False, True),
        "twos_wild": (False, True), "manches": (1, 2, 3), **RULE_CHOICES,
    }  # fmt: skip
    seen = {name: {len(r.exchange) if name == "exchange" else getattr(r, name) for r in rule_sets} for name in values}
    return {
        name: missing for name, options in values.items() if (missing := [v for v in options if v not in seen[name]])
    }


@st.composite
def rules_strategy(draw) -> Rules:
    """Hypothesis: a random combination of every rules field (the same ranges as :func:`random_rules`)."""
    decks = draw(st.sampled_from([1, 2]))
    fields = {name: draw(st.sampled_from(values)) for name, values in RULE_CHOICES.items()}
    return Rules(
        n_players=draw(st.integers(3, 8)),
        decks=decks,
        jokers=draw(st.integers(0, 2 * decks)),
        reseat_by_role=draw(st.booleans()),
        exchange=tuple(draw(st.lists(st.integers(1, 4), max_size=4))),
        top_rank_ends_trick=draw(st.booleans()),
        revolution=draw(st.booleans()),
        twos_wild=draw(st.booleans()),
        manches=draw(st.integers(1, 3)),
        **fields,
    )


# ---------------------------------------------------------------- positions for the agents
def ranks(text: str, rules: Rules) -> np.ndarray:
    """``"5 5 7"`` -> cards per rank ``(R,)`` (suits do not matter here)."""
    return np.bincount([rank_index(name) for name in text.split()], minlength=rules.n_ranks)


def position(
    rules: Rules,
    hand: str,
    trick: str = "",
    owner: int = 3,
    held: tuple[int, ...] = (10, 10, 10),
    played: str = "",
    passed: tuple[int, ...] = (),
    revolution: bool = False,
) -> tuple[np.ndarray, np.ndarray]:
    """Observation and mask of seat 0 to act holding ``hand`` ("5 5 7"), the trick to beat ``trick``
    ("4" or "9 9", made by seat ``owner``), the other seats holding ``held`` cards."""
    state = engine.allocate(rules, 1)
    cards = ranks(hand, rules)
    state.hands[0, 0] = cards
    state.n_held[0] = (cards.sum(), *held)
    state.holding_bits[0] = sum(1 << s for s in range(rules.n_players) if state.n_held[0, s] > 0)
    state.passed_bits[0] = sum(1 << s for s in passed)
    if played:
        state.played[0, 1] = ranks(played, rules)
    if trick:
        trick_cards = ranks(trick, rules)
        state.trick_rank[0] = int(np.argmax(trick_cards))
        state.trick_count[0] = int(trick_cards.sum())
        state.trick_owner[0] = owner
    state.revolution[0] = revolution
    state.current[0] = 0
    return observe(rules, state), engine.legal_mask(rules, state)


def mid_manche(rules: Rules, batch: int, seed: int, steps: int) -> VecGame:
    game = VecGame(rules, batch, seed=seed)
    rng = np.random.default_rng(seed)
    for _ in range(steps):
        game.step(engine.sample_legal(game.legal_mask(), rng))
    return game


def hidden_card_twins(rules: Rules) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Observations of 12 mid-manche decisions and of the same decisions with other hidden cards (equal), and
    their mask."""
    game = mid_manche(rules, 12, seed=3, steps=25)
    other = swap_hidden_cards(rules, game.state)
    obs, obs_other = observe(rules, game.state), observe(rules, other)
    np.testing.assert_array_equal(obs, obs_other)
    mask = game.legal_mask()
    assert (mask == engine.legal_mask(rules, other)).all()
    return obs, obs_other, mask


# ---------------------------------------------------------------- checkpoints
def tiny_payload(rules: Rules | None = None, seed: int = 0, greedy: bool = True, sharpness: float = 1.0) -> dict:
    """A complete checkpoint payload around a small random network (``sharpness`` scales the policy head)."""
    import torch  # only the tests of learned agents need it

    from president_env.agents.torch_policy import PolicyNet

    rules = rules or Rules()
    torch.manual_seed(seed)
    net = PolicyNet(layout(rules).size, rules.num_actions, hidden=(32,))
    with torch.no_grad():
        net.policy_head.weight.mul_(sharpness)
    optimizer = torch.optim.Adam(net.parameters(), lr=1e-3)
    net(torch.ones(2, net.obs_dim), torch.ones(2, net.num_actions, dtype=torch.bool))[0].sum().backward()
    optimizer.step()
    return {
        "rules": rules.to_dict(),
        "network": net.spec(),
        "model": net.state_dict(),
        "optimizer": optimizer.state_dict(),
        "config": {"lr": 1e-3, "hidden": [32]},
        "rng": {"numpy": np.random.default_rng(seed).bit_generator.state},
        "progress": {"update": 3, "global_step": 3072, "elapsed_s": 1.5},
        "metrics": {"advantage_vs_heuristic-3": 0.25},
        "greedy": greedy,
    }
