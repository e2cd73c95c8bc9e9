"""president-env: the card game Président as a fast, exact, batched RL environment."""

from importlib.metadata import PackageNotFoundError as _PackageNotFoundError
from importlib.metadata import version as _version

from gymnasium.envs.registration import register as _register
from gymnasium.envs.registration import registry as _registry

from president_env.core.actions import PASS, decode, encode_give, encode_play, num_actions
from president_env.core.presets import load_preset
from president_env.core.rules import Rules
from president_env.core.vec_game import VecGame
from president_env.envs.aec_env import env, raw_env
from president_env.envs.gym_single_env import gym_env
from president_env.envs.gym_vector_env import vector_env

try:
    __version__ = _version("president-env")
except _PackageNotFoundError:  # run from a source tree that was never installed
    __version__ = "0+unknown"

__all__ = [
    "PASS",
    "Rules",
    "VecGame",
    "__version__",
    "decode",
    "encode_give",
    "encode_play",
    "env",
    "gym_env",
    "load_preset",
    "num_actions",
    "raw_env",
    "vector_env",
]

if "president_env/President-v0" not in _registry:
    _register(
        id="president_env/President-v0",
        entry_point="president_env.envs.gym_single_env:PresidentGymEnv",
        vector_entry_point="president_env.envs.gym_vector_env:PresidentVectorEnv",
    )
