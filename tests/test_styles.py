"""The rule-based styles: registered by name, legal, batched, and each plays differently from heuristic-3 and from
the other styles, in the way its docstring says."""

from __future__ import annotations

import numpy as np
import pytest

from president_env import agents
from president_env.agents.styles import DRAWN_STYLE, HELD_OUT_STYLES, STYLES, DrawnStyleAgent, StyleAgent
from president_env.core.actions import KIND_PASS, action_tables
from president_env.core.engine import tables
from president_env.core.rules import Rules
from president_env.core.vec_game import VecGame

RULES = Rules(manches=2)


@pytest.fixture(scope="module")
def decisions() -> dict[str, np.ndarray]:
    """Every style's and heuristic-3's decision at the same positions (heuristic-3 plays the games), and the
    positions' masks."""
    game = VecGame(RULES, batch_size=64, seed=7)
    deciders = {name: agents.make(name, RULES) for name in ["heuristic-3", *STYLES]}
    chosen: dict[str, list[np.ndarray]] = {name: [] for name in deciders}
    masks = []
    for _ in range(60):
        obs, mask = game.observe(), game.legal_mask()
        masks.append(mask)
        for name, agent in deciders.items():
            chosen[name].append(agent.act_batch(obs, mask))
        game.step(chosen["heuristic-3"][-1])
    return {"mask": np.concatenate(masks), **{k: np.concatenate(v) for k, v in chosen.items()}}


def test_styles_are_registered_and_play_legal_actions(decisions):
    rows = np.arange(len(decisions["mask"]))
    for name in STYLES:
        assert name in agents.names()
        assert isinstance(agents.make(name, RULES), StyleAgent)
        assert decisions["mask"][rows, decisions[name]].all()


def test_each_style_differs_from_heuristic_3_and_from_the_other_styles(decisions):
    free = decisions["mask"].sum(axis=1) > 1  # positions with a choice
    names = ["heuristic-3", *STYLES]
    for i, a in enumerate(names):
        for b in names[i + 1 :]:
            differ = (decisions[a] != decisions[b])[free].mean()
            assert differ > 0.1, f"{a} and {b} decide alike at {1 - differ:.0%} of the positions with a choice"


def test_each_style_has_its_habit(decisions):
    kind, rank, count = action_tables(RULES)
    strength = tables(RULES).strength[0]
    can_pass = decisions["mask"][:, 0] & (decisions["mask"].sum(axis=1) > 1)

    def passes(name):
        return (kind[decisions[name]] == KIND_PASS)[can_pass].mean()

    def played_strength(name):
        plays = kind[decisions[name]] != KIND_PASS
        return strength[rank[decisions[name]][plays]].mean()

    def lead_cards(name):
        leading = ~decisions["mask"][:, 0] & (decisions["mask"].sum(axis=1) > 1)
        return count[decisions[name]][leading].mean()

    assert passes("style-hoarder") > passes("style-patient") > passes("heuristic-3")
    assert passes("style-dumper") == 0.0
    assert played_strength("style-dumper") > played_strength("heuristic-3") > played_strength("style-hoarder")
    assert played_strength("style-controller") > played_strength("heuristic-3") + 0.5  # spends its masters early
    assert lead_cards("style-shedder") > lead_cards("heuristic-3") + 0.1  # leads its largest groups


def test_an_unknown_style_is_refused():
    with pytest.raises(ValueError, match="unknown style 'style-x'"):
        StyleAgent(RULES, "style-x")


def test_a_drawn_style_is_one_style_per_seed_and_plays_legal_actions():
    same = [agents.make(DRAWN_STYLE, RULES, seed=3).weights for _ in range(2)]
    assert same[0] == same[1]  # the seed fixes the style
    drawn = [agents.make(DRAWN_STYLE, RULES, seed=s).weights for s in range(200)]
    assert len({w.step for w in drawn}) == 200 and all(1 <= w.step <= 8 for w in drawn)
    for field in ("group", "break_", "match", "keep_top", "block"):
        values = np.array([getattr(w, field) for w in drawn])
        assert 0.3 < (values == 0).mean() < 0.7 and values.max() <= 1000 and values[values > 0].min() >= 1, field
    assert all(w.control <= 0 and 1 <= w.control_groups <= 8 and 10 <= w.pass_ <= 1e6 for w in drawn)
    assert all(w.card_counting for w in drawn)  # heuristic-3's card counting under every drawn style
    game = VecGame(RULES, batch_size=64, seed=7)
    styles = [DrawnStyleAgent(RULES, seed=np.random.SeedSequence(s)) for s in range(4)]
    obs, mask = game.observe(), game.legal_mask()
    choices = [style.act_batch(obs, mask) for style in styles]
    assert all(mask[np.arange(64), c].all() for c in choices)
    assert DRAWN_STYLE in agents.names() and DRAWN_STYLE not in HELD_OUT_STYLES


def test_drawn_styles_differ_from_one_another():
    game = VecGame(RULES, batch_size=64, seed=7)
    a, b = (agents.make(DRAWN_STYLE, RULES, seed=s) for s in (1, 2))
    differ = []
    for _ in range(60):
        obs, mask = game.observe(), game.legal_mask()
        choice_a, choice_b = a.act_batch(obs, mask), b.act_batch(obs, mask)
        differ.append((choice_a != choice_b)[mask.sum(axis=1) > 1])
        game.step(choice_a)
    assert np.concatenate(differ).mean() > 0.1  # at the positions with a choice
