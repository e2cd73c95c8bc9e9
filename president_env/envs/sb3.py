"""Stable-Baselines3 on the batched env: a ``VecEnv`` over
:class:`~president_env.envs.gym_vector_env.PresidentVectorEnv`.

    from sb3_contrib import MaskablePPO
    from president_env.envs.sb3 import PresidentSB3VecEnv

    env = PresidentSB3VecEnv(num_envs=64, rules="standard", opponents="heuristic-2")
    model = MaskablePPO("MlpPolicy", env, n_steps=128, batch_size=512)
    model.learn(100_000)

Needs the ``sb3`` extra (``stable-baselines3``; ``sb3-contrib`` for ``MaskablePPO``); the rest of the
package never imports this module. The adapter follows SB3's conventions, not Gymnasium's:

- ``reset()`` returns the observations only (``reset_infos`` holds the infos); ``seed(s)`` and
  ``set_options(...)`` apply at the next ``reset()`` (the vector env draws every game from one seed,
  so only the first of SB3's per-env seeds, ``s``, is used; options are the vector env's, one dict for
  every game, checked by ``set_options``: a list of per-env dicts that differ raises ``ValueError``);
  ``reset`` and ``step`` after ``close()`` raise ``RuntimeError``;
- ``step_async(actions)`` takes one integer per game (SB3 passes an ``(N,) int64`` array; integral
  floats are integers too) and refuses anything else with ``ValueError``, never truncating ``2.9`` to 2;
- ``step_wait()`` returns ``obs, rewards, dones, infos`` with ``infos`` a list of ``N`` dicts; a
  finished game is restarted in the same step (the vector env runs in ``autoreset_mode="same_step"``)
  and its last observation is ``infos[i]["terminal_observation"]``; games are never truncated;
- masks the way ``sb3_contrib`` reads them: ``get_action_masks(env)`` calls
  ``env_method("action_masks")``, which returns one ``(A,) bool`` row per game, and
  ``is_masking_supported(env)`` finds the attribute through ``has_attr``;
- ``get_attr``, ``set_attr`` and ``env_method`` reach the one vector env behind every index (a method
  returning an ``(N, ...)`` array is split per game; anything else is repeated per index).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from gymnasium.vector import AutoresetMode
from stable_baselines3.common.vec_env import VecEnv
from stable_baselines3.common.vec_env.base_vec_env import VecEnvIndices, VecEnvObs, VecEnvStepReturn

from president_env.core.user_input import short_repr
from president_env.envs.gym_vector_env import OPTION_KEYS, PresidentVectorEnv


class PresidentSB3VecEnv(VecEnv):
    """SB3's ``VecEnv`` interface over one :class:`PresidentVectorEnv` (see the module docstring).

    Args:
        num_envs: games in the batch; ``rules``, ``opponents``, ``seat``, ``reward_mode`` and ``illegal_action``
            are those of ``president_env.vector_env``.
        venv: an existing vector env to adapt instead (it must use ``autoreset_mode="same_step"``).
    """

    def __init__(
        self,
        num_envs: int = 1,
        rules: Any = None,
        opponents: Any = "random",
        seat: int | None = None,
        reward_mode: str = "zero_sum",
        illegal_action: str = "random",
        venv: PresidentVectorEnv | None = None,
    ) -> None:
        if venv is None:
            venv = PresidentVectorEnv(
                num_envs,
                rules=rules,
                opponents=opponents,
                seat=seat,
                reward_mode=reward_mode,
                illegal_action=illegal_action,
                autoreset_mode="same_step",
            )
        elif venv.autoreset_mode != AutoresetMode.SAME_STEP:
            raise ValueError(f"venv must use autoreset_mode='same_step' (SB3's convention), not {venv.autoreset_mode}")
        self.venv = venv
        self._actions: np.ndarray | None = None
        super().__init__(venv.num_envs, venv.single_observation_space, venv.single_action_space)

    # ---- stepping --------------------------------------------------------------------
    def set_options(self, options: list[dict] | dict | None = None) -> None:
        """Options for the next ``reset()``: the vector env's reset options (``deals``, ``dealers``, ``roles``,
        ``seats``: per-game lists; ``reset_mask``), one dict for every game, since one vector env plays them all.

        SB3's per-env form, a list of ``num_envs`` dicts, is taken when every entry is the same dict; per-env dicts
        that differ cannot be honoured one by one and raise ``ValueError`` (give one dict whose lists hold a value
        per game), as does anything but a dict, a list of dicts or ``None``, or an unknown key.
        """
        usage = "options must be None, a dict of the vector env's reset options, or a list of num_envs equal dicts"
        if isinstance(options, (list, tuple)):
            if len(options) != self.num_envs or not all(isinstance(entry, dict) for entry in options):
                raise ValueError(f"{usage}; got a list of {len(options)}: {short_repr(options)}")
            if any(not _same_options(entry, options[0]) for entry in options[1:]):
                raise ValueError(
                    "per-env options that differ cannot be honoured one env at a time: give one dict whose "
                    "per-game lists (deals, dealers, roles, seats) hold a value for each game"
                )
            options = options[0]
        if options is not None and not isinstance(options, dict):
            raise ValueError(f"{usage}; got {short_repr(options)}")
        unknown = sorted(short_repr(key, 40) for key in options or {} if key not in OPTION_KEYS)
        if unknown:
            raise ValueError(f"unknown option(s) {', '.join(unknown)}; known: {', '.join(OPTION_KEYS)}")
        super().set_options(options)

    def reset(self) -> VecEnvObs:
        seed = self._seeds[0]
        options = self._options[0] or None
        obs, _ = self.venv.reset(seed=seed, options=options)
        self.reset_infos = [{} for _ in range(self.num_envs)]
        self._reset_seeds()
        self._reset_options()
        return obs

    def step_async(self, actions: np.ndarray) -> None:
        """Queue one action per game: integers (SB3 passes an ``(N,) int64`` array), or floats that are integers.

        ``ValueError`` (nothing queued) for anything else: fractions, NaN, infinities, booleans, strings, a
        wrong count.
        """
        self._actions = None
        self._actions = self._as_actions(actions)

    def _as_actions(self, actions: Any) -> np.ndarray:
        expected = f"actions must be {self.num_envs} integer action index(es)"
        try:
            array = np.asarray(actions)
        except (TypeError, ValueError):
            raise ValueError(f"{expected}, got {short_repr(actions)}") from None
        if array.size != self.num_envs:
            raise ValueError(f"{expected}, got {array.size} value(s): {short_repr(actions)}")
        array = array.reshape(self.num_envs)
        if array.dtype.kind in "iu":
            return array.astype(np.int64, copy=False)
        if array.dtype.kind == "f" and np.isfinite(array).all() and (array == np.round(array)).all():
            if (np.abs(array) < 2**53).all():
                return array.astype(np.int64)
        raise ValueError(f"{expected} (integral floats accepted), got {short_repr(actions)} of dtype {array.dtype}")

    def step_wait(self) -> VecEnvStepReturn:
        if self._actions is None:
            raise RuntimeError("step_wait() without step_async(actions)")
        actions, self._actions = self._actions, None
        obs, rewards, terminated, truncated, info = self.venv.step(actions)
        dones = terminated | truncated
        infos: list[dict[str, Any]] = [{} for _ in range(self.num_envs)]
        for i in np.flatnonzero(dones):
            infos[i]["terminal_observation"] = info["final_obs"][i]
            infos[i]["TimeLimit.truncated"] = bool(truncated[i] and not terminated[i])
        if "illegal_action" in info:
            for i in np.flatnonzero(info["illegal_action"]):
                infos[i]["illegal_action"] = True
        return obs, rewards, dones, infos

    def close(self) -> None:
        self.venv.close()

    # ---- masks and attributes -----------------------------------------------------------
    def action_masks(self) -> np.ndarray:
        """``(N, num_actions) bool``: the learners' legal actions."""
        return self.venv.action_masks()

    def _indices(self, indices: VecEnvIndices) -> list[int]:
        if indices is None:
            return list(range(self.num_envs))
        if isinstance(indices, (int, np.integer)):
            return [int(indices)]
        return [int(i) for i in indices]

    def get_attr(self, attr_name: str, indices: VecEnvIndices = None) -> list[Any]:
        value = getattr(self.venv, attr_name)
        return [value for _ in self._indices(indices)]

    def set_attr(self, attr_name: str, value: Any, indices: VecEnvIndices = None) -> None:
        setattr(self.venv, attr_name, value)

    def env_method(self, method_name: str, *method_args, indices: VecEnvIndices = None, **method_kwargs) -> list[Any]:
        result = getattr(self.venv, method_name)(*method_args, **method_kwargs)
        rows = self._indices(indices)
        if isinstance(result, np.ndarray) and result.ndim >= 1 and result.shape[0] == self.num_envs:
            return [result[i] for i in rows]
        return [result for _ in rows]

    def env_is_wrapped(self, wrapper_class: type, indices: VecEnvIndices = None) -> list[bool]:
        return [False for _ in self._indices(indices)]

    def get_images(self) -> Sequence[np.ndarray | None]:
        return [None for _ in range(self.num_envs)]


def _same_options(a: dict, b: dict) -> bool:
    """Whether two option dicts are equal (their values may be NumPy arrays)."""
    if a.keys() != b.keys():
        return False
    try:
        return all(np.array_equal(np.asarray(a[key], dtype=object), np.asarray(b[key], dtype=object)) for key in a)
    except ValueError:  # ragged values NumPy cannot hold in one array
        return all(repr(a[key]) == repr(b[key]) for key in a)


__all__ = ["PresidentSB3VecEnv"]
