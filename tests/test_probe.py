"""The exploitability probe: a tiny run end to end, and its command line's refusals."""

from __future__ import annotations

import json

import pytest

pytest.importorskip("torch")

from president_env.training.probe import main, probe_overrides, run_probe  # noqa: E402

TINY = ["ppo.num_envs=32", "ppo.num_steps=8", "budget.eval_every=0", "network.hidden=[16]", "threads=1"]


def test_probe_overrides_point_the_recipe_at_the_target(tmp_path):
    overrides = probe_overrides("heuristic-2", "party", tmp_path, 1000)
    assert 'opponents.baselines={"heuristic-2": 1.0}' in overrides
    assert 'budget.eval_opponent="heuristic-2"' in overrides and "rules=party" in overrides
    assert "budget.total_steps=1000" in overrides


def test_tiny_probe_trains_measures_and_writes_its_figure(tmp_path):
    summary = run_probe("random", "standard", tmp_path, steps=512, deals=3, progress=False, overrides=TINY)
    assert summary["target"] == "random" and summary["deal_groups"] == 3
    assert summary["env_steps"] >= 512
    assert json.loads((tmp_path / "probe.json").read_text()) == summary
    assert (tmp_path / "run" / "policy.pt").is_file() and (tmp_path / "random" / "results.json").is_file()
    assert -3.0 <= summary["advantage"] <= 3.0 and summary["advantage_ci95"] >= 0


@pytest.mark.parametrize(
    "argv, message",
    [
        (["--target", "nobody"], "unknown agent"),
        (["--target", "heuristic-3", "--rules", "nope"], "'nope'"),
        (["--target", "heuristic-3", "--steps", "0"], "--steps"),
        (["--target", "heuristic-3", "--deals", "1"], "--deals"),
    ],
)
def test_probe_cli_refuses_bad_input_with_exit_2(tmp_path, capsys, argv, message):
    with pytest.raises(SystemExit) as exit_info:
        main(argv + ["--out", str(tmp_path / "out")])
    assert exit_info.value.code == 2 and message in capsys.readouterr().err
