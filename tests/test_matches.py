"""A game is a match (docs/RULES.md, ``manches``): every view gives each seat its reward at each manche's end and
ends the episode when the match ends, after a decisive manche on a tie (docs/environment.md, "Reward and episode").

Each view is played with seeded random actions, and every step is checked against the totals it shows: a step
in which a regular manche ends raises the table's total by 6 points (3 + 2 + 1 + 0) and pays each seat its
points minus 1.5; any other step pays nothing, except the step that ends a decisive manche (no points added),
which pays its finishing reward; the episode ends exactly when the last regular manche ends without a tie for
the highest total, or when the decisive manche ends.
"""

from __future__ import annotations

import importlib.util

import numpy as np
import pytest
from helpers import PER_TABLE_CHECKPOINT

import president_env as pe
from president_env import agents
from president_env.core.actions import action_name
from president_env.core.engine import reward_table, sample_legal
from president_env.core.observation import layout

STANDARD = pe.Rules()  # the standard preset's match
SHORT = pe.Rules(manches=2)  # ties for the highest total are frequent: decisive manches
REWARDS = sorted(reward_table(STANDARD).tolist())  # zero-sum: points (3, 2, 1, 0) minus their mean 1.5
MANCHE_POINTS = 6


class MatchCheck:
    """Checks one seat's steps of one game against the scores the view shows (relative seat 0 = the seat)."""

    def __init__(self, rules: pe.Rules, scores: np.ndarray) -> None:
        self.rules, self.scores = rules, np.asarray(scores, np.int64)
        assert not self.scores.any(), "a game starts at 0 points"
        self.manches = self.rewards = 0
        self.decisive = False

    def step(self, scores: np.ndarray, reward: float, done: bool) -> None:
        scores = np.asarray(scores, np.int64)
        delta, self.scores = scores - self.scores, scores
        if delta.sum() == MANCHE_POINTS:  # a regular manche ended: its points, minus their mean
            assert not self.decisive
            self.manches += 1
            self.rewards += 1
            assert reward == pytest.approx(delta[0] - 1.5)
            last = self.manches == self.rules.manches
            tied = (scores == scores.max()).sum() > 1
            assert done == (last and not tied), (self.manches, scores, done)
            self.decisive = last and tied
        elif done:  # the decisive manche ended: a reward, no points
            assert self.decisive and not delta.any()
            self.rewards += 1
            assert reward in REWARDS
        else:
            assert not delta.any() and reward == 0.0, (delta, reward)

    def finished(self) -> None:
        assert self.manches == self.rules.manches and self.rewards == self.manches + self.decisive


def scores_seen(rules: pe.Rules, obs: np.ndarray) -> np.ndarray:
    """The game totals in an observation, by relative seat (the viewer first)."""
    return np.asarray(obs)[..., layout(rules)["scores"]]


@pytest.mark.parametrize("rules", [STANDARD, SHORT], ids=["standard", "2 manches"])
def test_the_aec_env_rewards_every_seat_at_each_manche_end_and_ends_with_the_match(rules):
    decisive = 0
    for seed in range(3):
        env = pe.env(rules=rules)
        env.reset(seed=seed)
        u = env.unwrapped
        agents = list(u.possible_agents)
        checks = {a: MatchCheck(rules, np.zeros(4)) for a in agents}
        rng = np.random.default_rng(seed)
        while not any(u.terminations.values()):
            mask = u.observe(u.agent_selection)["action_mask"].astype(bool)
            env.step(int(sample_legal(mask[None], rng)[0]))
            done = any(u.terminations.values())
            assert all(u.terminations[a] == done for a in agents) and not any(u.truncations.values())
            for k, agent in enumerate(agents):
                by_player = [u.infos[agent]["scores"][agents[(k + j) % 4]] for j in range(4)]
                checks[agent].step(by_player, u.rewards[agent], done)
        for check in checks.values():
            check.finished()
        decisive += checks[agents[0]].decisive
        info = u.infos[agents[0]]
        assert info["winner"] in agents and info["manche"] == rules.manches + checks[agents[0]].decisive - 1
    if rules is SHORT:
        assert decisive, "these seeds play a decisive manche"


@pytest.mark.parametrize("rules", [STANDARD, SHORT], ids=["standard", "2 manches"])
def test_the_gym_env_rewards_the_learner_at_each_manche_end_and_terminates_with_the_match(rules):
    env = pe.gym_env(rules=rules, opponents="random", seat=None)
    rng = np.random.default_rng(0)
    decisive = 0
    for episode in range(10):
        obs, info = env.reset(seed=episode)
        check = MatchCheck(rules, scores_seen(rules, obs))
        terminated = False
        while not terminated:
            action = int(sample_legal(info["action_mask"][None].astype(bool), rng)[0])
            obs, reward, terminated, truncated, info = env.step(action)
            assert not truncated
            check.step(scores_seen(rules, obs), reward, terminated)
        check.finished()
        decisive += check.decisive
    if rules is SHORT:
        assert decisive, "these seeds play a decisive manche"


def play_vector(rules: pe.Rules, venv, steps: int, rng: np.random.Generator, sb3: bool = False) -> tuple[int, int]:
    """Step a vector env (next-step autoreset) or the SB3 adapter (same-step) with random legal actions;
    ``(games finished, decisive manches)``."""
    obs = venv.reset() if sb3 else venv.reset(seed=0)[0]
    n = obs.shape[0]
    checks: list[MatchCheck | None] = [MatchCheck(rules, scores_seen(rules, obs[i])) for i in range(n)]
    finished = decisive = 0
    for _ in range(steps):
        masks = venv.action_masks()
        masks[~masks.any(axis=1), 0] = True  # a finished game (next-step autoreset) ignores its action
        actions = sample_legal(masks, rng)
        if sb3:
            obs, rewards, dones, infos = venv.step(actions)
            final = [infos[i].get("terminal_observation") for i in range(n)]
        else:
            obs, rewards, dones, truncated, info = venv.step(actions)
            assert not truncated.any()
            final = list(obs)
        for i in range(n):
            if checks[i] is None:  # next-step autoreset: this step started game i anew, with reward 0
                assert rewards[i] == 0.0 and not dones[i]
                checks[i] = MatchCheck(rules, scores_seen(rules, obs[i]))
                continue
            checks[i].step(scores_seen(rules, final[i] if dones[i] else obs[i]), float(rewards[i]), bool(dones[i]))
            if dones[i]:
                checks[i].finished()
                finished += 1
                decisive += checks[i].decisive
                checks[i] = MatchCheck(rules, scores_seen(rules, obs[i])) if sb3 else None
    return finished, decisive


def test_the_vector_env_rewards_each_learner_at_each_manche_end_and_terminates_with_the_match():
    venv = pe.vector_env(num_envs=6, rules=SHORT, opponents="random")
    finished, decisive = play_vector(SHORT, venv, 400, np.random.default_rng(0))
    assert finished >= 12 and decisive >= 1


@pytest.mark.skipif(importlib.util.find_spec("stable_baselines3") is None, reason="needs stable-baselines3")
def test_the_sb3_adapter_rewards_each_learner_at_each_manche_end_and_is_done_with_the_match():
    from president_env.envs.sb3 import PresidentSB3VecEnv

    venv = PresidentSB3VecEnv(num_envs=6, rules=SHORT, opponents="random")
    venv.seed(0)
    finished, decisive = play_vector(SHORT, venv, 400, np.random.default_rng(0), sb3=True)
    assert finished >= 12 and decisive >= 1


# ---- what the Président gives back ------------------------------------------------------------------------------
PRESIDENT_HAND = "3C 3D 4C 6C 6D 6H 8S 10C JC QC KC AC AD".split()  # a pair, a triple, singles 4 8 10 J Q K, two aces


def president_gives(name: str) -> list[str]:
    """The two cards ``name`` gives back as Président holding :data:`PRESIDENT_HAND` plus the Trou du cul's two 2s."""
    deck = [rank + suit for rank in "3 4 5 6 7 8 9 10 J Q K A 2".split() for suit in "CDHS"]
    rest = [card for card in deck if card not in PRESIDENT_HAND]
    deal = [PRESIDENT_HAND, rest[:13], rest[13:26], rest[26:]]  # the Trou du cul (player 3) holds the four 2s
    roles = {"player_0": "president", "player_1": "vice_president", "player_2": "vice_trou", "player_3": "trou_du_cul"}
    env = pe.env(rules=STANDARD)
    env.reset(seed=0, options={"deal": deal, "roles": roles})
    agent = agents.make(name, STANDARD, seed=0)
    gives = []
    for _ in range(2):
        assert env.agent_selection == "player_0"
        action = agent.act(env.observe("player_0"), env.unwrapped.infos["player_0"])
        gives.append(action_name(STANDARD, action))
        env.step(action)
    assert env.agent_selection != "player_0"
    return gives


@pytest.mark.parametrize("name", ["heuristic-1", "heuristic-2", "heuristic-3"])
def test_the_heuristics_give_back_their_weakest_single_cards(name):
    # Not a 3 of the pair, a 6 of the triple, the aces or the 2s received: the two weakest singles.
    assert president_gives(name) == ["give 4", "give 8"]


@pytest.mark.parametrize("name", ["mc-4", "mc-5"])
def test_the_monte_carlo_agents_give_back_low_single_cards(name):
    first, second = president_gives(name)
    assert first == "give 4" and second in ("give 8", "give 10", "give J")


# ---- learned agents in matches ------------------------------------------------------------------------------------
@pytest.mark.skipif(importlib.util.find_spec("torch") is None, reason="needs torch")
def test_a_checkpoint_plays_a_match_of_any_length_without_a_warning():
    import warnings

    from president_env.agents.torch_policy import TorchPolicyAgent

    path = PER_TABLE_CHECKPOINT
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for manches in (1, 5, 9):
            assert TorchPolicyAgent.from_checkpoint(path, pe.Rules(manches=manches)).rules.manches == manches
    with pytest.warns(UserWarning, match=r"differ in revolution \(checkpoint False, requested True\)\);"):
        TorchPolicyAgent.from_checkpoint(path, pe.Rules(revolution=True, manches=3))
    # A whole match against it, in the Gym env: its rewards and episode as every view's.
    env = pe.gym_env(rules=SHORT, opponents=str(path), seat=0)
    obs, info = env.reset(seed=0)
    check = MatchCheck(SHORT, scores_seen(SHORT, obs))
    rng = np.random.default_rng(0)
    terminated = False
    while not terminated:
        obs, reward, terminated, _, info = env.step(int(sample_legal(info["action_mask"][None].astype(bool), rng)[0]))
        check.step(scores_seen(SHORT, obs), reward, terminated)
    check.finished()
