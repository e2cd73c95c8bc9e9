"""Playing a tournament's deal groups: lineups, the deals of a group, and one chunk of groups on one ``VecGame``.

**Duplicate deals.** Card luck dominates a single manche, so every *deal group* (the deals of one game: one
per manche, plus one kept for a possible decisive manche, and the first dealer) is played ``P`` times, the
lineup rotated one seat further each time: rotation ``s`` puts ``lineup[(i - s) % P]`` at player ``i``.
Every agent thus plays every player's cards of the deal. The first manche of every rotation starts from
identical hands by player; later manches (the decisive one too) redeal the group's hands by player
(only the cards needed to match a different dealer's hand sizes move), though roles and the exchange then
follow each rotation's own results.

**Batched play.** A chunk of groups runs as one :class:`~president_env.VecGame` with ``groups * P`` slots;
at each step every distinct agent gets one ``act_batch`` call for the live slots where it is to act. Slots
whose game has ended only fill in legal moves until the whole chunk is done. :func:`play_chunk` returns
every regular manche as :class:`MancheRecords`: points, positions, the roles each player started it with,
and the winner of its game.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from president_env import agents as agent_registry
from president_env.core import engine
from president_env.core.deals import ROLE_NAMES
from president_env.core.manche import deal_hands, deal_sizes, first_receiver, table_for_roles
from president_env.core.registry import check_name
from president_env.core.rules import Rules
from president_env.core.vec_game import VecGame


def agent_name(spec: Any) -> str:
    """The name results are reported under: the spec itself for a name, else the agent's ``name`` attribute."""
    if isinstance(spec, (str, os.PathLike)):
        return os.fspath(spec)
    return str(getattr(spec, "name", type(spec).__name__))


def seat_lineup(lineup: Sequence[Any], n_players: int) -> list[Any]:
    """The lineup checked and with one entry per player: a shorter lineup is repeated cyclically.

    ``ValueError`` for a longer lineup, an unknown agent name or an object that cannot act.
    """
    if isinstance(lineup, (str, bytes)) or not isinstance(lineup, Sequence) or len(lineup) == 0:
        raise ValueError("lineup must be a non-empty list of agent names or agent objects")
    if len(lineup) > n_players:
        raise ValueError(f"lineup has {len(lineup)} agents but the rules seat {n_players} players")
    for spec in lineup:
        if isinstance(spec, (str, os.PathLike)):
            check_name(spec)
        elif not (hasattr(spec, "act_batch") or hasattr(spec, "act")):
            raise ValueError(f"lineup entry {spec!r} is neither an agent name nor an object with act_batch or act")
    return [lineup[i % len(lineup)] for i in range(n_players)]


def versus_lineup(agent: Any, opponent: Any, n_players: int) -> list[Any]:
    """``agent`` in the first seat and ``opponent`` in each of the other ``n_players - 1``: one agent against a
    table of copies, the lineup of every versus measurement."""
    return [agent] + [opponent] * (n_players - 1)


def rotation_entries(n_players: int) -> np.ndarray:
    """``(P rotations, P players) int64``: the lineup entry at each player; rotation s seats entry (i - s) % P at i."""
    players = np.arange(n_players)
    return (players[None, :] - players[:, None]) % n_players


def distinct_agents(entries: Sequence[Any]) -> tuple[list[Any], np.ndarray]:
    """Distinct agents (names by value, objects by identity) in order of appearance, and each entry's index."""
    keys: list[Any] = []
    index = []
    for spec in entries:
        key = os.fspath(spec) if isinstance(spec, (str, os.PathLike)) else id(spec)
        if key not in keys:
            keys.append(key)
        index.append(keys.index(key))
    first = [entries[index.index(k)] for k in range(len(keys))]
    return first, np.array(index, np.int64)


@dataclass
class MancheRecords:
    """Every regular manche played, one row each (``n`` rows, ``P`` players).

    group ``(n,) int64`` deal group (global index); rotation ``(n,) int64``; manche ``(n,) int64`` index in
    the game; decisions ``(n,) int64`` decisions taken in the manche (exchange and play); points ``(n, P)
    float64`` raw points by player; positions ``(n, P) int64`` finishing position by player (0 = first);
    roles ``(n, P) int64`` each player's role as the manche started (``deals.ROLE_NAMES`` codes, -1 none);
    winner ``(n,) int64`` the player who won the game the manche belongs to.
    """

    group: np.ndarray
    rotation: np.ndarray
    manche: np.ndarray
    decisions: np.ndarray
    points: np.ndarray
    positions: np.ndarray
    roles: np.ndarray
    winner: np.ndarray

    @classmethod
    def concatenate(cls, parts: Sequence[MancheRecords]) -> MancheRecords:
        names = [f.name for f in dataclasses.fields(cls)]
        return cls(*(np.concatenate([getattr(part, name) for part in parts]) for name in names))


@dataclass
class ChunkTask:
    """What a worker needs to play one chunk (picklable)."""

    rules: Rules
    specs: list[Any]  # distinct agents: names (made in the worker) or objects
    entry_agent: np.ndarray  # (P,) distinct-agent index of each lineup entry
    first_group: int
    n_groups: int
    seed: np.random.SeedSequence  # deals and game generator
    agent_seeds: list[np.random.SeedSequence]  # one per distinct agent


def _make_agents(task: ChunkTask) -> list[Any]:
    made = []
    for spec, seed in zip(task.specs, task.agent_seeds):
        if isinstance(spec, (str, os.PathLike)):
            agent = agent_registry.make(spec, task.rules, seed=seed)
        else:
            agent = spec
            # Reseeding per chunk keeps an object's decisions independent of which process plays the chunk.
            if callable(getattr(agent, "reset", None)):
                agent.reset(seed)
        made.append(agent_registry.as_agent(agent))
    return made


def group_setup(rules: Rules, rng: np.random.Generator, n_groups: int) -> tuple[np.ndarray | None, list, list | None]:
    """Per group: the first dealer ``(G,)``, the deals by player (one per manche + one for a decisive manche),
    and with ``initial_roles: draw`` the drawn roles by player (else ``None``; with them the first dealer is
    ``None``: the drawn Trou du cul deals the first manche)."""
    p = rules.n_players
    dealers = rng.integers(0, p, size=n_groups)
    identity = list(range(p))
    deals = [[deal_hands(rules, rng, int(d), identity) for _ in range(rules.manches + 1)] for d in dealers]
    roles = None
    if rules.initial_roles == "draw":
        # The draw is part of the deal group: every rotation starts from the same roles by player.
        role_by_pos = engine.tables(rules).role_by_pos
        roles = [[ROLE_NAMES[role_by_pos[pos]] for pos in rng.permutation(p)] for _ in range(n_groups)]
        for group_deals, names in zip(deals, roles):
            # The table seated by the draw (reseat_by_role); its Trou du cul deals the first manche.
            seat_of_player, dealer = table_for_roles(rules, names)
            group_deals[0] = deal_hands(rules, rng, dealer, seat_of_player)
        dealers = None
    return dealers, deals, roles


def _fit_hand_sizes(hands: list[list[str]], sizes: Sequence[int]) -> list[list[str]]:
    """The deal ``hands`` with the fewest cards moved so that player i holds ``sizes[i]`` cards.

    With ``N mod P != 0`` cards the dealer decides who holds one card more; rotations of a group have
    different dealers after the first manche, so a few cards move from the players with one too many to
    those with one too few (the last cards of a hand, i.e. the last cards dealt to it).
    """
    fitted = [list(hand) for hand in hands]
    spare: list[str] = []
    for hand, size in zip(fitted, sizes):
        while len(hand) > size:
            spare.append(hand.pop())
    for hand, size in zip(fitted, sizes):
        while len(hand) < size:
            hand.append(spare.pop())
    return fitted


def _redeal(game: VecGame, slots: np.ndarray, deals: list, group_of_slot: np.ndarray) -> None:
    """Give ``slots``, whose previous manche just ended, their group's deal for the manche about to start."""
    rules, state = game.rules, game.state
    sizes_by_seat = deal_sizes(rules, first_receiver(rules, state.dealer[slots]))  # the engine's own deal rule
    sizes = np.take_along_axis(sizes_by_seat, state.seat_of_player[slots].astype(np.int64), axis=1)
    chosen = [_fit_hand_sizes(deals[group_of_slot[s]][state.manche[s]], sizes[i].tolist()) for i, s in enumerate(slots)]
    game.redeal(chosen, slots)


def _choose_actions(
    agents: Sequence[Any], names: Sequence[str], agent_at: np.ndarray, game: VecGame, live: np.ndarray
) -> np.ndarray:
    """One action per slot: each agent decides, in one ``act_batch`` call, for the live slots where it is to act.

    ``agent_at (B, P)`` is the distinct-agent index at each player. Finished slots get their first legal action
    (nobody reads their outcome). Raises ``ValueError`` naming the agent if it returns an illegal action.
    """
    mask = game.legal_mask()
    actions = mask.argmax(axis=1).astype(np.int64)
    slots = np.arange(game.batch_size)
    acting = agent_at[slots, game.current_player]
    obs = game.observe()
    for a, agent in enumerate(agents):
        rows = np.flatnonzero(live & (acting == a))
        if rows.size == 0:
            continue
        chosen = np.asarray(agent.act_batch(obs[rows], mask[rows]), dtype=np.int64).reshape(-1)
        if chosen.shape != rows.shape:
            raise ValueError(f"agent {names[a]!r} returned {chosen.size} actions for {rows.size} observations")
        legal = (chosen >= 0) & (chosen < game.num_actions)
        legal[legal] = mask[rows[legal], chosen[legal]]
        if not legal.all():
            bad = int(np.flatnonzero(~legal)[0])
            raise ValueError(f"agent {names[a]!r} chose illegal action {int(chosen[bad])} (slot {int(rows[bad])})")
        actions[rows] = chosen
    return actions


def play_chunk(task: ChunkTask, report: Callable[[int], Any] | None = None) -> MancheRecords:
    """Play every rotation of ``task.n_groups`` deal groups to the end of their game; the regular manches.

    ``report(k)``, when given, is called whenever k more groups have finished all their rotations.
    """
    rules = task.rules
    p = rules.n_players
    deal_seed, game_seed = task.seed.spawn(2)
    dealers, deals, roles = group_setup(rules, np.random.default_rng(deal_seed), task.n_groups)
    agents = _make_agents(task)
    names = [agent_name(spec) for spec in task.specs]

    n_slots = task.n_groups * p
    group_of_slot = np.repeat(np.arange(task.n_groups), p)  # slot = group * P + rotation
    rotation_of_slot = np.tile(np.arange(p), task.n_groups)
    agent_at = task.entry_agent[rotation_entries(p)[rotation_of_slot]]  # (B, P) distinct agent at each player

    game = VecGame(rules, batch_size=n_slots, seed=np.random.default_rng(game_seed), reward_mode="points")
    game.reset(
        deals=[deals[g][0] for g in group_of_slot],
        dealers=None if dealers is None else dealers[group_of_slot],
        roles=None if roles is None else [roles[g] for g in group_of_slot],
    )
    live = np.ones(n_slots, bool)
    winner = np.full(n_slots, -1, np.int64)
    reported = 0
    rows: list[tuple[np.ndarray, ...]] = []
    while live.any():
        actions = _choose_actions(agents, names, agent_at, game, live)
        state = game.state
        was_decisive = state.decisive.copy()
        manche = state.manche.astype(np.int64)
        decisions = state.manche_steps.astype(np.int64) + 1
        roles = np.take_along_axis(state.roles, state.seat_of_player.astype(np.int64), axis=1)  # by player
        points, ended, done = game.step_events(actions)
        ended &= live
        done &= live
        regular = np.flatnonzero(ended & ~was_decisive)
        if regular.size:
            positions = game.last_positions[regular]
            rows.append((regular, manche[regular], decisions[regular], points[regular], positions, roles[regular]))
        winner[done] = game.last_winner[done]
        live &= ~done
        if report is not None and done.any():
            finished = int((~live).reshape(task.n_groups, p).all(axis=1).sum())
            if finished > reported:
                report(finished - reported)
                reported = finished
        next_manche = np.flatnonzero(ended & live)
        if next_manche.size:
            _redeal(game, next_manche, deals, group_of_slot)

    slots, manches, decisions, pts, positions, roles = (np.concatenate(parts) for parts in zip(*rows))
    order = np.lexsort((manches, slots))  # a canonical row order: slot, then manche
    slots = slots[order]
    return MancheRecords(
        group=task.first_group + group_of_slot[slots],
        rotation=rotation_of_slot[slots],
        manche=manches[order],
        decisions=decisions[order],
        points=pts[order].astype(np.float64),
        positions=positions[order].astype(np.int64),
        roles=roles[order].astype(np.int64),
        winner=winner[slots],
    )


__all__ = [
    "ChunkTask",
    "MancheRecords",
    "agent_name",
    "distinct_agents",
    "group_setup",
    "play_chunk",
    "rotation_entries",
    "seat_lineup",
]
