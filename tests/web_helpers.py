"""Shared by the web tests: a live ``president-web`` server in a background thread, the default play setup,
a client that keeps game secrets, a recorder of responses, a scripted human player and the hidden-card scan."""

from __future__ import annotations

import contextlib
import json
import re
import socket
import threading
import time
from collections import Counter
from collections.abc import Iterator

import pytest

uvicorn = pytest.importorskip("uvicorn")
pytest.importorskip("starlette")

from president_env.apps.web.server import create_app  # noqa: E402

STALL = 3.0
"""Seconds a request may take in the tests before it counts as stalled. Measured alone, every request under
load is answered well within 1 s (docs/web.md gives the figures); on a CI machine running two test workers
a scheduling hiccup can pass 1 s, while a real stall (a replay checked or a network loaded on the event
loop, a rules bomb expanded) takes 8 to 22 s or never ends."""

CARD = re.compile(r'"((?:10|[2-9JQKA])[CDHS]|JK)"')
# One manche unless a test asks for more: the tests were written when the presets played one, and a 5-manche
# match would make the concurrent and disconnect tests five times longer.
SETUP = {"mode": "play", "preset": "standard", "manches": 1, "human": 0, "seed": 5, "pace": 0}
OPPONENTS = ["human", "heuristic-1", "heuristic-2", "random"]


class Recorder:
    """Every response body of a client, in order."""

    def __init__(self, client) -> None:
        self.client = client
        self.bodies: list[str] = []

    def request(self, method: str, url: str, **kwargs):
        response = self.client.request(method, url, **kwargs)
        self.bodies.append(response.text)
        return response


def first_move(view: dict) -> dict:
    """A legal move for the human, in cards: the first listed play or give, else pass."""
    moves = [m for m in view["legal"] if m["kind"] != "pass"] or view["legal"]
    move = moves[0]
    body = {"version": view["version"], "move": move["kind"]}
    if move["kind"] != "pass":
        hand = view["hand"]
        cards = [c for c in hand if (c[:-1] if c != "JK" else "JK") == move["rank"]][: move["count"]]
        cards += [c for c in hand if c[:-1] == "2" and c not in cards][: move["count"] - len(cards)]
        body["cards"] = cards
    return body


def play_game(http, setup: dict, timeout: float = 60, hints: bool = False) -> tuple[str, dict]:
    """Play a whole game as the human with :func:`first_move` (``hints``: asking for one at each turn);
    returns the id and the final view."""
    response = http.request("POST", "/api/games", json=setup)
    assert response.status_code == 201, response.text
    view = response.json()
    game_id = view["id"]
    deadline = time.monotonic() + timeout
    while not view["over"]:
        assert time.monotonic() < deadline
        if view["legal"]:
            if hints:
                assert http.request("POST", f"/api/games/{game_id}/hint").status_code in (200, 409)
            response = http.request("POST", f"/api/games/{game_id}/move", json=first_move(view))
            assert response.status_code == 200, response.text
            view = response.json()
        else:
            time.sleep(0.005)
            view = http.request("GET", f"/api/games/{game_id}").json()
    return game_id, view


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@contextlib.contextmanager
def live_server(**store_options) -> Iterator[tuple[str, object]]:
    """``(base_url, app)`` of a server on a free local port, stopped on exit."""
    app = create_app(**store_options)
    port = free_port()
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not server.started:
        if time.monotonic() > deadline or not thread.is_alive():
            raise RuntimeError("the web server did not start")
        time.sleep(0.02)
    try:
        yield f"http://127.0.0.1:{port}", app
    finally:
        server.should_exit = True
        thread.join(timeout=10)


class Keyed:
    """A client (TestClient or httpx) that keeps the secret of each play game it creates and sends it
    (``X-Player-Key``) with that game's requests, as the page does."""

    def __init__(self, client) -> None:
        self.client = client
        self.keys: dict[str, str] = {}

    def request(self, method: str, url: str, **kwargs):
        for game_id, key in self.keys.items():
            if f"/api/games/{game_id}" in url:
                kwargs["headers"] = {**kwargs.get("headers", {}), "X-Player-Key": key}
        response = self.client.request(method, url, **kwargs)
        if method == "POST" and url == "/api/games" and response.status_code == 201:
            data = response.json()
            if data.get("key"):
                self.keys[data["id"]] = data["key"]
        return response

    def get(self, url: str, **kwargs):
        return self.request("GET", url, **kwargs)

    def post(self, url: str, **kwargs):
        return self.request("POST", url, **kwargs)

    def delete(self, url: str, **kwargs):
        return self.request("DELETE", url, **kwargs)

    def __getattr__(self, name: str):
        return getattr(self.client, name)


def scan(bodies: list[str], replay, human: int) -> None:
    """Replay the game alongside the responses: each response may name only cards the human holds or held,
    or cards already played (the responses come in game order; a response is checked against the state of
    the game after the last move it reports)."""
    from president_env.game.replay import replay_steps, start_replay

    states = []  # after each action: (cards allowed to be seen)
    seen_own: set[str] = set()
    played: Counter = Counter()
    allowed_at = []
    # Allowed cards before any action: the human's hand after the automatic exchange.
    start = start_replay(replay)
    seen_own |= set(start.cards[human])
    games = replay_steps(replay, start)
    allowed_at.append(set(seen_own))
    for game, event in games:
        if event.kind == "play":
            played.update(event.cards)
        if not event.game_over:
            seen_own |= set(game.cards[human])
        if event.kind == "give" and human in (event.player,):
            seen_own |= set(event.cards)
        allowed_at.append(seen_own | set(played))
        states.append(event)
    assert len(allowed_at) == len(replay.actions) + 1
    checked = 0
    for body in bodies:
        data = json.loads(body)
        version = data.get("version", 0)
        allowed = allowed_at[version]
        cards = set(CARD.findall(body))
        leaked = cards - allowed
        assert not leaked, f"response at version {version} names cards of other hands: {sorted(leaked)}"
        checked += 1
    assert checked > 10
