"""Masked PPO self-play on the batched engine: the training loop, read top to bottom (after CleanRL's ``ppo.py``).

    trainer = Trainer(load_config("configs/train/quick.yaml"))
    trainer.train()

The command line, ``president-train``, is :mod:`.cli`.

One update of :meth:`Run.train_step`:

1. **Rollout.** The games play ``ppo.num_steps`` engine steps with the current weights (:func:`.ppo.collect`),
   and the learner's decisions become training rows with GAE along each seat's own chain of decisions
   (:func:`.ppo.seat_gae`, :func:`.ppo.training_rows`). Who sits at each table is the opponent pool's draw
   (:mod:`.opponents`). Which games these are is the run's: :class:`Trainer` plays one table, cut into rollout
   shards that play in this process or as Ray actors (:mod:`.rollout`); :class:`~.universal.UniversalTrainer`
   plays a mixture of tables with one network.
2. **Update.** Clipped PPO over that batch (:func:`.ppo.ppo_update`), the step size annealed over the budget.
3. **Snapshot.** Every ``opponents.snapshot_every`` updates the learner joins its own opponent pool.

:meth:`Run.train` repeats it until the step budget, the time limit or a ``STOP`` file in the run's folder,
evaluates every ``budget.eval_every`` updates, logs every update (:mod:`.bookkeeping`), writes an atomic
checkpoint every ``budget.checkpoint_every`` updates and at the end, then ``policy.pt``, the small
weights-only file to share. :class:`Trainer`'s checkpoint holds the games in flight, so a run continues exactly
as if it had never stopped.

Env steps (the throughput unit) count every decision of every seat, learner and opponents alike.
"""

from __future__ import annotations

import contextlib
import copy
import math
import os
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any, ClassVar

import torch

from president_env import agents
from president_env.agents.checkpoint import CheckpointError, export_policy, load_checkpoint, save_checkpoint
from president_env.agents.torch_policy import PolicyNet, TorchPolicyAgent
from president_env.core.observation import obs_dim as observation_size
from president_env.core.threads import cap_threads
from president_env.core.user_input import short_repr

from .bookkeeping import RunLog, TableRewards, evaluate_learner, plot_curve
from .config import RunConfig, RunSeeds, TrainConfig, apply_override, from_dict
from .grow import check_growable, grow_state
from .ppo import ppo_update
from .rollout import merge_shards, start_shards

CRITIC_PREFIXES = ("value_head.", "critic.")
"""The critic's parameters by name: :class:`PolicyNet`'s value head (on the trunk it shares with the actor) and
:class:`~president_env.agents.universal.UniversalNet`'s critic; the others are the actor's."""

STOP_FILE = "STOP"
"""A file of this name in the run's folder ends the sitting after the update in progress (and checkpoints it); the
run removes it as it ends."""


class Run:
    """The loop every run shares: rollout, PPO update, snapshot, evaluation, log and checkpoint.

    A run says what it plays: :meth:`build_net`, :meth:`rollout` (one batch of training rows),
    :meth:`add_snapshot`, :meth:`evaluate`, :meth:`save` and :meth:`resume`, and ``steps_per_update``.
    """

    RESUME_OVERRIDES: ClassVar[tuple[str, ...]] = ("budget.", "device")
    """The overrides ``--resume`` accepts: the run must continue as it was (on another device, say)."""

    def __init__(self, config: RunConfig, progress: bool = True) -> None:
        self.config, self.progress = config, progress
        self.out_dir = Path(config.out_dir)
        cap_threads(config.threads or None)  # torch: at most the CPUs this process is given
        self.seeds = RunSeeds.of(config)
        self.eval_seed = self.seeds.eval
        self.generator = torch.Generator().manual_seed(self.seeds.learn)
        with torch.random.fork_rng():
            torch.manual_seed(self.seeds.network)
            self.net = self.build_net()
        if config.init.weights is not None:
            self.net.load_state_dict(start_weights(config.init.weights, self.net, grow=config.init.grow))
        # ``net`` acts (rollouts, snapshots, evaluations, checkpoints) on the CPU; ``learner`` is the copy the update
        # trains on ``device`` (the same object on the CPU), copied back into ``net`` after each update.
        self.device = resolve_device(config.device)
        self.learner = self.net if self.device.type == "cpu" else copy.deepcopy(self.net).to(self.device)
        self.optimizer = torch.optim.Adam(self.learner.parameters(), lr=config.ppo.learning_rate, eps=1e-5)
        self.update = self.global_step = 0
        self.elapsed = 0.0
        self.last_eval: dict[str, float] = {}
        self.rewards = TableRewards(config.opponents)

    # ----- what a run plays (its subclass says) ----------------------------------------------------
    steps_per_update: int

    def build_net(self) -> torch.nn.Module:
        raise NotImplementedError

    def rollout(self) -> tuple[dict[str, torch.Tensor], dict[str, float]]:
        """One rollout with the current weights: the training batch and statistics (``self.rewards`` fed)."""
        raise NotImplementedError

    def add_snapshot(self) -> None:
        raise NotImplementedError

    def evaluate(self) -> dict[str, float]:
        raise NotImplementedError

    def save(self, path: str | Path) -> Path:
        raise NotImplementedError

    def checkpoint(self) -> None:
        """Write ``out_dir/checkpoint.pt`` (every ``budget.checkpoint_every`` updates and at the end)."""
        self.save(self.out_dir / "checkpoint.pt")

    def write_config(self) -> None:
        self.config.save(self.out_dir / "config.yaml")

    def close(self) -> None:
        """Release what the run holds outside this process (nothing by default)."""

    # ----- one update: rollout, PPO, snapshot ------------------------------------------------------
    def learn(self, batch: dict[str, torch.Tensor]) -> dict[str, float]:
        """One PPO update on ``batch``, the step size annealed linearly to 0 over the budget (``budget.anneal_steps``,
        by default ``budget.total_steps``)."""
        p, budget = self.config.ppo, self.config.budget
        if p.anneal_lr:
            frac = max(0.0, 1.0 - self.global_step / (budget.anneal_steps or budget.total_steps))
            self.optimizer.param_groups[0]["lr"] = frac * p.learning_rate
        batch = {key: value.to(self.device) for key, value in batch.items()}
        # init.critic_warmup: the critic learns the actor's values first; the actor's weights get no gradient
        warmup = self.update < self.config.init.critic_warmup
        actor = [w for name, w in self.learner.named_parameters() if warmup and not name.startswith(CRITIC_PREFIXES)]
        for weight in actor:
            weight.requires_grad_(False)
        try:
            return ppo_update(self.learner, self.optimizer, batch, p, self.generator)
        finally:
            for weight in actor:
                weight.requires_grad_(True)
            if self.learner is not self.net:
                self.net.load_state_dict(self.learner.state_dict())

    def train_step(self) -> dict[str, float]:
        """One rollout and one update; returns the scalars to log."""
        start = time.perf_counter()
        batch, stats = self.rollout()
        self.global_step += self.steps_per_update
        collected = time.perf_counter()
        stats.update(self.learn(batch))
        self.update += 1
        if self.update % self.config.opponents.snapshot_every == 0:
            self.add_snapshot()
        end = time.perf_counter()
        stats["charts/steps_per_s"] = self.steps_per_update / (end - start)
        stats["charts/rollout_steps_per_s"] = self.steps_per_update / (collected - start)
        stats.update(self.rewards.take_means())
        self.elapsed += end - start
        return stats

    # ----- the loop --------------------------------------------------------------------------------
    def train(self) -> dict[str, float]:
        """Run until the step budget, the time limit or a ``STOP`` file; returns the last evaluation."""
        budget = self.config.budget
        self.out_dir.mkdir(parents=True, exist_ok=True)
        self.write_config()
        started_at = self.update
        with RunLog(self.out_dir, budget, self.global_step, resumed_at=self.update, progress=self.progress) as log:
            while self.budget_spent() is None and not (self.out_dir / STOP_FILE).exists():
                try:
                    stats = self.train_step()
                except KeyboardInterrupt:
                    # A half-done rollout cannot be saved consistently; the last checkpoint stays intact.
                    print(f"\ninterrupted: resume with --resume {self.out_dir / 'checkpoint.pt'}", file=sys.stderr)
                    raise
                if budget.eval_every and self.update % budget.eval_every == 0:
                    t0 = time.perf_counter()
                    self.last_eval = self.evaluate()
                    stats.update(self.last_eval)
                    stats["charts/eval_seconds"] = time.perf_counter() - t0
                    self.elapsed += stats["charts/eval_seconds"]
                log.record(self.progress_record(), stats, self.steps_per_update, self.last_eval)
                if budget.checkpoint_every and self.update % budget.checkpoint_every == 0:
                    self.checkpoint()
            # the learning curve's last point, once: a finished run resumed with nothing to train has it already
            final_missing = not self.last_eval or (self.update % budget.eval_every and self.update > started_at)
            if budget.eval_every and final_missing:
                self.last_eval = self.evaluate()
                log.record_final(self.progress_record(), self.last_eval)
        self.checkpoint()
        export_policy(self.out_dir / "checkpoint.pt", self.out_dir / "policy.pt")
        (self.out_dir / STOP_FILE).unlink(missing_ok=True)  # honoured: a resume in this folder trains again
        if budget.eval_every:
            plot_curve(self.out_dir, budget.eval_opponent)
        return self.last_eval

    def progress_record(self) -> dict[str, float]:
        """Where the run stands: the first fields of every ``metrics.jsonl`` record."""
        return {"update": self.update, "global_step": self.global_step, "elapsed_s": self.elapsed}

    def budget_spent(self) -> str | None:
        """Why the run has nothing left to train (its step or time budget is spent), or ``None``.

        Both budgets count the whole run, every sitting included."""
        budget = self.config.budget
        if self.global_step >= budget.total_steps:
            return f"the run is at step {self.global_step:,} of budget.total_steps={budget.total_steps:,}"
        if budget.time_limit_min is not None and self.elapsed >= budget.time_limit_min * 60.0:
            return (
                f"the run has trained {self.elapsed / 60:.0f} min of budget.time_limit_min={budget.time_limit_min:g}, "
                "which counts the whole run, every resume included"
            )
        return None

    # ----- checkpoints -----------------------------------------------------------------------------
    def state(self) -> dict[str, Any]:
        """What every checkpoint holds: network, optimizer, config, counters, last evaluation, learning generator."""
        return {
            "network": self.net.spec(),
            "model": self.net.state_dict(),
            "optimizer": self.optimizer.state_dict(),
            "config": self.config.to_dict(),
            "rng": {"learn": self.generator.get_state()},
            "progress": self.progress_record(),
            "metrics": dict(self.last_eval),
            "greedy": True,
        }

    @classmethod
    def resume_config(cls, config: dict[str, Any], overrides: list[str] | tuple[str, ...]) -> RunConfig:
        """A checkpoint's config with ``overrides``, which may only be those of ``RESUME_OVERRIDES``."""
        data = copy.deepcopy(config)
        for item in overrides:
            key = item.partition("=")[0].strip()
            if not key.startswith(cls.RESUME_OVERRIDES):
                raise ValueError(
                    f"--resume accepts {', '.join(k + '*' for k in cls.RESUME_OVERRIDES)} overrides only "
                    f"(the run must continue as it was); got {key!r}"
                )
            apply_override(data, item)
        return from_dict(data)

    def restore(self, checkpoint: dict[str, Any]) -> None:
        """Put :meth:`state` back (into a fresh run of the checkpoint's config)."""
        self.net.load_state_dict(checkpoint["model"])
        if self.learner is not self.net:
            self.learner.load_state_dict(checkpoint["model"])
        self.optimizer.load_state_dict(checkpoint["optimizer"])  # its state moves to the learner's device
        self.generator.set_state(checkpoint["rng"]["learn"])
        progress = checkpoint["progress"]
        self.update, self.global_step = int(progress["update"]), int(progress["global_step"])
        self.elapsed = float(progress["elapsed_s"])
        self.last_eval = dict(checkpoint.get("metrics") or {})


MAX_COUNT = 2**62
"""Largest update or step count a resume checkpoint may hold."""


def check_resume_checkpoint(checkpoint: dict[str, Any], path: str | Path) -> None:
    """:class:`CheckpointError` naming the field unless every field a resume reads has its type and range:
    ``config``, ``rules``, ``model``, ``optimizer`` and ``rng`` dicts (``rng.learn`` a torch generator state),
    ``progress`` with ``update`` and ``global_step`` integers ``>= 0`` and ``elapsed_s`` a finite number ``>= 0``,
    ``metrics`` numbers. Called before anything is built or written: a crafted checkpoint leaves the run's folder
    as it was."""
    where = f"checkpoint {path}"
    for key in ("config", "rules", "model", "optimizer", "rng", "progress"):
        if not isinstance(checkpoint.get(key), dict):
            raise CheckpointError(f"{where}: {key} must be a dict, got {short_repr(checkpoint.get(key))}")
    progress = checkpoint["progress"]
    for key in ("update", "global_step"):
        value = progress.get(key)
        if not isinstance(value, int) or isinstance(value, bool) or not 0 <= value <= MAX_COUNT:
            raise CheckpointError(f"{where}: progress.{key} must be an integer >= 0, got {short_repr(value)}")
    elapsed = progress.get("elapsed_s")
    if not isinstance(elapsed, (int, float)) or isinstance(elapsed, bool) or not 0 <= elapsed < math.inf:
        raise CheckpointError(f"{where}: progress.elapsed_s must be a finite number >= 0, got {short_repr(elapsed)}")
    learn = checkpoint["rng"].get("learn")
    expected = torch.Generator().get_state()
    if not isinstance(learn, torch.Tensor) or learn.dtype != expected.dtype or learn.shape != expected.shape:
        raise CheckpointError(f"{where}: rng.learn must be a torch generator state ({expected.numel()} bytes)")
    optimizer = checkpoint["optimizer"]
    if not isinstance(optimizer.get("state"), dict) or not isinstance(optimizer.get("param_groups"), list):
        raise CheckpointError(f"{where}: optimizer must be an optimizer state (state, param_groups)")
    if not all(isinstance(value, torch.Tensor) for value in checkpoint["model"].values()):
        raise CheckpointError(f"{where}: model must map parameter names to tensors")
    metrics = checkpoint.get("metrics") or {}
    if not isinstance(metrics, dict) or not all(
        isinstance(v, (int, float)) and not isinstance(v, bool) for v in metrics.values()
    ):
        raise CheckpointError(f"{where}: metrics must map names to numbers, got {short_repr(metrics)}")


@contextlib.contextmanager
def restoring(run: Run, path: str | Path) -> Iterator[None]:
    """Put a checkpoint's state into ``run``: any failure closes the run and is one :class:`CheckpointError`."""
    try:
        yield
    except (KeyError, IndexError, AttributeError, RuntimeError, ValueError, TypeError) as err:
        run.close()
        detail = " ".join(str(err).split())[:300]
        raise CheckpointError(
            f"checkpoint {path}: training state does not match its config ({type(err).__name__}: {detail})"
        ) from None


def resolve_device(name: str) -> torch.device:
    """The learner's device of ``device``: ``cpu``, ``cuda``, or ``auto`` (``cuda`` where torch sees a GPU, else
    ``cpu``); ``ValueError`` naming ``device`` when ``cuda`` is asked for and absent."""
    if name == "auto":
        name = "cuda" if torch.cuda.is_available() else "cpu"
    if name == "cuda" and not torch.cuda.is_available():
        raise ValueError("device: cuda was asked for but torch sees no CUDA device here; use device=cpu or auto")
    if name not in ("cpu", "cuda"):
        raise ValueError(f"device must be one of cpu, cuda, auto; got {name!r}")
    return torch.device(name)


def start_weights(source: str, net: torch.nn.Module, grow: bool = False) -> dict[str, torch.Tensor]:
    """The weights (actor and critic) of ``source``, a shipped learned agent's name or a checkpoint file, for
    ``net`` (its ``spec()``); with ``grow``, a smaller held network grown into ``net``'s shape (:mod:`.grow`).
    ``ValueError`` naming ``init.weights`` when it holds no weights or another network."""
    path = agents.weights_file(source)
    if path is None:
        raise ValueError(
            f"init.weights: {source!r} has no weights to start from (a baseline, not a learned agent); "
            "name a shipped learned agent or a checkpoint file"
        )
    checkpoint = load_checkpoint(path)
    spec = net.spec()
    held = {**checkpoint["network"], "hidden": list(checkpoint["network"].get("hidden", ()))}
    if held == spec:
        return checkpoint["model"]
    if not grow:
        raise ValueError(
            f"init.weights: {source!r} holds the network {held}; this run builds {spec} "
            "(init.grow: true grows a narrower or shallower one into it)"
        )
    check_growable(held, spec)
    return grow_state(checkpoint["model"], net.state_dict(), held["hidden"], spec)


class Trainer(Run):
    """A run at one table. The games live in ``rollout.shards`` :class:`~.rollout.RolloutShard` s
    (``self.shards``): in this process, or on Ray actors when ``rollout.ray_address`` is set. Call
    :meth:`close` (``president-train`` does) to release the actors.
    """

    RESUME_OVERRIDES = ("budget.", "device", "rollout.ray_", "manches")
    """The budget, where the shards run, and ``manches`` only to name again the match length the checkpoint trained
    on (the rules check refuses any other): a run started before the presets played matches resumes with
    ``--set manches=1``."""

    config: TrainConfig

    def __init__(self, config: TrainConfig, progress: bool = True) -> None:
        self.rules = config.resolve_rules()
        if os.path.isfile(config.budget.eval_opponent):  # a checkpoint that cannot play is refused before training
            agents.make(config.budget.eval_opponent, self.rules)
        super().__init__(config, progress)
        self.steps_per_update = config.ppo.num_envs * config.ppo.num_steps
        self.shards = start_shards(config, self.net)
        self.add_snapshot()

    def build_net(self) -> PolicyNet:
        """The learner's ``PolicyNet``, sized for the table and ``network``."""
        network = self.config.network
        return PolicyNet(observation_size(self.rules), self.rules.num_actions, network.hidden, network.activation)

    def weights(self) -> dict[str, torch.Tensor] | None:
        """What the shards need to act as the learner now (nothing for shards that share its network)."""
        # state_dict() tensors are detached; RayGroup.call serializes them at once, before any update.
        return None if self.shards.local else self.net.state_dict()

    def close(self) -> None:
        """Release the rollout shards (their Ray actors, when they run on Ray)."""
        self.shards.close()

    def rollout(self) -> tuple[dict[str, torch.Tensor], dict[str, float]]:
        """Every shard plays one rollout with the current weights; one training batch and statistics."""
        batch, stats = merge_shards(self.shards.call("run", self.weights()))
        self.rewards.add(*stats.pop("tables"))
        return batch, stats

    def add_snapshot(self) -> None:
        """Add the current weights to every shard's pool of past versions (when ``opponents.snapshots`` > 0)."""
        if self.config.opponents.snapshots > 0:
            self.shards.call("add_snapshot", self.weights())

    def write_config(self) -> None:
        """Write the resolved ``config.yaml`` and the table's ``rules.yaml`` into the run folder."""
        super().write_config()
        self.rules.to_yaml(self.out_dir / "rules.yaml")

    def agent(self, greedy: bool = True) -> TorchPolicyAgent:
        """The current policy behind the agent interface (a frozen copy)."""
        net = copy.deepcopy(self.net).eval()
        return TorchPolicyAgent(self.rules, net, seed=0, greedy=greedy, name="learner")

    def evaluate(self, n_deals: int | None = None) -> dict[str, float]:
        """The greedy learner against ``budget.eval_opponent`` in every other seat, over duplicate deals."""
        return evaluate_learner(self.agent(), self.rules, self.config.budget, self.eval_seed, n_deals)

    def save(self, path: str | Path) -> Path:
        """The full training checkpoint, written atomically: :meth:`Run.state`, the rules, and every shard's games
        in flight, carried decisions, snapshot pool and generators."""
        state = self.state()
        state.update({"rules": self.rules.to_dict(), "trainer": {"shards": self.shards.call("state_dict")}})
        return save_checkpoint(path, state)

    @classmethod
    def resume(cls, path: str | Path, progress: bool = True, overrides: list[str] | tuple[str, ...] = ()) -> Trainer:
        """A trainer restored from a full checkpoint (``overrides`` may extend the budget, not change the run)."""
        checkpoint = load_checkpoint(path)
        if "trainer" not in checkpoint or "optimizer" not in checkpoint:
            raise CheckpointError(
                f"{path}: not a full training checkpoint (no trainer state); exported policies cannot resume"
            )
        if not isinstance(checkpoint["trainer"], dict) or "shards" not in checkpoint["trainer"]:
            raise CheckpointError(
                f"{path}: written by an older trainer (before rollout shards) and cannot resume; "
                "its policy still loads as an agent"
            )
        check_resume_checkpoint(checkpoint, path)
        if not isinstance(checkpoint["trainer"].get("shards"), list):
            raise CheckpointError(f"checkpoint {path}: trainer.shards must be a list of shard states")
        config = cls.resume_config(checkpoint["config"], overrides)
        named, trained = config.resolve_rules().to_dict(), checkpoint["rules"]
        if named != trained:
            fields = [key for key in named if named[key] != trained.get(key)]
            hint = f"; resume with --set manches={trained['manches']}" if fields == ["manches"] else ""
            raise CheckpointError(
                f"{path}: its rules differ from those its config names ({config.rules!r}) in "
                f"{', '.join(fields) or 'their fields'}{hint}"
            )
        shard_states = checkpoint["trainer"]["shards"]
        if len(shard_states) != config.rollout.shards:
            raise CheckpointError(
                f"checkpoint {path}: {len(shard_states)} shard states for rollout.shards={config.rollout.shards}"
            )
        trainer = cls(config, progress=progress)
        with restoring(trainer, path):
            trainer.restore(checkpoint)
            trainer.shards.call_each("load_state_dict", shard_states)
        return trainer
