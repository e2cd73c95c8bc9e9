"""One learned agent for every table: a table-independent observation and action set, its network and agent.

    x = encode(rules, observations)                  # (B, OBS_SIZE) float32, the same layout for every rules
    umask = universal_mask(rules, masks)             # (B, NUM_ACTIONS) bool
    actions = to_native(rules, universal_actions)    # (B,) int64 actions of ``rules``
    agent = UniversalAgent(rules, net)               # acts at any table; ``agents.make(path, rules)`` loads one

**The observation.** :func:`encode` reads the core's observation of any ``Rules`` through its named views
(``layout(rules).view``) and lays it out once for all tables, padded to :data:`MAX_PLAYERS` seats in
relative order (0 the viewer, absent seats all 0 with ``seat_exists`` 0) and :data:`MAX_RANKS` ranks
(3 … 2, then the joker; a table without jokers has its joker column 0). Card counts are given as
thermometers (DouZero's card matrix: ``count >= k`` for k = 1..8, which reads the same at one deck and
at two) or scaled to about [0, 1]; the rule fields, the table size, the match length and the manche index
are inputs. Everything is a function of the observation vector alone: the encoding knows no hidden card.
:data:`SEGMENTS` names the blocks in order.

**The actions.** :data:`NUM_ACTIONS` = 1 + 14 × 8 + 14: pass; play ``k`` cards of rank ``r`` at
``1 + 8 r + (k - 1)``; give back one card of rank ``r`` at ``1 + 112 + r`` (the core's layout at its
largest, :mod:`president_env.core.actions`). Each table's actions map into it one to one
(:func:`action_map`), so the legal mask maps too.

**The network** (:class:`UniversalNet`): an actor over the encoding (masked logits) and a separate critic
(CleanRL's ``ppo.py`` shape). With ``critic="perfect"`` the critic also reads every seat's hand
(:func:`hidden_hands`, training only; PerfectDou's perfect-training, imperfect-execution): the actor, the
only part that acts, never sees them.
"""

from __future__ import annotations

import copy
import os
from collections.abc import Mapping, Sequence
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch import nn

from president_env.core.actions import KIND_GIVE, KIND_PASS, KIND_PLAY, action_tables
from president_env.core.engine import GameState, tables
from president_env.core.observation import layout
from president_env.core.presets import resolve_rules
from president_env.core.rules import RULE_CHOICES, Rules
from president_env.core.threads import cap_threads

from .base import Agent, check_batch
from .checkpoint import CheckpointError, checkpoint_rules, load_checkpoint
from .torch_policy import ACTIVATIONS, explain_policy, masked_logits, sample_masked

MAX_PLAYERS, MAX_RANKS, MAX_COUNT, MAX_EXCHANGE = 8, 14, 8, 4
NUM_ACTIONS = 1 + MAX_RANKS * MAX_COUNT + MAX_RANKS
ROLES = 5
_BOOL_FIELDS = ("reseat_by_role", "top_rank_ends_trick", "revolution", "twos_wild")
_RULES_SIZE = 6 + 2 + 1 + len(_BOOL_FIELDS) + sum(len(v) for v in RULE_CHOICES.values()) + MAX_EXCHANGE + 2
P, R, C = MAX_PLAYERS, MAX_RANKS, MAX_COUNT

SEGMENTS: tuple[tuple[str, int, str], ...] = (
    ("rules", _RULES_SIZE, "n_players one-hot 3..8, decks one-hot, jokers/4, the bool fields, each choice one-hot, "
     "exchange entries/4 (0-padded to 4), 1/manches, min(manches, 10)/10"),
    ("seat_exists", P, "relative seat j is at the table"),
    ("hand", R * C, "own cards: count >= k per rank, k = 1..8"),
    ("unseen", R * C, "cards neither in the own hand nor played: count >= k per rank"),
    ("played", P * R, "cards each relative seat played this manche, per rank, / 8"),
    ("held", P, "cards each relative seat holds / 13"),
    ("held_few", P * 5, "one-hot of min(cards held, 4) per present seat"),
    ("trick_rank", R, "one-hot rank to beat (all 0 when leading)"),
    ("trick_count", C, "one-hot cards per play in this trick (all 0 when leading)"),
    ("trick_owner", P, "one-hot relative seat that made the play to beat"),
    ("passed", P, "seats that have passed"),
    ("out", P, "seats that went out"),
    ("out_order", P, "order of going out / (n_players - 1), 0 while playing"),
    ("penalized", P, "seats penalised for going out on a 2 or a joker"),
    ("roles", P * ROLES, "per seat, one-hot role (président … trou du cul)"),
    ("flags", 2, "revolution, constrained"),
    ("to_act", P, "one-hot relative seat to act"),
    ("phase", 2, "one-hot exchange, play"),
    ("gave", R, "cards given in the exchange, per rank / 4"),
    ("received", R, "cards received in the exchange, per rank / 4"),
    ("exchange_partner", P, "one-hot relative seat of the exchange partner"),
    ("gives_left", 1, "cards still to give back / 4"),
    ("scores", P, "match totals / (manches × the most points of a manche)"),
    ("score_gap", P, "each seat's total minus the viewer's, same scale"),
    ("manche", 3, "manche index / manches, manches left / manches, decisive"),
)  # fmt: skip
OBS_SIZE = sum(size for _, size, _ in SEGMENTS)
HIDDEN_SIZE = P * R
"""Width of :func:`hidden_hands`: every relative seat's hand per rank / 8 (the perfect critic's extra input)."""


def coverage_error(rules: Rules) -> str | None:
    """Why the universal layout cannot seat ``rules`` (one line naming the field and its limit), or ``None``.

    The layout is padded to 3 to :data:`MAX_PLAYERS` players, one or two decks (one-hot), at most
    :data:`MAX_COUNT` copies of a rank (jokers included), :data:`MAX_RANKS` ranks, :data:`MAX_EXCHANGE` exchange
    pairs of at most :data:`MAX_EXCHANGE` cards, and the choices of ``RULE_CHOICES``. Every ``Rules`` that
    validates fits today; this names the field should ``Rules`` ever allow more than the layout holds.
    """
    limits = (
        ("n_players", 3 <= rules.n_players <= MAX_PLAYERS, f"3 to {MAX_PLAYERS} players"),
        ("decks", rules.decks in (1, 2), "1 or 2 decks"),
        ("jokers", rules.n_ranks <= MAX_RANKS and max(rules.copies) <= MAX_COUNT, f"at most {MAX_COUNT} jokers"),
        ("exchange", len(rules.exchange) <= MAX_EXCHANGE, f"at most {MAX_EXCHANGE} exchange pairs"),
        ("exchange", all(k <= MAX_EXCHANGE for k in rules.exchange), f"at most {MAX_EXCHANGE} cards a pair"),
        *((name, getattr(rules, name) in choices, ", ".join(choices)) for name, choices in RULE_CHOICES.items()),
    )
    for name, fits, limit in limits:
        if not fits:
            return f"{name} {getattr(rules, name)!r} is outside the universal layout ({limit})"
    return None


# ---------------------------------------------------------------------------------------------
# Actions
# ---------------------------------------------------------------------------------------------
@lru_cache(maxsize=64)
def action_map(rules: Rules) -> tuple[np.ndarray, np.ndarray]:
    """``(to_universal (A,), from_universal (NUM_ACTIONS,))`` int64; ``from_universal`` is -1 where ``rules`` has no
    such action (a count above ``4 * decks``, the joker without jokers)."""
    kind, rank, count = (t.astype(np.int64) for t in action_tables(rules))
    to_u = np.select(
        [kind == KIND_PASS, kind == KIND_PLAY, kind == KIND_GIVE],
        [0, 1 + rank * MAX_COUNT + count - 1, 1 + MAX_RANKS * MAX_COUNT + rank],
    )
    from_u = np.full(NUM_ACTIONS, -1, np.int64)
    from_u[to_u] = np.arange(rules.num_actions)
    for table in (to_u, from_u):
        table.flags.writeable = False
    return to_u, from_u


def universal_mask(rules: Rules, masks: np.ndarray) -> np.ndarray:
    """``(B, NUM_ACTIONS) bool`` from the legal masks ``(B, A)`` of ``rules``."""
    masks = np.asarray(masks, dtype=bool)
    out = np.zeros(masks.shape[:-1] + (NUM_ACTIONS,), bool)
    out[..., action_map(rules)[0]] = masks
    return out


def to_universal(rules: Rules, actions: np.ndarray) -> np.ndarray:
    """``rules``' actions ``(B,)`` as universal actions."""
    return action_map(rules)[0][np.asarray(actions, dtype=np.int64)]


def to_native(rules: Rules, actions: np.ndarray) -> np.ndarray:
    """Universal actions ``(B,)`` as ``rules``' actions; ``ValueError`` for one these rules do not have."""
    native = action_map(rules)[1][np.asarray(actions, dtype=np.int64)]
    if (native < 0).any():
        bad = np.asarray(actions)[native < 0]
        raise ValueError(f"universal action(s) {bad.tolist()[:5]} do not exist under these rules")
    return native


# ---------------------------------------------------------------------------------------------
# The observation
# ---------------------------------------------------------------------------------------------
@lru_cache(maxsize=64)
def rules_features(rules: Rules) -> np.ndarray:
    """``(_RULES_SIZE,) float32``: the table's rule fields and size as inputs."""
    parts = [np.eye(6)[rules.n_players - 3], np.eye(2)[rules.decks - 1], [rules.jokers / 4]]
    parts.append([float(getattr(rules, name)) for name in _BOOL_FIELDS])
    for name, choices in RULE_CHOICES.items():
        parts.append(np.asarray(choices) == getattr(rules, name))
    exchange = np.zeros(MAX_EXCHANGE)
    exchange[: len(rules.exchange)] = np.asarray(rules.exchange) / 4
    parts += [exchange, [1 / rules.manches, min(rules.manches, 10) / 10]]
    out = np.concatenate([np.asarray(p, np.float32).ravel() for p in parts])
    out.flags.writeable = False
    return out


def _pad(x: np.ndarray, axis: int, size: int) -> np.ndarray:
    """``x`` zero-padded at the end of ``axis`` to ``size``."""
    width = [(0, 0)] * x.ndim
    width[axis] = (0, size - x.shape[axis])
    return np.pad(x, width)


def _one_hot(values: np.ndarray, width: int, first: int = 0) -> np.ndarray:
    """``(..., width)``: a 1 at ``value - first``, all 0 where the value is out of range."""
    index = np.asarray(values) - first
    return ((index[..., None] == np.arange(width)) & (index[..., None] >= 0)).astype(np.float32)


def _thermometer(counts: np.ndarray) -> np.ndarray:
    """``(B, R) -> (B, R * C)``: ``count >= k`` for k = 1..C."""
    return (counts[..., None] >= np.arange(1, C + 1)).reshape(len(counts), -1).astype(np.float32)


def encode(rules: Rules, observations: np.ndarray) -> np.ndarray:
    """``(B, OBS_SIZE) float32``: observations ``(B, obs_dim)`` of ``rules`` in the universal layout."""
    v = layout(rules).view(np.asarray(observations, np.float32))
    b, p = v["held"].shape
    exists = np.arange(P) < p
    copies = _pad(np.asarray(rules.copies)[None], 1, R)
    hand, played = _pad(v["hand"], 1, R), _pad(_pad(v["played"], 2, R), 1, P)
    held = _pad(v["held"], 1, P)
    out = v["out_order"] >= 0
    points = max(int(tables(rules).points.max()), 1) * rules.manches
    scores = _pad(v["scores"], 1, P) / points
    blocks = {
        "rules": np.broadcast_to(rules_features(rules), (b, _RULES_SIZE)),
        "seat_exists": np.broadcast_to(exists.astype(np.float32), (b, P)),
        "hand": _thermometer(hand),
        "unseen": _thermometer(copies - hand - played.sum(axis=1)),
        "played": played.reshape(b, -1) / 8,
        "held": held / 13,
        "held_few": (_one_hot(np.minimum(held, 4), 5) * exists[:, None]).reshape(b, -1),
        "trick_rank": _one_hot(v["trick_rank"], R),
        "trick_count": _one_hot(v["trick_count"], C, first=1),
        "trick_owner": _one_hot(v["trick_owner"], P),
        "passed": _pad(v["passed"], 1, P),
        "out": _pad(out, 1, P),
        "out_order": _pad(np.where(out, v["out_order"] / max(p - 1, 1), 0.0), 1, P),
        "penalized": _pad(v["penalized"], 1, P),
        "roles": _pad(_one_hot(v["roles"], ROLES), 1, P).reshape(b, -1),
        "flags": np.stack([v["revolution"], v["constrained"]], axis=1),
        "to_act": _one_hot(v["to_act"], P),
        "phase": _one_hot(v["phase"], 2),
        "gave": _pad(v["gave"], 1, R) / 4,
        "received": _pad(v["received"], 1, R) / 4,
        "exchange_partner": _one_hot(v["exchange_partner"], P),
        "gives_left": v["gives_left"][:, None] / 4,
        "scores": scores,
        "score_gap": (scores - scores[:, :1]) * exists,
        "manche": np.stack(
            [v["manche"] / rules.manches, np.maximum(rules.manches - v["manche"], 0) / rules.manches, v["decisive"]],
            axis=1,
        ),
    }
    return np.concatenate([np.asarray(blocks[name], np.float32) for name, _, _ in SEGMENTS], axis=1)


def segment_slices() -> dict[str, slice]:
    """Where each block of :data:`SEGMENTS` lies in the encoding."""
    slices, offset = {}, 0
    for name, size, _ in SEGMENTS:
        slices[name] = slice(offset, offset + size)
        offset += size
    return slices


def hidden_hands(state: GameState, seat: np.ndarray) -> np.ndarray:
    """``(B, HIDDEN_SIZE) float32``: every seat's hand per rank / 8, in relative order from ``seat (B,)``, padded.

    Hidden information: the perfect critic's input during training, never the actor's."""
    b, p, r = state.hands.shape
    order = (np.asarray(seat)[:, None] + np.arange(p)) % p
    hands = np.take_along_axis(state.hands, order[:, :, None], axis=1).astype(np.float32) / 8
    return _pad(_pad(hands, 2, R), 1, P).reshape(b, -1)


# ---------------------------------------------------------------------------------------------
# The network and the agent
# ---------------------------------------------------------------------------------------------
CRITICS = ("plain", "perfect")


def _mlp(width: int, hidden: Sequence[int], out: int, activation: str, gain: float) -> nn.Sequential:
    """CleanRL's layer initialisation: orthogonal, ``sqrt 2`` inside, ``gain`` on the last layer, zero biases."""
    layers: list[nn.Module] = []
    for h in hidden:
        layers += [nn.Linear(width, h), ACTIVATIONS[activation]()]
        width = h
    layers.append(nn.Linear(width, out))
    linear = [m for m in layers if isinstance(m, nn.Linear)]
    for layer in linear:
        nn.init.orthogonal_(layer.weight, gain=gain if layer is linear[-1] else 2**0.5)
        nn.init.zeros_(layer.bias)
    return nn.Sequential(*layers)


class UniversalNet(nn.Module):
    """Actor (masked logits over :data:`NUM_ACTIONS`) and critic, separate MLPs over the universal encoding.

    ``forward(x, mask)`` takes ``x (B, input_dim)``: the encoding, then (``critic="perfect"``) the
    :func:`hidden_hands`; the actor reads only the first :data:`OBS_SIZE` columns. The interface of
    :class:`~.torch_policy.PolicyNet`, so ``training.ppo`` collects and updates it unchanged.
    """

    def __init__(self, hidden: Sequence[int] = (256, 256), activation: str = "relu", critic: str = "plain") -> None:
        super().__init__()
        if activation not in ACTIVATIONS:
            raise ValueError(f"activation must be one of {sorted(ACTIVATIONS)}, got {activation!r}")
        if critic not in CRITICS:
            raise ValueError(f"critic must be one of {', '.join(CRITICS)}, got {critic!r}")
        if not hidden or any(int(h) < 1 for h in hidden):
            raise ValueError(f"hidden must be a non-empty list of positive widths, got {list(hidden)!r}")
        self.hidden, self.activation, self.critic_kind = tuple(int(h) for h in hidden), activation, critic
        self.input_dim = OBS_SIZE + (HIDDEN_SIZE if critic == "perfect" else 0)
        self.actor = _mlp(OBS_SIZE, self.hidden, NUM_ACTIONS, activation, gain=0.01)
        self.critic = _mlp(self.input_dim, self.hidden, 1, activation, gain=1.0)

    def spec(self) -> dict[str, Any]:
        """The constructor arguments and the layout sizes, as stored in checkpoints."""
        return {
            "kind": "universal",
            "hidden": list(self.hidden),
            "activation": self.activation,
            "critic": self.critic_kind,
            "obs_size": OBS_SIZE,
            "num_actions": NUM_ACTIONS,
        }

    def forward(self, x: torch.Tensor, mask: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """``x (B, input_dim)``, ``mask (B, NUM_ACTIONS) bool`` -> masked logits and values ``(B,)``."""
        return masked_logits(self.actor(x[:, :OBS_SIZE]), mask), self.critic(x).squeeze(-1)


def build_universal(checkpoint: Mapping[str, Any]) -> UniversalNet:
    """The checkpoint's :class:`UniversalNet`, weights loaded strictly, in eval mode."""
    spec = dict(checkpoint.get("network") or {})
    if spec.get("obs_size") != OBS_SIZE or spec.get("num_actions") != NUM_ACTIONS:
        raise CheckpointError(
            f"checkpoint network has a universal layout of {spec.get('obs_size')} inputs and {spec.get('num_actions')} "
            f"actions; this president-env's is {OBS_SIZE} and {NUM_ACTIONS}"
        )
    try:
        net = UniversalNet(spec.get("hidden", ()), spec.get("activation", "relu"), spec.get("critic", "plain"))
        net.load_state_dict(checkpoint["model"], strict=True)
    except (TypeError, ValueError, RuntimeError, KeyError) as err:
        detail = " ".join(str(err).split())
        raise CheckpointError(f"checkpoint model does not fit its network spec {spec!r}: {detail}") from None
    return net.eval()


class UniversalAgent(Agent):
    """Acts at any table with a :class:`UniversalNet`'s actor: the greedy or sampled legal action.

    The actor runs in NumPy on a copy of the weights, as in :class:`~.torch_policy.TorchPolicyAgent`.
    """

    def __init__(
        self, rules: Rules, net: UniversalNet, seed: Any = None, greedy: bool = True, name: str = "universal"
    ) -> None:
        _check_coverage(rules)
        super().__init__(rules, seed)
        cap_threads()  # acting runs NumPy's BLAS on small matrices: one thread (president_env.core.threads)
        self.greedy, self.name = bool(greedy), name
        linear = [m for m in net.actor if isinstance(m, nn.Linear)]
        self._layers = [(m.weight.detach().numpy().T.copy(), m.bias.detach().numpy().copy()) for m in linear]
        self._activation = net.activation

    def for_rules(self, rules: Rules, seed: Any = None) -> UniversalAgent:
        """This agent playing ``rules`` with a generator of its own, sharing its weights: a table costs only its
        small tables (:func:`action_map`, :func:`rules_features`), never a copy of the network."""
        _check_coverage(rules)
        agent = copy.copy(self)
        agent.rules = rules
        agent.reset(seed)
        return agent

    def logits(self, encoded: np.ndarray) -> np.ndarray:
        """``(B, NUM_ACTIONS) float32`` unmasked logits of encoded observations ``(B, OBS_SIZE)``."""
        x = encoded
        for i, (weight, bias) in enumerate(self._layers):
            x = x @ weight + bias
            if i < len(self._layers) - 1:
                x = np.maximum(x, 0.0) if self._activation == "relu" else np.tanh(x)
        return x

    def policy_logits(self, observations: np.ndarray) -> np.ndarray:
        """``(B, A) float32`` unmasked logits of the rules' own actions, from their observations ``(B, obs_dim)``."""
        return self.logits(encode(self.rules, observations))[:, action_map(self.rules)[0]]

    def explain(self, observation: dict[str, np.ndarray], info: dict | None = None) -> dict[str, Any]:
        """The decision and the policy's probability of every legal action."""
        return explain_policy(self, observation, info)

    def act_batch(self, observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
        """``(B, obs_dim) float32``, ``(B, A) bool`` of the agent's rules -> ``(B,) int64`` legal actions."""
        observations, masks = check_batch(self.rules, observations, masks)
        umask = universal_mask(self.rules, masks)
        logits = self.logits(encode(self.rules, observations))
        if self.greedy:
            chosen = np.where(umask, logits, -np.inf).argmax(axis=1)
        else:
            chosen = sample_masked(logits.astype(np.float64), umask, self.rng)
        return to_native(self.rules, chosen)


def _check_coverage(rules: Rules) -> None:
    error = coverage_error(rules)
    if error is not None:
        raise ValueError(f"the universal network cannot play these rules: {error}")


def load_universal(path: str | os.PathLike, rules: Rules | str | None = None, seed: Any = None) -> Any:
    """The :class:`UniversalAgent` of a universal checkpoint, for any ``rules`` (default: the checkpoint's first
    training table); ``None`` when the file is a checkpoint of another network (another loader's)."""
    checkpoint = load_checkpoint(path)
    network = checkpoint.get("network")
    if not isinstance(network, Mapping) or network.get("kind") != "universal":
        return None
    try:
        net = build_universal(checkpoint)
        rules = checkpoint_rules(checkpoint) if rules is None else resolve_rules(rules)
    except CheckpointError as err:
        raise CheckpointError(f"checkpoint {os.fspath(path)}: {err}") from None
    greedy = bool(checkpoint.get("greedy", True))
    return UniversalAgent(rules, net, seed=seed, greedy=greedy, name=Path(path).stem)
