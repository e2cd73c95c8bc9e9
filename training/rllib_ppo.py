"""Multi-agent PPO from RLlib on the Président PettingZoo env, with action masking.

This is the bridge to Ray RLlib (the ``rllib`` extra) on its current API stack: RLModule,
ConnectorV2 and EnvRunners. It is an alternative to the project's own trainer
(:mod:`president_env.training.ppo_selfplay`), for users who want RLlib's scaling (EnvRunners on a Ray
cluster, several learners), its checkpoints and its tooling (Tune). Nothing else in the package imports
it, so ``import president_env`` never imports Ray.

    import ray
    from president_env.evaluation.tournament import evaluate
    from president_env.training.rllib_ppo import RLlibAgent, ppo_config

    ray.init(num_cpus=2)
    algo = ppo_config("standard", train_batch_size=4000).build_algo()
    for _ in range(20):
        result = algo.train()
    agent = RLlibAgent.from_algorithm(algo, "standard")
    print(evaluate([agent, "heuristic-3"], "standard", n_deals=100).to_markdown())

What lives here:

- :func:`make_env`: the env creator RLlib calls on every EnvRunner: ``president_env.env(rules=...)``
  wrapped in RLlib's :class:`~ray.rllib.env.wrappers.pettingzoo_env.PettingZooEnv`, registered as
  ``"president"`` (:data:`ENV_NAME`) by :func:`register`. ``env_config`` keys: ``rules`` (a preset name,
  a YAML path, a ``Rules`` or a dict of its fields) and ``reward_mode``.
- :class:`MaskedPPOTorchRLModule`: policy and value MLPs over ``obs["observation"]``; the policy's
  logits of illegal actions are set to ``torch.finfo(dtype).min``, so that those actions have
  probability exactly 0 when sampling, in the PPO ratio, the KL term and the entropy.
- :func:`ppo_config`: a ``PPOConfig`` for self-play (every player maps to one shared policy) or one
  policy per seat.
- :class:`RLlibAgent`: a trained module behind the project's agent interface (``act``, ``act_batch``),
  so :func:`president_env.evaluation.tournament.evaluate` scores it against the baselines.

**How the AEC game becomes RLlib episodes.** ``PettingZooEnv`` reports, at each step, the observation
of the one agent to act; rewards accumulate per agent until that agent is observed again (PettingZoo's
``_cumulative_rewards``), and at the end of the game every agent's last observation and reward come in
one step. RLlib keeps one chain of observations per agent, so GAE runs along each seat's own decisions,
as in the project's trainer (``seat_gae``), and ``gamma`` discounts per decision of the same seat.

**Speed.** RLlib steps the AEC env one decision at a time, so sampling costs a forward pass of a
handful of rows per decision: ``num_envs_per_env_runner`` games batch them, and the process that
samples should run torch on one thread (``torch.set_num_threads(1)``; Ray already does so in remote
EnvRunners), else torch's thread pool costs milliseconds per step on a small, busy machine. Expect
hundreds of decisions per second per EnvRunner, against hundreds of thousands for the project's own
trainer on the batched engine.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np
import torch
from ray.rllib.algorithms.algorithm import Algorithm
from ray.rllib.algorithms.ppo import PPOConfig
from ray.rllib.core.columns import Columns
from ray.rllib.core.rl_module.apis.value_function_api import ValueFunctionAPI
from ray.rllib.core.rl_module.multi_rl_module import MultiRLModuleSpec
from ray.rllib.core.rl_module.rl_module import RLModule, RLModuleSpec
from ray.rllib.core.rl_module.torch import TorchRLModule
from ray.rllib.env.wrappers.pettingzoo_env import PettingZooEnv
from ray.rllib.utils import deprecation_warning
from ray.tune.registry import register_env
from torch import nn

import president_env
from president_env.agents.base import Agent, check_batch
from president_env.agents.torch_policy import masked_logits, sample_masked
from president_env.core.presets import RulesSpec, resolve_rules
from president_env.core.rules import Rules


class _RLModuleConfigNotice(logging.Filter):
    """Drops one log line of RLlib's own: "DeprecationWarning: `RLModule(config=[RLModuleConfig object])` has been
    deprecated". ``RLModule.__init__`` (Ray 2.60) builds the deprecated ``RLModuleConfig`` itself for every module,
    RLlib's default PPO module included, however the module is constructed: nothing a user or this adapter passes
    causes it or can avoid it. Every other warning passes."""

    def filter(self, record: logging.LogRecord) -> bool:
        return "RLModule(config=[RLModuleConfig object])" not in record.getMessage()


logging.getLogger(deprecation_warning.__module__).addFilter(_RLModuleConfigNotice())

ENV_NAME = "president"
"""The name :func:`register` gives the env creator (``config.environment(ENV_NAME)``)."""
SHARED_POLICY = "shared"
"""Module id of the one policy every player maps to in self-play."""
DEFAULT_HIDDEN = (256, 256)


# --------------------------------------------------------------------------------------
# The environment
# --------------------------------------------------------------------------------------
def make_env(env_config: dict[str, Any] | None = None) -> PettingZooEnv:
    """The env creator RLlib calls on each EnvRunner: the AEC env of ``env_config["rules"]`` for RLlib.

    ``env_config`` (RLlib's ``EnvContext``, a dict): ``rules`` (default ``"standard"``) and
    ``reward_mode`` (default ``"zero_sum"``, see :func:`president_env.env`).
    """
    env_config = dict(env_config or {})
    rules = resolve_rules(env_config.get("rules", "standard"))
    aec = president_env.env(rules=rules, reward_mode=env_config.get("reward_mode", "zero_sum"))
    wrapped = PettingZooEnv(aec)
    # The wrapper lists the agents from a set (order depends on PYTHONHASHSEED); keep the env's seat order.
    wrapped.possible_agents, wrapped.agents = list(aec.possible_agents), list(aec.possible_agents)
    return wrapped


def register(name: str = ENV_NAME) -> str:
    """Register :func:`make_env` with Ray Tune's registry under ``name`` (idempotent); returns the name."""
    register_env(name, make_env)
    return name


# --------------------------------------------------------------------------------------
# The RLModule
# --------------------------------------------------------------------------------------
def _mlp(in_dim: int, hidden: Sequence[int], out_dim: int, out_gain: float) -> nn.Sequential:
    """ReLU MLP with CleanRL's initialisation (as the project's ``PolicyNet``): orthogonal, zero biases."""
    layers: list[nn.Module] = []
    width = in_dim
    for h in hidden:
        layers += [nn.Linear(width, int(h)), nn.ReLU()]
        width = int(h)
    layers.append(nn.Linear(width, out_dim))
    for layer in layers:
        if isinstance(layer, nn.Linear):
            nn.init.orthogonal_(layer.weight, gain=2**0.5 if layer is not layers[-1] else out_gain)
            nn.init.zeros_(layer.bias)
    return nn.Sequential(*layers)


class MaskedPPOTorchRLModule(TorchRLModule, ValueFunctionAPI):
    """Masked categorical policy and value function for PPO, over ``Dict(observation, action_mask)``.

    ``model_config``: ``hidden`` (widths of both MLPs, default ``(256, 256)``). The policy and the value
    function are separate MLPs that read ``obs["observation"] (B, obs_dim) float32`` only; the mask
    ``obs["action_mask"] (B, A)`` (int8 from the env, nonzero = legal) only masks the logits.

    Every forward pass (exploration, inference, train) masks, so the logits RLlib stores as
    ``ACTION_DIST_INPUTS`` while sampling, and those it recomputes for the loss, put probability exactly
    0 on illegal actions: ``exp(finfo.min - logsumexp)`` underflows to 0, and ``0 * finite`` keeps the
    entropy and the KL finite (with ``-inf``, the KL's ``-inf - -inf`` is ``nan``). An all-zero mask (an
    agent's observation at the end of the game, which RLlib also feeds through the module) gives a
    uniform distribution, never ``nan``; no action is taken there.
    """

    def setup(self) -> None:
        space = self.observation_space
        if not isinstance(space, gym.spaces.Dict) or not {"observation", "action_mask"} <= set(space.spaces):
            raise ValueError(
                f"MaskedPPOTorchRLModule needs a Dict observation space with 'observation' and 'action_mask', "
                f"got {space}"
            )
        obs_dim = int(np.prod(space["observation"].shape))
        num_actions = int(self.action_space.n)
        hidden = tuple(self.model_config.get("hidden", DEFAULT_HIDDEN)) if self.model_config else DEFAULT_HIDDEN
        # A near-uniform first policy and a unit-scale value head, as in the project's PolicyNet.
        self.pi = _mlp(obs_dim, hidden, num_actions, out_gain=0.01)
        self.vf = _mlp(obs_dim, hidden, 1, out_gain=1.0)

    def _forward(self, batch: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
        obs = batch[Columns.OBS]
        logits = self.pi(obs["observation"])
        return {Columns.ACTION_DIST_INPUTS: masked_logits(logits, obs["action_mask"] != 0)}

    def compute_values(self, batch: dict[str, Any], embeddings: Any = None) -> torch.Tensor:
        """``(B,)`` value estimates; GAE (on the learner) and the value loss call this."""
        return self.vf(batch[Columns.OBS]["observation"]).squeeze(-1)


# --------------------------------------------------------------------------------------
# The algorithm config
# --------------------------------------------------------------------------------------
def policy_ids(rules: Rules, shared_policy: bool) -> list[str]:
    """``["shared"]`` for self-play, else one policy per player: ``["player_0", …]``."""
    return [SHARED_POLICY] if shared_policy else [f"player_{i}" for i in range(rules.n_players)]


def _shared_mapping(agent_id: str, episode: Any = None, **kwargs: Any) -> str:
    return SHARED_POLICY


def _seat_mapping(agent_id: str, episode: Any = None, **kwargs: Any) -> str:
    return agent_id


def ppo_config(
    rules: RulesSpec = "standard",
    *,
    shared_policy: bool = True,
    reward_mode: str = "zero_sum",
    hidden: Sequence[int] = DEFAULT_HIDDEN,
    train_batch_size: int = 4000,
    minibatch_size: int = 500,
    num_epochs: int = 4,
    lr: float = 3e-4,
    gamma: float = 1.0,
    lambda_: float = 0.95,
    entropy_coeff: float = 0.01,
    num_env_runners: int = 0,
    num_envs_per_env_runner: int = 8,
    num_learners: int = 0,
    seed: int | None = 0,
) -> PPOConfig:
    """Multi-agent PPO on the Président env, masked, on RLlib's new API stack.

    With ``shared_policy`` (the default) every player maps to the one module ``"shared"``: self-play,
    where every seat's experience trains the same network, so the learner always plays copies of itself.
    Otherwise each player ``player_i`` gets its own module (independent learners, one per seat; each
    sees a quarter of the data and the opponents it faces keep changing).

    Args:
        rules: preset name, YAML path, ``Rules`` or dict of its fields; sent to the EnvRunners as a dict.
        shared_policy: one shared policy (self-play) or one policy per seat.
        reward_mode: the env's ``reward_mode``.
        hidden: widths of the policy and value MLPs.
        train_batch_size: env steps sampled per iteration (per learner); one env step is one decision.
        minibatch_size, num_epochs: SGD minibatches and passes over each batch.
        lr, gamma, lambda_, entropy_coeff: PPO's; ``gamma`` discounts per decision of the same seat.
        num_env_runners: remote EnvRunner actors; 0 samples in the driver's own EnvRunner.
        num_envs_per_env_runner: games each EnvRunner steps (gymnasium vector env).
        num_learners: remote Learner actors; 0 trains in the driver.
        seed: seeds the env resets and the torch weights (``config.debugging(seed=...)``); None: unseeded.
    """
    rules = resolve_rules(rules)
    ids = policy_ids(rules, shared_policy)
    module_spec = RLModuleSpec(module_class=MaskedPPOTorchRLModule, model_config={"hidden": list(hidden)})
    config = (
        PPOConfig()
        .environment(
            register(),
            env_config={"rules": rules.to_dict(), "reward_mode": reward_mode},
        )  # RLlib's env check passes: it steps action_space.sample(), which draws a legal action
        .multi_agent(
            policies=set(ids),
            policy_mapping_fn=_shared_mapping if shared_policy else _seat_mapping,
        )
        .rl_module(rl_module_spec=MultiRLModuleSpec(rl_module_specs={pid: module_spec for pid in ids}))
        .env_runners(num_env_runners=num_env_runners, num_envs_per_env_runner=num_envs_per_env_runner)
        .learners(num_learners=num_learners)
        .training(
            train_batch_size_per_learner=train_batch_size,
            minibatch_size=minibatch_size,
            num_epochs=num_epochs,
            lr=lr,
            gamma=gamma,
            lambda_=lambda_,
            entropy_coeff=entropy_coeff,
            # The project trainer's PPO settings (training/config.py), where RLlib's defaults differ.
            clip_param=0.2,
            vf_loss_coeff=0.5,
            grad_clip=0.5,
        )
    )
    if seed is not None:
        config = config.debugging(seed=seed)
    return config


# --------------------------------------------------------------------------------------
# Evaluation with the project's tooling
# --------------------------------------------------------------------------------------
class RLlibAgent(Agent):
    """A trained :class:`MaskedPPOTorchRLModule` behind the project's agent interface.

    ``act_batch(observations (B, obs_dim) float32, masks (B, A) bool) -> (B,) int64``: greedy (argmax of
    the masked logits) by default, or a draw from them with the agent's seeded generator. Pass it in an
    :func:`~president_env.evaluation.tournament.evaluate` lineup next to baseline names.

    Args:
        module: the RLModule (e.g. ``algo.get_module("shared")``); the agent reads its current weights.
        rules: the rules it plays (sizes the observations it checks).
        greedy: act with the most probable legal action rather than sampling.
        seed: seed of the sampling generator.
        name: the name tournaments report it under.
    """

    def __init__(
        self,
        module: RLModule,
        rules: RulesSpec,
        *,
        greedy: bool = True,
        seed: int | np.random.SeedSequence | None = None,
        name: str = "rllib-ppo",
    ) -> None:
        super().__init__(resolve_rules(rules), seed)
        self.module = module
        self.greedy = bool(greedy)
        self.name = name

    @classmethod
    def from_algorithm(cls, algo: Algorithm, rules: RulesSpec, module_id: str = SHARED_POLICY, **kw: Any) -> RLlibAgent:
        """The agent of ``module_id`` in a built algorithm (its driver-side EnvRunner's copy, synced after
        every ``train()``)."""
        module = algo.get_module(module_id)
        if module is None:
            raise ValueError(f"the algorithm has no module {module_id!r}")
        return cls(module, rules, **kw)

    @classmethod
    def from_checkpoint(
        cls, path: str | os.PathLike, rules: RulesSpec, module_id: str = SHARED_POLICY, **kw: Any
    ) -> RLlibAgent:
        """The agent of an ``algo.save_to_path(path)`` checkpoint (or of one module's own checkpoint folder)."""
        folder = Path(path)
        module_dir = folder / "learner_group" / "learner" / "rl_module" / module_id
        return cls(RLModule.from_checkpoint(module_dir if module_dir.is_dir() else folder), rules, **kw)

    def policy_logits(self, observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
        """``(B, A) float32`` masked logits of the module's inference pass."""
        batch = {Columns.OBS: {"observation": torch.from_numpy(observations), "action_mask": torch.from_numpy(masks)}}
        with torch.no_grad():
            out = self.module.forward_inference(batch)
        return out[Columns.ACTION_DIST_INPUTS].numpy()

    def act_batch(self, observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
        observations, masks = check_batch(self.rules, observations, masks)
        logits = self.policy_logits(np.ascontiguousarray(observations), np.ascontiguousarray(masks))
        if self.greedy:
            # The module already masked, but argmax over -inf is exact even if a masked logit ties.
            return np.where(masks, logits, -np.inf).argmax(axis=1).astype(np.int64)
        return sample_masked(logits.astype(np.float64), masks, self.rng)


__all__ = [
    "ENV_NAME",
    "SHARED_POLICY",
    "MaskedPPOTorchRLModule",
    "RLlibAgent",
    "RulesSpec",
    "make_env",
    "policy_ids",
    "ppo_config",
    "register",
]
