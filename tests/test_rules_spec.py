"""The one door for a rules spec: ``president_env.core.presets.resolve_rules`` and every entry point that uses it."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import gymnasium
import pytest

import president_env as pe
from president_env.core.presets import load_preset, preset_path, resolve_rules

PARTY = preset_path("party")
EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "sb3_maskable_ppo.py"


@pytest.mark.parametrize(
    "spec",
    [
        pytest.param(None, id="none"),
        pytest.param(pe.Rules(), id="rules"),
        pytest.param("standard", id="preset"),
        pytest.param({}, id="empty-mapping"),
        pytest.param("n_players: 4\n", id="yaml-text"),
        pytest.param(str(preset_path("standard")), id="path-str"),
        pytest.param(preset_path("standard"), id="path"),
    ],
)
def test_every_kind_of_spec_gives_the_standard_game(spec):
    assert resolve_rules(spec) == load_preset("standard")


def test_each_kind_keeps_its_own_values(tmp_path):
    party = load_preset("party")
    assert resolve_rules("party") == party
    assert resolve_rules(PARTY) == party and resolve_rules(str(PARTY)) == party
    assert resolve_rules(party.to_dict()) == party
    assert resolve_rules(party.to_yaml()) == party
    assert resolve_rules("{n_players: 5, revolution: true}") == pe.Rules(n_players=5, revolution=True)
    rules = pe.Rules(n_players=6)
    assert resolve_rules(rules) is rules
    path = tmp_path / "six"  # a file without a .yaml suffix, named by a bare relative-looking string
    path.write_text("n_players: 6\n")
    assert resolve_rules(str(path)) == rules
    colon = tmp_path / "table:six.yaml"  # an existing file is read as a file, even with a colon in its name
    colon.write_text("n_players: 6\n")
    assert resolve_rules(str(colon)) == rules


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        (42, "got int 42"),
        (b"standard", "got bytes"),
        (["standard"], "got list"),
        (object(), "got object"),
        ("nope", "'nope' is neither a rules preset (standard, quebec"),
        ("", "'' is neither a rules preset"),
        ("no/such/table.yaml", "rules file 'no/such/table.yaml' does not exist"),
        ("table.yml", "rules file 'table.yml' does not exist"),
        (Path("no/such/table.yaml"), "does not exist"),
        ("n_players: 9", "n_players must be an integer from 3 to 8, got 9"),
        ("colour: red", "unknown rules field(s) 'colour'"),
        ("n_players: [", "rules YAML text is not valid YAML"),
        ({"n_players": 2}, "n_players must be an integer from 3 to 8, got 2"),
        ({"bogus": 1}, "unknown rules field(s) 'bogus'"),
    ],
)
def test_bad_specs_raise_one_value_error_naming_what_is_wrong(spec, message):
    with pytest.raises(ValueError) as caught:
        resolve_rules(spec)
    assert message in str(caught.value)
    assert len(str(caught.value)) < 400


def test_a_folder_or_a_binary_file_is_refused(tmp_path):
    with pytest.raises(ValueError, match="does not exist or is not a file"):
        resolve_rules(tmp_path)
    binary = tmp_path / "rules.yaml"
    binary.write_bytes(b"\xff\xfe\x00")
    with pytest.raises(ValueError, match="is not UTF-8"):
        resolve_rules(binary)


def test_an_alias_bomb_is_refused_before_it_is_expanded():
    lines = ["a0: &a0 [x, x, x, x, x, x, x, x, x, x]"]
    lines += [f"a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 10) + "]" for i in range(1, 9)]
    with pytest.raises(ValueError, match="values once its aliases"):
        resolve_rules("\n".join(lines))


# ---- every entry point goes through it -------------------------------------------------------------------
def test_the_aec_env_takes_a_yaml_path():
    env = pe.env(rules=str(PARTY))
    assert env.unwrapped.rules == load_preset("party")
    with pytest.raises(ValueError, match="neither a rules preset"):
        pe.env(rules="nope")


def test_the_gym_env_takes_a_yaml_path_and_a_mapping():
    assert pe.gym_env(rules=str(PARTY)).rules == load_preset("party")
    assert pe.gym_env(rules={"n_players": 5}).rules == pe.Rules(n_players=5)


def test_the_vector_env_and_make_vec_take_a_yaml_path():
    venv = gymnasium.make_vec(
        "president_env/President-v0", num_envs=2, vectorization_mode="vector_entry_point", rules=str(PARTY)
    )
    assert venv.unwrapped.rules == load_preset("party")
    assert pe.vector_env(2, rules="n_players: 5").rules == pe.Rules(n_players=5)
    assert pe.VecGame(PARTY, batch_size=1, seed=0).rules == load_preset("party")


def test_the_training_config_takes_a_path_and_yaml_text():
    pytest.importorskip("pydantic")  # the train extra
    from president_env.training.config import load_config

    assert load_config(None, [f"rules={PARTY}"]).resolve_rules() == load_preset("party")
    with pytest.raises(ValueError, match="neither a rules preset"):
        load_config(None, ["rules=nope"])


def test_the_rllib_env_creator_takes_a_path():
    pytest.importorskip("ray.rllib")
    from president_env.training.rllib_ppo import make_env

    env = make_env({"rules": str(PARTY)})
    assert env.env.unwrapped.rules == load_preset("party")


def test_the_sb3_example_exits_2_with_one_line_for_bad_rules(capsys):
    pytest.importorskip("sb3_contrib")
    spec = importlib.util.spec_from_file_location("sb3_maskable_ppo_rules", EXAMPLE)
    example = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(example)
    assert example.main(["--rules", "nope"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "'nope' is neither a rules preset" in err
