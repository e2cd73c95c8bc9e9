"""The rule space draws every value of every ``Rules`` field, only valid rule sets, the same for the same seed; a
config section describes it; the held-out rule-set suite is deterministic, valid, playable by ``ppo-universal``,
and ``president-eval --rule-suite`` reports it and refuses bad arguments in one line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from president_env import agents
from president_env.core.rule_space import (
    ALLOWED_VALUES,
    DEFAULT_SPACE,
    DEFAULT_WEIGHTS,
    HELDOUT_DEAL_SEED,
    HELDOUT_RULE_SEED,
    RuleSpace,
    parse_suite,
    rule_suite,
)
from president_env.core.rules import RULE_FIELDS, Rules
from president_env.evaluation import cli
from president_env.evaluation.suite import evaluate_suite

ROOT = Path(__file__).resolve().parent.parent


def test_every_value_every_field_accepts_has_a_default_weight_above_zero():
    for name in RULE_FIELDS:
        if name == "exchange":
            continue
        assert name in DEFAULT_WEIGHTS, name
    for name, values in ALLOWED_VALUES.items():
        assert set(DEFAULT_WEIGHTS[name]) == set(values), name
        assert all(w > 0 for w in DEFAULT_WEIGHTS[name].values()), name
    assert ALLOWED_VALUES["manches"] == tuple(range(1, 10)) and ALLOWED_VALUES["n_players"] == tuple(range(3, 9))


def test_draws_cover_every_field_value_and_every_exchange_entry_and_are_valid():
    drawn = RuleSpace(preset_share=0.0).draw(11, 3000)
    for name in RULE_FIELDS:
        if name != "exchange":
            assert {getattr(r, name) for r in drawn} == set(ALLOWED_VALUES[name]), name
    assert {len(r.exchange) for r in drawn} == {0, 1, 2, 3, 4}
    assert {k for r in drawn for k in r.exchange} == {1, 2, 3, 4}
    assert {(a, b) for r in drawn if len(r.exchange) == 2 for a, b in [r.exchange]} == {
        (a, b) for a in range(1, 5) for b in range(1, 5)
    }  # the "any" shape: every two-pair exchange, ascending ones too
    for rules in drawn:
        assert Rules.from_dict(rules.to_dict()) == rules  # valid: Rules validates on construction
        assert rules.jokers <= 2 * rules.decks
        assert len(rules.exchange) <= rules.n_players // 2  # no pair the table does not seat


def test_the_same_seed_gives_the_same_rule_sets_and_a_prefix_of_a_longer_draw():
    assert DEFAULT_SPACE.draw(5, 40) == DEFAULT_SPACE.draw(5, 40)
    assert DEFAULT_SPACE.draw(5, 40)[:10] == DEFAULT_SPACE.draw(5, 10)
    assert DEFAULT_SPACE.draw(5, 40) != DEFAULT_SPACE.draw(6, 40)
    for seed, n in ((-1, 3), (True, 3), (1.5, 3), (1, -2)):
        with pytest.raises(ValueError, match="must be an integer >= 0"):
            DEFAULT_SPACE.draw(seed, n)


def test_the_weights_shape_the_draws_and_jokers_stay_within_the_decks():
    space = RuleSpace.from_dict(
        {"preset_share": 0, "weights": {"n_players": {8: 1}, "decks": {1: 1}, "jokers": {4: 10, 1: 1}}}
    )
    drawn = space.draw(0, 200)
    assert {r.n_players for r in drawn} == {8} and {r.decks for r in drawn} == {1}
    assert {r.jokers for r in drawn} == {1}  # 4 jokers need two decks: drawn among the counts one deck allows
    only_zero = RuleSpace.from_dict({"preset_share": 0, "weights": {"decks": {1: 1}, "jokers": {3: 1}}})
    assert {r.jokers for r in only_zero.draw(0, 20)} == {0}


def test_preset_share_draws_presets_at_their_table_size():
    presets = RuleSpace.from_dict(
        {"preset_share": 1, "presets": [{"rules": "standard", "n_players": 3}, {"rules": "party", "weight": 0}]}
    )
    assert set(presets.draw(1, 20)) == {Rules(n_players=3)}
    presets = _presets()
    share = sum(r in presets for r in DEFAULT_SPACE.draw(2, 800)) / 800
    assert 0.2 < share < 0.32  # the default quarter (a free draw is a preset by chance only rarely)


def _presets() -> set[Rules]:
    from president_env.core.presets import load_preset
    from president_env.core.rule_space import DEFAULT_PRESETS

    return {load_preset(n) if p is None else load_preset(n).replace(n_players=p) for n, p, _ in DEFAULT_PRESETS}


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({"weights": {"n_playerz": {3: 1}}}, "weights: unknown field 'n_playerz'"),
        ({"weights": {"n_players": {9: 1}}}, "weights.n_players: 9 is not a value of the field"),
        ({"weights": {"decks": {True: 1}}}, "weights.decks: True is not a value"),
        ({"weights": {"revolution": {True: -1}}}, "weights.revolution.true: weight must be a finite number >= 0"),
        ({"weights": {"revolution": {True: 0, False: 0}}}, "weights.revolution: at least one weight must be above 0"),
        ({"preset_share": 1.5}, "preset_share must be a number from 0 to 1"),
        ({"presets": [{"rules": "nowhere"}]}, "presets: unknown preset 'nowhere'"),
        ({"presets": [{"rules": "standard", "n_players": 9}]}, "n_players must be 3 to 8 or null"),
        ({"presets": [{"rules": "standard", "n_players": 4.0}]}, "n_players must be 3 to 8 or null"),
        ({"presets": [{"rules": "standard", "weight": 0}]}, "no preset has a weight above 0"),
        ({"colour": 1}, "unknown key(s) colour"),
    ],
)
def test_a_bad_space_is_refused_in_one_line_naming_what_is_wrong(data, message):
    with pytest.raises(ValueError) as err:
        RuleSpace.from_dict(data)
    assert message in str(err.value) and "\n" not in str(err.value)


def test_the_config_section_holds_the_whole_distribution_and_round_trips(tmp_path):
    pytest.importorskip("pydantic")
    from president_env.training.config import from_dict, load_config

    config = from_dict({"kind": "universal", "tables": [], "eval_tables": [], "budget": {"eval_every": 0},
                        "rule_space": {"draws": 3, "weights": {"n_players": {3: 1, 8: 2}}}})  # fmt: skip
    assert config.rule_space.weights["n_players"] == {3: 1.0, 8: 2.0}
    assert config.rule_space.weights["manches"] == DEFAULT_WEIGHTS["manches"]  # the defaults filled in
    assert load_config(config.save(tmp_path / "c.yaml")) == config
    assert config.rule_space.space().draw(4, 5) == RuleSpace.from_dict(config.rule_space.space().to_dict()).draw(4, 5)
    with pytest.raises(ValueError, match=r"^rule_space: weights.n_players: 2 is not a value") as err:
        from_dict({"kind": "universal", "rule_space": {"weights": {"n_players": {2: 1}}}})
    assert "\n" not in str(err.value)
    with pytest.raises(ValueError, match="a run needs at least one table, or a rule_space"):
        from_dict({"kind": "universal", "tables": [], "eval_tables": []})


def test_the_long_run_config_round_trips_and_keeps_the_held_out_seeds_out(tmp_path):
    pytest.importorskip("pydantic")
    from president_env.training.config import load_config

    config = load_config(ROOT / "configs" / "train" / "universal_rules.yaml")
    assert load_config(config.save(tmp_path / "config.yaml")) == config
    held_out = {HELDOUT_RULE_SEED, HELDOUT_DEAL_SEED}
    assert config.rule_eval.seed not in held_out and config.seed not in held_out
    assert config.rule_space is not None  # it starts from ppo-universal's first weights, kept under results/
    assert config.init.weights == "results/experiments/universal/sitting3/checkpoint.pt"
    assert (ROOT / config.init.weights).is_file()
    with pytest.raises(ValueError, match="rule_eval.seed: 20261204 is a held-out seed of the rule-set suite"):
        load_config(ROOT / "configs" / "train" / "universal_rules.yaml", ["rule_eval.seed=20261204"])


# ---------------------------------------------------------------- the suite
def test_the_suite_is_deterministic_free_of_presets_valid_and_playable_by_ppo_universal():
    suite = rule_suite(HELDOUT_RULE_SEED, 20)
    assert suite == rule_suite(HELDOUT_RULE_SEED, 20) and suite[:5] == rule_suite(HELDOUT_RULE_SEED, 5)
    assert suite != rule_suite(HELDOUT_RULE_SEED + 1, 20) and len(set(suite)) == 20
    assert not set(suite) & _presets()
    for rules in suite:
        assert Rules.from_yaml(rules.to_yaml()) == rules
    pytest.importorskip("torch", reason="ppo-universal needs the train extra")
    for rules in suite:
        agent = agents.make("ppo-universal", rules)
        assert agent.rules == rules


@pytest.mark.parametrize("text", ["7", "x:3", "7:0", "7:1001", "7:3:1", "", "-1:3"])
def test_a_bad_suite_is_refused_in_one_line(text):
    with pytest.raises(ValueError) as err:
        parse_suite(text)
    assert str(err.value).startswith("--rule-suite") and "\n" not in str(err.value)
    assert parse_suite("20261204:20") == (20261204, 20)


def test_evaluate_suite_is_deterministic_given_the_two_seeds():
    options = dict(n_deals=2, seed=9, progress=False)
    first = evaluate_suite("heuristic-2", ["random"], 7, 2, **options)
    again = evaluate_suite("heuristic-2", ["random"], 7, 2, **options)
    assert first.to_dict() == again.to_dict()
    other = evaluate_suite("heuristic-2", ["random"], 7, 2, **{**options, "seed": 10})
    assert other.to_dict()["advantage"] != first.to_dict()["advantage"]
    mean = first.mean("random")
    values = [first.advantage(i, "random") for i in range(2)]
    assert mean.mean == pytest.approx(sum(v.mean for v in values) / 2)
    assert mean.ci == pytest.approx((values[0].ci ** 2 + values[1].ci ** 2) ** 0.5 / 2)


def test_president_eval_rule_suite_writes_each_rule_set_and_the_mean(tmp_path, capsys):
    args = ["--agents", "heuristic-2", "--against", "random", "--rule-suite", "7:2", "--deals", "1", "--no-progress"]
    assert cli.main([*args, "--out", str(tmp_path / "a")]) == 0
    table = capsys.readouterr().out
    assert "rule seed 7" in table and "| mean |" in table and table.count("\n| ") == 4  # header, 2 rule sets, mean
    saved = json.loads((tmp_path / "a" / "suite.json").read_text())
    assert [Rules.from_dict(r) for r in saved["rules"]] == rule_suite(7, 2)
    assert len(saved["advantage"]["random"]["per_rule_set"]) == 2
    assert Rules.from_yaml(tmp_path / "a" / "rules-01" / "rules.yaml") == rule_suite(7, 2)[1]
    assert cli.main([*args, "--out", str(tmp_path / "b")]) == 0
    assert json.loads((tmp_path / "b" / "suite.json").read_text()) == saved


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--against", "random", "--rule-suite", "7"], "--rule-suite must be SEED:N"),
        (["--against", "random", "--rule-suite", "7:0"], "--rule-suite N must be from 1 to 1000"),
        (["--against", "random", "--rule-suite", "7:2", "--rules", "party"], "exclude each other"),
        (["--rule-suite", "7:2"], "--rule-suite needs --against"),
        (["--against", "nobody", "--rule-suite", "7:2"], "'nobody'"),
        (["--against", "random", "--rule-suite", "7:2", "--deals", "0"], "deals"),
    ],
)
def test_president_eval_refuses_a_bad_suite_with_exit_2_and_one_error_line(extra, message, tmp_path, capsys):
    with pytest.raises(SystemExit) as stop:
        cli.main(["--agents", "heuristic-2", *extra, "--out", str(tmp_path / "out"), "--no-progress"])
    assert stop.value.code == 2
    error = [line for line in capsys.readouterr().err.splitlines() if "error:" in line]
    assert len(error) == 1 and message in error[0]
    assert not (tmp_path / "out").exists()


def test_the_probes_sampled_table_is_the_rule_set_its_header_names():
    path = ROOT / "configs" / "rules" / "tables" / "sampled_5150.yaml"
    assert Rules.from_yaml(path.read_text(encoding="utf-8")) == rule_suite(5150, 1)[0]
