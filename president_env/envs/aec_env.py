# noqa: D212, D415
"""
# Président (PettingZoo AEC)

| Creation           | `president_env.env(rules=Rules(...))`                          |
|--------------------|-----------------------------------------------------------------|
| Actions            | Discrete, masked                                                |
| Parallel API       | No                                                              |
| Agents             | `player_0` … `player_{n-1}` (`rules.n_players`, 3 to 8)         |
| Action shape       | `(1,)`, values `0 … num_actions(rules) - 1` (66 for the standard game) |
| Observation        | `Dict(observation=Box(0, high, (obs_dim,), float32), action_mask=Box(0, 1, (A,), int8))` |

Président (President, Trou du cul) is a climbing card game for 3 to 8 players:
lead any number of cards of one rank, follow with as many cards of a strictly
higher rank or pass, and get rid of your cards first. The finishing order of a
*manche* gives the roles of the next one (Président, Vice-Président, Neutre,
Vice-Trou, Trou du cul) and a forced card exchange. Every rule variant of
`docs/RULES.md` is a field of `president_env.Rules`; `docs/semantics.md`
says how open points are read.

This environment runs one game on `president_env.game.single.SingleGame`, the
one-game holder (`env.unwrapped.game`) over the one-slot fast path of the
batched engine: the same rules, masks, observations (bit for bit) and rewards
as `VecGame(rules, batch_size=1)`, and for a given seed the same games. The
holder also follows the cards with their suits (`game.cards`), says what each
step did (`env.unwrapped.last_event`, an `Event` with `.text()`) and records
the game (`president_env.game.replay.Replay.of(game)`; once the game ended,
`game.ended`), with or without a render mode; `president-play` reads them.

### Arguments

- `rules`: a `president_env.Rules` (default: the standard 4-player game), a
  preset name (`"quebec"`, `"party"`, …), the path of a rules YAML file, a
  mapping of `Rules` fields or YAML text (`president_env.core.presets.resolve_rules`).
- `reward_mode`: `"zero_sum"` (default): a manche's points minus the table's
  mean, so each manche's rewards sum to 0; `"normalized"`: the same scaled
  into [-1, 1] (divided by its largest magnitude); `"points"`: the raw points
  (`scoring: per_opponent_behind`: one per player who went out after you;
  `president_vice`: Président 2, Vice-Président 1).
- `render_mode`: `None`, `"ansi"` (`render()` returns the text), `"human"`
  (prints it, also after every step) or `"rgb_array"` (`render()` returns the
  table drawn as a picture, a `(540, 960, 3) uint8` array for every table).
- `info_schema`: `"rich"` (default) or `"numeric"` (fixed keys, numbers only);
  see Infos.

### Observation space

`observation` is the engine's flat vector from the observing agent's seat;
seats appear in relative order (0 = the observer). Its segments come from
the observation spec `president_env.core.observation.layout(rules)`: `.table()` is
the index table (docs/environment.md shows it for the standard rules) and
`.view(obs)["hand"]` decodes a segment. Nothing in it
depends on another player's hidden cards. Values are counts, one-hots and
scores, between 0 and the spec's `high` (`layout(rules).high`: the most
cards in the deck, or `manches` × the most points of a manche if larger).

`action_mask` (int8) marks the legal actions of the agent to act; it is all
zeros for every other agent and after the game ended. ``action_space(agent).sample()``
without a mask draws among those legal actions (:class:`LegalActionSpace`).

### Action space

`Discrete(num_actions)`: `0` = pass; `1 + r*C + (k-1)` = play k cards of
rank r (`3 4 5 6 7 8 9 10 J Q K A 2 JK` = 0..13); `1 + R*C + r` = exchange
phase, give back one card of rank r. Use `president_env.encode_play`,
`encode_give`, `decode`. **An illegal action raises `ValueError`** naming the
player and the reason, and changes nothing (no penalty, no termination; wrap
the env if you want one). An action outside the space fails the
`AssertOutOfBoundsWrapper` of `env()`.

### Turn order

`agent_selection` is the engine's player to act: players who are out of the
manche are never selected; in the exchange phase the Président, then the
Vice-Président, give back their cards one decision at a time (the Trou du cul's
best cards are taken automatically).

### Rewards

At the end of every manche (the decisive one included) every agent's
`rewards` holds that manche's reward (see `reward_mode`); at other steps all
rewards are 0. `last()` returns the reward accumulated since the agent last
acted (standard `_cumulative_rewards`).

### Episode end

A game is `rules.manches` manches, plus one decisive manche when the highest
total is tied. After its last play every agent is terminated (never
truncated); agents then leave by stepping `None`. The final observation is the
table as it stood before that last play (the engine deals the next game in the
same call; the Gymnasium envs' terminal observation is the table after it); the
result is in `infos`. `manche_over` is True right after a step
that ended a manche (the engine's event), else False.

### Reset options

`reset(seed=None, options=None)`: the same seed gives the same deal and the
same game. `options` may hold:
- `"deal"`: one list of card strings per agent (`["3C", "10H", "JK", ...]`),
  together exactly the deck; validated;
- `"roles"`: `{"player_0": "president", ...}` (`president`, `vice_president`,
  `neutre`, `vice_trou`, `trou_du_cul`): the first manche starts from these
  roles, with its exchange (Neutres ordered by player index); or the finishing
  positions by player they come from (`[3, 0, 5, 2, 1, 4]`, 0 = Président),
  which also order the Neutres: who gives to whom in an exchange of 3 or 4
  pairs, and the seats with `reseat_by_role`;
- `"dealer"`: the seat of the first dealer, for a first manche without roles
  (a manche with roles, drawn or supplied, is dealt by its Trou du cul: a
  dealer given with roles raises `ValueError`).
Invalid options raise `ValueError` and leave the environment as it was. Unknown
keys only warn, where the Gymnasium envs refuse them: PettingZoo's `api_test`
resets with `options={"options": 1}` and expects it to pass.

### Infos

`infos[agent]` (default `info_schema="rich"`): `role` (role name in the current
manche, or `None`), `seat`, `manche` (0-based index), `decisive`, `scores` (game
totals by agent), `finish_position` (0 = out first) with `finish_manche` (the
manche it belongs to) once known, and at the end of the game `winner` (agent
name) and `match_position`, the agent's place in the game (0 = the winner, then
by final total; equal totals share a place): the game's result, where `role` and
`finish_position` are those of its last manche. A place appears as soon as it is
final and is never revised: on going out (every going out under `finish_on_two:
allowed`; under `penalty` one without a 2 or a joker in its last play),
otherwise when the manche ends (the last holder; under `penalty` a player who
went out on a 2 or a joker, whose place depends on how many finish normally and
on later offenders). Until then it still holds the agent's place in the previous
manche.

`info_schema="numeric"` gives the same facts as numbers under the same keys at
every step, as TorchRL's `PettingZooWrapper` needs: `role` (code 0..4 in
`deals.ROLE_NAMES` order, -1 none), `seat`, `manche`, `decisive` (0/1),
`scores` (`(n,) int64` by player), `finish_position`, `finish_manche`,
`winner` (player index) and `match_position`, each -1 until known.

`scores` is keyed by agent name in the rich infos (PettingZoo's infos are per
agent, so a name says whose total it is) and an array by player index in the
numeric ones and in the Gymnasium vector env (`info["scores"] (N, P)`), where
fixed-shape numbers batch.

### Copies

`copy.deepcopy(env)` and `pickle` copy the game in progress: the copy continues
the same game (same observations, masks, rewards, and the same random draws).

### Stepping at the wrong time

`step` before `reset` raises `RuntimeError`. After the game ends each agent
steps `None` once to leave (PettingZoo's dead step); another action for a
terminated agent raises `ValueError`, and any `step` after every agent left
raises `RuntimeError` (`env()`'s order wrapper too, where PettingZoo's only
warns). Actions are ints, NumPy integers of any dtype or integer arrays of
shape `(1,)`; booleans, floats and strings raise `ValueError`.
"""

from __future__ import annotations

import functools
import inspect

import numpy as np
from gymnasium import spaces
from gymnasium.utils import EzPickle
from pettingzoo import AECEnv
from pettingzoo.utils import wrappers
from pettingzoo.utils.env_logger import EnvLogger

from president_env.core.actions import as_action
from president_env.core.presets import RulesSpec, resolve_rules
from president_env.envs.spaces import LegalActionSpace, observation_box
from president_env.game.picture import draw_table
from president_env.game.render import TableView, describe_result, describe_table, pretty_cards, render_for_mode
from president_env.game.single import INFO_SCHEMAS, Event, SingleGame, Standing, check_reset_options

_AFTER_RESET = frozenset({"rewards", "terminations", "truncations", "infos", "agent_selection", "num_agents", "agents"})


class OrderEnforcingWrapper(wrappers.OrderEnforcingWrapper):
    """PettingZoo's call-order checks, with two changes.

    - A ``step`` after every agent left raises ``RuntimeError`` (PettingZoo's wrapper logs a warning and
      ignores the call: a silent no-op hides a missing ``reset()``).
    - Attribute reads (``agents``, ``terminations``, ...) and ``last()`` go to the raw env in one hop instead
      of through every wrapper's ``__getattr__``; the wrappers below define no attributes of their own, so the
      values are the same, only cheaper (PettingZoo's loop reads six of them per step). ``step`` does what
      PettingZoo's does and calls the next wrapper directly (not through the base wrapper's ``step``).
    """

    def __init__(self, env: AECEnv) -> None:
        super().__init__(env)
        self._raw = env.unwrapped

    def __getattr__(self, name: str):
        if name.startswith("_") and name != "_cumulative_rewards":
            raise AttributeError(f"accessing private attribute '{name}' is prohibited")
        if name in _AFTER_RESET and not self._has_reset:
            raise AttributeError(f"{name} cannot be accessed before reset")
        return getattr(self._raw, name)

    def last(self, observe: bool = True) -> tuple:
        if observe and not self._has_reset:
            EnvLogger.error_observe_before_reset()
        return self._raw.last(observe)

    def step(self, action) -> None:
        if not self._has_reset:
            EnvLogger.error_step_before_reset()
        if not self._raw.agents:
            raise RuntimeError("step() after the game ended and every agent left: call reset() to play again")
        self._has_updated = True  # what PettingZoo's step does here, without its hops through the base wrapper
        self.env.step(action)


def env(**kwargs) -> AECEnv:
    """The Président AEC env with PettingZoo's standard wrappers (out-of-bounds assert, call order).

    The keyword arguments are :class:`raw_env`'s (its docstring says what each does).
    """
    aec = raw_env(**kwargs)
    aec = wrappers.AssertOutOfBoundsWrapper(aec)
    return OrderEnforcingWrapper(aec)


class raw_env(AECEnv, EzPickle):
    """Président as a PettingZoo AEC environment; see the module docstring."""

    metadata = {
        "name": "president_v0",
        "render_modes": ["ansi", "human", "rgb_array"],
        "is_parallelizable": False,
        "render_fps": 1,
    }

    def __init__(
        self,
        rules: RulesSpec = None,
        reward_mode: str = "zero_sum",
        render_mode: str | None = None,
        info_schema: str = "rich",
    ):
        EzPickle.__init__(self, rules=rules, reward_mode=reward_mode, render_mode=render_mode, info_schema=info_schema)
        super().__init__()
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(f"render_mode must be None or one of {', '.join(self.metadata['render_modes'])}")
        if info_schema not in INFO_SCHEMAS:
            raise ValueError(f"info_schema must be one of {', '.join(INFO_SCHEMAS)}, got {info_schema!r}")
        self.info_schema = info_schema
        self.rules = resolve_rules(rules)
        self.render_mode = render_mode
        self.reward_mode = reward_mode
        self.game = SingleGame(self.rules, reward_mode=reward_mode)
        self.standing = Standing(self.rules.n_players)
        n = self.rules.n_players
        self.possible_agents = [f"player_{i}" for i in range(n)]
        self.agent_name_mapping = {a: i for i, a in enumerate(self.possible_agents)}
        num_actions = self.rules.num_actions
        self.observation_spaces = {
            agent: spaces.Dict(
                {
                    "observation": observation_box(self.rules),
                    "action_mask": spaces.Box(0, 1, (num_actions,), np.int8),
                }
            )
            for agent in self.possible_agents
        }
        # sample() draws a legal action for the agent to act: RLlib's env checker steps such samples.
        self.action_spaces = {
            agent: LegalActionSpace(num_actions, functools.partial(self._sampling_mask, agent))
            for agent in self.possible_agents
        }

    # ---- copies ---------------------------------------------------------------
    def __getstate__(self) -> dict:
        # EzPickle would rebuild a new, un-reset env from the constructor's arguments; a copy (pickle or
        # deepcopy) must instead continue the same game, so the whole state travels.
        return self.__dict__.copy()

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state)
        for agent, space in self.action_spaces.items():  # their link to the game is dropped when pickled
            space.bind(functools.partial(self._sampling_mask, agent))

    # ---- spaces ---------------------------------------------------------------
    def observation_space(self, agent: str) -> spaces.Space:
        """The agent's observation space: a ``Dict`` of ``observation`` and ``action_mask``."""
        return self.observation_spaces[agent]

    def action_space(self, agent: str) -> spaces.Space:
        """The agent's action space: ``Discrete(num_actions)``, sampling only legal actions."""
        return self.action_spaces[agent]

    # ---- reset ----------------------------------------------------------------
    def check_options(self, options: dict | None) -> dict[str, list]:
        """Validate reset ``options`` without touching the env (:func:`~president_env.game.single.check_reset_options`;
        unknown keys warn: PettingZoo's ``api_test`` resets with ``options={"options": 1}``)."""
        return check_reset_options(self.rules, options, unknown_keys="warn")

    def reset(self, seed: int | None = None, options: dict | None = None) -> None:
        """Deal a new game (``seed``: the same seed deals the same game); ``options`` may fix the ``deal`` and the first
        manche's ``roles``, validated before anything changes."""
        chosen = self.check_options(options)
        # Everything is validated: the env changes only from here on.
        self.game.reset(seed=seed, **chosen)
        self.agents = self.possible_agents[:]
        self.rewards = {agent: 0.0 for agent in self.agents}
        self._cumulative_rewards = {agent: 0.0 for agent in self.agents}
        self.terminations = {agent: False for agent in self.agents}
        self.truncations = {agent: False for agent in self.agents}
        self.infos = {agent: {} for agent in self.agents}
        self._final: SingleGame | None = None  # after the game ended: its table before the last play
        self._rewarded = False  # rewards hold a manche's result (cleared at the next step)
        self.manche_over = False  # the engine's event: the last step ended a manche
        self.standing.reset()
        self.last_event: Event | None = None  # the holder's record of the last step
        self._refresh_infos()
        self.agent_selection = self.possible_agents[self.game.current_player]

    # ---- observation ------------------------------------------------------------
    def observe(self, agent: str) -> dict[str, np.ndarray]:
        """The agent's observation dict: ``observation`` (float32) and ``action_mask`` (int8, zeros when it is not to
        act)."""
        mask = self.action_mask(agent)
        game = self.game if self._final is None else self._final
        observation = game.observe(game.seat_of_player[self.agent_name_mapping[agent]])
        return {"observation": observation, "action_mask": mask}

    def action_mask(self, agent: str) -> np.ndarray:
        """``(num_actions,) int8``: the agent's legal actions now (all zero when it is not to act)."""
        self._require_reset("observe")
        if self._final is None and agent == self.agent_selection:
            return np.frombuffer(bytearray(self.game.mask_bytes()), np.int8)
        return np.zeros(self.rules.num_actions, np.int8)

    def _sampling_mask(self, agent: str) -> np.ndarray:
        return self.action_mask(agent) if hasattr(self, "agent_selection") else np.zeros(0, np.int8)

    def _require_reset(self, what: str) -> None:
        # A new or unpickled env (EzPickle rebuilds it from its arguments) has no game in progress yet.
        if not hasattr(self, "agent_selection"):
            raise RuntimeError(f"{what}() before reset(): call env.reset() first")

    # ---- step -------------------------------------------------------------------
    def step(self, action) -> None:
        """Play ``action`` for the agent to act; an illegal action raises ``ValueError`` saying why and changes nothing.
        A terminated agent steps ``None`` to leave."""
        self._require_reset("step")
        if not self.agents:
            raise RuntimeError("step() after the game ended and every agent left: call reset() to play again")
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            if action is not None:
                raise ValueError(f"the game is over: {agent} is terminated and may only step None (to leave)")
            return self._was_dead_step(action)
        if type(action) is not int:
            action = as_action(action, self.rules.num_actions)
        game = self.game
        event = self.last_event = game.step(action)  # raises before any change

        self._cumulative_rewards[agent] = 0.0
        if self._rewarded:
            self._clear_rewards()
            self._rewarded = False
        manche_over = self.manche_over = event.manche_over
        if manche_over:
            for name, reward in zip(self.possible_agents, event.rewards):
                self.rewards[name] = reward
            self._rewarded = True
        done = event.game_over
        changed = self.standing.record(game, event)
        if done:
            self._final = game.ended
            self.terminations = {name: True for name in self.agents}
            self._refresh_infos()
        else:
            if changed:
                self._refresh_infos()
            self.agent_selection = self.possible_agents[game.current_player]
        if manche_over:
            self._accumulate_rewards()
        if self.render_mode == "human":
            self.render()

    @property
    def last_action(self) -> str | None:
        """One line for the render: what the last step did (a give does not show the card), and the order of a
        manche it ended."""
        event = self.last_event
        if event is None:
            return None
        text = event.text(self.possible_agents, pretty_cards)
        if event.manche_over:
            order = sorted(range(len(event.positions)), key=event.positions.__getitem__)
            text += "; manche over: " + ", ".join(self.possible_agents[i] for i in order)
        return text

    def _refresh_infos(self) -> None:
        """Infos change only at a reset, when a player's place is final and at the end of a manche."""
        game = self.game if self._final is None else self._final
        for i, agent in enumerate(self.possible_agents):
            if agent in self.infos:
                self.infos[agent] = self.standing.info(game, i, self.possible_agents, self.info_schema)

    # ---- render -----------------------------------------------------------------
    def render(self) -> str | np.ndarray | None:
        """The table as text (``render_mode`` ``"ansi"`` returns it, ``"human"`` prints it) or as a picture
        (``"rgb_array"``: an ``(H, W, 3) uint8`` array of one size for every table)."""
        return render_for_mode(
            self.render_mode, self.render_text, "president_env.env()", lambda: draw_table(self.render_view())
        )

    def render_text(self, viewer: int | str | None = None) -> str:
        """The table as text, showing the hand of ``viewer`` (default: the agent to act)."""
        return self.render_view(viewer).text()

    def render_view(self, viewer: int | str | None = None) -> TableView:
        """What the render shows (the text and the picture draw it), with the hand of ``viewer`` (default: the agent
        to act); once the game ended, its result."""
        result = self.standing.result
        if result is not None:
            positions = self.standing.positions
            return describe_result(positions, result["scores"], result["winner"], result["manches"], self.last_action)
        game = self.game
        return describe_table(
            self.rules,
            game.to_state(),
            0,
            viewer,
            game.cards,
            trick_cards=game.trick_cards,
            last_action=self.last_action,
        )

    def close(self) -> None:
        """Nothing to release: the env holds no outside resources."""
        pass


# help(pe.env) shows raw_env's arguments (keyword-only, as env passes them on), not **kwargs.
env.__signature__ = inspect.Signature(
    [p.replace(kind=inspect.Parameter.KEYWORD_ONLY) for p in inspect.signature(raw_env).parameters.values()],
    return_annotation=AECEnv,
)

__all__ = ["LegalActionSpace", "env", "raw_env"]
