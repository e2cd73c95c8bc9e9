"""Masked PPO self-play on the batched engine: the training loop, read top to bottom (after CleanRL's ``ppo.py``).

    trainer = Trainer(load_config("configs/train/quick.yaml"))
    trainer.train()

The command line, ``president-train``, is :mod:`.cli`.

One update of :meth:`Trainer.train_step`:

1. **Rollout.** Every shard plays ``ppo.num_steps`` engine steps of its games with the current
   weights (:func:`.ppo.collect`) and turns the learner's decisions into training rows with GAE along
   each seat's own chain of decisions (:func:`.ppo.seat_gae`, :func:`.ppo.training_rows`); the shards'
   rows form one batch. Who sits at each table is the opponent pool's draw (:mod:`.opponents`); where
   the shards run, in this process or as Ray actors, is :mod:`.rollout`'s business.
2. **Update.** Clipped PPO over that batch (:func:`.ppo.ppo_update`), the step size annealed over the budget.
3. **Snapshot.** Every ``opponents.snapshot_every`` updates the learner joins its own opponent pool.

:meth:`Trainer.train` repeats it until the step budget or the time limit, evaluates every
``budget.eval_every`` updates and logs every update (:mod:`.bookkeeping`), and writes atomic
checkpoints that continue the run exactly (:mod:`.run_state`), then ``policy.pt``, the small
weights-only file to share.

Env steps (the throughput unit) count every decision of every seat, learner and opponents alike.
"""

from __future__ import annotations

import copy
import os
import sys
import time
from pathlib import Path

import torch

from president_env import agents
from president_env.agents.checkpoint import export_policy, save_checkpoint
from president_env.agents.torch_policy import PolicyNet, TorchPolicyAgent
from president_env.observation import obs_dim as observation_size
from president_env.threads import cap_threads

from .bookkeeping import RunLog, TableRewards, eval_due, evaluate_learner, final_eval_due, plot_curve
from .config import TrainConfig
from .ppo import ppo_update
from .rollout import merge_shards, start_shards
from .run_state import RunSeeds, read_checkpoint, restore, run_state


class Trainer:
    """Everything a run holds; :meth:`train` runs it, :meth:`save` and :meth:`resume` make it resumable.

    The games live in ``rollout.shards`` :class:`~.rollout.RolloutShard` s (``self.shards``): in this
    process, or one Ray actor each when ``rollout.ray_address`` is set. Call :meth:`close` (``train``
    does) to release the actors.
    """

    def __init__(self, config: TrainConfig, progress: bool = True) -> None:
        self.config = config
        self.rules = config.resolve_rules()
        self.out_dir = Path(config.out_dir)
        self.progress = progress
        for name in config.opponents.baselines:
            if name not in agents.names():
                raise ValueError(f"opponents.baselines: unknown agent {name!r}; known: {', '.join(agents.names())}")
        if os.path.isfile(config.budget.eval_opponent):  # a checkpoint that cannot play is refused before training
            agents.make(config.budget.eval_opponent, self.rules)
        cap_threads(config.threads or None)  # torch: at most the CPUs this process is given
        seeds = RunSeeds.of(config)
        self.eval_seed = seeds.eval
        self.generator = torch.Generator().manual_seed(seeds.learn)
        obs_dim, num_actions = observation_size(self.rules), self.rules.num_actions
        with torch.random.fork_rng():
            torch.manual_seed(seeds.network)
            self.net = PolicyNet(obs_dim, num_actions, config.network.hidden, config.network.activation)
        self.optimizer = torch.optim.Adam(self.net.parameters(), lr=config.ppo.learning_rate, eps=1e-5)
        self.shards = start_shards(config, self.net)
        if config.opponents.snapshots > 0:
            self.shards.call("add_snapshot", self.weights())
        self.update = 0
        self.global_step = 0
        self.elapsed = 0.0
        self.last_eval: dict[str, float] = {}
        self.tables = TableRewards(config.opponents)

    def weights(self) -> dict[str, torch.Tensor] | None:
        """What the shards need to act as the learner now (nothing for shards that share its network)."""
        # state_dict() tensors are detached; RayGroup.call serializes them at once, before any update.
        return None if self.shards.local else self.net.state_dict()

    def close(self) -> None:
        """Release the shards' Ray actors (nothing to do for shards in this process)."""
        self.shards.close()

    # ----- one update: rollout, PPO, snapshot ------------------------------------------------------
    def rollout(self) -> tuple[dict[str, torch.Tensor], dict[str, float]]:
        """Every shard plays one rollout with the current weights; one training batch and statistics."""
        batch, stats = merge_shards(self.shards.call("run", self.weights()))
        self.tables.add(*stats.pop("tables"))
        self.global_step += self.config.ppo.num_envs * self.config.ppo.num_steps
        return batch, stats

    def learn(self, batch: dict[str, torch.Tensor]) -> dict[str, float]:
        """One PPO update on ``batch``, the step size annealed linearly to 0 over the budget (``budget.anneal_steps``,
        by default ``budget.total_steps``)."""
        p, budget = self.config.ppo, self.config.budget
        if p.anneal_lr:
            frac = max(0.0, 1.0 - self.global_step / (budget.anneal_steps or budget.total_steps))
            self.optimizer.param_groups[0]["lr"] = frac * p.learning_rate
        return ppo_update(self.net, self.optimizer, batch, p, self.generator)

    def train_step(self) -> dict[str, float]:
        """One rollout and one update; returns the scalars to log."""
        start = time.perf_counter()
        batch, stats = self.rollout()
        collected = time.perf_counter()
        stats.update(self.learn(batch))
        self.update += 1
        if self.config.opponents.snapshots > 0 and self.update % self.config.opponents.snapshot_every == 0:
            self.shards.call("add_snapshot", self.weights())
        end = time.perf_counter()
        steps = self.config.ppo.num_envs * self.config.ppo.num_steps
        stats["charts/steps_per_s"] = steps / (end - start)
        stats["charts/rollout_steps_per_s"] = steps / (collected - start)
        stats.update(self.tables.take_means())
        self.elapsed += end - start
        return stats

    # ----- the loop --------------------------------------------------------------------------------
    def train(self) -> dict[str, float]:
        """Run until the step budget or the time limit; returns the last evaluation."""
        config, budget = self.config, self.config.budget
        self.out_dir.mkdir(parents=True, exist_ok=True)
        config.save(self.out_dir / "config.yaml")
        self.rules.to_yaml(self.out_dir / "rules.yaml")
        steps = config.ppo.num_envs * config.ppo.num_steps
        with RunLog(self.out_dir, budget, self.global_step, resumed_at=self.update, progress=self.progress) as log:
            while self.budget_spent() is None:
                try:
                    stats = self.train_step()
                except KeyboardInterrupt:
                    # A half-done rollout cannot be saved consistently; the last checkpoint stays intact.
                    print(f"\ninterrupted: resume with --resume {self.out_dir / 'checkpoint.pt'}", file=sys.stderr)
                    raise
                if eval_due(budget, self.update):
                    t0 = time.perf_counter()
                    self.last_eval = self.evaluate()
                    stats.update(self.last_eval)
                    stats["charts/eval_seconds"] = time.perf_counter() - t0
                    self.elapsed += stats["charts/eval_seconds"]
                log.record(self.progress_record(), stats, steps, self.last_eval)
                if budget.checkpoint_every and self.update % budget.checkpoint_every == 0:
                    self.save(self.out_dir / "checkpoint.pt")
            if final_eval_due(budget, self.update, bool(self.last_eval)):
                self.last_eval = self.evaluate()
                log.record_final(self.progress_record(), self.last_eval)
        self.save(self.out_dir / "checkpoint.pt")
        export_policy(self.out_dir / "checkpoint.pt", self.out_dir / "policy.pt")
        if budget.eval_every:
            plot_curve(self.out_dir, budget.eval_opponent)
        return self.last_eval

    def progress_record(self) -> dict[str, float]:
        """Where the run stands: the first fields of every ``metrics.jsonl`` record."""
        return {"update": self.update, "global_step": self.global_step, "elapsed_s": self.elapsed}

    # ----- evaluation and checkpoints ---------------------------------------------------------------
    def agent(self, greedy: bool = True) -> TorchPolicyAgent:
        """The current policy behind the agent interface (a frozen copy)."""
        net = copy.deepcopy(self.net).eval()
        return TorchPolicyAgent(self.rules, net, seed=0, greedy=greedy, name="learner")

    def evaluate(self, n_deals: int | None = None) -> dict[str, float]:
        """The greedy learner against ``budget.eval_opponent`` in every other seat, over duplicate deals."""
        return evaluate_learner(self.agent(), self.rules, self.config.budget, self.eval_seed, n_deals)

    def save(self, path: str | Path) -> Path:
        """The full training checkpoint (:func:`.run_state.run_state`), written atomically."""
        return save_checkpoint(path, run_state(self))

    def budget_spent(self) -> str | None:
        """Why the run has nothing left to train (its step or time budget is spent), or ``None``.

        Both budgets count the whole run, every sitting included."""
        budget = self.config.budget
        if self.global_step >= budget.total_steps:
            return f"the run is at step {self.global_step:,} of budget.total_steps={budget.total_steps:,}"
        if budget.time_limit_min is not None and self.elapsed >= budget.time_limit_min * 60.0:
            return (
                f"the run has trained {self.elapsed / 60:.0f} min of budget.time_limit_min={budget.time_limit_min:g}, "
                "which counts every sitting"
            )
        return None

    @classmethod
    def resume(cls, path: str | Path, progress: bool = True, overrides: list[str] | tuple[str, ...] = ()) -> Trainer:
        """A trainer restored from a full checkpoint (``overrides`` may extend the budget, not change the run)."""
        config, checkpoint = read_checkpoint(path, overrides)
        trainer = cls(config, progress=progress)
        restore(trainer, checkpoint, path)
        return trainer
