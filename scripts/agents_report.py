"""Gather the learned agents' match measurements into one table and one plot: the retired per-table agents (the
folder names of their committed results, ``docs/results/matches/<agent>/``) beside ``ppo-universal``.

    python scripts/agents_report.py                               # reads docs/results/, writes agents.md and
                                                                  # agents.png into runs/agents_report/
    python scripts/agents_report.py --out docs/results/matches    # the committed ones, and the same table in
                                                                  # docs/agents.md between its agents-table markers

Every row is one agent at one table against ``P - 1`` copies of each baseline, in the table's own match (5 manches,
a decisive one on a tie), seed 0, 200 duplicate deal groups unless the cell says otherwise: each per-table agent on
its own table (``president-eval --against`` outputs in ``docs/results/matches/<agent>/<opponent>/results.json``),
then ``ppo-universal`` on the same table and the same deals (``scripts/measure_universal.py --seed 0`` outputs in
``docs/results/experiments/universal/seed0*/``). The training column reads each run's ``metrics.jsonl``. It writes
the committed table only when ``--out`` names it; a repository maintenance script, not part of the installed package.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from president_env import agents
from president_env.core.user_input import ArgumentParser, check_writable_dir
from president_env.evaluation.report import errorbar_png, format_estimate, markdown_table
from president_env.evaluation.statistics import Estimate

DOCS_RESULTS = Path(__file__).resolve().parent.parent / "docs" / "results"
MATCHES = DOCS_RESULTS / "matches"
UNIVERSAL = DOCS_RESULTS / "experiments" / "universal"
AGENTS_PAGE = DOCS_RESULTS.parent / "agents.md"
PAGE_MARKERS = ("<!-- agents-table -->\n", "<!-- /agents-table -->")
OPPONENTS = ("heuristic-3", "mc-4")

# table: (its retired per-table agents, as their results folders name them, where each one's training metrics are)
TABLES: dict[str, tuple[tuple[str, Path], ...]] = {
    "standard": (
        ("ppo-standard-4p", DOCS_RESULTS / "ppo" / "metrics.jsonl"),
        ("ppo-standard-4p-long", DOCS_RESULTS / "experiments" / "standard_4p_long" / "metrics.jsonl"),
    ),
    **{
        table: ((f"ppo-{table.replace('standard_', 'standard-')}", DOCS_RESULTS / "agents" / table / "metrics.jsonl"),)
        for table in ("standard_3p", "standard_5p", "quebec", "big_table", "family", "party", "or_nothing")
    },
}
UNIVERSAL_RUN = UNIVERSAL / "sitting3" / "metrics.jsonl"  # the shipped policy's sitting; its counters span all three


def page_with_table(page: str, table: str) -> str:
    """``page`` with ``table`` between its agents-table markers (``ValueError`` if they are missing)."""
    start, end = PAGE_MARKERS
    if start not in page or end not in page:
        raise ValueError(f"docs/agents.md has no {start.strip()} ... {end} block")
    head, rest = page.split(start, 1)
    return head + start + table + "\n" + end + rest.split(end, 1)[1]


def measured(name: str) -> dict[str, Path]:
    """A per-table agent's results against each opponent (``president-eval --against`` output folders)."""
    return {opponent: MATCHES / name / opponent / "results.json" for opponent in OPPONENTS}


def universal_results(table: str, opponent: str) -> Path | None:
    """``ppo-universal``'s seed-0 result against ``opponent`` at ``table``: the folder with the most deal groups."""
    found = sorted(UNIVERSAL.glob(f"seed0*/{table}/{opponent}/results.json"))
    return max(found, key=lambda path: json.loads(path.read_text())["config"]["n_deals"], default=None)


def cell(path: Path | None, name: str) -> tuple[str, Estimate | None]:
    """The table cell of ``name``'s advantage in the results file ``path`` (blank when not measured)."""
    if path is None or not path.is_file():
        return "", None
    result = json.loads(path.read_text())
    stats, n = result["agents"][name], result["config"]["n_deals"]
    advantage = Estimate(stats["advantage"], stats["advantage_ci"], n)
    return f"{format_estimate(advantage, signed=True)} ({n})", advantage


def training_summary(metrics: Path) -> str:
    """Env steps and minutes of a run (its last metrics line)."""
    if not metrics.is_file():
        return ""
    last = json.loads(metrics.read_text().strip().splitlines()[-1])
    return f"{int(last['global_step']) / 1e6:.0f} M, {float(last['elapsed_s']) / 60:.0f} min"


def main(argv: list[str] | None = None) -> int:
    parser = ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--out",
        type=Path,
        default=DOCS_RESULTS.parent.parent / "runs" / "agents_report",
        help="folder for agents.md and agents.png (default: %(default)s; docs/results/matches: the committed ones)",
    )
    args = parser.parse_args(argv)
    try:
        check_writable_dir(args.out, "--out")
    except ValueError as err:
        parser.error(str(err))
    rows, groups = [], {opponent: ([], []) for opponent in OPPONENTS}
    for table, specialists in TABLES.items():
        lineup = [(name, measured(name), metrics) for name, metrics in specialists]
        lineup.append(("ppo-universal", {o: universal_results(table, o) for o in OPPONENTS}, UNIVERSAL_RUN))
        for name, paths, metrics in lineup:
            cells = [table, f"`{name}`"]
            for opponent, path in paths.items():
                text, advantage = cell(path, name)
                cells.append(text)
                if advantage is not None:
                    groups[opponent][0].append(f"{name.removeprefix('ppo-')} @ {table}")
                    groups[opponent][1].append(advantage)
            cells.append(training_summary(metrics) + (" (all tables)" if name in agents.UNIVERSAL_AGENTS else ""))
            rows.append(cells)
    header = ["table", "agent", "vs heuristic-3 ×(P-1) (deal groups)", "vs mc-4 ×(P-1) (deal groups)", "training"]
    table = markdown_table(header, rows, text_columns=2)
    (args.out / "agents.md").write_text(table + "\n", encoding="utf-8")
    if args.out.resolve() == MATCHES:
        AGENTS_PAGE.write_text(page_with_table(AGENTS_PAGE.read_text(encoding="utf-8"), table), encoding="utf-8")
    errorbar_png(
        args.out / "agents.png",
        groups={f"vs {opponent}": values for opponent, values in groups.items() if values[0]},
        ylabel="advantage (points per manche)",
        title="Learned agents in each table's 5-manche match against copies of a baseline (seed 0)",
    )
    print(table)
    return 0


if __name__ == "__main__":
    sys.exit(main())
