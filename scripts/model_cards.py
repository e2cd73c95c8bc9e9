"""Write ``docs/models.md``: one model card per shipped learned agent (a universal network), read from its checkpoint.

    python scripts/model_cards.py             # writes docs/models.md
    python scripts/model_cards.py --check     # exit 1 if docs/models.md differs from what the checkpoints say

Each card says what the agent plays, its network, the recipe and seed it trained with, how long (env steps,
updates, training minutes, torch threads), the file and its sha256, and links to the run's folder and its
measurements under ``docs/results/``: the figures live there, once. ``tests/test_docs_site.py`` checks that the
page matches the checkpoints. A repository maintenance script, not part of the installed package (needs torch).
"""

from __future__ import annotations

import hashlib
import sys
from pathlib import Path
from typing import Any

from president_env.core.user_input import ArgumentParser

ROOT = Path(__file__).resolve().parent.parent
PAGE = ROOT / "docs" / "models.md"
CHECKPOINTS = ROOT / "agents" / "checkpoints"

INTRO = """# Model cards: the shipped agent

The learned agent in `agents/checkpoints/` (package data, installed with the package), made by name for any table:
`agents.make("ppo-universal", "quebec")`, `president-play --rules quebec --opponents ppo-universal`,
`president-eval --rules quebec --agents ppo-universal --against heuristic-3`. A masked-PPO policy trained by
self-play, against past versions of itself and against baselines ([Training](training.md); the card gives the mix
of its tables), acting greedily (the most probable legal action), one network for every table, in each table's own
match. How strong it is: [the universal run's measurements](results/experiments/universal/README.md); how the
figures are measured: [Agents and baselines](baselines.md).

**Retired.** The per-table agents it replaced (`agents.RETIRED_AGENTS`: it beats each on that agent's own table,
held-out deals, +0.45 to +0.96) left the package: their names still make `ppo-universal`, with a deprecation
warning ([Learned agents](agents.md#retired-agents)); their checkpoints are under `results/matches/`, their recipes
and figures under `docs/results/` ([the agents table](results/matches/agents.md)).

This page is written from the checkpoints by `python scripts/model_cards.py`; `tests/test_docs_site.py` checks
that it matches them.
"""

# agent: (its training run's folder, its measurements' folder), under docs/results/
FOLDERS = {
    "ppo-universal": ("experiments/universal/", "experiments/universal/"),
}


def recipe(name: str) -> str | None:
    """The shipped training config the agent's run used, if it is in ``configs/train/``."""
    path = Path("configs") / "train" / (name.removeprefix("ppo-").replace("-", "_") + ".yaml")
    return path.as_posix() if (ROOT / path).is_file() else None


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


def trained_on(checkpoint: dict[str, Any]) -> str:
    config = checkpoint["config"]
    tables = ", ".join(
        t["rules"] + (f" ({t['n_players']} players)" if t.get("n_players") else "") for t in config["tables"]
    )
    return f"{len(config['tables'])} tables, each its preset's match: {tables}"


def card(path: Path, descriptions: dict[str, str]) -> str:
    from president_env.agents.checkpoint import load_checkpoint

    name = path.stem
    checkpoint = load_checkpoint(path)
    progress, config = checkpoint["progress"], checkpoint["config"]
    run, measured = FOLDERS[name]
    source = recipe(name)
    rows = [
        ("plays", descriptions[name]),
        ("trained on", trained_on(checkpoint)),
        ("opponents", opponents_text(config["opponents"])),
        ("network", network_text(checkpoint["network"])),
        (
            "recipe",
            (f"`{source}`, " if source else "") + f"seed {config['seed']} (the resolved config: the run's folder)",
        ),
        (
            "training",
            f"{progress['global_step'] / 1e6:.1f} M env steps, {progress['update']} updates, "
            f"{progress['elapsed_s'] / 60:.0f} training minutes, {config['threads']} torch thread"
            + ("s" if config["threads"] != 1 else ""),
        ),
        (
            "file",
            f"`agents/checkpoints/{path.name}`, {path.stat().st_size / 1e6:.1f} MB, "
            f"sha256 `{hashlib.sha256(path.read_bytes()).hexdigest()[:16]}…`",
        ),
        ("run", results_link(run) + " (config, metrics, learning curve)"),
        ("measured", results_link(measured)),
    ]
    lines = [f"## `{name}`", "", "| | |", "|---|---|", *(f"| {key} | {value} |" for key, value in rows)]
    return "\n".join(lines) + "\n"


def page() -> str:
    """The whole page, as the checkpoints say it."""
    from president_env import agents

    descriptions = dict(agents.SHIPPED_AGENTS)
    paths = [CHECKPOINTS / f"{name}.pt" for name in descriptions if (CHECKPOINTS / f"{name}.pt").is_file()]
    return INTRO + "".join("\n" + card(path, descriptions) for path in paths)


def main(argv: list[str] | None = None) -> int:
    parser = ArgumentParser(prog="model_cards.py", description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="exit 1 if docs/models.md is not what it would write")
    args = parser.parse_args(argv)
    text = page()
    if args.check:
        same = PAGE.is_file() and PAGE.read_text(encoding="utf-8") == text
        print(
            "docs/models.md matches the checkpoints" if same else "docs/models.md differs: run scripts/model_cards.py"
        )
        return 0 if same else 1
    PAGE.write_text(text, encoding="utf-8")
    print(f"wrote {PAGE.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
