"""Expert iteration: positions labelled with the search's own values, a network fine-tuned to its choices."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from helpers import PER_TABLE_CHECKPOINT  # noqa: E402

import president_env as pe  # noqa: E402
from president_env import agents  # noqa: E402
from president_env.agents.policy_search import PolicySearchAgent, PolicySearchConfig  # noqa: E402
from president_env.agents.torch_policy import PolicyNet, TorchPolicyAgent  # noqa: E402
from president_env.core.observation import layout  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "scripts"))  # an experiment, outside the package
import expert_iteration as exit_  # noqa: E402

SMALL = PolicySearchConfig(worlds=4, candidates=3, confident=0.9)


def small_policy(rules: pe.Rules, seed: int = 0) -> TorchPolicyAgent:
    """An untrained network (unsure everywhere, so most positions are searched)."""
    torch.manual_seed(seed)
    net = PolicyNet(layout(rules).size, rules.num_actions, hidden=(16,))
    return TorchPolicyAgent(rules, net, seed=seed, name="small")


def test_labelled_positions_are_those_the_search_searches_with_its_values():
    rules = pe.Rules()
    policy = small_policy(rules)
    data = exit_.label_positions(policy, rules, positions=30, seed=3, batch=8, search=SMALL)
    assert len(data) >= 30 and len(data.anchor_obs) + len(data) > 30
    probs = PolicySearchAgent(rules, policy, config=SMALL).probabilities(data.obs.astype(np.float32), data.mask)
    np.testing.assert_allclose(data.probs, probs, rtol=1e-6)
    assert (data.mask.sum(axis=1) > 1).all() and (probs.max(axis=1) < SMALL.confident).all()
    assert (data.anchor_mask.sum(axis=1) > 1).all() and (data.anchor_probs.max(axis=1) >= SMALL.confident).all()
    # Values exactly on the policy's best (legal) candidates, -inf elsewhere.
    searched = np.isfinite(data.values)
    assert (searched <= data.mask).all() and (searched.sum(axis=1) == np.minimum(3, data.mask.sum(axis=1))).all()
    # The first batch's labels are the agent's own decisions: same seed, same worlds, same choice.
    agent = PolicySearchAgent(rules, policy, seed=3 + 1000, config=SMALL)
    game = pe.VecGame(rules, batch_size=8, seed=3)
    mask = game.legal_mask()
    rows = np.flatnonzero((mask.sum(axis=1) > 1) & (agent.probabilities(game.observe(), mask).max(axis=1) < 0.9))
    assert rows.size > 0
    choices = exit_.search_choices(data, PolicySearchConfig().tie_bonus)
    np.testing.assert_array_equal(choices[: rows.size], agent.act_batch(game.observe()[rows], mask[rows]))


def test_labelling_is_reproducible_from_its_seed():
    rules = pe.Rules()
    one = exit_.label_positions(small_policy(rules), rules, positions=12, seed=5, batch=4, search=SMALL)
    two = exit_.label_positions(small_policy(rules), rules, positions=12, seed=5, batch=4, search=SMALL)
    for name in exit_._ARRAYS:
        np.testing.assert_array_equal(getattr(one, name), getattr(two, name))


def synthetic(rules: pe.Rules, n: int = 600, seed: int = 0) -> exit_.Positions:
    """Positions whose search choice is a fixed function of the observation, which a network can learn."""
    policy = small_policy(rules, seed)
    game = pe.VecGame(rules, batch_size=n, seed=seed)
    obs, mask = game.observe(), game.legal_mask()
    probs = PolicySearchAgent(rules, policy).probabilities(obs, mask)
    legal_first = mask.argmax(axis=1)  # the lowest legal action: the "search" always prefers it
    values = np.where(mask, 0.0, -np.inf)
    values[np.arange(n), legal_first] = 1.0
    return exit_.Positions(
        obs.astype(np.uint8),
        mask,
        values.astype(np.float32),
        probs.astype(np.float32),
        obs[:50].astype(np.uint8),
        mask[:50],
        probs[:50].astype(np.float32),
    )


def test_distill_moves_the_network_towards_the_search_and_no_epochs_change_nothing():
    rules = pe.Rules()
    data = synthetic(rules)
    net = small_policy(rules).net
    before = {k: v.clone() for k, v in net.state_dict().items()}
    metrics = exit_.distill(net, data, exit_.DistillConfig(epochs=0))
    assert all(torch.equal(before[k], v) for k, v in net.state_dict().items())
    assert metrics["held_out_agreement_after"] == metrics["held_out_agreement_before"]
    metrics = exit_.distill(net, data, exit_.DistillConfig(epochs=30, learning_rate=3e-3, kl=0.0))
    assert metrics["held_out_agreement_after"] > max(0.9, metrics["held_out_agreement_before"] + 0.3)


def test_the_cli_writes_a_checkpoint_that_plays_and_reuses_its_labels_unless_damaged(tmp_path, capsys, monkeypatch):
    rules = pe.Rules()
    net = small_policy(rules).net
    source = tmp_path / "base.pt"
    from president_env.agents.checkpoint import save_checkpoint

    save_checkpoint(source, {"rules": rules.to_dict(), "network": net.spec(), "model": net.state_dict()})
    out = tmp_path / "exit"
    argv = ["--policy", str(source), "--positions", "10", "--batch", "4", "--epochs", "1", "--out", str(out)]
    monkeypatch.setattr(exit_, "PolicySearchConfig", lambda: SMALL)
    assert exit_.main(argv) == 0
    metrics = json.loads((out / "distill.json").read_text())["metrics"]
    assert metrics["labelled"] >= 10
    agent = agents.make(str(out / "policy.pt"), rules, seed=0)
    game = pe.VecGame(rules, batch_size=4, seed=0)
    assert game.legal_mask()[np.arange(4), agent.act_batch(game.observe(), game.legal_mask())].all()
    labels = out / "positions-1.npz"
    stamp = labels.stat().st_mtime_ns

    def no_labelling(*args, **kwargs):
        raise AssertionError("labelled again although the positions of the same task were on disk")

    monkeypatch.setattr(exit_, "label_positions", no_labelling)
    capsys.readouterr()
    assert exit_.main(argv) == 0 and labels.stat().st_mtime_ns == stamp
    monkeypatch.undo()
    monkeypatch.setattr(exit_, "PolicySearchConfig", lambda: SMALL)
    labels.write_bytes(b"not an npz file")  # a damaged file is labelled again, not an error
    assert exit_.main(argv) == 0
    assert len(exit_.Positions.load(labels)) >= 10


ONE_TABLE = str(PER_TABLE_CHECKPOINT)


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--policy", "nobody", "--positions", "5", "--out", "x"], "unknown agent 'nobody'"),
        (["--policy", "heuristic-3", "--positions", "5", "--out", "x"], "not a learned policy"),
        (["--policy", "ppo-universal", "--positions", "5", "--out", "x"], "not a per-table learned policy"),
        (["--policy", ONE_TABLE, "--positions", "0", "--out", "x"], "--positions must be at least 1"),
        (["--policy", ONE_TABLE, "--positions", "5", "--policy-share", "2", "--out", "x"], "--policy-share"),
        (["--policy", ONE_TABLE, "--positions", "5", "--kl", "nan", "--out", "x"], "--kl must be"),
    ],
)
def test_bad_command_lines_are_usage_errors(argv, message, capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(SystemExit) as exit_info:
        exit_.main(argv)
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err
