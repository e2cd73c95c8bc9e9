"""The table as text, for humans: ``render_table`` draws one slot of a game.

Used by the AEC env's ``render()`` (``"ansi"`` returns the text, ``"human"``
prints it) and by ``python scripts/render_demo.py``. The engine stores
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


def render_table(
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
) -> str:
    """The table of one slot as text.

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

    manche = int(state.manche[slot])
    header = f"Président · {p} players · manche {manche + 1}/{rules.manches}"
    if state.decisive[slot]:
        header = f"Président · {p} players · decisive manche"
    exchanging = int(state.phase[slot]) == PHASE_EXCHANGE
    header += " · exchange" if exchanging else " · play"
    if rules.revolution:
        header += " · REVOLUTION (3 strongest)" if state.revolution[slot] else " · normal order"
    lines = [header]

    width = max(len(label) for label in ROLE_LABELS)
    for seat in range(p):
        player = int(player_at[seat])
        role = int(roles[seat])
        held = int(state.n_held[slot, seat])
        parts = [f"  seat {seat}  {name_of(player):<9} {ROLE_LABELS[role] if role >= 0 else '-':<{width}}"]
        parts.append(f"{held:>3} card{'s' if held != 1 else ' '}")
        order = int(state.out_order[slot, seat])
        if order >= 0:
            parts.append(
                f"out {ordinal(order + 1)}" + (" (on a 2: ranked last)" if state.penalized[slot, seat] else "")
            )
        if state.passed[slot, seat]:
            parts.append("passed")
        if seat == int(state.dealer[slot]):
            parts.append("dealer")
        if seat == current:
            parts.append("← to act")
        lines.append("  ".join(parts))

    if exchanging:
        for seat in np.flatnonzero(state.gives_left[slot] > 0):
            partner = int(state.partner[slot, seat])
            due = int(state.gives_left[slot, seat]) + int(state.gave[slot, seat].sum())
            lines.append(
                f"Exchange: {who(int(seat))} {verb(int(seat), 'gives', 'give')} back {due} card(s) to {who(partner)}, "
                f"{int(state.gives_left[slot, seat])} left"
            )
    trick_rank = int(state.trick_rank[slot])
    if trick_rank >= 0:
        count = int(state.trick_count[slot])
        shown = pretty_cards(trick_cards) if trick_cards else " ".join([RANK_NAMES[trick_rank]] * count)
        lines.append(f"Trick: {shown} ({count} × {RANK_NAMES[trick_rank]}) by {who(int(state.trick_owner[slot]))}")
    elif not exchanging:
        lines.append(f"Trick: none, {who(current)} {verb(current, 'leads', 'lead')}")
    if state.constrained[slot]:
        lines.append(f"Or nothing: {who(current)} must play {RANK_NAMES[trick_rank]} again or pass")

    seat = int(seat_of[viewer])
    if suits is not None:
        hand = list(suits[viewer])
    else:
        hand = assign_suits(rules, state.hands[slot, seat_of])[viewer]
    lines.append(f"Hand of {name_of(viewer)} ({len(hand)}): {pretty_cards(hand)}")
    gave, received = state.gave[slot, seat], state.received[slot, seat]
    if gave.any() or received.any():
        lines.append(f"  exchange: gave [{_rank_text(gave)}], received [{_rank_text(received)}]")
    if last_action:
        lines.append(f"Last: {last_action}")
    return "\n".join(lines)


def _rank_text(counts: np.ndarray) -> str:
    text = " ".join(RANK_NAMES[r] for r in range(counts.shape[0]) for _ in range(int(counts[r])))
    return text or "nothing"


def render_result(positions: Sequence[int], scores: Sequence[int], winner: int | None, manches: int) -> str:
    """The end of a game: finishing order of the last manche, totals and the winner."""
    order = sorted(range(len(positions)), key=lambda i: positions[i])
    lines = [f"Game over after {manches} manche(s)."]
    lines.append("Last manche: " + ", ".join(f"{ordinal(positions[i] + 1)} {_player_name(i)}" for i in order))
    lines.append("Scores: " + ", ".join(f"{_player_name(i)} {int(s)}" for i, s in enumerate(scores)))
    if winner is not None and winner >= 0:
        lines.append(f"Winner: {_player_name(winner)}")
    return "\n".join(lines)


def render_for_mode(render_mode: str | None, make_text: Callable[[], str], factory: str) -> str | None:
    """The envs' ``render()``: text for ``"ansi"``, printed for ``"human"``, a warning without a mode."""
    if render_mode is None:
        gymnasium.logger.warn(
            "You are calling render method without specifying any render mode. "
            f'Pass render_mode="ansi" or "human" to {factory}.'
        )
        return None
    text = make_text()
    if render_mode == "human":
        print(text + "\n")
        return None
    return text


__all__ = [
    "ROLE_LABELS",
    "assign_suits",
    "pretty_card",
    "pretty_cards",
    "render_for_mode",
    "render_result",
    "render_table",
    "sort_cards",
]
