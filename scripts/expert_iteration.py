"""Expert iteration: a learned policy fine-tuned towards the choices of the search over it (an experiment, not
part of the installed package).

    python scripts/expert_iteration.py --policy results/matches/ppo-standard-4p/policy.pt --positions 11000 \\
        --workers 2 --seed 1 --out runs/exit

One step of expert iteration (Anthony, Tian & Barber, 2017): the search is the expert, the network the
apprentice. :class:`~president_env.agents.policy_search.PolicySearchAgent` plays better than the policy it
searches over; the network learns its choices, and the search over the new network starts higher.

1. **Positions** (:func:`label_positions`): games of the policy's table, ``batch`` at a time; each seat of
   each slot is played, for the whole run, by the policy (greedy) with probability ``policy_share``, else by
   heuristic-3. Every position with a choice is kept.
2. **Labels**: where the search would search (two or more legal actions and the policy's top probability
   below ``confident``) the position is *labelled* with the search's values of the policy's ``candidates``
   best moves, exactly as the agent computes them when it plays. The other positions are *anchors*.
3. **Fine-tune** (:func:`distill`): cross-entropy to the search's choice on the labelled positions, plus
   ``kl`` × KL(old ‖ new) on the labelled and the anchor positions, so that the network moves where the
   search disagrees with it and stays where the policy was sure. A tenth of the labelled positions is held
   out: the metrics report how often the network agrees with the search there, before and after.

Labelling is what costs (a search per labelled position): ``workers`` processes, worker ``k`` with seed
``seed + k``, each until it has at least ``positions / workers`` labelled positions (whole batches of
decisions, so the set does not depend on the machine's speed). Writes ``OUT/positions-<seed>.npz`` (one per
worker: a rerun with the same arguments reuses them), ``OUT/policy.pt`` (a checkpoint of the same network
shape, which :func:`president_env.agents.make` loads by path) and ``OUT/distill.json`` (the metrics).
"""

from __future__ import annotations

import json
import sys
import time
import zipfile
from concurrent.futures import ProcessPoolExecutor
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch

from president_env import agents
from president_env.agents.checkpoint import checkpoint_rules, load_checkpoint, save_checkpoint
from president_env.agents.policy_search import PolicySearchAgent, PolicySearchConfig, searched_choice
from president_env.agents.torch_policy import TorchPolicyAgent, build_policy
from president_env.core.registry import check_name
from president_env.core.rules import Rules
from president_env.core.user_input import ArgumentParser, check_writable_dir
from president_env.core.vec_game import VecGame

_ARRAYS = ("obs", "mask", "values", "probs", "anchor_obs", "anchor_mask", "anchor_probs")


@dataclass
class Positions:
    """Labelled positions (``obs``, ``mask``, the search's ``values`` (``-inf`` off its candidates), the policy's
    ``probs``) and anchor positions (``anchor_*``: a choice, but the policy was sure). Observations are stored
    as ``uint8`` (every segment is a small count or a flag)."""

    obs: np.ndarray
    mask: np.ndarray
    values: np.ndarray
    probs: np.ndarray
    anchor_obs: np.ndarray
    anchor_mask: np.ndarray
    anchor_probs: np.ndarray

    def save(self, path: Path) -> None:
        np.savez_compressed(path, **asdict(self))

    @classmethod
    def load(cls, path: Path) -> Positions:
        with np.load(path) as data:
            missing = [name for name in _ARRAYS if name not in data.files]
            if missing:
                raise ValueError(f"{path} is not a positions file: it lacks {', '.join(missing)}")
            return cls(**{name: data[name] for name in _ARRAYS})

    @classmethod
    def concatenate(cls, parts: list[Positions]) -> Positions:
        return cls(**{name: np.concatenate([getattr(p, name) for p in parts]) for name in _ARRAYS})

    def __len__(self) -> int:
        return len(self.obs)


def label_positions(
    policy: Any,
    rules: Rules,
    positions: int,
    seed: int,
    batch: int = 128,
    policy_share: float = 0.5,
    search: PolicySearchConfig | None = None,
    heuristic: str = "heuristic-3",
) -> Positions:
    """Play games of ``rules`` until at least ``positions`` positions are labelled (see the module docstring)."""
    game = VecGame(rules, batch_size=batch, seed=seed)
    rng = np.random.default_rng(seed)
    expert = PolicySearchAgent(rules, policy, seed=seed + 1000, config=search)
    config = expert.search
    other = agents.make(heuristic, rules)
    policy_seats = rng.random((batch, rules.n_players)) < policy_share
    slots = np.arange(batch)
    labelled: list[tuple[np.ndarray, ...]] = []
    anchors: list[tuple[np.ndarray, ...]] = []
    count = 0
    while count < positions:
        obs, mask = game.observe(), game.legal_mask()
        probs = expert.probabilities(obs, mask)
        rows, candidates = expert.candidates(probs, mask)
        if rows.size:
            values = expert.action_values(obs[rows], candidates, config.worlds)
            labelled.append((obs[rows], mask[rows], values, probs[rows]))
            count += rows.size
        kept = np.flatnonzero((mask.sum(axis=1) > 1) & (probs.max(axis=1) >= config.confident))
        if kept.size:
            anchors.append((obs[kept], mask[kept], probs[kept]))
        by_policy = policy_seats[slots, game.state.current]
        game.step(np.where(by_policy, probs.argmax(axis=1), other.act_batch(obs, mask)))

    def stacked(parts: list[np.ndarray], shape: tuple[int, ...], dtype: type) -> np.ndarray:
        return np.concatenate(parts).astype(dtype) if parts else np.zeros((0, *shape), dtype)

    obs_dim, n_actions = game.observe().shape[1], rules.num_actions
    return Positions(
        obs=stacked([part[0] for part in labelled], (obs_dim,), np.uint8),
        mask=stacked([part[1] for part in labelled], (n_actions,), bool),
        values=stacked([part[2] for part in labelled], (n_actions,), np.float32),
        probs=stacked([part[3] for part in labelled], (n_actions,), np.float32),
        anchor_obs=stacked([part[0] for part in anchors], (obs_dim,), np.uint8),
        anchor_mask=stacked([part[1] for part in anchors], (n_actions,), bool),
        anchor_probs=stacked([part[2] for part in anchors], (n_actions,), np.float32),
    )


@dataclass(frozen=True)
class DistillConfig:
    """How the network is fine-tuned on the labelled positions."""

    epochs: int = 4  # passes over the labelled positions
    learning_rate: float = 3e-4  # Adam step size
    kl: float = 1.0  # weight of KL(old || new) on the labelled and the anchor positions
    batch_size: int = 512  # labelled positions per step (and as many anchors)
    tie_bonus: float = 0.02  # the search's bonus for the policy's own choice (as PolicySearchConfig)
    holdout: float = 0.1  # share of the labelled positions held out to measure agreement
    max_grad_norm: float = 0.5
    seed: int = 0


def search_choices(data: Positions, tie_bonus: float) -> np.ndarray:
    """``(N,)`` the action the search plays at each labelled position (the best value, with the bonus)."""
    return searched_choice(data.values, data.probs, tie_bonus)


def distill(net: torch.nn.Module, data: Positions, config: DistillConfig = DistillConfig()) -> dict[str, float]:
    """Fine-tune ``net`` (a :class:`~president_env.agents.torch_policy.PolicyNet`) in place; returns the metrics."""
    torch.manual_seed(config.seed)
    rng = np.random.default_rng(config.seed)
    choice = search_choices(data, config.tie_bonus)
    order = rng.permutation(len(data))
    held, train = order[: int(len(data) * config.holdout)], order[int(len(data) * config.holdout) :]
    obs, anchor_obs = data.obs.astype(np.float32), data.anchor_obs.astype(np.float32)
    optimizer = torch.optim.Adam(net.parameters(), lr=config.learning_rate)

    def log_probs(observations: np.ndarray, masks: np.ndarray) -> torch.Tensor:
        logits, _ = net(torch.as_tensor(observations), torch.as_tensor(masks))
        return torch.log_softmax(logits, dim=-1).clamp(min=-1e4)  # illegal actions: finite, weight 0 below

    def kl_from_old(old: np.ndarray, new_log: torch.Tensor) -> torch.Tensor:
        old = torch.as_tensor(old, dtype=torch.float32)
        return (old * (torch.log(old.clamp(min=1e-12)) - new_log)).sum(dim=1).mean()

    @torch.no_grad()
    def agreement(rows: np.ndarray) -> float:
        return float((log_probs(obs[rows], data.mask[rows]).argmax(dim=1).numpy() == choice[rows]).mean())

    metrics = {
        "labelled": len(data),
        "anchors": len(data.anchor_obs),
        "search_differs_from_policy": float((choice != data.probs.argmax(axis=1)).mean()),
        "held_out_agreement_before": agreement(held),
    }
    net.train()
    for epoch in range(config.epochs):
        rng.shuffle(train)
        anchor_order = rng.permutation(len(anchor_obs))
        for start in range(0, len(train), config.batch_size):
            rows = train[start : start + config.batch_size]
            anchor_rows = anchor_order[start % max(len(anchor_obs), 1) :][: config.batch_size]
            log_p = log_probs(obs[rows], data.mask[rows])
            loss = -log_p[torch.arange(rows.size), torch.as_tensor(choice[rows])].mean()
            loss = loss + config.kl * kl_from_old(data.probs[rows], log_p)
            if anchor_rows.size:
                anchor_log_p = log_probs(anchor_obs[anchor_rows], data.anchor_mask[anchor_rows])
                loss = loss + config.kl * kl_from_old(data.anchor_probs[anchor_rows], anchor_log_p)
            optimizer.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(net.parameters(), config.max_grad_norm)
            optimizer.step()
        metrics[f"held_out_agreement_epoch_{epoch}"] = agreement(held)
    net.eval()
    metrics["held_out_agreement_after"] = agreement(held)
    return metrics


@dataclass(frozen=True)
class LabelTask:
    """One worker's share of the labelling (plain data: it crosses process boundaries)."""

    policy: str  # a shipped agent's name or a checkpoint path
    positions: int
    seed: int
    batch: int
    policy_share: float
    search: PolicySearchConfig


def _load_policy(name: str) -> Any:
    """The agent ``name`` (a registered name or a checkpoint path) at its own rules; ``ValueError`` unless it is a
    learned policy (an agent with ``policy_logits``)."""
    if name in agents.names():
        policy = agents.make(name)
    else:
        checkpoint = load_checkpoint(name)
        policy = TorchPolicyAgent.from_checkpoint(checkpoint, checkpoint_rules(checkpoint))
    if not callable(getattr(policy, "policy_logits", None)):
        raise ValueError(f"{name!r} is not a learned policy (an agent with policy_logits)")
    if not isinstance(policy, TorchPolicyAgent):
        raise ValueError(f"{name!r} is not a per-table learned policy: expert iteration fine-tunes a PolicyNet")
    return policy


def _label(task: LabelTask, path: Path) -> Positions:
    """Label ``task``'s positions, or read them back from ``path`` when it holds this very task's."""
    meta = json.dumps(asdict(task), sort_keys=True)
    if path.is_file():
        try:
            with np.load(path) as data:
                if "task" in data.files and str(data["task"]) == meta:
                    return Positions.load(path)
        except (OSError, ValueError, zipfile.BadZipFile):
            pass  # unreadable: labelled again and overwritten
    torch.set_num_threads(1)  # one process per core
    policy = _load_policy(task.policy)
    data = label_positions(policy, policy.rules, task.positions, task.seed, task.batch, task.policy_share, task.search)
    np.savez_compressed(path, task=np.array(meta), **asdict(data))
    return data


def expert_iteration(
    policy: str,
    out: Path,
    positions: int,
    seed: int = 1,
    workers: int = 1,
    batch: int = 128,
    policy_share: float = 0.5,
    search: PolicySearchConfig | None = None,
    distill_config: DistillConfig = DistillConfig(),
) -> dict[str, Any]:
    """Label, fine-tune, and write ``out/policy.pt`` and ``out/distill.json``; returns the metrics."""
    search = search or PolicySearchConfig()
    started = time.perf_counter()
    share = -(-positions // workers)
    tasks = [LabelTask(policy, share, seed + k, batch, policy_share, search) for k in range(workers)]
    paths = [out / f"positions-{task.seed}.npz" for task in tasks]
    if workers == 1:
        parts = [_label(tasks[0], paths[0])]
    else:
        import multiprocessing

        with ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("spawn")) as pool:
            parts = list(pool.map(_label, tasks, paths))
    labelled_s = time.perf_counter() - started
    data = Positions.concatenate(parts)
    checkpoint = load_checkpoint(agents.weights_file(policy) or policy)
    net = build_policy(checkpoint)
    metrics = distill(net, data, distill_config)
    metrics.update(labelling_s=round(labelled_s, 1), total_s=round(time.perf_counter() - started, 1))
    recipe = {
        "policy": policy,
        "positions": positions,
        "seed": seed,
        "workers": workers,
        "batch": batch,
        "policy_share": policy_share,
        "search": asdict(search),
        "distill": asdict(distill_config),
    }
    payload = {
        "rules": checkpoint_rules(checkpoint).to_dict(),
        "network": net.spec(),
        "model": net.state_dict(),
        "config": {"expert_iteration": recipe, "base": checkpoint.get("config", {})},
        "progress": dict(checkpoint.get("progress", {}), distilled_positions=len(data)),
        "metrics": {key: value for key, value in metrics.items() if isinstance(value, (int, float))},
        "greedy": True,
    }
    save_checkpoint(out / "policy.pt", payload)
    (out / "distill.json").write_text(json.dumps({"recipe": recipe, "metrics": metrics}, indent=2) + "\n")
    return metrics


def main(argv: list[str] | None = None) -> int:
    parser = ArgumentParser(prog="python scripts/expert_iteration.py", description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--policy", required=True, help="the learned policy: a one-table checkpoint path (results/matches/*/policy.pt)"
    )
    parser.add_argument("--positions", type=int, required=True, help="labelled positions, all workers together")
    parser.add_argument("--out", required=True, help="output folder")
    parser.add_argument("--seed", type=int, default=1, help="seed of the first worker (worker k: seed + k)")
    parser.add_argument("--workers", type=int, default=1, help="labelling processes")
    parser.add_argument("--batch", type=int, default=128, help="games played at once by each worker")
    parser.add_argument("--policy-share", type=float, default=0.5, help="share of seats the policy plays")
    parser.add_argument("--epochs", type=int, default=DistillConfig.epochs, help="passes over the labelled positions")
    parser.add_argument("--kl", type=float, default=DistillConfig.kl, help="weight of KL(old || new)")
    args = parser.parse_args(argv)
    try:
        check_name(args.policy)
        for flag, value, low in (
            ("--positions", args.positions, 1),
            ("--workers", args.workers, 1),
            ("--batch", args.batch, 1),
            ("--epochs", args.epochs, 0),
            ("--seed", args.seed, 0),
        ):
            if value < low:
                raise ValueError(f"{flag} must be at least {low}, got {value}")
        if not 0.0 <= args.policy_share <= 1.0:
            raise ValueError(f"--policy-share must be a probability in [0, 1], got {args.policy_share}")
        if not 0.0 <= args.kl < float("inf"):
            raise ValueError(f"--kl must be a finite non-negative weight, got {args.kl}")
        _load_policy(args.policy)
        out = Path(check_writable_dir(args.out, "--out"))
    except (ValueError, ImportError) as err:
        parser.error(str(err))
    distill_config = DistillConfig(epochs=args.epochs, kl=args.kl)
    try:
        metrics = expert_iteration(
            args.policy,
            out,
            args.positions,
            args.seed,
            args.workers,
            args.batch,
            args.policy_share,
            distill_config=distill_config,
        )
    except KeyboardInterrupt:
        return 130
    except (ValueError, OSError) as err:
        print(f"expert_iteration: error: {err}", file=sys.stderr)
        return 2
    print(json.dumps(metrics, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
