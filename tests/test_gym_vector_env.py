"""The Gymnasium vector env: game by game the single env, Gymnasium's vector contract, autoreset, seeding."""

from __future__ import annotations

import zlib

import gymnasium
import numpy as np
import pytest
from gymnasium.vector import AutoresetMode

import president_env as pe
from president_env.core import engine
from president_env.core.cards import deck
from president_env.core.observation import observe
from president_env.core.presets import PRESETS, load_preset
from president_env.envs.gym_vector_env import PresidentVectorEnv

ROLE_ORDER = {
    3: ["president", "neutre", "trou_du_cul"],
    4: ["president", "vice_president", "vice_trou", "trou_du_cul"],
}


ROLES_4 = {"player_0": "president", "player_1": "vice_president", "player_2": "vice_trou", "player_3": "trou_du_cul"}


def random_deal(rules: pe.Rules, rng: np.random.Generator) -> list[list[str]]:
    cards = list(deck(rules.decks, rules.jokers))
    order = rng.permutation(len(cards))
    return [[cards[i] for i in order[p :: rules.n_players]] for p in range(rules.n_players)]


def random_roles(rules: pe.Rules, rng: np.random.Generator) -> dict[str, str]:
    n = rules.n_players
    names = ["president", "vice_president"] + ["neutre"] * (n - 4) + ["vice_trou", "trou_du_cul"]
    names = ROLE_ORDER.get(n, names)
    return {f"player_{i}": names[j] for i, j in enumerate(rng.permutation(n))}


def pick(mask: np.ndarray, t: int, salt: int) -> int:
    """A deterministic legal action that varies with the step and the game."""
    legal = np.flatnonzero(mask)
    return int(legal[(t * 7 + salt * 3) % legal.size])


@pytest.fixture
def state_seeded_deals(monkeypatch):
    """Later manches are dealt from the game's history, not from the batch's generator: a game then
    gets the same deals whichever batch (a single env's or the vector env's) it is played in."""
    original = engine._shuffled_decks

    def shuffled(rules, state, index, rng):
        if not index.size:
            return original(rules, state, index, rng)
        seeds = [zlib.crc32(state.dealt_to[slot].tobytes()) + int(state.manche[slot]) for slot in index]
        return np.concatenate(
            [original(rules, state, index[k : k + 1], np.random.default_rng(seed)) for k, seed in enumerate(seeds)]
        )

    monkeypatch.setattr(engine, "_shuffled_decks", shuffled)


def run_single(rules, seat, options, salt, opponents="heuristic-1"):
    env = pe.gym_env(rules, opponents=opponents, seat=seat, illegal_action="raise")
    obs, info = env.reset(seed=salt, options=options)
    steps = [(obs, info["action_mask"], 0.0, False)]
    t = 0
    while not steps[-1][3]:
        obs, reward, terminated, _, info = env.step(pick(info["action_mask"], t, salt))
        steps.append((obs, info["action_mask"], reward, terminated))
        t += 1
    return steps


def run_vector(rules, seats, options, opponents="heuristic-1"):
    n = len(seats)
    venv = pe.vector_env(n, rules=rules, opponents=opponents, seat=None, illegal_action="raise")
    obs, info = venv.reset(seed=0, options={**options, "seats": seats})
    trajectories = [[(obs[i], info["action_mask"][i], 0.0, False)] for i in range(n)]
    done = np.zeros(n, bool)
    t = 0
    while not done.all():
        masks = venv.action_masks()
        masks[~masks.any(1), 0] = True  # a finished game's action is ignored (next-step autoreset)
        actions = np.array([pick(masks[i], t, i) for i in range(n)])
        obs, reward, terminated, truncated, info = venv.step(actions)
        assert not truncated.any()
        for i in np.flatnonzero(~done):
            trajectories[i].append((obs[i], info["action_mask"][i], float(reward[i]), bool(terminated[i])))
        done |= terminated
        t += 1
    return trajectories


@pytest.mark.parametrize("preset", PRESETS)
def test_each_game_is_the_single_env_game(preset, state_seeded_deals):
    rules = load_preset(preset) if preset != "standard" else pe.Rules(manches=3)
    rng = np.random.default_rng(zlib.crc32(preset.encode()))
    n = 5
    seats = [int(s) for s in rng.integers(rules.n_players, size=n)]
    deals = [random_deal(rules, rng) for _ in range(n)]
    # Starting roles (then the exchange opens the game and the Trou du cul deals) under a drawn first seating,
    # a first dealer otherwise; later manches of the 3-manche game start from the roles they earned.
    with_roles = rules.initial_roles == "draw"
    dealers = [int(d) for d in rng.integers(rules.n_players, size=n)]
    roles = [random_roles(rules, rng) for _ in range(n)]
    options = {"deals": deals, "roles": roles} if with_roles else {"deals": deals, "dealers": dealers}
    vector = run_vector(rules, seats, options)
    for i in range(n):
        options = {"deal": deals[i], "roles": roles[i]} if with_roles else {"deal": deals[i], "dealer": dealers[i]}
        single = run_single(rules, seats[i], options, salt=i)
        assert len(single) == len(vector[i]), f"game {i}: {len(single)} steps alone, {len(vector[i])} batched"
        for t, (one, batched) in enumerate(zip(single, vector[i])):
            np.testing.assert_array_equal(one[1], batched[1], err_msg=f"game {i} step {t}: masks")
            assert one[2] == batched[2] and one[3] == batched[3], f"game {i} step {t}: reward/termination"
            # Terminal observations too: both show the table after the game's last play.
            np.testing.assert_array_equal(one[0], batched[0], err_msg=f"game {i} step {t}: observations")


def test_terminal_observation_is_the_table_after_the_last_play():
    venv = pe.vector_env(16, opponents="heuristic-1", seat=2)
    obs, info = venv.reset(seed=3)
    rng = np.random.default_rng(0)
    for _ in range(200):
        masks = venv.action_masks()
        masks[~masks.any(1), 0] = True
        obs, reward, terminated, _, info = venv.step(engine.sample_legal(masks, rng))
        if terminated.any():
            break
    i = int(np.flatnonzero(terminated)[0])
    state = venv.game.state
    assert state.phase[i] == engine.PHASE_OVER and not info["action_mask"][i].any()
    final = state.take([i])
    np.testing.assert_array_equal(obs[i], observe(venv.rules, final, final.seat_of_player[:, 2].astype(np.int64))[0])
    lay = pe.core.observation.layout(venv.rules)
    assert not obs[i, lay["phase"]].any()
    assert reward[i] == engine.reward_table(venv.rules)[state.last_positions[i, 2]]


def test_make_vec_returns_the_batched_env():
    venv = gymnasium.make_vec(
        "president_env/President-v0",
        num_envs=8,
        vectorization_mode="vector_entry_point",
        rules="quebec",
        opponents="heuristic-2",
        seat=1,
    )
    assert isinstance(venv, PresidentVectorEnv) and venv.num_envs == 8
    assert venv.metadata["autoreset_mode"] == AutoresetMode.NEXT_STEP
    obs, info = venv.reset(seed=0)
    rules = load_preset("quebec")
    assert obs.shape == (8, venv.obs_dim) and obs.dtype == np.float32
    assert venv.observation_space.contains(obs) and venv.single_observation_space.shape == (venv.obs_dim,)
    assert venv.single_action_space == gymnasium.spaces.Discrete(rules.num_actions)
    assert info["action_mask"].shape == (8, rules.num_actions) and info["action_mask"].dtype == np.int8
    masks = venv.action_masks()
    assert masks.dtype == bool and masks.any(axis=1).all()
    np.testing.assert_array_equal(masks, info["action_mask"].astype(bool))
    assert (info["player"] == 1).all()
    obs, reward, terminated, truncated, info = venv.step(np.argmax(masks, axis=1))
    assert reward.shape == (8,) and reward.dtype == np.float32
    assert terminated.dtype == bool and truncated.dtype == bool and terminated.shape == truncated.shape == (8,)


def test_seeding_reproduces_and_seats_are_drawn_per_game():
    def trace(seed):
        venv = pe.vector_env(12, opponents="random", seat=None)
        obs, info = venv.reset(seed=seed)
        out = [obs, info["player"]]
        for _ in range(40):
            masks = venv.action_masks()
            masks[~masks.any(1), 0] = True
            obs, reward, *_ = venv.step(np.argmax(masks, axis=1))
            out += [obs, reward]
        return out

    first, again, other = trace(5), trace(5), trace(6)
    assert all(np.array_equal(a, b) for a, b in zip(first, again))
    assert not all(np.array_equal(a, b) for a, b in zip(first, other))
    assert len(set(first[1].tolist())) > 1, "seat=None draws the learner's player per game"
    listed = pe.vector_env(3, opponents="random")
    a, _ = listed.reset(seed=[1, 2, 3])
    b, _ = pe.vector_env(3, opponents="random").reset(seed=[1, 2, 3])
    np.testing.assert_array_equal(a, b)


def first_terminal(venv, rng, limit=400):
    for _ in range(limit):
        masks = venv.action_masks()
        masks[~masks.any(1), 0] = True
        result = venv.step(engine.sample_legal(masks, rng))
        if result[2].any():
            return result
    raise AssertionError("no game ended")


def test_next_step_autoreset_ignores_the_action_and_restarts():
    venv = pe.vector_env(6, opponents="heuristic-1", seat=0)
    venv.reset(seed=1)
    obs, reward, terminated, _, info = first_terminal(venv, np.random.default_rng(1))
    ended = np.flatnonzero(terminated)
    assert not info["action_mask"][ended].any()
    actions = np.argmax(venv.action_masks(), axis=1)
    actions[ended] = 10**6  # ignored, even out of range
    obs, reward, terminated, _, info = venv.step(actions)
    assert (reward[ended] == 0).all() and not terminated[ended].any()
    assert info["action_mask"][ended].any(axis=1).all()
    assert (venv.game.state.manche[ended] == 0).all() and (venv.game.state.scores[ended] == 0).all()


def test_same_step_autoreset_returns_the_final_observation_in_info():
    venv = pe.vector_env(6, opponents="heuristic-1", seat=0, autoreset_mode="same_step")
    assert venv.metadata["autoreset_mode"] == AutoresetMode.SAME_STEP
    venv.reset(seed=1)
    obs, reward, terminated, _, info = first_terminal(venv, np.random.default_rng(1))
    ended = np.flatnonzero(terminated)
    np.testing.assert_array_equal(info["_final_obs"], terminated)
    lay = pe.core.observation.layout(venv.rules)
    np.testing.assert_array_equal(info["final_info"]["_scores"], terminated)
    assert not info["final_info"]["action_mask"].any()
    for i in range(6):
        if terminated[i]:
            assert not info["final_obs"][i][lay["phase"]].any()
            assert info["final_info"]["scores"][i].sum() > 0  # the game's final totals
        else:
            assert info["final_obs"][i] is None
    assert info["action_mask"][ended].any(axis=1).all(), "the new games are already at the learner's turn"
    assert venv.action_masks().any(axis=1).all()


def test_disabled_autoreset_waits_for_a_masked_reset():
    venv = pe.vector_env(4, opponents="heuristic-1", seat=3, autoreset_mode="disabled")
    venv.reset(seed=2)
    obs, _, terminated, _, _ = first_terminal(venv, np.random.default_rng(2))
    with pytest.raises(ValueError, match="is over"):
        venv.step(np.zeros(4, np.int64))
    kept = venv.game.state_dict()["state"]
    obs2, info = venv.reset(options={"reset_mask": terminated.copy()})
    after = venv.game.state_dict()["state"]
    for name, value in kept.items():
        np.testing.assert_array_equal(value[~terminated], after[name][~terminated], err_msg=name)
    np.testing.assert_array_equal(obs2[~terminated], obs[~terminated])
    assert info["action_mask"].any(axis=1).all()


def test_illegal_actions_raise_unchanged_or_are_replaced():
    venv = pe.vector_env(4, opponents="random", seat=0, illegal_action="raise")
    obs, info = venv.reset(seed=4)
    before = venv.game.state_dict()
    bad = np.argmax(info["action_mask"], axis=1)
    bad[2] = int(np.flatnonzero(info["action_mask"][2] == 0)[0])
    with pytest.raises(ValueError, match="game 2"):
        venv.step(bad)
    for name, value in before["state"].items():
        np.testing.assert_array_equal(value, venv.game.state_dict()["state"][name], err_msg=name)
    replacing = pe.vector_env(4, opponents="random", seat=0)
    _, info = replacing.reset(seed=4)
    with pytest.warns(UserWarning, match="illegal"):
        _, _, _, _, info = replacing.step(bad)
    np.testing.assert_array_equal(info["illegal_action"], [False, False, True, False])


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"num_envs": 0}, "num_envs"),
        ({"seat": 4}, "seat"),
        ({"illegal_action": "ignore"}, "illegal_action"),
        ({"autoreset_mode": "later"}, "autoreset_mode"),
        ({"opponents": ["random"]}, "one per other player"),
        ({"opponents": "nobody"}, "unknown agent 'nobody'"),
        ({"render_index": 9}, "render_index"),
        ({"render_mode": "rgb_array"}, "render_mode"),
    ],
)
def test_bad_constructor_arguments(kwargs, match):
    with pytest.raises(ValueError, match=match):
        pe.vector_env(**{"num_envs": 3, **kwargs})


def test_bad_step_and_reset_inputs_leave_the_env_unchanged():
    venv = pe.vector_env(3, opponents="random")
    with pytest.raises(RuntimeError, match="reset"):
        venv.step(np.zeros(3, np.int64))
    obs, _ = venv.reset(seed=0)
    before = venv.game.state_dict()["state"]
    for actions in (np.zeros(2, np.int64), np.zeros(3), [[0, 0, 0]]):
        with pytest.raises(ValueError, match="actions"):
            venv.step(actions)
    for options, match in (
        ({"deals": [[["3C"]]] * 3}, "deal"),
        ({"deals": []}, "deals"),
        ({"seats": [0, 1, 9]}, "seats"),
        ({"dealers": [0, 0, 5]}, "dealers"),
        ({"roles": [{"player_0": "king"}, None, None]}, "role"),
        ({"roles": [ROLES_4] * 3, "dealers": [0, 1, 2]}, "deal"),  # with roles the Trou du cul deals
        ({"reset_mask": np.array([1, 0, 1])}, "reset_mask"),
        ({"colour": 1}, "unknown option"),
    ):
        with pytest.raises(ValueError, match=match):
            venv.reset(options=options)
    for name, value in before.items():
        np.testing.assert_array_equal(value, venv.game.state_dict()["state"][name], err_msg=name)
    with pytest.raises(ValueError, match="seed"):
        venv.reset(seed=[1, 2])


@pytest.mark.parametrize(
    ("seed", "named"),
    [
        pytest.param([1.5, 2, 3, 4], "entry 0 of the list is 1.5", id="float-in-list"),
        pytest.param([1, 2, -3, 4], "entry 2 of the list is -3", id="negative-in-list"),
        pytest.param([None] * 4, "entry 0 of the list is None", id="none-list"),
        pytest.param(["1", 2, 3, 4], "entry 0 of the list is '1'", id="text-in-list"),
        pytest.param([1, 2, True, 4], "entry 2 of the list is True", id="bool-in-list"),
        pytest.param(-1, "got -1", id="negative"),
        pytest.param("7", "got '7'", id="text"),
        pytest.param(2.0, "got 2.0", id="float"),
        pytest.param([1, 2, 3], "got a list of 3", id="short-list"),
    ],
)
def test_a_bad_seed_is_refused_naming_it_and_changes_nothing(seed, named):
    """Issue 24: reset(seed=[1.5, 2, 3, 4]) played the games of [1, 2, 3, 4]; other bad seeds gave unclear errors."""
    venv, twin = pe.vector_env(4, opponents="random"), pe.vector_env(4, opponents="random")
    venv.reset(seed=5)
    twin.reset(seed=5)
    rng_before = venv.np_random.bit_generator.state
    with pytest.raises(ValueError, match="seed must be None, a non-negative integer or a list") as caught:
        venv.reset(seed=seed)
    assert named in str(caught.value)
    assert venv.np_random.bit_generator.state == rng_before
    actions = np.array([np.flatnonzero(m)[0] for m in venv.action_masks()])
    np.testing.assert_array_equal(venv.step(actions)[0], twin.step(actions)[0])  # it goes on as if never asked


@pytest.mark.parametrize("options", ["deals", ["deals"], 3, ("reset_mask", None)])
def test_options_that_are_not_a_mapping_are_refused_naming_them(options):
    venv = pe.vector_env(2, opponents="random")
    venv.reset(seed=0)
    before = venv.game.state_dict()["state"]
    with pytest.raises(ValueError, match="options must be a dict with keys among deals, dealers"):
        venv.reset(options=options)
    for name, value in before.items():
        np.testing.assert_array_equal(value, venv.game.state_dict()["state"][name], err_msg=name)


def test_a_seed_list_of_numpy_integers_is_accepted_as_the_same_games():
    a = pe.vector_env(3, opponents="random").reset(seed=[1, 2, 3])[0]
    b = pe.vector_env(3, opponents="random").reset(seed=np.array([1, 2, 3], np.uint32))[0]
    np.testing.assert_array_equal(a, b)


def test_step_after_close_raises():
    """Issue 24: a closed vector env still played."""
    venv = pe.vector_env(2, opponents="random")
    venv.reset(seed=0)
    venv.close()
    with pytest.raises(RuntimeError, match=r"step\(\) after close\(\)"):
        venv.step(np.zeros(2, np.int64))


class CountingOpponent:
    """Deterministic (lowest legal action), counting its batched calls."""

    def __init__(self):
        self.calls = 0

    def act_batch(self, observations, masks):
        self.calls += 1
        assert observations.shape[0] == masks.shape[0] > 0
        return np.argmax(masks, axis=1)


def test_opponents_are_asked_once_per_engine_step_and_act_only_objects_work():
    counting = CountingOpponent()
    venv = pe.vector_env(64, opponents=counting, seat=0)
    steps = []
    original = engine.step

    def counted(*args, **kwargs):
        steps.append(1)
        return original(*args, **kwargs)

    venv.reset(seed=0)
    engine.step, calls_before = counted, counting.calls
    try:
        venv.step(np.argmax(venv.action_masks(), axis=1))
    finally:
        engine.step = original
    assert counting.calls - calls_before == len(steps) - 1  # one engine step is the learners'
    lowest = pe.vector_env(5, opponents=lambda obs, mask: int(np.flatnonzero(mask)[0]), seat=0)
    batched = pe.vector_env(5, opponents=CountingOpponent(), seat=0)
    a, _ = lowest.reset(seed=9)
    b, _ = batched.reset(seed=9)
    np.testing.assert_array_equal(a, b)
    for _ in range(30):
        masks = lowest.action_masks()
        masks[~masks.any(1), 0] = True
        actions = np.argmax(masks, axis=1)
        ra, rb = lowest.step(actions), batched.step(actions)
        for x, y in zip(ra[:4], rb[:4]):
            np.testing.assert_array_equal(x, y)


def test_render_shows_the_chosen_game():
    venv = pe.vector_env(3, opponents="random", render_mode="ansi", render_index=2)
    venv.reset(seed=0)
    text = venv.render()
    assert text.startswith("game 2:") and "player_" in text


def test_one_opponent_object_per_seat_plays_as_one_shared_object():
    # Three distinct heuristic-1 objects (one per seat: rows grouped by the object that acts) and one shared
    # object (every row in one call) must play the same games: the heuristic is deterministic. A fixed seat:
    # the env's generator seeds each distinct opponent, so drawn seats would differ.
    rules = pe.Rules(manches=2)
    per_seat = pe.vector_env(32, rules=rules, opponents=["heuristic-1"] * 3, seat=1)
    shared = pe.vector_env(32, rules=rules, opponents="heuristic-1", seat=1)
    assert len(per_seat._distinct) == 3 and len(shared._distinct) == 1
    a, info_a = per_seat.reset(seed=4)
    b, info_b = shared.reset(seed=4)
    np.testing.assert_array_equal(a, b)
    for t in range(40):
        masks = info_a["action_mask"].astype(bool)
        masks[~masks.any(1), 0] = True
        actions = np.array([pick(masks[i], t, i) for i in range(32)])
        ra, rb = per_seat.step(actions), shared.step(actions)
        for x, y in zip(ra[:4], rb[:4]):
            np.testing.assert_array_equal(x, y, err_msg=f"step {t}")
        info_a = ra[4]
        np.testing.assert_array_equal(info_a["action_mask"], rb[4]["action_mask"])


class _PassesAlways:
    """A batched opponent that always passes (illegal when it leads a trick)."""

    needs_observations = False

    def act_batch(self, observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
        return np.zeros(masks.shape[0], np.int64)


def test_an_opponents_illegal_action_is_named_also_beside_random_opponents():
    """The legality check is skipped only for the registry's random players (their draws come from the engine's
    mask); any other opponent's illegal action still raises, with random players at the same table."""
    rules = pe.Rules()
    venv = pe.vector_env(8, rules=rules, opponents=["random", _PassesAlways(), "random"], seat=0)
    with pytest.raises(ValueError, match="an opponent chose an illegal action"):
        venv.reset(seed=0)
        for _ in range(200):
            mask = venv.action_masks()
            mask[~mask.any(axis=1), 0] = True
            venv.step(engine.sample_legal(mask, np.random.default_rng(1)))
