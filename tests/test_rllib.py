"""RLlib multi-agent PPO on the PettingZoo env: training runs, masks hold, the adapter plays tournaments.

Needs the ``rllib`` extra; starts a local Ray instance with 2 CPUs for the module. Deselect with
``-m "not slow"`` (or ``not ray``).
"""

from __future__ import annotations

import math

import numpy as np
import pytest

pytest.importorskip("ray.rllib")

import torch  # noqa: E402
from ray.rllib.core.columns import Columns  # noqa: E402

import president_env as pe  # noqa: E402
from president_env.evaluation.tournament import evaluate  # noqa: E402
from president_env.training.rllib_ppo import (  # noqa: E402
    SHARED_POLICY,
    RLlibAgent,
    make_env,
    ppo_config,
)

pytestmark = [pytest.mark.ray, pytest.mark.rllib, pytest.mark.slow]  # marked ray: one Ray at a time

# Small enough for a 2-core machine: each iteration samples ~5 games and takes one SGD pass.
# One manche per episode: two small training iterations then end several episodes (a 5-manche match would not).
ONE_MANCHE = pe.Rules(manches=1)
SMALL = dict(train_batch_size=400, minibatch_size=200, num_epochs=1, num_envs_per_env_runner=4, hidden=(64, 64))


@pytest.fixture(scope="module")
def one_thread_ray(local_ray):
    """The session's Ray instance (tests/conftest.py), with one torch thread in this process: one-row forward
    passes here, where torch's thread pool would cost milliseconds per step."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


@pytest.fixture(scope="module")
def trained(one_thread_ray):
    """A self-play algorithm after two training iterations, and their result dicts."""
    algo = ppo_config(ONE_MANCHE, seed=0, **SMALL).build_algo()
    results = [algo.train() for _ in range(2)]
    yield algo, results
    algo.stop()


def real_observations(n_games: int = 3, seed: int = 0) -> dict[str, np.ndarray]:
    """Every observation RLlib would see in ``n_games`` random legal games, end-of-game ones included:
    ``observation (N, obs_dim) float32``, ``action_mask (N, A) int8``."""
    env, rng = make_env({"rules": "standard"}), np.random.default_rng(seed)
    rows = []
    for game in range(n_games):
        obs, _ = env.reset(seed=seed + game)
        while True:
            rows += list(obs.values())
            (agent, last), *_ = obs.items()
            obs, _, terminated, _, _ = env.step({agent: int(rng.choice(np.flatnonzero(last["action_mask"])))})
            if terminated["__all__"]:
                rows += list(obs.values())
                break
    return {key: np.stack([row[key] for row in rows]) for key in ("observation", "action_mask")}


def test_env_refuses_illegal_actions_so_training_cannot_hide_them():
    env = make_env({"rules": "standard"})
    obs, _ = env.reset(seed=0)
    (agent, first), *_ = obs.items()
    with pytest.raises(ValueError, match="illegal action"):
        env.step({agent: int(np.flatnonzero(first["action_mask"] == 0)[0])})


def test_env_config_takes_preset_yaml_or_rules_dict(tmp_path):
    rules = pe.Rules(n_players=5, revolution=True)
    rules.to_yaml(tmp_path / "five.yaml")
    for spec in (rules.to_dict(), str(tmp_path / "five.yaml"), rules):
        env = make_env({"rules": spec})
        assert env.possible_agents == [f"player_{i}" for i in range(5)]
        assert env.action_space["player_0"].n == rules.num_actions
    assert make_env({"rules": "quebec"}).env.unwrapped.rules == pe.load_preset("quebec")


def test_training_iterations_report_finite_losses_and_sampled_steps(trained):
    _, results = trained
    for result in results:
        # Every decision went through the env, which raises on an illegal action: reaching here proves none.
        assert result["env_runners"]["num_env_steps_sampled"] >= SMALL["train_batch_size"]
        learner = result["learners"][SHARED_POLICY]
        for key in ("total_loss", "policy_loss", "vf_loss", "entropy", "mean_kl_loss"):
            assert math.isfinite(learner[key]), (key, learner[key])
        assert learner["entropy"] > 0
    assert results[-1]["env_runners"]["num_episodes_lifetime"] >= 2


def test_module_puts_zero_probability_on_masked_actions(trained):
    algo, _ = trained
    module = algo.get_module(SHARED_POLICY)
    obs = real_observations()
    mask = torch.from_numpy(obs["action_mask"]) != 0
    batch = {Columns.OBS: {key: torch.from_numpy(value) for key, value in obs.items()}}
    dist_cls = module.get_train_action_dist_cls()
    with torch.no_grad():
        for out in (module.forward_exploration(batch), module.forward_inference(batch), module.forward_train(batch)):
            logits = out[Columns.ACTION_DIST_INPUTS]
            probs = torch.softmax(logits, dim=-1)
            assert torch.isfinite(probs).all()
            assert torch.count_nonzero(probs[~mask & mask.any(-1, keepdim=True)]) == 0  # exactly 0, not tiny
            dist = dist_cls.from_logits(logits)
            assert torch.isfinite(dist.entropy()).all()  # also for the all-zero masks at the end of the game
            draws = torch.stack([dist.sample() for _ in range(200)], dim=1)  # (N, 200)
            legal_rows = mask.any(-1)
            assert mask[legal_rows].gather(1, draws[legal_rows]).all()
            assert torch.isfinite(dist.logp(draws[:, 0])[legal_rows]).all()
        values = module.compute_values(batch)
    assert values.shape == (len(obs["observation"]),) and torch.isfinite(values).all()


def test_adapter_plays_a_tournament_against_a_baseline_without_illegal_moves(trained):
    algo, _ = trained
    greedy = RLlibAgent.from_algorithm(algo, ONE_MANCHE)
    sampling = RLlibAgent.from_algorithm(algo, ONE_MANCHE, greedy=False, seed=1, name="rllib-sampled")
    # evaluate raises ValueError naming the agent if it returns an illegal action.
    result = evaluate([greedy, "heuristic-3", sampling, "random"], ONE_MANCHE, n_deals=4, progress=False)
    assert set(result.agents) == {"rllib-ppo", "heuristic-3", "rllib-sampled", "random"}
    assert result.agents["rllib-ppo"].manches == 4 * 4

    env = pe.env(rules="standard")
    env.reset(seed=3)
    observation, *_ = env.last()
    action = greedy.act(observation, None)
    assert observation["action_mask"][action] == 1


def test_adapter_from_a_saved_checkpoint_plays_as_the_live_module(trained, tmp_path):
    algo, _ = trained
    algo.save_to_path(tmp_path / "checkpoint")
    live = RLlibAgent.from_algorithm(algo, ONE_MANCHE)
    restored = RLlibAgent.from_checkpoint(tmp_path / "checkpoint", ONE_MANCHE)
    obs = real_observations(n_games=1)
    playing = obs["action_mask"].any(axis=1)
    observations, masks = obs["observation"][playing], obs["action_mask"][playing].astype(bool)
    np.testing.assert_array_equal(live.act_batch(observations, masks), restored.act_batch(observations, masks))


# Each EnvRunner registers its env with gymnasium under one fixed id; a second algorithm in a process re-registers it.
@pytest.mark.filterwarnings("ignore:.*Overriding environment rllib-multi-agent-env-v0")
def test_one_policy_per_seat(one_thread_ray):
    algo = ppo_config(ONE_MANCHE, shared_policy=False, seed=0, **SMALL).build_algo()
    try:
        result = algo.train()
        assert set(result["learners"]) >= {f"player_{i}" for i in range(4)}
        assert all(math.isfinite(result["learners"][f"player_{i}"]["total_loss"]) for i in range(4))
        agent = RLlibAgent.from_algorithm(algo, ONE_MANCHE, module_id="player_2")
        assert evaluate([agent, "random"], ONE_MANCHE, n_deals=2, progress=False).agents["rllib-ppo"].manches == 16
    finally:
        algo.stop()
