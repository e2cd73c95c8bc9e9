"""The rule-based styles: registered by name, legal, batched, and each plays differently from heuristic-3 and from
the other styles, in the way its docstring says."""

from __future__ import annotations

import numpy as np
import pytest

from president_env import agents
from president_env.agents.styles import STYLES, StyleAgent
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
