"""What the rollout and the opponent pool share, below both (:mod:`.ppo` and :mod:`.opponents` import it, so
neither imports the other at run time): the learner's policy id and the masked sampling of actions."""

from __future__ import annotations

import torch

LEARNER = 0
"""Policy id of the learner in :attr:`.opponents.OpponentPool.owner`."""


def sample(logits: torch.Tensor, generator: torch.Generator) -> torch.Tensor:
    """One action per row from masked logits (Gumbel-max; illegal actions are never drawn)."""
    uniform = torch.rand(logits.shape, generator=generator).clamp_(min=1e-20)
    return (logits - torch.log(-torch.log(uniform))).argmax(-1)
