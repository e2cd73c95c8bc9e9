"""A live ``president-web`` server in a background thread, for the web tests."""

from __future__ import annotations

import contextlib
import socket
import threading
import time
from collections.abc import Iterator

import pytest

uvicorn = pytest.importorskip("uvicorn")
pytest.importorskip("starlette")

from president_env.apps.web.server import create_app  # noqa: E402


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
