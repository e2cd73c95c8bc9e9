"""Training configs (``training/config.py``): typed, strict, overridable, round-tripping."""

import re
from pathlib import Path

import pytest

pytest.importorskip("pydantic")  # the train extra

from president_env.training.config import TrainConfig, from_dict, load_config  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent

# universal*.yaml are kind: universal configs of training/universal.py (tested in tests/test_universal.py and
# tests/test_rule_space.py); league*.yaml configure training/league.py, not one run (tests/test_league.py); the
# retired per-table agents' recipes sit beside their figures in docs/results/.
RECIPES = sorted((ROOT / "docs" / "results").rglob("recipe.yaml"))
RUN_CONFIGS = sorted(p for p in (ROOT / "configs" / "train").glob("*.yaml") if not p.stem.startswith("league"))
CONFIGS = [p for p in RUN_CONFIGS if not p.stem.startswith("universal")] + RECIPES


@pytest.mark.parametrize("path", CONFIGS, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_shipped_configs_load_and_round_trip(path, tmp_path):
    config = load_config(path)
    assert isinstance(config, TrainConfig)
    saved = config.save(tmp_path / "config.yaml")
    assert load_config(saved) == config


def test_every_recipe_trains_on_one_torch_thread():
    """Issue 35: on a busy 2-core machine the standard_4p recipe's 2 threads trained 2.4 to 6.3 times slower than
    1 (docs/training.md); every shipped recipe, the universal one included, sets the fastest."""
    assert len(RECIPES) == 9  # the nine retired per-table agents'
    for path in [*RUN_CONFIGS, *RECIPES]:
        assert load_config(path).threads == 1, path.name


def test_defaults_are_valid_and_overrides_are_typed():
    config = load_config(None, ["ppo.learning_rate=3e-4", "network.hidden=[64, 64]", "budget.time_limit_min=null"])
    assert config.ppo.learning_rate == 3e-4 and config.network.hidden == [64, 64]
    assert config.budget.time_limit_min is None
    assert load_config(None, ["ppo.gamma=1"]).ppo.gamma == 1.0  # an int where a float is expected


@pytest.mark.parametrize(
    "override, message",
    [
        ("ppo.lerning_rate=0.1", "unknown key 'ppo.lerning_rate'"),
        ("optimizer.lr=0.1", "unknown key 'optimizer'"),
        ("ppo.num_envs=many", "ppo.num_envs must be an integer"),
        ("ppo.num_envs=true", "ppo.num_envs must be an integer"),
        ("ppo.num_envs=1.0", "ppo.num_envs must be an integer"),
        ("ppo.num_envs='4'", "ppo.num_envs must be an integer"),
        ("ppo.gamma=true", "ppo.gamma must be a finite number in [0, 1], got True"),
        ("ppo.gamma=[1]", "ppo.gamma must be a finite number"),
        ("ppo.anneal_lr=1", "ppo.anneal_lr must be true or false"),
        ("network.hidden=64", "network.hidden must be a non-empty list, got 64"),
        ("ppo.num_envs=0", "ppo.num_envs must be an integer from 1 to 1048576, got 0"),
        ("ppo.gae_lambda=1.5", "ppo.gae_lambda must be a finite number in [0, 1], got 1.5"),
        ("opponents.self_play=0.9", "must sum to 1"),
        ("opponents.baselines={heuristic-3: -1}", "opponents.baselines.heuristic-3 must be a finite number in [0, 1]"),
        ("opponents.max_players={mc-4: 5}", "max_players names 'mc-4', which is not among the baselines"),
        ("opponents.max_players={heuristic-3: 9}", "max_players.heuristic-3 must be an integer from 3 to 8, got 9"),
        ("opponents.max_players={heuristic-3: x}", "max_players.heuristic-3 must be an integer from 3 to 8, got 'x'"),
        ("rules=no_such_preset", "neither a rules preset"),
        ("ppo=3", "ppo must be a mapping"),
        ("ppo.learning_rate", "section.field=value"),
        ("ppo={lerning_rate: 0.1, num_envs: 0}", "unknown key 'ppo.lerning_rate'"),  # a typo before the rest
        ("ppo.num_envs.x=1", "ppo.num_envs must be an integer"),
    ],
)
def test_bad_values_are_errors_naming_the_key(override, message):
    with pytest.raises(ValueError, match=re.escape(message)):
        load_config(None, [override])


def test_bad_files_are_errors(tmp_path):
    with pytest.raises(ValueError, match="does not exist"):
        load_config(tmp_path / "nope.yaml")
    bad = tmp_path / "bad.yaml"
    bad.write_text("ppo: [unclosed\n")
    with pytest.raises(ValueError, match="not valid YAML"):
        load_config(bad)
    bad.write_text("- a list\n")
    with pytest.raises(ValueError, match="must hold a mapping"):
        load_config(bad)
    bad.write_text("!!python/object/apply:os.system ['true']\n")  # safe_load refuses tags that build objects
    with pytest.raises(ValueError, match="not valid YAML"):
        load_config(bad)


def test_rules_may_be_a_yaml_file(tmp_path):
    import president_env as pe

    path = tmp_path / "five.yaml"
    pe.Rules(n_players=5).to_yaml(path)
    assert load_config(None, [f"rules={path}"]).resolve_rules() == pe.Rules(n_players=5)


def test_manches_replaces_the_match_length_of_the_rules():
    import president_env as pe

    assert load_config(None, ["rules=party"]).resolve_rules() == pe.load_preset("party")
    assert load_config(None, ["rules=party", "manches=1"]).resolve_rules() == pe.load_preset("party").replace(manches=1)
    # The shipped agents' recipes name the single manches their agents were trained on.
    for path in RECIPES:  # the retired per-table agents trained on single manches
        assert load_config(path).resolve_rules().manches == 1, path
    assert load_config("quick").resolve_rules().manches == pe.Rules().manches > 1  # the main job plays matches
    assert load_config("probe").resolve_rules().manches == pe.Rules().manches  # a probe plays the preset's match
    with pytest.raises(ValueError, match="manches must be an integer from 1 to 100 or null, got 0"):
        load_config(None, ["manches=0"])


def test_shipped_configs_load_by_name():
    assert load_config("quick") == load_config(Path(__file__).resolve().parent.parent / "configs/train/quick.yaml")
    with pytest.raises(
        ValueError, match="shipped configs by name: probe, probe_scratch, quick, universal, universal_rules"
    ):
        load_config("no_such_config")


def test_numbers_in_words_of_yaml_1_1_are_read_as_numbers():
    """YAML 1.1 reads ``3e-4`` (no dot) as a string; a float field reads the number it spells, nothing else does."""
    config = load_config(None, ["ppo.learning_rate=3e-4", "ppo.target_kl='0.02'", "budget.time_limit_min=1e2"])
    assert (config.ppo.learning_rate, config.ppo.target_kl, config.budget.time_limit_min) == (3e-4, 0.02, 100.0)
    with pytest.raises(ValueError, match="ppo.num_envs must be an integer"):
        load_config(None, ["ppo.num_envs=1e3"])


def restricted(config: dict, like: dict) -> dict:
    """``config`` with only the keys (at every level of sections) that ``like`` has."""
    return {k: restricted(config[k], v) if isinstance(v, dict) else config[k] for k, v in like.items()}


def test_shipped_agents_training_configs_still_load(monkeypatch):
    """The config each shipped checkpoint stores (written by the dataclass config before pydantic) loads unchanged;
    fields added since (``rollout``, ``budget.anneal_steps``) get their defaults."""
    pytest.importorskip("torch")
    from president_env.agents.checkpoint import load_checkpoint

    monkeypatch.chdir(ROOT)  # some name their rules by a path relative to the repository
    checkpoints = sorted((ROOT / "agents" / "checkpoints").glob("*.pt"))
    assert checkpoints
    for path in checkpoints:
        stored = load_checkpoint(path)["config"]
        config = from_dict(stored).to_dict()
        assert restricted(config, stored) == stored, path.name
        assert from_dict(config).to_dict() == config


def test_values_that_each_validate_but_need_more_memory_than_the_machine_are_refused_before_the_run(tmp_path, capsys):
    from president_env.training.cli import main

    overrides = ["ppo.num_envs=1048576", "ppo.num_steps=65536"]  # each within its range: 512 GiB of rows and more
    with pytest.raises(ValueError, match=r"ppo.num_envs x ppo.num_steps = 1,048,576 x 65,536 decisions need about"):
        load_config(None, overrides)
    out = tmp_path / "run"
    assert main([*(x for item in overrides for x in ("--set", item)), "--out-dir", str(out), "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "lower ppo.num_envs or ppo.num_steps" in err, err
    assert not out.exists()


def test_the_memory_estimate_is_that_of_the_rollout(monkeypatch):
    from president_env.training import config as config_module

    default = load_config(None)
    need = config_module.rollout_bytes(default.resolve_rules(), default.ppo.num_envs, default.ppo.num_steps)
    assert 50 * 2**20 < need < 500 * 2**20  # 2048 games x 32 steps at the standard table: about 110 MiB
    monkeypatch.setattr(config_module, "memory_available", lambda: need - 1)
    with pytest.raises(ValueError, match="need about 109 MiB for one rollout; this machine has 109 MiB"):
        load_config(None)
    load_config(None, ["ppo.num_steps=16"])  # half the rollout fits
    universal = ["kind=universal", "tables=[{rules: standard}, {rules: standard}]"]
    load_config(None, [*universal, "ppo.num_envs=512"])
    with pytest.raises(ValueError, match="at each of 2 tables"):
        load_config(None, [*universal, "ppo.num_envs=1024"])
