"""The independent reference implementation of Président: one game, plain Python; a test oracle.

This module exists only to be checked against: the differential tests and the benchmarks' speed ratios use it.
It lives beside the tests, outside the installed package (``tests/test_layers.py`` checks; tournaments deal
through the core's dealing module). It plays a single game of
``docs/RULES.md`` as ``docs/semantics.md`` reads it, with plain lists and
ints and a turn pointer that walks clockwise over the seats, so that a reader
can hold it against the rules line by line. It was written without looking at
the batched engine (``engine.py``); the differential tests run both on the same
deals and actions and demand identical masks, turns and outcomes. Speed is not
a goal here.

Vocabulary: a *player* is ``player_i`` (index ``i``); a *seat* is a place at
the table, clockwise = increasing seat index. Hands are counts per rank
(``3 4 5 6 7 8 9 10 J Q K A 2 JK`` = ``0..13``).

Phases of a game:

* ``"exchange"``: the higher-ranked player of a pair gives back one card per
  ``give`` action (the lower-ranked player's best cards moved automatically);
* ``"play"``: tricks are played;
* ``"needs_deal"``: a manche ended and the game goes on; :meth:`ReferenceGame.deal`
  starts the next one. Roles, seating (``reseat_by_role``), ``manche_index`` and
  ``next_dealer`` already describe that pending manche;
* ``"over"``: the game is over (``done``, ``winner``).
"""

from __future__ import annotations

import numpy as np

from president_env.core.actions import KIND_GIVE, KIND_PASS, PASS, action_name, action_tables, encode_give, encode_play
from president_env.core.cards import JOKER, RANK_NAMES, THREE, TWO, card_name, deck, parse_card, validate_deal
from president_env.core.rules import Rules

ROLE_NAMES: tuple[str, ...] = ("president", "vice_president", "neutre", "vice_trou", "trou_du_cul")


def role_of_position(position: int, n_players: int) -> str:
    """Role from a finishing position (RULES.md "Roles"; semantics.md "Roles from finishing positions")."""
    if position == 0:
        return "president"
    if position == n_players - 1:
        return "trou_du_cul"
    if n_players >= 4 and position == 1:  # with 3 players there is no Vice role
        return "vice_president"
    if n_players >= 4 and position == n_players - 2:
        return "vice_trou"
    return "neutre"


def positions_from_roles(roles: list[str], n_players: int) -> list[int]:
    """Supplied role names -> finishing positions; several Neutres are ordered by player index."""
    if isinstance(roles, (str, bytes)) or len(roles) != n_players:
        raise ValueError(f"roles must be a list of {n_players} role names, one per player, got {roles!r}")
    expected = [role_of_position(pos, n_players) for pos in range(n_players)]
    if sorted(roles) != sorted(expected):
        raise ValueError(
            f"roles {list(roles)} are not a valid role assignment for {n_players} players; expected exactly "
            f"the roles {expected} in some order"
        )
    neutral_positions = [pos for pos in range(n_players) if expected[pos] == "neutre"]
    fixed = {role: pos for pos, role in enumerate(expected) if role != "neutre"}
    positions = []
    for role in roles:
        if role == "neutre":
            positions.append(neutral_positions.pop(0))  # players scanned by increasing index
        else:
            positions.append(fixed[role])
    return positions


def table_for_roles(rules: Rules, positions: list[int]) -> tuple[list[int], int]:
    """Seating and dealer of a manche with roles, from the previous finishing positions by player.

    With ``reseat_by_role`` players sit by role: Président at seat 0, then clockwise Trou du cul, Vice-Trou,
    ..., Vice-Président (position ``pos`` >= 1 at seat ``n - pos``); otherwise player i sits at seat i. The
    Trou du cul deals. Returns ``(seat_of_player, dealer_seat)``.
    """
    n = rules.n_players
    if rules.reseat_by_role:
        seat_of_player = [0 if pos == 0 else n - pos for pos in positions]
    else:
        seat_of_player = list(range(n))
    return seat_of_player, seat_of_player[positions.index(n - 1)]


def points_of_positions(rules: Rules, positions: list[int]) -> list[int]:
    """Points of a manche from its final positions (RULES.md "Scoring and game")."""
    n = rules.n_players
    if rules.scoring == "per_opponent_behind":
        return [n - 1 - pos for pos in positions]
    # president_vice: Président 2, Vice-Président 1 (only where a Vice exists), others 0
    return [2 if pos == 0 else (1 if pos == 1 and n >= 4 else 0) for pos in positions]


class ReferenceGame:
    """One game of Président, step by step. See the module docstring."""

    def __init__(
        self,
        rules: Rules,
        hands: list[list[str]],
        dealer: int | None = None,
        roles: list[str] | None = None,
        *,
        previous_positions: list[int] | None = None,
    ):
        """Start a game at its first manche.

        hands: one list of card strings per player (validated with ``cards.validate_deal``; any sizes).
        dealer: the seat that dealt a first manche without roles (for ``first_lead`` and the 2-deck 3C
            lookup); required then. A first manche with roles is dealt by its Trou du cul, and players sit by
            role with ``reseat_by_role`` (:func:`table_for_roles`): passing a dealer then raises ValueError.
        roles: optional role name per player that the first manche starts from; then it has an exchange.
            Several Neutres are ordered by player index (RULES.md "Roles").
        previous_positions: instead of ``roles``, the full previous finishing order as a position per player
            (0 = Président), e.g. an ``initial_roles: draw`` order; it also orders the Neutres, which matters
            when ``exchange`` pairs two Neutres (6+ players, 3+ entries).
        """
        if not isinstance(rules, Rules):
            raise ValueError(f"rules must be a Rules object, got {type(rules).__name__}")
        self.rules = rules
        n = rules.n_players
        with_roles = roles is not None or previous_positions is not None
        if with_roles and dealer is not None:
            raise ValueError(
                f"dealer={dealer!r} given for a first manche with roles: a manche with roles is dealt by its "
                "Trou du cul, so no dealer may be given"
            )
        if not with_roles and (
            isinstance(dealer, bool) or not isinstance(dealer, (int, np.integer)) or not 0 <= dealer < n
        ):
            raise ValueError(f"dealer must be a seat 0..{n - 1}, got {dealer!r}")
        if roles is not None and previous_positions is not None:
            raise ValueError("pass roles or previous_positions, not both")
        if roles is None and previous_positions is None and rules.initial_roles == "draw":
            raise ValueError("initial_roles='draw': the caller must pass the drawn roles (roles=...)")
        self._kind, self._rank, self._count = (t.tolist() for t in action_tables(rules))

        self.scores: list[int] = [0] * n
        self.manche_index = 0
        self.finish_positions: list[int] | None = None
        self.finish_order_so_far: list[int] = []
        self.done = False
        self.winner: int | None = None
        self.phase = "play"
        self.current_player = -1
        self.revolution = False
        # Seating of the first manche: player i at seat i, unless it starts with roles (below).
        self.seat_of_player: list[int] = list(range(n))
        self._tied: list[int] | None = None  # players tied for the decisive manche, once it is due
        # Positions of the previous manche (or derived from supplied roles): they define this manche's roles.
        self._previous_positions: list[int] | None = None
        self.roles: list[str] | None = None
        if previous_positions is not None:
            if sorted(int(p) for p in previous_positions) != list(range(n)) or len(previous_positions) != n:
                raise ValueError(f"previous_positions must be a permutation of 0..{n - 1}, got {previous_positions!r}")
            self._previous_positions = [int(p) for p in previous_positions]
        elif roles is not None:
            self._previous_positions = positions_from_roles(list(roles), n)
        if self._previous_positions is not None:
            self.roles = [role_of_position(pos, n) for pos in self._previous_positions]
            # A manche with roles: seated by role (reseat_by_role), dealt by its Trou du cul.
            self.seat_of_player, dealer = table_for_roles(rules, self._previous_positions)
        self.next_dealer = int(dealer)
        self._start_manche(hands, int(dealer), check_sizes=False)

    # ------------------------------------------------------------------ seats
    def _player_at_seat(self, seat: int) -> int:
        return self.seat_of_player.index(seat % self.rules.n_players)

    def _clockwise_after(self, player: int) -> list[int]:
        """The other players in turn order, starting at the seat on ``player``'s left (clockwise)."""
        n = self.rules.n_players
        seat = self.seat_of_player[player]
        return [self._player_at_seat(seat + step) for step in range(1, n)]

    def _holds_cards(self, player: int) -> bool:
        return sum(self.hands[player]) > 0

    def _player_with_position(self, position: int) -> int:
        return self._previous_positions.index(position)

    # ------------------------------------------------------------------ manche start
    def _start_manche(self, hands: list[list[str]], dealer: int, check_sizes: bool) -> None:
        """Validate everything first (a ValueError leaves the game unchanged), then deal and exchange."""
        rules, n = self.rules, self.rules.n_players
        cards = validate_deal(hands, n, rules.decks, rules.jokers)
        if check_sizes:
            expected = self._dealt_sizes(dealer)
            for player in range(n):
                if len(cards[player]) != expected[player]:
                    raise ValueError(
                        f"deal: hand of player {player} has {len(cards[player])} cards; dealing the "
                        f"{rules.n_cards} cards from dealer seat {dealer} (deal_start={rules.deal_start}) "
                        f"gives that player {expected[player]}"
                    )
        counts = [[0] * rules.n_ranks for _ in range(n)]
        for player, hand in enumerate(cards):
            for card in hand:
                counts[player][parse_card(card)[0]] += 1
        if self._previous_positions is not None:
            for _, low_pos, k in rules.exchange_pairs:
                low = self._player_with_position(low_pos)
                if sum(counts[low]) < k:
                    # Only a supplied, uneven first deal can do this; a real deal always has enough cards.
                    raise ValueError(
                        f"deal: player {low} ({role_of_position(low_pos, n)}) must give {k} cards in the exchange "
                        f"but holds only {sum(counts[low])}"
                    )

        self.hands = counts
        self._dealer = dealer
        self._holds_three_of_clubs = [card_name(THREE, "C") in hand for hand in cards]
        self.revolution = False  # a revolution lasts until the end of its manche
        self.finish_order_so_far = []
        self._offenders: list[int] = []  # finish_on_two penalty, in the order they went out
        self._reset_trick()

        if self._previous_positions is None:
            # A manche without roles: no exchange; first_lead decides who leads.
            self.phase = "play"
            self._start_trick(self._first_leader())
            return
        # Exchange. Every lower-ranked player of a pair gives his k best cards at once (jokers, 2s, As, ...).
        self._gives_pending: list[list[int]] = []  # [higher player, lower player, cards still to give back]
        for high_pos, low_pos, k in rules.exchange_pairs:
            high, low = self._player_with_position(high_pos), self._player_with_position(low_pos)
            for _ in range(k):
                best = max(r for r in range(rules.n_ranks) if self.hands[low][r] > 0)
                self.hands[low][best] -= 1
                self.hands[high][best] += 1
            self._gives_pending.append([high, low, k])
        # Then the higher-ranked players give back, pair by pair, Président first: exchange_pairs is in that order.
        if self._gives_pending:
            self.phase = "exchange"
            self.current_player = self._gives_pending[0][0]
        else:  # exchange=[] (accepted by Rules): roles without an exchange
            self.phase = "play"
            self._start_trick(self._lead_after_exchange())

    def _dealt_sizes(self, dealer: int) -> list[int]:
        """Hand size per player when the whole deck is dealt one card at a time from ``dealer``."""
        rules, n = self.rules, self.rules.n_players
        first_seat = dealer + 1 if rules.deal_start == "dealer_left" else dealer
        base, extra = divmod(rules.n_cards, n)
        sizes = [0] * n
        for order in range(n):
            # the first N mod P seats in deal order receive one card more
            sizes[self._player_at_seat(first_seat + order)] = base + (1 if order < extra else 0)
        return sizes

    def _first_leader(self) -> int:
        n = self.rules.n_players
        left_of_dealer = [self._player_at_seat(self._dealer + step) for step in range(1, n + 1)]  # dealer last
        if self.rules.first_lead == "dealer_left":
            return left_of_dealer[0]
        # three_of_clubs: its holder; with two decks the first holder clockwise from the dealer's left
        for player in left_of_dealer:
            if self._holds_three_of_clubs[player]:
                return player
        raise AssertionError("the 3 of clubs is always dealt")

    def _lead_after_exchange(self) -> int:
        position = self.rules.n_players - 1 if self.rules.lead == "trou_du_cul" else 0
        return self._player_with_position(position)

    # ------------------------------------------------------------------ tricks
    def _reset_trick(self) -> None:
        n = self.rules.n_players
        self._trick_count: int | None = None  # k, fixed by the lead
        self._trick_rank: int | None = None  # rank of the last play of the trick
        self._last_player: int | None = None  # who made the last play
        self._passed = [False] * n
        self._bound_player: int | None = None  # equal_rank or_nothing: must match or pass

    def _start_trick(self, leader: int) -> None:
        self._reset_trick()
        self.current_player = leader

    def _eligible(self, player: int) -> bool:
        # Holds cards and has not passed (in this trick, or since the last play with can_return).
        return self._holds_cards(player) and not self._passed[player]

    def _next_eligible(self, after: int, include_self: bool) -> int | None:
        order = self._clockwise_after(after) + ([after] if include_self else [])
        for player in order:
            if self._eligible(player):
                return player
        return None

    def _end_trick(self) -> None:
        """The last player to have played wins the trick and leads; if he is out, the next holder clockwise."""
        winner = self._last_player
        leader = winner
        if not self._holds_cards(winner):
            leader = next(p for p in self._clockwise_after(winner) if self._holds_cards(p))
        self._start_trick(leader)

    def _advance(self, actor: int) -> None:
        """Turn moves clockwise to the next eligible player; if that is the last player to have played,
        or nobody is eligible, the trick ends."""
        nxt = self._next_eligible(actor, include_self=True)
        if nxt is None or nxt == self._last_player:
            self._end_trick()
        else:
            self.current_player = nxt

    def _strength(self, rank: int) -> int:
        """Strength in the order in force: a revolution inverts 3..2; the joker stays strongest."""
        if rank == JOKER:
            return 100
        return TWO - rank if self.revolution else rank

    def _top_rank_in_force(self) -> int:
        if self.rules.jokers > 0:
            return JOKER
        return THREE if self.revolution else TWO

    def _can_form(self, player: int, rank: int, count: int) -> bool:
        """Whether ``player`` holds ``count`` cards of ``rank``, completing with wild 2s where allowed."""
        hand = self.hands[player]
        if count > self.rules.copies[rank]:  # a play holds at most the copies of its rank
            return False
        if hand[rank] >= count:
            return True
        # twos_wild: at least one natural of a rank 3..A, completed with 2s
        return self.rules.twos_wild and rank < TWO and hand[rank] >= 1 and hand[rank] + hand[TWO] >= count

    def _play_allowed(self, player: int, rank: int, count: int) -> bool:
        if not self._can_form(player, rank, count):
            return False
        if self._trick_count is None:
            return True  # the leader plays any k cards of one rank
        if count != self._trick_count:
            return False
        if self._bound_player == player:
            return rank == self._trick_rank  # "... ou rien": match or pass
        if self._strength(rank) > self._strength(self._trick_rank):
            return True
        return self.rules.equal_rank != "none" and rank == self._trick_rank

    # ------------------------------------------------------------------ public API
    def legal_mask(self) -> list[bool]:
        mask = [False] * self.rules.num_actions
        player = self.current_player
        if self.phase == "exchange":
            for rank in range(self.rules.n_ranks):
                if self.hands[player][rank] > 0:
                    mask[encode_give(self.rules, RANK_NAMES[rank])] = True
        elif self.phase == "play":
            mask[PASS] = self._trick_count is not None  # the leader may not pass
            for rank in range(self.rules.n_ranks):
                if self.hands[player][rank] == 0:
                    continue  # every play needs at least one natural card of its rank
                for count in range(1, self.rules.max_count + 1):
                    if self._play_allowed(player, rank, count):
                        mask[encode_play(self.rules, RANK_NAMES[rank], count)] = True
        return mask

    def step(self, action: int) -> list[float] | None:
        """Apply ``action`` for ``current_player``. Returns the manche's raw points when it ended, else None."""
        if self.phase not in ("exchange", "play"):
            raise ValueError(f"no action can be taken in phase {self.phase!r}")
        if isinstance(action, bool) or not isinstance(action, (int, np.integer)):
            raise ValueError(f"action must be an integer, got {action!r}")
        action = int(action)
        if not 0 <= action < self.rules.num_actions:
            raise ValueError(f"action {action} out of range 0..{self.rules.num_actions - 1}")
        if not self.legal_mask()[action]:
            raise ValueError(
                f"illegal action {action} ({action_name(self.rules, action)}) for player {self.current_player} "
                f"in phase {self.phase}"
            )
        if self._kind[action] == KIND_GIVE:
            self._give(self._rank[action])
            return None
        if self._kind[action] == KIND_PASS:
            self._pass()
            return None
        return self._play(self._rank[action], self._count[action])

    def _give(self, rank: int) -> None:
        pair = self._gives_pending[0]
        high, low = pair[0], pair[1]
        self.hands[high][rank] -= 1
        self.hands[low][rank] += 1
        pair[2] -= 1
        if pair[2] == 0:
            self._gives_pending.pop(0)
        if self._gives_pending:
            self.current_player = self._gives_pending[0][0]
        else:
            self.phase = "play"
            self._start_trick(self._lead_after_exchange())

    def _pass(self) -> None:
        actor = self.current_player
        self._passed[actor] = True
        if self._bound_player == actor:
            self._bound_player = None  # the constraint ends with his action
        self._advance(actor)

    def _play(self, rank: int, count: int) -> list[float] | None:
        actor = self.current_player
        rules = self.rules
        if self._bound_player == actor:
            self._bound_player = None
        matching = self._trick_rank is not None and rank == self._trick_rank
        # top_rank_ends_trick is judged by the order in force before this play's own revolution
        ends_trick = rules.top_rank_ends_trick and rank == self._top_rank_in_force()

        # Naturals first, wild 2s only to complete.
        hand = self.hands[actor]
        naturals = min(count, hand[rank])
        wilds = count - naturals
        hand[rank] -= naturals
        hand[TWO] -= wilds
        contains_two_or_joker = rank in (TWO, JOKER) or wilds > 0

        if self._trick_count is None:
            self._trick_count = count
        self._trick_rank = rank
        self._last_player = actor
        if rules.pass_rule == "can_return":
            self._passed = [False] * rules.n_players  # every play clears all pass flags

        if sum(hand) == 0:  # he goes out
            self.finish_order_so_far.append(actor)
            if rules.finish_on_two == "penalty" and contains_two_or_joker:
                self._offenders.append(actor)
        if rules.revolution and count >= 4:  # wild 2s count; the flip acts from the next play on
            self.revolution = not self.revolution

        holders = [p for p in range(rules.n_players) if self._holds_cards(p)]
        if len(holders) == 1:
            return self._end_manche(holders[0])

        if ends_trick:
            self._end_trick()
        elif matching and rules.equal_rank == "skip":
            # The next eligible player is skipped (he has not passed); if the turn then comes back to the
            # matcher, or nobody is left, the trick ends and the matcher wins it.
            skipped = self._next_eligible(actor, include_self=False)
            following = None if skipped is None else self._next_eligible(skipped, include_self=False)
            if following is None or following == actor:
                self._end_trick()
            else:
                self.current_player = following
        else:
            self._advance(actor)
            if matching and rules.equal_rank == "or_nothing" and self._last_player == actor:
                # the trick goes on (it was not won just now): the next player must match or pass
                self._bound_player = self.current_player
        return None

    def _end_manche(self, holder: int) -> list[float]:
        rules, n = self.rules, self.rules.n_players
        normal = [p for p in self.finish_order_so_far if p not in self._offenders]
        final_order = normal + [holder] + self._offenders  # offenders below the holder, earlier ones above
        positions = [0] * n
        for position, player in enumerate(final_order):
            positions[player] = position
        self.finish_positions = positions
        points = points_of_positions(rules, positions)
        decisive = self.manche_index == rules.manches
        if not decisive:
            self.scores = [s + p for s, p in zip(self.scores, points)]

        if decisive:
            self.winner = min(self._tied, key=lambda p: positions[p])
        elif self.manche_index == rules.manches - 1:
            best = max(self.scores)
            tied = [p for p in range(n) if self.scores[p] == best]
            if len(tied) == 1:
                self.winner = tied[0]
            else:
                self._tied = tied
        if self.winner is not None:
            self.done = True
            self.phase = "over"
            self.current_player = -1
            return [float(p) for p in points]

        # The game goes on: prepare the pending manche (roles, seating, dealer).
        self.manche_index += 1
        self._previous_positions = positions
        self.roles = [role_of_position(pos, n) for pos in positions]
        # Seated by role (reseat_by_role); the previous Trou du cul deals.
        self.seat_of_player, self.next_dealer = table_for_roles(rules, positions)
        self.phase = "needs_deal"
        self.current_player = -1
        return [float(p) for p in points]

    def deal(self, hands: list[list[str]]) -> None:
        """Start the pending manche with these hands (one list per player), dealt from ``next_dealer``."""
        if self.phase != "needs_deal":
            raise ValueError(f"deal() is only allowed in phase 'needs_deal', not {self.phase!r}")
        self._start_manche(hands, self.next_dealer, check_sizes=True)


def deal_cards(rules: Rules, rng: np.random.Generator, dealer: int, seat_of_player: list[int]) -> list[list[str]]:
    """Shuffle the deck with ``rng`` and deal it one card at a time from ``dealer`` (per ``deal_start``)."""
    n = rules.n_players
    cards = deck(rules.decks, rules.jokers)
    order = rng.permutation(len(cards))
    first_seat = dealer + 1 if rules.deal_start == "dealer_left" else dealer
    player_at_seat = [seat_of_player.index(seat) for seat in range(n)]
    hands: list[list[str]] = [[] for _ in range(n)]
    for i, index in enumerate(order):
        hands[player_at_seat[(first_seat + i) % n]].append(cards[int(index)])
    return hands


def start_random_game(rules: Rules, rng: np.random.Generator, dealer: int | None = None) -> ReferenceGame:
    """A new game whose first manche is shuffled with ``rng`` and dealt regularly.

    With ``initial_roles: draw`` each player draws a card of a different value (a uniformly random previous
    finishing order); the players then sit by role (``reseat_by_role``) and the drawn Trou du cul deals, so
    ``dealer`` must be ``None``. Otherwise ``dealer`` is the first dealer's seat (random when ``None``).
    """
    n = rules.n_players
    if rules.initial_roles == "draw":
        if dealer is not None:
            raise ValueError("initial_roles='draw': the drawn Trou du cul deals the first manche; pass no dealer")
        positions = [int(p) for p in rng.permutation(n)]
        seat_of_player, first_dealer = table_for_roles(rules, positions)
        hands = deal_cards(rules, rng, first_dealer, seat_of_player)
        return ReferenceGame(rules, hands, previous_positions=positions)
    if dealer is None:
        dealer = int(rng.integers(n))
    return ReferenceGame(rules, deal_cards(rules, rng, dealer, list(range(n))), dealer)


def play_random_game(rules: Rules, rng: np.random.Generator, dealer: int | None = None) -> ReferenceGame:
    """Play one whole game (:func:`start_random_game`) with uniformly random legal actions; the finished game."""
    game = start_random_game(rules, rng, dealer)
    while not game.done:
        if game.phase == "needs_deal":
            game.deal(deal_cards(rules, rng, game.next_dealer, game.seat_of_player))
            continue
        legal = [a for a, ok in enumerate(game.legal_mask()) if ok]
        game.step(legal[int(rng.integers(len(legal)))])
    return game


__all__ = [
    "ROLE_NAMES",
    "ReferenceGame",
    "deal_cards",
    "play_random_game",
    "points_of_positions",
    "positions_from_roles",
    "role_of_position",
    "start_random_game",
    "table_for_roles",
]
