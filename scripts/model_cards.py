"""Write ``docs/models.md``: one model card per shipped learned agent, read from its checkpoint.

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

INTRO = """# Model cards: the shipped agents

The learned agents in `agents/checkpoints/` (package data, installed with the package), each made by name:
`agents.make("ppo-quebec")`, `president-play --rules quebec --opponents ppo-quebec`,
`president-eval --rules quebec --agents ppo-quebec --against heuristic-3`. Every one is a masked-PPO policy
trained by self-play, against past versions of itself and against baselines ([Training](training.md); each card
gives the mix of its tables), acting greedily (the most probable legal action). A per-table agent plays only the
rules it was trained for (`agents.make` refuses others); `ppo-universal` plays any table. How strong each is,
against heuristic-3 and mc-4 on its table's match: [the agents table](results/matches/agents.md); how the figures
are measured: [Agents and baselines](baselines.md). The per-table agents trained on single manches, so the exchange
and the role play of a match are new to them (what that cost `ppo-standard-4p-long`:
[the exploitability probe](results/probe/README.md)); `ppo-universal` trained on each table's own match.

This page is written from the checkpoints by `python scripts/model_cards.py`; `tests/test_docs_site.py` checks
that it matches them.
"""

# agent: (its training run's folder, its match measurements' folder), under docs/results/
FOLDERS = {
    "ppo-standard-4p": ("ppo/", "matches/ppo-standard-4p/"),
    "ppo-standard-4p-long": ("experiments/standard_4p_long/", "matches/ppo-standard-4p-long/"),
    "ppo-universal": ("experiments/universal/", "experiments/universal/"),
}


def folders(name: str) -> tuple[str, str]:
    """The agent's training run folder and match measurements folder, relative to ``docs/results/``."""
    table = name.removeprefix("ppo-").replace("standard-", "standard_")
    return FOLDERS.get(name, (f"agents/{table}/", f"matches/{name}/"))


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
    if network.get("kind") == "universal":
        critic = "it also reads every hand, in training only" if network["critic"] == "perfect" else "the same input"
        return (
            f"an MLP actor ({hidden}, {network['activation']}) over one {network['obs_size']}-wide encoding for every "
            f"table and {network['num_actions']} actions; a separate critic ({critic})"
        )
    return (
        f"MLP trunk {hidden} ({network['activation']}), {network['obs_dim']} inputs, policy head over "
        f"{network['num_actions']} actions and a value head"
    )


def opponents_text(opponents: dict[str, Any]) -> str:
    """The tables' mix: self-play, past versions (snapshots) and each baseline, as shares of the games."""
    parts = [f"self-play {opponents['self_play']:.0%}", f"past versions {opponents['snapshots']:.0%}"]
    parts += [f"{name} {share:.1%}".replace(".0%", "%") for name, share in opponents["baselines"].items()]
    return ", ".join(parts)


def trained_on(checkpoint: dict[str, Any]) -> str:
    config = checkpoint["config"]
    if checkpoint["network"].get("kind") == "universal":
        tables = ", ".join(
            t["rules"] + (f" ({t['n_players']} players)" if t.get("n_players") else "") for t in config["tables"]
        )
        return f"{len(config['tables'])} tables, each its preset's match: {tables}"
    rules = checkpoint["rules"]
    match = "single manches" if rules["manches"] == 1 else f"{rules['manches']}-manche matches"
    return f"{rules['n_players']} players, {match} (rules `{config['rules']}`)"


def card(path: Path, descriptions: dict[str, str]) -> str:
    from president_env.agents.checkpoint import load_checkpoint

    name = path.stem
    checkpoint = load_checkpoint(path)
    progress, config = checkpoint["progress"], checkpoint["config"]
    run, measured = folders(name)
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
