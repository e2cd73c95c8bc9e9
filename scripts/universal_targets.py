"""The rule-space agent's held-out targets: every measurement in one resumable command, then the verdict.

    python scripts/universal_targets.py --agent ppo-universal --rule-seed 20261204 --seed 20261205 \\
        --preset-seed 20261206 --workers 2 --out docs/results/experiments/universal_rules/heldout
    python scripts/universal_targets.py ... --parts suite,presets     # some parts now, the rest later
    python scripts/universal_targets.py ... --judge-only             # the verdict of the parts finished so far

The parts (:data:`PARTS`), each in its own folder of ``OUT``:

- ``suite``: the agent against ``P - 1`` copies of heuristic-3 and of mc-4 at the 20 rule sets of
  ``rule_suite(--rule-seed, 20)`` (``president-eval --rule-suite``), ``--suite-deals`` deal groups of ``--seed``;
- ``suite_mc5``: against mc-5 at the first 5 of those rule sets, ``--mc5-deals`` groups of ``--seed``;
- ``presets``: against mc-4 at every table of ``measure_universal.TABLES`` (the presets, and the standard
  rules at 3 and 5 players), ``--preset-deals`` groups of ``--preset-seed``;
- ``presets_mc5``: against mc-5 at standard and or_nothing, as ``presets``;
- ``styles``: against the held-out styles (``agents.styles.HELD_OUT_STYLES``) and the training ones at every
  table, paired with heuristic-3 on the same deals (``measure_universal.py --paired-with heuristic-3``).

Every part keeps its finished chunks (in ``--chunks``, ``OUT`` by default: give a folder outside ``docs/``, which
holds no binaries), so the same command continues a stopped run with the same result; a part whose summary is
written is not played again, and its chunks may then go. ``OUT/targets.md`` and ``OUT/targets.json`` then hold
each target of issue 33 (:func:`judge`) with its figure and whether it is met (``not measured`` while its part is
missing). The presets' reference against mc-4 is the first shipped weights' held-out figure (issue 22), read from
:data:`REFERENCE_MC4`. The exploitability probe is a training run of its own (``python -m
president_env.training.probe``). A repository maintenance script: it is not part of the installed package.
"""

from __future__ import annotations

import json
import sys
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))  # measure_universal: a script beside this one

from measure_universal import TABLES, measure, write_summary  # noqa: E402

from president_env import agents  # noqa: E402
from president_env.agents.styles import HELD_OUT_STYLES, STYLES  # noqa: E402
from president_env.core.registry import check_name  # noqa: E402
from president_env.core.user_input import ArgumentParser, check_writable_dir  # noqa: E402
from president_env.evaluation.report import dump_json, format_estimate, markdown_table  # noqa: E402
from president_env.evaluation.statistics import Estimate  # noqa: E402
from president_env.evaluation.suite import evaluate_suite, write_suite  # noqa: E402
from president_env.evaluation.tournament import check_counts, check_seeds  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
REFERENCE_MC4 = "docs/results/experiments/universal/heldout_20261202_mc4*/summary.json"
"""``ppo-universal``'s first weights' held-out figures against mc-4 at every table (seed 20261202, 200 groups)."""
SUITE_RULES, SUITE_MC5_RULES = 20, 5
TRAINING_STYLES = tuple(name for name in STYLES if name not in HELD_OUT_STYLES)
STYLE_OPPONENTS = (*HELD_OUT_STYLES, *TRAINING_STYLES)
MC5_TABLES = ("standard", "or_nothing")
PARTS = ("suite", "suite_mc5", "presets", "presets_mc5", "styles")
"""The parts, in the order they play; each writes ``OUT/<part>/`` (``suite.json`` or ``summary.json`` when done)."""
SETTINGS = ("agent", "rule_seed", "seed", "preset_seed", "suite_deals", "mc5_deals", "preset_deals", "chunk_deals")
"""What a measurement depends on: written to ``OUT/settings.json`` at the first run; a rerun must repeat them."""


@dataclass
class Verdict:
    """One target: what it asks, the figure measured, whether it is met (``None``: not measured yet), and the part
    (:data:`PARTS`) that measures it."""

    target: str
    figure: str
    met: bool | None
    part: str


def _estimate(cell: dict[str, Any], key: str = "advantage", ci: str = "ci") -> Estimate:
    return Estimate(cell[key], cell[ci], cell.get("groups", cell.get("n", 0)))


def _load(out: Path, part: str) -> dict[str, Any] | None:
    name = "suite.json" if part.startswith("suite") else "summary.json"
    path = out / part / name
    return json.loads(path.read_text(encoding="utf-8")) if path.is_file() else None


def reference_mc4(root: Path = ROOT) -> dict[str, float]:
    """``{table: advantage}``: the first shipped weights' held-out figure against mc-4 at each table."""
    reference = {}
    for path in sorted(root.glob(REFERENCE_MC4)):
        for table, cells in json.loads(path.read_text(encoding="utf-8"))["tables"].items():
            reference[table] = cells["mc-4"]["advantage"]
    return reference


def judge(out: Path, reference: dict[str, float]) -> list[Verdict]:
    """Issue 33's targets (its section 5) against the parts finished in ``out``."""
    verdicts: list[Verdict] = []

    def add(part: str, target: str, figure: str = "not measured", met: bool | None = None) -> None:
        verdicts.append(Verdict(target, figure, met, part))

    suite = _load(out, "suite")
    for opponent, need_mean, need_count in (("heuristic-3", 0.5, SUITE_RULES), ("mc-4", 0.2, SUITE_RULES - 2)):
        target = (
            f"suite ({SUITE_RULES} rule sets) vs {opponent}: interval above 0 on at least {need_count}, "
            f"mean >= +{need_mean}"
        )
        if suite is None:
            add("suite", target)
            continue
        record = suite["advantage"][opponent]
        per_set = [_estimate(r, "mean") for r in record["per_rule_set"]]
        mean = _estimate(record["mean"], "mean")
        above = sum(e.low > 0 for e in per_set)
        figure = f"{above} of {len(per_set)} above 0; mean {format_estimate(mean, signed=True)}"
        add("suite", target, figure, above >= need_count and mean.mean >= need_mean)
    target = f"the first {SUITE_MC5_RULES} rule sets vs mc-5: the mean's interval above 0"
    mc5 = _load(out, "suite_mc5")
    if mc5 is None:
        add("suite_mc5", target)
    else:
        mean = _estimate(mc5["advantage"]["mc-5"]["mean"], "mean")
        add("suite_mc5", target, f"mean {format_estimate(mean, signed=True)}", mean.low > 0)
    presets = _load(out, "presets")
    for table in TABLES:
        target = f"{table} vs mc-4: at least the first weights' held-out figure - 0.05"
        if presets is None or table not in presets["tables"]:
            add("presets", target)
            continue
        e = _estimate(presets["tables"][table]["mc-4"])
        if table not in reference:
            add("presets", target, f"{format_estimate(e, signed=True)} (no reference)", None)
            continue
        figure = f"{format_estimate(e, signed=True)} (reference {reference[table]:+.2f})"
        add("presets", target, figure, e.mean >= reference[table] - 0.05)
    presets_mc5 = _load(out, "presets_mc5")
    for table, target, test in (
        ("or_nothing", "or_nothing vs mc-5: interval above 0", lambda e: e.low > 0),
        ("standard", "standard vs mc-5: >= +0.25", lambda e: e.mean >= 0.25),
    ):
        if presets_mc5 is None or table not in presets_mc5["tables"]:
            add("presets_mc5", target)
            continue
        e = _estimate(presets_mc5["tables"][table]["mc-5"])
        add("presets_mc5", target, format_estimate(e, signed=True), test(e))
    styles = _load(out, "styles")
    for style in STYLE_OPPONENTS:
        held_out = style in HELD_OUT_STYLES
        checks = [("ahead at every table (interval above 0)", "advantage", "ci")]
        if held_out:
            checks.append(("edge over heuristic-3, paired, significant at every table", "difference", "difference_ci"))
        for what, key, ci in checks:
            target = f"vs {style}{' (held out)' if held_out else ''}: {what}"
            if styles is None:
                add("styles", target)
                continue
            cells = {table: _estimate(styles["tables"][table][style], key, ci) for table in styles["tables"]}
            worst = min(cells, key=lambda table: cells[table].low)
            passing = sum(e.low > 0 for e in cells.values())
            figure = f"{passing} of {len(cells)}; lowest {worst} {format_estimate(cells[worst], signed=True)}"
            add("styles", target, figure, passing == len(TABLES) == len(cells))
    return verdicts


def command(settings: dict[str, Any], out: Path, part: str | None = None) -> str:
    """The command line that plays (or continues) the measurement of ``settings`` into ``out``: every part, or
    ``part`` alone."""
    options = " ".join(f"--{name.replace('_', '-')} {value}" for name, value in settings.items())
    parts = f" --parts {part}" if part else ""
    return f"python scripts/universal_targets.py {options}{parts} --workers 2 --out {out.as_posix()}"


AGAIN = Path("runs/heldout-again")
"""Where :func:`verdict_markdown`'s per-part command plays a part again (a new folder: a finished part is not
replayed in its own)."""


def verdict_markdown(verdicts: list[Verdict], settings: dict[str, Any], out: Path) -> str:
    mark = {True: "met", False: "**not met**", None: "not measured"}
    rows = [[v.target, v.figure, mark[v.met], f"`{v.part}`"] for v in verdicts]
    caption = (
        f"The rule-space agent's held-out targets, for `{settings['agent']}` (advantage in points per manche, "
        "± = 95 % interval)."
    )
    table = markdown_table(["target", "figure", "verdict", "part"], rows, text_columns=4)
    reproduce = (
        "One part's figures alone (the last column), played again into a new folder (the same seeds give the same "
        f"figures):\n\n    {command(settings, AGAIN, 'PART')}\n\n"
        f"Each part's tables are in its folder here. To reproduce (or continue) them:\n\n    {command(settings, out)}"
    )
    return f"{caption}\n\n{table}\n\n{reproduce}"


def check_settings(out: Path, settings: dict[str, Any]) -> None:
    """Write ``OUT/settings.json``, or check that it holds ``settings``: a folder's parts all measure one agent
    with one set of seeds and sizes. ``ValueError`` naming the first that differs."""
    path = out / "settings.json"
    if not path.is_file():
        dump_json(settings, path)
        return
    try:
        kept = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as err:
        raise ValueError(f"{path} is not the settings file this script writes ({err}); use another --out") from None
    for name, value in settings.items():
        if kept.get(name) != value:
            option = "--" + name.replace("_", "-")
            raise ValueError(
                f"{option} is {value!r}, but {out} holds a measurement with {kept.get(name)!r}: "
                "repeat its settings or use another --out"
            )


def play(part: str, args: Any) -> None:
    """Play ``part`` into ``OUT/<part>/``, keeping its chunks in ``CHUNKS/<part>/`` (a rerun continues them)."""
    folder, chunks = args.out / part, (args.chunks or args.out) / part
    options = dict(workers=args.workers, progress=not args.no_progress)
    if part in ("suite", "suite_mc5"):
        opponents, n_rules, deals = (
            (["heuristic-3", "mc-4"], SUITE_RULES, args.suite_deals)
            if part == "suite"
            else (["mc-5"], SUITE_MC5_RULES, args.mc5_deals)
        )
        result = evaluate_suite(
            args.agent, opponents, args.rule_seed, n_rules, n_deals=deals, seed=args.seed,
            chunk_deals=min(args.chunk_deals, deals), resume_dir=chunks / "chunks", **options,
        )  # fmt: skip
        write_suite(result, folder)
        return
    tables, opponents, paired_with = {
        "presets": (list(TABLES), ["mc-4"], None),
        "presets_mc5": (list(MC5_TABLES), ["mc-5"], None),
        "styles": (list(TABLES), list(STYLE_OPPONENTS), "heuristic-3"),
    }[part]
    deals = args.preset_deals
    summary = measure(
        args.agent, tables, opponents, folder, resume=True, paired_with=paired_with, chunks=chunks, n_deals=deals,
        seed=args.preset_seed, chunk_deals=min(args.chunk_deals, deals), **options,
    )  # fmt: skip
    write_summary(folder, args.agent, summary, opponents, args.preset_seed, deals, paired_with)


def main(argv: list[str] | None = None) -> int:
    parser = ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--agent", default="ppo-universal", help="agent name or checkpoint path (default: %(default)s)")
    parser.add_argument("--rule-seed", type=int, required=True, help="the suite's rule seed (--rule-suite SEED:20)")
    parser.add_argument("--seed", type=int, required=True, help="deal seed of the suite's tournaments")
    parser.add_argument("--preset-seed", type=int, required=True, help="deal seed of the presets' and styles' ones")
    parser.add_argument("--out", type=Path, required=True, help="output folder (a rerun continues it)")
    parser.add_argument("--parts", default=",".join(PARTS), help="comma-separated parts (default: all)")
    parser.add_argument("--suite-deals", type=int, default=100, help="deal groups a rule set (default: %(default)s)")
    parser.add_argument("--mc5-deals", type=int, default=60, help="groups a rule set vs mc-5 (default: %(default)s)")
    parser.add_argument("--preset-deals", type=int, default=100, help="deal groups a table (default: %(default)s)")
    parser.add_argument("--workers", type=int, default=1, help="parallel processes (default: %(default)s)")
    parser.add_argument("--chunk-deals", type=int, default=10, help="deal groups a kept chunk (default: %(default)s)")
    parser.add_argument("--chunks", type=Path, help="where the parts keep their chunks (default: OUT)")
    parser.add_argument("--judge-only", action="store_true", help="play nothing: the verdict of the finished parts")
    parser.add_argument("--no-progress", action="store_true", help="no progress bars")
    args = parser.parse_args(argv)
    parts = [name.strip() for name in args.parts.split(",") if name.strip()]
    try:  # everything is checked before the first game: a typo must not cost hours
        unknown = [part for part in parts if part not in PARTS]
        if unknown or not parts:
            listed = ", ".join(unknown) or "(none)"
            raise ValueError(f"--parts: unknown part(s) {listed}; the parts: {', '.join(PARTS)}")
        counts = ("suite_deals", "mc5_deals", "preset_deals", "workers", "chunk_deals")
        check_counts(**{"--" + name.replace("_", "-"): getattr(args, name) for name in counts})
        check_seeds(rule_seed=args.rule_seed, seed=args.seed, preset_seed=args.preset_seed)
        check_name(args.agent)
        for rules, _ in TABLES.values():  # a missing checkpoint, or one of other rules, is refused now
            agents.make(args.agent, rules)
        check_writable_dir(args.out, "--out")
        if args.chunks is not None:
            check_writable_dir(args.chunks, "--chunks")
        settings = {name: getattr(args, name) for name in SETTINGS}
        check_settings(args.out, settings)
    except (ValueError, ImportError, OSError) as err:
        parser.error(" ".join(str(err).split()))
    if not args.judge_only:
        for part in parts:
            if _load(args.out, part) is None:
                play(part, args)
    verdicts = judge(args.out, reference_mc4())
    table = verdict_markdown(verdicts, settings, args.out)
    (args.out / "targets.md").write_text(table + "\n", encoding="utf-8")
    dump_json({"agent": args.agent, "targets": [asdict(v) for v in verdicts]}, args.out / "targets.json")
    print(table)
    return 0


__all__ = ["AGAIN", "PARTS", "Verdict", "check_settings", "command", "judge", "main", "reference_mc4"]

if __name__ == "__main__":
    sys.exit(main())
