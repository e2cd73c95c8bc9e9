"""Paired comparisons (``president-eval --paired-with``): per-group advantages agree with the tournament's own
statistic, an agent paired with itself differs by exactly 0, other deals are refused, and the command line writes
its tables and refuses bad lines with one error."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from president_env.evaluation.cli import main
from president_env.evaluation.paired import evaluate_paired, paired_difference
from president_env.evaluation.report import group_advantages
from president_env.evaluation.tournament import evaluate_against

SMALL = dict(n_deals=6, seed=3, progress=False, chunk_deals=4)


@pytest.fixture(scope="module")
def paired():
    return evaluate_paired("heuristic-3", "heuristic-2", ["style-patient", "style-shedder"], "standard", **SMALL)


def test_group_advantages_are_what_the_tournament_averages(paired):
    for opponent, result in paired.agent_results.items():
        per_group = group_advantages(result, "heuristic-3")
        assert per_group.shape == (6,) and not np.isnan(per_group).any()
        assert per_group.mean() == pytest.approx(result.agents["heuristic-3"].advantage.mean, abs=1e-12)
        assert len(set(np.round(per_group, 9))) > 1, f"every deal group alike against {opponent}?"


def test_the_difference_is_paired_over_deal_groups(paired):
    for opponent in paired.opponents:
        own = group_advantages(paired.agent_results[opponent], "heuristic-3")
        ref = group_advantages(paired.reference_results[opponent], "heuristic-2")
        diff = paired.difference(opponent)
        assert diff.n == 6 and diff.mean == pytest.approx((own - ref).mean(), abs=1e-12)
        assert diff.ci == pytest.approx(2.570582 * (own - ref).std(ddof=1) / math.sqrt(6), rel=1e-5)  # t(0.975, 5)
    row = paired.to_dict()["opponents"]["style-patient"]
    assert row["difference"] == pytest.approx(row["advantage"] - row["reference_advantage"], abs=1e-12)


def test_an_agent_paired_with_itself_differs_by_exactly_zero():
    same = evaluate_paired("heuristic-3", "heuristic-3", ["style-patient"], "standard", **SMALL)
    diff = same.difference("style-patient")
    assert diff.mean == 0.0 and diff.ci == 0.0


def test_tournaments_on_other_deals_are_refused():
    one = evaluate_against("heuristic-3", ["style-patient"], "standard", **SMALL)["style-patient"]
    other = evaluate_against("heuristic-2", ["style-patient"], "standard", **{**SMALL, "seed": 4})["style-patient"]
    with pytest.raises(ValueError, match="the same deals and the same other seats; these differ in seed"):
        paired_difference(one, other, "heuristic-3", "heuristic-2")
    seats = evaluate_against("heuristic-2", ["style-shedder"], "standard", **SMALL)["style-shedder"]
    with pytest.raises(ValueError, match="these differ in lineup"):
        paired_difference(one, seats, "heuristic-3", "heuristic-2")


def test_the_command_line_writes_the_paired_tables(tmp_path, capsys):
    out = tmp_path / "paired"
    argv = ["--agents", "heuristic-3", "--against", "style-patient", "--paired-with", "heuristic-2"]
    assert main([*argv, "--deals", "6", "--seed", "3", "--chunk-deals", "4", "--out", str(out), "--no-progress"]) == 0
    assert "difference (paired)" in capsys.readouterr().out
    data = json.loads((out / "paired.json").read_text())
    assert data["agent"] == "heuristic-3" and data["reference"] == "heuristic-2" and data["config"]["seed"] == 3
    assert (out / "agent" / "style-patient" / "results.json").is_file()
    assert (out / "reference" / "versus.json").is_file() and (out / "paired.md").is_file()


@pytest.mark.parametrize(
    "argv, message",
    [
        (["--agents", "heuristic-3", "--paired-with", "heuristic-2"], "--paired-with needs --against"),
        (
            [
                "--agents",
                "heuristic-3",
                "--against",
                "heuristic-1",
                "--paired-with",
                "heuristic-2",
                "--rule-suite",
                "1:2",
            ],
            "--paired-with needs --against (and --rules, not --rule-suite)",
        ),
        (
            ["--agents", "heuristic-3", "--against", "heuristic-3", "--paired-with", "heuristic-2"],
            "among the opponents",
        ),
        (["--agents", "heuristic-3", "--against", "heuristic-1", "--paired-with", "nobody"], "unknown agent 'nobody'"),
    ],
)
def test_bad_paired_lines_are_one_error(argv, message, tmp_path, capsys):
    with pytest.raises(SystemExit) as exit_:
        main([*argv, "--out", str(tmp_path / "x")])
    assert exit_.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) <= 2 and message in err[-1]  # argparse's usage line, then the one error
    assert not (tmp_path / "x").exists()
