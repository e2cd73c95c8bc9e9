"""The baseline ladder: does each level beat the one below it? (``python -m president_env.evaluation.ladder``)

    python -m president_env.evaluation.ladder --presets standard,party --deals 200 --deals-mc 100 \\
        --workers 2 --out runs/ladder

The ladder is ``random < heuristic-1 < heuristic-2 < heuristic-3 < mc-4 < mc-5``. Step k seats one copy of
level k against ``P - 1`` copies of level k-1 (lineup ``[k, k-1, k-1, ...]``) in a duplicate-deal tournament
(:func:`president_env.evaluation.tournament.evaluate`) of whole matches of the preset, and is *significant* when
the 95 % confidence interval of level k's advantage (its points minus the mean of the other seats, per manche)
lies entirely above 0. The table also gives the share of its matches level k won (1 / P when even).

Writes ``ladder.json`` (config and every step's numbers), ``ladder.md`` (the table) and ``ladder.png``
(advantage with CI bars per step, one cluster per preset) into ``--out`` (default ``runs/ladder``, never the committed
results: ``--out docs/results/ladder`` replaces those only when asked), and nothing else. docs/baselines.md shows a
copy of ``docs/results/ladder/ladder.md``: ``python scripts/ladder_table.py`` copies it there, and
``tests/test_readme.py`` checks that the two agree.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from president_env.core.presets import resolve_rules
from president_env.core.registry import check_name
from president_env.core.user_input import ArgumentParser

from .play import versus_lineup
from .report import dump_json, errorbar_png, format_estimate, markdown_table
from .statistics import Estimate
from .tournament import DEFAULT_CHUNK_DEALS, check_counts, evaluate

LADDER: tuple[str, ...] = ("random", "heuristic-1", "heuristic-2", "heuristic-3", "mc-4", "mc-5")
DEFAULT_PRESETS: tuple[str, ...] = ("standard", "party")


@dataclass(frozen=True)
class StepResult:
    """One ladder step on one preset: ``stronger`` (one seat) against ``weaker`` (the other seats)."""

    preset: str
    weaker: str
    stronger: str
    deals: int
    seconds: float
    advantage: Estimate  # of the stronger agent
    points_stronger: Estimate
    points_weaker: Estimate
    won_stronger: Estimate  # share of the stronger agent's matches it won (1 / P when even)
    chunk_deals: int = DEFAULT_CHUNK_DEALS

    @property
    def significant(self) -> bool:
        return self.advantage.low > 0


def default_steps() -> list[tuple[str, str]]:
    """``(weaker, stronger)`` for every consecutive pair of :data:`LADDER`."""
    return list(zip(LADDER[:-1], LADDER[1:]))


def parse_steps(text: str) -> list[tuple[str, str]]:
    """``"random:heuristic-1,heuristic-1:heuristic-2"`` -> ``[("random", "heuristic-1"), ...]`` (weaker:stronger)."""
    steps = []
    for item in text.split(","):
        weaker, sep, stronger = (part.strip() for part in item.partition(":"))
        if not sep or not weaker or not stronger:
            raise ValueError(f"bad step {item!r}: expected weaker:stronger, e.g. random:heuristic-1")
        check_name(weaker)
        check_name(stronger)
        steps.append((weaker, stronger))
    return steps


def run_step(
    preset: str,
    weaker: str,
    stronger: str,
    deals: int,
    seed: int = 0,
    workers: int = 1,
    progress: bool = True,
    chunk_deals: int = DEFAULT_CHUNK_DEALS,
) -> StepResult:
    """One duplicate tournament with lineup ``[stronger, weaker, weaker, ...]`` on ``preset`` (whole matches)."""
    rules = resolve_rules(preset)
    lineup = versus_lineup(stronger, weaker, rules.n_players)
    started = time.perf_counter()
    result = evaluate(
        lineup, rules=rules, n_deals=deals, seed=seed, workers=workers, progress=progress, chunk_deals=chunk_deals
    )
    return StepResult(
        preset=preset,
        weaker=weaker,
        stronger=stronger,
        deals=deals,
        seconds=time.perf_counter() - started,
        advantage=result.agents[stronger].advantage,
        points_stronger=result.agents[stronger].points,
        points_weaker=result.agents[weaker].points,
        won_stronger=result.agents[stronger].won,
        chunk_deals=chunk_deals,
    )


def ladder_markdown(steps: Sequence[StepResult]) -> str:
    """The ladder table: preset | step | advantage ± CI | points/manche stronger vs weaker | matches won by the
    stronger | significant | deal groups | seconds."""
    header = ["preset", "step", "advantage of the stronger", "points/manche: stronger vs weaker"]
    header += ["matches won by the stronger", "significant", "deals", "seconds"]
    rows = [
        [
            s.preset,
            f"{s.stronger} vs {s.weaker}",
            format_estimate(s.advantage, signed=True),
            f"{format_estimate(s.points_stronger)} vs {format_estimate(s.points_weaker)}",
            format_estimate(s.won_stronger, scale=100, digits=1) + " %",
            "yes" if s.significant else "no",
            str(s.deals),
            f"{s.seconds:.1f}",
        ]
        for s in steps
    ]
    return markdown_table(header, rows, text_columns=2)


def ladder_plot(steps: Sequence[StepResult], path: str | Path) -> None:
    """PNG of each step's advantage with its 95 % CI, one cluster of bars per preset."""
    groups: dict[str, tuple[list[str], list[Estimate]]] = {}
    for s in steps:
        labels, estimates = groups.setdefault(s.preset, ([], []))
        labels.append(f"{s.stronger} vs {s.weaker}")
        estimates.append(s.advantage)
    errorbar_png(path, groups, ylabel="advantage of the stronger (points/manche)", title="baseline ladder")


def _step_json(step: StepResult) -> dict[str, Any]:
    data = asdict(step)
    for key, value in vars(step).items():  # an estimate as {mean, ci, n}, the form ladder.json has always had
        if isinstance(value, Estimate):
            data[key] = {"mean": value.mean, "ci": value.ci, "n": value.n}
    data["significant"] = step.significant
    return data


def _parser() -> ArgumentParser:
    parser = ArgumentParser(
        prog="python -m president_env.evaluation.ladder",
        description="Baseline ladder: each level (one seat) against the level below (the other seats), "
        "duplicate deals; significant when the advantage CI lies above 0.",
    )
    parser.add_argument(
        "--presets",
        default=",".join(DEFAULT_PRESETS),
        help="presets or YAML paths, comma-separated (default: %(default)s)",
    )
    parser.add_argument("--deals", type=int, default=200, help="deal groups per step (default: %(default)s)")
    parser.add_argument("--deals-mc", type=int, default=None, help="deal groups for steps with an mc-* agent")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument(
        "--chunk-deals",
        type=int,
        default=DEFAULT_CHUNK_DEALS,
        help="deal groups per batch, part of the seeding: a run of k chunks is the start of any longer run "
        "(default: %(default)s)",
    )
    parser.add_argument("--steps", default=None, help="subset, e.g. random:heuristic-1,heuristic-1:heuristic-2")
    parser.add_argument(
        "--out", default="runs/ladder", help="output folder (default: %(default)s; the committed one only when named)"
    )
    parser.add_argument("--no-progress", action="store_true", help="no progress bars")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = _parser()
    args = parser.parse_args(argv)
    presets = [p.strip() for p in args.presets.split(",") if p.strip()]
    try:
        for preset in presets:
            resolve_rules(preset)
        check_counts(deals=args.deals, chunk_deals=args.chunk_deals, workers=args.workers)
        if args.deals_mc is not None:
            check_counts(deals_mc=args.deals_mc)
        steps = default_steps() if args.steps is None else parse_steps(args.steps)
    except ValueError as err:
        parser.error(str(err))

    results: list[StepResult] = []
    for preset in presets:
        for weaker, stronger in steps:
            uses_mc = any(name.startswith("mc-") for name in (weaker, stronger))
            deals = args.deals_mc if uses_mc and args.deals_mc is not None else args.deals
            print(f"[{preset}] {stronger} vs {weaker}: {deals} deal groups ...", flush=True)
            step = run_step(
                preset, weaker, stronger, deals, args.seed, args.workers, not args.no_progress, args.chunk_deals
            )
            results.append(step)
            verdict = "significant" if step.significant else "not significant"
            print(
                f"[{preset}] {stronger} vs {weaker}: advantage {format_estimate(step.advantage, signed=True)} "
                f"({verdict}), {step.seconds:.0f} s",
                flush=True,
            )

    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    table = ladder_markdown(results)
    config = {"presets": presets, "steps": [list(s) for s in steps], "deals": args.deals, "deals_mc": args.deals_mc}
    config |= {"chunk_deals": args.chunk_deals}
    config |= {"seed": args.seed, "rules": {p: resolve_rules(p).to_dict() for p in presets}}
    payload = {"config": config, "steps": [_step_json(s) for s in results]}
    dump_json(payload, out / "ladder.json")
    (out / "ladder.md").write_text(table + "\n", encoding="utf-8")
    ladder_plot(results, out / "ladder.png")
    print("\n" + table)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
