"""The vector env's compiled opponents' loop (``president_env.core.autoplay``): random opponents draw uniformly among
the legal actions from per-game streams (the same games on one thread and on two), the heuristics choose in it what
they choose through the Python loop, and the manches that end are dealt in the Python loop's order."""

from __future__ import annotations

import numpy as np
import pytest

import president_env as pe
from president_env.agents.heuristic import HeuristicAgent
from president_env.core import autoplay, compiled, registry, threads
from president_env.core.actions import KIND_PLAY, action_tables
from president_env.core.engine import sample_legal
from president_env.core.presets import load_preset
from president_env.core.vec_game import VecGame
from president_env.envs.gym_vector_env import PresidentVectorEnv


@pytest.fixture
def kernel_threads(monkeypatch):
    """Set the kernels' threads for one test (the setting is restored after it)."""
    monkeypatch.setattr(threads, "_kernel_threads", None)
    monkeypatch.delenv(threads.KERNEL_THREADS_VARIABLE, raising=False)
    return threads.kernel_threads


def trajectory(opponents, steps: int = 60, num_envs: int = 64, preset: str = "party", **kwargs) -> list[np.ndarray]:
    """Everything a seeded vector env returned over ``steps`` seeded random learner steps."""
    venv = pe.vector_env(num_envs, rules=load_preset(preset).replace(manches=2), opponents=opponents, **kwargs)
    obs, info = venv.reset(seed=3)
    rng = np.random.default_rng(4)
    out = [obs, info["action_mask"], info["player"]]
    for _ in range(steps):
        mask = info["action_mask"].astype(bool)
        mask[~mask.any(axis=1), 0] = True  # a finished game's action is ignored (next-step autoreset)
        obs, reward, terminated, _, info = venv.step(sample_legal(mask, rng))
        out += [obs, reward, terminated, info["action_mask"], info["scores"]]
    return out


def assert_same(a: list[np.ndarray], b: list[np.ndarray]) -> None:
    assert len(a) == len(b)
    for x, y in zip(a, b):
        np.testing.assert_array_equal(x, y)


def test_random_and_heuristic_opponents_take_the_compiled_loop_and_others_do_not():
    assert pe.vector_env(4, opponents="random")._compiled
    assert pe.vector_env(4, opponents="heuristic-3")._compiled
    assert pe.vector_env(4, opponents=["heuristic-3"] * 3)._compiled  # three objects, one policy
    assert pe.vector_env(4, opponents=["random"] * 3)._compiled  # three generators
    assert not pe.vector_env(4, opponents=["random", "heuristic-3", "heuristic-1"])._compiled
    assert not pe.vector_env(4, opponents=lambda obs, mask: int(np.flatnonzero(mask)[0]))._compiled
    other_rules = HeuristicAgent(load_preset("party"), level=3)
    assert not pe.vector_env(4, opponents=other_rules)._compiled  # its own rules differ from the env's


class PythonHeuristic(HeuristicAgent):
    """Heuristic-3 through the Python loop: a subclass with its own ``act_views`` offers no compiled policy."""

    def act_views(self, views, masks):
        return super().act_views(views, masks)


@pytest.mark.parametrize("preset", ["standard", "party", "or_nothing"])
def test_compiled_heuristic_plays_the_games_of_the_python_loop(preset):
    rules = load_preset(preset).replace(manches=2)
    python = PythonHeuristic(rules, level=3)
    assert python.compiled_policy(rules) is None
    compiled_games = trajectory(HeuristicAgent(rules, level=3), preset=preset, autoreset_mode="same_step")
    assert_same(compiled_games, trajectory(python, preset=preset, autoreset_mode="same_step"))


def test_several_opponent_objects_with_one_policy_share_the_loop():
    """Three heuristic-3 objects play the Python loop's games; three random agents each draw from their own
    generator."""
    rules = load_preset("party").replace(manches=2)
    python = [PythonHeuristic(rules, level=3) for _ in range(3)]
    assert_same(trajectory(["heuristic-3"] * 3), trajectory(python))
    three = trajectory(["random"] * 3)
    assert_same(three, trajectory(["random"] * 3))  # seeded by the env's seed
    assert not all(np.array_equal(a, b) for a, b in zip(three, trajectory("random")))


def test_manches_dealt_one_decision_at_a_time_give_the_same_games(monkeypatch):
    """The batched deal of the ended manches and the exact fallback (decision by decision) deal alike."""
    batched = trajectory("heuristic-3", preset="big_table")

    def by_decision(self, active, reward, terminated):
        policy = autoplay.compiled_policy(self._distinct[0], self.rules)
        keys = np.full(self.rules.n_players - 1, policy.key() if policy.key is not None else 0, np.uint64)
        self._decisions[active] = 0
        self._deal_by_decision(self._autoplay(active, policy, keys), policy, keys, reward, terminated)

    monkeypatch.setattr(PresidentVectorEnv, "_play_compiled", by_decision)
    assert_same(batched, trajectory("heuristic-3", preset="big_table"))


@pytest.mark.parametrize("opponents", ["heuristic-3", "random"])
def test_a_batch_of_deals_undone_and_dealt_again_decision_by_decision_gives_the_same_games(monkeypatch, opponents):
    """The undo of a batch of deals (where a game ends a second manche before the batch's last: forced here for every
    batch) restores the games, the generator and the rewards, so the games are those of the batched deals."""
    batched = trajectory(opponents, preset="big_table")
    undone = []

    def always(self, again, last):
        undone.append(last)
        return True

    monkeypatch.setattr(PresidentVectorEnv, "_ended_again_too_soon", always)
    assert_same(batched, trajectory(opponents, preset="big_table"))
    assert len(undone) > 10


@pytest.mark.parametrize("opponents", ["random", "heuristic-3"])
def test_the_compiled_opponents_are_the_same_on_one_thread_and_two(kernel_threads, opponents):
    if threads.available_cpus() < 2:
        pytest.skip("needs two CPUs")
    kernel_threads(1)
    one = trajectory(opponents, num_envs=2 * compiled.PARALLEL_FROM, steps=40)
    kernel_threads(2)
    two = trajectory(opponents, num_envs=2 * compiled.PARALLEL_FROM, steps=40)
    assert kernel_threads() == 2
    assert_same(one, two)


def test_random_opponents_are_seeded_by_the_env_seed():
    assert_same(trajectory("random"), trajectory("random"))
    venv = pe.vector_env(64, rules=load_preset("party"), opponents="random")
    first, _ = venv.reset(seed=3)
    again, _ = pe.vector_env(64, rules=load_preset("party"), opponents="random").reset(seed=4)
    assert not np.array_equal(first, again)


def test_random_opponents_draw_uniformly_among_the_legal_actions():
    """Many copies of one table, an opponent to lead: its first decision, read from the cards it played, is spread
    evenly over its legal actions (chi-square, 1e-3 level), and is always legal (no top rank ending the trick: the
    next player, the learner, is then to act)."""
    rules = load_preset("standard").replace(top_rank_ends_trick=False, twos_wild=False)
    game = VecGame(rules, batch_size=1, seed=0)
    rng = np.random.default_rng(0)
    while not (game.state.trick_rank[0] < 0 and game.legal_mask()[0].sum() >= 5):  # a lead with a real choice
        game.step(sample_legal(game.legal_mask(), rng))
    n = 20_000
    state = game.state.take(np.zeros(n, np.int64))
    seat = int(state.current[0])
    legal = np.flatnonzero(game.legal_mask()[0])
    learner = np.full(n, state.player_at_seat[0, (seat + 1) % rules.n_players], np.int64)  # the next player
    before = state.hands[:, seat].astype(np.int64)
    policy = registry.RandomAgent(rules, seed=1).compiled_policy(rules)
    keys = np.full(rules.n_players - 1, policy.key(), np.uint64)
    status = autoplay.play(rules, state, np.arange(n), learner, policy, keys, np.zeros(n, np.int64))
    assert not (status == autoplay.ILLEGAL).any()
    spent = before - state.hands[:, seat]
    kind, rank, count = action_tables(rules)
    chosen = np.array([np.flatnonzero((kind == KIND_PLAY) & (rank == r) & (count == spent[i, r]))[0]
                       for i, r in enumerate(spent.argmax(axis=1))])  # fmt: skip
    assert np.isin(chosen, legal).all()
    counts = np.array([(chosen == a).sum() for a in legal])
    expected = n / legal.size
    chi2 = ((counts - expected) ** 2 / expected).sum()
    # The 0.999 quantile of chi-square with k - 1 degrees of freedom, k <= 14 here: below 37.
    assert chi2 < 37.0, (legal.size, counts)


def test_an_illegal_compiled_decision_is_refused():
    rules = load_preset("standard")

    class Cheater(registry.RandomAgent):
        def compiled_policy(self, rules):
            return autoplay.CompiledPolicy(_pass_always, ())

    venv = pe.vector_env(8, rules=rules, opponents=Cheater(rules))
    with pytest.raises(ValueError, match="an opponent chose an illegal action in game"):
        for seed in range(20):  # an opponent leading a trick may not pass
            venv.reset(seed=seed)


@compiled.slot_function
def _pass_always(params, state, s, legal, n_legal, word, scratch):
    return 0
