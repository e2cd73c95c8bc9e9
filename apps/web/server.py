"""``president-web``: the browser table, a Starlette app served by uvicorn.

    president-web                      # http://127.0.0.1:8000
    president-web --port 8080 --host 0.0.0.0

The page (``static/``: plain HTML, CSS and JavaScript, no build step) talks to a small JSON API;
the client polls it (see ``docs/web.md`` for the API and why polling):

==========================================  ====================================================
``GET  /api/options``                       presets (with their YAML), agent names, limits
``POST /api/rules``                         check rules: ``{"preset"}`` or ``{"yaml"}`` -> the rules, the agents
                                            that can play them and the rules page, or 400
``POST /api/games``                         new play or watch game -> ``{"id", ...view}`` (play: and ``key``)
``GET  /api/games/{id}?since=N&limit=L``    the view (play: the player's, log from N; watch/replay: frames from N)
``POST /api/games/{id}/move``               play mode: ``{"version", "move": "play"|"pass"|"give", "cards"}``
``POST /api/games/{id}/hint``               play mode, your turn: what the strongest agent would play
``POST /api/games/{id}/pace``               ``{"pace": seconds, "paused": bool}``
``POST /api/games/{id}/back``               a table for friends: "I am back" (the turn clock had run out)
``GET  /api/games/{id}/replay``             the game as a replay (play mode: once the game is over)
``DELETE /api/games/{id}``                  drop the game
``POST /api/replays``                       a replay file -> a replay game to step through (checked in the background)
``POST /api/tables``                        a table for friends (``"name"``, ``"turn_clock"``) -> its host's view
                                            and ``key``
``POST /api/tables/{id}/join``              ``{"name"}`` -> a new seat's view and ``key``
``POST /api/tables/{id}/start``             the host starts: ``{"agent"}`` for the empty seats
==========================================  ====================================================

Every bad request is answered 4xx with ``{"error": reason}`` and changes nothing; every request does bounded
work, and one client (address) holds a bounded number of games and creates them at a bounded rate (the limits are
in ``docs/web.md``). Ids and secrets are ``secrets.token_urlsafe(24)``: the id reads a watch game or a replay; a
play game is read and played only with its player's secret, sent in the ``X-Player-Key`` header only (never in a
URL). Every API request must come to the server by its own name (``Host``) and, from a browser, from its own page
(``Origin``); a request body must be declared ``application/json`` (:func:`check_request`).
"""

from __future__ import annotations

import asyncio
import contextlib
import ipaddress
import json
import math
import os
import socket
import sys
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from president_env import agents as agent_registry
from president_env.core.presets import PRESETS, preset_path, resolve_rules
from president_env.core.rules import Rules
from president_env.core.user_input import ArgumentParser
from president_env.game.replay import MAX_BYTES as MAX_REPLAY_BYTES
from president_env.game.replay import Replay
from president_env.game.single import MAX_SEED

from .games import (
    CREATE_BURST,
    CREATE_EVERY,
    HUMAN,
    MAX_LOADING,
    MAX_MANCHES,
    MAX_PACE,
    MAX_PER_CLIENT,
    MAX_REPLAY_ACTIONS,
    MODES,
    PAGE_FRAMES,
    PAGE_LOG,
    TURN_CLOCK,
    TURN_CLOCK_RANGE,
    RequestError,
    Session,
    Store,
    game_header,
    human_action,
    parse_json,
    player_view,
    within_limits,
)
from .rules_page import rules_page

try:
    from starlette.applications import Starlette
    from starlette.requests import Request
    from starlette.responses import FileResponse, JSONResponse, Response
    from starlette.routing import Mount, Route
    from starlette.staticfiles import StaticFiles
except ImportError:  # pragma: no cover - reported by main()
    Starlette = None  # type: ignore[assignment,misc]

STATIC = Path(__file__).resolve().parent / "static"
MAX_BODY = 64_000
MAX_YAML = 20_000


LIMITS = {
    "max_manches": MAX_MANCHES,
    "players": [3, 8],
    "max_body_bytes": MAX_BODY,
    "max_yaml_chars": MAX_YAML,
    "max_replay_bytes": MAX_REPLAY_BYTES,
    "max_replay_moves": MAX_REPLAY_ACTIONS,
    "page_frames": PAGE_FRAMES,
    "page_log": PAGE_LOG,
    "max_loading": MAX_LOADING,
    "max_games_per_client": MAX_PER_CLIENT,
    "create_burst": CREATE_BURST,
    "create_every_s": CREATE_EVERY,
    "turn_clock_s": [*TURN_CLOCK_RANGE],
    "turn_clock_default_s": TURN_CLOCK,
}
"""Every limit of the web app (``GET /api/options`` sends them; ``docs/web.md`` explains them)."""


def load_rules_text(text: Any) -> Rules:
    """Rules from pasted YAML text (never a file path), with the messages of the command-line programs."""
    if not isinstance(text, str):
        raise RequestError('"yaml" must be a string of YAML')
    if len(text) > MAX_YAML:
        raise RequestError(f"the rules YAML is {len(text)} characters; at most {MAX_YAML}")
    try:
        # The one door for a rules spec (bounded: an alias bomb is refused, not expanded). Text that holds a newline
        # is YAML text to it, never a preset or a file name: the server never opens a file a client names.
        return resolve_rules(text + "\n")
    except (TypeError, ValueError) as err:
        raise RequestError(str(err)) from None


def rules_of(body: dict) -> Rules:
    """The rules a setup asks for: ``{"preset": name}`` or ``{"yaml": text}``, then ``"n_players"`` and
    ``"manches"`` override theirs; the web app's limits bind the result whichever way it came."""
    if body.get("yaml") not in (None, ""):
        rules = load_rules_text(body["yaml"])
    else:
        preset = body.get("preset", "standard")
        if preset not in PRESETS:
            raise RequestError(f"unknown rules preset {preset!r}; valid presets: {', '.join(PRESETS)}")
        rules = resolve_rules(preset)
    players = body.get("n_players")
    if players is not None:
        if not isinstance(players, int) or isinstance(players, bool):
            raise RequestError(f"n_players must be an integer, got {players!r}")
        try:
            rules = rules.replace(n_players=players)
        except ValueError as err:
            raise RequestError(str(err)) from None
    manches = body.get("manches")
    if manches is not None:
        if not isinstance(manches, int) or isinstance(manches, bool) or not 1 <= manches <= MAX_MANCHES:
            raise RequestError(f"manches must be an integer from 1 to {MAX_MANCHES}, got {manches!r}")
        rules = rules.replace(manches=manches)
    return within_limits(rules)


def _host_name(authority: str) -> str:
    """The host name of a ``Host`` header or a URL's authority: lower case, without the port or IPv6 brackets."""
    host = authority.strip().lower()
    if host.startswith("["):
        return host[1 : host.find("]")] if "]" in host else host
    return host.rsplit(":", 1)[0] if host.count(":") == 1 else host


def check_request(request: Request, hosts: Sequence[str] = ()) -> None:
    """403 unless the request comes to this server by one of its own names and, from a browser, from its own page.

    - ``Host`` must name the address the request came in on (``localhost`` too when that is a loopback address)
      or one of ``hosts`` (``--allow-host``): a page that rebinds its own domain name to this server is refused;
    - an ``Origin`` header, when a browser sends one, must be the server's own (same scheme-less authority as
      ``Host``), and ``Sec-Fetch-Site`` must not say another site: a foreign page cannot create, join or act.
      Clients that send no ``Origin`` (scripts, ``curl``) pass on ``Host`` alone.
    """
    authority = request.headers.get("host", "")
    name = _host_name(authority)
    own = {h.lower() for h in hosts}
    server = request.scope.get("server")
    if server:
        address = str(server[0]).lower()
        own.add(address)
        with contextlib.suppress(ValueError):
            if ipaddress.ip_address(address).is_loopback:
                own.add("localhost")
    if not name or name not in own:
        raise RequestError(
            f"this server does not answer to the host name {name[:60]!r} (president-web --allow-host NAME adds one)",
            403,
        )
    origin = request.headers.get("origin")
    if origin is not None:
        parts = urlsplit(origin)
        if parts.scheme not in ("http", "https") or parts.netloc.lower() != authority.strip().lower():
            raise RequestError("requests from another site's page are refused", 403)
    if request.headers.get("sec-fetch-site", "same-origin") not in ("same-origin", "none"):
        raise RequestError("requests from another site's page are refused", 403)


async def read_body(request: Request, limit: int) -> bytes:
    """The request's body, at most ``limit`` bytes (413 past it, read no further); a body must be declared
    ``Content-Type: application/json`` (415 otherwise: a form or a ``text/plain`` post from another page)."""
    declared = request.headers.get("content-length")
    if declared is not None and not declared.isdigit():
        raise RequestError("bad Content-Length header")
    if declared is not None and int(declared) > limit:
        raise RequestError(f"the request body is larger than {limit} bytes", 413)
    has_body = declared not in (None, "0") or "transfer-encoding" in request.headers
    media_type = request.headers.get("content-type", "").split(";", 1)[0].strip().lower()
    if has_body and media_type != "application/json":
        raise RequestError(f"the request body must be Content-Type: application/json, got {media_type[:60]!r}", 415)
    body = bytearray()
    async for chunk in request.stream():
        body += chunk
        if len(body) > limit:
            raise RequestError(f"the request body is larger than {limit} bytes", 413)
    return bytes(body)


async def read_json(request: Request, limit: int = MAX_BODY) -> Any:
    """The request's JSON body, at most ``limit`` bytes (413 past it, 400 if it is not JSON)."""
    return parse_json(await read_body(request, limit))


def _int(body: dict, key: str, low: int, high: int, default: Any = None) -> Any:
    value = body.get(key, default)
    if value is default:
        return value
    if not isinstance(value, int) or isinstance(value, bool) or not low <= value <= high:
        raise RequestError(f"{key} must be an integer from {low} to {high}, got {value!r}")
    return value


def _pace(body: dict, default: float) -> float:
    pace = body.get("pace", default)
    if isinstance(pace, bool) or not isinstance(pace, (int, float)) or not 0 <= pace <= MAX_PACE:
        raise RequestError(f"pace must be a number of seconds from 0 to {MAX_PACE}, got {pace!r}")
    return float(pace)


def view_of(
    session: Session, since: int = 0, limit: int = PAGE_FRAMES, me: int | None = None, now: float | None = None
) -> dict[str, Any]:
    """The view a client of ``session`` gets: player ``me``'s log entries (play) or at most ``limit`` frames
    (watch, replay) from ``since`` on."""
    if session.mode == "play":
        return player_view(session, since, me, now)
    out = game_header(session)
    out["frames"] = session.frames.slice(since, limit)
    out["frames_start"] = min(since, len(session.frames))
    out["frame_count"] = len(session.frames)
    return out


if Starlette is not None:

    class AsciiJSONResponse(JSONResponse):
        """JSON in ASCII: any text, a lone surrogate included, is sent as an escape, never a 500."""

        def render(self, content: Any) -> bytes:
            return json.dumps(content, ensure_ascii=True, separators=(",", ":")).encode("ascii")


def create_app(
    store: Store | None = None, warm: bool = False, hosts: Sequence[str] = (), **store_options: Any
) -> Starlette:
    """The ASGI app. ``store``: the game store (default a new one, ``store_options`` passed to it);
    ``warm``: load the shipped learned agents and the engine's kernels at start-up, before serving (``president-web``
    does: :meth:`Store.warm`);
    ``hosts``: names the server answers to besides the address a request came in on (:func:`check_request`)."""
    if Starlette is None:
        raise RuntimeError('president-web needs Starlette and uvicorn: pip install "president-env[web]"')
    executor = None
    if store is None:
        executor = ThreadPoolExecutor(max_workers=min(4, os.cpu_count() or 1), thread_name_prefix="agents")
        store = Store(executor, **store_options)

    def error(err: RequestError) -> JSONResponse:
        headers = None if err.retry_after is None else {"Retry-After": str(math.ceil(err.retry_after))}
        return AsciiJSONResponse({"error": str(err)}, status_code=err.status, headers=headers)

    def handle(function):
        async def endpoint(request: Request) -> Response:
            try:
                check_request(request, hosts)
                return await function(request)
            except RequestError as err:
                return error(err)

        return endpoint

    async def index(request: Request) -> Response:
        return FileResponse(STATIC / "index.html", headers={"Cache-Control": "no-store"})

    async def options(request: Request) -> Response:
        presets = {name: preset_path(name).read_text(encoding="utf-8") for name in PRESETS}
        return AsciiJSONResponse(
            {
                "presets": presets,
                "agents": list(agent_registry.names()),
                "modes": list(MODES),
                "max_manches": MAX_MANCHES,
                "max_pace": MAX_PACE,
                "limits": LIMITS,
            }
        )

    async def check_rules(request: Request) -> Response:
        body = await read_json(request)
        if not isinstance(body, dict):
            raise RequestError("the body must be a JSON object")
        rules = rules_of(body)
        return AsciiJSONResponse(
            {
                "rules": rules.to_dict(),
                "yaml": rules.to_yaml(),
                "page": rules_page(rules),
                "agents": await store.playable_agents(rules),
            }
        )

    def play_session(request: Request) -> tuple[Session, int | None]:
        """The game of the request and the player whose secret it carries (the header ``X-Player-Key``: never a
        URL, which browsers show, save in their history and send on as a referrer); a play game is read and
        played only with a secret (403)."""
        session = store.get(request.path_params["game_id"])
        if session.mode != "play":
            return session, None
        return session, store.player_of(session, request.headers.get("x-player-key"))

    def client_of(request: Request) -> str:
        """The client's address: what the limits per client count by."""
        return request.client.host if request.client is not None else ""

    def player_out(session: Session, me: int | None, since: int = 0, limit: int = PAGE_FRAMES) -> dict[str, Any]:
        return view_of(session, since, limit, me, store.clock())

    async def hint(request: Request) -> Response:
        await read_body(request, MAX_BODY)  # none needed; one sent must be JSON, as for every other request
        session, me = play_session(request)
        if me is None:
            raise RequestError("hints are for play games", 409)
        return AsciiJSONResponse(await store.hint(session, me))

    async def new_table(request: Request) -> Response:
        body = await read_json(request)
        if not isinstance(body, dict):
            raise RequestError("the body must be a JSON object")
        rules = rules_of(body)
        seed = _int(body, "seed", 0, MAX_SEED)
        session, key = store.create_table(
            rules,
            body.get("name", ""),
            seed=seed,
            pace=_pace(body, 0.6),
            turn_clock=body.get("turn_clock", TURN_CLOCK),
            client=client_of(request),
        )
        return AsciiJSONResponse({**player_out(session, 0), "key": key}, status_code=201)

    async def join_table(request: Request) -> Response:
        session = store.get(request.path_params["game_id"])
        body = await read_json(request)
        if not isinstance(body, dict):
            raise RequestError("the body must be a JSON object")
        key = store.join_table(session, body.get("name", ""))
        return AsciiJSONResponse({**player_out(session, session.keys[key]), "key": key}, status_code=201)

    async def come_back(request: Request) -> Response:
        await read_body(request, MAX_BODY)  # none needed; one sent must be JSON, as for every other request
        session, me = play_session(request)
        if me is None or not session.friends:
            raise RequestError("coming back is for a person at a table for friends", 409)
        store.back(session, me)
        store.start_agents(session)
        return AsciiJSONResponse(player_out(session, me))

    async def start_table(request: Request) -> Response:
        session, me = play_session(request)
        body = await read_json(request)
        if not isinstance(body, dict) or me is None:
            raise RequestError("the body must be a JSON object")
        agent = body.get("agent", "heuristic-3")
        if not isinstance(agent, str):
            raise RequestError('"agent" must be an agent name')
        await store.start_table(session, me, agent)
        return AsciiJSONResponse(player_out(session, me))

    async def new_game(request: Request) -> Response:
        body = await read_json(request)
        if not isinstance(body, dict):
            raise RequestError("the body must be a JSON object")
        mode = body.get("mode", "play")
        if mode not in ("play", "watch"):
            raise RequestError('mode must be "play" or "watch" (replays are posted to /api/replays)')
        rules = rules_of(body)
        seats = body.get("seats")
        if not isinstance(seats, list):
            raise RequestError(f'"seats" must be a list of {rules.n_players} agent names, one per player')
        human = _int(body, "human", 0, rules.n_players - 1) if mode == "play" else None
        if mode == "play" and human is None:
            raise RequestError(f'play mode needs "human": your player, 0 to {rules.n_players - 1}')
        if mode == "watch" and HUMAN in seats:
            raise RequestError("watch mode has agents at every seat")
        seed = _int(body, "seed", 0, MAX_SEED)
        pace = _pace(body, 0.6)
        session = await store.create(mode, rules, seats, human=human, seed=seed, pace=pace, client=client_of(request))
        store.start_agents(session)
        out = view_of(session)
        if session.keys:
            out["key"] = next(iter(session.keys))  # the creator's secret: sent once, kept by their browser
        return AsciiJSONResponse(out, status_code=201)

    async def get_game(request: Request) -> Response:
        session, me = play_session(request)
        since = request.query_params.get("since", "0")
        if not since.isdigit() or len(since) > 9:
            raise RequestError("since must be a non-negative integer")
        limit = request.query_params.get("limit", str(PAGE_FRAMES))
        if not limit.isdigit() or int(limit) > PAGE_FRAMES:
            raise RequestError(f"limit must be an integer from 0 to {PAGE_FRAMES}")
        store.start_agents(session)  # agents that stopped for want of a viewer go on
        return AsciiJSONResponse(player_out(session, me, int(since), int(limit)))

    async def move(request: Request) -> Response:
        session, me = play_session(request)
        if me is None:
            raise RequestError("only play games take moves", 409)
        body = await read_json(request)
        action, cards = human_action(session, body, me)
        since = _int(body, "since", 0, 10**9, 0)  # checked before the move is made
        store.apply(session, action, cards=cards)
        if session.friends:
            store.back(session, me)  # they act: no longer away
        store.start_agents(session)
        return AsciiJSONResponse(player_out(session, me, since))

    async def set_pace(request: Request) -> Response:
        session, me = play_session(request)
        if session.friends and not session.seats[me].host:
            raise RequestError("only the host sets the pace", 403)
        body = await read_json(request)
        if not isinstance(body, dict):
            raise RequestError("the body must be a JSON object")
        pace = _pace(body, session.pace)
        paused = body.get("paused", session.paused)
        if not isinstance(paused, bool):
            raise RequestError("paused must be true or false")
        session.pace, session.paused = pace, paused
        store.start_agents(session)
        return AsciiJSONResponse({"pace": session.pace, "paused": session.paused})

    async def get_replay(request: Request) -> Response:
        session, _ = play_session(request)
        if session.mode == "play" and not session.over:
            raise RequestError("the replay of a game you play is available once the game is over", 409)
        replay = session.replay if session.replay is not None else Replay.of(session.game)
        text = await asyncio.get_running_loop().run_in_executor(store.replayer, _replay_text, replay)
        headers = {"Content-Disposition": f'attachment; filename="president-{session.id[:8]}.json"'}
        return Response(text, media_type="application/json", headers=headers)

    async def delete_game(request: Request) -> Response:
        await read_body(request, MAX_BODY)  # none needed; one sent must be JSON, as for every other request
        session, me = play_session(request)
        if session.friends and not session.seats[me].host:
            raise RequestError("only the host closes the table", 403)
        store.close(request.path_params["game_id"])
        return Response(status_code=204)

    async def post_replay(request: Request) -> Response:
        raw = await read_body(request, MAX_REPLAY_BYTES)
        # Parsed and checked in the replay thread, a chunk at a time.
        session = await store.open_replay(raw, client_of(request))
        return AsciiJSONResponse(view_of(session), status_code=201)

    async def janitor() -> None:
        while True:
            await asyncio.sleep(30)
            store.expire()

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette):
        task = asyncio.get_running_loop().create_task(janitor())
        if warm:  # before the first request: importing torch would hold the interpreter for a second at a time
            await asyncio.get_running_loop().run_in_executor(store.loader, store.warm)
        try:
            yield
        finally:
            task.cancel()
            store.shutdown()
            if executor is not None:
                executor.shutdown(wait=False, cancel_futures=True)

    routes = [
        Route("/", index),
        Route("/api/options", handle(options)),
        Route("/api/rules", handle(check_rules), methods=["POST"]),
        Route("/api/games", handle(new_game), methods=["POST"]),
        Route("/api/games/{game_id}", handle(get_game), methods=["GET"]),
        Route("/api/games/{game_id}", handle(delete_game), methods=["DELETE"]),
        Route("/api/games/{game_id}/move", handle(move), methods=["POST"]),
        Route("/api/games/{game_id}/pace", handle(set_pace), methods=["POST"]),
        Route("/api/games/{game_id}/replay", handle(get_replay), methods=["GET"]),
        Route("/api/games/{game_id}/hint", handle(hint), methods=["POST"]),
        Route("/api/games/{game_id}/back", handle(come_back), methods=["POST"]),
        Route("/api/tables", handle(new_table), methods=["POST"]),
        Route("/api/tables/{game_id}/join", handle(join_table), methods=["POST"]),
        Route("/api/tables/{game_id}/start", handle(start_table), methods=["POST"]),
        Route("/api/replays", handle(post_replay), methods=["POST"]),
        Mount("/static", app=StaticFiles(directory=STATIC), name="static"),
    ]
    app = Starlette(routes=routes, lifespan=lifespan)
    app.state.store = store
    return app


def _replay_text(replay: Any) -> str:
    return json.dumps(replay.to_dict(), ensure_ascii=True, separators=(",", ":"))


def _parser() -> ArgumentParser:
    parser = ArgumentParser(prog="president-web", description="Play, watch and replay Président in a browser.")
    parser.add_argument("--host", default="127.0.0.1", help="interface to listen on (default: %(default)s)")
    parser.add_argument("--port", type=int, default=8000, help="port (default: %(default)s)")
    parser.add_argument("--idle-ttl", type=float, default=1800.0, help="seconds before an idle game is dropped")
    parser.add_argument("--max-games", type=int, default=200, help="games held at once (default: %(default)s)")
    parser.add_argument(
        "--allow-host",
        action="append",
        default=[],
        metavar="NAME",
        help="a host name the server is reached by, besides its addresses, localhost and this machine's name "
        "(repeatable)",
    )
    return parser


def main(argv: list[str] | None = None) -> int:
    """``president-web``: serve the browser table until interrupted; exit code 2 on bad arguments."""
    parser = _parser()
    args = parser.parse_args(argv)
    if not 0 <= args.port <= 65535:
        parser.error(f"--port must be 0..65535, got {args.port}")
    if args.idle_ttl <= 0 or args.max_games < 1:
        parser.error("--idle-ttl must be positive and --max-games at least 1")
    try:
        import uvicorn
    except ImportError:
        print('president-web: error: needs Starlette and uvicorn: pip install "president-env[web]"', file=sys.stderr)
        return 2
    if Starlette is None:
        print('president-web: error: needs Starlette and uvicorn: pip install "president-env[web]"', file=sys.stderr)
        return 2
    hosts = [*args.allow_host, socket.gethostname(), f"{socket.gethostname()}.local"]  # this machine's own names
    if args.host not in ("0.0.0.0", "::", ""):
        hosts.append(args.host.strip("[]"))
    app = create_app(warm=True, hosts=hosts, idle_ttl=args.idle_ttl, max_games=args.max_games)
    host = f"[{args.host}]" if ":" in args.host else args.host
    print(f"president-web: serving on http://{host}:{args.port}/ (Ctrl-C to stop)", flush=True)
    try:
        uvicorn.run(app, host=args.host, port=args.port, log_level="warning")
    except KeyboardInterrupt:
        pass
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
