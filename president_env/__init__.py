"""president-env: the card game Président as a fast, exact, batched RL environment."""

from gymnasium.envs.registration import register as _register
from gymnasium.envs.registration import registry as _registry

from .actions import PASS, decode, encode_give, encode_play, num_actions
from .aec_env import env, raw_env
from .gym_env import gym_env
from .presets import load_preset
from .rules import Rules
from .vector_env import VecGame

__all__ = [
    "PASS",
    "Rules",
    "VecGame",
    "decode",
    "encode_give",
    "encode_play",
    "env",
    "gym_env",
    "load_preset",
    "num_actions",
    "raw_env",
]

if "president_env/President-v0" not in _registry:
    _register(id="president_env/President-v0", entry_point="president_env.gym_env:PresidentGymEnv")
