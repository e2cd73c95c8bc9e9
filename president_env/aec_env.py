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

This environment runs one game on `president_env.single.SingleGame`, the
one-slot fast path of the batched engine: the same rules, masks, observations
(bit for bit) and rewards as `VecGame(rules, batch_size=1)`, and for a given
seed the same games.

### Arguments

- `rules`: a `president_env.Rules` (default: the standard 4-player game), a
  preset name (`"quebec"`, `"party"`, …), the path of a rules YAML file, a
  mapping of `Rules` fields or YAML text (`president_env.presets.resolve_rules`).
- `reward_mode`: `"zero_sum"` (default): a manche's points minus the table's
  mean, so each manche's rewards sum to 0; `"normalized"`: the same scaled
  into [-1, 1] (divided by its largest magnitude); `"points"`: the raw points
  (`scoring: per_opponent_behind`: one per player who went out after you;
  `president_vice`: Président 2, Vice-Président 1).
- `render_mode`: `None`, `"ansi"` (`render()` returns the text) or `"human"`
  (prints it, also after every step).
- `info_schema`: `"rich"` (default) or `"numeric"` (fixed keys, numbers only);
  see Infos.

### Observation space

`observation` is the engine's flat vector from the observing agent's seat;
seats appear in relative order (0 = the observer). Its segments come from
the observation spec `president_env.observation.layout(rules)`: `.table()` is
the index table (docs/environment.md shows it for the standard rules) and
`.view(obs)["hand"]` decodes a segment. Nothing in it
depends on another player's hidden cards. Values are counts, one-hots and
scores, between 0 and `high = max(cards in the deck, (manches + 1) × the most
points of a manche)`.

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
  roles, with its exchange;
- `"dealer"`: the seat of the first dealer, for a first manche without roles
  (a manche with roles, drawn or supplied, is dealt by its Trou du cul: a
  dealer given with roles raises `ValueError`).
Invalid options raise `ValueError` and leave the environment as it was.

### Infos

`infos[agent]` (default `info_schema="rich"`): `role` (role name in the
current manche, or `None`), `seat`, `manche` (0-based index), `decisive`,
`scores` (game totals by agent), `finish_position` (0 = out first) with
`finish_manche` (the manche it belongs to) once known, and at the end of the
game `winner` (agent name). A place appears as soon as it is final and is never
revised: on going out (every going out under `finish_on_two: allowed`; under
`penalty` one without a 2 or a joker in its last play), otherwise when the manche
ends (the last holder; under `penalty` a player who went out on a 2 or a joker,
whose place depends on how many finish normally and on later offenders). Until
then it still holds the agent's place in the previous manche.

`info_schema="numeric"` gives the same facts as numbers under the same keys at
every step, as TorchRL's `PettingZooWrapper` needs: `role` (code 0..4 in
`engine.ROLE_NAMES` order, -1 none), `seat`, `manche`, `decisive` (0/1),
`scores` (`(n,) int64` by player), `finish_position`, `finish_manche` and
`winner` (player index), each -1 until known.

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
import warnings
from collections.abc import Callable, Mapping

import numpy as np
from gymnasium import spaces
from gymnasium.utils import EzPickle
from pettingzoo import AECEnv
from pettingzoo.utils import wrappers
from pettingzoo.utils.env_logger import EnvLogger

from .actions import KIND_GIVE, KIND_PLAY, action_tables, as_action
from .cards import (
    N_NATURAL_RANKS,
    RANK_NAMES,
    card_rank,
    deck,
    hand_counts,
    move_cards,
    sort_cards,
    validate_deal,
)
from .engine import ROLE_NAMES, parse_roles, tables
from .observation import layout
from .presets import RulesSpec, resolve_rules
from .render import pretty_cards, render_for_mode, render_result, render_table
from .rules import Rules
from .single import SingleGame

OPTION_KEYS = ("deal", "roles", "dealer")
INFO_SCHEMAS = ("rich", "numeric")


_AFTER_RESET = frozenset({"rewards", "terminations", "truncations", "infos", "agent_selection", "num_agents", "agents"})


class OrderEnforcingWrapper(wrappers.OrderEnforcingWrapper):
    """PettingZoo's call-order checks, with two changes.

    - A ``step`` after every agent left raises ``RuntimeError`` (PettingZoo's wrapper logs a warning and
      ignores the call: a silent no-op hides a missing ``reset()``).
    - Attribute reads (``agents``, ``terminations``, ...) and ``last()`` go to the raw env in one hop instead
      of through every wrapper's ``__getattr__``; the wrappers below define no attributes of their own, so the
      values are the same, only cheaper (PettingZoo's loop reads six of them per step).
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
        if self._has_reset and not self._raw.agents:
            raise RuntimeError("step() after the game ended and every agent left: call reset() to play again")
        super().step(action)


def env(**kwargs) -> AECEnv:
    """The Président AEC env with PettingZoo's standard wrappers (out-of-bounds assert, call order)."""
    aec = raw_env(**kwargs)
    aec = wrappers.AssertOutOfBoundsWrapper(aec)
    return OrderEnforcingWrapper(aec)


def observation_high(rules: Rules) -> float:
    """Upper bound of every observation entry: card counts and scores (decisive points are not added)."""
    most_points = int(tables(rules).points.max())
    return float(max(rules.n_cards, (rules.manches + 1) * max(most_points, 1), rules.manches + 1))


class LegalActionSpace(spaces.Discrete):
    """``Discrete(num_actions)`` whose ``sample()`` without a mask draws among the actions legal now.

    ``contains`` is the plain discrete check; only sampling looks at the game, so that
    ``action_space.sample()`` (random exploration, the env checkers of Gymnasium and RLlib) gives an
    action the env accepts when its owner is to act. An explicit ``mask`` or ``probability`` is used
    as given, and when no action is legal (not this agent's turn, or the game is over) the draw is
    over the whole space.
    """

    def __init__(self, n: int, legal_mask: Callable[[], np.ndarray], seed: int | None = None) -> None:
        super().__init__(n, seed=seed)
        self._legal_mask: Callable[[], np.ndarray] | None = legal_mask

    def __getstate__(self) -> dict:
        # Pickled alone (a saved SB3 model keeps its action space), the space must not drag its env along:
        # the copy samples like a plain Discrete. Pickled with its env, the env rebinds it in __setstate__.
        state = self.__dict__.copy()
        state["_legal_mask"] = None
        return state

    def contains(self, x) -> bool:
        """In range and an integer as the env accepts it (:func:`~president_env.actions.as_action`): also NumPy
        integers of any dtype (``uint64`` included) and integer arrays of shape ``(1,)``."""
        try:
            value = as_action(x, int(self.n))
        except ValueError:
            return False
        return int(self.start) <= value < int(self.start + self.n)

    def sample(self, mask: np.ndarray | None = None, probability: np.ndarray | None = None) -> np.int64:
        if mask is None and probability is None and self._legal_mask is not None:
            legal = self._legal_mask()
            if legal.any():
                mask = legal.astype(np.int8)
        return super().sample(mask=mask, probability=probability)


class raw_env(AECEnv, EzPickle):
    """Président as a PettingZoo AEC environment; see the module docstring."""

    metadata = {"name": "president_v0", "render_modes": ["ansi", "human"], "is_parallelizable": False, "render_fps": 1}

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
        n = self.rules.n_players
        self.possible_agents = [f"player_{i}" for i in range(n)]
        self.agent_name_mapping = {a: i for i, a in enumerate(self.possible_agents)}
        obs_dim, num_actions = layout(self.rules).size, self.rules.num_actions
        high = observation_high(self.rules)
        self.observation_spaces = {
            agent: spaces.Dict(
                {
                    "observation": spaces.Box(0.0, high, (obs_dim,), np.float32),
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
        self._kind, _, self._count = action_tables(self.rules)
        self._deck = deck(self.rules.decks, self.rules.jokers)

    # ---- copies ---------------------------------------------------------------
    def __getstate__(self) -> dict:
        # EzPickle would rebuild a new, un-reset env from the constructor's arguments; a copy (pickle or
        # deepcopy) must instead continue the same game, so the whole state travels.
        return self.__dict__.copy()

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state)
        for agent, space in self.action_spaces.items():  # their link to the game is dropped when pickled
            space._legal_mask = functools.partial(self._sampling_mask, agent)

    # ---- spaces ---------------------------------------------------------------
    def observation_space(self, agent: str) -> spaces.Space:
        return self.observation_spaces[agent]

    def action_space(self, agent: str) -> spaces.Space:
        return self.action_spaces[agent]

    # ---- reset ----------------------------------------------------------------
    def check_options(self, options: dict | None, warn: bool = True) -> tuple:
        """Validate reset ``options`` without touching the env: ``(deal, roles, dealer)``, each ``None`` if not given.

        Raises ``ValueError`` naming the bad option; unknown keys only warn (when ``warn``).
        """
        if options is not None and not isinstance(options, Mapping):
            raise ValueError(f"options must be a dict with keys among {', '.join(OPTION_KEYS)}, got {options!r}")
        options = dict(options or {})
        unknown = sorted(str(k) for k in options if k not in OPTION_KEYS)
        if unknown and warn:
            warnings.warn(
                f"president_v0.reset: ignoring unknown option(s) {', '.join(unknown)}; known: {', '.join(OPTION_KEYS)}",
                stacklevel=3,
            )
        rules = self.rules
        deal, roles, dealer = options.get("deal"), options.get("roles"), options.get("dealer")
        if deal is not None:
            deal = validate_deal(deal, rules.n_players, rules.decks, rules.jokers)
        if roles is not None:
            parse_roles(rules, roles)
        if dealer is not None:
            is_int = isinstance(dealer, (int, np.integer)) and not isinstance(dealer, bool)
            if not is_int or not 0 <= dealer < rules.n_players:
                raise ValueError(f"dealer must be a seat number in 0..{rules.n_players - 1}, got {dealer!r}")
            dealer = int(dealer)
        return deal, roles, dealer

    def reset(self, seed: int | None = None, options: dict | None = None) -> None:
        deal, roles, dealer = self.check_options(options)
        # Everything is validated: the env changes only from here on.
        self.game.reset(
            seed=seed,
            deals=None if deal is None else [deal],
            dealers=None if dealer is None else [int(dealer)],
            roles=None if roles is None else [roles],
        )
        self.agents = self.possible_agents[:]
        self.rewards = {agent: 0.0 for agent in self.agents}
        self._cumulative_rewards = {agent: 0.0 for agent in self.agents}
        self.terminations = {agent: False for agent in self.agents}
        self.truncations = {agent: False for agent in self.agents}
        self.infos = {agent: {} for agent in self.agents}
        self._final: SingleGame | None = None  # after the game ended: its table before the last play
        self._rewarded = False  # rewards hold a manche's result (cleared at the next step)
        self.manche_over = False  # the engine's event: the last step ended a manche
        self._result: dict | None = None
        self._positions: list[int] | None = None  # the last finished manche's, by player (for the render)
        self._finish: list[tuple[int, int] | None] = [None] * self.rules.n_players  # (position, manche) once known
        self._trick_cards: list[str] = []
        self.last_action: str | None = None
        self.cards: list[list[str]] | None = None
        self._track_new_manche()
        self._refresh_infos()
        self.agent_selection = self.possible_agents[self.game.current_player]

    def _counts(self) -> np.ndarray:
        """``(P, R) int64`` cards held by each player."""
        game = self.game
        return np.array([game.hands[seat] for seat in game.seat_of_player], np.int64)

    def _track_new_manche(self) -> None:
        """Cards with their real suits, for rendering: the deal of the manche, then the automatic exchange.

        Only with a render mode: plain stepping follows counts alone, which keeps ``step`` fast.
        """
        if self.render_mode is None:
            return
        state = self.game.to_state()
        player_at_seat = state.player_at_seat[0]
        dealt: list[list[str]] = [[] for _ in self.possible_agents]
        for card_id, seat in enumerate(state.dealt_to[0]):
            dealt[int(player_at_seat[seat])].append(self._deck[card_id])
        self.cards = [sort_cards(h) for h in dealt]
        counts = np.stack([hand_counts(hand, self.rules.n_ranks) for hand in dealt]).astype(np.int64)
        # The automatic half of the exchange, one pair at a time (two pairs may move the same rank).
        for seat in np.flatnonzero(state.gave[0].sum(axis=1) > 0):
            partner = state.partner[0, seat]
            if state.prev_pos[0, seat] < state.prev_pos[0, partner]:
                continue  # a higher-ranked player's gives happen later, as decisions
            moved = counts.copy()
            moved[player_at_seat[seat]] -= state.gave[0, seat]
            moved[player_at_seat[partner]] += state.gave[0, seat]
            self.cards, _ = move_cards(self.cards, counts, moved)
            counts = moved
        self._trick_cards = []

    # ---- observation ------------------------------------------------------------
    def observe(self, agent: str) -> dict[str, np.ndarray]:
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
        self._require_reset("step")
        if not self.agents:
            raise RuntimeError("step() after the game ended and every agent left: call reset() to play again")
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            if action is not None:
                raise ValueError(f"the game is over: {agent} is terminated and may only step None (to leave)")
            return self._was_dead_step(action)
        action = as_action(action, self.rules.num_actions)
        game = self.game
        player, seat, manche_before = self.agent_name_mapping[agent], game.current, game.manche
        tracking = self.cards is not None
        before = self._counts() if tracking else None

        rewards, done = game.step(action)  # raises before any change

        self._cumulative_rewards[agent] = 0.0
        if self._rewarded:
            self._clear_rewards()
            self._rewarded = False
        manche_over = self.manche_over = rewards is not None
        if tracking:
            self.last_action = self._describe(player, action, before)
        if manche_over:
            for name, reward in zip(self.possible_agents, rewards):
                self.rewards[name] = reward
            self._rewarded = True
            self._positions = list(game.last_positions)
            self._finish = [(position, manche_before) for position in self._positions]
            if tracking:
                order = sorted(range(len(self._positions)), key=self._positions.__getitem__)
                self.last_action += "; manche over: " + ", ".join(self.possible_agents[i] for i in order)
        if done:
            self._result = {"scores": list(game.last_scores), "winner": game.last_winner, "manches": manche_before + 1}
            self._final = game.ended
            self.terminations = {name: True for name in self.agents}
            self._refresh_infos()
        else:
            if manche_over:
                self._track_new_manche()
                self._refresh_infos()
            elif game.n_held[seat] == 0 and not game.penalized[seat]:
                # Out, and not on a 2 under "penalty": the place is final now (later finishers come after).
                self._finish[player] = (game.out_rank[seat], manche_before)
                self._refresh_infos()
            if not manche_over and tracking:
                self.cards, played = move_cards(self.cards, before, self._counts())
                if game.trick_rank < 0:
                    self._trick_cards = []
                elif played:
                    self._trick_cards = played
            self.agent_selection = self.possible_agents[game.current_player]
        if manche_over:
            self._accumulate_rewards()
        if self.render_mode == "human":
            self.render()

    def _describe(self, player: int, action: int, before: np.ndarray) -> str:
        """One line for the render: what ``player`` just did (a give does not show the card)."""
        name = self.possible_agents[player]
        kind = self._kind[action]
        if kind == KIND_GIVE:
            return f"{name} gave back a card"
        if kind != KIND_PLAY:
            return f"{name} passed"
        rank, count = (action - 1) // self.rules.max_count, int(self._count[action])
        naturals = min(int(before[player, rank]), count)
        cards = [c for c in self.cards[player] if card_rank(c) == rank][:naturals]
        cards += [c for c in self.cards[player] if card_rank(c) == N_NATURAL_RANKS - 1][: count - naturals]
        what = pretty_cards(cards) if cards else " ".join([RANK_NAMES[rank]] * count)
        return f"{name} played {what}"

    def _refresh_infos(self) -> None:
        """Infos change only at a reset and at the end of a manche."""
        game = self.game if self._final is None else self._final
        seat_of = game.seat_of_player
        roles = [game.roles[seat] for seat in seat_of]
        scores = self._result["scores"] if self._result else list(game.scores)
        for i, agent in enumerate(self.possible_agents):
            if agent not in self.infos:
                continue
            finish = self._finish[i]
            if self.info_schema == "numeric":
                self.infos[agent] = {
                    "role": roles[i],
                    "seat": seat_of[i],
                    "manche": game.manche,
                    "decisive": int(game.decisive),
                    "scores": np.array(scores, np.int64),
                    "finish_position": -1 if finish is None else finish[0],
                    "finish_manche": -1 if finish is None else finish[1],
                    "winner": -1 if self._result is None else self._result["winner"],
                }
                continue
            info = {
                "role": ROLE_NAMES[roles[i]] if roles[i] >= 0 else None,
                "seat": seat_of[i],
                "manche": game.manche,
                "decisive": game.decisive,
                "scores": dict(zip(self.possible_agents, scores)),
            }
            if finish is not None:
                info["finish_position"], info["finish_manche"] = finish
            if self._result is not None:
                info["winner"] = self.possible_agents[self._result["winner"]]
            self.infos[agent] = info

    # ---- render -----------------------------------------------------------------
    def render(self) -> str | None:
        return render_for_mode(self.render_mode, self.render_text, "president_env.env()")

    def render_text(self, viewer: int | str | None = None) -> str:
        """The table as text, showing the hand of ``viewer`` (default: the agent to act)."""
        if self._result is not None:
            text = render_result(
                self._positions, self._result["scores"], self._result["winner"], self._result["manches"]
            )
            return f"Last: {self.last_action}\n{text}"
        return render_table(
            self.rules,
            self.game.to_state(),
            0,
            viewer,
            self.cards,
            trick_cards=self._trick_cards,
            last_action=self.last_action,
        )

    def close(self) -> None:
        pass


__all__ = ["env", "raw_env", "move_cards", "observation_high"]
