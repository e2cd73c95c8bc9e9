"""``president-train``: the command line of the PPO self-play trainers (:mod:`.ppo_selfplay`, :mod:`.universal`).

    president-train --config configs/train/quick.yaml
    president-train --config configs/train/quick.yaml --set ppo.learning_rate=3e-4 --set seed=2
    president-train --resume runs/quick/checkpoint.pt
    president-train --config configs/train/quick.yaml --force      # start over in a folder that holds a run
    president-train --config configs/train/quick.yaml --set rollout.shards=8 --ray auto
    president-train --config configs/train/universal.yaml

A config of ``kind: universal`` trains one network on a mixture of tables (:class:`.universal.UniversalTrainer`);
``--resume`` finds the kind in the checkpoint and continues the run in the checkpoint's folder (another
``--out-dir`` is refused: it would mix two folders' metrics). A new run never overwrites a folder that holds a run
unless ``--force`` says so.

The arguments are read before torch and the trainer are imported, so ``--help`` and usage errors answer at
once. Bad input (a config, an override, an output folder, a checkpoint) is one line and exit code 2; Ctrl-C
during training exits 130.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from president_env.core.user_input import ArgumentParser, check_writable_dir, one_line_warnings, short_repr


def parser() -> ArgumentParser:
    """The arguments of ``president-train``."""
    parser = ArgumentParser(
        prog="president-train", description="Masked PPO self-play on the batched engine (president_env.training)."
    )
    parser.add_argument("--config", help="a YAML file of configs/train/ (default: the built-in defaults)")
    parser.add_argument(
        "--set", action="append", default=[], metavar="KEY=VALUE", help="override, e.g. ppo.learning_rate=3e-4"
    )
    parser.add_argument("--out-dir", help="where the run writes (overrides out_dir)")
    parser.add_argument("--resume", metavar="CHECKPOINT", help="continue a run exactly from its checkpoint.pt")
    parser.add_argument(
        "--ray",
        metavar="ADDRESS",
        help="play the rollout shards (rollout.shards) as Ray actors: 'local', 'auto' or 'ray://host:10001' "
        "(sets rollout.ray_address; the run is the same, only faster; needs the ray extra)",
    )
    parser.add_argument(
        "--force",
        action="store_true",
        help="start a new run in an output folder that holds a run (its files are replaced); without it such a "
        "folder is refused: continue it with --resume",
    )
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")
    return parser


RUN_FILES = ("checkpoint.pt", "policy.pt", "metrics.jsonl", "config.yaml")
"""The files that say a folder holds a run (:func:`check_new_run_dir`)."""


def check_new_run_dir(folder: str | Path, what: str) -> None:
    """``ValueError`` when ``folder`` holds a run (one of :data:`RUN_FILES`), which a new run would overwrite."""
    held = [name for name in RUN_FILES if (Path(folder) / name).exists()]
    if held:
        checkpoint = Path(folder) / "checkpoint.pt"
        how = f"continue it with --resume {checkpoint}, " if checkpoint.is_file() else ""
        raise ValueError(
            f"{what} {short_repr(str(folder), 200)} holds a run ({', '.join(held)}); {how}"
            "pass --force to replace it, or choose another folder"
        )


def check_resume_dir(checkpoint: str, out_dir: str | None) -> Path:
    """The folder a resumed run writes in: its checkpoint's own. ``ValueError`` for another ``--out-dir``, which
    would mix the two folders' metrics."""
    folder = Path(checkpoint).parent
    if out_dir is not None and Path(out_dir).resolve() != folder.resolve():
        raise ValueError(
            f"--resume continues the run in its own folder {short_repr(str(folder), 200)}; --out-dir "
            f"{short_repr(out_dir, 200)} is another (to branch the run, copy its folder and resume the copy)"
        )
    return folder


@one_line_warnings("president-train")
def main(argv: list[str] | None = None) -> int:
    """``president-train``: read the arguments, then import torch and the trainer, train; returns the exit code."""
    parse = parser()
    args = parse.parse_args(argv)
    if args.ray is not None:
        args.set.append(f"rollout.ray_address={args.ray}")
    if args.resume and args.config:
        parse.error("--resume takes the config stored in the checkpoint; drop --config")
    if args.resume and args.force:
        parse.error("--force starts a new run over an old one; --resume continues a run: drop one of them")
    try:  # torch and the trainer: only once the arguments are read
        from president_env.agents.checkpoint import CheckpointError

        from .bookkeeping import json_line
        from .config import UniversalConfig, load_config
        from .ppo_selfplay import Trainer
        from .universal import UniversalTrainer
    except ImportError as err:
        print(
            f'president-train: error: {err} (training needs the train extra: pip install "president-env[train]")',
            file=sys.stderr,
        )
        return 2

    try:
        if args.resume:
            if not os.path.isfile(args.resume):
                raise ValueError(f"--resume {short_repr(args.resume, 200)}: no such checkpoint file")
            out_dir = check_resume_dir(args.resume, args.out_dir)
            run = UniversalTrainer if _universal_checkpoint(args.resume) else Trainer
            trainer = run.resume(args.resume, progress=not args.no_progress, overrides=args.set)
            try:
                trainer.out_dir = check_writable_dir(out_dir, "--resume")
            except ValueError:
                trainer.close()
                raise
            spent = trainer.budget_spent()
            if spent:
                print(
                    f"president-train: note: {spent}; nothing is left to train (raise it with --set)", file=sys.stderr
                )
        else:
            overrides = list(args.set) + ([f"out_dir={args.out_dir}"] if args.out_dir else [])
            config = load_config(args.config, overrides)
            check_writable_dir(config.out_dir, "--out-dir" if args.out_dir else "out_dir")
            if not args.force:
                check_new_run_dir(config.out_dir, "--out-dir" if args.out_dir else "out_dir")
            run = UniversalTrainer if isinstance(config, UniversalConfig) else Trainer
            trainer = run(config, progress=not args.no_progress)
    except (ValueError, CheckpointError, ImportError) as err:
        print(f"president-train: error: {err}", file=sys.stderr)
        return 2
    try:
        result = trainer.train()
    except KeyboardInterrupt:
        return 130
    finally:
        trainer.close()
    print(json_line({"update": trainer.update, "global_step": trainer.global_step, **result}, indent=2))
    print(f"checkpoint: {trainer.out_dir / 'checkpoint.pt'}\npolicy: {trainer.out_dir / 'policy.pt'}")
    return 0


def _universal_checkpoint(path: str) -> bool:
    """Whether the checkpoint at ``path`` is a universal run's (its network's kind)."""
    from president_env.agents.checkpoint import load_checkpoint

    network = load_checkpoint(path).get("network")
    return isinstance(network, dict) and network.get("kind") == "universal"


if __name__ == "__main__":
    sys.exit(main())
