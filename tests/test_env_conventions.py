"""The envs agree with one another and with Gymnasium's conventions: legal sampling in the vector env, the game's
result in the infos, reset options refused by name, nothing after ``close()``, the SB3 adapter's options, and the
documented rule of a short tournament lineup."""

from __future__ import annotations

import pickle
from pathlib import Path

import numpy as np
import pytest

import president_env as pe
from president_env.evaluation.tournament import evaluate
from president_env.game.single import match_positions

DOCS = Path(__file__).resolve().parents[1] / "docs"


# ---------------------------------------------------------------------------- legal sampling
def test_vector_env_action_space_samples_legal_actions_like_the_single_env():
    venv = pe.vector_env(32, rules="standard", illegal_action="raise")
    venv.reset(seed=0)
    for _ in range(300):  # through manche and game ends: every sample is legal, so "raise" never raises
        actions = venv.action_space.sample()
        mask = venv.action_masks()
        playing = mask.any(axis=1)
        assert mask[np.arange(32), actions][playing].all()
        assert venv.action_space.contains(actions)
        venv.step(actions)
    single = pe.gym_env(illegal_action="raise")
    single.reset(seed=0)
    assert single.action_masks()[single.action_space.sample()]


def test_vector_env_sampling_keeps_an_explicit_mask_and_survives_pickling():
    venv = pe.vector_env(4, illegal_action="raise")
    assert venv.action_space.sample().shape == (4,)  # before reset: the whole space
    venv.reset(seed=1)
    only = tuple(np.eye(venv.num_actions, dtype=np.int8)[[5, 6, 7, 8]])
    assert venv.action_space.sample(mask=only).tolist() == [5, 6, 7, 8]
    copy = pickle.loads(pickle.dumps(venv))
    for _ in range(20):
        copy.step(copy.action_space.sample())


# ---------------------------------------------------------------------------- the game's result
def test_match_positions_put_the_winner_first_and_share_equal_totals():
    assert match_positions([3, 9, 5, 5], winner=1) == [3, 0, 1, 1]
    assert match_positions([7, 7, 2, 4], winner=1) == [1, 0, 3, 2]  # the tie for first lost in the decisive manche
    assert match_positions([7, 7, 7, 0], winner=2) == [1, 1, 0, 3]


def test_aec_infos_give_the_games_result_as_match_position():
    rules = pe.Rules(manches=3)
    for schema in ("rich", "numeric"):
        env = pe.env(rules=rules, info_schema=schema)
        env.reset(seed=4)
        rng = np.random.default_rng(0)
        final = {}
        for agent in env.agent_iter():
            obs, _, termination, truncation, info = env.last()
            if schema == "numeric" and not termination:
                assert info["match_position"] == -1
            if schema == "rich" and not termination:
                assert "match_position" not in info
            if termination or truncation:
                final[agent] = info
                env.step(None)
            else:
                env.step(int(rng.choice(np.flatnonzero(obs["action_mask"]))))
        agents = sorted(final)
        scores = [final[a]["scores"][a] if schema == "rich" else final[a]["scores"][i] for i, a in enumerate(agents)]
        winner = final[agents[0]]["winner"]
        winner = agents.index(winner) if schema == "rich" else winner
        assert [final[a]["match_position"] for a in agents] == match_positions(scores, winner)
        assert final[agents[winner]]["match_position"] == 0


def test_gym_single_env_terminal_info_has_the_match_position():
    env = pe.gym_env(opponents="random", seat=2)
    obs, info = env.reset(seed=3)
    terminated = False
    while not terminated:
        obs, _, terminated, _, info = env.step(env.action_space.sample())
    scores = [info["scores"][f"player_{i}"] for i in range(4)]
    assert info["match_position"] == match_positions(scores, int(info["winner"][7:]))[2]


def test_scores_types_are_the_documented_ones():
    env = pe.env()
    env.reset(seed=0)
    assert isinstance(env.infos["player_0"]["scores"], dict)
    env = pe.env(info_schema="numeric")
    env.reset(seed=0)
    assert env.infos["player_0"]["scores"].shape == (4,)
    venv = pe.vector_env(3)
    assert venv.reset(seed=0)[1]["scores"].shape == (3, 4)
    text = (DOCS / "environment.md").read_text()
    assert "`scores` is a dict keyed by agent name" in text and "`match_position`" in text


# ---------------------------------------------------------------------------- reset options and close
def test_unknown_reset_options_are_refused_by_name_and_change_nothing():
    env = pe.gym_env(seat=0)  # (the AEC env warns: PettingZoo's api_test resets with options={"options": 1})
    env.reset(seed=5)
    game = env.unwrapped.game
    before = (game.record.deals, game.current)
    with pytest.raises(ValueError, match=r"unknown option\(s\) 'deals'; known: deal, roles, dealer"):
        env.reset(seed=6, options={"deals": [[]]})
    assert (game.record.deals, game.current) == before


def test_nothing_runs_after_close():
    for env, action in ((pe.vector_env(2), np.zeros(2, np.int64)), (pe.gym_env(), 0)):
        env.reset(seed=0)
        env.close()
        with pytest.raises(RuntimeError, match=r"reset\(\) after close\(\)"):
            env.reset(seed=0)
        with pytest.raises(RuntimeError, match=r"step\(\) after close\(\)"):
            env.step(action)


def test_sb3_options_are_checked_and_equal_per_env_options_honoured():
    sb3 = pytest.importorskip("president_env.envs.sb3")
    env = sb3.PresidentSB3VecEnv(num_envs=3)
    for bad, message in (
        (42, "options must be None, a dict .* got 42"),
        ("seats", "options must be None, a dict"),
        ([{}, {}], "got a list of 2"),
        ({"seat": 1}, r"unknown option\(s\) 'seat'"),
        ([{"seats": [0, 1, 2]}, {}, {}], "per-env options that differ"),
    ):
        with pytest.raises(ValueError, match=message):
            env.set_options(bad)
    env.set_options([{"seats": [2, 1, 0]}] * 3)
    env.reset()
    assert env.venv.learner.tolist() == [2, 1, 0]
    env.close()
    with pytest.raises(RuntimeError, match="after close"):
        env.reset()


# ---------------------------------------------------------------------------- a short tournament lineup
def test_a_short_lineup_is_repeated_around_the_table_by_a_documented_rule():
    result = evaluate(["heuristic-1", "random"], "standard", n_deals=1, progress=False)
    assert result.config["lineup"] == ["heuristic-1", "random", "heuristic-1", "random"]
    assert "repeated around the table" in evaluate.__doc__
    assert "repeated around the table" in (DOCS / "baselines.md").read_text()
