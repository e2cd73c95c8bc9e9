"""The universal layout is exact for every table, the universal agent plays matches at any table, and its
trainer trains on a mixture of tables, saves a compact checkpoint and resumes it bit for bit."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")
from helpers import swap_hidden_cards  # noqa: E402

from president_env import agents  # noqa: E402
from president_env.agents.styles import HELD_OUT_STYLES  # noqa: E402
from president_env.agents.universal import (  # noqa: E402
    MAX_COUNT,
    MAX_PLAYERS,
    MAX_RANKS,
    NUM_ACTIONS,
    OBS_SIZE,
    UniversalAgent,
    UniversalNet,
    action_map,
    encode,
    hidden_hands,
    segment_slices,
    to_native,
    to_universal,
    universal_mask,
)
from president_env.core.actions import decode  # noqa: E402
from president_env.core.cards import RANK_NAMES  # noqa: E402
from president_env.core.observation import layout, observe  # noqa: E402
from president_env.core.rule_space import rule_suite  # noqa: E402
from president_env.core.rules import Rules  # noqa: E402
from president_env.core.vec_game import VecGame  # noqa: E402
from president_env.training.cli import main  # noqa: E402
from president_env.training.config import UniversalConfig, from_dict, load_config  # noqa: E402
from president_env.training.universal import UniversalTrainer  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
TABLES = [
    Rules(n_players=3),
    Rules(),
    Rules(n_players=5, jokers=2, manches=3),
    Rules(n_players=6, decks=2, twos_wild=True),
    Rules(n_players=8, decks=2, jokers=4, revolution=True, manches=5),
]


def positions(rules: Rules, n: int = 16, steps: int = 40, seed: int = 0) -> VecGame:
    """A game of ``n`` slots played ``steps`` random legal steps in (through manches and exchanges)."""
    game = VecGame(rules, batch_size=n, seed=seed)
    rng = np.random.default_rng(seed)
    for _ in range(steps):
        mask = game.legal_mask()
        game.step(np.array([rng.choice(np.flatnonzero(m)) for m in mask]))
    return game


@pytest.mark.parametrize("rules", TABLES, ids=lambda r: f"{r.n_players}p{r.decks}d{r.jokers}j")
def test_every_action_maps_to_the_universal_action_of_the_same_meaning_and_back(rules):
    native = np.arange(rules.num_actions)
    universal = to_universal(rules, native)
    assert np.array_equal(to_native(rules, universal), native)
    assert len(set(universal.tolist())) == rules.num_actions
    for a, u in zip(native, universal):
        meaning = decode(rules, int(a))
        if meaning[0] == "pass":
            assert u == 0
        elif meaning[0] == "play":
            assert u == 1 + RANK_NAMES.index(meaning[1]) * MAX_COUNT + meaning[2] - 1
        else:
            assert u == 1 + MAX_RANKS * MAX_COUNT + RANK_NAMES.index(meaning[1])
    missing = np.flatnonzero(action_map(rules)[1] < 0)
    assert len(missing) == NUM_ACTIONS - rules.num_actions
    if len(missing):
        with pytest.raises(ValueError, match="do not exist under these rules"):
            to_native(rules, missing[:1])


@pytest.mark.parametrize("rules", TABLES, ids=lambda r: f"{r.n_players}p{r.decks}d{r.jokers}j")
def test_the_legal_mask_maps_exactly_and_the_encoding_reads_back_the_observation(rules):
    game = positions(rules)
    mask, obs = game.legal_mask(), game.observe()
    umask = universal_mask(rules, mask)
    to_u = action_map(rules)[0]
    assert np.array_equal(umask[:, to_u], mask) and umask.sum() == mask.sum()
    x = encode(rules, obs)
    assert x.shape == (len(obs), OBS_SIZE) and x.dtype == np.float32
    view, at = layout(rules).view(obs), segment_slices()
    p, r = rules.n_players, rules.n_ranks
    hand = x[:, at["hand"]].reshape(-1, MAX_RANKS, MAX_COUNT).sum(axis=2)
    assert np.array_equal(hand[:, :r], view["hand"]) and not hand[:, r:].any()
    played = x[:, at["played"]].reshape(-1, MAX_PLAYERS, MAX_RANKS) * 8
    assert np.allclose(played[:, :p, :r], view["played"]) and not played[:, p:].any()
    assert np.array_equal(x[:, at["seat_exists"]].sum(axis=1), np.full(len(x), p))
    assert np.allclose(x[:, at["held"]][:, :p] * 13, view["held"])
    assert np.allclose(x[:, at["scores"]][:, p:], 0)
    assert np.array_equal(x[:, at["rules"]][:, :6].argmax(axis=1), np.full(len(x), p - 3))
    roles = x[:, at["roles"]].reshape(-1, MAX_PLAYERS, 5)
    assert np.array_equal(np.where(roles.any(axis=2), roles.argmax(axis=2), -1)[:, :p], view["roles"])


def test_the_encoding_knows_no_hidden_card_and_the_actor_ignores_the_perfect_critics_input():
    rules = Rules(n_players=5, manches=2)
    game = positions(rules, n=8, steps=12)
    other = swap_hidden_cards(rules, game.state)
    x = encode(rules, observe(rules, game.state))
    assert np.array_equal(x, encode(rules, observe(rules, other)))
    seen, swapped = hidden_hands(game.state, game.state.current), hidden_hands(other, other.current)
    assert not np.array_equal(seen, swapped)
    net = UniversalNet(hidden=(32,), critic="perfect")
    mask = torch.ones(len(x), NUM_ACTIONS, dtype=torch.bool)
    logits_a, value_a = net(torch.from_numpy(np.concatenate([x, seen], 1)), mask)
    logits_b, value_b = net(torch.from_numpy(np.concatenate([x, swapped], 1)), mask)
    assert torch.equal(logits_a, logits_b) and not torch.equal(value_a, value_b)


def tiny_config(tmp_path, **extra):
    data = {
        "tables": [{"rules": "standard", "n_players": 3}, {"rules": "big_table"}],
        "manches": 2,
        "eval_tables": [0],
        "seed": 3,
        "out_dir": str(tmp_path / "run"),
        "ppo": {"num_envs": 4, "num_steps": 12, "num_minibatches": 2, "anneal_lr": False},
        "network": {"hidden": [32], "critic": "perfect"},
        "opponents": {
            "self_play": 0.3,
            "snapshots": 0.3,
            "baselines": {"heuristic-3": 0.2, "style-hoarder": 0.1, "random": 0.1},
            "snapshot_every": 1,
            "pool_size": 2,
        },
        "budget": {"total_steps": 4 * 96, "eval_every": 0, "eval_deals": 1, "checkpoint_every": 2},
    }
    for key, value in extra.items():
        data[key] = {**data[key], **value} if isinstance(value, dict) else value
    return from_dict({"kind": "universal", **data})


def test_a_tiny_run_resumes_bit_for_bit_from_its_compact_checkpoint(tmp_path):
    whole = UniversalTrainer(tiny_config(tmp_path / "a"), progress=False)
    whole.train()
    first = UniversalTrainer(tiny_config(tmp_path / "b", budget={"total_steps": 2 * 96}), progress=False)
    first.train()
    checkpoint = tmp_path / "b" / "run" / "checkpoint.pt"
    assert checkpoint.stat().st_size < 10_000_000
    resumed = UniversalTrainer.resume(checkpoint, progress=False, overrides=["budget.total_steps=384"])
    assert resumed.update == 2 and resumed.segment == 1
    resumed.train()
    assert resumed.update == whole.update == 4
    for name, tensor in whole.net.state_dict().items():
        assert torch.equal(tensor, resumed.net.state_dict()[name]), name
    with pytest.raises(ValueError, match="an exported policy, not a training checkpoint"):
        UniversalTrainer.resume(tmp_path / "b" / "run" / "policy.pt", progress=False)
    with pytest.raises(ValueError, match="accepts budget"):
        UniversalTrainer.resume(checkpoint, progress=False, overrides=["ppo.learning_rate=1e-2"])
    other_machine = UniversalTrainer.resume(checkpoint, progress=False, overrides=["threads=2", "device=cpu"])
    assert other_machine.config.threads == 2 and other_machine.update == resumed.update
    other_machine.close()


def test_president_train_runs_and_resumes_a_universal_config(tmp_path, capsys):
    config = tiny_config(tmp_path, budget={"total_steps": 96, "checkpoint_every": 1})
    path = config.save(tmp_path / "universal.yaml")
    assert main(["--config", str(path), "--no-progress"]) == 0
    checkpoint = tmp_path / "run" / "checkpoint.pt"
    assert main(["--resume", str(checkpoint), "--set", "budget.total_steps=192", "--no-progress"]) == 0
    assert UniversalTrainer.resume(checkpoint, progress=False).update == 2
    assert main(["--resume", str(checkpoint), "--set", "seed=4", "--no-progress"]) == 2
    assert "--resume accepts budget.*" in capsys.readouterr().err


def test_a_stop_file_ends_the_sitting_with_a_checkpoint_and_is_removed(tmp_path):
    trainer = UniversalTrainer(tiny_config(tmp_path), progress=False)
    (tmp_path / "run").mkdir()
    (tmp_path / "run" / "STOP").touch()
    trainer.train()
    assert trainer.update == 0 and not (tmp_path / "run" / "STOP").exists()
    assert UniversalTrainer.resume(tmp_path / "run" / "checkpoint.pt", progress=False).segment == 0


def test_the_saved_policy_plays_matches_through_the_exchange_at_3_5_and_8_players(tmp_path):
    trainer = UniversalTrainer(tiny_config(tmp_path, budget={"total_steps": 96}), progress=False)
    trainer.train()
    policy = tmp_path / "run" / "policy.pt"
    for rules in (Rules(n_players=3, manches=3), Rules(n_players=5, manches=3), TABLES[-1]):
        agent = agents.make(policy, rules, seed=0)
        assert isinstance(agent, UniversalAgent) and agent.rules == rules
        game = VecGame(rules, batch_size=4, seed=1)
        ended, gives, manches = np.zeros(game.batch_size, bool), 0, 0
        while not ended.all():  # every slot plays one whole match (then a new one, not counted)
            mask = game.legal_mask()
            actions = agent.act_batch(game.observe(), mask)
            assert mask[np.arange(game.batch_size), actions].all()
            gives += int((to_universal(rules, actions)[~ended] > MAX_RANKS * MAX_COUNT).sum())
            events = game.step_events(actions)
            manches += int(events.manche_over[~ended].sum())
            ended |= events.game_over
        assert manches >= 4 * rules.manches
        assert gives > 0, "the agent never gave back cards in the exchange"


def test_the_shipped_config_loads_and_round_trips(tmp_path):
    config = load_config(ROOT / "configs" / "train" / "universal.yaml")
    assert isinstance(config, UniversalConfig)
    saved = tmp_path / "config.yaml"
    assert load_config(config.save(saved)) == config
    assert len({(r.n_players, r.decks) for r in config.table_rules()}) >= 4


def test_the_command_line_refuses_bad_configs_in_one_line(tmp_path, capsys):
    bad = tmp_path / "bad.yaml"
    bad.write_text("kind: universal\ntables: [{rules: nowhere}]\n")
    assert main(["--config", str(bad), "--no-progress"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("president-train: error: tables[0].rules") and "nowhere" in err and "\n" not in err
    bad.write_text("kind: universal\nppo: {num_envz: 3}\n")
    assert main(["--config", str(bad), "--no-progress"]) == 2
    assert "num_envz" in capsys.readouterr().err
    assert main(["--resume", str(tmp_path / "none.pt"), "--no-progress"]) == 2
    assert "no such checkpoint file" in capsys.readouterr().err


# ---------------------------------------------------------------- the rule space, the groups, the device
def rules_config(tmp_path, **extra):
    """A tiny run whose tables are all drawn from the rule space (two a segment), with the champion evaluated."""
    data = {
        "tables": [],
        "eval_tables": [],
        "rule_space": {"draws": 2, "preset_share": 0.5},
        "rule_eval": {"seed": 5, "tables": 1, "opponent": "random", "deals": 1, "every": 2, "champion_every": 1,
                      "champion_deals": 1},
    }  # fmt: skip
    config = tiny_config(tmp_path).to_dict()
    config.update(data)
    for key, value in extra.items():
        config[key] = {**config[key], **value} if isinstance(value, dict) else value
    return from_dict(config)


def test_a_rule_space_run_draws_new_tables_each_segment_and_resumes_bit_for_bit(tmp_path):
    whole = UniversalTrainer(rules_config(tmp_path / "a"), progress=False)
    first_tables = list(whole.rules)
    whole.train()
    assert whole.segment == 2 and whole.rules != first_tables  # a segment of 2 updates: new rule sets after each
    metrics = [json.loads(line) for line in (tmp_path / "a" / "run" / "metrics.jsonl").read_text().splitlines()]
    assert {"rule_eval/champion/generation", "rule_eval/champion/advantage_ci"} <= set(metrics[0])
    assert "rule_eval/random/advantage" in metrics[1] and "rule_eval/random/advantage" not in metrics[0]
    evaluation = whole.evaluate()  # no fixed table: the learning curve is the rule_eval tables' against heuristic-3
    assert evaluation["eval/advantage"] == evaluation["eval/rules-0/advantage"]
    assert whole.eval_rules == [r for r in rule_suite(5, 50) if r.n_players <= 5][:1]
    first = UniversalTrainer(rules_config(tmp_path / "b", budget={"total_steps": 2 * 96}), progress=False)
    first.train()
    checkpoint = tmp_path / "b" / "run" / "checkpoint.pt"
    resumed = UniversalTrainer.resume(checkpoint, progress=False, overrides=["budget.total_steps=384"])
    assert resumed.rules == first.rules and resumed.champion_generation == first.champion_generation
    for name, tensor in first.champion.state_dict().items():
        assert torch.equal(tensor, resumed.champion.state_dict()[name]), name
    resumed.train()
    assert resumed.update == whole.update == 4 and resumed.rules == whole.rules
    for name, tensor in whole.net.state_dict().items():
        assert torch.equal(tensor, resumed.net.state_dict()[name]), name


def test_a_table_is_named_by_its_preset_or_file_and_rules_given_as_text_by_a_short_word():
    from president_env.core.presets import resolve_rules
    from president_env.training.config import TableConfig
    from president_env.training.universal import table_name

    sampled = str(Path(__file__).resolve().parents[1] / "configs" / "rules" / "tables" / "sampled_5150.yaml")
    text = resolve_rules("quebec").to_yaml()
    names = [table_name(resolve_rules(spec), TableConfig(rules=spec)) for spec in ("big_table", sampled, text)]
    assert names == ["big_table-8p", "sampled_5150-7p", "inline-4p"]  # YAML text never becomes a metric's name


def test_the_tables_split_over_groups_of_their_own_train_the_same_run(tmp_path):
    from president_env.evaluation.distributed import LocalGroup
    from president_env.training.universal import TableGroup

    class Apart(LocalGroup):
        local = False  # each member holds its own network and is given the weights, as a Ray actor is

    config = rules_config(tmp_path, rule_space={"draws": 3}, rule_eval={"tables": 0}, budget={"eval_every": 0})
    together = UniversalTrainer(config, progress=False)
    apart = UniversalTrainer(config, progress=False)
    apart.groups = Apart([TableGroup(config.to_dict(), [0, 2]), TableGroup(config.to_dict(), [1])])
    apart.start_segment()
    for trainer in (together, apart):
        for _ in range(3):  # across a segment's end
            trainer.train_step()
            if trainer.update % 2 == 0:
                trainer.checkpoint()
    for name, tensor in together.net.state_dict().items():
        assert torch.equal(tensor, apart.net.state_dict()[name]), name


@pytest.mark.slow
@pytest.mark.ray
def test_a_run_on_two_ray_workers_is_the_same_run_as_in_process(tmp_path, local_ray):
    config = rules_config(tmp_path, rule_space={"draws": 3}, rule_eval={"tables": 0}, budget={"eval_every": 0})
    here = UniversalTrainer(config, progress=False)
    for _ in range(3):
        here.train_step()
    there = UniversalTrainer(from_dict({**config.to_dict(), "rollout": {"workers": 2}}), progress=False)
    try:
        for _ in range(3):
            there.train_step()
        assert not there.groups.local and len(there.groups.actors) == 2
    finally:
        there.close()
    for name, tensor in here.net.state_dict().items():
        assert torch.equal(tensor, there.net.state_dict()[name]), name


def test_the_learner_device_is_a_setting_cuda_is_refused_in_one_line_where_absent(tmp_path, capsys):
    trainer = UniversalTrainer(tiny_config(tmp_path, device="auto"), progress=False)
    expected = "cuda" if torch.cuda.is_available() else "cpu"
    assert trainer.device.type == expected and (trainer.learner is trainer.net) == (expected == "cpu")
    if torch.cuda.is_available():
        pytest.skip("a CUDA device is present: the refusal cannot be shown")
    path = tiny_config(tmp_path, device="cuda").save(tmp_path / "cuda.yaml")
    assert main(["--config", str(path), "--no-progress"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("president-train: error: device: cuda was asked for but torch sees no CUDA device")
    assert "\n" not in err
    with pytest.raises(ValueError, match="device must be one of cpu, cuda, auto"):
        from_dict({"kind": "universal", "device": "tpu"})


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")
def test_a_learner_on_cuda_trains_what_the_cpu_learner_trains_and_its_checkpoint_resumes_on_cpu(tmp_path):
    on_cpu = UniversalTrainer(tiny_config(tmp_path / "cpu", budget={"total_steps": 2 * 96}), progress=False)
    on_gpu = UniversalTrainer(
        tiny_config(tmp_path / "gpu", device="cuda", budget={"total_steps": 2 * 96}), progress=False
    )
    on_cpu.train()
    on_gpu.train()
    for name, tensor in on_cpu.net.state_dict().items():
        assert torch.allclose(tensor, on_gpu.net.state_dict()[name], atol=1e-3), name
    resumed = UniversalTrainer.resume(
        tmp_path / "gpu" / "run" / "checkpoint.pt", progress=False, overrides=["device=cpu"]
    )
    assert resumed.device.type == "cpu" and resumed.update == 2


def test_the_learning_curve_draws_the_rule_evaluations_beside_the_evaluation(tmp_path):
    pytest.importorskip("matplotlib")
    from president_env.training.curves import plot_learning_curve

    first = {"update": 20, "global_step": 10, "elapsed_s": 60.0, "eval/advantage": 0.2, "eval/advantage_ci": 0.1}
    first.update({"rule_eval/champion/advantage": 0.05, "rule_eval/champion/advantage_ci": 0.1})
    first["rule_eval/champion/0/advantage"] = 1.0  # a table's own figure: not a series
    second = {**first, "update": 40, "global_step": 20, "elapsed_s": 120.0, "rule_eval/champion/advantage": 0.12}
    records = [first, second]
    (tmp_path / "metrics.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    path = plot_learning_curve(tmp_path)
    assert path == tmp_path / "learning_curve.png" and path.stat().st_size > 10_000


def test_no_training_config_plays_the_held_out_styles():
    """The styles kept out of training, to measure the learned agents against, stay out of every config."""
    configs = sorted(p for p in (ROOT / "configs" / "train").glob("*.yaml") if not p.stem.startswith("league"))
    assert len(configs) >= 5  # league*.yaml name these configs (their runs are checked in tests/test_league.py)
    for path in configs:
        baselines = load_config(path).opponents.baselines
        assert not set(HELD_OUT_STYLES) & set(baselines), f"{path.name} trains against a held-out style"


def test_the_device_check_times_each_device_and_compares_their_weights(tmp_path, monkeypatch):
    """``benchmarks/bench_learner_device.py``, issue 33's check for a machine with a GPU, runs here on the CPU: the
    same run twice trains the same weights, and a device torch does not see is reported, not run."""
    import importlib.util

    spec = importlib.util.spec_from_file_location(
        "bench_learner_device", ROOT / "benchmarks" / "bench_learner_device.py"
    )
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    path = tiny_config(tmp_path).save(tmp_path / "tiny.yaml")
    monkeypatch.chdir(tmp_path)
    results = bench.main(["--config", str(path), "--devices", "cpu,cpu,cuda", "--updates", "2"])
    first, again, cuda = results
    assert first["env_steps_per_s"] > 0 and first["update_s_per_update"] > 0 and first["rollout_s_per_update"] > 0
    # the same run twice on one device trains the same weights
    assert first["max_weight_difference"] == 0.0 and again["max_weight_difference"] == 0.0
    assert cuda.get("absent", False) == (not torch.cuda.is_available())
    assert (tmp_path / "bench_learner_device.json").is_file()
