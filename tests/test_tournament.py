"""Duplicate-deal tournaments (``evaluation/``: play, statistics, report, backends, tournament, cli) and the
baseline ladder (``evaluation/ladder.py``).

The agents here are small deterministic test policies, so that the tests do not depend on the baselines.
"""

from __future__ import annotations

import importlib.util
import json
import math
import os
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

import president_env as pe
from president_env import agents
from president_env.agents import Agent
from president_env.core import deals, engine, registry
from president_env.core.cards import deck
from president_env.evaluation import distributed, ladder
from president_env.evaluation.cli import main
from president_env.evaluation.play import MancheRecords, _fit_hand_sizes, rotation_entries
from president_env.evaluation.report import ROLES, markdown_table, summarize
from president_env.evaluation.statistics import RATING_MEAN, bradley_terry, mean_ci, t_quantile_975
from president_env.evaluation.tournament import evaluate, evaluate_against

ROOT = Path(__file__).resolve().parents[1]


def table_rows(text: str) -> list[list[str]]:
    """The cells of every row of the Markdown tables in ``text`` (header rows included, separator rows left out)."""
    lines = [line.strip() for line in text.splitlines() if line.startswith("|")]
    rows = [[cell.strip() for cell in line[1:-1].split("|")] for line in lines]
    return [row for row in rows if not all(cell and set(cell) <= set(":-") for cell in row)]


class LowestAction(Agent):
    """Always the lowest legal action id: passes whenever it may, leads its lowest single card."""

    name = "lowest"

    def __init__(self, rules: pe.Rules, seed=None, name: str | None = None) -> None:
        super().__init__(rules, seed)
        if name is not None:
            self.name = name

    def act_batch(self, observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
        return masks.argmax(axis=1).astype(np.int64)


class LowestPlay(Agent):
    """The lowest legal play, passing only when it cannot play: a simple climber that beats random play."""

    name = "lowest-play"

    def act_batch(self, observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
        plays = masks.copy()
        plays[:, pe.PASS] = False
        return np.where(plays.any(axis=1), plays.argmax(axis=1), pe.PASS).astype(np.int64)


class Counting(LowestAction):
    """Counts the decisions it is asked for."""

    def __init__(self, rules: pe.Rules) -> None:
        super().__init__(rules)
        self.rows = 0

    def act_batch(self, observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
        self.rows += len(masks)
        return super().act_batch(observations, masks)


class Illegal(Agent):
    name = "illegal"

    def act_batch(self, observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
        return np.full(len(masks), pe.num_actions(self.rules) - 1, np.int64)  # a give, illegal in play


def quiet(*args, **kwargs):
    return evaluate(*args, progress=False, **kwargs)


# ---------------------------------------------------------------- seats and deals
def test_rotations_seat_each_lineup_entry_at_every_player_once():
    for p in range(3, 9):
        entries = rotation_entries(p)
        assert (np.sort(entries, axis=0) == np.arange(p)[:, None]).all()  # each player sees every entry
        assert (np.sort(entries, axis=1) == np.arange(p)).all()  # each rotation seats every entry
        assert (entries[0] == np.arange(p)).all()  # rotation 0 is the lineup as given


def test_each_agent_plays_every_seat_of_a_deal_group():
    """Identical deterministic play makes every rotation finish alike, so an agent that really visits every
    player once per group scores exactly the table mean in every group (at a fixed seat it would not)."""
    rules = pe.Rules(manches=1)  # one manche: the seats, not the match (the match: tests below)
    result = quiet(
        [LowestAction(rules, name="a"), LowestAction(rules, name="b")], rules=rules, n_deals=12, chunk_deals=5
    )
    for name in ("a", "b"):
        stats = result.agents[name]
        assert stats.advantage.mean == 0 and stats.advantage.ci == 0
        assert stats.position.mean == 1.5 and stats.position.ci == 0
    rec = result.records
    for group in range(12):
        assert sorted(rec.rotation[rec.group == group]) == [0, 1, 2, 3]


@pytest.mark.parametrize(
    "rules",
    [pe.Rules(), pe.Rules(n_players=5, manches=3), pe.load_preset("family").replace(manches=2)],
    ids=["standard", "5p-3manches-uneven-deal", "family-draw-reseat"],
)
def test_every_rotation_of_a_group_replays_the_same_deals(rules):
    result = quiet([LowestAction(rules)], rules=rules, n_deals=6, chunk_deals=4)
    rec = result.records
    for group in range(6):
        for manche in range(rules.manches):
            rows = (rec.group == group) & (rec.manche == manche)
            assert rows.sum() == rules.n_players
            assert (rec.positions[rows] == rec.positions[rows][0]).all()
            assert (rec.decisions[rows] == rec.decisions[rows][0]).all()
    # Different groups are different deals.
    assert len({tuple(rec.positions[(rec.group == g) & (rec.manche == 0)][0]) for g in range(6)}) > 1


def test_fit_hand_sizes_moves_only_the_surplus_cards():
    cards = deck()
    hands = [cards[0:11], cards[11:22], cards[22:32], cards[32:42], cards[42:52]]  # 52 cards, 5 players
    fitted = _fit_hand_sizes(hands, [10, 11, 11, 10, 10])
    assert [len(h) for h in fitted] == [10, 11, 11, 10, 10]
    assert sorted(sum(fitted, [])) == sorted(cards)
    assert fitted[0] == hands[0][:10] and fitted[1] == hands[1] and fitted[2][:10] == hands[2]
    assert _fit_hand_sizes(hands, [11, 11, 10, 10, 10]) == hands


def test_agents_decide_only_for_games_in_progress():
    rules = pe.Rules()
    agent = Counting(rules)
    result = quiet([agent], n_deals=5, chunk_deals=5)
    assert agent.rows == result.records.decisions.sum()


# ---------------------------------------------------------------- multi-manche games
def test_multi_manche_games_count_every_regular_manche():
    rules = pe.Rules(manches=3)
    result = quiet(["random", LowestPlay(rules)], rules=rules, n_deals=10, chunk_deals=4)
    rec = result.records
    assert len(rec.group) == 10 * 4 * 3  # decisive manches are played but not counted
    for group in range(10):
        for rotation in range(4):
            rows = (rec.group == group) & (rec.rotation == rotation)
            assert sorted(rec.manche[rows]) == [0, 1, 2]
    assert (np.sort(rec.positions, axis=1) == np.arange(4)).all()
    assert (rec.points.sum(axis=1) == 6).all()  # 3 + 2 + 1 + 0 every manche
    assert result.agents["random"].manches == result.agents["lowest-play"].manches == 10 * 4 * 3 * 2


def test_manche_ends_are_found_when_most_players_score_zero():
    rules = pe.Rules(manches=2, scoring="president_vice", n_players=6)
    rec = quiet(["random"], rules=rules, n_deals=4).records
    assert len(rec.group) == 4 * 6 * 2
    assert (rec.points.sum(axis=1) == 3).all()


# ---------------------------------------------------------------- results
def test_strong_agent_beats_random_with_a_significant_advantage():
    rules = pe.Rules()
    result = quiet([LowestPlay(rules), "random", "random", "random"], n_deals=100)
    strong, weak = result.agents["lowest-play"], result.agents["random"]
    assert strong.advantage.low > 0
    assert strong.points.mean > weak.points.mean
    assert strong.position.mean < weak.position.mean
    assert strong.rating > weak.rating
    assert strong.manches == 100 * 4 * 5 and weak.manches == 100 * 4 * 3 * 5  # seats × rotations × manches
    assert strong.won.low > 0.25  # a quarter of the matches at an even table


def test_same_seed_same_result_and_other_seed_other_result(tmp_path):
    rules = pe.Rules()

    def run(seed: int) -> dict:
        result = quiet(["random", LowestPlay(rules)], n_deals=8, seed=seed, chunk_deals=3)
        result.to_json(tmp_path / f"{seed}.json")
        return json.loads((tmp_path / f"{seed}.json").read_text())

    first = run(1)
    assert first == run(1)
    assert first != run(2)
    assert first["config"]["rules"] == rules.to_dict() and first["config"]["seed"] == 1


def test_result_does_not_depend_on_the_number_of_workers():
    rules = pe.Rules()
    kwargs = dict(n_deals=6, seed=3, chunk_deals=2)
    one = quiet(["random", LowestPlay(rules)], workers=1, **kwargs)
    two = quiet(["random", LowestPlay(rules)], workers=2, **kwargs)
    assert one.to_dict() == two.to_dict()
    for name in ("group", "rotation", "manche", "points", "positions"):
        assert np.array_equal(getattr(one.records, name), getattr(two.records, name))


def test_mean_ci_on_a_hand_made_example():
    estimate = mean_ci([1.0, 2.0, 3.0, 4.0])
    assert estimate.mean == 2.5 and estimate.n == 4
    assert estimate.ci == pytest.approx(3.182446 * np.std([1, 2, 3, 4], ddof=1) / 2, rel=1e-6)
    assert mean_ci([5.0, 5.0, 5.0]).ci == 0
    assert math.isnan(mean_ci([2.0]).ci) and mean_ci([2.0]).mean == 2


def test_a_rate_interval_is_cut_to_its_range():
    estimate = mean_ci([0.0, 1.0], bounds=(0.0, 1.0))  # 0.5 ± 6.35: a t interval on two groups
    assert estimate.ci > 1 and estimate.clipped
    assert (estimate.low, estimate.high) == (0.0, 1.0)
    assert not mean_ci([0.4, 0.5, 0.6], bounds=(0.0, 1.0)).clipped
    unbounded = mean_ci([0.0, 1.0])
    assert unbounded.low == 0.5 - unbounded.ci and not unbounded.clipped


def test_rates_of_a_tiny_tournament_never_report_an_interval_past_0_or_100_percent():
    result = quiet(["random", LowestPlay(pe.Rules())], n_deals=2)
    rows = table_rows(result.to_markdown())[1:3]
    assert [row[0] for row in rows] == ["random", "lowest-play"]
    cells = [cell for row in rows for cell in (row[4], row[6], row[7])]  # matches won %, président %, trou %
    assert any("[" in cell for cell in cells), cells  # two groups: some t interval passes a bound, and is cut
    for cell in cells:
        low, high = _interval(cell)
        assert 0.0 <= low <= high <= 100.0, cell
    for name, summary in result.summary.items():
        for stat in ("won", "president", "trou"):
            mean, ci = summary[stat], summary[f"{stat}_ci"]
            low, high = summary.get(f"{stat}_interval", [mean - ci, mean + ci])
            assert 0.0 <= low <= high <= 1.0, (name, stat, summary)


def _interval(cell: str) -> tuple[float, float]:
    """The ends of a Markdown cell ``"mean ± ci"`` or ``"mean [low, high]"``."""
    if "[" in cell:
        low, high = cell.split("[")[1].rstrip("]").split(",")
        return float(low), float(high)
    mean, _, ci = cell.partition(" ± ")
    return float(mean) - float(ci or 0), float(mean) + float(ci or 0)


# Two-sided 95 % quantiles t(0.975, df) of Student's t as published (NIST/SEMATECH e-Handbook of Statistical
# Methods, table 1.3.6.7.2, to 3 decimals; df -> infinity: the normal quantile 1.959964).
PUBLISHED_T_975 = {1: 12.706, 2: 4.303, 3: 3.182, 5: 2.571, 10: 2.228, 20: 2.086, 30: 2.042, 50: 2.009, 100: 1.984}


@pytest.mark.parametrize("df, expected", PUBLISHED_T_975.items())
def test_t_quantile_matches_published_values(df, expected):
    assert t_quantile_975(df) == pytest.approx(expected, abs=5e-4)


def test_t_quantile_tends_to_the_normal_quantile_and_refuses_no_degrees_of_freedom():
    assert t_quantile_975(10**9) == pytest.approx(1.959964, abs=1e-6)
    assert 1.959964 < t_quantile_975(1000) < t_quantile_975(999) < t_quantile_975(100)
    with pytest.raises(ValueError, match="degrees of freedom must be >= 1"):
        t_quantile_975(0)


def test_bradley_terry_on_hand_made_examples():
    always = bradley_terry(np.array([[0, 10], [0, 0]]))
    assert always[0] > always[1] and np.isfinite(always).all()
    assert always.mean() == pytest.approx(RATING_MEAN)
    # Two agents: the MLE odds are the win ratio (with one virtual draw: 20.5 : 10.5).
    two = bradley_terry(np.array([[0, 20], [10, 0]]))
    assert two[0] - two[1] == pytest.approx(400 * np.log10(20.5 / 10.5), abs=1e-6)
    transitive = bradley_terry(np.array([[0, 70, 80], [30, 0, 70], [20, 30, 0]]))
    assert transitive[0] > transitive[1] > transitive[2]
    even = bradley_terry(np.array([[0, 5, 5], [5, 0, 5], [5, 5, 0]]))
    assert np.allclose(even, RATING_MEAN)


def test_bradley_terry_three_to_one_is_a_log_odds_gap_of_ln_3():
    # 151 : 50 plus the virtual draw is 151.5 : 50.5 = 75 % : 25 %, exactly; the Elo scale is 400 / ln 10 per unit.
    exact = bradley_terry(np.array([[0, 151], [50, 0]]))
    assert (exact[0] - exact[1]) * math.log(10) / 400 == pytest.approx(math.log(3), abs=1e-9)
    large = bradley_terry(np.array([[0, 75_000], [25_000, 0]]))  # the virtual draw's weight fades
    assert (large[0] - large[1]) * math.log(10) / 400 == pytest.approx(math.log(3), abs=1e-4)


# The hand-written MM fit that choix replaced agreed with choix's fit to within 1.1e-7 rating points on every
# case below; its own convergence error (likelihood equations met to ~1e-6 wins) is of that size.
MM_AGREEMENT = 1e-6


@pytest.mark.parametrize(
    "case",
    json.loads((ROOT / "tests" / "data" / "bradley_terry_mm.json").read_text())["cases"],
    ids=lambda c: c["case"],
)
def test_bradley_terry_agrees_with_the_former_mm_fit(case):
    assert bradley_terry(np.array(case["wins"])) == pytest.approx(case["ratings"], abs=MM_AGREEMENT)


def _committed_results() -> list[Path]:
    return sorted((ROOT / "docs" / "results").glob("**/results.json"))


@pytest.mark.parametrize("path", _committed_results(), ids=lambda p: str(p.relative_to(ROOT / "docs" / "results")))
def test_bradley_terry_reproduces_the_ratings_of_the_committed_results(path):
    data = json.loads(path.read_text())
    names, wins = data["pairwise_wins"]["names"], data["pairwise_wins"]["wins"]
    stored = [data["agents"][name]["rating"] for name in names]  # written by the former MM fit
    assert bradley_terry(np.array(wins)) == pytest.approx(stored, abs=MM_AGREEMENT)


@settings(max_examples=60, deadline=None)
@given(arrays(np.int64, st.tuples(st.integers(2, 6)).map(lambda k: (k[0], k[0])), elements=st.integers(0, 5000)))
def test_bradley_terry_is_the_maximum_likelihood_fit(wins):
    """The likelihood equations: every agent's expected wins (virtual draws included) equal its observed wins."""
    np.fill_diagonal(wins, 0)
    met = (wins + wins.T) > 0
    from scipy.sparse.csgraph import connected_components

    if connected_components(met[np.ix_(met.any(1), met.any(1))], directed=False)[0] > 1:
        with pytest.raises(ValueError, match="groups of agents that never met"):
            bradley_terry(wins)
        return
    ratings = bradley_terry(wins)
    assert ratings.mean() == pytest.approx(RATING_MEAN)
    assert np.all(ratings[~met.any(1)] == pytest.approx(RATING_MEAN))
    strength = ratings * math.log(10) / 400
    observed = wins + 0.5 * met
    p_ahead = 1 / (1 + np.exp(strength[None, :] - strength[:, None]))
    expected = ((observed + observed.T) * p_ahead).sum(axis=1)
    assert expected == pytest.approx(observed.sum(axis=1), rel=1e-6, abs=1e-6)


def test_bradley_terry_refuses_bad_matrices_and_groups_that_never_met():
    with pytest.raises(ValueError, match="groups of agents that never met"):
        bradley_terry(np.array([[0, 3, 0, 0], [1, 0, 0, 0], [0, 0, 0, 2], [0, 0, 5, 0]]))
    for bad in (np.zeros((2, 3)), np.array([[0, -1], [2, 0]]), np.array([[0, np.nan], [1, 0]])):
        with pytest.raises(ValueError, match="square matrix of counts"):
            bradley_terry(bad)


def test_markdown_tables_align_text_left_and_numbers_right():
    table = markdown_table(
        ["agent", "table", "points", "rating"], [["a", "x", "1.5 ± 0.1", "1500"], ["bb", "", "-2", "7"]], 2
    )
    assert table.splitlines() == [
        "| agent   | table   |    points |   rating |",
        "|:--------|:--------|----------:|---------:|",
        "| a       | x       | 1.5 ± 0.1 |     1500 |",
        "| bb      |         |        -2 |        7 |",
    ]


def test_markdown_json_and_plot(tmp_path):
    rules = pe.Rules()
    result = quiet(["random", LowestPlay(rules)], n_deals=4)
    table = result.to_markdown()
    rows = table_rows(table)
    assert rows[0] == [
        "agent",
        "manches",
        "points/manche",
        "advantage",
        "matches won %",
        "mean position",
        "président %",
        "trou %",
        "rating",
    ]
    assert ["lowest-play", "160"] in [row[:2] for row in rows]  # two seats, 4 groups × 4 rotations × 5 manches
    # The standard match has no Neutre: the by-role table has the five roles of four players.
    by_role = rows[rows.index(["agent", "no role", "président", "vice-président", "vice-trou", "trou du cul"]) :]
    assert [row[0] for row in by_role] == ["agent", "random", "lowest-play"]
    result.plot(tmp_path / "r.png")
    assert (tmp_path / "r.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert set(result.summary["random"]) >= {"points", "points_ci", "advantage_ci", "rating", "manches", "won"}
    assert set(result.summary["random"]["points_by_role"]) == {"none", "president", "vice_president"} | {
        "vice_trou",
        "trou_du_cul",
    }


# ---------------------------------------------------------------- command line and bad input
def test_cli_writes_json_markdown_and_png(tmp_path, capsys):
    rules_file = tmp_path / "three.yaml"
    pe.Rules(n_players=3).to_yaml(rules_file)
    out = tmp_path / "eval"
    argv = ["--agents", "random", "--rules", str(rules_file), "--deals", "4", "--chunk-deals", "2"]
    assert main(argv + ["--seed", "1", "--out", str(out), "--no-progress"]) == 0
    assert {p.name for p in out.iterdir()} == {"results.json", "results.md", "results.png"}
    data = json.loads((out / "results.json").read_text())
    assert data["config"]["lineup"] == ["random"] * 3 and data["config"]["rules"]["n_players"] == 3
    assert ["random", "180"] in [
        row[:2] for row in table_rows(capsys.readouterr().out)
    ]  # 4 groups × 3 rotations × 3 seats × 5 manches


def test_bad_input_is_a_clear_value_error():
    with pytest.raises(ValueError, match="unknown agent 'nobody'; known agents: random"):
        evaluate(["nobody"], progress=False)
    with pytest.raises(ValueError, match="lineup has 5 agents but the rules seat 4 players"):
        evaluate(["random"] * 5, progress=False)
    with pytest.raises(ValueError, match="'no_such_preset'"):
        evaluate(["random"], rules="no_such_preset", progress=False)
    with pytest.raises(ValueError, match="n_deals must be a positive integer"):
        evaluate(["random"], n_deals=0, progress=False)
    with pytest.raises(ValueError, match="agent 'illegal' chose illegal action"):
        evaluate([Illegal(pe.Rules())], n_deals=1, progress=False)


@pytest.mark.parametrize("bad", [["--agents", "nobody"], ["--agents", "random", "--rules", "no_such_preset"]])
def test_cli_rejects_unknown_agents_and_presets(bad, capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(bad + ["--no-progress"])
    assert exit_info.value.code == 2
    assert f"{bad[-1]!r}" in capsys.readouterr().err  # the message names the bad agent or preset


@pytest.mark.skipif(
    importlib.util.find_spec("torch") is None or not agents.shipped_checkpoint("ppo-universal").is_file(),
    reason="needs torch and the checkpoint",
)
def test_cli_plays_a_retired_agent_name_as_ppo_universal_with_a_one_line_warning(tmp_path, capsys):
    argv = ["--agents", "ppo-quebec", "--against", "heuristic-3", "--rules", "quebec", "--deals", "1"]
    assert main([*argv, "--no-progress", "--out", str(tmp_path / "out")]) == 0
    err = capsys.readouterr().err
    warned = [line for line in err.splitlines() if "warning" in line]
    assert warned == [f"president-eval: warning: {agents.retired_message('ppo-quebec')}"]  # once, one line
    assert "Traceback" not in err and "DeprecationWarning" not in err
    assert (tmp_path / "out" / "heuristic-3" / "results.json").is_file()


# ---------------------------------------------------------------- the ladder
def test_ladder_runs_steps_and_writes_only_its_output_folder(tmp_path, monkeypatch):
    monkeypatch.setitem(registry._FACTORIES, "test-lowest-play", lambda rules, seed=None: LowestPlay(rules))
    monkeypatch.chdir(tmp_path)
    out = tmp_path / "ladder"
    argv = ["--presets", "standard", "--steps", "random:test-lowest-play", "--deals", "12", "--no-progress"]
    assert ladder.main(argv + ["--out", str(out)]) == 0
    assert [p.name for p in tmp_path.iterdir()] == ["ladder"]
    assert {p.name for p in out.iterdir()} == {"ladder.json", "ladder.md", "ladder.png"}
    step = json.loads((out / "ladder.json").read_text())["steps"][0]
    assert step["stronger"] == "test-lowest-play" and step["significant"] is True
    text = (out / "ladder.md").read_text()
    assert table_rows(text)[1][:2] == ["standard", "test-lowest-play vs random"] and table_rows(text)[1][5] == "yes"
    with pytest.raises(SystemExit):
        ladder.main([*argv, "--readme", "README.md"])  # the README is no longer the ladder's to write


def test_reproduce_commands_write_under_runs_by_default_never_into_docs(tmp_path, monkeypatch, capsys):
    """Issue 35: the ladder wrote into docs/results/ladder by default, and a small run replaced the committed rows;
    president-eval wrote into results/, the committed results' folder. Both default to runs/ (gitignored)."""
    monkeypatch.chdir(tmp_path)
    assert ladder.main(["--presets", "standard", "--steps", "random:heuristic-1", "--deals", "4", "--no-progress"]) == 0
    assert main(["--agents", "heuristic-1,random", "--deals", "2", "--no-progress"]) == 0
    capsys.readouterr()
    assert [p.name for p in tmp_path.iterdir()] == ["runs"]
    assert {p.name for p in (tmp_path / "runs").iterdir()} == {"ladder", "eval"}
    assert (tmp_path / "runs" / "ladder" / "ladder.md").is_file()
    assert (tmp_path / "runs" / "eval" / "results.json").is_file()


def test_ladder_steps_parse_and_default_to_the_whole_ladder():
    assert ladder.parse_steps("random:heuristic-1, heuristic-1:heuristic-2") == [
        ("random", "heuristic-1"),
        ("heuristic-1", "heuristic-2"),
    ]
    assert ladder.default_steps()[0] == ("random", "heuristic-1") and ladder.default_steps()[-1] == ("mc-4", "mc-5")
    with pytest.raises(ValueError, match="expected weaker:stronger"):
        ladder.parse_steps("random")
    with pytest.raises(ValueError, match="unknown agent"):
        ladder.parse_steps("random:nobody")


def test_president_eval_against_plays_one_agent_against_copies_of_each_opponent(tmp_path, capsys):
    eval_main = main
    out = tmp_path / "versus"
    args = ["--agents", "heuristic-3", "--against", "heuristic-2,random", "--deals", "3", "--chunk-deals", "3"]
    assert eval_main(args + ["--out", str(out), "--no-progress"]) == 0
    table = capsys.readouterr().out
    assert "heuristic-3 against 3 copies of each opponent" in table
    assert [row[0] for row in table_rows(table)] == ["opponents", "heuristic-2", "random"]
    for name in ("versus.json", "versus.md", "versus.png", "random/results.json", "heuristic-2/results.md"):
        assert (out / name).is_file(), name
    # the same tournaments as evaluate() with the lineup written out
    results = evaluate_against("heuristic-3", ["random"], "standard", n_deals=3, chunk_deals=3, progress=False)
    direct = evaluate(
        ["heuristic-3", "random", "random", "random"], "standard", n_deals=3, chunk_deals=3, progress=False
    )
    assert results["random"].summary == direct.summary
    with pytest.raises(SystemExit):
        eval_main(["--agents", "heuristic-3,random", "--against", "random", "--out", str(out)])


def test_ray_options_without_ray_installed_are_a_clear_error(monkeypatch, capsys):
    import sys

    from president_env.evaluation.distributed import require_ray

    monkeypatch.setitem(sys.modules, "ray", None)  # what `import ray` does where Ray is not installed
    with pytest.raises(ImportError, match=r"president-env\[ray\]"):
        require_ray()
    with pytest.raises(SystemExit) as exit_info:
        main(["--agents", "random", "--deals", "2", "--ray", "local", "--no-progress"])
    assert exit_info.value.code == 2
    assert "pip install" in capsys.readouterr().err


# ---------------------------------------------------------------- whole matches: roles, wins, decisive manches
def test_match_statistics_on_hand_made_records():
    """One group, the lineup [a, b, b, b] in its four rotations, two manches each: every number by hand."""
    p = 4
    rows = []  # (rotation, manche, positions by player, roles by player, winner)
    for rotation in range(p):
        first = [(i - rotation) % p for i in range(p)]  # rotation s: player s goes out first, and so on
        second = [(rotation - i) % p for i in range(p)]
        roles = [int(engine.tables(pe.Rules()).role_by_pos[q]) for q in first]
        rows.append((rotation, 0, first, [deals.NO_ROLE] * p, rotation))
        rows.append((rotation, 1, second, roles, rotation))
    points = [[3 - q for q in pos] for _, _, pos, _, _ in rows]
    records = MancheRecords(
        group=np.zeros(len(rows), np.int64),
        rotation=np.array([r[0] for r in rows]),
        manche=np.array([r[1] for r in rows]),
        decisions=np.ones(len(rows), np.int64),
        points=np.array(points, np.float64),
        positions=np.array([r[2] for r in rows]),
        roles=np.array([r[3] for r in rows]),
        winner=np.array([r[4] for r in rows]),
    )
    config = {"lineup": ["a", "b", "b", "b"], "rules": pe.Rules(manches=2).to_dict(), "n_deals": 1, "seed": 0}
    result = summarize(config, config["lineup"], records)
    a, b = result.agents["a"], result.agents["b"]
    # a sits at player s in rotation s (rotation_entries), the winner of rotation s is player s: a wins every match.
    assert a.won.mean == 1.0 and b.won.mean == 0.0
    # a goes out first in the first manche of every rotation (3 points), then from position 0 ... 0 -> (s - s) = 0.
    assert a.by_role["none"].mean == 3.0 and a.by_role["president"].mean == 3.0 and a.points.mean == 3.0
    assert a.by_role["trou_du_cul"].n == 0 and a.by_role["neutre"].n == 0
    # b's seats: first manche positions 1, 2, 3 -> 2, 1, 0 points; roles then vice, vice-trou, trou.
    assert b.by_role["none"].mean == 1.0 and b.points.mean == pytest.approx(1.0)
    assert [role for role in ROLES if b.by_role[role].n] == ["none", "vice_president", "vice_trou", "trou_du_cul"]
    assert result.roles == ("none", "president", "vice_president", "vice_trou", "trou_du_cul")
    assert "Points per manche by role at the start of the manche" in result.to_markdown()


@pytest.mark.parametrize("rules", [pe.Rules(manches=2), pe.load_preset("family").replace(manches=2)])
def test_roles_and_winners_follow_each_match(rules):
    result = quiet(["random", LowestPlay(rules)], rules=rules, n_deals=6, chunk_deals=3)
    rec = result.records
    role_by_pos = engine.tables(rules).role_by_pos
    for group in range(6):
        for rotation in range(rules.n_players):
            rows = np.flatnonzero((rec.group == group) & (rec.rotation == rotation))
            first, second = rows  # manches 0 and 1 (a decisive manche is played, not recorded)
            assert (rec.roles[second] == role_by_pos[rec.positions[first]]).all()  # roles from the finishing order
            if rules.initial_roles == "none":
                assert (rec.roles[first] == deals.NO_ROLE).all()
            totals = rec.points[rows].sum(axis=0)
            winner = rec.winner[first]
            assert (rec.winner[rows] == winner).all() and totals[winner] == totals.max()
    # Drawn roles are part of the deal group: every rotation starts from the same roles by player.
    starts = rec.roles[rec.manche == 0].reshape(6, rules.n_players, rules.n_players)
    assert (starts == starts[:, :1]).all()
    assert (rec.roles[rec.manche == 0] >= 0).all() == (rules.initial_roles == "draw")


def test_every_manche_of_a_group_is_dealt_alike_in_every_rotation_the_decisive_one_too():
    """The same deterministic agent in every seat plays every rotation of a group alike, to the same winner, only
    if every manche, the decisive one included, deals each player the same cards."""
    rules = pe.Rules(manches=2)
    a, b = LowestPlay(rules), LowestPlay(rules)
    a.name, b.name = "a", "b"
    result = quiet([a, b], rules=rules, n_deals=16, seed=1)
    rec = result.records
    tied = 0
    for group in range(16):
        rows = rec.group == group
        winners = rec.winner[rows]
        assert (winners == winners[0]).all()
        totals = rec.points[rows & (rec.rotation == 0)].sum(axis=0)
        tied += (totals == totals.max()).sum() > 1
        for manche in range(2):
            same = rows & (rec.manche == manche)
            assert (rec.positions[same] == rec.positions[same][0]).all()
    assert tied >= 1, "some groups go to a decisive manche"
    assert result.agents["a"].won.mean == result.agents["b"].won.mean == 0.25


def test_president_eval_says_in_one_line_when_ray_cannot_start(monkeypatch, tmp_path, capsys):
    pytest.importorskip("ray")

    def cannot_start(address, num_cpus=None):
        raise RuntimeError("Failed to start the GCS server.\nSee the logs in /tmp/ray for details.")

    monkeypatch.setattr(distributed, "init_ray", cannot_start)
    with pytest.raises(SystemExit) as exit_info:
        main(["--agents", "random", "--deals", "2", "--ray", "local", "--no-progress", "--out", str(tmp_path / "o")])
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err  # argparse's usage, then one line:
    assert (
        err.strip()
        .splitlines()[-1]
        .startswith(
            "president-eval: error: --ray local: Ray could not start (RuntimeError: Failed to start the GCS server. "
            "See the logs"
        )
    )


# ---- a stopped tournament continues (evaluation/resume.py) ------------------------------------------------------
def test_a_stopped_tournament_resumes_from_its_finished_chunks_with_the_uninterrupted_result(tmp_path, monkeypatch):
    from president_env.evaluation import backends

    rules = pe.Rules().replace(manches=2)
    kwargs = dict(n_deals=6, seed=5, chunk_deals=2, progress=False)
    whole = evaluate(["heuristic-3", "heuristic-1"], rules, **kwargs)
    folder = tmp_path / "chunks"
    played: list[int] = []
    play_chunk = backends.play_chunk

    def counting(task, report=None):
        played.append(task.first_group)
        return play_chunk(task, report)

    monkeypatch.setattr(backends, "play_chunk", counting)

    def stop_in_third(task, report=None):  # the first run is killed in its third chunk: two are kept
        if task.first_group == 4:
            raise KeyboardInterrupt("stopped")
        return counting(task, report)

    monkeypatch.setattr(backends, "play_chunk", stop_in_third)
    with pytest.raises(KeyboardInterrupt):
        evaluate(["heuristic-3", "heuristic-1"], rules, resume_dir=folder, **kwargs)
    assert sorted(p.name for p in folder.iterdir()) == ["chunk-00000.npz", "chunk-00001.npz", "tournament.json"]
    monkeypatch.setattr(backends, "play_chunk", counting)
    played.clear()
    resumed = evaluate(["heuristic-3", "heuristic-1"], rules, resume_dir=folder, **kwargs)
    assert played == [4]  # only the chunk that was not finished
    assert resumed.to_dict() == whole.to_dict()
    for name in ("group", "rotation", "manche", "points", "positions", "roles", "winner"):
        assert np.array_equal(getattr(resumed.records, name), getattr(whole.records, name)), name
    played.clear()
    longer = evaluate(["heuristic-3", "heuristic-1"], rules, resume_dir=folder, **{**kwargs, "n_deals": 8})
    assert played == [6]  # a longer tournament of the same seed continues from the shorter one's chunks
    assert longer.to_dict() == evaluate(["heuristic-3", "heuristic-1"], rules, **{**kwargs, "n_deals": 8}).to_dict()


@pytest.mark.parametrize(
    ("change", "field"),
    [
        (dict(seed=6), "seed"),
        (dict(chunk_deals=3), "chunk_deals"),
        (dict(lineup=["heuristic-2", "heuristic-1"]), "lineup"),
        (dict(rules=pe.Rules().replace(manches=3)), "rules"),
    ],
)
def test_a_resume_folder_of_another_tournament_is_refused_naming_what_differs(tmp_path, change, field):
    base = dict(lineup=["heuristic-3", "heuristic-1"], rules=pe.Rules().replace(manches=2), seed=5, chunk_deals=2)
    folder = tmp_path / "chunks"
    evaluate(base["lineup"], base["rules"], n_deals=2, seed=5, chunk_deals=2, progress=False, resume_dir=folder)
    before = {p.name: p.read_bytes() for p in folder.iterdir()}
    other = {**base, **change}
    with pytest.raises(ValueError, match=f"holds the chunks of another tournament: its {field} is"):
        evaluate(
            other["lineup"], other["rules"], n_deals=2, seed=other["seed"], chunk_deals=other["chunk_deals"],
            progress=False, resume_dir=folder,
        )  # fmt: skip
    assert {p.name: p.read_bytes() for p in folder.iterdir()} == before


def test_a_checkpoint_changed_under_the_same_path_is_another_tournament(tmp_path):
    from president_env.evaluation.resume import identity

    weights = tmp_path / "policy.pt"
    weights.write_bytes(b"first weights")
    first = identity([str(weights), "heuristic-3"], pe.Rules(), 0, 50, None)
    weights.write_bytes(b"retrained weights")
    second = identity([str(weights), "heuristic-3"], pe.Rules(), 0, 50, None)
    assert first["lineup"] == second["lineup"] and first["weights"] != second["weights"]
    assert first["weights"]["heuristic-3"] is None
    shipped = identity(["ppo-universal"], pe.Rules(), 0, 50, None)["weights"]["ppo-universal"]
    assert shipped is None or len(shipped) == 64


def test_the_identity_reads_the_weights_of_copies_of_one_agent_once(tmp_path, monkeypatch):
    from president_env.evaluation import resume

    weights = tmp_path / "policy.pt"
    weights.write_bytes(b"weights")
    read = []
    digest = resume._weights_digest
    monkeypatch.setattr(resume, "_weights_digest", lambda spec: read.append(spec) or digest(spec))
    key = resume.identity(["heuristic-3"] + [str(weights)] * 3, pe.Rules(), 0, 50, None)
    assert read == ["heuristic-3", str(weights)]
    assert key["lineup"] == ["heuristic-3"] + [str(weights)] * 3
    assert list(key["weights"]) == ["heuristic-3", str(weights)]


def test_an_unreadable_chunk_file_is_a_clear_error(tmp_path):
    folder = tmp_path / "chunks"
    kwargs = dict(n_deals=2, seed=1, chunk_deals=1, progress=False, resume_dir=folder)
    evaluate(["heuristic-1", "random"], pe.Rules(), **kwargs)
    (folder / "chunk-00001.npz").write_bytes(b"not an archive")
    with pytest.raises(ValueError, match="chunk-00001.npz cannot be read"):
        evaluate(["heuristic-1", "random"], pe.Rules(), **kwargs)


def test_president_eval_resume_continues_and_refuses_another_tournaments_folder(tmp_path, capsys):
    folder = tmp_path / "chunks"
    args = ["--agents", "heuristic-3", "--against", "random", "--deals", "2", "--chunk-deals", "1", "--no-progress"]
    assert main(args + ["--out", str(tmp_path / "a"), "--resume", str(folder)]) == 0
    first = capsys.readouterr().out
    assert sorted(p.name for p in (folder / "random").iterdir()) == [
        "chunk-00000.npz", "chunk-00001.npz", "tournament.json",
    ]  # fmt: skip
    assert main(args + ["--out", str(tmp_path / "b"), "--resume", str(folder)]) == 0
    assert capsys.readouterr().out == first
    with pytest.raises(SystemExit) as stop:
        main(args + ["--seed", "3", "--out", str(tmp_path / "c"), "--resume", str(folder)])
    assert stop.value.code == 2
    err = capsys.readouterr().err
    assert "holds the chunks of another tournament: its seed is 0, this one's 3" in err
    assert "Traceback" not in err and not (tmp_path / "c" / "versus.json").exists()


def _children(pid: int) -> list[int]:
    """The processes whose parent is ``pid`` (Linux: read from /proc)."""
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == pid:
            found.append(int(stat.parent.name))
    return found


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads the process tree from /proc")
def test_the_workers_of_a_killed_tournament_end_within_seconds(tmp_path):
    import signal
    import subprocess
    import sys
    import time

    argv = ["--agents", "heuristic-1", "--deals", "100000", "--chunk-deals", "8", "--workers", "2"]
    code = f"from president_env.evaluation.cli import main; main({argv + ['--out', str(tmp_path), '--no-progress']!r})"
    parent = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    workers: list[int] = []
    try:
        deadline = time.monotonic() + 120
        while len(workers := _children(parent.pid)) < 2 and time.monotonic() < deadline:
            time.sleep(0.2)
        assert len(workers) >= 2, "the pool did not start"
        time.sleep(3)  # the workers import and play
        parent.send_signal(signal.SIGKILL)
        parent.wait()
        deadline = time.monotonic() + 5
        while any(_alive(pid) for pid in workers) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not [pid for pid in workers if _alive(pid)], "workers outlived their killed parent by 5 s"
    finally:
        parent.kill()
        for pid in workers:
            if _alive(pid):
                os.kill(pid, signal.SIGKILL)
