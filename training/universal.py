"""One learner for every table: masked PPO self-play on a mixture of tables, read top to bottom.

    python -m president_env.training.universal --config configs/train/universal.yaml
    python -m president_env.training.universal --resume runs/universal/checkpoint.pt --set budget.time_limit_min=120

The learner is a :class:`~president_env.agents.universal.UniversalNet`: every table's observations and
actions are laid out in one universal layout (:mod:`president_env.agents.universal`), so one network
plays them all. One update of :meth:`UniversalTrainer.train_step`:

1. **Rollout, table by table.** Each table of ``tables`` (a preset at a table size, playing matches of
   ``manches`` manches) runs ``ppo.num_envs`` games. :func:`.ppo.collect` plays ``ppo.num_steps`` steps of
   them through a :class:`UniversalGame` (the table seen in the universal layout) and
   :func:`.ppo.training_rows` turns the learner's decisions into rows, GAE along each seat's own chain.
   Rewards are ``normalized`` (each manche's points scaled into [-1, 1]), so the tables weigh alike.
2. **Update.** All tables' rows form one batch for :func:`.ppo.ppo_update`, unchanged.
3. **Population.** Each game draws its table (:class:`~.opponents.OpponentPool`): the learner everywhere,
   or one learner against past versions of itself, the baselines or the rule-based styles
   (:mod:`president_env.agents.styles`; keep one out to measure against).

**Segments and resuming.** A run is cut into segments of ``budget.checkpoint_every`` updates. A segment
starts from the learner alone: fresh games dealt from ``(seed, segment)`` and a pool holding only the
current policy, which then gains a snapshot every ``opponents.snapshot_every`` updates. So the compact
checkpoint written at each segment's end (policy, critic, optimizer, counters and the learning
generator; no games, no pool) is all a later sitting needs to continue the run exactly, on any machine.
The decisions still open when a segment ends are not trained. To end a sitting cleanly before its
budget, create ``STOP`` in the run's folder: the update in progress finishes and the checkpoint is written.
"""

from __future__ import annotations

import argparse
import copy
import sys
import time
from pathlib import Path
from typing import Any, Literal

import numpy as np
import torch
import yaml
from pydantic import Field, ValidationError

from president_env.agents.checkpoint import CheckpointError, export_policy, load_checkpoint, save_checkpoint
from president_env.agents.universal import (
    NUM_ACTIONS,
    UniversalAgent,
    UniversalNet,
    encode,
    hidden_hands,
    to_native,
    to_universal,
    universal_mask,
)
from president_env.presets import resolve_rules
from president_env.rules import Rules
from president_env.user_input import check_writable_dir, load_yaml, read_text, short_repr
from president_env.vec_game import VecGame

from .bookkeeping import RunLog, TableRewards, eval_due, evaluate_learner, final_eval_due, json_line, plot_curve
from .config import BudgetConfig, NetworkConfig, OpponentConfig, PPOConfig, _Section, apply_override
from .opponents import OpponentPool
from .ppo import Pending, collect, ppo_update, training_rows

STOP_FILE = "STOP"
"""A file of this name in the run's folder ends the sitting after the current update (its segment ends early)."""


# ---------------------------------------------------------------------------------------------
# Configuration
# ---------------------------------------------------------------------------------------------
class TableConfig(_Section):
    """One training table: a preset (or rules YAML) at a table size."""

    rules: str = "standard"
    n_players: int | None = Field(None, ge=3, le=8)  # null: the preset's


class UniversalNetworkConfig(NetworkConfig):
    critic: Literal["plain", "perfect"] = "plain"  # "perfect": the critic also sees every hand in training (PerfectDou)


class UniversalConfig(_Section):
    """A universal run. ``ppo.num_envs`` and ``ppo.num_steps`` are per table."""

    tables: list[TableConfig] = Field(default_factory=lambda: [TableConfig()], min_length=1)
    manches: int | None = Field(3, ge=1, le=100)  # every table plays matches of this many manches (null: the preset's)
    eval_tables: list[int] = Field(default_factory=lambda: [0])  # indices of ``tables`` evaluated every eval_every
    seed: int = Field(1, ge=0)
    out_dir: str = "runs/universal"
    threads: int = Field(1, ge=0, le=1024)  # torch CPU threads (0: torch's default)
    ppo: PPOConfig = Field(default_factory=lambda: PPOConfig(num_envs=64, num_steps=32))
    network: UniversalNetworkConfig = Field(default_factory=UniversalNetworkConfig)
    opponents: OpponentConfig = Field(default_factory=OpponentConfig)
    budget: BudgetConfig = Field(default_factory=BudgetConfig)

    def model_post_init(self, _context: Any) -> None:
        for table in self.tables:
            resolve_rules(table.rules)
        for index in self.eval_tables:
            if not 0 <= index < len(self.tables):
                raise ValueError(f"eval_tables: {index} is not the index of a table (0..{len(self.tables) - 1})")

    def table_rules(self) -> list[Rules]:
        """The ``Rules`` of every table."""
        out = []
        for table in self.tables:
            rules = resolve_rules(table.rules)
            changes = {"n_players": table.n_players, "manches": self.manches}
            out.append(rules.replace(**{k: v for k, v in changes.items() if v is not None}))
        return out

    def to_dict(self) -> dict[str, Any]:
        return self.model_dump()


def universal_config(data: dict[str, Any] | None, overrides: list[str] | tuple[str, ...] = ()) -> UniversalConfig:
    """A validated config from a mapping and ``section.field=value`` overrides; one-line ``ValueError`` otherwise."""
    data = copy.deepcopy(data or {})
    for item in overrides:
        apply_override(data, item)
    try:
        return UniversalConfig.model_validate(data)
    except ValidationError as err:
        first = err.errors(include_url=False)[0]
        where = ".".join(str(part) for part in first["loc"]) or "config"
        raise ValueError(f"{where}: {first['msg']} (got {short_repr(first.get('input'))})") from None


def load_universal_config(path: str | Path, overrides: list[str] | tuple[str, ...] = ()) -> UniversalConfig:
    name = short_repr(str(path), 200)
    data = load_yaml(read_text(path, "config file"), f"config file {name}") or {}
    if not isinstance(data, dict):
        raise ValueError(f"config file {name} must hold a mapping, got {type(data).__name__}")
    return universal_config(data, overrides)


# ---------------------------------------------------------------------------------------------
# A table in the universal layout
# ---------------------------------------------------------------------------------------------
class UniversalGame:
    """A ``VecGame`` seen through the universal layout: what :func:`.ppo.collect` needs of a game.

    ``observe()`` gives the encoding (with the perfect critic, followed by every hand), ``legal_mask()`` the
    universal mask, ``step`` takes universal actions. The table's own last observation and mask are kept for
    the opponents that read them (``native_obs``, ``native_mask``).
    """

    def __init__(self, rules: Rules, batch_size: int, seed: np.random.SeedSequence, perfect: bool) -> None:
        self.rules, self.perfect = rules, perfect
        self.game = VecGame(rules, batch_size=batch_size, seed=seed, reward_mode="normalized")
        self.batch_size = batch_size
        self.native_obs = self.native_mask = None

    @property
    def current_player(self) -> np.ndarray:
        return self.game.current_player

    def observe(self) -> np.ndarray:
        self.native_obs = self.game.observe()
        x = encode(self.rules, self.native_obs)
        if self.perfect:
            x = np.concatenate([x, hidden_hands(self.game.state, self.game.current_seat)], axis=1)
        return x

    def legal_mask(self) -> np.ndarray:
        self.native_mask = self.game.legal_mask()
        return universal_mask(self.rules, self.native_mask)

    def step(self, actions: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        return self.game.step(to_native(self.rules, actions))


class TablePool(OpponentPool):
    """:class:`~.opponents.OpponentPool` at a :class:`UniversalGame`: baselines and styles act on the table's own
    observations (the rows ``collect`` hands them are those the pool's owner gives ``policy_id`` now)."""

    def __init__(self, config: OpponentConfig, game: UniversalGame, rng: np.random.Generator) -> None:
        super().__init__(config, game.rules, game.batch_size, rng)
        self.game = game

    def act(self, policy_id: int, obs: np.ndarray, mask: np.ndarray, generator: torch.Generator) -> np.ndarray:
        if policy_id >= self.first_snapshot_id:
            return super().act(policy_id, obs, mask, generator)
        rows = np.arange(self.game.batch_size)
        sel = self.owner[rows, self.game.current_player] == policy_id
        native = self.baselines[policy_id - 1].act_batch(self.game.native_obs[sel], self.game.native_mask[sel])
        return to_universal(self.rules, native)


class Table:
    """One training table: its games, its population and the learner's decisions carried between rollouts."""

    def __init__(self, rules: Rules, config: UniversalConfig, seed: np.random.SeedSequence, input_dim: int) -> None:
        game_seed, pool_seed = seed.spawn(2)
        batch = config.ppo.num_envs
        self.rules = rules
        self.game = UniversalGame(rules, batch, game_seed, config.network.critic == "perfect")
        self.pool = TablePool(config.opponents, self.game, np.random.default_rng(pool_seed))
        self.pending = Pending.empty(batch, rules.n_players, input_dim, NUM_ACTIONS)


def table_name(rules: Rules, spec: TableConfig) -> str:
    return f"{Path(spec.rules).stem}-{rules.n_players}p"


# ---------------------------------------------------------------------------------------------
# The trainer
# ---------------------------------------------------------------------------------------------
class UniversalTrainer:
    """Everything a universal run holds; :meth:`train` runs it, :meth:`save` and :meth:`resume` continue it."""

    def __init__(self, config: UniversalConfig, progress: bool = True) -> None:
        self.config, self.progress = config, progress
        self.out_dir = Path(config.out_dir)
        self.rules = config.table_rules()
        self.names = [table_name(r, t) for r, t in zip(self.rules, config.tables)]
        if config.threads:
            torch.set_num_threads(config.threads)
        network_seed, learn_seed, self.eval_seed, self.table_seed = np.random.SeedSequence(config.seed).spawn(4)
        self.generator = torch.Generator().manual_seed(int(learn_seed.generate_state(1)[0]))
        with torch.random.fork_rng():
            torch.manual_seed(int(network_seed.generate_state(1)[0]))
            n = config.network
            self.net = UniversalNet(n.hidden, n.activation, n.critic)
        self.optimizer = torch.optim.Adam(self.net.parameters(), lr=config.ppo.learning_rate, eps=1e-5)
        self.update = self.global_step = self.segment = 0
        self.elapsed = 0.0
        self.last_eval: dict[str, float] = {}
        self.rewards = TableRewards(config.opponents)
        self.tables: list[Table] = []
        self.start_segment()

    def start_segment(self) -> None:
        """Fresh games and a pool of the current policy alone, all from ``(seed, segment)``."""
        seed = np.random.SeedSequence(int(self.table_seed.generate_state(1)[0]), spawn_key=(self.segment,))
        self.tables = [
            Table(r, self.config, s, self.net.input_dim) for r, s in zip(self.rules, seed.spawn(len(self.rules)))
        ]
        snapshots: list = []
        for table in self.tables:
            table.pool.snapshots = snapshots  # one pool of past versions, shared by every table
        self.tables[0].pool.add_snapshot(self.net)

    # ----- one update --------------------------------------------------------------------------
    def train_step(self) -> dict[str, float]:
        """One rollout at every table and one PPO update; the scalars to log."""
        p = self.config.ppo
        start = time.perf_counter()
        batches, stats = [], {}
        for name, table in zip(self.names, self.tables):
            rollout = collect(table.game, self.net, table.pool, self.generator, p.num_steps)
            batch, table.pending, counts = training_rows(rollout, table.pending, p.gamma, p.gae_lambda)
            batches.append(batch)
            self.rewards.add(*table.pool.take_tallies())
            stats[f"rollout/{name}/trained_decisions"] = counts["rollout/trained_decisions"]
        batch = {k: torch.from_numpy(np.concatenate([b[k] for b in batches])) for k in batches[0]}
        collected = time.perf_counter()
        steps = p.num_envs * p.num_steps * len(self.tables)
        self.global_step += steps
        if p.anneal_lr:
            budget = self.config.budget
            frac = max(0.0, 1.0 - self.global_step / (budget.anneal_steps or budget.total_steps))
            self.optimizer.param_groups[0]["lr"] = frac * p.learning_rate
        stats.update(ppo_update(self.net, self.optimizer, batch, p, self.generator))
        self.update += 1
        if self.update % self.config.opponents.snapshot_every == 0:
            self.tables[0].pool.add_snapshot(self.net)
        end = time.perf_counter()
        stats["charts/steps_per_s"] = steps / (end - start)
        stats["charts/rollout_steps_per_s"] = steps / (collected - start)
        stats.update(self.rewards.take_means())
        self.elapsed += end - start
        return stats

    # ----- the loop ----------------------------------------------------------------------------
    def train(self) -> dict[str, float]:
        """Run until the step budget or the time limit (every sitting counted); returns the last evaluation."""
        config, budget = self.config, self.config.budget
        self.out_dir.mkdir(parents=True, exist_ok=True)
        (self.out_dir / "config.yaml").write_text(yaml.safe_dump(config.to_dict(), sort_keys=False))
        steps = config.ppo.num_envs * config.ppo.num_steps * len(self.tables)
        with RunLog(self.out_dir, budget, self.global_step, resumed_at=self.update, progress=self.progress) as log:
            while self.budget_spent() is None and not (self.out_dir / STOP_FILE).exists():
                stats = self.train_step()
                if eval_due(budget, self.update):
                    t0 = time.perf_counter()
                    self.last_eval = self.evaluate()
                    stats.update(self.last_eval)
                    stats["charts/eval_seconds"] = time.perf_counter() - t0
                    self.elapsed += stats["charts/eval_seconds"]
                log.record(self.progress_record(), stats, steps, self.last_eval)
                if budget.checkpoint_every and self.update % budget.checkpoint_every == 0:
                    self.end_segment()
            if final_eval_due(budget, self.update, bool(self.last_eval)):
                self.last_eval = self.evaluate()
                log.record_final(self.progress_record(), self.last_eval)
        if not budget.checkpoint_every or self.update % budget.checkpoint_every:
            self.end_segment()
        export_policy(self.out_dir / "checkpoint.pt", self.out_dir / "policy.pt")
        if budget.eval_every:
            plot_curve(self.out_dir, budget.eval_opponent)
        return self.last_eval

    def end_segment(self) -> None:
        """Save the compact checkpoint and start the next segment (what a resumed run does too)."""
        self.segment += 1
        self.save(self.out_dir / "checkpoint.pt")
        self.start_segment()

    def budget_spent(self) -> str | None:
        budget = self.config.budget
        if self.global_step >= budget.total_steps:
            return f"the run is at step {self.global_step:,} of budget.total_steps={budget.total_steps:,}"
        if budget.time_limit_min is not None and self.elapsed >= budget.time_limit_min * 60.0:
            return f"the run has trained {self.elapsed / 60:.0f} min of budget.time_limit_min={budget.time_limit_min:g}"
        return None

    def progress_record(self) -> dict[str, float]:
        return {"update": self.update, "global_step": self.global_step, "elapsed_s": self.elapsed}

    # ----- evaluation and checkpoints ----------------------------------------------------------
    def agent(self, rules: Rules) -> UniversalAgent:
        return UniversalAgent(rules, copy.deepcopy(self.net).eval(), seed=0, name="learner")

    def evaluate(self) -> dict[str, float]:
        """The greedy learner against ``budget.eval_opponent`` at each of ``eval_tables``; their mean as
        ``eval/advantage`` (the learning curve)."""
        out: dict[str, float] = {}
        for index in self.config.eval_tables:
            rules = self.rules[index]
            result = evaluate_learner(
                self.agent(rules), rules, self.config.budget, int(self.eval_seed.generate_state(1)[0])
            )
            out.update({k.replace("eval/", f"eval/{self.names[index]}/"): v for k, v in result.items()})
        for key in ("advantage", "advantage_ci"):
            values = [out[f"eval/{self.names[i]}/{key}"] for i in self.config.eval_tables]
            out[f"eval/{key}"] = (
                float(np.mean(values))
                if key == "advantage"
                else float(np.sqrt(np.mean(np.square(values)) / len(values)))
            )
        return out

    def save(self, path: str | Path) -> Path:
        """The compact resume checkpoint: network, optimizer, counters, learning generator, config."""
        return save_checkpoint(
            path,
            {
                "rules": self.rules[0].to_dict(),
                "network": self.net.spec(),
                "model": self.net.state_dict(),
                "optimizer": self.optimizer.state_dict(),
                "config": self.config.to_dict(),
                "rng": {"learn": self.generator.get_state()},
                "progress": {**self.progress_record(), "segment": self.segment},
                "metrics": dict(self.last_eval),
                "greedy": True,
            },
        )

    @classmethod
    def resume(
        cls, path: str | Path, progress: bool = True, overrides: list[str] | tuple[str, ...] = ()
    ) -> UniversalTrainer:
        """A trainer continuing the run of a compact checkpoint; ``overrides`` may change only ``budget.*``."""
        for item in overrides:
            if not item.strip().startswith("budget."):
                raise ValueError(f"--set {short_repr(item)}: a resumed run may change only budget.* settings")
        checkpoint = load_checkpoint(path)
        network = checkpoint.get("network")
        if not isinstance(network, dict) or network.get("kind") != "universal":
            raise CheckpointError(f"checkpoint {path}: not a checkpoint of training/universal.py")
        missing = [key for key in ("config", "optimizer", "rng", "progress") if key not in checkpoint]
        if missing:
            raise CheckpointError(
                f"checkpoint {path}: an exported policy, not a training checkpoint (no {', '.join(missing)}); "
                "resume from the run's checkpoint.pt"
            )
        trainer = cls(universal_config(checkpoint["config"], overrides), progress=progress)
        trainer.net.load_state_dict(checkpoint["model"])
        trainer.optimizer.load_state_dict(checkpoint["optimizer"])
        trainer.generator.set_state(checkpoint["rng"]["learn"])
        progress_state = checkpoint["progress"]
        trainer.update, trainer.global_step = int(progress_state["update"]), int(progress_state["global_step"])
        trainer.elapsed, trainer.segment = float(progress_state["elapsed_s"]), int(progress_state["segment"])
        trainer.last_eval = dict(checkpoint.get("metrics") or {})
        trainer.start_segment()
        return trainer


# ---------------------------------------------------------------------------------------------
# Command line
# ---------------------------------------------------------------------------------------------
def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m president_env.training.universal", description=__doc__.split("\n\n")[0]
    )
    parser.add_argument("--config", help="a YAML file such as configs/train/universal.yaml")
    parser.add_argument(
        "--set", action="append", default=[], metavar="KEY=VALUE", help="override, e.g. budget.time_limit_min=60"
    )
    parser.add_argument("--out-dir", help="where the run writes (overrides out_dir)")
    parser.add_argument("--resume", metavar="CHECKPOINT", help="continue a run from its checkpoint.pt")
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")
    args = parser.parse_args(argv)
    if bool(args.resume) == bool(args.config):
        parser.error("give --config (a new run) or --resume (a run to continue), one of them")
    try:
        if args.resume:
            trainer = UniversalTrainer.resume(args.resume, progress=not args.no_progress, overrides=args.set)
            trainer.out_dir = check_writable_dir(args.out_dir or Path(args.resume).parent, "--out-dir")
        else:
            overrides = list(args.set) + ([f"out_dir={args.out_dir}"] if args.out_dir else [])
            config = load_universal_config(args.config, overrides)
            check_writable_dir(config.out_dir, "--out-dir" if args.out_dir else "out_dir")
            trainer = UniversalTrainer(config, progress=not args.no_progress)
    except (ValueError, CheckpointError) as err:
        print(f"universal: error: {err}", file=sys.stderr)
        return 2
    try:
        result = trainer.train()
    except KeyboardInterrupt:
        return 130
    print(json_line({"update": trainer.update, "global_step": trainer.global_step, **result}, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
