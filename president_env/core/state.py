"""The batched state of games: :class:`GameState`, the arrays every rule kernel reads and writes by name.

Below the rule modules (:mod:`president_env.core.trick`, :mod:`president_env.core.manche`) and the engine, which all
import it: the state, how to allocate one, what a step reports (:class:`StepResult`) and the phases of a slot. A
``GameState`` is a named tuple of NumPy arrays, so a Numba kernel takes it whole and reads its fields by name
(``state.hands[s, seat, rank]``); the arrays are changed in place, never replaced.

Shapes use ``B`` slots, ``P`` seats (or players, where said), ``R`` ranks, ``N`` cards of the deck
(``cards.deck()``). Arrays are indexed by *seat* (turn order is clockwise = increasing seat); ``player_at_seat``
maps seats to players, which only differ with ``reseat_by_role``.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from president_env.core.deals import NO_ROLE
from president_env.core.rules import Rules

PHASE_EXCHANGE, PHASE_PLAY, PHASE_OVER = 0, 1, 2
"""A slot's ``phase``: giving back cards in the exchange, playing tricks, or the game over (nothing is legal)."""

SEAT_BITS = np.unpackbits(np.arange(256, dtype=np.uint8)[:, None], axis=1, bitorder="little").astype(bool)
"""``SEAT_BITS[bits, s]``: whether seat ``s`` is in the byte ``bits`` (bit s = seat s)."""
SEAT_BITS.flags.writeable = False


class GameState(NamedTuple):
    """All slots of a batch (see the module docstring for ``B``, ``P``, ``R``, ``N``)."""

    # ---- the manche, by seat ----
    hands: np.ndarray  # (B,P,R) int8: cards held, by rank
    n_held: np.ndarray  # (B,P) int16: cards held
    played: np.ndarray  # (B,P,R) int8: cards each seat played this manche (wild 2s counted as 2s)
    passed_bits: np.ndarray  # (B,) uint8: seats that passed in this trick (or since the last play with can_return)
    holding_bits: np.ndarray  # (B,) uint8: seats still holding cards (bit s = seat s)
    out_order: np.ndarray  # (B,P) int8: order of going out, -1 while still in
    out_rank: np.ndarray  # (B,P) int8: place among the normal finishers, or among the offenders where penalized
    penalized: np.ndarray  # (B,P) bool: went out on a 2 or a joker under finish_on_two: penalty
    gives_left: np.ndarray  # (B,P) int8: cards still to give back in the exchange
    partner: np.ndarray  # (B,P) int8: the exchange partner's seat, -1 for none
    gave: np.ndarray  # (B,P,R) int8: cards given in the exchange, as the giver knows them
    received: np.ndarray  # (B,P,R) int8: cards received in the exchange, as the receiver knows them
    prev_pos: np.ndarray  # (B,P) int8: finishing position in the previous manche, -1 without roles
    roles: np.ndarray  # (B,P) int8: role code (deals.ROLE_NAMES), -1 (NO_ROLE) for none
    # ---- the manche, by slot ----
    current: np.ndarray  # (B,) int64: the seat to act
    leader: np.ndarray  # (B,) int64: the seat that leads after the exchange
    trick_rank: np.ndarray  # (B,) int64: the rank on the pile, -1 when the next play leads
    trick_count: np.ndarray  # (B,) int64: cards per play in the trick, 0 when the next play leads
    trick_owner: np.ndarray  # (B,) int64: the seat that played last in the trick, -1 for none
    revolution: np.ndarray  # (B,) bool: the rank order is inverted
    constrained: np.ndarray  # (B,) bool: "or nothing" binds the seat to act to the trick's rank
    phase: np.ndarray  # (B,) int8: PHASE_EXCHANGE, PHASE_PLAY or PHASE_OVER
    n_out: np.ndarray  # (B,) int8: seats out of the manche
    n_normal_out: np.ndarray  # (B,) int8: seats out normally (not penalized)
    n_penalized: np.ndarray  # (B,) int8: seats out penalized
    dealer: np.ndarray  # (B,) int64: the dealer's seat
    # ---- the game ----
    scores: np.ndarray  # (B,P) int32: points so far, by player
    player_at_seat: np.ndarray  # (B,P) int8: the player at each seat
    seat_of_player: np.ndarray  # (B,P) int8: the seat of each player
    manche: np.ndarray  # (B,) int16: manches finished in the game
    decisive: np.ndarray  # (B,) bool: this manche decides a tie (its points do not count)
    tied: np.ndarray  # (B,P) bool: by player, the players tied before the decisive manche
    # ---- the last results ----
    last_positions: np.ndarray  # (B,P) int8: by player, finishing positions of the last finished manche, -1 before
    last_winner: np.ndarray  # (B,) int8: the player who won the last finished game, -1 before
    last_scores: np.ndarray  # (B,P) int32: by player, the final totals of the last finished game
    # ---- bookkeeping ----
    dealt_to: np.ndarray  # (B,N) int8: the seat each card of cards.deck() was dealt to (views show real suits)
    manche_steps: np.ndarray  # (B,) int32: decisions so far in the manche

    @property
    def batch_size(self) -> int:
        return self.current.shape[0]

    @property
    def passed(self) -> np.ndarray:
        """``(B,P) bool`` seats that have passed (a view of ``passed_bits``)."""
        return SEAT_BITS[self.passed_bits, : self.hands.shape[1]]

    def copy(self) -> GameState:
        """An independent copy of every array."""
        return GameState(*(array.copy() for array in self))

    def take(self, index: np.ndarray) -> GameState:
        """A new, independent state of the slots ``index`` (``(n,) int``, repeats allowed, or a ``(B,) bool``
        mask): every field indexed along the batch axis, so ``take(np.repeat(np.arange(B), W))`` repeats
        each slot ``W`` times."""
        index = np.atleast_1d(np.asarray(index))
        if index.dtype == bool:
            index = np.flatnonzero(index)
        # ndarray.take along axis 0 is several times faster than fancy indexing for these small rows.
        return GameState(*(array.take(index, axis=0) for array in self))


def allocate(rules: Rules, batch_size: int) -> GameState:
    """An empty state of ``batch_size`` slots (``engine.new_games`` deals them)."""
    if isinstance(batch_size, bool) or not isinstance(batch_size, (int, np.integer)) or batch_size < 1:
        raise ValueError(f"batch_size must be a positive integer, got {batch_size!r}")
    b, p, r = int(batch_size), rules.n_players, rules.n_ranks
    seats = np.tile(np.arange(p, dtype=np.int8), (b, 1))
    return GameState(
        hands=np.zeros((b, p, r), np.int8),
        n_held=np.zeros((b, p), np.int16),
        played=np.zeros((b, p, r), np.int8),
        passed_bits=np.zeros(b, np.uint8),
        holding_bits=np.zeros(b, np.uint8),
        out_order=np.full((b, p), -1, np.int8),
        out_rank=np.full((b, p), -1, np.int8),
        penalized=np.zeros((b, p), bool),
        gives_left=np.zeros((b, p), np.int8),
        partner=np.full((b, p), -1, np.int8),
        gave=np.zeros((b, p, r), np.int8),
        received=np.zeros((b, p, r), np.int8),
        prev_pos=np.full((b, p), -1, np.int8),
        roles=np.full((b, p), NO_ROLE, np.int8),
        current=np.zeros(b, np.int64),
        leader=np.zeros(b, np.int64),
        trick_rank=np.full(b, -1, np.int64),
        trick_count=np.zeros(b, np.int64),
        trick_owner=np.full(b, -1, np.int64),
        revolution=np.zeros(b, bool),
        constrained=np.zeros(b, bool),
        phase=np.full(b, PHASE_PLAY, np.int8),
        n_out=np.zeros(b, np.int8),
        n_normal_out=np.zeros(b, np.int8),
        n_penalized=np.zeros(b, np.int8),
        dealer=np.zeros(b, np.int64),
        scores=np.zeros((b, p), np.int32),
        player_at_seat=seats.copy(),
        seat_of_player=seats.copy(),
        manche=np.zeros(b, np.int16),
        decisive=np.zeros(b, bool),
        tied=np.zeros((b, p), bool),
        last_positions=np.full((b, p), -1, np.int8),
        last_winner=np.full(b, -1, np.int8),
        last_scores=np.zeros((b, p), np.int32),
        dealt_to=np.zeros((b, rules.n_cards), np.int8),
        manche_steps=np.zeros(b, np.int32),
    )


class StepResult(NamedTuple):
    """What a step reports for each stepped slot (``n`` = number of slots stepped)."""

    rewards: np.ndarray  # (n, P) float32 by player: the manche's rewards where one ended, else 0
    manche_over: np.ndarray  # (n,) bool: a manche ended (the next one is dealt unless the game ended)
    game_over: np.ndarray  # (n,) bool: the game ended; the slot stays terminal until new_games


FIELDS: tuple[str, ...] = GameState._fields
"""The names of the state's fields, in order."""
