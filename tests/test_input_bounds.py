"""Input every entry point reads: the bound on ``manches`` (one constant, ``rules.MAX_MANCHES``), YAML mappings with
a key given twice, and rules paths with a ``:`` in their name."""

from __future__ import annotations

import subprocess
import sys
import time

import numpy as np
import pytest

import president_env as pe
from president_env import agents
from president_env.core.presets import resolve_rules
from president_env.core.rules import MAX_MANCHES
from president_env.core.user_input import load_yaml
from president_env.game.single import SingleGame

MANCHES_ERROR = f"manches must be an integer from 1 to {MAX_MANCHES}, got"


@pytest.mark.parametrize("manches", [10**100, 2**70, 10**9, 1e9, MAX_MANCHES + 1, 0, True])
def test_manches_beyond_the_bound_are_refused_everywhere_with_one_line(manches):
    for make in (
        lambda: pe.Rules(manches=manches),
        lambda: resolve_rules({"manches": manches}),
        lambda: pe.env(rules={"manches": manches}),
        lambda: pe.gym_env(rules={"manches": manches}),
        lambda: pe.vector_env(4, rules={"manches": manches}),
        lambda: pe.VecGame({"manches": manches}, batch_size=2),
        lambda: agents.make("heuristic-3", {"manches": manches}, seed=0),
    ):
        with pytest.raises(ValueError, match=MANCHES_ERROR) as err:
            make()
        assert "\n" not in str(err.value) and len(str(err.value)) < 200


def test_manches_in_yaml_text_is_refused_before_anything_is_allocated():
    started = time.process_time()
    for text in ("manches: 1000000000", "manches: " + "9" * 1000, "manches: 1180591620717411303424"):
        with pytest.raises(ValueError, match=MANCHES_ERROR):
            resolve_rules(text)
    assert time.process_time() - started < 1


def test_president_eval_refuses_a_billion_manches_in_one_line_and_at_once():
    started = time.monotonic()
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "president_env.evaluation.cli",
            "--agents",
            "random,random",
            "--rules",
            "manches: 1000000000",
            "--out",
            "unused",
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 2
    assert MANCHES_ERROR in done.stderr.strip().splitlines()[-1]  # (the usage block above it: another fix)
    assert time.monotonic() - started < 60


def test_the_longest_match_counts_its_manches_without_wrapping():
    rules = pe.Rules(n_players=3, manches=MAX_MANCHES, scoring="president_vice")
    game = SingleGame.table(rules, seed=0)
    rng = np.random.default_rng(0)
    while not game.done:
        game.step(int(rng.choice(np.flatnonzero(game.legal_mask()))))
    assert game.record.result["manches"] in (MAX_MANCHES, MAX_MANCHES + 1)
    assert MAX_MANCHES - 1 <= game.manche <= MAX_MANCHES + 1  # the int16 counter, never wrapped
    assert sum(game.record.result["scores"]) == 2 * MAX_MANCHES  # the Président's 2 points, every manche


@pytest.mark.parametrize(
    "text", ["manches: 5\nmanches: 7\n", "{n_players: 5, n_players: 6}", "exchange: [1]\nn_players: 4\nexchange: [2]"]
)
def test_rules_yaml_with_a_key_given_twice_is_refused(text, tmp_path):
    with pytest.raises(ValueError, match="rules YAML text is not valid YAML: the key '.*' appears twice"):
        pe.Rules.from_yaml(text)
    path = tmp_path / "rules.yaml"
    path.write_text(text)
    with pytest.raises(ValueError, match="rules file .* the key '.*' appears twice"):
        resolve_rules(str(path))


def test_every_yaml_the_project_loads_refuses_a_key_given_twice(tmp_path):
    with pytest.raises(ValueError, match="appears twice"):
        load_yaml("a: {b: 1, b: 2}", "text")
    pytest.importorskip("pydantic", reason="training configs need the train extra")
    from president_env.training.config import load_config

    path = tmp_path / "config.yaml"
    path.write_text("ppo:\n  learning_rate: 0.001\n  learning_rate: 0.1\n")
    with pytest.raises(ValueError, match="config file .* the key 'learning_rate' appears twice"):
        load_config(path)
    # Merge keys may still be overridden, and equal keys in different mappings are fine.
    assert load_yaml("base: &b {x: 1}\nover:\n  <<: *b\n  x: 2\n", "text") == {"base": {"x": 1}, "over": {"x": 2}}
    assert load_yaml("a: {x: 1}\nb: {x: 1}", "text") == {"a": {"x": 1}, "b": {"x": 1}}


@pytest.mark.parametrize("path", ["/tmp/no-such-dir/a:b.yaml", "C:/rules/party.yaml", "runs/x:y/rules.yml"])
def test_a_missing_rules_path_with_a_colon_is_named_as_a_missing_file(path):
    with pytest.raises(ValueError, match=f"^rules file '{path}' does not exist or is not a file$"):
        resolve_rules(path)


def test_a_rules_path_with_a_colon_is_read(tmp_path):
    path = tmp_path / "odd:name.yaml"
    path.write_text("n_players: 5\n")
    assert resolve_rules(str(path)).n_players == 5
    assert pe.Rules.from_yaml(str(path)).n_players == 5


def test_one_line_yaml_with_a_slash_in_a_comment_is_still_yaml():
    assert resolve_rules("manches: 3  # see docs/RULES.md").manches == 3


def test_one_line_yaml_that_is_not_a_mapping_says_so():
    with pytest.raises(ValueError, match="rules YAML text 'x:y' is not a mapping of rules fields"):
        resolve_rules("x:y")
