"""Measure ``ppo-universal`` at every table: against three (P - 1) copies of heuristic-3 and of the table's specialist.

    python scripts/measure_universal.py --seed 0 --deals 200 --out docs/results/universal/seed0
    python scripts/measure_universal.py --seed 0 --deals 200 --opponents heuristic-3,specialist,mc-4,mc-5 --out DIR
    python scripts/measure_universal.py --seed 0 --deals 200 --opponents mc-5 --tables big_table --resume --out DIR
    python scripts/measure_universal.py --seed 0 --deals 200 --opponents style-patient --paired-with heuristic-3 \\
        --out DIR

Plays ``president-eval --against`` (:func:`~president_env.evaluation.tournament.evaluate_against`) of the agent
(``--agent``: ``ppo-universal``, or a universal checkpoint path) at each table of :data:`TABLES` (every preset, and
the standard rules at 3 and 5 players), each in its own match (5 manches, a decisive one on a tie), on the same
deals for every opponent. ``specialist`` stands for the table's retired per-table agent, the checkpoint its
figures measured (``results/matches/<agent>/policy.pt``, run from the repository's root: ``results/README.md``;
the retired names themselves now make ``ppo-universal``). Writes ``OUT/<table>/`` (``versus.*`` and one folder per
opponent, as ``president-eval --against``) and ``OUT/summary.md`` and ``OUT/summary.json``: one row per table,
the agent's advantage over each opponent (points per manche above the table's mean) ± the 95 % interval over
deal groups, and the number of deal groups. ``--paired-with B``: ``B`` plays every opponent too, on the same deals
(:mod:`president_env.evaluation.paired`; each table's ``paired.*``, each side's files in ``agent/`` and
``reference/``), and each cell adds the agent's advantage minus ``B``'s, paired over deal groups. A repository
maintenance script: it is not part of the installed package.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

from president_env import agents
from president_env.core.presets import load_preset
from president_env.core.registry import check_name
from president_env.core.rules import Rules
from president_env.core.user_input import ArgumentParser, check_writable_dir
from president_env.evaluation.paired import AGENT, REFERENCE, check_opponents, evaluate_paired, write_paired
from president_env.evaluation.play import versus_lineup
from president_env.evaluation.report import dump_json, format_estimate, markdown_table, write_versus
from president_env.evaluation.statistics import Estimate
from president_env.evaluation.tournament import against_folder, check_counts, check_seeds, evaluate_against, open_store


def _retired(agent: str) -> str:
    return f"results/matches/{agent}/policy.pt"


TABLES: dict[str, tuple[Rules, str]] = {
    "standard": (load_preset("standard"), _retired("ppo-standard-4p-long")),
    "standard_3p": (load_preset("standard").replace(n_players=3), _retired("ppo-standard-3p")),
    "standard_5p": (load_preset("standard").replace(n_players=5), _retired("ppo-standard-5p")),
    **{
        preset: (load_preset(preset), _retired(f"ppo-{preset}"))
        for preset in ("quebec", "big_table", "family", "party")
    },
    "or_nothing": (load_preset("or_nothing"), _retired("ppo-or_nothing")),
}
"""``{table: (rules, its specialist's checkpoint)}``: every preset in its own match, and the standard rules at 3 and
5 players."""
SPECIALIST = "specialist"
CHUNKS = "chunks"
"""``OUT/<table>/chunks/``: with ``--resume``, each finished chunk of the table's tournaments (a stopped run
continues from them; ``president-eval --resume``)."""


def opponents_at(table: str, opponents: list[str]) -> list[str]:
    """The opponents at ``table``, ``specialist`` replaced by the table's specialist."""
    return [TABLES[table][1] if name == SPECIALIST else name for name in opponents]


def measure(
    agent: str,
    tables: list[str],
    opponents: list[str],
    out: Path,
    resume: bool = False,
    paired_with: str | None = None,
    chunks: Path | None = None,
    **options,
) -> dict[str, dict]:
    """Play and write every table; returns ``{table: {opponent: {advantage, ci, groups}}}`` (opponents as named;
    with ``paired_with``, also ``difference`` and ``difference_ci``, the paired edge over it). ``resume``: keep
    each table's finished chunks in ``<chunks>/<table>/chunks/`` (``chunks`` defaults to ``out``) and load those
    already there."""
    summary: dict[str, dict] = {}
    for table in tables:
        started = time.perf_counter()
        rules, named = TABLES[table][0], opponents_at(table, opponents)
        resume_dir = (chunks or out) / table / CHUNKS if resume else None
        if paired_with is None:
            results, paired = evaluate_against(agent, named, rules, resume_dir=resume_dir, **options), None
            write_versus(results, out / table)
        else:
            paired = evaluate_paired(agent, paired_with, named, rules, resume_dir=resume_dir, **options)
            results = paired.agent_results
            write_paired(paired, out / table)
        own = next(iter(next(iter(results.values())).agents))
        summary[table] = {}
        for label, (opponent, result) in zip(opponents, results.items()):
            cell = {
                "opponent": opponent,
                "advantage": result.agents[own].advantage.mean,
                "ci": result.agents[own].advantage.ci,
                "groups": result.n_groups,
            }
            if paired is not None:
                difference = paired.difference(opponent)
                cell.update(difference=difference.mean, difference_ci=difference.ci)
            summary[table][label] = cell
        print(f"{table}: {time.perf_counter() - started:.0f} s", file=sys.stderr)
    return summary


def summary_markdown(
    agent: str, summary: dict[str, dict], opponents: list[str], seed: int, paired_with: str | None = None
) -> str:
    header = ["table", "players"] + [f"vs {name} ×(P-1) (deal groups)" for name in opponents]
    rows = []
    for table, cells in summary.items():
        row = [table, str(TABLES[table][0].n_players)]
        for name in opponents:
            cell = cells[name]
            estimate = format_estimate(Estimate(cell["advantage"], cell["ci"], cell["groups"]), signed=True)
            text = f"{estimate} ({cell['groups']})" + (f" `{cell['opponent']}`" if name == SPECIALIST else "")
            if "difference" in cell:
                edge = Estimate(cell["difference"], cell["difference_ci"], cell["groups"])
                text += f"; edge {format_estimate(edge, signed=True)}"
            row.append(text)
        rows.append(row)
    manches = "/".join(str(m) for m in sorted({TABLES[table][0].manches for table in summary}))
    caption = (
        f"`{agent}`: advantage in points per manche over the table's mean, against P - 1 copies of each opponent, "
        f"in each table's own match ({manches} manches), seed {seed}; ± = 95 % interval over deal groups "
        "(each deal group played in every seat rotation)."
    )
    if paired_with is not None:
        caption += (
            f" Edge: the advantage minus {paired_with}'s against the same opponents on the same deals, paired over "
            "deal groups."
        )
    return caption + "\n\n" + markdown_table(header, rows, text_columns=1)


def write_summary(
    out: Path,
    agent: str,
    summary: dict[str, dict],
    opponents: list[str],
    seed: int,
    deals: int,
    paired_with: str | None = None,
) -> str:
    """``OUT/summary.md`` and ``OUT/summary.json`` of :func:`measure`'s ``summary``; returns the Markdown table."""
    table = summary_markdown(agent, summary, opponents, seed, paired_with)
    (out / "summary.md").write_text(table + "\n", encoding="utf-8")
    record = {"agent": agent, "seed": seed, "deals": deals, "opponents": opponents, "tables": summary}
    if paired_with is not None:
        record["paired_with"] = paired_with
    dump_json(record, out / "summary.json")
    return table


def main(argv: list[str] | None = None) -> int:
    parser = ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--agent", default="ppo-universal", help="agent name or checkpoint path (default: %(default)s)")
    parser.add_argument("--seed", type=int, required=True, help="root seed of the deals (president-eval --seed)")
    parser.add_argument("--deals", type=int, required=True, help="duplicate deal groups per table")
    parser.add_argument("--out", type=Path, required=True, help="output folder")
    parser.add_argument(
        "--opponents",
        default=f"heuristic-3,{SPECIALIST}",
        help=f"comma-separated opponents; {SPECIALIST!r} is the table's per-table agent (default: %(default)s)",
    )
    parser.add_argument("--tables", default=",".join(TABLES), help="comma-separated tables (default: all)")
    parser.add_argument("--workers", type=int, default=1, help="parallel processes (default: %(default)s)")
    parser.add_argument("--chunk-deals", type=int, default=50, help="deal groups per batch (default: %(default)s)")
    parser.add_argument("--no-progress", action="store_true", help="no progress bars")
    parser.add_argument(
        "--resume",
        action="store_true",
        help=f"keep each finished chunk in OUT/<table>/{CHUNKS}/ and load the chunks already there (a stopped run "
        "continues where it stopped, with the same result)",
    )
    parser.add_argument(
        "--paired-with",
        metavar="AGENT",
        help="AGENT plays every opponent too, on the same deals; each cell adds the agent's edge over it, paired "
        "over deal groups (president-eval --paired-with)",
    )
    args = parser.parse_args(argv)
    opponents = [name.strip() for name in args.opponents.split(",") if name.strip()]
    tables = [name.strip() for name in args.tables.split(",") if name.strip()]
    try:  # everything is checked before the first game: a typo must not cost hours
        unknown = [table for table in tables if table not in TABLES]
        if unknown or not tables:
            listed = ", ".join(unknown) or "(none)"
            raise ValueError(f"--tables: unknown table(s) {listed}; the tables: {', '.join(TABLES)}")
        if not opponents:
            raise ValueError("--opponents names no opponent")
        check_counts(deals=args.deals, workers=args.workers, chunk_deals=args.chunk_deals)
        check_seeds(seed=args.seed)
        check_name(args.agent)
        for table in tables:
            rules, named = TABLES[table][0], opponents_at(table, opponents)
            if len(set(named)) < len(named):
                raise ValueError(f"--opponents {args.opponents!r} names one opponent twice at {table} ({named})")
            if args.paired_with is not None:
                check_opponents(args.agent, named)
            for name in [args.agent, *named, *([args.paired_with] if args.paired_with is not None else [])]:
                check_name(name)
                agents.make(name, rules)  # a missing checkpoint, or an agent of other rules, is refused now
        check_writable_dir(args.out, "--out")
        if args.resume:
            for table in tables:
                rules = TABLES[table][0]
                sides = [(args.out / table / CHUNKS, args.agent)]
                if args.paired_with is not None:
                    sides = [(args.out / table / CHUNKS / AGENT, args.agent)]
                    sides.append((args.out / table / CHUNKS / REFERENCE, args.paired_with))
                for chunks, who in sides:
                    for name in opponents_at(table, opponents):
                        lineup = versus_lineup(who, name, rules.n_players)
                        open_store(against_folder(chunks, name), lineup, rules, args.seed, args.chunk_deals, None)
    except (ValueError, ImportError, OSError) as err:
        parser.error(" ".join(str(err).split()))
    options = dict(
        n_deals=args.deals,
        seed=args.seed,
        workers=args.workers,
        chunk_deals=args.chunk_deals,
        progress=not args.no_progress,
    )
    summary = measure(
        args.agent, tables, opponents, args.out, resume=args.resume, paired_with=args.paired_with, **options
    )
    print(write_summary(args.out, args.agent, summary, opponents, args.seed, args.deals, args.paired_with))
    return 0


if __name__ == "__main__":
    sys.exit(main())
