"""What the library saves as a replay, it loads: every preset at 3 to 8 players, drawn roles with reseating and
exchanges of 3 and 4 pairs (the Neutres' order), any player label, the longest file names, huge numbers."""

from __future__ import annotations

import json

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import president_env as pe
from president_env.core.deals import parse_roles
from president_env.core.presets import PRESETS
from president_env.evaluation.replays import save_games
from president_env.game.replay import Replay, load_replay, loads, replay_steps
from president_env.game.single import MAX_NAME, SingleGame


def random_game(rules: pe.Rules, seed: int, players=None) -> SingleGame:
    game = SingleGame.table(rules, seed=seed, players=players, source="test")
    rng = np.random.default_rng(seed)
    while not game.done:
        game.step(int(rng.choice(np.flatnonzero(game.legal_mask()))))
    return game


def assert_saved_game_loads(game: SingleGame, path) -> None:
    replay = Replay.of(game)
    loaded = load_replay(replay.save(path))
    assert loaded.to_dict() == replay.to_dict()
    assert [event for _, event in replay_steps(loaded)] == game.events


@pytest.mark.parametrize("n_players", range(3, 9))
@pytest.mark.parametrize("preset", PRESETS)
def test_every_preset_at_every_table_size_saves_replays_that_load(preset, n_players, tmp_path):
    rules = pe.load_preset(preset).replace(n_players=n_players, manches=2)
    for seed in range(3):
        assert_saved_game_loads(random_game(rules, seed), tmp_path / f"{seed}.json")


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    n_players=st.integers(5, 8),
    exchange=st.sampled_from([(2, 1, 1), (2, 1, 1, 1), (1, 1, 1), (3, 2, 1, 1)]),
    reseat=st.booleans(),
    seed=st.integers(0, 2**32),
)
def test_drawn_roles_with_reseating_and_many_pairs_play_back(n_players, exchange, reseat, seed):
    rules = pe.Rules(n_players=n_players, initial_roles="draw", reseat_by_role=reseat, exchange=exchange, manches=1)
    game = random_game(rules, seed)
    replay = loads(Replay.of(game).dumps())
    assert [event for _, event in replay_steps(replay)] == game.events


def test_the_family_table_of_six_saved_by_president_eval_loads(tmp_path):
    rules = pe.load_preset("family").replace(n_players=6, manches=2)
    paths = save_games(["random"] * 6, rules, 4, tmp_path, seed=1)
    for path in paths:
        load_replay(path)


def test_roles_are_recorded_with_the_positions_that_order_the_neutres():
    rules = pe.Rules(n_players=6, initial_roles="draw", reseat_by_role=True, exchange=(2, 1, 1), manches=1)
    for seed in range(20):
        game = SingleGame.table(rules, seed=seed)
        data = Replay.of(game).to_dict()
        positions = data["role_positions"]
        assert sorted(positions) == list(range(6))
        names = ["president", "vice_president", "neutre", "neutre", "vice_trou", "trou_du_cul"]
        assert data["roles"] == [names[p] for p in positions]
        # reseat_by_role: the Président sits at 0, the Trou du cul at 1, the rest by position.
        assert game.seat_of_player[positions.index(0)] == 0
        assert game.seat_of_player[positions.index(5)] == 1


def test_finishing_positions_are_a_roles_assignment_too():
    rules = pe.Rules(n_players=6)
    assert parse_roles(rules, [3, 0, 5, 2, 1, 4]).tolist() == [3, 0, 5, 2, 1, 4]
    env = pe.env(rules=pe.Rules(n_players=6, exchange=(2, 1, 1), reseat_by_role=True))
    env.reset(seed=0, options={"roles": [3, 0, 5, 2, 1, 4]})
    seats = [env.infos[f"player_{i}"]["seat"] for i in range(6)]
    env.reset(seed=0, options={"roles": [2, 0, 5, 3, 1, 4]})  # the two Neutres swapped
    swapped = [env.infos[f"player_{i}"]["seat"] for i in range(6)]
    assert seats[0] != swapped[0] and seats[3] != swapped[3] and seats[0] == swapped[3]
    with pytest.raises(ValueError, match="each of 0..5 to one player"):
        parse_roles(rules, [0, 0, 1, 2, 3, 4])


def test_role_positions_must_agree_with_the_roles():
    rules = pe.Rules(n_players=6, initial_roles="draw", manches=1)
    data = Replay.of(random_game(rules, 0)).to_dict()
    bad = dict(data, role_positions=list(reversed(data["role_positions"])))
    with pytest.raises(ValueError, match="role_positions .* do not give the roles"):
        Replay.from_dict(bad)
    with pytest.raises(ValueError, match="role_positions must be null or 6 finishing positions"):
        Replay.from_dict(dict(data, role_positions=[0, 1, 2]))
    # A replay written before role_positions (roles by name only) still loads.
    old = {key: value for key, value in data.items() if key != "role_positions"}
    assert Replay.from_dict(old).role_positions is None


@pytest.mark.parametrize(
    "label",
    ["", "   ", "x" * 150, "bell\x07and\ttab", "line\nbreak", "checkpoints/" + "d" * 120 + "/policy.pt"],
)
def test_any_player_label_gives_a_replay_that_loads(label, tmp_path):
    rules = pe.Rules(manches=1)
    game = random_game(rules, 0, players=[label, "random", "random", "random"])
    assert_saved_game_loads(game, tmp_path / "r.json")
    saved = game.record.players[0]
    assert 0 < len(saved) <= MAX_NAME and saved.isprintable()
    if label.endswith("policy.pt"):
        assert saved.startswith("…") and saved.endswith("/policy.pt")
    if label.strip() == "":
        assert saved == "player_0"


def test_save_refuses_what_load_would_refuse_and_writes_nothing(tmp_path):
    replay = Replay.of(random_game(pe.Rules(manches=1), 0))
    replay.players[2] = "x" * (MAX_NAME + 1)
    path = tmp_path / "r.json"
    with pytest.raises(ValueError, match=r"replay players\[2\] must be a printable name"):
        replay.save(path)
    assert not path.exists() and not list(tmp_path.iterdir())


def test_a_file_name_of_255_bytes_saves(tmp_path):
    path = tmp_path / ("r" * 250 + ".json")
    assert len(path.name.encode()) == 255
    assert_saved_game_loads(random_game(pe.Rules(manches=1), 0), path)
    assert [p.name for p in tmp_path.iterdir()] == [path.name]  # no temporary file left


def test_a_replay_holding_a_huge_number_is_refused_naming_the_replay():
    data = Replay.of(random_game(pe.Rules(manches=1), 0)).to_dict()
    text = json.dumps(data).replace('"dealer": ', '"dealer": ' + "9" * 5000 + ', "x": ', 1)
    with pytest.raises(ValueError, match="^replay holds an integer of more than 4300 digits"):
        loads(text)
