"""sb3-contrib's ``MaskablePPO`` on ``pe.gym_env`` as is and on the batched adapter ``PresidentSB3VecEnv``: it
learns, every action it takes is legal, the example runs.

Needs the ``sb3`` extra (``pip install -e ".[sb3]"``); skipped without it.
"""

from __future__ import annotations

import importlib.util
import sys
import warnings
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import gymnasium
import numpy as np
import pytest

import president_env as pe

sb3_contrib = pytest.importorskip("sb3_contrib")
torch = pytest.importorskip("torch")
from sb3_contrib import MaskablePPO  # noqa: E402
from sb3_contrib.common.maskable.utils import get_action_masks, is_masking_supported  # noqa: E402
from stable_baselines3.common.env_checker import check_env  # noqa: E402
from stable_baselines3.common.vec_env import VecEnv, VecMonitor  # noqa: E402

from president_env.envs.sb3 import PresidentSB3VecEnv  # noqa: E402

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "sb3_maskable_ppo.py"

# (preset, opponents): the standard game; 8 players with two decks and jokers (127 actions); and a preset whose
# first manche opens with the exchange (initial_roles: draw), so that "give" actions are masked and learned too.
CASES = [("standard", "heuristic-2"), ("big_table", "random"), ("family", "random")]


class MaskChecker(gymnasium.Wrapper):
    """Checks every action against the env's legal mask before passing it on, and records the illegal ones.

    The env under it runs in its default mode, which replaces an illegal action by a random legal one: a
    masking bug would go unnoticed there, so this wrapper is what detects it.
    """

    def __init__(self, env: gymnasium.Env) -> None:
        super().__init__(env)
        self.checked = 0
        self.violations: list[tuple[int, list[int]]] = []

    def step(self, action: Any) -> tuple[Any, float, bool, bool, dict]:
        mask = self.env.unwrapped.action_masks()
        self.checked += 1
        if not mask[int(action)]:
            self.violations.append((int(action), np.flatnonzero(mask).tolist()))
        return self.env.step(action)


@pytest.fixture(autouse=True)
def one_torch_thread() -> Iterator[None]:
    # A tiny MLP on a shared 2-core machine: extra threads only slow it down (see the example).
    previous = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(previous)


def small_model(env: gymnasium.Env, seed: int = 0) -> MaskablePPO:
    return MaskablePPO("MlpPolicy", env, n_steps=64, batch_size=32, n_epochs=2, seed=seed, verbose=0)


def load_example() -> ModuleType:
    spec = importlib.util.spec_from_file_location("sb3_maskable_ppo", EXAMPLE)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def test_env_passes_sb3_check_env_and_supports_masking_without_a_wrapper() -> None:
    env = pe.gym_env(rules="standard", opponents="random")
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # any SB3 complaint about the spaces or the API fails the test
        check_env(env)
    assert is_masking_supported(env)


def test_mask_checker_catches_an_illegal_action_fed_by_hand() -> None:
    env = MaskChecker(pe.gym_env(rules="standard", opponents="random"))
    env.reset(seed=0)
    illegal = int(np.flatnonzero(~env.unwrapped.action_masks())[0])
    with pytest.warns(UserWarning, match="illegal action"):
        _, _, _, _, info = env.step(illegal)
    assert env.violations == [(illegal, env.violations[0][1])] and illegal not in env.violations[0][1]
    assert info["illegal_action"]  # the env replaced it; only the checker says that the learner got it wrong


@pytest.mark.parametrize("preset,opponents", CASES)
def test_learn_never_sends_an_illegal_action(preset: str, opponents: str) -> None:
    env = MaskChecker(pe.gym_env(rules=preset, opponents=opponents))
    model = small_model(env)
    assert is_masking_supported(model.get_env())  # found through our wrapper, SB3's Monitor and DummyVecEnv
    model.learn(total_timesteps=192)
    assert env.checked >= 192
    assert env.violations == []


def test_learn_on_the_registered_gymnasium_id() -> None:
    # gymnasium.make adds its own wrappers (order enforcing, passive checker); SB3 still finds action_masks().
    env = MaskChecker(gymnasium.make("president_env/President-v0", rules=pe.Rules(), opponents="random"))
    small_model(env).learn(total_timesteps=64)
    assert env.checked >= 64 and env.violations == []


@pytest.mark.parametrize("preset,opponents", CASES)
def test_masked_predict_is_always_legal_after_learning(preset: str, opponents: str) -> None:
    # illegal_action="raise": an illegal action would also stop the game with a ValueError.
    env = pe.gym_env(rules=preset, opponents=opponents, illegal_action="raise")
    model = small_model(env)
    model.learn(total_timesteps=128)
    steps = 0
    for episode in range(16):
        deterministic = episode % 2 == 0
        obs, info = env.reset(seed=1000 + episode)
        terminated = False
        while not terminated:
            mask = env.action_masks()
            assert mask.any() and np.array_equal(mask, info["action_mask"].astype(bool))
            action, _ = model.predict(obs, action_masks=mask, deterministic=deterministic)
            assert mask[int(action)], (
                f"{preset}: predicted illegal action {int(action)} ({pe.decode(env.rules, int(action))})"
            )
            obs, _, terminated, _, info = env.step(int(action))
            steps += 1
    assert steps > 100


def test_adapter_is_an_sb3_vecenv_with_masks_as_maskable_ppo_reads_them() -> None:
    env = PresidentSB3VecEnv(6, rules="standard", opponents="heuristic-1", illegal_action="raise")
    assert isinstance(env, VecEnv) and env.num_envs == 6
    assert env.observation_space == env.venv.single_observation_space and env.action_space.n == 66
    env.seed(3)
    obs = env.reset()
    assert obs.shape == (6, env.venv.obs_dim) and obs.dtype == np.float32
    for wrapped in (env, VecMonitor(env)):
        assert is_masking_supported(wrapped)
        masks = get_action_masks(wrapped)
        assert masks.shape == (6, 66) and masks.dtype == bool
        np.testing.assert_array_equal(masks, env.venv.action_masks())
    assert env.env_method("action_masks", indices=[4])[0].shape == (66,)
    assert env.get_attr("num_actions", indices=[0, 1]) == [66, 66]
    again = PresidentSB3VecEnv(6, rules="standard", opponents="heuristic-1")
    again.seed(3)
    np.testing.assert_array_equal(again.reset(), obs)
    finished = 0
    for _ in range(200):
        env.step_async(np.argmax(get_action_masks(env), axis=1))
        obs, rewards, dones, infos = env.step_wait()
        assert rewards.shape == dones.shape == (6,) and len(infos) == 6
        assert get_action_masks(env).any(axis=1).all(), "a finished game is restarted in the same step"
        for i in np.flatnonzero(dones):
            final = infos[i]["terminal_observation"]
            assert final.shape == (env.venv.obs_dim,) and not np.array_equal(final, obs[i])
            assert infos[i]["TimeLimit.truncated"] is False
            finished += 1
        assert all("terminal_observation" not in infos[i] for i in np.flatnonzero(~dones))
    assert finished > 0
    with pytest.raises(ValueError, match="same_step"):
        PresidentSB3VecEnv(venv=pe.vector_env(2))


def test_maskable_ppo_learns_on_the_adapter_with_legal_actions_only() -> None:
    # illegal_action="raise": one illegal action from the learner would stop learn() with a ValueError.
    env = PresidentSB3VecEnv(8, rules="family", opponents="random", illegal_action="raise")
    model = MaskablePPO("MlpPolicy", env, n_steps=16, batch_size=64, n_epochs=2, seed=0, verbose=0)
    model.learn(total_timesteps=256)
    assert model.num_timesteps >= 256


@pytest.mark.parametrize("env_kind", ["vector", "single"])
def test_example_runs_end_to_end(env_kind: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    example = load_example()
    saved = tmp_path / "model.zip"
    argv = ["--timesteps", "128", "--n-steps", "64", "--batch-size", "32", "--eval-episodes", "8"]
    argv += ["--env", env_kind, "--num-envs", "2"]
    assert example.main([*argv, "--duplicate-deals", "2", "--save", str(saved)]) == 0
    out = capsys.readouterr().out
    assert "MaskablePPO (greedy)" in out and "random legal" in out and "difference (paired)" in out
    assert "maskable-ppo" in out  # the adapter took a seat in the duplicate-deal tournament

    # The saved model plays legal moves through the agent adapter, as a Gym env opponent.
    agent = example.MaskablePPOAgent(MaskablePPO.load(saved))
    env = pe.gym_env(rules="standard", opponents=agent, illegal_action="raise")
    obs, info = env.reset(seed=0)
    assert agent.act({"observation": obs, "action_mask": info["action_mask"]}) in np.flatnonzero(info["action_mask"])
    while not env.step(int(np.flatnonzero(env.action_masks())[0]))[2]:
        pass


def test_example_measures_both_envs_in_one_run(capsys: pytest.CaptureFixture[str]) -> None:
    example = load_example()
    argv = ["--speed", "0.2", "--num-envs", "2", "--n-steps", "16", "--batch-size", "32", "--opponents", "random"]
    assert example.main(argv) == 0
    out = capsys.readouterr().out
    assert "MaskablePPO on vector" in out and "MaskablePPO on single" in out and "adapter / single env:" in out


@pytest.mark.parametrize(
    "actions",
    [[2.9, 0, 0, 0], [np.nan, 0, 0, 0], [np.inf, 0, 0, 0], ["1", "0", "0", "0"], [True, False, True, False], [0, 1]],
    ids=["fraction", "nan", "inf", "strings", "bools", "too few"],
)
def test_adapter_refuses_every_non_integer_action(actions) -> None:
    env = PresidentSB3VecEnv(num_envs=4, rules="standard", opponents="random")
    env.seed(3)
    env.reset()
    with pytest.raises(ValueError, match="actions must be"):
        env.step_async(np.array(actions, dtype=object if isinstance(actions[0], str) else None))
    with pytest.raises(ValueError, match="actions must be"):
        env.step_async(actions)
    with pytest.raises(RuntimeError, match="without step_async"):
        env.step_wait()  # nothing was queued
    env.close()


def test_adapter_takes_integers_and_integral_floats_as_sb3_passes_them() -> None:
    """MaskablePPO passes an ``(N,) int64`` array; integral floats, NumPy scalars and 0-d arrays are integers too."""
    env = PresidentSB3VecEnv(num_envs=1, rules="standard", opponents="random")
    for action in (np.array([0], np.int64), np.int32(0), np.array(0), 0, np.array([0.0]), [0.0], np.uint8(0)):
        env.seed(5)
        env.reset()
        legal = int(np.flatnonzero(env.action_masks()[0])[0])
        env.step_async(np.asarray(action) * 0 + legal if not isinstance(action, int) else legal)
        obs, rewards, dones, infos = env.step_wait()
        assert "illegal_action" not in infos[0]
    env.close()
