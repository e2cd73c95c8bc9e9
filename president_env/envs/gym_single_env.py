"""Président as a Gymnasium single-agent environment: one learning seat, the others played by opponents.

    env = president_env.gym_env(rules, opponents="random", seat=None)
    obs, info = env.reset(seed=0)
    action = policy(obs, info["action_mask"])        # or env.action_masks() (bool), for MaskablePPO
    obs, reward, terminated, truncated, info = env.step(action)

Also registered as ``gymnasium.make("president_env/President-v0", rules=..., opponents=...)``. The module is
``president_env.envs.gym_single_env``; ``president_env.gym_env`` is its function :func:`gym_env`. The env stands on
the core's one-game :class:`~president_env.game.single.SingleGame`, beside the AEC env, not on it.

- **Observation**: ``Box(0, high, (obs_dim,), float32)``, the engine's vector from
  the learner's seat (layout: ``president_env.core.observation``); the legal actions
  are ``info["action_mask"]`` (int8) and ``action_masks()`` (bool).
- **Action**: ``Discrete(num_actions)``, as in the AEC env; ``action_space.sample()``
  draws among the legal actions (:class:`LegalActionSpace`). An illegal action
  is replaced by a uniformly random legal one (default ``illegal_action="random"``:
  ``info["illegal_action"]`` is then True and the first replacement warns), so that
  learners that cannot mask, and ``gymnasium.utils.env_checker.check_env`` (which
  steps with actions sampled before a reset), keep running; ``illegal_action="raise"``
  raises ``ValueError`` naming the reason and changes nothing, like the AEC env.
- **Reset options**: those of the AEC env (``deal``, ``roles``, ``dealer``); bad values and unknown keys raise
  ``ValueError`` naming them, and nothing changes. ``reset`` and ``step`` after ``close()`` raise ``RuntimeError``.
- **Episode**: one game (``rules.manches`` manches, plus a decisive one on a tie);
  ``terminated`` at its end, never truncated.
- **Terminal observation**: the table after the game's last play, from the learner's seat (final
  scores, the phase one-hot all 0), as in the vector env :func:`president_env.vector_env`. (The AEC
  env's final observation is the table before that last play: ``docs/environment.md``.)
- **Info**: the AEC env's infos of the learner (``role``, ``seat``, ``manche``, ``decisive``, ``scores``,
  ``finish_position``, and at the end ``winner`` and ``match_position``, the learner's place in the game:
  :class:`president_env.game.single.Standing`), plus ``action_mask`` and ``player``.
- **Render**: ``"ansi"`` / ``"human"``: the table from the learner's seat, its hand with canonical suits (as the
  vector env's; the AEC env follows the real suits); ``"rgb_array"``: the same drawn as a picture, an
  ``(H, W, 3) uint8`` array of one size for every table, which ``gymnasium.wrappers.RecordVideo`` records.
- **Reward**: the learner's manche rewards (``reward_mode``, see the AEC env)
  that fell during the step: its own action and the opponents' until its next
  turn or the end of the game.
- **Seat**: ``seat`` is the learner's player index (``player_<seat>``); ``None``
  draws it at every reset from the env's ``np_random``.
- **Opponents**: a name, a checkpoint path, a callable or an agent object, or a list of
  them (one per other player, in player order). :func:`president_env.core.registry.resolve`
  turns each into an object with ``act(observation_dict, info) -> int``: names and
  checkpoint formats come from the one agent registry (``"random"`` built in; the
  baselines ``heuristic-1`` … ``mc-5`` and the learned agents plug in through its
  entry points, so this module never imports ``president_env.agents``).
"""

from __future__ import annotations

import warnings
from typing import Any

import gymnasium
import numpy as np

from president_env.core import registry
from president_env.core.actions import as_action
from president_env.core.engine import sample_legal
from president_env.core.observation import observe
from president_env.core.presets import RulesSpec, resolve_rules
from president_env.envs.spaces import ILLEGAL_ACTION_MODES, LegalActionSpace, observation_box
from president_env.game.picture import draw_table
from president_env.game.render import TableView, describe_result, describe_table, render_for_mode
from president_env.game.single import SingleGame, Standing, check_reset_options


class PresidentGymEnv(gymnasium.Env):
    """One learning player against opponents; see the module docstring."""

    metadata = {"render_modes": ["ansi", "human", "rgb_array"], "render_fps": 1}

    def __init__(
        self,
        rules: RulesSpec = None,
        opponents: Any = "random",
        seat: int | None = None,
        reward_mode: str = "zero_sum",
        render_mode: str | None = None,
        illegal_action: str = "random",
    ) -> None:
        self.rules = resolve_rules(rules)
        n = self.rules.n_players
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(f"render_mode must be None or one of {', '.join(self.metadata['render_modes'])}")
        if seat is not None and (
            isinstance(seat, bool) or not isinstance(seat, (int, np.integer)) or not 0 <= seat < n
        ):
            raise ValueError(f"seat must be None or a player index in 0..{n - 1}, got {seat!r}")
        if illegal_action not in ILLEGAL_ACTION_MODES:
            raise ValueError(f"illegal_action must be one of {', '.join(ILLEGAL_ACTION_MODES)}, got {illegal_action!r}")
        if isinstance(opponents, (list, tuple)):
            if len(opponents) != n - 1:
                raise ValueError(f"opponents: expected one per other player ({n - 1}), got {len(opponents)}")
            chosen = list(opponents)
        else:
            chosen = [opponents] * (n - 1)
        self.opponents = [registry.resolve(o, self.rules, None) for o in chosen]
        self.seat = None if seat is None else int(seat)
        self.render_mode = render_mode
        self.illegal_action = illegal_action
        self._warned_illegal = False
        self.game = SingleGame(self.rules, reward_mode=reward_mode)
        self.standing = Standing(n)
        self.players = [f"player_{i}" for i in range(n)]
        self.observation_space = observation_box(self.rules)
        self.action_space = LegalActionSpace(self.rules.num_actions, self.action_masks)
        self.obs_dim = self.observation_space.shape[0]
        self.learner = 0 if seat is None else int(seat)
        self._opponent_of: dict[int, Any] = {}
        self._carried_reward = 0.0
        self._started = False
        self._over = False  # the game ended (its last table is game.ended / game.final)
        self._closed = False

    # ---- helpers ------------------------------------------------------------------
    def _info_of(self, player: int) -> dict:
        game = self.game.ended if self._over else self.game
        return self.standing.info(game, player, self.players)

    def _play(self, action: int) -> float:
        """Play ``action`` for the player to act; the learner's reward from it (0 unless a manche ended)."""
        game = self.game
        event = game.step(action)  # raises before any change
        self.standing.record(game, event)
        self._over = event.game_over
        return 0.0 if event.rewards is None else event.rewards[self.learner]

    def _play_opponents(self) -> float:
        """Opponents act until it is the learner's turn or the game ends; the learner's rewards meanwhile."""
        game, reward = self.game, 0.0
        while not self._over and game.current_player != self.learner:
            player = game.current_player
            observed = {"observation": game.observe(game.current), "action_mask": game.legal_mask().astype(np.int8)}
            reward += self._play(self._opponent_of[player].act(observed, self._info_of(player)))
        return reward

    def _observation(self) -> tuple[np.ndarray, dict]:
        learner = self.learner
        if self._over:  # the table after the game's last play (see the docstring)
            final = self.game.final
            obs = observe(self.rules, final, final.seat_of_player[:, learner].astype(np.int64))[0]
        else:
            obs = self.game.observe(self.game.seat_of_player[learner])
        info = self._info_of(learner)
        info["action_mask"] = self.action_masks().astype(np.int8)
        info["player"] = learner
        return obs, info

    def __setstate__(self, state: dict) -> None:
        # The action space comes back without its link to the game: rebind it.
        self.__dict__.update(state)
        self.action_space.bind(self.action_masks)

    def action_masks(self) -> np.ndarray:
        """``(num_actions,) bool``: the learner's legal actions now (all False once the game ended)."""
        if not self._started:
            raise RuntimeError("action_masks() before reset(): call env.reset() first")
        if self._over:
            return np.zeros(self.rules.num_actions, bool)
        return self.game.legal_mask().copy()

    # ---- gymnasium API -----------------------------------------------------------------
    def reset(self, *, seed: int | None = None, options: dict | None = None) -> tuple[np.ndarray, dict]:
        """Deal a new game and play the opponents up to the learner's first decision; ``(observation, info)``,
        ``info["action_mask"]`` included."""
        self._require_open("reset")
        chosen = check_reset_options(self.rules, options)  # bad or unknown options raise before anything changes
        super().reset(seed=seed)
        rng = self.np_random
        self.learner = int(rng.integers(self.rules.n_players)) if self.seat is None else self.seat
        game_seed = int(rng.integers(2**63))
        others = [i for i in range(self.rules.n_players) if i != self.learner]
        self._opponent_of = dict(zip(others, self.opponents))
        for opponent in self.opponents:
            if hasattr(opponent, "reset"):
                opponent.reset(seed=int(rng.integers(2**63)))
        self._started = True
        # A manche may end before the learner's first decision (rarely: with top_rank_ends_trick a player can
        # go out before the others act); its reward is paid with the first step.
        for attempt in range(101):
            if attempt == 100:
                raise RuntimeError("the opponents finished 100 games in a row without the learner acting")
            # An episode must start with a decision: a game the opponents finished alone is dealt again.
            self.game.reset(seed=game_seed if attempt == 0 else int(rng.integers(2**63)), **chosen)
            self.standing.reset()
            self._over = False
            self._carried_reward = self._play_opponents()
            if not self._over:
                break
        obs, info = self._observation()
        if self.render_mode == "human":
            self.render()
        return obs, info

    def step(self, action) -> tuple[np.ndarray, float, bool, bool, dict]:
        """Play the learner's action, then the opponents' until the learner acts again or the game ends; Gymnasium's
        five-tuple."""
        self._require_open("step")
        if not self._started:
            raise RuntimeError("step() before reset(): call env.reset() first")
        if self._over:
            raise RuntimeError("the game is over: call reset() before step()")
        illegal = False
        if self.illegal_action == "random":
            mask = self.action_masks()
            try:
                a = as_action(action, mask.size)
            except ValueError:
                a = -1
            if not 0 <= a < mask.size or not mask[a]:
                if not self._warned_illegal:
                    warnings.warn(
                        f"president gym env: illegal action {action!r} replaced by a random legal one "
                        "(info['illegal_action'] is True); pass illegal_action='raise' to get an error instead",
                        stacklevel=2,
                    )
                    self._warned_illegal = True
                a, illegal = int(sample_legal(mask[None], self.np_random)[0]), True
            action = a
        else:
            action = as_action(action, self.rules.num_actions)
        reward = self._carried_reward + self._play(action)
        self._carried_reward = 0.0
        reward += self._play_opponents()
        obs, info = self._observation()
        if self.illegal_action == "random":
            info["illegal_action"] = illegal
        if self.render_mode == "human":
            self.render()
        return obs, float(reward), self._over, False, info

    def render(self) -> str | np.ndarray | None:
        """The table from the learner's seat: text (``render_mode`` ``"ansi"`` returns it, ``"human"`` prints it) or a
        picture (``"rgb_array"``: an ``(H, W, 3) uint8`` array)."""
        view = self._render_view
        return render_for_mode(
            self.render_mode, lambda: view().text(), "president_env.gym_env()", lambda: draw_table(view())
        )

    def _render_view(self) -> TableView:
        result = self.standing.result
        if self._over and result is not None:
            return describe_result(self.standing.positions, result["scores"], result["winner"], result["manches"])
        return describe_table(self.rules, self.game, 0, self.learner)

    def close(self) -> None:
        """Close the env: ``reset`` and ``step`` then raise ``RuntimeError`` (as the vector env's)."""
        self._closed = True

    def _require_open(self, what: str) -> None:
        if self._closed:
            raise RuntimeError(f"{what}() after close(): the env is closed, make a new one")


def gym_env(
    rules: RulesSpec = None,
    opponents: Any = "random",
    seat: int | None = None,
    reward_mode: str = "zero_sum",
    render_mode: str | None = None,
    **kwargs: Any,
) -> PresidentGymEnv:
    """A :class:`PresidentGymEnv`: ``opponents`` is a name, callable, agent, or a list of them (one per other seat)."""
    return PresidentGymEnv(
        rules=rules, opponents=opponents, seat=seat, reward_mode=reward_mode, render_mode=render_mode, **kwargs
    )


__all__ = ["LegalActionSpace", "PresidentGymEnv", "gym_env"]
