"""The exploitability probe: how much can a best response win against three frozen copies of an agent?

    python -m president_env.training.probe --target ppo-universal --out runs/probe/ppo-universal

**Best response** (a learned target: a shipped agent's name or a checkpoint file, one table or universal). The
learner starts from the target's own weights, actor and critic (``init.weights``), so it starts at advantage 0:
a copy of the target against copies of itself. It trains by masked PPO (``configs/train/probe.yaml``) in one
seat of every game, the frozen target (acting as ``agents.make`` makes it, greedily) in every other seat, on the
target's table and the preset's match. The target's critic learned other returns (most shipped agents trained
on single manches), so the first ``init.critic_warmup`` updates train the critic alone, the actor frozen.

**Measurement, on new deals.** The best response (greedy) against three copies, over ``--deals`` duplicate
deal groups of ``--seed`` (a seed neither the training nor the run's own evaluations use), beside the **zero
control**: the target itself in the learner's seat against the same copies on the same deals. The best
response's advantage is the probe's figure; the zero control shows what no exploitation scores (0 for a
deterministic target). A figure near 0 says the best response found nothing in its budget; only a budget
comparable to the target's own makes "hard to exploit" a claim.

**Sittings.** The run lives in ``OUT/run/`` and resumes there: running the same command again continues it
(``--minutes`` bounds a sitting, a ``STOP`` file in ``OUT/run/`` ends it early), then measures it again.

**From scratch** (``--from-scratch``; the only mode for a baseline, which has no weights): a fresh learner with
the recipe of ``configs/train/probe_scratch.yaml``. Not a best response (it can end below 0); it gives the scale.

Writes ``OUT/run/`` (the training run), ``OUT/versus.*`` and ``OUT/<target>/`` (the best response's
tournament), ``OUT/zero_control/`` (the control's) and ``OUT/probe.json``.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from president_env import agents
from president_env.agents.checkpoint import load_checkpoint
from president_env.core.presets import PRESETS, resolve_rules
from president_env.core.registry import check_name
from president_env.core.rules import Rules
from president_env.core.user_input import ArgumentParser, check_writable_dir
from president_env.evaluation.play import versus_lineup
from president_env.evaluation.report import TournamentResult, write_outputs, write_versus
from president_env.evaluation.tournament import evaluate

from .config import TRAIN_CONFIGS, RunSeeds, load_config
from .ppo_selfplay import Run, Trainer, check_resume_checkpoint
from .universal import UniversalTrainer

PROBE_CONFIG = TRAIN_CONFIGS / "probe.yaml"
SCRATCH_CONFIG = TRAIN_CONFIGS / "probe_scratch.yaml"
PROBE_SEED = 5150
"""The measurement's deals by default: a seed no training run and no run's evaluations use."""
RESERVED_SEED = 20261202
"""Issue 22's held-out seed (docs/results/experiments/universal/README.md): no probe may spend it."""
BEST_RESPONSE = "best response from the target's weights"
FROM_SCRATCH = "from scratch (a scale, not a best response)"


def target_weights(target: str) -> dict[str, Any] | None:
    """The network spec of ``target``'s weights (a shipped learned agent or a checkpoint file), or ``None`` for an
    agent without weights (a baseline)."""
    path = agents.weights_file(target)
    return None if path is None else load_checkpoint(path)["network"]


def table_rules(target: str, network: dict[str, Any] | None) -> Rules:
    """The target's table and the preset's match: a one-table agent's trained rules with the match length of the
    preset they are (at the trained table size); the standard preset for a universal agent or a baseline."""
    if network is None or network.get("kind") == "universal":
        return resolve_rules("standard")
    trained = agents.make(target).rules
    for name in PRESETS:
        preset = resolve_rules(name).replace(n_players=trained.n_players)
        if preset.replace(manches=trained.manches) == trained:
            return preset
    return trained


def probe_overrides(
    target: str, rules: Rules, out_dir: Path, network: dict[str, Any] | None, steps: int | None
) -> list[str]:
    """The ``--set`` overrides that point the recipe at ``target`` on ``rules`` (given as YAML text, so that the
    run resumes from any folder); with ``network`` (the target's spec) the learner is the target's network and
    starts from its weights."""
    text = json.dumps(rules.to_yaml())
    overrides = [
        f"opponents.baselines={{{json.dumps(target)}: 1.0}}",
        f"budget.eval_opponent={json.dumps(target)}",
        f"out_dir={json.dumps(str(out_dir))}",
        "manches=null",
    ]
    if network is not None:
        overrides += [
            f"init.weights={json.dumps(target)}",
            f"network.hidden={json.dumps(list(network['hidden']))}",
            f"network.activation={network['activation']}",
        ]
    if network is not None and network.get("kind") == "universal":
        table = f"[{{rules: {text}}}]"
        overrides += ["kind=universal", f"tables={table}", f"network.critic={network['critic']}"]
    else:
        overrides.append(f"rules={text}")
    if steps is not None:
        overrides.append(f"budget.total_steps={steps}")
    return overrides


def start_run(
    target: str,
    out: Path,
    scratch: bool,
    rules_spec: str | None,
    steps: int | None,
    minutes: float | None,
    progress: bool,
    overrides: Sequence[str],
) -> Run:
    """The probe's training run: continued from ``out/run/checkpoint.pt`` when there is one, else a new run."""
    run_dir = out / "run"
    checkpoint = run_dir / "checkpoint.pt"
    network = None if scratch else target_weights(target)
    if not scratch and network is None:
        raise ValueError(
            f"--target {target!r} has no weights to start a best response from (a baseline, not a learned agent); "
            "pass --from-scratch for the from-scratch probe, which gives a scale but is no best response"
        )
    trainer: type[Run] = UniversalTrainer if network is not None and network.get("kind") == "universal" else Trainer
    if checkpoint.is_file():
        held = load_checkpoint(checkpoint)
        check_resume_checkpoint(held, checkpoint)
        opponents = held["config"].get("opponents")
        if not isinstance(opponents, dict) or opponents.get("baselines") != {target: 1.0}:
            raise ValueError(f"{run_dir} holds another probe's run; choose another --out")
        elapsed = float(held["progress"]["elapsed_s"]) / 60
        extra = [] if steps is None else [f"budget.total_steps={steps}"]
        extra += [] if minutes is None else [f"budget.time_limit_min={elapsed + minutes}"]
        return trainer.resume(checkpoint, progress=progress, overrides=extra)
    out.mkdir(parents=True, exist_ok=True)
    rules = table_rules(target, network) if rules_spec is None else resolve_rules(rules_spec)
    rules.to_yaml(out / "rules.yaml")
    recipe = SCRATCH_CONFIG if scratch else PROBE_CONFIG
    changes = probe_overrides(target, rules, run_dir, network, steps)
    changes += [] if minutes is None else [f"budget.time_limit_min={minutes}"]
    return trainer(load_config(recipe, changes + list(overrides)), progress=progress)


def paired_tournaments(
    target: str, policy: Path, rules: Rules, deals: int, seed: int, progress: bool = False
) -> tuple[TournamentResult, TournamentResult]:
    """The best response at ``policy`` and the zero control (the target in the same seat) against copies of
    ``target``, on the same deal groups of ``seed`` (the control is reported as ``zero-control``)."""
    best = evaluate(
        versus_lineup(str(policy), target, rules.n_players), rules, n_deals=deals, seed=seed, progress=progress
    )
    control = agents.make(target, rules)
    control.name = "zero-control"
    zero = evaluate(versus_lineup(control, target, rules.n_players), rules, n_deals=deals, seed=seed, progress=progress)
    return best, zero


def measure(
    target: str, policy: Path, rules: Rules, out: Path, deals: int, seed: int, progress: bool
) -> dict[str, float]:
    """The best response's and the zero control's advantages (:func:`paired_tournaments`); their files written."""
    best, zero = paired_tournaments(target, policy, rules, deals, seed, progress)
    write_versus({target: best}, out)
    write_outputs(zero, out / "zero_control")
    advantage, zero_advantage = best.agents[str(policy)].advantage, zero.agents["zero-control"].advantage
    return {
        "advantage": advantage.mean,
        "advantage_ci95": advantage.ci,
        "zero_control": zero_advantage.mean,
        "zero_control_ci95": zero_advantage.ci,
    }


def run_probe(
    target: str,
    rules_spec: str | None,
    out: Path,
    steps: int | None = None,
    deals: int = 200,
    progress: bool = True,
    overrides: Sequence[str] = (),
    scratch: bool = False,
    seed: int = PROBE_SEED,
    minutes: float | None = None,
    train: bool = True,
) -> dict[str, Any]:
    """Train (or continue) the probe's run against ``target``, measure it, and write ``out/probe.json``; returns its
    content.

    ``overrides``: further ``section.key=value`` changes of a new run's recipe (tests shrink it; a probe figure
    is comparable with another only for the same recipe). ``train=False`` measures the run as it stands.
    """
    trainer = start_run(target, out, scratch, rules_spec, steps, minutes, progress, overrides)
    if seed in (RESERVED_SEED, trainer.eval_seed):
        trainer.close()
        raise ValueError(f"--seed {seed} is {'reserved' if seed == RESERVED_SEED else 'the run evaluation seed'}")
    try:
        if train:
            trainer.train()
        elif not (trainer.out_dir / "policy.pt").is_file():
            raise ValueError(f"{trainer.out_dir} has no policy.pt yet: train first")
    finally:
        trainer.close()
    rules = resolve_rules(out / "rules.yaml")
    summary = {
        "target": target,
        "mode": FROM_SCRATCH if scratch else BEST_RESPONSE,
        "rules": rules.to_dict(),
        "env_steps": trainer.global_step,
        "updates": trainer.update,
        "train_minutes": round(trainer.elapsed / 60, 1),
        "target_env_steps": target_steps(target),
        "run_eval_seed": RunSeeds.of(trainer.config).eval,
        "seed": seed,
        "deal_groups": deals,
        **measure(target, trainer.out_dir / "policy.pt", rules, out, deals, seed, progress),
    }
    (out / "probe.json").write_text(json.dumps(summary, indent=2) + "\n", encoding="utf-8")
    return summary


def target_steps(target: str) -> int | None:
    """The env steps the target's checkpoint says it trained for: those of its last run only, where that run
    started from another's weights (``ppo-universal``: 34.1 M of 189.4 M, docs/models.md)."""
    path = agents.weights_file(target)
    if path is None:
        return None
    progress = load_checkpoint(path).get("progress") or {}
    return progress.get("global_step")


def main(argv: list[str] | None = None) -> int:
    parser = ArgumentParser(prog="python -m president_env.training.probe", description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--target", required=True, help="the agent to probe: a shipped learned agent, a checkpoint file or a baseline"
    )
    parser.add_argument(
        "--rules", default=None, help="preset name or rules YAML path (default: the target's table, the preset's match)"
    )
    parser.add_argument("--steps", type=int, default=None, help="env steps of the whole run (default: the recipe's)")
    parser.add_argument("--minutes", type=float, default=None, help="train at most this long now (a rerun continues)")
    parser.add_argument("--deals", type=int, default=200, help="duplicate deal groups of the measurement")
    parser.add_argument("--seed", type=int, default=PROBE_SEED, help="seed of the measurement's deals")
    parser.add_argument("--from-scratch", action="store_true", help="a fresh learner (a scale, not a best response)")
    parser.add_argument("--measure-only", action="store_true", help="measure the run in OUT/run as it stands")
    parser.add_argument("--out", required=True, help="output folder (its run/ continues where it stopped)")
    parser.add_argument("--no-progress", action="store_true", help="no progress bars")
    args = parser.parse_args(argv)
    try:
        check_name(args.target)
        if args.rules is not None:
            resolve_rules(args.rules)
        if args.steps is not None and args.steps < 1:
            raise ValueError(f"--steps must be a positive number of env steps, got {args.steps}")
        if args.minutes is not None and not args.minutes > 0:
            raise ValueError(f"--minutes must be positive, got {args.minutes}")
        if args.deals < 2:
            raise ValueError(f"--deals must be at least 2 deal groups, got {args.deals}")
        if args.seed == RESERVED_SEED or args.seed < 0:
            raise ValueError(
                f"--seed {args.seed} is not allowed (negative, or the reserved held-out seed of the universal "
                "agent's final measurements)"
            )
        out = check_writable_dir(args.out, "--out")
    except (ValueError, ImportError) as err:
        parser.error(str(err))
    try:
        summary = run_probe(
            args.target,
            args.rules,
            Path(out),
            args.steps,
            args.deals,
            not args.no_progress,
            scratch=args.from_scratch,
            seed=args.seed,
            minutes=args.minutes,
            train=not args.measure_only,
        )
    except KeyboardInterrupt:
        return 130
    except (ValueError, ImportError) as err:
        print(f"probe: error: {err}", file=sys.stderr)
        return 2
    print(json.dumps(summary, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
