"""Replays (``president_env.game.replay``): round trips, playback on the recorded deals, bad files, the CLIs."""

from __future__ import annotations

import io
import json
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

import president_env as pe
from president_env import agents
from president_env.core.presets import PRESETS
from president_env.game.replay import MAX_BYTES, Replay, load_replay, loads, replay_steps, start_replay
from president_env.game.single import SingleGame


def play(rules, seed: int, names=("heuristic-2", "random")) -> SingleGame:
    players = [names[i % len(names)] for i in range(rules.n_players)]
    lineup = [agents.make(name, rules, seed=i) for i, name in enumerate(players)]
    game = SingleGame.table(rules, seed=seed, players=players, source="test")
    while not game.done:
        player = game.current_player
        game.step(lineup[player].act(game.observe_player(player), {}))
    return game


@pytest.mark.parametrize("preset", PRESETS)
def test_round_trip_and_playback_on_every_preset(preset, tmp_path):
    rules = pe.load_preset(preset).replace(manches=2)
    game = play(rules, seed=3)
    replay = Replay.of(game)
    assert replay.result["scores"] == game.totals
    assert len(replay.deals) == replay.result["manches"] >= 2
    path = replay.save(tmp_path / "r.json")
    loaded = load_replay(path)
    assert loaded.to_dict() == replay.to_dict()
    assert json.loads(path.read_text())["format"] == "president-replay"
    # Played back: the same events, cards included, and the same result.
    events = [event for _, event in replay_steps(loaded)]
    assert events == game.events
    assert [e.player for e in events] == replay.movers


def test_playback_uses_the_recorded_deals_not_the_seed():
    rules = pe.Rules(manches=3)
    replay = Replay.of(play(rules, seed=8))
    data = replay.to_dict()
    data["seed"] = 12345  # another seed deals other cards, but the recorded ones are dealt
    other = Replay.from_dict(data)
    assert [e for _, e in replay_steps(other)] == [e for _, e in replay_steps(replay)]
    # A deal that is not the deck is refused, naming the manche.
    data["deals"][1][0][0], data["deals"][1][1][0] = data["deals"][1][1][0], data["deals"][1][1][0]
    with pytest.raises(ValueError, match="manche 2"):
        Replay.from_dict(data).check()


def test_the_record_keeps_the_seed_that_dealt_the_game_or_none():
    """An int seed that dealt the game is kept; a game no seed of its own dealt (a reset without one, the next game
    of an autoreset: the generator goes on; a Generator given) records ``null``, not the seed of an earlier game.
    Such a replay loads and plays back on its recorded deals, to the same events and ``null`` again."""
    rules = pe.Rules(manches=2)
    game = SingleGame.table(rules, seed=7)
    assert game.record.seed == 7
    game.reset()
    assert game.record.seed is None and Replay.of(game).to_dict()["seed"] is None
    game.reset(seed=9)
    assert game.record.seed == 9
    fresh = SingleGame.table(rules)  # a fresh int seed, which deals the same game again
    assert SingleGame.table(rules, seed=fresh.record.seed).record.deals == fresh.record.deals
    assert SingleGame(rules, seed=np.random.default_rng(1)).record.seed is None
    auto = SingleGame(pe.Rules(manches=1), seed=3)
    while auto.ended is None:
        auto.step(int(np.flatnonzero(auto.legal_mask())[0]))
    assert (auto.ended.record.seed, auto.record.seed) == (3, None)
    # Unseeded, played out and saved: loaded back and played on its deals, the same events and no seed.
    played = play(rules, seed=4)
    played.reset()
    lineup = [agents.make("heuristic-2", rules, seed=i) for i in range(rules.n_players)]
    while not played.done:
        player = played.current_player
        played.step(lineup[player].act(played.observe_player(player), {}))
    replay = loads(Replay.of(played).dumps())
    assert replay.seed is None
    steps = list(replay_steps(replay))
    assert [event for _, event in steps] == played.events and steps[-1][0].record.seed is None


def test_cards_follow_the_aec_env():
    """The AEC env holds the same one-game holder: the same cards, players to act and rewards."""
    rules = pe.Rules(manches=2)
    env = pe.env(rules=rules, render_mode="ansi", reward_mode="points")
    env.reset(seed=4)
    raw = env.unwrapped
    game = SingleGame.table(rules, seed=4)
    heuristic = agents.make("heuristic-3", rules)
    steps = 0
    while not game.done:
        assert raw.game.cards == game.cards
        assert raw.agent_selection == f"player_{game.current_player}"
        action = heuristic.act(game.observe_player(game.current_player), {})
        env.step(action)
        event = game.step(action)
        if event.manche_over:
            assert [raw.rewards[a] for a in raw.possible_agents] == event.rewards
        steps += 1
    assert raw.infos["player_0"]["scores"] == {f"player_{i}": s for i, s in enumerate(game.scores)}
    assert steps > 60


def test_illegal_step_changes_nothing():
    rules = pe.Rules()
    game = SingleGame.table(rules, seed=1)
    cards, mask = [list(h) for h in game.cards], game.legal_mask()
    illegal = int(np.flatnonzero(~mask)[1])
    with pytest.raises(ValueError):
        game.step(illegal)
    with pytest.raises(ValueError, match="integer"):
        game.step("pass")
    assert game.cards == cards and not game.events and (game.legal_mask() == mask).all()


def test_chosen_suits_are_played_and_kept_in_the_replay():
    rules = pe.Rules()
    game = SingleGame.table(rules, seed=1)
    hand = game.cards[game.current_player]
    ranks = [c[:-1] for c in hand]
    rank = next(r for r in ranks if ranks.count(r) >= 2)
    chosen = [c for c in hand if c[:-1] == rank][-1]  # the highest suit of a rank held twice or more
    action = pe.encode_play(rules, rank, 1)
    if not game.legal_mask()[action]:
        pytest.skip("the seed's first player cannot lead that rank")
    for bad in ([hand[0], chosen], ["ZZ"], [next(c for c in pe.core.cards.deck() if c not in hand)]):
        with pytest.raises(ValueError):
            game.step(action, cards=bad)
        assert game.cards[game.current_player] == hand and not game.events
    event = game.step(action, cards=[chosen])
    assert event.cards == [chosen] and chosen not in game.cards[event.player]
    data = Replay.of(game).to_dict()
    assert data["actions"][0]["cards"] == [chosen]
    assert [e.cards for _, e in replay_steps(Replay.from_dict(data))] == [[chosen]]


def _replay_dict() -> dict:
    return Replay.of(play(pe.Rules(), seed=2)).to_dict()


def _note(**move) -> dict:
    return {"action": 1, "measure": "mean points", "moves": [{"action": 1, "move": "play 3", "value": 0.5, **move}]}


def _notes(data: dict, note) -> list:
    """One note per action, ``note`` at action 2 (the others valid or null)."""
    notes = [None] * len(data["actions"])
    notes[0] = _note()
    notes[2] = note
    return notes


def test_valid_notes_are_read_back():
    data = _replay_dict()
    data["notes"] = _notes(data, {"action": 0, "measure": None, "moves": []})
    assert loads(json.dumps(data)).notes == data["notes"]


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda d: d.update(format="chess"), "not a replay"),
        (lambda d: d.update(version=2), "version 2 is not supported"),
        (lambda d: d.pop("deals"), "lacks the field 'deals'"),
        (lambda d: d["rules"].update(n_players=9), "n_players"),
        (lambda d: d.update(seed=-1), "seed"),
        (lambda d: d.update(dealer=7), "dealer"),
        (lambda d: d.update(players=["a"]), "players"),
        (lambda d: d["actions"][0].update(action=9999), "action 0"),
        (lambda d: d["actions"][3].update(player=(d["actions"][3]["player"] + 1) % 4), "action 3: recorded for"),
        (lambda d: d["actions"].append({"player": 0, "action": 0}), "already over"),
        (lambda d: d["actions"][1].update(action=int(pe.encode_play(pe.Rules(), "2", 4))), "action 1"),
        (lambda d: d["deals"][0].pop(), "manche 1"),
        (lambda d: d["actions"][0].update(cards=["JK"]), "action 0"),
        (lambda d: d["actions"][0].update(cards="3C"), "cards must be a list"),
        (lambda d: d["actions"].pop(), "do not finish the game"),
        (lambda d: d["result"].update(winner=(d["result"]["winner"] + 1) % 4), "differs"),
        (lambda d: d.update(version=True), "version True is not supported"),
        (lambda d: d.update(version=1.0), "version 1.0 is not supported"),
        (lambda d: d.update(players=["\ud800", "b", "c", "d"]), r"replay players\[0\]"),
        (lambda d: d.update(players=["x" * 101, "b", "c", "d"]), r"replay players\[0\]"),
        (lambda d: d.update(players=[None, "b", "c", "d"]), r"replay players\[0\]"),
        (lambda d: d.update(source={"a": 1}), "replay source"),
        (lambda d: d.update(source="\udfff"), "replay source"),
        (lambda d: d.update(extra_key=["\ud800"]), r"replay extra_key\[0\]"),
        (lambda d: d["actions"][0].update(move="\ud800"), r"replay actions\[0\]\.move"),
        (lambda d: d.update(notes="x"), "replay notes must be null or a list"),
        (lambda d: d.update(notes=[None]), "one entry per action"),
        (lambda d: d.update(notes=_notes(d, {"action": 1, "measure": "m", "moves": "abc"})), r"notes\[2\]: moves"),
        (lambda d: d.update(notes=_notes(d, {"action": "1", "measure": "m", "moves": []})), r"notes\[2\]: action"),
        (lambda d: d.update(notes=_notes(d, {"action": 1, "measure": 3, "moves": []})), r"notes\[2\]: measure"),
        (lambda d: d.update(notes=_notes(d, {"action": 1, "moves": [], "x": 1})), r"notes\[2\]: unknown key"),
        (lambda d: d.update(notes=_notes(d, [1, 2])), r"notes\[2\]: .*object"),
        (lambda d: d.update(notes=_notes(d, _note(move=5))), r"notes\[2\]: moves\[0\]: move"),
        (lambda d: d.update(notes=_notes(d, _note(value="1"))), r"notes\[2\]: moves\[0\]: value"),
        (lambda d: d.update(notes=_notes(d, _note(value=float("nan")))), r"notes\[2\]: moves\[0\]: value"),
        (lambda d: d.update(notes=_notes(d, _note(action=9999))), r"notes\[2\]: moves\[0\]: action"),
        (lambda d: d.update(notes=_notes(d, {"action": 1, "measure": "\ud800", "moves": []})), r"measure"),
        (lambda d: d.update(result=[1]), "replay result must be null or an object"),
        (lambda d: d["result"].update(scores="abc"), r"replay result: scores"),
        (lambda d: d["result"].update(winner=True), r"replay result: winner"),
        (lambda d: d["result"].update(manches=9), "differs"),
        (lambda d: d["deals"].append(d["deals"][0]), "deals but its actions"),
    ],
)
def test_bad_replays_are_refused_with_the_reason(change, message):
    data = _replay_dict()
    change(data)
    with pytest.raises(ValueError, match=message):
        loads(json.dumps(data))


def test_bad_files(tmp_path):
    with pytest.raises(ValueError, match="does not exist"):
        load_replay(tmp_path / "missing.json")
    (tmp_path / "bad.json").write_text("{not json")
    with pytest.raises(ValueError, match="not valid JSON"):
        load_replay(tmp_path / "bad.json")
    with pytest.raises(ValueError, match="not valid JSON"):
        loads("[" * 100_000 + "]" * 100_000)  # too deep: an error, not a crash
    with pytest.raises(ValueError, match="at most"):
        loads(" " * (MAX_BYTES + 1))
    with pytest.raises(ValueError, match="JSON object"):
        loads("[1, 2]")


def test_president_play_saves_a_replay(tmp_path):
    for module in ("rich", "prompt_toolkit"):
        pytest.importorskip(module, reason="president-play needs the play extra")
    from president_env.apps.terminal import main

    path = tmp_path / "out" / "game.json"
    stdin = io.StringIO("#1\n" * 400)
    stdout = io.StringIO()
    argv = ["--seed", "3", "--manches", "1", "--opponents", "heuristic-1", "--seat", "1"]  # 400 inputs: one manche
    code = main([*argv, "--save-replay", str(path)], stdin, stdout)
    assert code == 0
    replay = load_replay(path)
    assert replay.source == "president-play"
    assert replay.players == ["heuristic-1", "human", "heuristic-1", "heuristic-1"]
    winner = f"player_{replay.result['winner']}" if replay.result["winner"] != 1 else "You"
    assert f"{winner}" in stdout.getvalue().split("Final standings")[1].split("<- winner")[0].splitlines()[-1]
    # An abandoned game is saved too, unfinished; the path must be new (checked before the game).
    assert main(["--seed", "3", "--save-replay", str(path)], io.StringIO("#1\n" * 3), io.StringIO()) == 2
    path = tmp_path / "abandoned.json"
    code = main(["--seed", "3", "--save-replay", str(path)], io.StringIO("#1\n" * 3), io.StringIO())
    assert code == 0
    assert load_replay(path).result is None


def test_president_eval_saves_replays(tmp_path, capsys):
    from president_env.evaluation.cli import main

    out = tmp_path / "eval"
    args = ["--agents", "heuristic-3,random", "--deals", "2", "--chunk-deals", "2", "--no-progress", "--out", str(out)]
    assert main([*args, "--save-replays", "2"]) == 0
    files = sorted((out / "replays").glob("*.json"))
    assert [f.name for f in files] == ["game-001.json", "game-002.json"]
    replays = [load_replay(f) for f in files]
    assert all(r.players == ["heuristic-3", "random", "heuristic-3", "random"] for r in replays)
    assert replays[0].deals != replays[1].deals and all(r.result for r in replays)
    with pytest.raises(SystemExit) as exit_:
        main([*args, "--save-replays", "-1"])
    assert exit_.value.code == 2


def test_save_is_atomic_and_never_truncates(tmp_path, monkeypatch):
    path = tmp_path / "game.json"
    good = Replay.of(play(pe.Rules(), seed=2))
    good.save(path)
    before = path.read_bytes()
    bad = Replay.from_dict(good.to_dict())
    bad.players = ["\ud800", "b", "c", "d"]  # cannot be written as UTF-8
    with pytest.raises(ValueError, match=r"players\[0\]"):
        bad.save(path)
    assert path.read_bytes() == before

    def broken_fsync(fd):
        raise OSError("disk full")

    monkeypatch.setattr("os.fsync", broken_fsync)
    with pytest.raises(OSError, match="disk full"):
        Replay.of(play(pe.Rules(), seed=5)).save(path)
    assert path.read_bytes() == before
    assert [p.name for p in tmp_path.iterdir()] == ["game.json"]  # no temporary file left behind
    monkeypatch.undo()
    other = Replay.of(play(pe.Rules(), seed=5))
    other.save(path)
    assert load_replay(path).to_dict() == other.to_dict()
    assert [p.name for p in tmp_path.iterdir()] == ["game.json"]


def _same_rank_gives_deal() -> tuple[list[list[str]], list[str]]:
    """A deal where the Vice-Trou (player_0) and the Trou du cul (player_1) both give 2s: 2H and 2C 2D."""
    others = [c for c in pe.core.cards.deck() if not c.startswith("2")]
    sizes = (12, 11, 12, 13)
    hands, start = [], 0
    for size in sizes:
        hands.append(others[start : start + size])
        start += size
    hands[0].append("2H")
    hands[1] += ["2C", "2D"]
    hands[2].append("2S")
    return hands, ["vice_trou", "trou_du_cul", "president", "vice_president"]


def test_the_exchange_moves_the_very_cards_given():
    """Same-rank gives from both low players: the Président gets the Trou du cul's 2s, not the Vice-Trou's."""
    rules = pe.Rules(manches=2)
    deal, roles = _same_rank_gives_deal()
    expected = [list(hand) for hand in deal]
    for card in ("2C", "2D"):  # Trou du cul -> Président
        expected[1].remove(card)
        expected[2].append(card)
    expected[0].remove("2H")  # Vice-Trou -> Vice-Président
    expected[3].append("2H")
    expected = [pe.core.cards.sort_cards(hand) for hand in expected]
    game = SingleGame.table(rules, seed=1)
    game.reset(seed=1, deals=[deal], roles=[roles])
    assert game.cards == expected
    env = pe.env(rules=rules, render_mode="ansi")
    env.reset(seed=1, options={"deal": deal, "roles": roles})
    assert env.unwrapped.game.cards == expected
    # Played back from the replay's deal, the hands shown are the same.
    heuristic = agents.make("heuristic-3", rules)
    game.step(heuristic.act(game.observe_player(game.current_player), {}))
    game_back, _ = next(replay_steps(Replay.from_dict(Replay.of(game).to_dict())))
    assert game_back.cards == game.cards


def test_save_without_overwrite_leaves_an_existing_file(tmp_path):
    path = tmp_path / "game.json"
    path.write_text("keep me")
    with pytest.raises(FileExistsError):
        Replay.of(play(pe.Rules(manches=1), seed=2)).save(path, overwrite=False)
    assert path.read_text() == "keep me" and [p.name for p in tmp_path.iterdir()] == ["game.json"]


REPLAYS_SAVED_BEFORE = sorted((Path(__file__).parent / "data" / "replays").glob("*.json"))


@pytest.mark.parametrize("path", REPLAYS_SAVED_BEFORE, ids=lambda p: p.stem)
def test_replays_saved_before_the_one_holder_still_load(path):
    """Replays written by the code before ``SingleGame`` held every game: every move (with its recorded suits)
    plays back, the result matches, and the document comes back as it was."""
    replay = load_replay(path)
    assert replay.to_dict() == json.loads(path.read_text())
    events = [event for _, event in replay_steps(replay)]
    assert [e.cards for e in events if e.kind != "pass"] == [c for c in replay.cards if c]
    assert events[-1].game_over and replay.result["manches"] == len(replay.deals)


def _low_pairs_give_the_same_rank(game: SingleGame) -> bool:
    """At the start of a manche: both low players (Trou du cul and Vice-Trou) gave a card of one same rank."""
    gave = [row for seat, row in enumerate(game.gave) if any(row) and game.prev_pos[seat] >= game.rules.n_players - 2]
    return len(gave) == 2 and any(a and b for a, b in zip(*gave))


def test_the_exchange_moves_the_real_cards_when_both_low_players_give_a_rank():
    """Seeded 3-manche games until 3 exchanges where the Trou du cul and the Vice-Trou give the same rank. In
    each, every high player holds exactly the cards its own partner was dealt and gave; and at every step of
    every game the hands shown agree with the engine's counts and with the replay played back."""
    rules = pe.Rules(manches=3)
    found = 0
    for seed in range(60):
        game = play(rules, seed)
        replay = Replay.of(game)
        live = SingleGame.table(rules, seed=seed)
        back = replay_steps(replay)
        assert start_replay(replay).cards == live.cards
        for index, action in enumerate(replay.actions):
            event = live.step(action, cards=replay.cards[index])
            played_back, back_event = next(back)
            assert played_back.cards == live.cards and back_event == event, (seed, index)
            for player, hand in enumerate(live.cards):  # the shown hands are the engine's counts
                counts = pe.core.cards.hand_counts(hand, rules.n_ranks).tolist()
                assert counts == list(live.hands[live.seat_of_player[player]]), (seed, index, player)
            if event.manche_over and not event.game_over and _low_pairs_give_the_same_rank(live):
                found += 1
                dealt = live.record.deals[-1]
                for seat, row in enumerate(live.gave):
                    if not any(row) or live.prev_pos[seat] < rules.n_players - 2:
                        continue
                    giver, receiver = live.player_at_seat[seat], live.player_at_seat[live.partner[seat]]
                    received = Counter(live.cards[receiver]) - Counter(dealt[receiver])
                    given = Counter(dealt[giver]) - Counter(live.cards[giver])
                    assert received == given and sum(given.values()) == sum(row), (seed, index)
        if found >= 3:
            return
    raise AssertionError(f"only {found} exchanges with same-rank gives from both low players in 60 seeded games")
