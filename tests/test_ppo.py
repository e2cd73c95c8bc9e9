"""Masked PPO self-play (``training/ppo.py``, ``ppo_selfplay.py``): masks, carried decisions, resume, the CLI."""

import json

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from president_env import agents  # noqa: E402
from president_env.agents.checkpoint import CheckpointError, load_checkpoint  # noqa: E402
from president_env.agents.torch_policy import masked_entropy, masked_logits  # noqa: E402
from president_env.core.presets import load_preset  # noqa: E402
from president_env.training.cli import main  # noqa: E402
from president_env.training.config import load_config  # noqa: E402
from president_env.training.curves import read_metrics  # noqa: E402
from president_env.training.opponents import OpponentPool  # noqa: E402
from president_env.training.ppo import sample  # noqa: E402
from president_env.training.ppo_selfplay import Trainer  # noqa: E402

TINY = [
    "ppo.num_envs=32",
    "ppo.num_steps=8",
    "ppo.num_minibatches=2",
    "network.hidden=[32]",
    "budget.total_steps=2048",
    "budget.eval_every=0",
    "budget.checkpoint_every=0",
    "opponents.snapshot_every=1",
    "opponents.pool_size=2",
]


def tiny_trainer(tmp_path, *extra):
    return Trainer(load_config(None, TINY + [f"out_dir={tmp_path}", *extra]), progress=False)


def only_shard(trainer):
    (shard,) = trainer.shards.members
    return shard


def test_sampling_never_draws_an_illegal_action():
    generator = torch.Generator().manual_seed(0)
    masks = torch.rand(4096, 66, generator=generator) < 0.05
    masks[:, 0] |= ~masks.any(1)
    logits = masked_logits(torch.randn(4096, 66, generator=generator) * 30, masks)
    for _ in range(20):
        actions = sample(logits, generator)
        assert masks[torch.arange(4096), actions].all()


def test_illegal_actions_have_zero_probability_and_no_gradient():
    logits = torch.randn(8, 66, requires_grad=True)
    mask = torch.rand(8, 66) < 0.3
    mask[:, 0] = True
    masked = masked_logits(logits, mask)
    log_p = torch.log_softmax(masked, -1)
    assert (log_p.exp()[~mask] == 0).all()
    entropy = masked_entropy(log_p)
    assert torch.isfinite(entropy).all()
    actions = torch.multinomial(log_p.exp(), 1)
    (log_p.gather(1, actions).sum() - entropy.sum()).backward()
    assert (logits.grad[~mask] == 0).all()
    assert logits.grad[mask].abs().sum() > 0


def test_rollout_stores_legal_actions_only_for_the_learner_and_every_decision_is_trained_once(tmp_path):
    trainer = tiny_trainer(
        tmp_path, "opponents.self_play=0.5", "opponents.snapshots=0.25", "opponents.baselines={heuristic-3: 0.25}"
    )
    shard = only_shard(trainer)
    learner_decisions = trained = 0
    for _ in range(6):
        rollout = shard.collect()
        for mask, action in zip(rollout.mask, rollout.action):
            assert mask[np.arange(len(action)), action].all()
        assert sum(len(a) for a in rollout.action) == rollout.learner.sum()
        batch, _ = shard.batch_from(rollout)
        assert batch["mask"][np.arange(len(batch["action"])), batch["action"]].all()
        learner_decisions += int(rollout.learner.sum())
        trained += len(batch["action"])
    # nothing lost or counted twice: what was not trained yet is carried
    assert trained + shard.pending.valid.sum() == learner_decisions
    # an opponent's players never hold the learner's carried decisions
    owner = shard.pool.owner
    assert not (shard.pending.valid & (owner != 0)).any()


def test_carried_decisions_give_the_same_td0_advantages_as_one_long_rollout(tmp_path):
    """With lambda = 0 an advantage depends on the next decision only, so cutting the rollout changes nothing."""
    extra = [
        "ppo.gae_lambda=0",
        "ppo.gamma=0.97",
        "opponents.self_play=0.5",
        "opponents.snapshots=0",
        "opponents.baselines={heuristic-2: 0.5}",
    ]
    long = only_shard(tiny_trainer(tmp_path / "a", "ppo.num_steps=24", *extra))
    short = only_shard(tiny_trainer(tmp_path / "b", "ppo.num_steps=6", *extra))
    batch_long, _ = long.batch_from(long.collect())
    parts = [short.batch_from(short.collect())[0] for _ in range(4)]

    def keyed(batches):
        rows = {}
        for b in batches:
            for obs, adv, ret in zip(b["obs"], b["advantage"], b["return"]):
                rows.setdefault(obs.tobytes(), []).append((round(float(adv), 5), round(float(ret), 5)))
        return {k: sorted(v) for k, v in rows.items()}

    a, b = keyed([batch_long]), keyed(parts)
    common = set(a) & set(b)
    assert len(common) > 100
    assert all(a[k] == b[k] for k in common)


def test_a_capped_baseline_sits_only_at_tables_small_enough_and_its_share_goes_to_the_others():
    overrides = ["opponents.self_play=0.5", "opponents.snapshots=0.25"]
    overrides.append("opponents.baselines={mc-4: 0.125, heuristic-3: 0.125}")
    config = load_config(None, [*overrides, "opponents.max_players={mc-4: 4}"]).opponents
    rng = np.random.default_rng(0)
    for n_players, expected in ((4, [0.5, 0.25, 0.125, 0.125]), (5, [4 / 7, 2 / 7, 0.0, 1 / 7])):
        pool = OpponentPool(config, load_preset("standard").replace(n_players=n_players), 512, rng)
        assert pool.category_p == pytest.approx(expected)
        assert pool.baseline_names == ["mc-4", "heuristic-3"]  # ids stay those of the config everywhere
    pool.draw(np.arange(512))
    assert not (pool.owner == 1).any() and (pool.owner == 2).any()  # mc-4 (id 1) never sits at 5 players
    only_mc4 = load_config(None, ["opponents.self_play=0", "opponents.snapshots=0", "opponents.baselines={mc-4: 1}",
                                  "opponents.max_players={mc-4: 3}"]).opponents  # fmt: skip
    pool = OpponentPool(only_mc4, load_preset("standard"), 8, rng)
    assert pool.category_p == pytest.approx([1, 0, 0]) and (pool.owner == 0).all()  # no one left: self-play


def test_resume_reproduces_the_next_update_exactly(tmp_path):
    trainer = tiny_trainer(tmp_path, "opponents.baselines={heuristic-3: 0.2, random: 0.1}")
    for _ in range(3):
        trainer.train_step()
    path = trainer.save(tmp_path / "checkpoint.pt")
    trainer.train_step()
    resumed = Trainer.resume(path, progress=False)
    resumed.train_step()
    for a, b in zip(trainer.net.state_dict().values(), resumed.net.state_dict().values()):
        assert torch.equal(a, b)
    assert np.array_equal(only_shard(trainer).game.state.hands, only_shard(resumed).game.state.hands)
    assert np.array_equal(only_shard(trainer).pool.owner, only_shard(resumed).pool.owner)
    assert trainer.global_step == resumed.global_step and trainer.update == resumed.update


def test_the_step_size_anneals_over_anneal_steps(tmp_path):
    """``budget.anneal_steps`` sets where the step size reaches 0; by default it is ``budget.total_steps``."""
    for extra, horizon in ((), 2048), (("budget.anneal_steps=8192",), 8192):
        trainer = tiny_trainer(tmp_path, *extra)
        trainer.train_step()
        lr = trainer.optimizer.param_groups[0]["lr"]
        assert lr == pytest.approx(trainer.config.ppo.learning_rate * (1 - 256 / horizon))


def test_a_resumed_run_logs_each_update_once(tmp_path):
    """Records written after the resumed checkpoint, and a line torn by a crash, leave metrics.jsonl."""
    trainer = tiny_trainer(tmp_path, "budget.total_steps=1024")  # 4 updates of 256 steps
    trainer.train()
    checkpoint_4 = tmp_path / "checkpoint_4.pt"
    checkpoint_4.write_bytes((tmp_path / "checkpoint.pt").read_bytes())
    # A later session logged updates 5 and 6, then crashed in the middle of a line.
    assert main(["--resume", str(checkpoint_4), "--set", "budget.total_steps=1536", "--no-progress"]) == 0
    with open(tmp_path / "metrics.jsonl", "a") as metrics:
        metrics.write('{"update": 7, "global_st')
    assert main(["--resume", str(checkpoint_4), "--set", "budget.total_steps=2048", "--no-progress"]) == 0
    updates = [json.loads(line)["update"] for line in (tmp_path / "metrics.jsonl").read_text().splitlines()]
    assert updates == [1, 2, 3, 4, 5, 6, 7, 8]


def test_resuming_a_spent_run_says_which_budget_to_raise(tmp_path, capsys):
    """Both budgets count the whole run: resumed at its step or time limit, nothing trains and the CLI says why."""
    tiny_trainer(tmp_path, "budget.total_steps=512").train()
    checkpoint = str(tmp_path / "checkpoint.pt")

    def resume(*overrides):
        assert main(["--resume", checkpoint, "--no-progress", *(f"--set={item}" for item in overrides)]) == 0
        return capsys.readouterr().err, Trainer.resume(checkpoint, progress=False)

    capsys.readouterr()
    err, run = resume()
    assert "at step 512 of budget.total_steps=512; nothing is left to train" in err and run.global_step == 512
    err, run = resume("budget.total_steps=1024", "budget.time_limit_min=1e-6")
    assert "of budget.time_limit_min=1e-06, which counts the whole run, every resume included" in err
    assert run.global_step == 512
    assert run.config.budget.time_limit_min == 1e-6  # overrides stay in the checkpoint, for the next sittings
    err, run = resume("budget.total_steps=768", "budget.time_limit_min=null")
    assert "nothing is left" not in err and run.global_step == 768


def test_resume_rejects_exported_policies_and_changed_runs(tmp_path):
    trainer = tiny_trainer(tmp_path)
    trainer.train()
    with pytest.raises(CheckpointError, match="not a full training checkpoint"):
        Trainer.resume(tmp_path / "policy.pt")
    with pytest.raises(ValueError, match="budget"):
        Trainer.resume(tmp_path / "checkpoint.pt", overrides=["ppo.learning_rate=0.1"])
    (tmp_path / "broken.pt").write_bytes((tmp_path / "checkpoint.pt").read_bytes()[:1000])
    with pytest.raises(CheckpointError):
        Trainer.resume(tmp_path / "broken.pt")


def test_president_train_smoke_run_writes_a_loadable_agent(tmp_path, capsys):
    out = tmp_path / "run"
    args = ["--out-dir", str(out), "--no-progress"] + [x for item in TINY for x in ("--set", item)]
    assert main(args + ["--set", "budget.eval_every=2", "--set", "budget.eval_deals=2"]) == 0
    for name in ("config.yaml", "rules.yaml", "metrics.jsonl", "checkpoint.pt", "policy.pt", "learning_curve.png"):
        assert (out / name).is_file(), name
    records = [json.loads(line) for line in (out / "metrics.jsonl").read_text().splitlines()]
    assert records[-1]["global_step"] >= 2048
    assert any("eval/advantage" in r for r in records)
    assert list((out / "tb").iterdir())  # TensorBoard events
    assert (out / "policy.pt").stat().st_size < (out / "checkpoint.pt").stat().st_size
    assert "optimizer" not in load_checkpoint(out / "policy.pt")
    agent = agents.make(str(out / "policy.pt"), "standard", seed=0)
    game = __import__("president_env").VecGame("standard", batch_size=16, seed=0)
    actions = agent.act_batch(game.observe(), game.legal_mask())
    assert game.legal_mask()[np.arange(16), actions].all()
    # resume continues the step budget
    assert main(["--resume", str(out / "checkpoint.pt"), "--no-progress", "--set", "budget.total_steps=3072"]) == 0
    records = [json.loads(line) for line in (out / "metrics.jsonl").read_text().splitlines()]
    assert records[-1]["global_step"] >= 3072
    curve = read_metrics(out)  # one record per update, in order
    assert [r["update"] for r in curve] == list(range(1, len(curve) + 1))


def test_president_train_reports_bad_configs(tmp_path, capsys):
    assert main(["--set", "ppo.lerning_rate=1", "--out-dir", str(tmp_path)]) == 2
    assert "lerning_rate" in capsys.readouterr().err
    assert (
        main(
            [
                "--set",
                "opponents.baselines={nobody: 0.5}",
                "--set",
                "opponents.self_play=0.3",
                "--out-dir",
                str(tmp_path),
            ]
        )
        == 2
    )
    assert "nobody" in capsys.readouterr().err
    assert main(["--config", str(tmp_path / "missing.yaml")]) == 2


@pytest.mark.slow
def test_a_short_run_beats_random(tmp_path):
    """300 k steps (18 updates) take it from about -1 to about +1.7 against three random players (100 k steps: +0.2)."""
    from president_env.evaluation.tournament import evaluate

    config = load_config(
        None,
        [
            f"out_dir={tmp_path}",
            "ppo.num_envs=512",
            "ppo.num_steps=32",
            "network.hidden=[128, 128]",
            "budget.total_steps=300000",
            "budget.eval_every=0",
            "opponents.baselines={random: 0.3}",
        ],
    )
    trainer = Trainer(config, progress=False)
    before = evaluate([trainer.agent(), "random"] + ["random"] * 2, n_deals=100, seed=5, progress=False)
    trainer.train()
    after = evaluate([trainer.agent(), "random"] + ["random"] * 2, n_deals=100, seed=5, progress=False)
    b, a = before.summary["learner"], after.summary["learner"]
    assert a["advantage"] - a["advantage_ci"] > 0.5
    assert a["advantage"] > b["advantage"] + 0.5


def test_exchange_decisions_are_learned_like_any_other(tmp_path):
    """Under rules with an exchange (family: roles drawn before the first manche, or later manches), the
    learner's give-back decisions are in the training batch."""
    import president_env as pe
    from president_env.core.observation import layout

    rules_path = tmp_path / "three_manches.yaml"
    pe.load_preset("standard").replace(manches=3).to_yaml(rules_path)
    for rules, steps in (("family", 16), (str(rules_path), 160)):  # a manche lasts about 50 decisions
        trainer = tiny_trainer(tmp_path / "run", f"rules={rules}", f"ppo.num_steps={steps}")
        phase = layout(trainer.rules)["phase"]
        shard = only_shard(trainer)
        batch, _ = shard.batch_from(shard.collect())
        exchange = batch["obs"][:, phase.start] == 1
        assert exchange.any(), rules
        gives = {pe.decode(trainer.rules, int(a))[0] for a in batch["action"][exchange]}
        assert gives == {"give"}


def test_president_train_refuses_a_folder_holding_a_run_without_force(tmp_path, capsys):
    out = tmp_path / "run"
    args = ["--out-dir", str(out), "--no-progress"] + [x for item in TINY for x in ("--set", item)]
    assert main(args + ["--set", "budget.total_steps=256"]) == 0
    before = {name: (out / name).read_bytes() for name in ("checkpoint.pt", "metrics.jsonl", "config.yaml")}
    capsys.readouterr()
    assert main(args + ["--set", "budget.total_steps=256", "--set", "seed=5"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "holds a run" in err and f"--resume {out / 'checkpoint.pt'}" in err, err
    assert {name: (out / name).read_bytes() for name in before} == before  # nothing was touched
    assert main(args + ["--set", "budget.total_steps=256", "--set", "seed=5", "--force"]) == 0
    assert (out / "config.yaml").read_bytes() != before["config.yaml"]
    with pytest.raises(SystemExit) as exit_info:
        main(["--resume", str(out / "checkpoint.pt"), "--force"])
    assert exit_info.value.code == 2 and "drop one of them" in capsys.readouterr().err


def test_resume_into_another_folder_is_refused_and_leaves_both_folders_alone(tmp_path, capsys):
    run, other = tmp_path / "a", tmp_path / "b"
    tiny_trainer(run, "budget.total_steps=256").train()
    other.mkdir()
    (other / "metrics.jsonl").write_text('{"update": 1, "global_step": 256, "elapsed_s": 1.0}\n')
    metrics = (run / "metrics.jsonl").read_text()
    argv = ["--resume", str(run / "checkpoint.pt"), "--out-dir", str(other), "--set", "budget.total_steps=512"]
    assert main(argv + ["--no-progress"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "continues the run in its own folder" in err, err
    assert (run / "metrics.jsonl").read_text() == metrics and (other / "metrics.jsonl").read_text().count("\n") == 1
    argv[3] = str(run)  # the run's own folder, named again, is fine
    assert main(argv + ["--no-progress"]) == 0


def test_resuming_a_finished_run_adds_no_metrics_record_and_the_bar_stops_at_100_percent(tmp_path, capsys):
    trainer = tiny_trainer(tmp_path, "budget.total_steps=300", "budget.eval_every=3", "budget.eval_deals=2")
    trainer.progress = True  # 2 updates of 256 steps: the bar's last update passes total_steps
    trainer.train()
    bar = capsys.readouterr().err.replace("\r", "\n")
    percents = [int(part.split("%")[0].split()[-1]) for part in bar.splitlines() if "%|" in part]
    assert percents and max(percents) == 100, bar
    lines = (tmp_path / "metrics.jsonl").read_text().splitlines()
    assert [json.loads(line)["update"] for line in lines] == [1, 2, 2]  # the final evaluation adds to update 2
    assert main(["--resume", str(tmp_path / "checkpoint.pt"), "--no-progress"]) == 0
    assert (tmp_path / "metrics.jsonl").read_text().splitlines() == lines


def cut_games(games: dict) -> None:
    games.update({name: value[:1] for name, value in games.items()})


CRAFTED = {
    "negative steps": (lambda c: c["progress"].update(global_step=-5), "progress.global_step must be an integer >= 0"),
    "NaN elapsed": (lambda c: c["progress"].update(elapsed_s=float("nan")), "progress.elapsed_s must be a finite"),
    "progress a list": (lambda c: c.update(progress=[1, 2]), "progress must be a dict"),
    "rules a string": (lambda c: c.update(rules="standard"), "rules must be a dict"),
    "rng of the wrong size": (lambda c: c["rng"].update(learn=torch.zeros(3, dtype=torch.uint8)), "rng.learn"),
    "optimizer without state": (lambda c: c["optimizer"].pop("state"), "optimizer must be an optimizer state"),
    "shards a dict": (lambda c: c["trainer"].update(shards={"a": 1}), "trainer.shards must be a list"),
    "three shards": (lambda c: c["trainer"].update(shards=c["trainer"]["shards"] * 3), "3 shard states"),
    "a model tensor reshaped": (
        lambda c: c["model"].update({k: v.reshape(-1) for k, v in list(c["model"].items())[:1]}),
        "does not match its config",
    ),
    "a shard's games cut": (
        lambda c: cut_games(c["trainer"]["shards"][0]["game"]),
        "does not match its config",
    ),
    "metrics text": (lambda c: c.update(metrics={"eval/advantage": "high"}), "metrics must map names to numbers"),
}


@pytest.mark.parametrize("kind", CRAFTED)
def test_a_crafted_resume_checkpoint_is_one_line_and_leaves_the_run_folder_as_it_was(tmp_path, capsys, kind):
    from president_env.agents.checkpoint import save_checkpoint

    run = tmp_path / "run"
    tiny_trainer(run, "budget.total_steps=256").train()
    checkpoint = load_checkpoint(run / "checkpoint.pt")
    change, message = CRAFTED[kind]
    change(checkpoint)
    save_checkpoint(run / "checkpoint.pt", checkpoint)
    before = {path.name: path.read_bytes() for path in run.iterdir() if path.is_file()}
    assert main(["--resume", str(run / "checkpoint.pt"), "--set", "budget.total_steps=512", "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("president-train: error: ") and message in err, err
    assert {path.name: path.read_bytes() for path in run.iterdir() if path.is_file()} == before
