"""The learner on each device: ``python benchmarks/bench_learner_device.py [--config F] [--updates N]``.

Issue 33's device check, one short script for a machine with a GPU (under 10 minutes with the defaults): the
same run (config, seed, rule draws) trained ``--updates`` updates with ``device`` set to each of ``--devices``
(default ``cpu,cuda``; a device torch does not see is reported as absent, not run), after one warm-up update
that is not timed. For each device it prints the env steps per second of whole updates, the seconds of the
rollouts (on the CPU wherever the learner is) and of the PPO update, and the largest difference of any weight
from the first device's after the same updates (float rounding on another device, 0 on the same one).

    python benchmarks/bench_learner_device.py            # configs/train/universal_rules_phase3.yaml, cpu and cuda
    python benchmarks/bench_learner_device.py --devices cpu --updates 2 --set threads=2

Run it from the repository's root (the config's ``init.weights`` is a path there), alone on the machine.
"""

from __future__ import annotations

import argparse
import json
import tempfile
from pathlib import Path
from typing import Any

import torch

from president_env.evaluation.report import markdown_table
from president_env.training.config import load_config
from president_env.training.universal import UniversalTrainer

DEFAULT_CONFIG = Path(__file__).resolve().parent.parent / "configs" / "train" / "universal_rules_phase3.yaml"
QUIET = ["budget.eval_every=0", "rule_eval.every=0", "rule_eval.champion_every=0"]
"""No evaluation inside the timed updates: they time rollouts and updates only."""


def available(device: str) -> bool:
    return device == "cpu" or (device == "cuda" and torch.cuda.is_available())


def measure(config_path: str, device: str, updates: int, overrides: list[str], out: Path) -> dict[str, Any]:
    """Train ``updates`` timed updates (after one warm-up) on ``device``; the timings and the final weights."""
    config = load_config(config_path, [*QUIET, *overrides, f"device={device}", f"out_dir={out / device}"])
    trainer = UniversalTrainer(config, progress=False)
    try:
        trainer.train_step()  # warm-up: allocations, the first draw of tables, CUDA's context
        seconds = rollout = 0.0
        for _ in range(updates):
            stats = trainer.train_step()  # the update copies the learner back to the CPU: CUDA has finished
            seconds += trainer.steps_per_update / stats["charts/steps_per_s"]
            rollout += trainer.steps_per_update / stats["charts/rollout_steps_per_s"]
        weights = {name: tensor.detach().cpu().clone() for name, tensor in trainer.net.state_dict().items()}
    finally:
        trainer.close()
    return {
        "device": device,
        "env_steps_per_s": updates * trainer.steps_per_update / seconds,
        "rollout_s_per_update": rollout / updates,
        "update_s_per_update": (seconds - rollout) / updates,
        "weights": weights,
    }


def main(argv: list[str] | None = None) -> list[dict[str, Any]]:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--config", default=str(DEFAULT_CONFIG))
    parser.add_argument("--devices", default="cpu,cuda", help="comma-separated devices (default: %(default)s)")
    parser.add_argument("--updates", type=int, default=3, help="timed updates per device (default: %(default)s)")
    parser.add_argument("--set", action="append", default=[], metavar="KEY=VALUE", help="config overrides")
    parser.add_argument("--json", default="bench_learner_device.json")
    args = parser.parse_args(argv)
    devices = [d.strip() for d in args.devices.split(",") if d.strip()]
    if args.updates < 1 or not devices or any(d not in ("cpu", "cuda") for d in devices):
        parser.error("--updates must be >= 1 and --devices a list of cpu and cuda")
    results, reference = [], None
    with tempfile.TemporaryDirectory() as tmp:
        for device in devices:
            if not available(device):
                results.append({"device": device, "absent": True})
                continue
            result = measure(args.config, device, args.updates, args.set, Path(tmp))
            weights = result.pop("weights")
            reference = reference or weights
            result["max_weight_difference"] = max(
                float((weights[name] - reference[name]).abs().max()) for name in reference
            )
            results.append(result)
    rows = [
        [r["device"], "absent (torch sees none)", "", "", ""]
        if r.get("absent")
        else [
            r["device"],
            f"{r['env_steps_per_s']:,.0f}",
            f"{r['rollout_s_per_update']:.2f}",
            f"{r['update_s_per_update']:.2f}",
            f"{r['max_weight_difference']:.2e}",
        ]
        for r in results
    ]
    header = ["device", "env steps/s", "rollout s/update", "PPO update s/update", f"max |w - w_{devices[0]}|"]
    print(f"{args.updates} updates of {Path(args.config).name} per device, after one warm-up update\n")
    print(markdown_table(header, rows))
    Path(args.json).write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")
    return results


if __name__ == "__main__":
    main()
