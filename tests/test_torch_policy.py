"""TorchPolicyAgent: legal actions only, reproducible sampling, checkpoints by path in make(), the Gym env and
tournaments, and the packaged agent."""

from __future__ import annotations

import os
import subprocess
import sys
import warnings

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from helpers import PER_TABLE_CHECKPOINT, tiny_payload  # noqa: E402

import president_env as pe  # noqa: E402
from president_env import agents  # noqa: E402
from president_env.agents.checkpoint import CheckpointError, save_checkpoint  # noqa: E402
from president_env.agents.torch_policy import PolicyNet, TorchPolicyAgent, build_policy, sample_masked  # noqa: E402
from president_env.evaluation.tournament import evaluate  # noqa: E402

pytestmark = pytest.mark.usefixtures("one_torch_thread")


@pytest.fixture
def path(tmp_path):
    return save_checkpoint(tmp_path / "tiny-ppo.pt", tiny_payload())


def agent_of(payload: dict, seed=0, greedy=True, rules=None) -> TorchPolicyAgent:
    return TorchPolicyAgent(rules or pe.Rules.from_dict(payload["rules"]), build_policy(payload), seed, greedy)


@pytest.mark.parametrize("greedy", [True, False])
def test_the_agent_only_ever_plays_legal_actions(greedy):
    # A sharp policy head puts large logits on actions that are often illegal: the mask must win.
    agent = agent_of(tiny_payload(sharpness=200.0), seed=1, greedy=greedy)
    game = pe.VecGame(pe.Rules(), batch_size=256, seed=2)
    for _ in range(50):
        mask = game.legal_mask()
        actions = agent.act_batch(game.observe(), mask)
        assert actions.dtype == np.int64 and actions.shape == (256,)
        assert mask[np.arange(256), actions].all()
        game.step(actions)


def test_sampling_is_reproducible_from_the_seed_and_follows_the_softmax():
    payload = tiny_payload(sharpness=30.0)
    game = pe.VecGame(pe.Rules(), batch_size=256, seed=3)
    obs, mask = game.observe(), game.legal_mask()
    first = agent_of(payload, seed=7, greedy=False)
    draws = [first.act_batch(obs, mask) for _ in range(3)]
    again = agent_of(payload, seed=7, greedy=False)
    assert all(np.array_equal(a, again.act_batch(obs, mask)) for a in draws)
    assert not np.array_equal(draws[0], agent_of(payload, seed=8, greedy=False).act_batch(obs, mask))
    first.reset(seed=7)
    assert np.array_equal(first.act_batch(obs, mask), draws[0])
    # One state repeated: frequencies match the masked softmax, and 0-probability actions never come.
    rows = 20_000
    many = first.act_batch(np.repeat(obs[:1], rows, 0), np.repeat(mask[:1], rows, 0))
    with torch.no_grad():
        logits, _ = first.net(torch.from_numpy(obs[:1].copy()), torch.from_numpy(mask[:1].copy()))
    probs = torch.softmax(logits.double(), -1)[0].numpy()
    assert np.abs(np.bincount(many, minlength=probs.size) / rows - probs).max() < 0.02
    assert set(many) <= set(np.flatnonzero(probs > 0))


def test_sample_masked_never_draws_a_zero_probability_action():
    logits = np.array([[0.0, -1000.0, 0.0, 5.0], [3.0, 0.0, -2000.0, 0.0]])
    masks = np.array([[True, True, True, False], [False, True, True, False]])
    drawn = sample_masked(np.tile(logits, (500, 1)), np.tile(masks, (500, 1)), np.random.default_rng(0))
    assert set(drawn[0::2]) == {0, 2} and set(drawn[1::2]) == {1}

    class TopOfTheRange:  # rounding may make u reach the total: the last legal action, never an illegal one
        def random(self, n):
            return np.ones(n)

    assert sample_masked(logits, masks, TopOfTheRange()).tolist() == [2, 2]


def test_act_on_one_observation_dict_is_one_row_of_act_batch(path):
    agent = agents.make(path, seed=0)
    game = pe.VecGame(pe.Rules(), batch_size=8, seed=4)
    obs, mask = game.observe(), game.legal_mask()
    for i in range(8):
        action = agent.act({"observation": obs[i], "action_mask": mask[i].astype(np.int8)}, {})
        assert isinstance(action, int) and action == agent.act_batch(obs, mask)[i]


def test_a_network_of_other_sizes_than_the_rules_is_refused(path):
    net = build_policy(tiny_payload())
    with pytest.raises(ValueError, match="size 179 and has 66 actions; these rules have observations of size 213"):
        TorchPolicyAgent(pe.Rules(n_players=5), net)
    with pytest.raises(CheckpointError, match=f"{path} was trained .*size 179.*n_players.*size 213"):
        TorchPolicyAgent.from_checkpoint(path, pe.Rules(n_players=5))
    with pytest.raises(CheckpointError, match="n_players"):
        agents.make(path, pe.Rules(n_players=5))


def test_rules_of_the_same_sizes_but_other_play_warn(path):
    with pytest.warns(UserWarning, match="trained under other rules.*revolution .checkpoint False, requested True"):
        agent = TorchPolicyAgent.from_checkpoint(path, pe.Rules(revolution=True))
    assert agent.rules.revolution
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        TorchPolicyAgent.from_checkpoint(path, pe.Rules())


def test_greediness_and_name_come_from_the_checkpoint_unless_given(tmp_path):
    sampling = save_checkpoint(tmp_path / "explorer.pt", tiny_payload(greedy=False))
    assert TorchPolicyAgent.from_checkpoint(sampling).greedy is False
    assert TorchPolicyAgent.from_checkpoint(sampling, greedy=True).greedy is True
    assert TorchPolicyAgent.from_checkpoint(tiny_payload()).greedy is True
    assert TorchPolicyAgent.from_checkpoint(sampling).name == "explorer"


def test_a_checkpoint_path_is_an_agent_for_make_the_gym_env_and_tournaments(path):
    agent = agents.make(str(path), pe.Rules(), seed=0)
    assert isinstance(agent, TorchPolicyAgent) and isinstance(agent, agents.Policy) and agent.name == "tiny-ppo"
    env = pe.gym_env(opponents=str(path), seat=0)
    obs, info = env.reset(seed=0)
    for _ in range(5):
        obs, reward, terminated, truncated, info = env.step(int(np.flatnonzero(info["action_mask"])[0]))
        if terminated:
            obs, info = env.reset()
    result = evaluate([agent, "heuristic-3", "heuristic-3", "heuristic-3"], n_deals=2, progress=False)
    assert "tiny-ppo" in result.to_markdown()


def test_the_packaged_agent_name_says_its_checkpoint_is_missing_or_of_another_network(path, tmp_path, monkeypatch):
    monkeypatch.setattr(agents, "shipped_checkpoint", lambda name: tmp_path / f"{name}.pt")
    with pytest.raises(ValueError, match="'ppo-universal' is the packaged checkpoint .* missing"):
        agents.make("ppo-universal")
    os.replace(path, tmp_path / "ppo-universal.pt")  # a one-table network where the universal one belongs
    with pytest.raises(CheckpointError, match="'ppo-universal' needs a universal network; the file holds another"):
        agents.make("ppo-universal", seed=0)


def test_a_one_table_checkpoint_plays_the_standard_game():
    agent = agents.make(str(PER_TABLE_CHECKPOINT), pe.Rules(), seed=0)
    assert isinstance(agent, TorchPolicyAgent)
    game = pe.VecGame(pe.Rules(), batch_size=64, seed=0)
    mask = game.legal_mask()
    assert mask[np.arange(64), agent.act_batch(game.observe(), mask)].all()


def test_a_fresh_interpreter_imports_agents_without_torch_and_loads_checkpoints_through_the_plugins(path):
    script = (
        "import sys\n"
        "from president_env import agents\n"
        "assert 'torch' not in sys.modules, 'importing the agents imported torch'\n"
        f"print(agents.make({str(path)!r}, seed=0).name)\n"
    )
    run = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == "tiny-ppo"


@pytest.mark.parametrize("activation", ["relu", "tanh"])
def test_numpy_forward_pass_agrees_with_the_torch_network(activation):
    rules = pe.Rules()
    game = pe.VecGame(rules, batch_size=512, seed=3)
    net = PolicyNet(game.obs_dim, game.num_actions, hidden=(64, 32), activation=activation)
    for p in net.parameters():  # away from the near-uniform initial policy
        torch.nn.init.normal_(p, std=0.3)
    agent = TorchPolicyAgent(rules, net, greedy=True)
    obs, mask = game.observe(), game.legal_mask()
    with torch.no_grad():
        logits, _ = net(torch.from_numpy(obs.copy()), torch.from_numpy(mask.copy()))
    np.testing.assert_allclose(agent.policy_logits(obs)[mask], logits.numpy()[mask], rtol=1e-4, atol=1e-4)
    assert (agent.act_batch(obs, mask) == logits.argmax(-1).numpy()).mean() > 0.99


def test_a_checkpoint_path_plays_in_worker_processes(path):
    """president-eval --workers 2 with a checkpoint path: the parent loads it first (torch's thread pool starts), and
    the workers must still finish (forked children deadlocked in torch; the pool now spawns them)."""
    command = [
        sys.executable, "-m", "president_env.evaluation.cli", "--agents", str(path), "--against", "random",
        "--deals", "4", "--chunk-deals", "2", "--workers", "2", "--no-progress", "--out", str(path.parent / "eval"),
    ]  # fmt: skip
    done = subprocess.run(command, capture_output=True, text=True, timeout=240)
    assert done.returncode == 0, done.stderr
    assert (path.parent / "eval" / "versus.json").is_file()
