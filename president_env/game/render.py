"""The table as text, for humans: ``render_table`` draws one slot of a game.

What a render shows is computed once, as a :class:`TableView` (:func:`describe_table`;
:func:`describe_result` at the end of a game); its ``text()`` is the text, and
:func:`president_env.game.picture.draw_table` draws it as a picture. Used by the
envs' ``render()`` (``"ansi"`` returns the text, ``"human"`` prints it,
``"rgb_array"`` returns the picture) and by ``python scripts/render_demo.py``. The engine stores
hands as counts per rank; suits exist only for display. The AEC env (with a
render mode) follows the real cards from the deal (``GameState.dealt_to``)
through the exchange and the plays, and passes them as ``suits``; without them
:func:`assign_suits` gives every card a suit canonically (C, D, H, S in player
order), so that no card appears twice at the table.

A rendered table (standard rules, the Président giving back cards)::

    Président · 4 players · manche 1/1 · exchange
      seat 0  player_0  Président     15 cards  ← to act
      seat 1  player_1  Vice-Président 13 cards
      ...
    Exchange: player_0 (Président) gives back 2 card(s) to player_3 (Trou du cul), 2 left
    Trick: none (a new trick is led)
    Hand of player_0 (15): 3♣ 3♦ 5♥ … 2♠
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import gymnasium
import numpy as np

from president_env.core.cards import JOKER, RANK_NAMES, SUIT_SYMBOLS, SUITS, card_name, parse_card, sort_cards
from president_env.core.engine import PHASE_EXCHANGE, GameState
from president_env.core.rules import Rules

ROLE_LABELS: tuple[str, ...] = ("Président", "Vice-Président", "Neutre", "Vice-Trou", "Trou du cul")
"""Display names of the role codes 0..4 (``deals.ROLE_NAMES`` order)."""


def ordinal(n: int) -> str:
    """``1`` -> ``"1st"``, ``2`` -> ``"2nd"``, ``11`` -> ``"11th"``."""
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"


def pretty_card(card: str) -> str:
    """``"10H"`` -> ``"10♥"``; jokers stay ``"JK"``."""
    rank, suit = parse_card(card)
    return "JK" if rank == JOKER else RANK_NAMES[rank] + SUIT_SYMBOLS[suit]


def pretty_cards(cards: Sequence[str]) -> str:
    return " ".join(pretty_card(c) for c in sort_cards(cards)) or "-"


def assign_suits(rules: Rules, counts: np.ndarray, clubs_three_first: Sequence[int] = ()) -> list[list[str]]:
    """A canonical suit for every card at the table.

    counts ``(P, R) int``: cards held per player and rank. For each rank the
    suits C, D, H, S (cycled per deck) go to players in index order; players in
    ``clubs_three_first`` receive a 3 of clubs first (the engine knows who holds
    it: the leader of a manche led by the 3 of clubs). Returns one sorted list
    of card strings per player.
    """
    counts = np.asarray(counts)
    hands: list[list[str]] = [[] for _ in range(counts.shape[0])]
    for rank in range(counts.shape[1]):
        held = counts[:, rank]
        if not held.any():
            continue
        if rank == JOKER:
            for player in np.flatnonzero(held):
                hands[player] += ["JK"] * int(held[player])
            continue
        pool = list(SUITS) * rules.decks
        given = np.zeros(counts.shape[0], np.int64)
        if rank == 0:
            for player in clubs_three_first:
                if held[player] > given[player] and "C" in pool:
                    pool.remove("C")
                    hands[player].append(card_name(0, "C"))
                    given[player] += 1
        for player in range(counts.shape[0]):
            for _ in range(int(held[player] - given[player])):
                hands[player].append(card_name(rank, pool.pop(0) if pool else "C"))
    return [sort_cards(h) for h in hands]


def _player_name(player: int) -> str:
    return f"player_{player}"


@dataclass(frozen=True)
class SeatView:
    """One row of the table: a seat (or, in a finished game's view, a player) and what is known of it."""

    seat: int
    name: str
    role: str | None
    """A :data:`ROLE_LABELS` entry; ``None`` before the first roles."""
    cards: int
    notes: tuple[str, ...] = ()
    """``"out 1st"``, ``"passed"``, ``"dealer"``; in a finished game's view its place and score."""
    to_act: bool = False


@dataclass(frozen=True)
class TableView:
    """What a render of one table shows, computed once for both drawings of it: the text
    (:meth:`text`, ``render_mode="ansi"``) and the picture (:func:`president_env.game.picture.draw_table`,
    ``"rgb_array"``). Built by :func:`describe_table` and, for a finished game, :func:`describe_result`."""

    n_players: int
    manche: str
    """``"manche 1/5"``, ``"decisive manche"``, or ``"5 manche(s)"`` once finished."""
    phase: str
    """``"exchange"``, ``"play"`` or ``"finished"``."""
    seats: tuple[SeatView, ...]
    order: str | None = None
    """With ``rules.revolution``: ``"REVOLUTION (3 strongest)"`` or ``"normal order"``."""
    exchanges: tuple[str, ...] = ()
    """The gives still due, one line each."""
    trick: tuple[str, ...] = ()
    """The cards of the play in force (a rank name alone where their suits are unknown); empty: no trick."""
    trick_line: str | None = None
    """The text of the ``Trick:`` line (who played it, or who leads); ``None`` in the exchange."""
    constraint: str | None = None
    """The "or nothing" rule's demand, if any."""
    hand_owner: str = ""
    hand: tuple[str, ...] = ()
    """The shown hand's card strings, weakest first."""
    hand_exchange: str | None = None
    """What the hand's owner gave and received in this manche's exchange."""
    last: str | None = None
    """What just happened, one line."""
    result: tuple[str, ...] = ()
    """A finished game's lines (:func:`describe_result`)."""
    winner: str | None = None

    def text(self) -> str:
        """The view as text: :func:`render_table`'s (or :func:`render_result`'s) lines."""
        if self.phase == "finished":
            return "\n".join(((f"Last: {self.last}",) if self.last else ()) + self.result)
        header = f"Président · {self.n_players} players · {self.manche} · {self.phase}"
        lines = [header + (f" · {self.order}" if self.order else "")]
        width = max(len(label) for label in ROLE_LABELS)
        for row in self.seats:
            parts = [f"  seat {row.seat}  {row.name:<9} {row.role or '-':<{width}}"]
            parts.append(f"{row.cards:>3} card{'s' if row.cards != 1 else ' '}")
            parts += row.notes
            if row.to_act:
                parts.append("← to act")
            lines.append("  ".join(parts))
        lines += [f"Exchange: {line}" for line in self.exchanges]
        if self.trick_line is not None:
            lines.append(f"Trick: {self.trick_line}")
        if self.constraint:
            lines.append(f"Or nothing: {self.constraint}")
        lines.append(f"Hand of {self.hand_owner} ({len(self.hand)}): {pretty_cards(self.hand)}")
        if self.hand_exchange:
            lines.append(f"  exchange: {self.hand_exchange}")
        if self.last:
            lines.append(f"Last: {self.last}")
        return "\n".join(lines)


def describe_table(
    rules: Rules,
    game,
    slot: int = 0,
    viewer: int | str | None = None,
    suits: Sequence[Sequence[str]] | None = None,
    *,
    trick_cards: Sequence[str] | None = None,
    last_action: str | None = None,
    names: Sequence[str] | None = None,
    you: int | None = None,
) -> TableView:
    """What the table of one slot shows, as a :class:`TableView`.

    Args:
        rules: the rules of ``game``.
        game: a ``VecGame`` or an engine ``GameState``.
        slot: which slot of the batch.
        viewer: the player (index or ``"player_i"``) whose hand is shown; ``None``: the player to act.
        suits: optional per-player lists of card strings with the real suits (kept by the AEC env);
            without it suits are assigned canonically by :func:`assign_suits`.
        trick_cards: optional card strings of the play in force (else its rank is repeated).
        last_action: optional line describing what just happened.
        names: optional name of each player (default ``player_i``).
        you: optional player addressed in the second person (``You lead``, ``You give back``).
    """
    state: GameState = getattr(game, "state", game)
    p = rules.n_players
    player_at = state.player_at_seat[slot].astype(np.int64)
    seat_of = state.seat_of_player[slot].astype(np.int64)
    current = int(state.current[slot])
    to_act = int(player_at[current])
    if viewer is None:
        viewer = to_act
    elif isinstance(viewer, str):
        viewer = int(viewer.removeprefix("player_"))
    viewer = int(viewer)
    roles = state.roles[slot]

    def name_of(player: int) -> str:
        return names[player] if names is not None else _player_name(player)

    def who(seat: int) -> str:
        role = int(roles[seat])
        name = name_of(int(player_at[seat]))
        return f"{name} ({ROLE_LABELS[role]})" if role >= 0 else name

    def verb(seat: int, third: str, second: str) -> str:
        return second if you is not None and int(player_at[seat]) == you else third

    manche = "decisive manche" if state.decisive[slot] else f"manche {int(state.manche[slot]) + 1}/{rules.manches}"
    exchanging = int(state.phase[slot]) == PHASE_EXCHANGE
    order = None
    if rules.revolution:
        order = "REVOLUTION (3 strongest)" if state.revolution[slot] else "normal order"

    seats = []
    for seat in range(p):
        role = int(roles[seat])
        notes = []
        finish = int(state.out_order[slot, seat])
        if finish >= 0:
            penalized = " (on a 2: ranked last)" if state.penalized[slot, seat] else ""
            notes.append(f"out {ordinal(finish + 1)}{penalized}")
        if state.passed[slot, seat]:
            notes.append("passed")
        if seat == int(state.dealer[slot]):
            notes.append("dealer")
        seats.append(
            SeatView(
                seat,
                name_of(int(player_at[seat])),
                ROLE_LABELS[role] if role >= 0 else None,
                int(state.n_held[slot, seat]),
                tuple(notes),
                seat == current,
            )
        )

    exchanges = []
    if exchanging:
        for seat in np.flatnonzero(state.gives_left[slot] > 0):
            partner = int(state.partner[slot, seat])
            due = int(state.gives_left[slot, seat]) + int(state.gave[slot, seat].sum())
            exchanges.append(
                f"{who(int(seat))} {verb(int(seat), 'gives', 'give')} back {due} card(s) to {who(partner)}, "
                f"{int(state.gives_left[slot, seat])} left"
            )
    trick: tuple[str, ...] = ()
    trick_line = None
    trick_rank = int(state.trick_rank[slot])
    if trick_rank >= 0:
        count = int(state.trick_count[slot])
        trick = tuple(sort_cards(trick_cards)) if trick_cards else (RANK_NAMES[trick_rank],) * count
        shown = pretty_cards(trick_cards) if trick_cards else " ".join(trick)
        trick_line = f"{shown} ({count} × {RANK_NAMES[trick_rank]}) by {who(int(state.trick_owner[slot]))}"
    elif not exchanging:
        trick_line = f"none, {who(current)} {verb(current, 'leads', 'lead')}"
    constraint = None
    if state.constrained[slot]:
        constraint = f"{who(current)} must play {RANK_NAMES[trick_rank]} again or pass"

    seat = int(seat_of[viewer])
    if suits is not None:
        hand = list(suits[viewer])
    else:
        hand = assign_suits(rules, state.hands[slot, seat_of])[viewer]
    gave, received = state.gave[slot, seat], state.received[slot, seat]
    hand_exchange = None
    if gave.any() or received.any():
        hand_exchange = f"gave [{_rank_text(gave)}], received [{_rank_text(received)}]"
    return TableView(
        n_players=p,
        manche=manche,
        phase="exchange" if exchanging else "play",
        seats=tuple(seats),
        order=order,
        exchanges=tuple(exchanges),
        trick=trick,
        trick_line=trick_line,
        constraint=constraint,
        hand_owner=name_of(viewer),
        hand=tuple(sort_cards(hand)),
        hand_exchange=hand_exchange,
        last=last_action,
    )


def render_table(rules: Rules, game, *args, **kwargs) -> str:
    """The table of one slot as text: the :func:`describe_table` of the same arguments, as text."""
    return describe_table(rules, game, *args, **kwargs).text()


def _rank_text(counts: np.ndarray) -> str:
    text = " ".join(RANK_NAMES[r] for r in range(counts.shape[0]) for _ in range(int(counts[r])))
    return text or "nothing"


def describe_result(
    positions: Sequence[int], scores: Sequence[int], winner: int | None, manches: int, last_action: str | None = None
) -> TableView:
    """A finished game: each player's place in the last manche and total, the winner (:func:`render_result`)."""
    order = sorted(range(len(positions)), key=lambda i: positions[i])
    lines = [f"Game over after {manches} manche(s)."]
    lines.append("Last manche: " + ", ".join(f"{ordinal(positions[i] + 1)} {_player_name(i)}" for i in order))
    lines.append("Scores: " + ", ".join(f"{_player_name(i)} {int(s)}" for i, s in enumerate(scores)))
    has_winner = winner is not None and winner >= 0
    if has_winner:
        lines.append(f"Winner: {_player_name(winner)}")
    rows = tuple(
        SeatView(i, _player_name(i), None, 0, (f"{ordinal(positions[i] + 1)} in the last manche", f"score {int(s)}"))
        for i, s in enumerate(scores)
    )
    return TableView(
        n_players=len(positions),
        manche=f"{manches} manche(s)",
        phase="finished",
        seats=rows,
        last=last_action,
        result=tuple(lines),
        winner=_player_name(winner) if has_winner else None,
    )


def render_result(positions: Sequence[int], scores: Sequence[int], winner: int | None, manches: int) -> str:
    """The end of a game: finishing order of the last manche, totals and the winner."""
    return describe_result(positions, scores, winner, manches).text()


def render_for_mode(
    render_mode: str | None,
    make_text: Callable[[], str],
    factory: str,
    make_picture: Callable[[], np.ndarray] | None = None,
) -> str | np.ndarray | None:
    """The envs' ``render()``: text for ``"ansi"``, printed for ``"human"``, ``make_picture()`` for ``"rgb_array"``
    (:func:`president_env.game.picture.draw_table` of the same view), a warning without a mode."""
    if render_mode is None:
        gymnasium.logger.warn(
            "You are calling render method without specifying any render mode. "
            f'Pass render_mode="ansi", "human" or "rgb_array" to {factory}.'
        )
        return None
    if render_mode == "rgb_array" and make_picture is not None:
        return make_picture()
    text = make_text()
    if render_mode == "human":
        print(text + "\n")
        return None
    return text


__all__ = [
    "ROLE_LABELS",
    "SeatView",
    "TableView",
    "assign_suits",
    "describe_result",
    "describe_table",
    "pretty_card",
    "pretty_cards",
    "render_for_mode",
    "render_result",
    "render_table",
    "sort_cards",
]
