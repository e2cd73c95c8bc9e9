"""``president-web`` server: hidden cards, bad requests, isolation, expiry, concurrency, disconnects."""

from __future__ import annotations

import json
import re
import socket
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from urllib.parse import urlparse

import numpy as np
import pytest

pytest.importorskip("starlette")
httpx = pytest.importorskip("httpx")
from starlette.testclient import TestClient  # noqa: E402
from web_helpers import OPPONENTS, SETUP, STALL, Keyed, Recorder, first_move, live_server, play_game, scan  # noqa: E402

from president_env import Rules  # noqa: E402
from president_env import agents as agent_registry  # noqa: E402
from president_env.apps.web.games import ReplayLoader, Store  # noqa: E402
from president_env.apps.web.server import create_app, main  # noqa: E402
from president_env.core.actions import typed_action  # noqa: E402
from president_env.core.cards import parse_card  # noqa: E402
from president_env.game.replay import Replay, loads, replay_steps  # noqa: E402
from president_env.game.single import OUTCOME_FIELDS, MoveError, SingleGame  # noqa: E402


@pytest.fixture
def client():
    with TestClient(create_app()) as test_client:
        yield Keyed(test_client)


def test_play_mode_never_sends_another_hand(client):
    """Over whole games, no response carries a card of another player's hand before that card is played."""
    for seed, human in ((5, 0), (6, 2)):
        recorder = Recorder(client)
        setup = {**SETUP, "seed": seed, "human": human, "manches": 2, "seats": _rotate(OPPONENTS, human)}
        game_id, view = play_game(recorder, setup, hints=True)
        replay = loads(client.get(f"/api/games/{game_id}/replay").text)  # read after the game: not scanned
        assert view["winner"] == replay.result["winner"]
        scan(recorder.bodies, replay, human)
        # The scan sees a leak: a view naming a card another player still holds is caught.
        first_view = json.loads(recorder.bodies[0])
        hidden = next(
            c for p, hand in enumerate(replay.deals[0]) if p != human for c in hand if c not in first_view["hand"]
        )
        leaky = json.dumps({"version": 0, "hand": [hidden]})
        with pytest.raises(AssertionError, match="other hands"):
            scan([leaky], replay, human)


def test_bad_requests_are_4xx_and_change_nothing(client):
    response = client.post("/api/games", json={**SETUP, "seats": OPPONENTS})
    view = response.json()
    game_id = view["id"]
    while not view["legal"]:
        time.sleep(0.01)
        view = client.get(f"/api/games/{game_id}").json()
    hand = view["hand"]
    other = next(c for c in [f"{r}{s}" for r in "3456789JQKA" for s in "CDHS"] if c not in hand)
    bad = [
        ("not json", 400),
        (json.dumps([1, 2]), 400),
        (json.dumps({"move": "play", "cards": hand[:1]}), 400),  # no version
        (json.dumps({"version": view["version"] + 5, "move": "pass"}), 409),
        (json.dumps({"version": view["version"], "move": "dance"}), 400),
        (json.dumps({"version": view["version"], "move": "play", "cards": []}), 400),
        (json.dumps({"version": view["version"], "move": "play", "cards": [other]}), 400),
        (json.dumps({"version": view["version"], "move": "play", "cards": ["ZZ"]}), 400),
        (json.dumps({"version": view["version"], "move": "play", "cards": [1]}), 400),
        (json.dumps({"version": view["version"], "move": "give", "cards": hand[:1]}), 400),
        ("x" * 70_000, 413),
        (json.dumps({**first_move(view), "since": -1}), 400),  # a legal move with a bad field is not played
    ]
    ranks = {}
    for card in hand:
        ranks.setdefault(card[:-1], card)
    if len(ranks) >= 2:
        two_ranks = list(ranks.values())[:2]
        bad.append((json.dumps({"version": view["version"], "move": "play", "cards": two_ranks}), 400))
    if view["table"]["trick"]["count"] == 0 and not any(m["kind"] == "pass" for m in view["legal"]):
        bad.append((json.dumps({"version": view["version"], "move": "pass"}), 400))
    for body, status in bad:
        response = client.post(f"/api/games/{game_id}/move", content=body, headers={"content-type": "application/json"})
        assert response.status_code == status, (body[:80], response.text)
        assert response.json()["error"]
        after = client.get(f"/api/games/{game_id}").json()
        assert after["version"] == view["version"] and after["hand"] == hand
    for path, payload in [
        ("/api/games", {**SETUP, "seats": ["human", "nobody", "random", "random"]}),
        ("/api/games", {**SETUP, "seats": ["human", "random"]}),
        ("/api/games", {**SETUP, "seats": OPPONENTS, "human": 7}),
        ("/api/games", {**SETUP, "seats": OPPONENTS, "seed": -1}),
        ("/api/games", {**SETUP, "seats": OPPONENTS, "manches": 0}),
        ("/api/games", {**SETUP, "seats": OPPONENTS, "pace": "fast"}),
        ("/api/games", {**SETUP, "seats": OPPONENTS, "preset": "nope"}),
        ("/api/games", {**SETUP, "seats": OPPONENTS, "yaml": "n_players: 2"}),
        ("/api/games", {**SETUP, "mode": "watch", "seats": OPPONENTS}),
        ("/api/rules", {"yaml": "revolution: maybe"}),
        ("/api/rules", {"yaml": "colour: red"}),
        ("/api/rules", {"yaml": "{{"}),
        ("/api/replays", {"format": "president-replay", "version": 99}),
        ("/api/replays", {"format": "something"}),
    ]:
        before = len(client.app.state.store.sessions)
        response = client.post(path, json=payload)
        assert 400 <= response.status_code < 500, (payload, response.text)
        assert response.json()["error"]
        assert len(client.app.state.store.sessions) == before
    assert client.get("/api/games/unknown-id").status_code == 404
    assert client.get(f"/api/games/{game_id}?since=-1").status_code == 400
    # The same messages as the command line for bad rules.
    message = client.post("/api/rules", json={"yaml": "n_players: 2"}).json()["error"]
    assert message == "n_players must be an integer from 3 to 8, got 2"
    # A pasted YAML is never read as a file name.
    assert client.post("/api/rules", json={"yaml": "pyproject.toml"}).status_code == 400


def test_game_ids_are_unguessable_and_games_isolated(client):
    ids = set()
    for seed in range(5):
        view = client.post("/api/games", json={**SETUP, "seed": seed, "seats": OPPONENTS}).json()
        ids.add(view["id"])
    assert len(ids) == 5
    assert all(len(game_id) >= 32 and re.fullmatch(r"[A-Za-z0-9_-]+", game_id) for game_id in ids)
    a, b = sorted(ids)[:2]
    view_a = client.get(f"/api/games/{a}").json()
    view_b = client.get(f"/api/games/{b}").json()
    assert view_a["id"] == a and view_b["id"] == b
    # A move sent to one game never changes another.
    while not view_a["legal"]:
        time.sleep(0.01)
        view_a = client.get(f"/api/games/{a}").json()
    before_b = client.get(f"/api/games/{b}").json()
    assert client.post(f"/api/games/{a}/move", json=first_move(view_a)).status_code == 200
    assert client.get(f"/api/games/{b}").json()["version"] == before_b["version"] or before_b["legal"] == []
    # A truncated or altered id is not a game.
    assert client.get(f"/api/games/{a[:-1]}").status_code == 404
    # A game being played does not give its replay (it holds every deal) before it is over.
    assert client.get(f"/api/games/{a}/replay").status_code == 409


def test_games_expire():
    now = [0.0]
    store_options = {"idle_ttl": 100.0, "finished_ttl": 10.0, "max_games": 3, "clock": lambda: now[0]}
    with TestClient(create_app(**store_options)) as test_client:
        client = Keyed(test_client)
        store: Store = client.app.state.store
        idle = client.post("/api/games", json={**SETUP, "seats": OPPONENTS}).json()["id"]
        game_id, _ = play_game(client, {**SETUP, "seats": ["human"] + ["heuristic-1"] * 3})
        assert set(store.sessions) == {idle, game_id}
        now[0] = 11.0  # the finished game expires first
        assert client.get(f"/api/games/{game_id}").status_code == 404
        assert client.get(f"/api/games/{idle}").status_code == 200
        now[0] = 200.0  # then the idle one
        assert client.get(f"/api/games/{idle}").status_code == 404
        assert store.sessions == {}
        # At most max_games: a new game evicts the stalest.
        ids = [client.post("/api/games", json={**SETUP, "seats": OPPONENTS}).json()["id"] for _ in range(3)]
        now[0] = 300.0
        client.post("/api/games", json={**SETUP, "seats": OPPONENTS})
        assert len(store.sessions) == 3 and ids[0] not in store.sessions


@pytest.mark.slow
def test_agents_of_an_unwatched_game_wait_for_the_next_request():
    now = [0.0]
    with TestClient(create_app(clock=lambda: now[0])) as client:
        setup = {"mode": "watch", "preset": "standard", "seats": ["heuristic-1"] * 4, "seed": 3, "pace": 0.05}
        game_id = client.post("/api/games", json=setup).json()["id"]
        now[0] = 1000.0  # two minutes and more without a request
        time.sleep(0.3)
        store = client.app.state.store
        stopped = store.sessions[game_id].version
        time.sleep(0.3)
        assert store.sessions[game_id].version == stopped and not store.sessions[game_id].over
        client.get(f"/api/games/{game_id}")  # a viewer again
        time.sleep(0.3)
        assert store.sessions[game_id].version > stopped


@pytest.mark.slow
def test_twenty_concurrent_scripted_games():
    with live_server() as (url, _):

        def one(seed: int) -> dict:
            with httpx.Client(base_url=url, timeout=60) as raw:
                http = Keyed(raw)
                seats = ["human", "heuristic-3", "random", "mc-4" if seed % 5 == 0 else "heuristic-1"]
                return play_game(http, {**SETUP, "seed": seed, "human": seed % 4, "seats": _rotate(seats, seed % 4)})[1]

        with ThreadPoolExecutor(max_workers=20) as pool:
            views = list(pool.map(one, range(20)))
    assert all(v["over"] and v["error"] is None and v["winner"] is not None for v in views)
    assert len({v["id"] for v in views}) == 20


def _rotate(seats: list[str], human: int) -> list[str]:
    others = [s for s in seats if s != "human"]
    return [("human" if i == human else others.pop(0)) for i in range(len(seats))]


@pytest.mark.slow
def test_server_survives_disconnects_mid_move():
    with live_server() as (url, _):
        http = Keyed(httpx.Client(base_url=url, timeout=30))
        view = http.post("/api/games", json={**SETUP, "seats": ["human"] + ["mc-4"] * 3, "pace": 0}).json()
        game_id = view["id"]
        key = view["key"]
        host, port = urlparse(url).hostname, urlparse(url).port
        while not view["legal"]:
            time.sleep(0.02)
            view = http.get(f"/api/games/{game_id}").json()
        body = json.dumps(first_move(view)).encode()
        # 1: half a request, then the client vanishes.
        with socket.create_connection((host, port)) as sock:
            sock.sendall(f"POST /api/games/{game_id}/move HTTP/1.1\r\nHost: {host}\r\nX-Player-Key: {key}\r\n".encode())
        # 2: a whole move, the client gone before the answer (the agents then think, mc-4, in the pool).
        with socket.create_connection((host, port)) as sock:
            head = f"POST /api/games/{game_id}/move HTTP/1.1\r\nHost: {host}\r\nContent-Type: application/json\r\n"
            head += f"X-Player-Key: {key}\r\nContent-Length: {len(body)}\r\n\r\n"
            sock.sendall(head.encode() + body)
        # 3: a read abandoned at once, many times over.
        for _ in range(20):
            with socket.create_connection((host, port)) as sock:
                sock.sendall(
                    f"GET /api/games/{game_id} HTTP/1.1\r\nHost: {host}\r\nX-Player-Key: {key}\r\n\r\n".encode()
                )
        deadline = time.monotonic() + 30
        after = http.get(f"/api/games/{game_id}").json()
        while after["version"] == view["version"] and time.monotonic() < deadline:
            time.sleep(0.05)
            after = http.get(f"/api/games/{game_id}").json()
        assert after["version"] > view["version"], "the move sent before the disconnect was played"
        assert after["error"] is None
        # The game goes on: the same client (or a new one) finishes it.
        game_id, final = _finish(http, game_id)
        assert final["over"] and final["error"] is None
        http.close()


def _finish(http, game_id: str) -> tuple[str, dict]:
    view = http.get(f"/api/games/{game_id}").json()
    deadline = time.monotonic() + 120
    while not view["over"]:
        assert time.monotonic() < deadline
        if view["legal"]:
            view = http.post(f"/api/games/{game_id}/move", json=first_move(view)).json()
        else:
            time.sleep(0.02)
            view = http.get(f"/api/games/{game_id}").json()
    return game_id, view


def test_watch_mode_shows_every_hand_and_what_agents_weighed(client):
    seats = ["heuristic-3", "mc-4", "random", "heuristic-1"]
    view = client.post(
        "/api/games",
        json={"mode": "watch", "preset": "standard", "manches": 1, "seats": seats, "seed": 2, "pace": 0},
    )  # one manche: its frames fit in one page (paging is tested in test_web_limits)
    assert view.status_code == 201
    game_id = view.json()["id"]
    deadline = time.monotonic() + 120
    while not (view := client.get(f"/api/games/{game_id}").json())["over"]:
        assert time.monotonic() < deadline
        time.sleep(0.05)
    frames = view["frames"]
    assert len(frames) == view["version"] + 1
    first = frames[0]["table"]["players"]
    assert sum(len(p["cards"]) for p in first) == 52
    measures = {f["weighed"]["measure"] for f in frames[1:] if f["weighed"]}
    assert {"mean points", "probability", "cost (the cheapest is played)"} <= measures
    for frame in frames[1:]:
        weighed = frame["weighed"]
        assert weighed["action"] == frame["event"]["action"]
        if weighed["moves"]:
            assert weighed["action"] in [m["action"] for m in weighed["moves"]]
    # Pace and pause are the client's to change; bad values are refused.
    assert client.post(f"/api/games/{game_id}/pace", json={"pace": 99}).status_code == 400
    assert client.post(f"/api/games/{game_id}/pace", json={"pace": 0.2, "paused": True}).json()["paused"] is True
    # The replay of a watched game plays back to the same frames.
    replay_text = client.get(f"/api/games/{game_id}/replay").text
    loaded = client.post("/api/replays", content=replay_text, headers={"content-type": "application/json"}).json()
    assert loaded["mode"] == "replay" and loaded["frame_count"] == len(frames)
    assert [f["table"] for f in loaded["frames"]] == [f["table"] for f in frames]


def test_main_rejects_bad_arguments(capsys):
    with pytest.raises(SystemExit) as exit_:
        main(["--port", "99999"])
    assert exit_.value.code == 2
    with pytest.raises(SystemExit) as exit_:
        main(["--port", "x"])
    assert exit_.value.code == 2


def test_threads_do_not_leak_sessions():
    """Closing the app (lifespan end) drops every game."""
    app = create_app()
    with TestClient(app) as client:
        client.post("/api/games", json={**SETUP, "seats": OPPONENTS})
        assert app.state.store.sessions
    assert not app.state.store.sessions
    assert threading.active_count() < 50


@pytest.mark.slow
def test_monte_carlo_agents_do_not_block_the_server():
    """While mc-5 agents think (in the worker pool), other requests are answered at once."""
    with live_server() as (url, _):
        with httpx.Client(base_url=url, timeout=30) as http:
            setup = {"mode": "watch", "preset": "standard", "seats": ["mc-5"] * 4, "seed": 1, "pace": 0}
            game_id = http.post("/api/games", json=setup).json()["id"]
            slowest = 0.0
            for _ in range(20):
                started = time.perf_counter()
                assert http.get("/api/options").status_code == 200
                assert http.get(f"/api/games/{game_id}?since=100000").status_code == 200
                slowest = max(slowest, time.perf_counter() - started)
                time.sleep(0.05)
            assert slowest < STALL, f"a request waited {slowest:.2f} s behind the agents"
            http.delete(f"/api/games/{game_id}")


@pytest.mark.slow
def test_the_console_script_serves_and_prints_its_url():
    import subprocess
    import sys

    from web_helpers import free_port

    port = free_port()
    process = subprocess.Popen(
        [sys.executable, "-m", "president_env.apps.web.server", "--port", str(port)],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        line = process.stdout.readline()
        assert line.strip() == f"president-web: serving on http://127.0.0.1:{port}/ (Ctrl-C to stop)"
        deadline = time.monotonic() + 90  # it loads the shipped learned agents before serving
        while True:
            try:
                page = httpx.get(f"http://127.0.0.1:{port}/")
                break
            except httpx.ConnectError:
                assert time.monotonic() < deadline
                time.sleep(0.1)
        assert page.status_code == 200 and "<title>Président</title>" in page.text
        assert httpx.get(f"http://127.0.0.1:{port}/static/app.js").status_code == 200
    finally:
        process.terminate()
        process.wait(timeout=10)


def test_pasted_rules_alias_bomb_is_refused_fast():
    bomb = 'a: &a ["x","x","x","x","x","x","x","x","x"]\n' + "".join(
        f"{c}: &{c} [*{p},*{p},*{p},*{p},*{p},*{p},*{p},*{p},*{p}]\n" for p, c in zip("abcdefgh", "bcdefghi")
    )
    client = TestClient(create_app())
    started = time.perf_counter()
    response = client.post("/api/rules", json={"yaml": bomb})
    assert response.status_code == 400 and "rules YAML" in response.json()["error"]
    assert time.perf_counter() - started < STALL


def test_setup_chooses_the_number_of_players(client):
    checked = client.post("/api/rules", json={"preset": "party", "n_players": 6})
    assert checked.status_code == 200 and checked.json()["rules"]["n_players"] == 6
    assert checked.json()["rules"]["revolution"] is True  # the rest of the preset stays
    for bad, words in ((9, "n_players"), ("5", "n_players must be an integer"), (True, "n_players must be")):
        response = client.post("/api/rules", json={"preset": "standard", "n_players": bad})
        assert response.status_code == 400 and words in response.json()["error"]
    seats = ["human", "heuristic-1", "heuristic-1", "random", "random"]
    _, view = play_game(client, {**SETUP, "n_players": 5, "seats": seats})
    assert view["over"] and view["rules"]["n_players"] == 5 and len(view["lineup"]) == 5


def test_a_play_game_acts_only_with_its_secret(client):
    created = client.post("/api/games", json={**SETUP, "seats": OPPONENTS}).json()
    game_id, key = created["id"], created["key"]
    assert len(key) >= 32 and key != game_id
    raw = client.client  # without the secret
    for method, path, body in (
        ("GET", f"/api/games/{game_id}", None),
        ("POST", f"/api/games/{game_id}/move", {"version": 0, "move": "pass"}),
        ("POST", f"/api/games/{game_id}/pace", {"pace": 1}),
        ("POST", f"/api/games/{game_id}/hint", {}),
        ("GET", f"/api/games/{game_id}/replay", None),
        ("DELETE", f"/api/games/{game_id}", None),
    ):
        for headers in ({}, {"X-Player-Key": key[:-1] + ("A" if key[-1] != "A" else "B")}, {"X-Player-Key": game_id}):
            response = raw.request(method, path, json=body, headers=headers)
            assert response.status_code == 403, (method, path, response.text)
            assert "link it was started with" in response.json()["error"]
        # A secret in the URL authenticates nothing (URLs are shown, saved in the history and sent as referrers).
        response = raw.request(method, f"{path}?key={key}", json=body)
        assert response.status_code == 403, (method, path, response.text)
    # The secret is sent once, at creation; views never repeat it.
    view = client.get(f"/api/games/{game_id}").json()
    assert "key" not in view and key not in json.dumps(view)
    # A second tab (another client with the same secret) resumes the same game.
    second = raw.get(f"/api/games/{game_id}", headers={"X-Player-Key": key}).json()
    assert second["hand"] == view["hand"] and second["version"] >= view["version"] - 0


def test_final_table_and_exchange_in_words(client):
    setup = {**SETUP, "manches": 2, "seed": 11, "seats": ["human"] + ["heuristic-1"] * 3}
    game_id, final = play_game(client, setup)
    table = final["table"]
    assert table["phase"] == "over"
    last = final["results"][-1]
    for entry in table["players"]:
        p = entry["player"]
        assert entry["role"] == last["roles"][p] and entry["out"] == last["positions"][p]
        assert entry["score"] == final["scores"][p] and not entry["to_act"]
    assert sum(entry["held"] for entry in table["players"]) < 13  # not a fresh deal of 13 each
    # The second manche opened with an exchange: the human's own cards given and received, with suits.
    replay = loads(client.get(f"/api/games/{game_id}/replay").text)
    done = final["exchange"]["done"] if final["table"]["manche"] == 1 else None
    words = client.app.state.store.sessions[game_id].exchanges[(0, 1)]
    dealt = replay.deals[1][0]
    assert words["gave"] and words["received"] and len(words["gave"]) == len(words["received"])
    assert all(card in dealt for card in words["gave"]) and not any(card in dealt for card in words["received"])
    assert done is None or done == words


def test_each_manche_result_holds_its_whole_last_trick(client):
    """What the end-of-manche summary shows: every move of the manche's last trick from the play that led it (two
    plays in manche 2 of this seeded game), the same in play mode and in the game's replay loaded back."""
    setup = {**SETUP, "manches": 2, "seed": 12, "seats": ["human"] + ["heuristic-1"] * 3}
    game_id, final = play_game(client, setup)
    replay_text = client.get(f"/api/games/{game_id}/replay").text
    expected = [
        [{"player": e.player, "kind": e.kind, "cards": e.cards} for e in game.last_trick()]
        for game, event in replay_steps(loads(replay_text))
        if event.manche_over
    ]
    assert [r["last_trick"] for r in final["results"]] == expected
    assert [[m["kind"] for m in trick] for trick in expected] == [["play"], ["play", "play"]]
    loaded = client.post("/api/replays", content=replay_text, headers={"content-type": "application/json"}).json()
    deadline = time.monotonic() + 30
    while not (view := client.get(f"/api/games/{loaded['id']}?since=0&limit=0").json())["loaded"]:
        assert time.monotonic() < deadline
        time.sleep(0.05)
    assert [r["last_trick"] for r in view["results"]] == expected


def test_the_log_tells_what_each_move_did_from_the_game_s_events(client):
    """Each move of a player's log carries what its ``Event`` says it did (going out, the trick won and who leads,
    the exchange over), the same as the game's replay played back; public even where a give's card is hidden."""
    setup = {**SETUP, "manches": 2, "seed": 11, "seats": ["human"] + ["heuristic-1"] * 3}
    game_id, final = play_game(client, setup)
    assert final["log_start"] == 0 and len(final["log"]) == final["log_count"]  # one page holds the game
    events = [event for _, event in replay_steps(loads(client.get(f"/api/games/{game_id}/replay").text))]
    assert [{k: e[k] for k in OUTCOME_FIELDS} for e in final["log"]] == [
        {k: getattr(e, k) for k in OUTCOME_FIELDS} for e in events
    ]
    assert any(e["trick_won_by"] is not None for e in final["log"]) and any(e["went_out"] for e in final["log"])
    hidden = [e for e in final["log"] if e["kind"] == "give" and not e["cards"]]  # the others' gives
    assert hidden and sum(e["exchange_over"] for e in final["log"]) == 1


def test_the_replay_loader_frames_the_one_game_it_plays_back():
    """The web's replay loader starts a replay once (``replay.start_replay``) and plays every move on that very
    game through ``replay.replay_steps``: its game ends where the recorded one did, with the same events; a first
    deal that does not fit is refused with ``start_replay``'s words."""
    game = SingleGame.table(Rules(manches=2), seed=5)
    while not game.done:
        game.step(int(np.flatnonzero(game.legal_mask())[0]))
    replay = Replay.of(game)
    loader = ReplayLoader(replay)
    started = loader.scratch.game
    frames = []
    while not loader.done:
        frames += loader.chunk()
    assert loader.scratch.game is started and started.done and started.events == game.events
    assert len(frames) == len(replay.actions) + 1 and frames[-1]["over"]
    replay.deals[0][0], replay.deals[0][1] = replay.deals[0][1], replay.deals[0][0][:-1]
    with pytest.raises(ValueError, match=r"^replay manche 1: "):
        ReplayLoader(replay)


def test_a_learned_agent_plays_a_five_manche_match(client):
    """The setup offers the agents that can play the rules whatever the match's length: a learned agent plays
    every manche, so a 5-manche standard game with ``ppo-universal`` in a seat is created and played out."""
    pytest.importorskip("torch")
    offered = client.post("/api/rules", json={"preset": "standard"}).json()
    if "ppo-universal" not in offered["agents"]:
        pytest.skip("the shipped learned agent is not installed")
    assert offered["rules"]["manches"] == 5
    setup = {**SETUP, "manches": 5, "seats": ["human", "ppo-universal", "heuristic-1", "random"]}
    game_id, final = play_game(client, setup, timeout=120)
    assert final["error"] is None and final["rules"]["manches"] == 5
    results = final["results"]
    assert [r["manche"] for r in results[:5]] == [0, 1, 2, 3, 4] and all(r["decisive"] for r in results[5:])
    replay = loads(client.get(f"/api/games/{game_id}/replay").text)
    assert replay.players[1] == "ppo-universal" and len(replay.deals) == len(results)


def test_hint_rules_page_and_playable_agents(client):
    checked = client.post("/api/rules", json={"preset": "family"}).json()
    assert "heuristic-3" in checked["agents"] and not set(agent_registry.RETIRED_AGENTS) & set(checked["agents"])
    page = {line["field"]: line["text"] for line in checked["page"]}
    assert set(page) == set(checked["rules"]) and "draws a card" in page["initial_roles"]
    created = client.post("/api/games", json={**SETUP, "seats": OPPONENTS}).json()
    game_id = created["id"]
    view = created
    deadline = time.monotonic() + 30
    while not view["legal"]:
        assert time.monotonic() < deadline
        assert client.post(f"/api/games/{game_id}/hint").status_code == 409  # not your turn
        time.sleep(0.01)
        view = client.get(f"/api/games/{game_id}").json()
    hint = client.post(f"/api/games/{game_id}/hint").json()
    assert hint["action"] in [m["action"] for m in view["legal"]]
    assert hint["version"] == view["version"]
    learned = "ppo-universal" in client.post("/api/rules", json={"preset": "standard"}).json()["agents"]
    assert hint["agent"] == ("ppo-universal-search" if learned else "heuristic-3")  # the strongest agent
    assert client.get(f"/api/games/{game_id}").json()["version"] == view["version"]  # a hint plays nothing


def test_a_refused_move_is_told_from_the_game_s_typed_error(client):
    """``SingleGame.step`` refuses with a :class:`MoveError` whose code the web app reads (not its text): naming a
    wild 2 while a natural card of the rank is left is "not the cards this action takes", with why."""
    yaml = "twos_wild: true\nfirst_lead: dealer_left"
    rules = Rules(twos_wild=True, first_lead="dealer_left")
    for seed in range(300):
        game = SingleGame.table(rules, seed=seed, players=["human", *OPPONENTS[1:]])
        ranks = [c[:-1] for c in game.cards[0]]
        pair = next((r for r in ranks if ranks.count(r) >= 2 and r != "2"), None)
        if game.current_player == 0 and pair and "2" in ranks:
            break
    else:
        pytest.skip("no deal with a pair and a 2 at the first lead")
    natural = next(c for c in game.cards[0] if c[:-1] == pair)
    two = next(c for c in game.cards[0] if c[:-1] == "2")
    action = typed_action(rules, "play", [parse_card(natural)[0]] * 2)
    with pytest.raises(MoveError) as refused:
        game.step(action, cards=[natural, two])
    assert refused.value.code == "not_taken" and refused.value.player == 0
    with pytest.raises(MoveError) as missing:
        game.step(action, cards=[natural, "JK"])
    assert missing.value.code == "not_held" and missing.value.detail == "JK"
    with pytest.raises(MoveError) as illegal:
        game.step(typed_action(rules, "give", [0]))
    assert illegal.value.code == "illegal" and illegal.value.detail in str(illegal.value)
    assert len(game.events) == 0
    view = client.post("/api/games", json={**SETUP, "yaml": yaml, "seed": seed, "seats": OPPONENTS}).json()
    assert view["hand"] == game.cards[0]
    response = client.post(
        f"/api/games/{view['id']}/move", json={"version": 0, "move": "play", "cards": [natural, two]}
    )
    assert response.status_code == 400
    error = response.json()["error"]
    assert error.startswith(f"cards {natural} {two} are not the cards this action takes") and "wild 2s" in error
    assert client.get(f"/api/games/{view['id']}").json()["version"] == 0
