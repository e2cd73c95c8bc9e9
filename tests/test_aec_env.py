"""The PettingZoo AEC env: the API checks, options, turn order, rewards, determinism and hidden information."""

from __future__ import annotations

import copy
import random
import warnings
from collections import Counter
from pathlib import Path

import numpy as np
import pytest
from helpers import random_rules
from lockstep import lockstep
from pettingzoo.test import api_test, render_test, seed_test

import president_env as pe
from president_env.core.cards import deck
from president_env.core.deals import ROLE_NAMES
from president_env.core.engine import reward_table, sample_legal
from president_env.core.observation import layout
from president_env.core.rules import Rules
from president_env.envs.aec_env import raw_env

PRESET_FILES = sorted((Path(__file__).resolve().parents[1] / "configs" / "rules").glob("*.yaml"))


_combo_rng = np.random.default_rng(20240611)
RANDOM_RULES = [random_rules(_combo_rng) for _ in range(10)]
# The presets in one manche (their 5-manche matches: tests/test_matches.py); RANDOM_RULES play 1 to 3 manches.
ALL_RULES = [Rules.from_yaml(p).replace(manches=1) for p in PRESET_FILES] + RANDOM_RULES
RULE_IDS = [p.stem for p in PRESET_FILES] + [f"random{i}" for i in range(len(RANDOM_RULES))]


def test_every_rules_field_is_drawn():
    assert {f for f in Rules.__dataclass_fields__} <= set(random_rules(np.random.default_rng(0)).to_dict())
    assert len(PRESET_FILES) >= 6


@pytest.mark.parametrize("rules", ALL_RULES, ids=RULE_IDS)
def test_pettingzoo_api_seed_and_render(rules):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # api_test's advice on Dict spaces and unknown reset options
        api_test(pe.env(rules=rules), num_cycles=1000)
        seed_test(lambda: pe.env(rules=rules), num_cycles=500)
        render_test(lambda render_mode=None: pe.env(rules=rules, render_mode=render_mode))


# ----------------------------------------------------------------------------- helpers
def play_random(aec, rng, max_steps=100_000, on_step=None):
    """Play to the end with uniformly random legal actions; ``on_step(aec, agent, action)`` after each step."""
    steps = 0
    for agent in aec.agent_iter(max_steps):
        obs, _, terminated, truncated, _ = aec.last()
        if terminated or truncated:
            aec.step(None)
            continue
        action = int(sample_legal(obs["action_mask"][None].astype(bool), rng)[0])
        aec.step(action)
        steps += 1
        if on_step is not None:
            on_step(aec, agent, action)
    return steps


def snapshot(aec):
    u = aec.unwrapped
    return (
        {a: u.observe(a)["observation"].copy() for a in u.possible_agents},
        {a: u.observe(a)["action_mask"].copy() for a in u.possible_agents},
        u.agent_selection,
        dict(u.rewards),
        dict(u._cumulative_rewards),
        repr(u.infos),
        [list(h) for h in u.game.cards],
        u.render_text(),
    )


def assert_same(a, b):
    for x, y in zip(a, b):
        if isinstance(x, dict) and x and isinstance(next(iter(x.values())), np.ndarray):
            assert x.keys() == y.keys()
            for k in x:
                np.testing.assert_array_equal(x[k], y[k])
        else:
            assert x == y


# ----------------------------------------------------------------------------- illegal actions
def test_illegal_action_raises_and_changes_nothing():
    aec = pe.env(render_mode="ansi")
    aec.reset(seed=3)
    rng = np.random.default_rng(0)
    for _ in range(7):  # into the middle of a trick
        obs = aec.observe(aec.agent_selection)
        aec.step(int(sample_legal(obs["action_mask"][None].astype(bool), rng)[0]))
    mask = aec.observe(aec.agent_selection)["action_mask"]
    illegal = np.flatnonzero(mask == 0)
    assert illegal.size
    before = snapshot(aec)
    for action in illegal[:: max(1, illegal.size // 10)]:
        with pytest.raises(ValueError, match=aec.agent_selection):
            aec.step(int(action))
        assert_same(before, snapshot(aec))
    raw = raw_env(render_mode="ansi")
    raw.reset(seed=3)
    before = snapshot(raw)
    for bad in (raw.rules.num_actions, -1, 1.5, "3", None):
        with pytest.raises(ValueError):
            raw.step(bad)
        assert_same(before, snapshot(raw))


def test_leader_may_not_pass_message():
    aec = raw_env()
    aec.reset(seed=0)
    with pytest.raises(ValueError, match="may not pass"):
        aec.step(pe.PASS)


# ----------------------------------------------------------------------------- options
STANDARD_DEAL = [
    "3C 3D 4C 4D 5C 5D 6C 6D 7C 7D 8C 8D 9C".split(),
    "3H 4H 5H 6H 7H 8H 9H 10H JH QH KH AH 2H".split(),
    "3S 4S 5S 6S 7S 8S 9S 10S JS QS KS AS 2S".split(),
    "9D 10C 10D JC JD QC QD KC KD AC AD 2C 2D".split(),
]


def test_deal_option_fixes_hands_and_three_of_clubs_leads():
    aec = raw_env(render_mode="ansi")
    aec.reset(seed=1, options={"deal": STANDARD_DEAL, "dealer": 3})
    assert aec.agent_selection == "player_0"  # holds the 3 of clubs
    hand = aec.observe("player_0")["observation"][layout(aec.rules)["hand"]]
    assert hand.tolist() == [2, 2, 2, 2, 2, 2, 1, 0, 0, 0, 0, 0, 0]
    assert aec.game.cards == [sorted(h, key=lambda c: pe.core.cards.card_sort_key(c)) for h in STANDARD_DEAL]
    assert "Hand of player_0 (13): 3♣ 3♦ 4♣ 4♦" in aec.render_text()


def test_roles_option_starts_with_the_exchange():
    roles = {"player_0": "trou_du_cul", "player_1": "vice_trou", "player_2": "vice_president", "player_3": "president"}
    aec = raw_env(render_mode="ansi")
    aec.reset(seed=2, options={"deal": STANDARD_DEAL, "roles": roles})
    lay = layout(aec.rules)
    assert aec.agent_selection == "player_3"  # the Président gives back first
    assert aec.infos["player_3"]["role"] == "president" and aec.infos["player_0"]["role"] == "trou_du_cul"
    obs = aec.observe("player_3")
    assert obs["observation"][lay["phase"]].tolist() == [1, 0]
    assert obs["observation"][lay["gives_left"]][0] == 2
    received = obs["observation"][lay["received"]]
    assert received.sum() == 2 and received[5] == 1 and received[0] == 0  # the Trou du cul's best: 8C and 9C
    gave = aec.observe("player_0")["observation"][lay["gave"]]
    assert gave.tolist() == received.tolist()
    assert "8C" in aec.game.cards[3] and "9C" in aec.game.cards[3] and "8C" not in aec.game.cards[0]
    # Everyone sees that the exchange is under way, not which cards moved.
    other = aec.observe("player_1")["observation"]
    assert other[lay["received"]].sum() == 0 and other[lay["phase"]].tolist() == [1, 0]
    give = pe.encode_give(aec.rules, "3")
    assert aec.observe("player_3")["action_mask"][give] == 0  # holds no 3
    aec.step(pe.encode_give(aec.rules, "9"))
    assert aec.agent_selection == "player_3"
    aec.step(pe.encode_give(aec.rules, "10"))
    assert aec.agent_selection == "player_2"  # the Vice-Président gives back next
    aec.step(pe.encode_give(aec.rules, "3"))
    assert aec.agent_selection == "player_0"  # then the Trou du cul leads
    assert aec.observe("player_0")["observation"][lay["received"]].tolist()[6:8] == [1, 1]
    assert sorted(aec.game.cards[0]).count("10C") + sorted(aec.game.cards[0]).count("10D") == 1
    assert "Trou du cul" in aec.render()


@pytest.mark.parametrize(
    "options",
    [
        {"deal": [["3C"]] * 4},
        {"deal": STANDARD_DEAL[:3]},
        {"deal": [STANDARD_DEAL[0] + ["JK"], *STANDARD_DEAL[1:]]},
        {"roles": {"player_0": "president"}},
        {"roles": {"player_0": "king", "player_1": "neutre", "player_2": "neutre", "player_3": "neutre"}},
        {"dealer": 7},
        {"dealer": "1"},
    ],
)
def test_bad_options_raise_and_change_nothing(options):
    aec = raw_env(render_mode="ansi")
    aec.reset(seed=5)
    aec.step(int(np.flatnonzero(aec.observe(aec.agent_selection)["action_mask"])[-1]))
    before = snapshot(aec)
    state_before = aec.game.to_state()
    with pytest.raises(ValueError):
        aec.reset(seed=9, options=options)
    assert_same(before, snapshot(aec))
    for name in ("hands", "current", "scores", "dealer"):
        np.testing.assert_array_equal(getattr(aec.game.to_state(), name), getattr(state_before, name))


def test_unknown_option_warns():
    aec = raw_env()
    with pytest.warns(UserWarning, match="unknown option"):
        aec.reset(seed=0, options={"shuffle": True})


# ----------------------------------------------------------------------------- turn order, rewards, termination
def test_out_players_are_skipped_and_rewards_come_per_manche():
    rules = Rules(n_players=5, manches=3, revolution=True, equal_rank="skip")
    for seed in range(4):
        aec = pe.env(rules=rules)
        aec.reset(seed=seed)
        manche_rewards = []
        terminated_at = []

        def check(aec, agent, action, manche_rewards=manche_rewards, terminated_at=terminated_at):
            u = aec.unwrapped
            if any(u.terminations.values()):
                terminated_at.append(len(manche_rewards))
                assert all(u.terminations.values()) and not any(u.truncations.values())
                manche_rewards.append(dict(u.rewards))
                return
            held = u.observe(u.agent_selection)["observation"][layout(rules)["hand"]].sum()
            assert held > 0, "a player who is out was selected"
            if any(u.rewards.values()):
                manche_rewards.append(dict(u.rewards))

        play_random(aec, np.random.default_rng(seed), on_step=check)
        assert terminated_at == [len(manche_rewards) - 1]
        assert len(manche_rewards) in (rules.manches, rules.manches + 1)
        for rewards in manche_rewards:
            assert sum(rewards.values()) == pytest.approx(0.0, abs=1e-5)
            assert sorted(rewards.values()) == pytest.approx(sorted(reward_table(rules).tolist()))
        assert not aec.agents


def test_final_infos_and_cumulative_rewards():
    rules = Rules(manches=2, scoring="president_vice")
    aec = raw_env(rules=rules, reward_mode="points")
    aec.reset(seed=11)
    totals = dict.fromkeys(aec.possible_agents, 0.0)
    rng = np.random.default_rng(1)
    while not any(aec.terminations.values()):
        obs = aec.observe(aec.agent_selection)
        aec.step(int(sample_legal(obs["action_mask"][None].astype(bool), rng)[0]))
        for agent, reward in aec.rewards.items():
            totals[agent] += reward
    info = aec.infos["player_0"]
    scores = info["scores"]
    winner = info["winner"]
    assert scores[winner] == max(scores.values())
    assert {i["finish_position"] for i in aec.infos.values()} == set(range(4))
    assert sum(scores.values()) == 3 * 2  # 2 + 1 points per regular manche; a decisive manche adds none
    if not info["decisive"]:
        assert totals == pytest.approx({a: float(s) for a, s in scores.items()})
    for agent in aec.possible_agents:
        obs = aec.observe(agent)
        assert not obs["action_mask"].any()
        assert obs["observation"].shape == (layout(rules).size,)
    text = aec.render_text()
    assert "Winner" in text and winner in text
    # Agents leave with None; a real action is refused.
    with pytest.raises(ValueError):
        aec.step(0)
    while aec.agents:
        aec.step(None)


def test_render_without_mode_warns():
    aec = raw_env()
    aec.reset(seed=0)
    with pytest.warns(UserWarning, match="render"):
        assert aec.render() is None


def test_human_render_prints(capsys):
    aec = raw_env(render_mode="human")
    aec.reset(seed=0)
    assert aec.render() is None
    assert "← to act" in capsys.readouterr().out


# ----------------------------------------------------------------------------- determinism and hidden information
def trajectory(rules, seed, disturb):
    aec = pe.env(rules=rules)
    aec.reset(seed=seed)
    rng = np.random.default_rng(seed)
    seen = []
    for agent in aec.agent_iter():
        obs, reward, terminated, truncated, info = aec.last()
        seen.append((agent, obs["observation"].tobytes(), obs["action_mask"].tobytes(), reward, repr(info)))
        if disturb:
            random.seed(random.random())
            np.random.seed(np.random.randint(2**31))
            np.random.random(10)
        aec.step(None if terminated else int(sample_legal(obs["action_mask"][None].astype(bool), rng)[0]))
    return seen


@pytest.mark.parametrize("rules", [Rules(manches=2), ALL_RULES[1], RANDOM_RULES[0]], ids=["manches2", "preset", "rnd"])
def test_determinism_with_disturbed_global_rngs(rules):
    first = trajectory(rules, 7, disturb=False)
    second = trajectory(rules, 7, disturb=True)
    assert first == second
    assert trajectory(rules, 8, disturb=False) != first


def test_same_seed_same_deal():
    a, b = raw_env(render_mode="ansi"), raw_env(render_mode="ansi")
    a.reset(seed=42)
    b.reset(seed=123)
    b.reset(seed=42)
    assert a.game.cards == b.game.cards and a.agent_selection == b.agent_selection


def test_observation_ignores_other_players_hidden_cards():
    rules = Rules()
    deal_a = [list(h) for h in STANDARD_DEAL]
    deal_b = [list(h) for h in STANDARD_DEAL]
    # Players 1 and 2 swap a K and a 5: their counts stay equal, their hands differ.
    deal_b[1][deal_b[1].index("KH")], deal_b[2][deal_b[2].index("5S")] = "5S", "KH"
    a, b = raw_env(rules), raw_env(rules)
    a.reset(seed=0, options={"deal": deal_a, "dealer": 3})
    b.reset(seed=0, options={"deal": deal_b, "dealer": 3})
    rng = np.random.default_rng(0)
    compared = 0
    while not a.terminations["player_0"]:
        for agent in ("player_0", "player_3"):
            np.testing.assert_array_equal(a.observe(agent)["observation"], b.observe(agent)["observation"])
            np.testing.assert_array_equal(a.observe(agent)["action_mask"], b.observe(agent)["action_mask"])
        compared += 1
        assert a.agent_selection == b.agent_selection
        both = a.observe(a.agent_selection)["action_mask"] & b.observe(b.agent_selection)["action_mask"]
        if not both.any():  # the swapped cards are all a player has left: the games part here
            break
        action = int(sample_legal(both[None].astype(bool), rng)[0])
        a.step(action)
        b.step(action)
    assert compared > 20


# ----------------------------------------------------------------------------- suits
def test_cards_follow_the_engine_counts():
    for rules in (ALL_RULES[0], Rules(n_players=6, decks=2, jokers=2, twos_wild=True, manches=2)):
        aec = raw_env(rules=rules, render_mode="ansi")
        aec.reset(seed=4)
        full = sorted(deck(rules.decks, rules.jokers))

        def check(aec, agent, action, rules=rules, full=full):
            u = aec.unwrapped
            if u.terminations.get(agent):
                return
            game = u.game
            counts = [game.hands[seat] for seat in game.seat_of_player]
            for player, hand in enumerate(game.cards):
                got = np.zeros(rules.n_ranks, np.int64)
                for card in hand:
                    got[pe.core.cards.parse_card(card)[0]] += 1
                np.testing.assert_array_equal(got, counts[player])
            held = [c for h in game.cards for c in h]
            if u.game.state.n_out[0] == 0 and not u.game.state.played[0].any():
                assert sorted(held) == full
            else:
                assert not (set(held) - set(full))
            u.render_text()

        play_random(aec, np.random.default_rng(2), on_step=check)


@pytest.mark.slow
@pytest.mark.parametrize("seed", range(20))
def test_many_random_rules_play_through(seed):
    """Random rules, random legal play, with the render on: every game ends within its manches (plus a decisive
    one), each manche's zero-sum rewards sum to 0, the hands shown (suits tracked) hold as many cards as the
    engine counts and no card more often than the deck has it, and the end names a winner with the best total and
    every player's final place."""
    rules = random_rules(np.random.default_rng(1000 + seed))
    aec = pe.env(rules=rules, render_mode="ansi")
    raw = aec.unwrapped
    full_deck = Counter(deck(rules.decks, rules.jokers))
    for game in range(3):
        aec.reset(seed=seed * 10 + game)
        manches, texts, final = [], [], {}

        def check(a, agent, action, manches=manches, texts=texts, final=final):
            texts.append(a.render())
            if raw.terminations and all(raw.terminations.values()) and not final:
                final.update(copy.deepcopy(raw.infos))  # the infos at the end (agents leave with theirs)
            if raw.manche_over:
                manches.append(sum(raw.rewards.values()))
            elif not any(raw.terminations.values()):
                held = Counter(card for hand in raw.game.cards for card in hand)
                assert held.total() == sum(raw.game.n_held) and held <= full_deck

        steps = play_random(aec, np.random.default_rng(seed), on_step=check)
        assert 0 < steps < 100_000 and all(text for text in texts)
        assert rules.manches <= len(manches) <= rules.manches + 1
        assert manches == pytest.approx([0.0] * len(manches), abs=1e-4)
        assert all(raw.terminations.values()) and not raw.agents  # everyone terminated and left
        assert sorted(final) == sorted(raw.possible_agents)
        scores, winner = final["player_0"]["scores"], final["player_0"]["winner"]
        assert scores[winner] == max(scores.values())
        assert sorted(info["finish_position"] for info in final.values()) == list(range(rules.n_players))


def test_simultaneous_exchanges_of_the_same_rank_keep_their_suits():
    """Both pairs give a 2 at once: each receiver gets his own partner's card."""
    deal = [[r + suit for r in "3 4 5 6 7 8 9 10 J Q K A 2".split()] for suit in "CDHS"]
    roles = {"player_0": "president", "player_1": "vice_president", "player_2": "vice_trou", "player_3": "trou_du_cul"}
    aec = raw_env(render_mode="ansi")
    aec.reset(seed=0, options={"deal": deal, "roles": roles})
    assert {"AS", "2S"} <= set(aec.game.cards[0]) and "2H" not in aec.game.cards[0]
    assert "2H" in aec.game.cards[1] and "2S" not in aec.game.cards[1]


def test_action_space_sample_is_legal_for_the_agent_to_act():
    """Unmasked ``sample()`` (RLlib's env checker steps such samples) gives an action the env accepts."""
    env = pe.env(rules=pe.Rules(manches=1))  # one manche ends within the 300 steps
    env.reset(seed=3)
    for _ in range(300):
        agent = env.agent_selection
        if env.terminations[agent]:
            break
        action = env.action_space(agent).sample()
        assert env.observe(agent)["action_mask"][action] == 1
        env.step(action)
    assert all(env.terminations.values())


# ----------------------------------------------------------------------------- clients: copies, TorchRL, action types
def play_steps(aec, rng, n):
    """``n`` random legal decisions (or fewer if the game ends)."""
    for _ in range(n):
        obs, _, terminated, _, _ = aec.last()
        if terminated:
            return
        aec.step(int(sample_legal(obs["action_mask"][None].astype(bool), rng)[0]))


@pytest.mark.parametrize("copier", ["deepcopy", "pickle"])
@pytest.mark.parametrize("make", [pe.env, raw_env], ids=["wrapped", "raw"])
def test_a_copy_mid_game_continues_the_same_game(copier, make):
    import copy
    import pickle

    rules = Rules(n_players=5, manches=2, revolution=True)
    aec = make(rules=rules, render_mode="ansi")
    aec.reset(seed=4)
    play_steps(aec, np.random.default_rng(0), 60)
    twin = copy.deepcopy(aec) if copier == "deepcopy" else pickle.loads(pickle.dumps(aec))
    assert twin.unwrapped is not aec.unwrapped
    rng = np.random.default_rng(1)
    steps = 0
    for agent in aec.agent_iter(10_000):
        assert twin.agent_selection == agent
        ours, theirs = aec.last(), twin.last()
        for key in ("observation", "action_mask"):
            np.testing.assert_array_equal(ours[0][key], theirs[0][key])
        assert ours[1:4] == theirs[1:4] and repr(ours[4]) == repr(theirs[4])
        assert aec.unwrapped.render_text() == twin.unwrapped.render_text()
        if ours[2]:
            action = None
        else:
            action = int(sample_legal(ours[0]["action_mask"][None].astype(bool), rng)[0])
            twin.action_space(agent).seed(0)
            assert twin.observe(agent)["action_mask"][twin.action_space(agent).sample()]  # rebound to the twin
        aec.step(action)
        twin.step(action)
        steps += 1
    assert not twin.agents and steps > 10


def test_numeric_infos_keep_their_keys_and_shapes():
    """``info_schema="numeric"``: the same keys with numbers of the same shape at every step (TorchRL's need)."""
    rules = Rules(n_players=4, manches=2, finish_on_two="penalty")
    aec = raw_env(rules=rules, info_schema="numeric")
    aec.reset(seed=2)
    shapes = {key: np.shape(value) for key, value in aec.infos["player_0"].items()}
    assert set(shapes) == {
        "role", "seat", "manche", "decisive", "scores", "finish_position", "finish_manche", "winner", "match_position"
    }  # fmt: skip
    assert shapes["scores"] == (4,)

    def check(aec, *_):
        for info in aec.infos.values():
            assert {key: np.shape(value) for key, value in info.items()} == shapes
            assert all(np.asarray(value).dtype.kind in "iu" for value in info.values())

    play_random(aec, np.random.default_rng(0), on_step=check)
    rich = raw_env(rules=rules)
    rich.reset(seed=2)
    play_random(rich, np.random.default_rng(0))
    # Same game, same facts: the rich schema's names are the numeric schema's codes.
    assert aec.infos == {} and rich.infos == {}
    with pytest.raises(ValueError, match="info_schema"):
        raw_env(info_schema="tensor")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        api_test(pe.env(rules=rules, info_schema="numeric"), num_cycles=300)


def test_numeric_infos_hold_the_rich_infos_facts():
    rules = Rules(manches=2)
    numeric, rich = raw_env(rules=rules, info_schema="numeric"), raw_env(rules=rules)
    numeric.reset(seed=6)
    rich.reset(seed=6)
    rng = np.random.default_rng(3)
    while not any(rich.terminations.values()):
        action = int(sample_legal(rich.observe(rich.agent_selection)["action_mask"][None].astype(bool), rng)[0])
        rich.step(action)
        numeric.step(action)
        for agent in rich.possible_agents:
            r, n = rich.infos[agent], numeric.infos[agent]
            assert n["role"] == (-1 if r["role"] is None else ROLE_NAMES.index(r["role"]))
            assert (n["seat"], n["manche"], n["decisive"]) == (r["seat"], r["manche"], int(r["decisive"]))
            assert n["scores"].tolist() == [r["scores"][a] for a in rich.possible_agents]
            assert n["finish_position"] == r.get("finish_position", -1)
            assert n["finish_manche"] == r.get("finish_manche", -1)
            assert n["winner"] == (rich.possible_agents.index(r["winner"]) if "winner" in r else -1)
    assert numeric.infos["player_0"]["winner"] >= 0


def test_torchrl_pettingzoo_wrapper_plays_a_game_with_masks():
    torchrl_envs = pytest.importorskip("torchrl.envs")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # TorchRL names the PettingZoo version it was tested with
        env = torchrl_envs.PettingZooWrapper(env=pe.env(info_schema="numeric"), use_mask=True, seed=0)
        rollout = env.rollout(3000, break_when_any_done=True)
    assert bool(rollout["next", "done"][-1]) and not rollout["next", "done"][:-1].any()
    n_decisions = 0
    for group in env.group_map:
        acting = rollout[group, "mask"].squeeze(-1)
        actions = rollout[group, "action"][acting]
        masks = rollout[group, "action_mask"][acting]
        assert masks.gather(-1, actions.long().unsqueeze(-1)).all()  # every sampled action was legal
        n_decisions += int(acting.sum())
        info = rollout["next", group, "info"]
        assert set(info.keys()) >= {"role", "finish_position", "winner"}
    assert n_decisions == rollout.shape[0] > 20
    final = {group: rollout["next", group, "info", "winner"][-1].item() for group in env.group_map}
    assert len(set(final.values())) == 1 and 0 <= next(iter(final.values())) < 4


@pytest.mark.parametrize("dtype", [np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64])
@pytest.mark.parametrize("make", [pe.env, raw_env], ids=["wrapped", "raw"])
def test_numpy_integer_actions_of_every_dtype_and_shape_one(dtype, make):
    aec, plain = make(), raw_env()
    aec.reset(seed=8)
    plain.reset(seed=8)
    rng = np.random.default_rng(0)
    for step in range(40):
        action = int(sample_legal(plain.observe(plain.agent_selection)["action_mask"][None].astype(bool), rng)[0])
        aec.step(dtype(action) if step % 2 else np.array([action], dtype=dtype))
        plain.step(action)
        np.testing.assert_array_equal(aec.last()[0]["observation"], plain.last()[0]["observation"])


@pytest.mark.parametrize(
    "bad", [1.0, np.float32(1), np.array([1.0]), True, np.bool_(True), np.array([True]), np.array([1, 2]), "1"]
)
def test_non_integer_actions_are_refused_clearly(bad):
    aec = raw_env()
    aec.reset(seed=0)
    before = snapshot(aec)
    with pytest.raises(ValueError, match="action must be an integer"):
        aec.step(bad)
    assert_same(before, snapshot(aec))
    wrapped = pe.env()
    wrapped.reset(seed=0)
    with pytest.raises((ValueError, AssertionError), match="action"):  # PettingZoo's bounds check comes first
        wrapped.step(bad)


# ----------------------------------------------------------------------------- stepping at the wrong time
def test_stepping_after_every_agent_left_is_a_clear_error():
    aec = pe.env(rules=Rules(manches=1))
    aec.reset(seed=1)
    play_random(aec, np.random.default_rng(0))
    assert not aec.agents
    for action in (None, 0):
        with pytest.raises(RuntimeError, match="reset"):
            aec.step(action)
    raw = raw_env(rules=Rules(manches=1))
    raw.reset(seed=1)
    rng = np.random.default_rng(0)
    while not any(raw.terminations.values()):
        raw.step(int(sample_legal(raw.observe(raw.agent_selection)["action_mask"][None].astype(bool), rng)[0]))
    with pytest.raises(ValueError, match="may only step None"):
        raw.step(0)
    while raw.agents:
        raw.step(None)
    with pytest.raises(RuntimeError, match="every agent left"):
        raw.step(None)
    raw.reset(seed=2)  # and a reset starts again
    assert raw.agents == raw.possible_agents


# ----------------------------------------------------------------------------- finish_position as soon as known
def _own_flag(aec, agent, segment):
    return aec.observe(agent)["observation"][layout(aec.rules)[segment]]


@pytest.mark.parametrize("finish_on_two", ["allowed", "penalty"])
def test_finish_position_appears_when_final_and_is_never_revised(finish_on_two):
    """A player's place appears in ``infos`` the step he goes out, except on a 2 under ``penalty`` (only at the
    manche end: later offenders and the normal finishers' count decide it); it never changes afterwards."""
    rules = Rules(n_players=5, manches=3, finish_on_two=finish_on_two)
    seen_early = seen_penalized = 0
    for seed in range(6):
        aec = raw_env(rules=rules)
        aec.reset(seed=seed)
        rng = np.random.default_rng(seed)
        early: dict[str, tuple[int, int]] = {}
        while not any(aec.terminations.values()):
            agent, manche = aec.agent_selection, aec.infos[aec.agent_selection]["manche"]
            known_before = aec.infos[agent].get("finish_manche") == manche
            legal = np.flatnonzero(aec.observe(agent)["action_mask"])
            keep_twos = [a for a in legal if pe.decode(rules, int(a))[1:2] != ("2",)]  # so some go out on a 2
            aec.step(int(rng.choice(keep_twos or legal)))
            info = aec.infos[agent]
            manche_over = any(aec.rewards.values())
            if manche_over:
                finals = {a: aec.infos[a]["finish_position"] for a in aec.possible_agents}
                assert sorted(finals.values()) == list(range(rules.n_players))
                assert all(aec.infos[a]["finish_manche"] == manche for a in aec.possible_agents)
                for a, (position, at) in early.items():
                    assert at == manche and finals[a] == position  # never revised
                early = {}
                continue
            out = _own_flag(aec, agent, "hand").sum() == 0
            penalized = bool(_own_flag(aec, agent, "penalized")[0])
            if out and not known_before:
                if penalized:
                    assert info.get("finish_manche") != manche
                    seen_penalized += 1
                else:
                    assert info["finish_manche"] == manche
                    early[agent] = (info["finish_position"], manche)
                    seen_early += 1
    assert seen_early > 10
    assert seen_penalized > 0 or finish_on_two != "penalty"


# ----------------------------------------------------------------------------- one truth with the batched engine
class EnvSide:
    """The AEC env (its one-game path) for the lockstep harness: who acts, the mask, every agent's observation;
    a step gives the manche rewards, the terminations and, at the end, the winner."""

    def __init__(self, rules: Rules, seed: int) -> None:
        self.env = raw_env(rules=rules)
        self.env.reset(seed=seed)

    def facts(self) -> dict:
        env = self.env
        if all(env.terminations.values()):
            return {"over": True}
        views = {name: env.observe(name)["observation"] for name in env.possible_agents}
        return {"player": env.agent_selection, "mask": env.observe(env.agent_selection)["action_mask"] == 1, **views}

    def step(self, action: int) -> dict:
        env = self.env
        env.step(action)
        over = all(env.terminations.values())
        return {
            "rewards": [env.rewards[name] for name in env.possible_agents],
            "terminations": sorted(set(env.terminations.values())),  # all False, or all True at the end
            "winner": env.infos["player_0"]["winner"] if over else None,
        }


class EngineSide:
    """``VecGame(batch_size=1)`` for the lockstep harness, the same facts as :class:`EnvSide`."""

    def __init__(self, rules: Rules, seed: int) -> None:
        from president_env.core.vec_game import VecGame

        self.rules, self.game, self.over = rules, VecGame(rules, batch_size=1, seed=seed), False

    def facts(self) -> dict:
        from president_env.core.observation import observe

        if self.over:
            return {"over": True}
        game, names = self.game, [f"player_{p}" for p in range(self.rules.n_players)]
        seats = [game.state.seat_of_player[:, p].astype(np.int64) for p in range(self.rules.n_players)]
        views = {name: observe(self.rules, game.state, seat)[0] for name, seat in zip(names, seats)}
        return {"player": f"player_{game.current_player[0]}", "mask": game.legal_mask()[0], **views}

    def step(self, action: int) -> dict:
        rewards, done = self.game.step(np.array([action]))
        self.over = bool(done[0])
        return {
            "rewards": rewards[0].tolist(),
            "terminations": [self.over],
            "winner": f"player_{self.game.last_winner[0]}" if self.over else None,
        }


@pytest.mark.parametrize("rules", ALL_RULES[:8], ids=RULE_IDS[:8])
def test_the_env_plays_the_engines_game_bit_for_bit(rules):
    """The AEC env (on its one-game fast path) and ``VecGame(batch_size=1)`` from the same seed, in the lockstep
    harness: the same player to act, masks, observations of every agent (dtype and bytes), manche rewards, the
    game's end and its winner."""
    rng = np.random.default_rng(0)
    steps = lockstep(
        EnvSide(rules, 17),
        EngineSide(rules, 17),
        choose=lambda facts, t: int(sample_legal(facts["mask"][None], rng)[0]),
        until=lambda result, t: result["winner"] is not None,
        context=str(rules),
    )
    assert steps > rules.n_players
