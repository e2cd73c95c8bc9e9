"""``agent.explain``: the decision equals ``act``'s, and the numbers are over the legal moves."""

from __future__ import annotations

import numpy as np
import pytest

import president_env as pe
from president_env import agents


def decisions(n: int = 12):
    """Observations (with their info) met in a game of heuristic-2 players."""
    env = pe.env(rules=pe.Rules())
    env.reset(seed=3)
    player = agents.make("heuristic-2", pe.Rules())
    out = []
    for _ in range(n):
        observation, _, _, _, info = env.last()
        out.append((observation, info))
        env.step(player.act(observation, info))
    return out


@pytest.mark.parametrize("name", agents.names())
def test_explain_decides_as_act_and_weighs_the_legal_moves(name):
    rules = pe.Rules()
    if "ppo" in name:
        pytest.importorskip("torch")
    explaining, acting = agents.make(name, rules, seed=5), agents.make(name, rules, seed=5)
    for observation, info in decisions(3 if name.startswith("mc") else 12):
        explained = explaining.explain(observation, info)
        assert explained["action"] == acting.act(observation, info)
        legal = set(np.flatnonzero(observation["action_mask"]).tolist())
        values = explained["values"]
        assert explained["action"] in legal
        if name.startswith("mc") and len(legal) == 1:
            assert values == {}  # one move: nothing searched
            continue
        if name in agents.SEARCH_AGENTS and explained["measure"] == "mean points":
            assert explained["action"] in values and set(values) <= legal  # the policy's candidates, searched
        else:
            assert set(values) == legal
        if explained["measure"] == "probability":
            assert sum(values.values()) == pytest.approx(1.0)
        elif explained["measure"] == "mean points":
            assert all(0 <= v <= rules.n_players - 1 for v in values.values())
        else:
            assert values[explained["action"]] == min(values.values())  # heuristics play the cheapest
