"""The benchmark and maintenance scripts (``benchmarks/``, ``scripts/``: not installed) start from the repository
root as the README runs them, and a short rendered demo game plays to its end."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SCRIPTS = sorted([*ROOT.glob("benchmarks/*.py"), *ROOT.glob("scripts/*.py")])
NEEDS = {
    "expert_iteration.py": "torch",
    "bench_train.py": "torch",
    "bench_learner_device.py": "torch",
    "bench_search_noise.py": "torch",
    "agents_report.py": "matplotlib",
    "ship_universal.py": "torch",
    "model_cards.py": "torch",
}


def run(script: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(script), *args], cwd=ROOT, capture_output=True, text=True, timeout=300)


def test_the_scripts_live_outside_the_package():
    names = {path.name for path in SCRIPTS}
    assert {"bench.py", "bench_aec.py", "bench_agents.py", "bench_train.py", "render_demo.py"} <= names
    assert not list((ROOT / "president_env").glob("bench*.py")) and not list((ROOT / "training").glob("bench*.py"))


@pytest.mark.parametrize("script", SCRIPTS, ids=[p.name for p in SCRIPTS])
def test_each_script_starts(script):
    if script.name in NEEDS and importlib.util.find_spec(NEEDS[script.name]) is None:
        pytest.skip(f"needs {NEEDS[script.name]}")
    done = run(script, "--help")
    assert done.returncode == 0 and done.stdout.startswith("usage:"), done.stderr


def test_the_render_demo_plays_a_game():
    done = run(ROOT / "scripts" / "render_demo.py", "--preset", "party", "--seed", "3")
    assert done.returncode == 0, done.stderr
    moves = [line for line in done.stdout.splitlines() if line.startswith("--- move ")]
    assert moves and moves == [f"--- move {k} ---" for k in range(1, len(moves) + 1)]


def test_the_agents_page_shows_the_agents_table():
    """docs/agents.md's agents-table block is docs/results/matches/agents.md, as scripts/agents_report.py writes it."""
    start, end = "<!-- agents-table -->\n", "<!-- /agents-table -->"
    readme = (ROOT / "docs" / "agents.md").read_text(encoding="utf-8")
    block = readme.split(start, 1)[1].split(end, 1)[0]
    assert block == (ROOT / "docs" / "results" / "matches" / "agents.md").read_text(encoding="utf-8")


MAINTENANCE = sorted(ROOT.glob("scripts/*.py"))


@pytest.mark.parametrize("script", MAINTENANCE, ids=[p.name for p in MAINTENANCE])
def test_each_script_reports_a_usage_error_in_one_line_with_exit_2(script):
    if script.name in NEEDS and importlib.util.find_spec(NEEDS[script.name]) is None:
        pytest.skip(f"needs {NEEDS[script.name]}")
    done = run(script, "--no-such-option")
    assert done.returncode == 2, done.stderr
    assert done.stderr.count("\n") == 1 and f"{script.name}: error: " in done.stderr, done.stderr


def test_the_agents_report_writes_the_committed_table_only_when_asked():
    """Issue 35: reproduce commands never write inside docs/ unless ``--out`` names it; by default runs/."""
    pytest.importorskip("matplotlib")
    committed = [ROOT / "docs" / "agents.md", ROOT / "docs" / "results" / "matches" / "agents.md"]
    before = [path.read_bytes() for path in committed]
    done = run(ROOT / "scripts" / "agents_report.py")
    assert done.returncode == 0, done.stderr
    assert [path.read_bytes() for path in committed] == before
    written = (ROOT / "runs" / "agents_report" / "agents.md").read_text(encoding="utf-8")
    assert written == committed[1].read_text(encoding="utf-8")
