"""Write ``docs/models.md``, one model card per shipped learned agent, and the README's table of its figures.

    python scripts/model_cards.py             # writes docs/models.md and the README's figures
    python scripts/model_cards.py --check     # exit 1 if either differs from what the checkpoints and results say

Each card says what the agent plays, its network, and each stage of its training (:data:`LINEAGE`: the recipe,
seed, tables, env steps, updates and minutes, read from the checkpoint each stage ended at), the file and its
sha256, and links to the runs. Its figures are the verdicts of its held-out measurement (:data:`MEASURED`,
played by ``scripts/universal_targets.py`` and judged by its ``judge``), shown only where that measurement played these
very weights; its known limits are the targets not met there and :data:`LIMITS`. The README's table, between
:data:`README_START` and :data:`README_END`, gives the same measurement's figures at each preset table and on the
rule-set suite. ``tests/test_docs_site.py`` checks both pages. A repository maintenance script, not part of the
installed package (needs torch).
"""

from __future__ import annotations

import hashlib
import json
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from president_env.core.user_input import ArgumentParser

sys.path.insert(0, str(Path(__file__).resolve().parent))  # measure_universal, universal_targets: scripts beside it

ROOT = Path(__file__).resolve().parent.parent
PAGE = ROOT / "docs" / "models.md"
README = ROOT / "README.md"
AGENTS = ROOT / "docs" / "agents.md"
README_START = "<!-- ppo-universal's held-out figures: written by scripts/model_cards.py -->"
README_END = "<!-- end of ppo-universal's held-out figures -->"
CHECKPOINTS = ROOT / "agents" / "checkpoints"

INTRO = """# Model cards: the shipped agent

The learned agent in `agents/checkpoints/` (package data, installed with the package), made by name for any table:
`agents.make("ppo-universal", "quebec")`, `president-play --rules quebec --opponents ppo-universal`,
`president-eval --rules quebec --agents ppo-universal --against heuristic-3`. A masked-PPO policy trained by
self-play, against past versions of itself and against baselines ([Training](training.md); the card gives its
stages and tables), acting greedily (the most probable legal action), one network for every table, in each
table's own match. How the figures are measured: [Agents and baselines](baselines.md).

**Retired.** The per-table agents it replaced (`agents.RETIRED_AGENTS`: its first weights beat each on that
agent's own table, held-out deals, +0.45 to +0.96) left the package: their names still make `ppo-universal`, with
a deprecation warning ([Learned agents](agents.md#retired-agents)); their checkpoints are under
`results/matches/`, their recipes and figures under `docs/results/` ([the agents table](results/matches/agents.md)).

This page is written from the checkpoints by `python scripts/model_cards.py`; `tests/test_docs_site.py` checks
that it matches them.
"""


@dataclass(frozen=True)
class Stage:
    """One stage of an agent's training: its recipe, the checkpoint it ended at, its run's folder (docs/results/)."""

    recipe: str
    checkpoint: str
    run: str


LINEAGE = {
    "ppo-universal": (
        Stage("configs/train/universal.yaml", "results/experiments/universal/sitting3/checkpoint.pt",
              "experiments/universal/"),
        Stage("configs/train/universal_rules.yaml", "results/experiments/universal_rules/sitting2/checkpoint.pt",
              "experiments/universal_rules/"),
        Stage("configs/train/universal_rules_phase2.yaml", "agents/checkpoints/ppo-universal.pt",
              "experiments/universal_rules/"),
    ),
}  # fmt: skip
"""agent: its training stages, oldest first; each starts from the weights the one before it ended at."""
MEASURED = {"ppo-universal": "experiments/universal_rules/heldout/"}
"""agent: its held-out measurement's folder under docs/results/ (``scripts/universal_targets.py --out``)."""
LIMITS = {
    "ppo-universal": (
        "It acts greedily and searches nothing at play time: on the same table and observation it always plays the "
        "same card.",
        "Against a patient, pass-heavy player at `or_nothing` its edge over heuristic-3 is its smallest: "
        "heuristic-3's habit of always matching the rank in force is near the ceiling there, and mc-5 did no "
        "better on development deals ([the run's README](results/experiments/universal_rules/README.md)).",
    ),
}
"""agent: what its card says it cannot do, beside the held-out targets it misses and its probes' figures."""
PROBES = {
    "ppo-universal": (
        ("the standard table", "probe/ppo-universal-rule-space-standard/"),
        ("`sampled_5150` (`rule_suite(5150, 1)[0]`: 7 players, two decks, `or_nothing`, 7 manches)",
         "probe/ppo-universal-rule-space-sampled/"),
    ),
}  # fmt: skip
"""agent: its exploitability probes (``python -m president_env.training.probe``), each a table and its folder under
docs/results/ (``probe.json``)."""


def probe_sentence(name: str, docs: str) -> str:
    """What the best responses of :data:`PROBES` won against copies of ``name``; ``docs``: the link's path to docs/."""
    found = []
    for table, folder in PROBES[name]:
        probe = json.loads((ROOT / "docs" / "results" / folder / "probe.json").read_text(encoding="utf-8"))
        if probe["target"] != name:
            raise ValueError(f"docs/results/{folder}probe.json probed {probe['target']!r}, not {name!r}")
        estimate = f"{probe['advantage']:+.2f} ± {probe['advantage_ci95']:.2f}"
        found.append((table, estimate, probe["env_steps"], probe["deal_groups"], probe["seed"]))
    steps = {f"{row[2] / 1e6:.1f} M" for row in found}
    deals = {f"{row[3]} deal groups of seed {row[4]}" for row in found}
    figures = " and ".join(f"**{estimate}** a manche at {table}" for table, estimate, *_ in found)
    return (
        f"A best response trained from its weights against copies of it ({' / '.join(sorted(steps))} env steps; "
        f"the exploitability probe) wins {figures}, on {' / '.join(sorted(deals))} (new deals; the zero control, "
        f"the target in its seat, scores 0): [the probe's report]({docs}results/probe/README.md)."
    )


def results_link(folder: str) -> str:
    """A folder of ``docs/results/``: a link to its page where it has one, else its path."""
    if (ROOT / "docs" / "results" / folder / "README.md").is_file():
        return f"[`docs/results/{folder}`](results/{folder}README.md)"
    return f"`docs/results/{folder}`"


def network_text(network: dict[str, Any]) -> str:
    hidden = " × ".join(str(h) for h in network["hidden"])
    critic = "it also reads every hand, in training only" if network["critic"] == "perfect" else "the same input"
    return (
        f"an MLP actor ({hidden}, {network['activation']}) over one {network['obs_size']}-wide encoding for every "
        f"table and {network['num_actions']} actions; a separate critic ({critic})"
    )


def opponents_text(opponents: dict[str, Any]) -> str:
    """The tables' mix: self-play, past versions (snapshots) and each baseline, as shares of the games."""
    parts = [f"self-play {opponents['self_play']:.0%}", f"past versions {opponents['snapshots']:.0%}"]
    parts += [f"{name} {share:.1%}".replace(".0%", "%") for name, share in opponents["baselines"].items()]
    return ", ".join(parts)


def trained_on(config: dict[str, Any]) -> str:
    """The tables a stage trained on: its fixed tables, or its draws from the rule space."""
    space = config.get("rule_space")
    if space:
        return (
            f"the rule space: {space['draws']} rule sets drawn every {config['budget']['checkpoint_every']} updates "
            f"(every field of `Rules`, 3 to 8 players), {space['preset_share']:.0%} of them the "
            f"{len(space['presets'])} preset tables"
        )
    tables = ", ".join(
        t["rules"] + (f" ({t['n_players']} players)" if t.get("n_players") else "") for t in config["tables"]
    )
    return f"{len(config['tables'])} tables, each its preset's match: {tables}"


def stage_rows(stages: tuple[Stage, ...]) -> tuple[list[str], dict[str, float]]:
    """One table row per stage, and the totals over all of them."""
    from president_env.agents.checkpoint import load_checkpoint

    rows, total = [], {"global_step": 0.0, "update": 0.0, "elapsed_s": 0.0}
    for number, stage in enumerate(stages, 1):
        checkpoint = load_checkpoint(ROOT / stage.checkpoint)
        progress, config = checkpoint["progress"], checkpoint["config"]
        if not (ROOT / stage.recipe).is_file():
            raise ValueError(f"{stage.recipe}: no such recipe (LINEAGE names the configs a stage trained with)")
        start = (config.get("init") or {}).get("weights")
        if number > 1 and start != "ppo-universal" and start != stages[number - 2].checkpoint:
            # a stage names the one before it by path (stage 2, by the name that then meant stage 1's weights)
            raise ValueError(f"{stage.checkpoint} started from {start}, not from {stages[number - 2].checkpoint}")
        for key in total:
            total[key] += progress[key]
        rows.append(
            f"| {number} | `{stage.recipe}`, seed {config['seed']} | {trained_on(config)} | "
            f"{progress['global_step'] / 1e6:.1f} M | {progress['update']} | {progress['elapsed_s'] / 60:.0f} | "
            f"{results_link(stage.run)} |"
        )
    return rows, total


def same_weights(a: Path, b: Path) -> bool:
    """Whether two checkpoints hold the same network weights (the actor and critic)."""
    import torch

    from president_env.agents.checkpoint import load_checkpoint

    first, second = load_checkpoint(a)["model"], load_checkpoint(b)["model"]
    return first.keys() == second.keys() and all(torch.equal(first[k], second[k]) for k in first)


def figures(name: str, path: Path) -> tuple[list[str], list[str]]:
    """The held-out verdict table of :data:`MEASURED` and the targets it misses, where it measured these weights."""
    folder = ROOT / "docs" / "results" / MEASURED[name]
    from universal_targets import AGAIN, command, judge, reference_mc4

    settings = folder / "settings.json"
    if not settings.is_file():
        return ["Not measured on held-out seeds yet."], []
    kept = json.loads(settings.read_text(encoding="utf-8"))
    if not same_weights(ROOT / kept["agent"], path):
        return [f"Its held-out measurement ({results_link(MEASURED[name])}) played other weights: not shown."], []
    verdicts = judge(folder, reference_mc4())  # from the parts' summaries, as universal_targets.py judges them
    mark = {True: "met", False: "**not met**", None: "not measured yet"}
    measured = sum(v.met is not None for v in verdicts)
    table = [
        f"The rule-space agent's held-out targets (rule seed {kept['rule_seed']}; deal seed {kept['seed']} for the "
        f"suite, {kept['preset_seed']} for the presets and styles; advantage in points per manche, ± = 95 % "
        f"interval), {measured} of {len(verdicts)} measured so far; the tables: "
        f"[`docs/results/{MEASURED[name]}`](results/{MEASURED[name]}targets.md).",
        "",
        "| target | figure | verdict | part |",
        "|---|---|---|---|",
        *(f"| {v.target} | {v.figure if v.met is not None else ''} | {mark[v.met]} | `{v.part}` |" for v in verdicts),
        "",
        "Each figure is reproduced by playing its part (the last column) again, into a new folder; the same seeds "
        "give the same figures:",
        "",
        "```bash",
        command(kept, AGAIN, "PART"),
        "```",
    ]
    missed = [f"Held out, not met: {v.target} ({v.figure})." for v in verdicts if v.met is False]
    return table, missed


def card(path: Path, descriptions: dict[str, str]) -> str:
    from president_env.agents.checkpoint import load_checkpoint

    name = path.stem
    checkpoint = load_checkpoint(path)
    rows = [
        ("plays", descriptions[name]),
        ("opponents", opponents_text(checkpoint["config"]["opponents"]) + " (its last stage)"),
        ("network", network_text(checkpoint["network"])),
        (
            "file",
            f"`agents/checkpoints/{path.name}`, {path.stat().st_size / 1e6:.1f} MB, "
            f"sha256 `{hashlib.sha256(path.read_bytes()).hexdigest()[:16]}…`",
        ),
    ]
    stages, total = stage_rows(LINEAGE[name])
    table, missed = figures(name, path)
    lines = [
        f"## `{name}`",
        "",
        "| | |",
        "|---|---|",
        *(f"| {key} | {value} |" for key, value in rows),
        "",
        f"**Training**: {total['global_step'] / 1e6:.1f} M env steps, {total['update']:.0f} updates, "
        f"{total['elapsed_s'] / 60:.0f} training minutes, in {len(stages)} stages; each starts from the weights "
        "the one before ended at (the resolved configs and curves: each run's folder).",
        "",
        "| stage | recipe | trained on | env steps | updates | minutes | run |",
        "|---:|---|---|---:|---:|---:|---|",
        *stages,
        "",
        "**Figures.** " + table[0],
        *table[1:],
        "",
        "**Known limits.**",
        "",
        *(f"- {limit}" for limit in (*missed, probe_sentence(name, ""), *LIMITS[name])),
    ]
    return "\n".join(lines) + "\n"


def held_out_figures(name: str = "ppo-universal") -> tuple[str, str]:
    """The agent's held-out figures: a table for docs/agents.md (every preset table, then the rule-set suite) and
    one paragraph for the README (a first page holds no result table)."""
    from measure_universal import TABLES
    from universal_targets import MC5_TABLES, _load

    from president_env.evaluation.report import format_estimate
    from president_env.evaluation.statistics import Estimate

    folder = ROOT / "docs" / "results" / MEASURED[name]
    settings = json.loads((folder / "settings.json").read_text(encoding="utf-8"))
    if not same_weights(ROOT / settings["agent"], CHECKPOINTS / f"{name}.pt"):
        raise ValueError(f"docs/results/{MEASURED[name]} measured other weights than the shipped {name}")
    presets, presets_mc5, styles = (_load(folder, part) for part in ("presets", "presets_mc5", "styles"))

    def cell(summary: dict[str, Any] | None, table: str, opponent: str, edge: bool = False) -> str:
        if summary is None:
            return "measuring"
        found = summary["tables"][table][opponent]
        text = format_estimate(Estimate(found["advantage"], found["ci"], found["groups"]), signed=True)
        if edge:
            text += f" ({format_estimate(Estimate(found['difference'], found['difference_ci'], 0), signed=True)})"
        return text

    rows = [
        f"| {table} ({TABLES[table][0].n_players}) | {cell(presets, table, 'mc-4')} | "
        f"{cell(presets_mc5, table, 'mc-5') if table in MC5_TABLES else ''} | "
        f"{cell(styles, table, 'style-patient', edge=True)} |"
        for table in TABLES
    ]
    suite_h3_mc4 = _load(folder, "suite")  # one file holds both opponents
    suites = {"heuristic-3": suite_h3_mc4, "mc-4": suite_h3_mc4, "mc-5": _load(folder, "suite_mc5")}
    means, above = [], []
    for opponent, suite in suites.items():
        if suite is None:
            means.append("measuring")
            above.append("measuring")
            continue
        record = suite["advantage"][opponent]
        mean = record["mean"]
        means.append(format_estimate(Estimate(mean["mean"], mean["ci"], mean["n"]), signed=True))
        lows = [Estimate(r["mean"], r["ci"], r["n"]).low > 0 for r in record["per_rule_set"]]
        above.append(f"{sum(lows)} of {len(lows)}")
    lines = [
        f"`{name}` on held-out deals (deal seed {settings['preset_seed']}, {settings['preset_deals']} deal groups a "
        "table; one agent against P − 1 copies, each table's 5-manche match; points per manche above the table's "
        "mean, ± the 95 % interval; in brackets, its edge over heuristic-3 on the same deals; mc-5 at "
        f"{' and '.join(MC5_TABLES)} only):",
        "",
        "| table (players) | vs mc-4 | vs mc-5 | vs style-patient (edge over heuristic-3) |",
        "|---|---:|---:|---:|",
        *rows,
        "",
        f"On the held-out rule-set suite (`--rule-suite {settings['rule_seed']}:20`, deal seed {settings['seed']}; "
        f"{settings['suite_deals']} deal groups a rule set, {settings['mc5_deals']} against mc-5 on its first five):",
        "",
        "| | vs heuristic-3 | vs mc-4 | vs mc-5 |",
        "|---|---:|---:|---:|",
        "| mean over the rule sets | " + " | ".join(means) + " |",
        "| rule sets with the interval above 0 | " + " | ".join(above) + " |",
        "",
        "Each figure's command, and its verdict against the rule-space agent's held-out targets: the card, "
        "[models.md](models.md).",
    ]
    if presets is None:
        mc4 = "mc-4 at the presets: measuring"
    else:
        values = [presets["tables"][table]["mc-4"]["advantage"] for table in TABLES]
        mc4 = f"mc-4 at every preset table ({min(values):+.2f} to {max(values):+.2f})"
    mc5 = " and ".join(f"{table} ({cell(presets_mc5, table, 'mc-5')})" for table in MC5_TABLES)
    suite = [
        f"{opponent} (mean {mean}, {count} above 0)" if count != "measuring" else f"{opponent} (measuring)"
        for opponent, mean, count in zip(suites, means, above)
    ]
    summary = (
        f"**How strong `{name}` is.** On held-out deals ({settings['preset_deals']} deal groups a table, ± the 95 % "
        f"interval) it beats {mc4} and mc-5 at {mc5}. On the 20 held-out rule sets of `--rule-suite "
        f"{settings['rule_seed']}:20` it beats {suite[0]}, {suite[1]} and, on the first five, {suite[2]}. The "
        "tables: "
        "[docs/agents.md](docs/agents.md#held-out-figures); each figure's command and verdict: "
        f"[docs/models.md](docs/models.md). It can be exploited. {probe_sentence(name, 'docs/')}"
    )
    return "\n".join(lines), summary


def between_markers(text: str, content: str) -> str:
    """``text`` with ``content`` written anew between its two markers (:data:`README_START`, :data:`README_END`)."""
    start, end = text.index(README_START) + len(README_START), text.index(README_END)
    return text[:start] + "\n" + content + "\n" + text[end:]


def page() -> str:
    """The whole page, as the checkpoints say it."""
    from president_env import agents

    descriptions = dict(agents.SHIPPED_AGENTS)
    paths = [CHECKPOINTS / f"{name}.pt" for name in descriptions if (CHECKPOINTS / f"{name}.pt").is_file()]
    return INTRO + "".join("\n" + card(path, descriptions) for path in paths)


def main(argv: list[str] | None = None) -> int:
    parser = ArgumentParser(prog="model_cards.py", description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="exit 1 if a page is not what it would write")
    args = parser.parse_args(argv)
    table, summary = held_out_figures()
    pages = {
        PAGE: page(),
        README: between_markers(README.read_text(encoding="utf-8"), summary),
        AGENTS: between_markers(AGENTS.read_text(encoding="utf-8"), table),
    }
    if args.check:
        differ = [path.name for path, text in pages.items() if path.read_text(encoding="utf-8") != text]
        print(f"{' and '.join(differ)} differ: run scripts/model_cards.py" if differ else "the pages match")
        return 1 if differ else 0
    for path, text in pages.items():
        path.write_text(text, encoding="utf-8")
        print(f"wrote {path.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
