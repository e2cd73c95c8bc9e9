"""The exploitability probe: how much can a fresh learner win against three frozen copies of an agent?

    python -m president_env.training.probe --target ppo-standard-4p --out docs/results/probe/ppo-standard-4p

One recipe for every target (``configs/train/probe.yaml``): masked PPO from scratch, every game one
learner seat against the target in all other seats, for a fixed number of env steps (not minutes,
so that the figure does not depend on the machine's speed). The best response is then measured
against the same frozen copies with duplicate deals; its advantage is the probe's figure. Lower
is better: an agent that a short training run cannot beat by much is hard to exploit. Running
the probe for a baseline (``--target heuristic-3``) gives the figure its scale.

Writes ``OUT/run/`` (the training run), ``OUT/versus.*`` and ``OUT/<target>/`` (the tournament) and
``OUT/probe.json``.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from president_env import agents
from president_env.evaluation.play import agent_name
from president_env.evaluation.report import write_versus
from president_env.evaluation.tournament import evaluate_against
from president_env.presets import resolve_rules
from president_env.registry import check_name
from president_env.user_input import check_writable_dir

from .config import TRAIN_CONFIGS, load_config
from .ppo_selfplay import Trainer

PROBE_CONFIG = TRAIN_CONFIGS / "probe.yaml"


def probe_overrides(target: str, rules_spec: str, out_dir: Path, steps: int | None) -> list[str]:
    """The ``--set`` overrides that point the probe recipe at ``target`` under ``rules_spec``."""
    overrides = [
        f"rules={rules_spec}",
        "opponents.self_play=0",
        "opponents.snapshots=0",
        f"opponents.baselines={{{json.dumps(target)}: 1.0}}",
        f"budget.eval_opponent={json.dumps(target)}",
        f"out_dir={json.dumps(str(out_dir))}",
    ]
    if steps is not None:
        overrides.append(f"budget.total_steps={steps}")
    return overrides


def run_probe(
    target: str,
    rules_spec: str,
    out: Path,
    steps: int | None = None,
    deals: int = 500,
    progress: bool = True,
    overrides: Sequence[str] = (),
) -> dict[str, Any]:
    """Train the best response to ``target``, measure it, and write ``out/probe.json``; returns its content.

    ``overrides``: further ``section.key=value`` changes of the recipe (tests shrink it; a probe figure
    is comparable with another only for the same recipe).
    """
    config = load_config(PROBE_CONFIG, probe_overrides(target, rules_spec, out / "run", steps) + list(overrides))
    rules = config.resolve_rules()
    started = time.perf_counter()
    trainer = Trainer(config, progress=progress)
    try:
        trainer.train()
    finally:
        trainer.close()
    minutes = (time.perf_counter() - started) / 60
    policy = out / "run" / "policy.pt"
    results = evaluate_against(str(policy), [target], rules, n_deals=deals, seed=0, progress=progress)
    write_versus(results, out)
    advantage = next(iter(results.values())).agents[agent_name(str(policy))].advantage
    summary = {
        "target": target,
        "rules": rules.to_dict(),
        "env_steps": trainer.global_step,
        "train_minutes": round(minutes, 1),
        "deal_groups": deals,
        "advantage": advantage.mean,
        "advantage_ci95": advantage.ci,
    }
    (out / "probe.json").write_text(json.dumps(summary, indent=2) + "\n", encoding="utf-8")
    return summary


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m president_env.training.probe", description=__doc__.split("\n\n")[0]
    )
    parser.add_argument(
        "--target", required=True, help="the agent to probe: a registered agent name (a baseline or a shipped agent)"
    )
    parser.add_argument(
        "--rules",
        default=None,
        help="preset name or rules YAML path (default: a shipped learned agent's own rules, else standard)",
    )
    parser.add_argument("--steps", type=int, default=None, help="env steps of training (default: the recipe's)")
    parser.add_argument("--deals", type=int, default=500, help="duplicate deal groups of the measurement")
    parser.add_argument("--out", required=True, help="output folder")
    parser.add_argument("--no-progress", action="store_true", help="no progress bars")
    args = parser.parse_args(argv)
    try:
        check_name(args.target)
        rules_spec = args.rules
        if rules_spec is None:
            rules_spec = "standard"
            if args.target in agents.SHIPPED_AGENTS:
                trained = agents.make(args.target).rules
                path = Path(args.out) / "rules.yaml"
                check_writable_dir(args.out, "--out")
                trained.to_yaml(path)
                rules_spec = str(path)
        resolve_rules(rules_spec)
        if args.steps is not None and args.steps < 1:
            raise ValueError(f"--steps must be a positive number of env steps, got {args.steps}")
        if args.deals < 2:
            raise ValueError(f"--deals must be at least 2 deal groups, got {args.deals}")
        out = check_writable_dir(args.out, "--out")
    except (ValueError, ImportError) as err:
        parser.error(str(err))
    try:
        summary = run_probe(args.target, rules_spec, Path(out), args.steps, args.deals, not args.no_progress)
    except KeyboardInterrupt:
        return 130
    except (ValueError, ImportError) as err:
        print(f"probe: error: {err}", file=sys.stderr)
        return 2
    print(json.dumps(summary, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
