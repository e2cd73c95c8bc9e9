"""Export a universal training checkpoint as the shipped agent ``ppo-universal``.

    python scripts/ship_universal.py results/experiments/universal/sitting3/checkpoint.pt
    python scripts/ship_universal.py runs/universal_s2_ent05/checkpoint.pt --out /tmp/ppo-universal.pt

Reads a checkpoint written by ``president-train`` with ``kind: universal`` (the compact resume checkpoint or its
``policy.pt``), keeps what acting needs (``agents.checkpoint.export_policy``: network, weights, rules, config,
progress, metrics; no optimizer, no generator states) and writes it to ``agents/checkpoints/ppo-universal.pt``
(package data), then loads it back as ``agents.make("ppo-universal", ...)`` does and plays one decision at every
preset. Prints the file's size and the run's update, env steps and last evaluation. A file that is not a universal
checkpoint, one whose ``progress`` or ``metrics`` are not numbers, or an export of 10 MB or more, is refused in one
line (exit 2) and nothing is written.
A repository maintenance script: it is not part of the installed package.
"""

from __future__ import annotations

import math
import sys
import tempfile
from pathlib import Path

from president_env.agents.checkpoint import CheckpointError, export_policy, load_checkpoint
from president_env.agents.universal import build_universal, load_universal
from president_env.core.presets import PRESETS, load_preset
from president_env.core.user_input import ArgumentParser
from president_env.core.vec_game import VecGame

ROOT = Path(__file__).resolve().parent.parent
SHIPPED = ROOT / "agents" / "checkpoints" / "ppo-universal.pt"
MAX_BYTES = 10_000_000
"""Package data stays under 10 MB (issue 22)."""


def export(source: Path, out: Path) -> dict:
    """Check ``source``, write its policy to ``out`` and return what to print; ``ValueError`` (one line) if refused."""
    checkpoint = load_checkpoint(source)
    network = checkpoint.get("network") or {}
    if network.get("kind") != "universal":
        raise ValueError(
            f"{source} is not a universal checkpoint (its network: {network.get('kind', 'a per-table PolicyNet')}); "
            "give a checkpoint of president-train with kind: universal"
        )
    try:
        build_universal(checkpoint)
    except CheckpointError as err:
        raise ValueError(f"{source}: {err}") from None
    info = run_summary(checkpoint, source)  # checked before anything is written
    with tempfile.TemporaryDirectory(dir=out.parent if out.parent.is_dir() else None) as tmp:
        staged = export_policy(source, Path(tmp) / out.name)
        size = staged.stat().st_size
        if size >= MAX_BYTES:
            raise ValueError(f"the exported policy is {size / 1e6:.1f} MB; package data must stay under 10 MB")
        for preset in PRESETS:  # it loads and acts at every preset, as agents.make("ppo-universal", ...) will
            rules = load_preset(preset)
            game = VecGame(rules, batch_size=2, seed=0)
            load_universal(staged, rules, seed=0).act_batch(game.observe(), game.legal_mask())
        out.parent.mkdir(parents=True, exist_ok=True)
        staged.replace(out)
    return {"size": size, **info}


def run_summary(checkpoint: dict, source: Path) -> dict:
    """The run's update, env steps, minutes and last evaluation from ``progress`` and ``metrics``; ``ValueError``
    naming the field when one is not a number of its range (each may be absent)."""
    fields = {}
    for section, key, name in (
        ("progress", "update", "update"),
        ("progress", "global_step", "steps"),
        ("progress", "elapsed_s", "minutes"),
        ("metrics", "eval/advantage", "advantage"),
        ("metrics", "eval/advantage_ci", "advantage_ci"),
    ):
        held = checkpoint.get(section) or {}
        if not isinstance(held, dict):
            raise ValueError(f"{source}: {section} must be a dict, got {type(held).__name__}")
        value = held.get(key)
        number = isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
        if value is not None and not (number and (section == "metrics" or value >= 0)):
            raise ValueError(f"{source}: {section}.{key} must be a finite number, >= 0 for progress; got {value!r:.40}")
        fields[name] = value
    fields["minutes"] = (fields["minutes"] or 0) / 60
    return fields


def main(argv: list[str] | None = None) -> int:
    parser = ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("source", type=Path, help="checkpoint.pt or policy.pt of a universal training run")
    parser.add_argument("--out", type=Path, default=SHIPPED, help="where to write it (default: %(default)s)")
    args = parser.parse_args(argv)
    try:
        info = export(args.source, args.out)
    except (ValueError, OSError) as err:
        parser.error(str(err))
    evaluation = ""
    if info["advantage"] is not None:
        ci = "" if info["advantage_ci"] is None else f" ± {info['advantage_ci']:.2f}"
        evaluation = f"; last training evaluation vs heuristic-3 {info['advantage']:+.2f}{ci}"
    print(
        f"{args.out}: {info['size'] / 1e6:.2f} MB, update {info['update']}, {info['steps'] or 0:,} env steps, "
        f"{info['minutes']:.0f} training minutes{evaluation}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
