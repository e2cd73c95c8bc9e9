"""Gather the shipped learned agents' measurements into one table and one plot.

    python scripts/agents_report.py            # reads docs/results/agents/, writes agents.md and agents.png there,
                                               # and the same table in README.md between its agents-table markers

Each agent's folder ``docs/results/agents/<table>/`` holds the ``president-eval --against`` outputs
(``<opponent>/results.json``) and the training run's ``metrics.jsonl``; this script only reads
them. A repository maintenance script: it is not part of the installed package.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from president_env import agents
from president_env.evaluation.report import errorbar_png, format_estimate, markdown_table
from president_env.evaluation.statistics import Estimate

DOCS_RESULTS = Path(__file__).resolve().parent.parent / "docs" / "results"
RESULTS = DOCS_RESULTS / "agents"
README = DOCS_RESULTS.parent.parent / "README.md"
README_MARKERS = ("<!-- agents-table -->\n", "<!-- /agents-table -->")


def readme_with_table(readme: str, table: str) -> str:
    """``readme`` with ``table`` between its agents-table markers (``ValueError`` if they are missing)."""
    start, end = README_MARKERS
    if start not in readme or end not in readme:
        raise ValueError(f"README.md has no {start.strip()} ... {end} block")
    head, rest = readme.split(start, 1)
    return head + start + table + "\n" + end + rest.split(end, 1)[1]


OPPONENTS = ("heuristic-3", "mc-4")


def sources(results: Path) -> list[tuple[str, dict[str, Path], Path]]:
    """``(agent, {opponent: results.json}, metrics.jsonl)`` of every measured agent, the standard ones first."""
    ppo, long = DOCS_RESULTS / "ppo", DOCS_RESULTS / "experiments" / "standard_4p_long"
    # The standard agents' results predate the per-table folders.
    found = [
        ("ppo-standard-4p", {o: ppo / f"vs_{o}" / "results.json" for o in OPPONENTS}, ppo / "metrics.jsonl"),
        ("ppo-standard-4p-long", {o: long / f"vs_{o}" / o / "results.json" for o in OPPONENTS}, long / "metrics.jsonl"),
    ]
    for folder in sorted(p for p in results.iterdir() if p.is_dir()) if results.is_dir() else []:
        name = "ppo-" + folder.name.replace("standard_", "standard-")
        found.append((name, {o: folder / o / "results.json" for o in OPPONENTS}, folder / "metrics.jsonl"))
    return found


def estimate(stats: dict, key: str, n: int) -> Estimate:
    return Estimate(stats[key], stats[f"{key}_ci"], n)


def training_summary(metrics: Path) -> tuple[int, float]:
    """Env steps and minutes of the shipped run (its last metrics line)."""
    last = json.loads(metrics.read_text().strip().splitlines()[-1])
    return int(last["global_step"]), float(last["elapsed_s"]) / 60


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--results", type=Path, default=RESULTS, help="folder of the agents' result folders")
    args = parser.parse_args(argv)
    if not args.results.is_dir():
        parser.error(f"--results {args.results}: no such folder")
    rows, groups, unshipped = [], {opponent: ([], []) for opponent in OPPONENTS}, []
    for name, paths, metrics in sources(args.results):
        shipped = agents.shipped_checkpoint(name).is_file()
        if not shipped:
            unshipped.append(name.removeprefix("ppo-"))
        cells = [f"`{name}`" if shipped else f"{name} (not shipped)", agents.SHIPPED_AGENTS.get(name, "")]
        for opponent, path in paths.items():
            if not path.is_file():
                cells.append("")
                continue
            result = json.loads(path.read_text())
            stats, n = result["agents"][name], result["config"]["n_deals"]
            advantage = estimate(stats, "advantage", n)
            cells.append(f"{format_estimate(advantage, signed=True)} ({n})")
            groups[opponent][0].append(name.removeprefix("ppo-"))
            groups[opponent][1].append(advantage)
        if metrics.is_file():
            steps, minutes = training_summary(metrics)
            cells.append(f"{steps / 1e6:.0f} M, {minutes:.0f} min")
        else:
            cells.append("")
        rows.append(cells)
    header = ["agent", "trained for", "vs heuristic-3 ×(P-1) (deal groups)", "vs mc-4 ×(P-1) (deal groups)", "training"]
    table = markdown_table(header, rows, text_columns=2)
    (args.results / "agents.md").write_text(table + "\n", encoding="utf-8")
    if args.results == RESULTS:
        README.write_text(readme_with_table(README.read_text(encoding="utf-8"), table), encoding="utf-8")
    errorbar_png(
        args.results / "agents.png",
        groups={f"vs {opponent}": values for opponent, values in groups.items() if values[0]},
        ylabel="advantage (points per manche)",
        title="Learned agents, each on its own table, against copies of a baseline"
        + (f" (not shipped: {', '.join(unshipped)})" if unshipped else ""),
    )
    print(table)
    return 0


if __name__ == "__main__":
    sys.exit(main())
