"""The exploitability probe: the best response starts as its target, the zero control plays the same deals, a
from-scratch run end to end, and the command line's refusals."""

from __future__ import annotations

import json
import re
import shutil

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from helpers import PER_TABLE_CHECKPOINT  # noqa: E402

from president_env import agents  # noqa: E402
from president_env.agents.base import legal_probabilities  # noqa: E402
from president_env.agents.checkpoint import save_checkpoint  # noqa: E402
from president_env.agents.universal import UniversalNet, encode  # noqa: E402
from president_env.core.presets import resolve_rules  # noqa: E402
from president_env.core.vec_game import VecGame  # noqa: E402
from president_env.training.config import load_config  # noqa: E402
from president_env.training.ppo_selfplay import Trainer  # noqa: E402
from president_env.training.probe import (  # noqa: E402
    PROBE_CONFIG,
    main,
    paired_tournaments,
    run_probe,
    start_run,
)

TINY = ["ppo.num_envs=16", "ppo.num_steps=8", "budget.eval_every=0", "threads=1"]
TARGET = str(PER_TABLE_CHECKPOINT)  # a small one-table network


def observations(rules, n=64):
    """Observations and masks of the acting seats over a few seeded steps of random play."""
    game = VecGame(rules, batch_size=n, seed=3)
    rng = np.random.default_rng(4)
    obs, masks = [], []
    for _ in range(6):
        obs.append(game.observe())
        mask = game.legal_mask()
        masks.append(mask)
        game.step(np.array([rng.choice(np.flatnonzero(m)) for m in mask]))
    return np.concatenate(obs), np.concatenate(masks)


def learner_probabilities(net, x, mask):
    with torch.no_grad():
        logits, _ = net(torch.from_numpy(x), torch.from_numpy(mask))
    return torch.softmax(logits, -1).numpy()


def test_the_best_response_starts_as_its_target_actor_and_critic(tmp_path):
    trainer = start_run(TARGET, tmp_path, False, None, 512, None, False, TINY)
    try:
        target = agents.make(TARGET, trainer.rules)
        obs, mask = observations(trainer.rules)
        expected = legal_probabilities(target.policy_logits(obs), mask)
        np.testing.assert_allclose(learner_probabilities(trainer.net, obs, mask), expected, atol=1e-5)
        shipped = torch.load(PER_TABLE_CHECKPOINT, weights_only=True)["model"]
        for name, weight in trainer.net.state_dict().items():
            assert torch.equal(weight, shipped[name]), name  # the critic (value head) too
        assert trainer.rules == resolve_rules("standard")  # the target's table, the preset's 5-manche match
        assert trainer.config.opponents.baselines == {TARGET: 1.0} and trainer.config.budget.eval_opponent == TARGET
    finally:
        trainer.close()


def test_the_critic_warmup_leaves_the_actor_as_it_was(tmp_path):
    trainer = start_run(TARGET, tmp_path, False, None, 512, None, False, [*TINY, "init.critic_warmup=1"])
    try:
        before = {k: v.clone() for k, v in trainer.net.state_dict().items()}
        trainer.train_step()  # warm-up: the critic only
        after = trainer.net.state_dict()
        assert all(torch.equal(before[k], after[k]) for k in after if not k.startswith("value_head."))
        assert not torch.equal(before["value_head.weight"], after["value_head.weight"])
        trainer.train_step()  # then PPO moves the actor
        assert not torch.equal(before["policy_head.weight"], trainer.net.state_dict()["policy_head.weight"])
    finally:
        trainer.close()


def test_a_universal_best_response_starts_as_its_target(tmp_path):
    rules = resolve_rules("standard")
    net = UniversalNet([16], "relu", "perfect")
    path = save_checkpoint(
        tmp_path / "tiny-universal.pt", {"rules": rules.to_dict(), "network": net.spec(), "model": net.state_dict()}
    )
    trainer = start_run(str(path), tmp_path / "out", False, None, 512, None, False, TINY)
    try:
        assert type(trainer).__name__ == "UniversalTrainer" and trainer.config.network.critic == "perfect"
        for name, weight in trainer.net.state_dict().items():
            assert torch.equal(weight, net.state_dict()[name]), name
        target = agents.make(str(path), rules)
        # the learner's view of its table: the universal encoding and mask
        game = trainer.groups.members[0].tables[0].game
        x, umask = game.observe(), game.legal_mask()
        expected = legal_probabilities(target.logits(encode(rules, game.native_obs)), umask)
        np.testing.assert_allclose(learner_probabilities(trainer.net, x, umask), expected, atol=1e-5)
    finally:
        trainer.close()


def test_the_zero_control_plays_the_same_deals_as_the_best_response(tmp_path):
    rules = resolve_rules("standard")
    policy = tmp_path / "copy.pt"
    shutil.copy(PER_TABLE_CHECKPOINT, policy)  # a best response that is the target exactly
    best, zero = paired_tournaments(TARGET, policy, rules, deals=2, seed=11)
    assert best.config["seed"] == zero.config["seed"] == 11 and best.config["n_deals"] == zero.config["n_deals"]
    # the same deals and the same play: every manche alike, decision for decision and point for point
    np.testing.assert_array_equal(best.records.decisions, zero.records.decisions)
    np.testing.assert_array_equal(best.records.points, zero.records.points)
    assert best.agents[str(policy)].advantage.mean == zero.agents["zero-control"].advantage.mean
    assert zero.agents["zero-control"].advantage.mean == pytest.approx(0.0, abs=1e-12)


def test_a_from_scratch_probe_of_a_baseline_trains_measures_and_writes_its_figure(tmp_path):
    tiny = [*TINY, "network.hidden=[16]", "manches=1"]
    summary = run_probe(
        "random", "standard", tmp_path, steps=512, deals=2, progress=False, overrides=tiny, scratch=True
    )
    assert summary["target"] == "random" and summary["mode"].startswith("from scratch")
    assert summary["env_steps"] >= 512 and summary["deal_groups"] == 2
    assert json.loads((tmp_path / "probe.json").read_text()) == summary
    assert (tmp_path / "run" / "policy.pt").is_file() and (tmp_path / "random" / "results.json").is_file()
    assert (tmp_path / "zero_control" / "results.json").is_file()  # random is no copy of itself: not exactly 0
    assert -3.0 <= summary["zero_control"] <= 3.0 and summary["zero_control_ci95"] > 0
    assert -3.0 <= summary["advantage"] <= 3.0 and summary["advantage_ci95"] >= 0


def test_init_weights_of_another_network_or_of_a_baseline_are_refused():
    config = load_config(PROBE_CONFIG, [*TINY, f"init.weights={TARGET}", "network.hidden=[16]"])
    with pytest.raises(ValueError, match=rf"init.weights: '{re.escape(TARGET)}' holds the network .*this run builds"):
        Trainer(config, progress=False)
    config = load_config(PROBE_CONFIG, [*TINY, "init.weights=heuristic-3"])
    with pytest.raises(ValueError, match="'heuristic-3' has no weights to start from"):
        Trainer(config, progress=False)


@pytest.mark.parametrize(
    "argv, message",
    [
        (["--target", "nobody"], "unknown agent"),
        (["--target", "heuristic-3"], "has no weights to start a best response from"),
        (["--target", "heuristic-3", "--from-scratch", "--rules", "nope"], "'nope'"),
        (["--target", TARGET, "--steps", "0"], "--steps"),
        (["--target", TARGET, "--deals", "1"], "--deals"),
        (["--target", TARGET, "--minutes", "0"], "--minutes"),
        (["--target", TARGET, "--seed", "20261202"], "reserved held-out seed"),
    ],
)
def test_probe_cli_refuses_bad_input_with_exit_2(tmp_path, capsys, argv, message):
    with pytest.raises(SystemExit) as exit_info:
        code = main(argv + ["--out", str(tmp_path / "out"), "--no-progress"])
        raise SystemExit(code)
    err = capsys.readouterr().err
    assert exit_info.value.code == 2 and message in err and "Traceback" not in err


def test_a_probe_folder_holding_another_targets_run_is_refused(tmp_path, capsys):
    start_run(TARGET, tmp_path, False, None, 512, None, False, TINY).checkpoint()
    code = main(["--target", "ppo-universal", "--out", str(tmp_path), "--no-progress"])
    assert code == 2 and "holds another probe's run" in capsys.readouterr().err


def test_a_second_sitting_continues_the_run_where_it_stopped(tmp_path):
    first = start_run(TARGET, tmp_path, False, None, 256, None, False, TINY)  # 128 env steps an update: 2 updates
    first.train()
    first.close()
    second = start_run(TARGET, tmp_path, False, None, 512, 5.0, False, [])
    try:
        assert (second.update, second.global_step) == (2, 256) and second.config.budget.total_steps == 512
        assert second.config.budget.time_limit_min == pytest.approx(first.elapsed / 60 + 5.0)
        assert all(torch.equal(w, first.net.state_dict()[k]) for k, w in second.net.state_dict().items())
    finally:
        second.close()


@pytest.mark.parametrize(
    "change, message",
    [
        ({"progress": [1, 2]}, "progress must be a dict"),
        ({"config": {"opponents": 3}}, "holds another probe's run"),
        ({"progress": {"update": 0, "global_step": 0, "elapsed_s": float("nan")}}, "elapsed_s must be a finite"),
    ],
)
def test_a_crafted_probe_checkpoint_is_one_line(tmp_path, capsys, change, message):
    from president_env.agents.checkpoint import load_checkpoint

    start_run(TARGET, tmp_path, False, None, 512, None, False, TINY).checkpoint()
    path = tmp_path / "run" / "checkpoint.pt"
    save_checkpoint(path, {**load_checkpoint(path), **change})
    code = main(["--target", TARGET, "--out", str(tmp_path), "--no-progress", "--steps", "1024"])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1 and message in err, err
