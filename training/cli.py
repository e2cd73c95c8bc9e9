"""``president-train``: the command line of the PPO self-play trainers (:mod:`.ppo_selfplay`, :mod:`.universal`).

    president-train --config configs/train/standard_4p.yaml
    president-train --config configs/train/quick.yaml --set ppo.learning_rate=3e-4 --set seed=2
    president-train --resume runs/standard_4p/checkpoint.pt
    president-train --config configs/train/standard_4p.yaml --set rollout.shards=8 --ray auto
    president-train --config configs/train/universal.yaml

A config of ``kind: universal`` trains one network on a mixture of tables (:class:`.universal.UniversalTrainer`);
``--resume`` finds the kind in the checkpoint.

The arguments are read before torch and the trainer are imported, so ``--help`` and usage errors answer at
once. Bad input (a config, an override, an output folder, a checkpoint) is one line and exit code 2; Ctrl-C
during training exits 130.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from president_env.user_input import ArgumentParser, check_writable_dir, short_repr


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
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")
    return parser


def main(argv: list[str] | None = None) -> int:
    """``president-train``: read the arguments, then import torch and the trainer, train; returns the exit code."""
    parse = parser()
    args = parse.parse_args(argv)
    if args.ray is not None:
        args.set.append(f"rollout.ray_address={args.ray}")
    if args.resume and args.config:
        parse.error("--resume takes the config stored in the checkpoint; drop --config")
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
            run = UniversalTrainer if _universal_checkpoint(args.resume) else Trainer
            trainer = run.resume(args.resume, progress=not args.no_progress, overrides=args.set)
            try:
                trainer.out_dir = check_writable_dir(args.out_dir or Path(args.resume).parent, "--out-dir")
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
