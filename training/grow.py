"""Start a larger network from a smaller one's weights, computing the same function (``init.grow``).

A run whose ``network.hidden`` is wider or deeper than the network held by ``init.weights`` starts from those
weights grown into its own shape, as in Net2Net (Chen, Goodfellow & Shlens, 2016), so the learner starts at the
smaller network's strength with room to learn more:

- **A wider layer** keeps the old units' weights; each new unit keeps the fresh layer's random incoming
  weights, and its outgoing weights start at zero, so nothing downstream sees it yet (its gradient is not zero:
  it learns from the first update).
- **A new layer** after the last old one starts as the identity on the units before it (exact for ReLU, whose
  outputs are never negative), plus fresh random units whose outgoing weights start at zero.

Both networks are MLP chains of ``nn.Linear`` layers (:class:`~president_env.agents.universal.UniversalNet`'s
actor and critic, :class:`~president_env.agents.torch_policy.PolicyNet`'s trunk and its two heads).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import torch


def check_growable(held: Mapping[str, Any], spec: Mapping[str, Any]) -> None:
    """``ValueError`` (naming ``init.grow``) unless a network ``held`` can grow into one of ``spec``: the same
    layout but ``hidden``, every held layer at most as wide as the new one, added layers only with ReLU and each at
    least as wide as the layer before it."""
    other = sorted(k for k in {*held, *spec} - {"hidden"} if held.get(k) != spec.get(k))
    if other:
        raise ValueError(
            f"init.grow: the held network differs in {', '.join(other)} "
            f"({', '.join(f'{k}: {held.get(k)!r} -> {spec.get(k)!r}' for k in other)}); only hidden can grow"
        )
    old, new = list(held["hidden"]), list(spec["hidden"])
    if len(new) < len(old) or any(n < o for o, n in zip(old, new, strict=False)):
        raise ValueError(f"init.grow: hidden {new} cannot hold {old} (each layer as wide or wider, as many or more)")
    if len(new) > len(old):
        if spec.get("activation", "relu") != "relu":
            activation = spec["activation"]
            raise ValueError(f"init.grow: added layers start as identities, which needs relu, not {activation!r}")
        if any(new[i] < new[i - 1] for i in range(len(old), len(new))):
            raise ValueError(f"init.grow: each added layer must be at least as wide as the one before it, got {new}")


def grow_state(
    old: Mapping[str, torch.Tensor],
    fresh: Mapping[str, torch.Tensor],
    old_hidden: Sequence[int],
    spec: Mapping[str, Any],
) -> dict[str, torch.Tensor]:
    """The state dict of a network of ``spec`` (freshly initialised as ``fresh``) that computes what ``old`` (a
    network of ``old_hidden``, otherwise ``spec``) computes; call :func:`check_growable` first."""
    grown = {name: tensor.clone() for name, tensor in fresh.items()}
    for hidden, outputs in _chains(spec, len(old_hidden)):
        _grow_chain(old, grown, hidden, len(old_hidden), outputs)
    return grown


def _chains(spec: Mapping[str, Any], n_old: int) -> list[tuple[list[str], list[tuple[str, str]]]]:
    """Per MLP chain of a network of ``spec``: its hidden ``nn.Linear`` names, then each output layer they feed
    with that layer's name in the held network of ``n_old`` hidden layers (a universal MLP's output index moves
    with its depth)."""
    n = len(spec["hidden"])
    if spec.get("kind") == "universal":
        return [
            ([f"{mlp}.{2 * i}" for i in range(n)], [(f"{mlp}.{2 * n}", f"{mlp}.{2 * n_old}")])
            for mlp in ("actor", "critic")
        ]
    return [([f"trunk.{2 * i}" for i in range(n)], [("policy_head", "policy_head"), ("value_head", "value_head")])]


@torch.no_grad()
def _grow_chain(
    old: Mapping[str, torch.Tensor],
    grown: dict[str, torch.Tensor],
    hidden: list[str],
    n_old: int,
    outputs: list[tuple[str, str]],
) -> None:
    """Fill ``grown``'s layers of one chain in place: the first ``n_old`` (held) layers copied into their corner
    with zeros from new inputs, added layers as identities, the outputs reading only the held units."""
    width = 0  # units of the previous layer that carry the held network's values
    for depth, name in enumerate(hidden):
        weight, bias = grown[f"{name}.weight"], grown[f"{name}.bias"]
        if depth < n_old:
            held_weight = old[f"{name}.weight"]
            rows, cols = held_weight.shape
            weight[:rows] = 0
            weight[:rows, :cols] = held_weight
            bias[:rows] = old[f"{name}.bias"]
            width = rows
        else:  # an added layer: unit i copies unit i before it (all of them: new ones are zeroed downstream)
            before = weight.shape[1]
            weight[:before] = torch.eye(before, dtype=weight.dtype)
            bias[:before] = 0
    for name, held_name in outputs:
        weight = grown[f"{name}.weight"]
        weight.zero_()
        weight[:, :width] = old[f"{held_name}.weight"]
        grown[f"{name}.bias"].copy_(old[f"{held_name}.bias"])
