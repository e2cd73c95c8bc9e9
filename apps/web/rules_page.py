"""The rules page of ``president-web``: a table's ``Rules`` told in sentences, one per field (docs/RULES.md)."""

from __future__ import annotations

from president_env.core import engine
from president_env.core.rules import RULE_FIELDS, Rules
from president_env.game.render import ROLE_LABELS

_CHOICES: dict[str, dict[str, str]] = {
    "deal_start": {
        "dealer_left": "The dealer deals every card, one at a time, starting with the player on their left.",
        "dealer": "The dealer deals every card, one at a time, starting with themself.",
    },
    "initial_roles": {
        "none": "The first manche is played without roles and without an exchange.",
        "draw": "Before the first manche each player draws a card: the roles follow the cards drawn, and the "
        "first manche opens with an exchange.",
    },
    "first_lead": {
        "three_of_clubs": "A manche without roles is led by the holder of the 3 of clubs.",
        "dealer_left": "A manche without roles is led by the player on the dealer's left.",
    },
    "lead": {
        "trou_du_cul": "A manche with roles is led by the Trou du cul, after the exchange.",
        "president": "A manche with roles is led by the Président, after the exchange.",
    },
    "pass_rule": {
        "out_until_trick_end": "A player who passes is out of the trick until it ends.",
        "can_return": "A player who passes may play again later in the same trick.",
    },
    "equal_rank": {
        "none": "A play must be of a strictly higher rank than the one in force.",
        "skip": "A play may equal the rank in force; the next player is then skipped.",
        "or_nothing": "A play may equal the rank in force; the next player must then play that rank or pass "
        "(\u201cor nothing\u201d).",
    },
    "finish_on_two": {
        "allowed": "A player may go out on a 2 or a joker.",
        "penalty": "A player who goes out on a 2 or a joker finishes last of the manche.",
    },
    "scoring": {
        "per_opponent_behind": "Each manche, a player scores one point per player who finished behind them.",
        "president_vice": "Each manche, the Président scores 2 points and the Vice-Président 1.",
    },
}

_FLAGS: dict[str, tuple[str, str]] = {
    "reseat_by_role": (
        "Before a manche with roles players change seats by role: Président first, Trou du cul next, "
        "Vice-Président last.",
        "Players keep their seats from manche to manche.",
    ),
    "top_rank_ends_trick": (
        "A play of the strongest rank in force wins the trick at once.",
        "A play of the strongest rank does not end the trick by itself; the others may still pass.",
    ),
    "revolution": (
        "A play of four or more cards makes a revolution: the order of the ranks is reversed until the next one.",
        "There is no revolution.",
    ),
    "twos_wild": (
        "A 2 may complete a play of cards of one rank from 3 to A.",
        "A 2 is a card of its own rank, not a wild card.",
    ),
}


def rules_page(rules: Rules) -> list[dict[str, str]]:
    """``[{"field", "text"}]``: the table's rules in the order of :data:`RULE_FIELDS`, one sentence or two each."""
    n = rules.n_players
    cards = 52 * rules.decks + rules.jokers
    roles = _roles(rules)
    lines: dict[str, str] = {
        "n_players": f"{n} players, each for themself; the aim is to get rid of one's cards first.",
        "decks": f"{rules.decks} deck{'s' if rules.decks > 1 else ''} of 52 cards, all dealt: {cards} cards in all.",
        "jokers": f"{rules.jokers} joker{'s' if rules.jokers != 1 else ''}, above the 2."
        if rules.jokers
        else "No jokers: the 2 is the strongest rank (3 is the weakest).",
        "exchange": _exchange(rules.exchange, roles),
        "manches": f"A game is {rules.manches} manche{'s' if rules.manches > 1 else ''}; the highest total wins "
        "(a decisive manche breaks a tie).",
    }
    for name, texts in _CHOICES.items():
        lines[name] = texts[getattr(rules, name)]
    for name, (on, off) in _FLAGS.items():
        lines[name] = on if getattr(rules, name) else off
    lines["n_players"] += f" Roles after each manche: {', '.join(roles)}."
    return [{"field": name, "text": lines[name]} for name in RULE_FIELDS]


def _roles(rules: Rules) -> list[str]:
    """The roles of the table, best finisher first (the engine's table of roles by finishing position)."""
    return [ROLE_LABELS[int(code)] for code in engine.tables(rules).role_by_pos]


def _exchange(exchange: tuple[int, ...], roles: list[str]) -> str:
    if not exchange or not any(exchange):
        return "There is no exchange of cards between manches."
    parts = []
    for i, count in enumerate(exchange):
        if count:
            low, high = roles[-1 - i], roles[i]
            plural = "s" if count > 1 else ""
            parts.append(
                f"the {low} gives their {count} best card{plural} to the {high}, who gives back {count} card{plural} "
                "of their choice"
            )
    return "Before each manche with roles, " + "; ".join(parts) + "."
