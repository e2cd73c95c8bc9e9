"""president-env: the card game Président as a fast, exact, batched RL environment."""

from .actions import PASS, decode, encode_give, encode_play, num_actions
from .presets import load_preset
from .rules import Rules

__all__ = ["PASS", "Rules", "decode", "encode_give", "encode_play", "load_preset", "num_actions"]
