"""A masked categorical policy over a small network, in torch (the learned agents' model).

    net = PolicyNet(obs_dim, num_actions, hidden=(256, 256))
    logits, value = net(obs, mask)           # (B, A) float32 with illegal actions at the dtype's minimum; (B,)
    log_p = torch.log_softmax(logits, -1)    # illegal actions: probability exactly 0 (log_p finite)
    agent = TorchPolicyAgent.from_checkpoint("runs/ppo/last.pt", rules, seed=0)   # an agent (``act``, ``act_batch``)

The network is an MLP trunk shared by a policy head (one logit per action) and a value head (the
acting seat's expected reward). Illegal actions get ``torch.finfo(dtype).min`` rather than
``-inf``: ``exp`` underflows to an exact 0, and ``p * log p`` stays 0 instead of ``nan``, so the
entropy and the log-probabilities of the update are finite and illegal actions carry no gradient.

:class:`TorchPolicyAgent` acts with a network: greedily (argmax of the masked logits) or by
sampling them with its own seeded generator. Checkpoint files are read by :mod:`.checkpoint`;
:func:`build_policy` makes the network a checkpoint describes.

torch is an optional dependency (the ``train`` extra); this module is imported only by the
learned agents and the trainer.
"""

from __future__ import annotations

import copy
import os
import warnings
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch import nn

from president_env.core.observation import layout
from president_env.core.presets import resolve_rules
from president_env.core.rules import Rules
from president_env.core.threads import cap_threads
from president_env.core.user_input import short_repr

from .base import Agent, check_batch, legal_probabilities
from .checkpoint import CheckpointError, check_network_spec, checkpoint_rules, load_checkpoint

ACTIVATIONS = {"relu": nn.ReLU, "tanh": nn.Tanh}


class PolicyNet(nn.Module):
    """MLP trunk, policy and value heads.

    Args:
        obs_dim: length of the observation vector (``layout(rules).size``).
        num_actions: size of the action space (``rules.num_actions``).
        hidden: widths of the trunk's layers.
        activation: ``relu`` or ``tanh``.
    """

    def __init__(
        self, obs_dim: int, num_actions: int, hidden: Sequence[int] = (256, 256), activation: str = "relu"
    ) -> None:
        super().__init__()
        if activation not in ACTIVATIONS:
            raise ValueError(f"activation must be one of {sorted(ACTIVATIONS)}, got {activation!r}")
        check_network_spec({"obs_dim": obs_dim, "num_actions": num_actions, "hidden": hidden})
        self.obs_dim, self.num_actions = int(obs_dim), int(num_actions)
        self.hidden, self.activation = tuple(int(h) for h in hidden), activation
        layers: list[nn.Module] = []
        width = self.obs_dim
        for h in self.hidden:
            layers += [nn.Linear(width, h), ACTIVATIONS[activation]()]
            width = h
        self.trunk = nn.Sequential(*layers)
        self.policy_head = nn.Linear(width, self.num_actions)
        self.value_head = nn.Linear(width, 1)
        # CleanRL's initialisation: orthogonal trunk, a near-uniform first policy, a small value head.
        for layer in self.trunk:
            if isinstance(layer, nn.Linear):
                nn.init.orthogonal_(layer.weight, gain=2**0.5)
                nn.init.zeros_(layer.bias)
        nn.init.orthogonal_(self.policy_head.weight, gain=0.01)
        nn.init.zeros_(self.policy_head.bias)
        nn.init.orthogonal_(self.value_head.weight, gain=1.0)
        nn.init.zeros_(self.value_head.bias)

    def spec(self) -> dict:
        """The constructor arguments, as stored in checkpoints."""
        return {
            "obs_dim": self.obs_dim,
            "num_actions": self.num_actions,
            "hidden": list(self.hidden),
            "activation": self.activation,
        }

    def forward(self, obs: torch.Tensor, mask: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """``obs (B, obs_dim) float32``, ``mask (B, A) bool`` -> masked logits ``(B, A)`` and values ``(B,)``."""
        features = self.trunk(obs)
        return masked_logits(self.policy_head(features), mask), self.value_head(features).squeeze(-1)

    def value(self, obs: torch.Tensor) -> torch.Tensor:
        """``(B,)`` value estimates only."""
        return self.value_head(self.trunk(obs)).squeeze(-1)


def masked_logits(logits: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """Illegal actions' logits set to the dtype's minimum (probability exactly 0 after softmax)."""
    return logits.masked_fill(~mask, torch.finfo(logits.dtype).min)


def masked_entropy(log_p: torch.Tensor) -> torch.Tensor:
    """``(B,)`` entropy from the ``log_softmax`` of masked logits; illegal actions contribute exactly 0
    (their probability underflows to 0 and ``0 * finite`` is 0)."""
    return -(log_p.exp() * log_p).sum(-1)


def build_policy(checkpoint: Mapping[str, Any]) -> PolicyNet:
    """The checkpoint's :class:`PolicyNet` with its weights loaded strictly, in eval mode."""
    spec = checkpoint.get("network")
    if not isinstance(spec, Mapping):
        raise CheckpointError(f"checkpoint network spec must be a dict, got {type(spec).__name__}")
    try:
        net = PolicyNet(**spec)
    except (TypeError, ValueError) as err:
        raise CheckpointError(f"checkpoint network spec {short_repr(dict(spec))} is invalid: {err}") from None
    state = checkpoint.get("model")
    if not isinstance(state, Mapping):
        raise CheckpointError(f"checkpoint model must be a state_dict (a dict of tensors), got {type(state).__name__}")
    try:
        net.load_state_dict(state, strict=True)
    except (RuntimeError, TypeError, ValueError, KeyError) as err:
        detail = " ".join(str(err).split())
        raise CheckpointError(f"checkpoint model does not fit its network spec {dict(spec)!r}: {detail}") from None
    return net.eval()


class TorchPolicyAgent(Agent):
    """An agent acting with a :class:`PolicyNet`: the argmax of the masked logits, or a sample from them.

    Args:
        rules: the rules it plays; they must size the observation and the action space as the network does.
        net: the network (kept in eval mode; the agent never trains it).
        seed: seed of the generator that samples actions when ``greedy`` is False.
        greedy: act with the most probable legal action (default) rather than sampling.
        name: the name tournaments report it under.
    """

    def __init__(
        self,
        rules: Rules,
        net: PolicyNet,
        seed: int | np.random.SeedSequence | None = None,
        greedy: bool = True,
        name: str = "ppo",
    ) -> None:
        super().__init__(rules, seed)
        _check_sizes(net, rules)
        cap_threads()  # acting runs NumPy's BLAS on small matrices: one thread (president_env.core.threads)
        self.net = net.eval()
        self.greedy = bool(greedy)
        self.name = name
        layers = [m for m in net.trunk if isinstance(m, nn.Linear)] + [net.policy_head]
        weights = [(m.weight.detach().cpu().numpy().T.copy(), m.bias.detach().cpu().numpy().copy()) for m in layers]
        self._trunk, self._head, self._activation = weights[:-1], weights[-1], net.activation

    def for_rules(self, rules: Rules, seed: int | np.random.SeedSequence | None = None) -> TorchPolicyAgent:
        """This policy playing ``rules`` (of the same sizes: e.g. another match length) with a generator of its
        own, sharing this agent's weights: a rules variant costs no copy of the network."""
        _check_sizes(self.net, rules)
        agent = copy.copy(self)
        agent.rules = rules
        agent.reset(seed)
        return agent

    def act_batch(self, observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
        """``(B, obs_dim) float32``, ``(B, A) bool`` -> ``(B,) int64`` legal actions."""
        observations, masks = check_batch(self.rules, observations, masks)
        logits = self.policy_logits(observations)
        if self.greedy:
            return np.where(masks, logits, -np.inf).argmax(axis=1).astype(np.int64)
        return sample_masked(logits.astype(np.float64), masks, self.rng)

    def explain(self, observation: dict[str, np.ndarray], info: dict | None = None) -> dict[str, Any]:
        """The decision and the policy's probability of every legal action."""
        return explain_policy(self, observation, info)

    def policy_logits(self, observations: np.ndarray) -> np.ndarray:
        """``(B, A) float32`` unmasked logits, computed in NumPy from a copy of the network's weights.

        Acting runs the network's forward pass in NumPy: one decision costs tens of microseconds,
        where torch's intra-op thread pool costs milliseconds per call on a busy small machine
        (the Gym and AEC envs, and the play CLI, decide one row at a time). The weights are copied
        when the agent is made; the agent does not follow later changes to ``net``.
        """
        x = observations
        for weight, bias in self._trunk:
            x = x @ weight
            x += bias
            if self._activation == "relu":
                np.maximum(x, 0.0, out=x)
            else:
                np.tanh(x, out=x)
        return x @ self._head[0] + self._head[1]

    @classmethod
    def from_checkpoint(
        cls,
        path_or_dict: str | os.PathLike | dict[str, Any],
        rules: Rules | str | None = None,
        seed: int | np.random.SeedSequence | None = None,
        greedy: bool | None = None,
    ) -> TorchPolicyAgent:
        """The agent of a checkpoint file (or an already loaded checkpoint dict).

        Args:
            path_or_dict: a checkpoint path (read with :func:`.checkpoint.load_checkpoint`) or its dict.
            rules: the rules to play (or a preset name); default the rules the checkpoint was trained on.
                Rules of other sizes raise :class:`.checkpoint.CheckpointError`; rules of the same sizes that
                differ otherwise warn (the policy plays a game it was not trained on).
            seed: seed of the sampling generator.
            greedy: default the checkpoint's ``greedy`` entry, else True.
        """
        if isinstance(path_or_dict, dict):
            checkpoint, source, name = path_or_dict, "checkpoint", "ppo"
        else:
            checkpoint = load_checkpoint(path_or_dict)
            source, name = f"checkpoint {os.fspath(path_or_dict)}", Path(path_or_dict).stem
        try:
            trained = checkpoint_rules(checkpoint)
            net = build_policy(checkpoint)
        except CheckpointError as err:
            raise CheckpointError(f"{source}: {err}") from None
        rules = trained if rules is None else resolve_rules(rules)
        differences = rule_differences(trained, rules)
        obs_dim = layout(rules).size
        if net.obs_dim != obs_dim or net.num_actions != rules.num_actions:
            raise CheckpointError(
                f"{source} was trained for observations of size {net.obs_dim} and {net.num_actions} actions "
                f"(its rules: {trained.to_dict()}); the requested rules have observations of size {obs_dim} and "
                f"{rules.num_actions} actions (they differ in {differences})"
            )
        if differences:
            warnings.warn(
                f"{source} was trained under other rules than it will play (they differ in {differences}); "
                "its decisions may be poor",
                stacklevel=2,
            )
        greedy = bool(checkpoint.get("greedy", True)) if greedy is None else bool(greedy)
        return cls(rules, net, seed=seed, greedy=greedy, name=name)


def _check_sizes(net: PolicyNet, rules: Rules) -> None:
    """``ValueError`` unless ``net`` reads the observations and picks among the actions of ``rules``."""
    obs_dim = layout(rules).size
    if net.obs_dim != obs_dim or net.num_actions != rules.num_actions:
        raise ValueError(
            f"the network takes observations of size {net.obs_dim} and has {net.num_actions} actions; "
            f"these rules have observations of size {obs_dim} and {rules.num_actions} actions"
        )


def explain_policy(agent: Any, observation: dict[str, np.ndarray], info: dict | None = None) -> dict[str, Any]:
    """``explain`` of an agent with ``policy_logits(observations) -> (B, A)``: its decision and the policy's
    probability of every legal action."""
    mask = np.asarray(observation["action_mask"]).astype(bool)
    logits = agent.policy_logits(np.asarray(observation["observation"], np.float32)[None])
    probabilities = legal_probabilities(logits, mask[None])[0]
    values = {int(a): float(probabilities[a]) for a in np.flatnonzero(mask)}
    return {"action": agent.act(observation, info), "measure": "probability", "values": values}


def sample_masked(logits: np.ndarray, masks: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """``(B,) int64`` actions drawn from the softmax of ``(B, A)`` logits over the legal actions ``(B, A) bool``.

    Inverse CDF in float64 with one uniform per row from ``rng``: reproducible from the generator's
    seed, and an action of probability 0 (illegal, or underflowed) is never drawn.
    """
    logits = np.where(masks, logits, -np.inf)
    probs = np.exp(logits - logits.max(axis=1, keepdims=True))
    cdf = np.cumsum(probs, axis=1)
    u = rng.random(len(cdf)) * cdf[:, -1]
    above = cdf > u[:, None]
    # u < total in exact arithmetic; if rounding makes u reach it, the last legal action is the draw.
    last_legal = masks.shape[1] - 1 - masks[:, ::-1].argmax(axis=1)
    return np.where(above.any(axis=1), above.argmax(axis=1), last_legal).astype(np.int64)


def rule_differences(trained: Rules, requested: Rules, label: str = "checkpoint") -> str:
    """``"n_players (checkpoint 4, requested 5)"`` for every field that differs (``label`` names the trained
    side) except ``manches``; empty when the policy plays ``requested`` as trained.

    A policy plays a match of any length: the observation's layout does not depend on ``manches``, and a
    manche is played the same whatever the match (docs/environment.md says what a policy trained on single
    manches sees in a match).
    """
    a, b = trained.to_dict(), requested.to_dict()
    return ", ".join(
        f"{key} ({label} {a[key]!r}, requested {b[key]!r})" for key in a if key != "manches" and a[key] != b[key]
    )
