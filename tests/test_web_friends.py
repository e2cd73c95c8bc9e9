"""``president-web``'s table for friends: people join with secrets of their own, agents fill the empty seats,
each sees only their own hand, a stand-in plays for the away, and one seat's secret never acts for another."""

from __future__ import annotations

import threading
import time
from concurrent.futures import ThreadPoolExecutor

import pytest

pytest.importorskip("starlette")
httpx = pytest.importorskip("httpx")
from starlette.testclient import TestClient  # noqa: E402
from web_helpers import Recorder, first_move, live_server, scan  # noqa: E402

from president_env.apps.web import games  # noqa: E402
from president_env.apps.web.server import create_app  # noqa: E402
from president_env.game.replay import loads  # noqa: E402

TABLE = {"preset": "big_table", "manches": 1, "seed": 4, "pace": 0}  # one manche: a 5-manche match is 5x longer


class Person:
    """One person at a table: their secret, and every response they got."""

    def __init__(self, http, game_id: str, key: str, player: int) -> None:
        self.http, self.game_id, self.key, self.player = http, game_id, key, player
        self.recorder = Recorder(http)

    def request(self, method: str, path: str, **kwargs):
        headers = {**kwargs.pop("headers", {}), "X-Player-Key": self.key}
        return self.recorder.request(method, path, headers=headers, **kwargs)

    def view(self) -> dict:
        response = self.request("GET", f"/api/games/{self.game_id}")
        assert response.status_code == 200, response.text
        return response.json()


def open_table(http, people: int, table: dict = TABLE) -> list[Person]:
    """A table with its host and ``people - 1`` friends seated (not started)."""
    created = http.post("/api/tables", json={**table, "name": "host"})
    assert created.status_code == 201, created.text
    game_id = created.json()["id"]
    seated = [Person(http, game_id, created.json()["key"], created.json()["human"])]
    seated[0].recorder.bodies.append(created.text)  # scanned like every other answer to them
    for i in range(1, people):
        joined = http.post(f"/api/tables/{game_id}/join", json={"name": f"friend {i}"})
        assert joined.status_code == 201, joined.text
        seated.append(Person(http, game_id, joined.json()["key"], joined.json()["human"]))
        seated[-1].recorder.bodies.append(joined.text)
    return seated


def play_table(people: list[Person], timeout: float = 120) -> dict:
    """Each person in turn looks at the table and plays the first listed move on their turn, until the end."""
    deadline = time.monotonic() + timeout
    while True:
        assert time.monotonic() < deadline, "the table's game did not end in time"
        for person in people:
            view = person.view()
            if view["over"]:
                return view
            if view["legal"]:
                response = person.request("POST", f"/api/games/{person.game_id}/move", json=first_move(view))
                assert response.status_code in (200, 409), response.text  # 409: a stand-in moved first
        time.sleep(0.002)


def wait_for_turn(person: Person, other: Person) -> dict:
    """``person``'s view once it is their turn (or the game is over), ``other`` playing their own turns meanwhile."""
    deadline = time.monotonic() + 30
    while (view := person.view())["legal"] == [] and not view["over"]:
        assert time.monotonic() < deadline
        other_view = other.view()
        if other_view["legal"]:
            other.request("POST", f"/api/games/{other.game_id}/move", json=first_move(other_view))
        time.sleep(0.005)
    return view


def test_four_friends_and_four_agents_at_eight_players():
    with TestClient(create_app()) as client:
        people = open_table(client, 4)
        game_id = people[0].game_id
        assert [p.player for p in people] == [0, 1, 2, 3]
        assert len({p.key for p in people}) == 4
        lobby = people[1].view()
        assert lobby["friends"]["started"] is False and lobby["legal"] == []
        assert lobby["table"]["to_act"] is None and not any(p["to_act"] for p in lobby["table"]["players"])
        assert [s["name"] for s in lobby["friends"]["seats"][:4]] == ["host", "friend 1", "friend 2", "friend 3"]
        # Only the host starts; a friend's secret is refused for it.
        refused = people[1].request("POST", f"/api/tables/{game_id}/start", json={"agent": "heuristic-1"})
        assert refused.status_code == 403
        assert (
            people[0].request("POST", f"/api/tables/{game_id}/start", json={"agent": "heuristic-1"}).status_code == 200
        )
        assert client.post(f"/api/tables/{game_id}/join", json={"name": "late"}).status_code == 409
        final = play_table(people)
        replay = loads(client.get(f"/api/games/{game_id}/replay", headers={"X-Player-Key": people[2].key}).text)
        assert replay.players == ["host", "friend 1", "friend 2", "friend 3"] + ["heuristic-1"] * 4
        assert final["winner"] == replay.result["winner"]
        # No response to anyone named a card of another hand before it was played.
        for person in people:
            scan(person.recorder.bodies, replay, person.player)


def test_one_seat_secret_never_acts_for_another():
    with TestClient(create_app()) as client:
        people = open_table(client, 3, {**TABLE, "preset": "standard"})
        game_id = people[0].game_id
        people[0].request("POST", f"/api/tables/{game_id}/start", json={"agent": "heuristic-1"})
        deadline = time.monotonic() + 30
        while True:
            assert time.monotonic() < deadline
            views = [p.view() for p in people]
            to_act = views[0]["table"]["to_act"]
            if to_act in (0, 1, 2) and views[to_act]["legal"]:
                break
            time.sleep(0.01)
        mover = people[to_act]
        move = first_move(views[to_act])
        for other in people:
            if other is not mover:
                assert other.view()["hand"] != views[to_act]["hand"]
                response = other.request("POST", f"/api/games/{game_id}/move", json=move)
                assert response.status_code in (400, 409), response.text
        assert mover.view()["version"] == views[to_act]["version"]  # nothing was played for them
        assert mover.request("POST", f"/api/games/{game_id}/move", json=move).status_code == 200
        # A made-up or another game's secret is refused.
        for key in ("", "x" * 32, people[0].key[::-1]):
            assert client.get(f"/api/games/{game_id}", headers={"X-Player-Key": key}).status_code == 403
        # Joining checks the name; a full table refuses.
        assert client.post(f"/api/tables/{game_id}/join", json={"name": ""}).status_code == 400


def test_a_stand_in_plays_for_the_away_until_they_return():
    now = [0.0]
    with TestClient(create_app(clock=lambda: now[0])) as client:
        host, friend = open_table(client, 2, {**TABLE, "preset": "standard", "seed": 9})
        game_id = host.game_id
        host.request("POST", f"/api/tables/{game_id}/start", json={"agent": "heuristic-1"})
        store = client.app.state.store

        waiting = wait_for_turn(friend, host)
        time.sleep(0.2)
        assert store.sessions[game_id].version == waiting["version"]  # the game waits for the friend
        now[0] += games.DROP_AFTER + 1  # the friend is away; the host looks on
        deadline = time.monotonic() + 30
        while store.sessions[game_id].version == waiting["version"]:
            assert time.monotonic() < deadline, "no stand-in played for the away friend"
            host.view()
            time.sleep(0.01)
        seats = host.view()["friends"]["seats"]
        assert seats[friend.player]["away"] is True and seats[host.player]["away"] is False
        # The friend comes back through their link: their seat is theirs again.
        back = wait_for_turn(friend, host)
        assert not back["friends"]["seats"][friend.player]["away"]
        time.sleep(0.2)
        assert store.sessions[game_id].version == back["version"] or back["over"]
        # Away past the time limit: the seat is the agent's for good.
        now[0] += games.RETURN_WITHIN + 1
        response = friend.request("GET", f"/api/games/{game_id}")
        assert response.status_code == 403 and "away more than" in response.json()["error"]


def test_a_friend_who_joins_while_the_agents_load_keeps_the_seat_and_the_host_starts_again():
    """The host's start waits for its agents (a learned one not loaded yet is made in the loader thread). A friend
    who takes a seat meanwhile keeps it; that start is refused (409, "start again") and changes nothing, so no
    agent plays a seat whose person holds a secret; the host's next start seats the friend as a person. Once
    started, the table refuses joins (409)."""
    with live_server() as (url, app):
        store = app.state.store
        loading, release = threading.Event(), threading.Event()
        make_lineup = store.cache.make_lineup

        def slow_load(*args):
            loading.set()
            release.wait(30)
            return make_lineup(*args)

        store.cache.ready = lambda name, rules: False  # as a learned agent not loaded yet: the loader makes them
        store.cache.make_lineup = slow_load
        with httpx.Client(base_url=url, timeout=60) as http, httpx.Client(base_url=url, timeout=60) as friend:
            (host,) = open_table(http, 1, {**TABLE, "preset": "standard"})
            start = f"/api/tables/{host.game_id}/start"
            with ThreadPoolExecutor(max_workers=1) as pool:
                starting = pool.submit(host.request, "POST", start, json={"agent": "heuristic-1"})
                assert loading.wait(30), "the start did not reach the loader"
                joined = friend.post(f"/api/tables/{host.game_id}/join", json={"name": "Bob"})
                release.set()
                refused = starting.result(timeout=60)
            assert joined.status_code == 201, joined.text
            assert refused.status_code == 409 and "start again" in refused.json()["error"]
            lobby = host.view()
            assert lobby["friends"]["started"] is False and lobby["legal"] == []
            assert [s["name"] for s in lobby["friends"]["seats"][:2]] == ["host", "Bob"]
            assert lobby["lineup"] == ["human"] * 4  # the refused start left nothing behind
            started = host.request("POST", start, json={"agent": "heuristic-1"})
            assert started.status_code == 200, started.text
            assert started.json()["lineup"] == ["human", "human", "heuristic-1", "heuristic-1"]
            late = friend.post(f"/api/tables/{host.game_id}/join", json={"name": "Carol"})
            assert late.status_code == 409 and "has started" in late.json()["error"]
            bob = Person(friend, host.game_id, joined.json()["key"], joined.json()["human"])
            assert bob.player == 1 and bob.view()["friends"]["started"] is True


@pytest.mark.slow
def test_ten_tables_at_once():
    """10 tables of 4 friends and 4 agents at 8 players (40 people polling and moving), played at once on a live local
    server."""
    with live_server() as (url, _):

        def one(seed: int) -> dict:
            with httpx.Client(base_url=url, timeout=60) as http:
                people = open_table(http, 4, {**TABLE, "seed": seed})
                game_id = people[0].game_id
                started = people[0].request("POST", f"/api/tables/{game_id}/start", json={"agent": "heuristic-1"})
                assert started.status_code == 200, started.text
                final = play_table(people, timeout=400)
                replay = loads(http.get(f"/api/games/{game_id}/replay", headers={"X-Player-Key": people[0].key}).text)
                for person in people:
                    scan(person.recorder.bodies, replay, person.player)
                return final

        started = time.perf_counter()
        with ThreadPoolExecutor(max_workers=10) as pool:
            finals = list(pool.map(one, range(10)))
        print(f"\n10 tables of 8 (4 people each) played in {time.perf_counter() - started:.0f} s")
    assert all(f["over"] and f["error"] is None for f in finals)
    assert len({f["id"] for f in finals}) == 10


def test_names_are_unique_at_the_table_and_never_the_page_s_own_labels():
    with TestClient(create_app()) as client:
        created = client.post("/api/tables", json={**TABLE, "preset": "standard", "name": "  Ann  "})
        assert created.status_code == 201 and created.json()["names"] == {"0": "Ann"}
        game_id = created.json()["id"]
        join = f"/api/tables/{game_id}/join"
        for name in (
            "You",
            "you",
            "Ann (host)",
            "Bob (host)",
            "Bob — you",
            "ann",
            " ANN ",
            "Änn",
            "AS",
            "10h",
            "Président",
            "president",
            "Trou du cul",
            "vice-trou",
            "player 2",
            "Player_3",
            "heuristic-3",
            "mc-4",
            "",
            "   ",
            "x" * 25,
            "Bob\u200b",
        ):
            response = client.post(join, json={"name": name})
            assert response.status_code == 400, (name, response.text)
            assert response.json()["error"].startswith('"name"'), response.text
        lobby = client.post(join, json={"name": "Bob"})
        assert lobby.status_code == 201, lobby.text
        assert [s["name"] for s in lobby.json()["friends"]["seats"]] == ["Ann", "Bob", None, None]
        assert client.post(join, json={"name": "bob"}).status_code == 400  # unique, case aside
        assert client.post(join, json={"name": "Youssef"}).status_code == 201  # a word that merely starts so
        # The host's own name is checked too.
        assert client.post("/api/tables", json={**TABLE, "name": "You"}).status_code == 400


def test_the_turn_clock_plays_for_a_person_who_does_not_act():
    """A short clock (10 s, on a fake clock): the friend keeps looking at the table but does not play; past the
    clock the stand-in plays that turn and the friend is marked away (everyone sees it) and played for until
    they act again (``/back``); then the table waits for them again."""
    now = [0.0]
    with TestClient(create_app(clock=lambda: now[0])) as client:
        bounds = client.get("/api/options").json()["limits"]
        assert bounds["turn_clock_s"] == [10, 600] and bounds["turn_clock_default_s"] == 60
        for clock in (5, 601, "60", True, None):
            refused = client.post("/api/tables", json={**TABLE, "name": "Ann", "turn_clock": clock})
            assert refused.status_code == 400 and "turn_clock" in refused.json()["error"], clock
        default = client.post("/api/tables", json={**TABLE, "name": "Ann"}).json()
        assert default["friends"]["turn_clock"] == 60
        host, friend = open_table(client, 2, {**TABLE, "preset": "standard", "seed": 9, "turn_clock": 10})
        game_id = host.game_id
        assert friend.view()["friends"]["turn_clock"] == 10  # everyone sees the host's clock in the lobby
        host.request("POST", f"/api/tables/{game_id}/start", json={"agent": "heuristic-1"})
        store = client.app.state.store

        def settled(version: int) -> bool:
            time.sleep(0.2)
            return store.sessions[game_id].version == version

        waiting = wait_for_turn(friend, host)
        assert 9 <= waiting["friends"]["turn_left"] <= 10
        now[0] += 9  # within the clock: the table waits, though the friend only looks
        assert friend.view()["version"] == waiting["version"] and settled(waiting["version"])
        now[0] += 2  # past it: the stand-in plays this turn, and the friend is away
        deadline = time.monotonic() + 30
        while store.sessions[game_id].version == waiting["version"]:
            assert time.monotonic() < deadline, "no stand-in played when the turn clock ran out"
            friend.view()
            time.sleep(0.01)
        seat = host.view()["friends"]["seats"][friend.player]
        assert seat["away"] and seat["idle"]
        # Away, the friend's next turn is the stand-in's at once (the fake clock stands still), though they look on.
        session = store.sessions[game_id]
        version = session.version
        deadline = time.monotonic() + 30
        while not any(e.player == friend.player for e in session.game.events[version:]) and not session.over:
            assert time.monotonic() < deadline, "the table waited for a person marked away"
            friend.view()
            host_view = host.view()
            if host_view["legal"]:
                host.request("POST", f"/api/games/{game_id}/move", json=first_move(host_view))
            time.sleep(0.005)
        assert not session.over  # the deal of seed 9 leaves the friend turns to play after the back
        # Back: the table waits for them again, with a fresh clock.
        back = friend.request("POST", f"/api/games/{game_id}/back", json={})
        assert back.status_code == 200 and not back.json()["friends"]["seats"][friend.player]["away"]
        waiting = wait_for_turn(friend, host)
        assert not waiting["over"] and settled(waiting["version"]) and waiting["friends"]["turn_left"] == 10
        assert friend.request("POST", f"/api/games/{game_id}/move", json=first_move(waiting)).status_code == 200
