"""League training with exploiters: the main agent keeps training against best responses to itself.

    python -m president_env.training.league --config configs/train/league.yaml --out runs/league

A **generation** ``g`` (from 1) has two phases:

1. **Exploiter.** A best response to the frozen main agent as it ended generation ``g - 1``
   (``OUT/snapshots/main-<g-1>.pt``; ``main-0`` is the main's start): the exploitability probe's training
   (:func:`.probe.start_run`: the probe's recipe, from the main's own weights, in one seat against frozen copies of
   the main in all the others) at the league's ``exploiters.tables``, for ``exploiters.steps`` env steps, seed
   ``seed + g``. Its run is ``OUT/exploiters/gen-<g>/run``; its final evaluation (the exploiter against copies of
   the main on that run's own evaluation deals) is the generation's figure, and its policy is frozen as
   ``OUT/snapshots/exploiter-<g>.pt``.
2. **Main.** The main agent's one run (``OUT/main``, a universal run of ``main.recipe`` with ``main.set``, seed
   ``seed``) continues from its checkpoint, optimizer included, with the exploiters in its opponent pool
   (:func:`league_opponents`: together ``exploiters.share`` of its games, uniformly or the newest weighted most;
   the recipe's self-play, snapshots and baselines share the rest in their proportions), until it has trained
   ``g * main.steps`` env steps. Its policy is frozen as ``OUT/snapshots/main-<g>.pt``, the next exploiter's
   target.

This is the main-agent / main-exploiter pair of AlphaStar's league, and PSRO with a uniform (or recency-weighted)
mixture over the best responses found so far: each exploiter is an opponent the main has to learn to answer, and
the exploiters' advantages over the generations say whether the main gets harder to exploit.

**State and resuming.** ``OUT/league.json`` holds the generation, the phase, the paths (relative to ``OUT``) and the
figures; the same command continues where it stopped, mid-phase included (each phase's trainer resumes from its own
checkpoint), from wherever ``OUT`` is now: a league's folder may be moved or copied to another machine. A
config that differs from the one the league started with is refused, naming the key; ``--generations`` may
change. ``--minutes`` bounds each invocation; a ``STOP`` file in ``OUT`` ends it after the update in progress.

Writes ``OUT/league.json``, ``OUT/league.jsonl`` (one record a generation), ``OUT/league.png`` (the curve),
``OUT/main/``, ``OUT/exploiters/gen-<g>/`` and ``OUT/snapshots/``.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import shutil
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Literal

from pydantic import Field

from president_env.agents.checkpoint import CheckpointError, export_policy, load_checkpoint
from president_env.core.rule_space import HELDOUT_DEAL_SEED, HELDOUT_RULE_SEED
from president_env.core.user_input import ArgumentParser, check_writable_dir, load_yaml, read_text, short_repr

from .config import (
    MAX_POOL_SIZE,
    Probability,
    RunConfig,
    RunSeeds,
    TableConfig,
    UniversalConfig,
    _Section,
    load_config,
    validated,
)
from .ppo_selfplay import check_resume_checkpoint
from .probe import PROBE_CONFIG, start_run
from .universal import UniversalTrainer

STATE_FILE = "league.json"
STOP_FILE = "STOP"
STATE_FORMAT = 1
LEAGUE_HELD_OUT_SEEDS = {"rule_suite": 20261207, "suite_deals": 20261208, "presets": 20261209, "probe": 20261210}
"""The seeds of the league's and ``ppo-universal-search``'s held-out measurement, named in the README before either
was measured: the rule seed of the suite's rule sets, and the deal seeds of the suite, the presets and the probe."""
HELD_OUT_SEEDS = frozenset(
    {5150, 20261202, HELDOUT_RULE_SEED, HELDOUT_DEAL_SEED, 20261206, *LEAGUE_HELD_OUT_SEEDS.values()}
)
"""Seeds no league run may use, as a run's seed or as its evaluation seed: the probe's measurement seed (5150) and
reserved seed (20261202), the held-out seeds of the rule-set suite and of the presets (20261204-06), and those of
the league's own measurement (:data:`LEAGUE_HELD_OUT_SEEDS`, 20261207-10)."""
NO_TIME_LIMIT_MIN = 1e8
"""A phase's time limit when the invocation has none (a trainer's limit counts all its runs; this one never ends)."""


# ---------------------------------------------------------------------------------------------
# The config
# ---------------------------------------------------------------------------------------------
class MainConfig(_Section):
    """The main agent: a universal recipe (a ``president-train`` config), changed by ``set``."""

    recipe: str = "configs/train/universal_rules_phase2.yaml"
    set: list[str] = Field(default_factory=list)  # section.key=value overrides of the recipe
    steps: int = Field(ge=1)  # env steps the main trains a generation


class ExploiterConfig(_Section):
    """The exploiters: best responses to the main (the probe's recipe, configs/train/probe.yaml), and their share."""

    tables: list[TableConfig] = Field(default_factory=lambda: [TableConfig()], min_length=1)  # where they train
    steps: int = Field(ge=1)  # env steps of each exploiter's training
    set: list[str] = Field(default_factory=list)  # section.key=value overrides of the probe's recipe
    share: Probability = 0.3  # the main's games against the exploiters, all of them together
    keep: int = Field(0, ge=0, le=MAX_POOL_SIZE)  # the newest exploiters in the main's pool (0: every one)
    weighting: Literal["uniform", "recent"] = "uniform"  # recent: the i-th oldest kept weighs i


class LeagueConfig(_Section):
    """A league: its seed, how many generations, the main agent and its exploiters."""

    seed: int = Field(ge=0)  # the main's run seed; generation g's exploiter has seed + g
    generations: int = Field(10, ge=1, le=10_000)  # may change when the league resumes
    main: MainConfig
    exploiters: ExploiterConfig


def load_league_config(path: str | Path) -> LeagueConfig:
    """The league config at ``path``; ``ValueError`` of one line (naming the key) for a bad one."""
    name = short_repr(str(path), 200)
    if not os.path.isfile(path):
        raise ValueError(f"config file {name} does not exist")
    data = load_yaml(read_text(path, "config file"), f"config file {name}")
    if not isinstance(data, dict):
        raise ValueError(f"config file {name} must hold a mapping, got {type(data).__name__}")
    return validated(LeagueConfig, data)


def main_config(config: LeagueConfig, out: Path) -> UniversalConfig:
    """The main agent's run config: ``main.recipe`` with ``main.set``, the league's seed, in ``OUT/main``, trained
    a generation at a time (``budget.total_steps`` is set each generation)."""
    fixed = [f"seed={config.seed}", f"out_dir={json.dumps(str(out / 'main'))}", "budget.time_limit_min=null"]
    fixed.append(f"budget.total_steps={config.main.steps}")
    try:
        run = load_config(config.main.recipe, [*config.main.set, *fixed])
    except ValueError as err:
        raise ValueError(f"main: {err}") from None
    if not isinstance(run, UniversalConfig):
        raise ValueError(
            f"main.recipe {config.main.recipe!r}: the league's main agent is a universal run (kind: universal)"
        )
    return run


def check_seeds(config: LeagueConfig, generations: int) -> None:
    """``ValueError`` when a run of the league (the main, or an exploiter up to ``generations``) would have a
    held-out seed (:data:`HELD_OUT_SEEDS`) as its seed or its evaluation seed."""
    seeds = {"seed": config.seed, **{f"seed + {g} (exploiter {g})": config.seed + g for g in range(1, generations + 1)}}
    for what, seed in seeds.items():
        if seed in HELD_OUT_SEEDS or RunSeeds.of(RunConfig(seed=seed)).eval in HELD_OUT_SEEDS:
            raise ValueError(f"{what} = {seed} gives a run a held-out seed; choose another seed")


# ---------------------------------------------------------------------------------------------
# The main agent's opponents
# ---------------------------------------------------------------------------------------------
def league_opponents(base: dict[str, Any], exploiters: list[str], config: ExploiterConfig) -> dict[str, Any]:
    """The main's ``opponents`` section with ``exploiters`` (checkpoint paths, oldest first) among its baselines:
    the newest ``config.keep`` of them together get ``config.share`` of the games (evenly, or the ``i``-th oldest
    weighing ``i``), and the recipe's self-play, snapshots and baselines (``base``) the rest in their proportions."""
    kept = exploiters[-config.keep :] if config.keep else list(exploiters)
    share = config.share if kept else 0.0
    weights = [1.0] * len(kept) if config.weighting == "uniform" else [float(i) for i in range(1, len(kept) + 1)]
    scale = 1.0 - share
    opponents = {**base, "self_play": base["self_play"] * scale, "snapshots": base["snapshots"] * scale}
    opponents["baselines"] = {name: p * scale for name, p in base["baselines"].items()}
    opponents["baselines"].update({path: share * w / sum(weights) for path, w in zip(kept, weights)})
    return opponents


class MainTrainer(UniversalTrainer):
    """A league's run (the main's, or an exploiter's): a :class:`~.universal.UniversalTrainer` whose resume may also
    change ``opponents`` (the main's pool gains each generation's exploiter), and ``out_dir`` and ``init.weights``
    (the league's folder may have moved since; the weights a run started from are read only at its start); the rest
    of the run (optimizer, counters, champion) goes on as it was."""

    RESUME_OVERRIDES = (*UniversalTrainer.RESUME_OVERRIDES, "opponents", "out_dir", "init.weights")


def placed(run_dir: Path, opponents: dict[str, Any] | None = None, target: str | None = None) -> list[str]:
    """The resume overrides that put a league's run where its folder is now: its ``out_dir``, its ``opponents``
    (which name checkpoints by path) and, for an exploiter, the ``target`` it started from and is evaluated against.
    A league's run folders are thus relocatable: every path in them is rebuilt from ``OUT`` when the league
    resumes."""
    overrides = [f"out_dir={json.dumps(str(run_dir))}"]
    if opponents is not None:
        overrides.append(f"opponents={json.dumps(opponents)}")
    if target is not None:
        overrides += [f"budget.eval_opponent={json.dumps(target)}", f"init.weights={json.dumps(target)}"]
    return overrides


# ---------------------------------------------------------------------------------------------
# The state
# ---------------------------------------------------------------------------------------------
def first_difference(held: Any, given: Any, prefix: str = "") -> tuple[str, Any, Any] | None:
    """The first value that differs between two nested mappings: its dotted key and both values; or ``None``."""
    if isinstance(held, dict) and isinstance(given, dict):
        for key in [*held, *(k for k in given if k not in held)]:
            found = first_difference(held.get(key), given.get(key), f"{prefix}.{key}" if prefix else str(key))
            if found:
                return found
        return None
    return None if held == given else (prefix or "config", held, given)


def new_state(config: LeagueConfig, run: UniversalConfig, exploiter: UniversalConfig) -> dict[str, Any]:
    return {
        "format": STATE_FORMAT,
        "config": compared(config),
        "main_config": located(run),
        "exploiter_config": exploiter.to_dict(),
        "generation": 1,
        "phase": "exploiter",
        "snapshots": ["snapshots/main-0.pt"],
        "exploiters": [],
        "history": [],
    }


def located(run: UniversalConfig) -> dict[str, Any]:
    """A run config as the state holds it: without its ``out_dir``, which is ``OUT/main`` wherever ``OUT`` is now."""
    data = run.to_dict()
    data.pop("out_dir", None)
    return data


def compared(config: LeagueConfig) -> dict[str, Any]:
    """What must not change when a league resumes: its config but ``generations``."""
    data = config.model_dump()
    data.pop("generations")
    return data


def as_json(data: Any) -> Any:
    """``data`` as ``league.json`` holds it once read back: JSON's keys are strings (a rule space's weights by
    player count, ``{3: 1.0}``, come back as ``{"3": 1.0}``)."""
    return json.loads(json.dumps(data, allow_nan=False))


def read_state(
    out: Path, config: LeagueConfig, run: UniversalConfig, exploiter: UniversalConfig
) -> dict[str, Any] | None:
    """``OUT/league.json`` checked against ``config`` and the run configs it resolves to (the main's and the first
    exploiter's: a recipe file edited since is a change too); ``None`` where the league has not started.
    ``ValueError`` naming the first key that changed, or saying what is wrong with the file."""
    path = out / STATE_FILE
    if not path.is_file():
        return None
    try:
        state = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as err:
        raise ValueError(f"{path}: not a league state ({short_repr(str(err))})") from None
    keys = ("config", "main_config", "exploiter_config", "generation", "phase", "snapshots", "exploiters", "history")
    if not isinstance(state, dict) or state.get("format") != STATE_FORMAT or any(k not in state for k in keys):
        raise ValueError(f"{path}: not a league state of format {STATE_FORMAT}")
    if state["phase"] not in ("exploiter", "main") or not isinstance(state["generation"], int):
        raise ValueError(f"{path}: phase {short_repr(state['phase'])} of generation {short_repr(state['generation'])}")
    parts = [("", state["config"], compared(config)), ("main run's ", state["main_config"], located(run))]
    parts.append(("exploiter run's ", state["exploiter_config"], exploiter.to_dict()))
    for what, held, given in parts:
        change = first_difference(held, as_json(given))
        if change:
            key, before, now = change
            raise ValueError(
                f"the league in {short_repr(str(out), 200)} started with another config: {what}{key} was "
                f"{short_repr(before)}, is {short_repr(now)} (the league resumes with the config it started with; "
                "only --generations and --minutes may change)"
            )
    return state


def write_state(out: Path, state: dict[str, Any]) -> None:
    """``OUT/league.json`` (atomically), and ``OUT/league.jsonl`` and the curve rewritten from it."""
    temporary = out / f".{STATE_FILE}.tmp"
    temporary.write_text(json.dumps(state, indent=2, allow_nan=False) + "\n", encoding="utf-8")
    os.replace(temporary, out / STATE_FILE)
    lines = "".join(json.dumps(record, allow_nan=False) + "\n" for record in state["history"])
    (out / "league.jsonl").write_text(lines, encoding="utf-8")
    plot_league(out, state["history"])


def plot_league(out: Path, history: list[dict[str, Any]]) -> Path | None:
    """``OUT/league.png``: each exploiter's final advantage over the main it was trained against, and the main's own
    evaluation, by generation (``None`` without matplotlib or figures)."""
    try:
        from matplotlib.figure import Figure
        from matplotlib.ticker import MaxNLocator
    except ImportError:  # the figures are in league.jsonl
        return None
    rows = [r for r in history if r.get("exploiter")]
    if not rows:
        return None
    fig = Figure(figsize=(7, 4))
    ax = fig.subplots()
    series = [("exploiter", "exploiter vs copies of the main it exploits")]
    series.append(("main", f"main vs {rows[0].get('main_eval_opponent', 'its eval opponent')} (its run's evaluation)"))
    for part, label in series:
        points = [(r["generation"], r[part]) for r in rows if r.get(part) and "advantage" in r[part]]
        if points:
            ax.errorbar(
                [g for g, _ in points], [f["advantage"] for _, f in points],
                yerr=[f.get("advantage_ci") or 0.0 for _, f in points], marker="o", ms=4, capsize=3, label=label,
            )  # fmt: skip
    ax.axhline(0.0, color="k", lw=0.8, ls="--")
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax.set_xlabel("generation")
    ax.set_ylabel("advantage (points per manche, 95% CI)")
    ax.legend(loc="best")
    ax.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(out / "league.png", dpi=120)
    return out / "league.png"


# ---------------------------------------------------------------------------------------------
# The phases
# ---------------------------------------------------------------------------------------------
@contextlib.contextmanager
def forwarding_stop(out: Path, run_dir: Path) -> Iterator[None]:
    """While a phase trains: a ``STOP`` file in ``OUT`` becomes one in the phase's run folder, which its trainer
    honours after the update in progress."""
    done = threading.Event()

    def watch() -> None:
        while not done.wait(1.0):
            if (out / STOP_FILE).exists():
                run_dir.mkdir(parents=True, exist_ok=True)
                (run_dir / STOP_FILE).touch()
                return

    watcher = threading.Thread(target=watch, daemon=True)
    watcher.start()
    try:
        yield
    finally:
        done.set()
        watcher.join()
        (run_dir / STOP_FILE).unlink(missing_ok=True)  # honoured (or left by a watcher late by an instant)


def figures(evaluation: dict[str, float]) -> dict[str, float]:
    """A trainer's last evaluation as a record's figures: ``advantage``, ``advantage_ci`` and each table's."""
    return {  # an undefined interval (one deal group) as null: the files are strict JSON
        key.removeprefix("eval/"): value if math.isfinite(value) else None
        for key, value in evaluation.items()
        if key.startswith("eval/")
    }


class League:
    """One invocation of a league in ``out``: :meth:`run` trains its phases until the generations, the time or a
    ``STOP`` file end it."""

    def __init__(self, config: LeagueConfig, out: Path, generations: int | None, progress: bool) -> None:
        self.config, self.out, self.progress = config, out, progress
        self.generations = config.generations if generations is None else generations
        check_seeds(config, self.generations)
        self.run_config = main_config(config, out)
        if RunSeeds.of(self.run_config).eval in HELD_OUT_SEEDS:
            raise ValueError(f"seed {config.seed} gives the main's run a held-out evaluation seed; choose another")
        self.exploiter_config = self.exploiter_run_config(1)
        self.state = read_state(out, config, self.run_config, self.exploiter_config)
        if self.state is None:
            ours = ("main", "snapshots", "exploiters", f".{STATE_FILE}.tmp")
            strangers = sorted(p.name for p in out.iterdir() if p.name not in ours)
            if strangers:
                raise ValueError(
                    f"--out {short_repr(str(out), 200)} holds files that are no league's ({', '.join(strangers[:3])}); "
                    "choose an empty or new folder"
                )
        self.deadline: float | None = None

    def minutes_left(self) -> float:
        """The minutes this invocation may still train (a phase's time limit is its trainer's elapsed time plus
        these)."""
        if self.deadline is None:
            return NO_TIME_LIMIT_MIN
        return max(1e-3, (self.deadline - time.monotonic()) / 60)

    def stopped(self) -> str | None:
        """Why this invocation trains no further (a STOP file, its time spent), or ``None``."""
        if (self.out / STOP_FILE).exists():
            return f"{self.out / STOP_FILE} asks to stop"
        if self.deadline is not None and time.monotonic() >= self.deadline:
            return "--minutes is spent"
        return None

    def run(self, minutes: float | None) -> str:
        """Train until the league's generations are done, ``minutes`` pass or a STOP file; returns why it ended."""
        self.deadline = None if minutes is None else time.monotonic() + minutes * 60
        try:
            if self.state is None:
                self.start()
            while self.state["generation"] <= self.generations:
                reason = self.stopped()
                if reason:
                    return reason
                phase = self.exploiter_phase if self.state["phase"] == "exploiter" else self.main_phase
                if not phase():
                    return self.stopped() or "a phase stopped before its budget (a STOP file in its run folder)"
            return f"{self.state['generation'] - 1} generations done (of --generations {self.generations})"
        finally:
            (self.out / STOP_FILE).unlink(missing_ok=True)

    def start(self) -> None:
        """The main's run at update 0 (its checkpoint) and its start frozen as ``main-0``; then the state."""
        trainer = MainTrainer(self.run_config, progress=False)
        try:
            checkpoint = trainer.save(trainer.out_dir / "checkpoint.pt")
        finally:
            trainer.close()
        (self.out / "snapshots").mkdir(exist_ok=True)
        export_policy(checkpoint, self.out / "snapshots" / "main-0.pt")
        self.state = new_state(self.config, self.run_config, self.exploiter_config)
        write_state(self.out, self.state)

    def resumed(self, checkpoint: Path, overrides: list[str], total_steps: int) -> MainTrainer:
        """The run of ``checkpoint`` continued with ``overrides`` (:func:`placed`) until it has trained
        ``total_steps`` env steps or this invocation's minutes are spent."""
        held = load_checkpoint(checkpoint)
        check_resume_checkpoint(held, checkpoint)
        limit = float(held["progress"]["elapsed_s"]) / 60 + self.minutes_left()
        overrides = [*overrides, f"budget.total_steps={total_steps}", f"budget.time_limit_min={min(limit, 1e9)}"]
        return MainTrainer.resume(checkpoint, progress=self.progress, overrides=overrides)

    def exploiter_overrides(self, generation: int) -> list[str]:
        """The probe recipe's changes for generation ``generation``'s exploiter: its seed, the league's tables (every
        one evaluated), then ``exploiters.set``."""
        e = self.config.exploiters
        tables = json.dumps([t.model_dump(exclude_none=True) for t in e.tables])
        return [
            f"seed={self.config.seed + generation}", f"tables={tables}",
            f"eval_tables={list(range(len(e.tables)))}", *e.set,
        ]  # fmt: skip

    def exploiter_run_config(self, generation: int) -> UniversalConfig:
        """The probe's recipe with :meth:`exploiter_overrides`, validated before any training (the probe adds its
        target, the target's network and weights, and the run's folder)."""
        try:
            run = load_config(PROBE_CONFIG, ["kind=universal", *self.exploiter_overrides(generation)])
        except ValueError as err:
            raise ValueError(f"exploiters: {err}") from None
        assert isinstance(run, UniversalConfig)
        return run

    def exploiter_phase(self) -> bool:
        """Train (or continue) the generation's exploiter; once it has its steps, freeze it and record its figure."""
        g, e = self.state["generation"], self.config.exploiters
        target = str(self.out / self.state["snapshots"][g - 1])
        run_out = self.out / "exploiters" / f"gen-{g}"
        checkpoint = run_out / "run" / "checkpoint.pt"
        if checkpoint.is_file():  # continued where it stopped, from wherever the league's folder is now
            opponents = {**self.exploiter_run_config(g).opponents.model_dump(), "baselines": {target: 1.0}}
            trainer = self.resumed(checkpoint, placed(run_out / "run", opponents, target), e.steps)
        else:
            trainer = start_run(
                target, run_out, False, None, e.steps, self.minutes_left(), self.progress, self.exploiter_overrides(g)
            )
        try:
            with forwarding_stop(self.out, trainer.out_dir):
                trainer.train()
        finally:
            trainer.close()
        if trainer.global_step < e.steps:
            return False
        frozen = f"snapshots/exploiter-{g}.pt"
        shutil.copyfile(trainer.out_dir / "policy.pt", self.out / frozen)
        record = {
            "generation": g,
            "exploiter": {
                **figures(trainer.last_eval),
                "env_steps": trainer.global_step,
                "updates": trainer.update,
                "minutes": round(trainer.elapsed / 60, 2),
                "eval_seed": trainer.eval_seed,
                "target": self.state["snapshots"][g - 1],
            },
            "main": None,
        }
        self.state["history"] = [r for r in self.state["history"] if r["generation"] != g] + [record]
        self.state["exploiters"] = [*self.state["exploiters"][: g - 1], frozen]
        self.state["phase"] = "main"
        write_state(self.out, self.state)
        return True

    def main_phase(self) -> bool:
        """Continue the main's run against the pool with the generation's exploiter, to ``g * main.steps`` env steps;
        then freeze it as ``main-<g>`` and record its evaluation."""
        g = self.state["generation"]
        exploiters = [str(self.out / path) for path in self.state["exploiters"]]
        opponents = league_opponents(self.run_config.opponents.model_dump(), exploiters, self.config.exploiters)
        total = g * self.config.main.steps
        trainer = self.resumed(self.out / "main" / "checkpoint.pt", placed(self.out / "main", opponents), total)
        try:
            with forwarding_stop(self.out, trainer.out_dir):
                trainer.train()
        finally:
            trainer.close()
        if trainer.global_step < total:
            return False
        frozen = f"snapshots/main-{g}.pt"
        shutil.copyfile(trainer.out_dir / "policy.pt", self.out / frozen)
        for record in self.state["history"]:
            if record["generation"] == g:
                record["main"] = {
                    **figures(trainer.last_eval),
                    "env_steps": trainer.global_step,
                    "updates": trainer.update,
                    "minutes": round(trainer.elapsed / 60, 2),
                    "exploiter_shares": {
                        Path(k).stem: round(v, 6) for k, v in opponents["baselines"].items() if k in exploiters
                    },
                }
                record["main_eval_opponent"] = self.run_config.budget.eval_opponent
        self.state["snapshots"] = [*self.state["snapshots"][:g], frozen]
        self.state["generation"] = g + 1
        self.state["phase"] = "exploiter"
        write_state(self.out, self.state)
        return True


def run_league(
    config_path: str | Path,
    out: str | Path,
    generations: int | None = None,
    minutes: float | None = None,
    progress: bool = True,
) -> dict[str, Any]:
    """Start or continue the league of ``config_path`` in ``out``; returns its state with ``ended`` (why this
    invocation ended)."""
    config = load_league_config(config_path)
    folder = Path(check_writable_dir(out, "--out")).resolve()
    league = League(config, folder, generations, progress)
    ended = league.run(minutes)
    return {**league.state, "ended": ended}


def main(argv: list[str] | None = None) -> int:
    parser = ArgumentParser(prog="python -m president_env.training.league", description=__doc__.split("\n\n")[0])
    parser.add_argument("--config", required=True, help="the league's YAML config (configs/train/league.yaml)")
    parser.add_argument("--out", required=True, help="the league's folder (the same command continues it)")
    parser.add_argument(
        "--generations", type=int, default=None, help="train up to this generation (default: the config's)"
    )
    parser.add_argument("--minutes", type=float, default=None, help="train at most this long in this invocation")
    parser.add_argument("--no-progress", action="store_true", help="no progress bars")
    args = parser.parse_args(argv)
    if args.generations is not None and not 1 <= args.generations <= 10_000:
        parser.error(f"--generations must be from 1 to 10000, got {args.generations}")
    if args.minutes is not None and not 0 < args.minutes < 1e8:
        parser.error(f"--minutes must be a positive number of minutes, got {args.minutes:g}")
    try:
        state = run_league(args.config, args.out, args.generations, args.minutes, not args.no_progress)
    except KeyboardInterrupt:
        return 130
    except (ValueError, CheckpointError, ImportError) as err:
        print(f"{parser.prog}: error: {' '.join(str(err).split())}", file=sys.stderr)
        return 2
    done = state["generation"] - 1
    print(json.dumps({"ended": state["ended"], "generations_done": done, "phase": state["phase"]}, indent=2))
    for record in state["history"]:
        print(json.dumps(record))
    return 0


if __name__ == "__main__":
    sys.exit(main())
