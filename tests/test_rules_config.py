"""The ``Rules`` object and the YAML presets: defaults, validation, YAML round-trip, derived sizes."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

import president_env as pe
from president_env.core.presets import PRESETS, load_preset, preset_path
from president_env.core.rules import MAX_MANCHES, RULE_CHOICES, RULE_FIELDS, Rules

REPO_ROOT = Path(__file__).resolve().parent.parent
RULES_DIR = REPO_ROOT / "configs" / "rules"

# The defaults as docs/RULES.md states them, field by field.
RULES_MD_DEFAULTS = {
    "n_players": 4,
    "decks": 1,
    "jokers": 0,
    "reseat_by_role": False,
    "deal_start": "dealer_left",
    "initial_roles": "none",
    "exchange": (2, 1),
    "first_lead": "three_of_clubs",
    "lead": "trou_du_cul",
    "pass_rule": "out_until_trick_end",
    "top_rank_ends_trick": False,
    "revolution": False,
    "equal_rank": "none",
    "finish_on_two": "allowed",
    "twos_wild": False,
    "scoring": "per_opponent_behind",
    "manches": 5,  # the standard preset plays a match (docs/RULES.md, `manches`)
}

BOOL_FIELDS = ("reseat_by_role", "top_rank_ends_trick", "revolution", "twos_wild")

# Values each field must refuse (with every other field at its default).
BAD_VALUES: dict[str, list] = {
    "n_players": [2, 9, 0, -4, 4.0, "4", None, True],
    "decks": [0, 3, 1.0, "1", None, True],
    "jokers": [-1, 3, 1.0, "1", None, True],
    "exchange": [[0], [5], [2, 0], [1, 5], [1.0], ["1"], [True], [1, 1, 1, 1, 1], "21", 2, None],
    "manches": [0, -1, 1.5, "3", None, True, MAX_MANCHES + 1, 10**100],
    **{name: [0, 1, 2, "true", "yes", None] for name in BOOL_FIELDS},
    **{name: ["bogus", "", None, 0, True, allowed[0].upper()] for name, allowed in RULE_CHOICES.items()},
}

# What each preset changes from the standard game, as its YAML comments document.
PRESET_DIFFERENCES: dict[str, dict] = {
    "standard": {},
    "quebec": {"pass_rule": "can_return", "top_rank_ends_trick": True},
    "big_table": {"n_players": 8, "decks": 2, "jokers": 4, "scoring": "president_vice"},
    "family": {
        "twos_wild": True,
        "initial_roles": "draw",
        "reseat_by_role": True,
        "deal_start": "dealer",
        "lead": "president",
        "exchange": (1,),
        "finish_on_two": "penalty",
    },
    "party": {"revolution": True, "equal_rank": "skip", "finish_on_two": "penalty"},
    "or_nothing": {"equal_rank": "or_nothing", "revolution": True},
}


def differences_from_standard(rules: Rules) -> dict:
    standard = Rules()
    return {name: getattr(rules, name) for name in RULE_FIELDS if getattr(rules, name) != getattr(standard, name)}


# ---- defaults ---------------------------------------------------------------


def test_defaults_are_the_standard_game_of_rules_md():
    rules = Rules()
    assert {name: getattr(rules, name) for name in RULE_FIELDS} == RULES_MD_DEFAULTS


def test_rule_fields_are_exactly_the_documented_fields():
    assert set(RULE_FIELDS) == set(RULES_MD_DEFAULTS)
    assert set(BAD_VALUES) == set(RULE_FIELDS), "every field needs bad values in this test"


def test_public_names_are_exported():
    assert pe.Rules is Rules
    assert pe.load_preset is load_preset


def test_rules_are_frozen():
    with pytest.raises(dataclasses.FrozenInstanceError):
        Rules().n_players = 5  # type: ignore[misc]


# ---- validation -------------------------------------------------------------


@pytest.mark.parametrize(
    ("field", "value"),
    [(field, value) for field, values in BAD_VALUES.items() for value in values],
    ids=lambda x: repr(x),
)
def test_invalid_value_raises_value_error_naming_the_field(field, value):
    with pytest.raises(ValueError, match=field):
        Rules(**{field: value})


@pytest.mark.parametrize("field", sorted(RULE_CHOICES))
def test_choice_error_lists_the_allowed_values(field):
    with pytest.raises(ValueError) as err:
        Rules(**{field: "bogus"})
    for allowed in RULE_CHOICES[field]:
        assert allowed in str(err.value)


@pytest.mark.parametrize("field", sorted(RULE_CHOICES))
def test_every_documented_choice_is_accepted(field):
    for allowed in RULE_CHOICES[field]:
        assert getattr(Rules(**{field: allowed}), field) == allowed


@pytest.mark.parametrize("field", BOOL_FIELDS)
@pytest.mark.parametrize("value", [0, 1])
def test_bool_fields_reject_ints_from_python_and_yaml(field, value):
    with pytest.raises(ValueError, match=field):
        Rules(**{field: value})
    with pytest.raises(ValueError, match=field):
        Rules.from_yaml(f"{field}: {value}\n")


@pytest.mark.parametrize("field", BOOL_FIELDS)
def test_bool_fields_accept_true_and_false(field):
    assert getattr(Rules(**{field: True}), field) is True
    assert getattr(Rules(**{field: False}), field) is False


@pytest.mark.parametrize(("decks", "jokers"), [(1, 3), (1, 4), (2, 5), (2, 8)])
def test_more_than_two_jokers_per_deck_is_rejected(decks, jokers):
    with pytest.raises(ValueError, match="jokers"):
        Rules(decks=decks, jokers=jokers)


@pytest.mark.parametrize(("decks", "jokers"), [(1, 0), (1, 1), (1, 2), (2, 0), (2, 3), (2, 4)])
def test_up_to_two_jokers_per_deck_is_accepted(decks, jokers):
    rules = Rules(decks=decks, jokers=jokers)
    assert (rules.decks, rules.jokers) == (decks, jokers)


@pytest.mark.parametrize("bad", [0, 5])
@pytest.mark.parametrize("position", [0, 1])
def test_exchange_entries_outside_1_to_4_are_rejected(bad, position):
    exchange = [1, 1]
    exchange[position] = bad
    with pytest.raises(ValueError, match="exchange"):
        Rules(exchange=exchange)


@pytest.mark.parametrize("exchange", [[1], [4], [2, 1], [4, 3, 2, 1], (3, 3)])
def test_exchange_entries_from_1_to_4_are_accepted(exchange):
    assert Rules(n_players=8, exchange=exchange).exchange == tuple(exchange)


@pytest.mark.parametrize("n_players", range(3, 9))
def test_every_table_size_from_3_to_8_is_accepted(n_players):
    assert Rules(n_players=n_players).n_players == n_players


# ---- YAML ------------------------------------------------------------------


def test_unknown_yaml_key_is_rejected_naming_it():
    with pytest.raises(ValueError, match="revolutoin"):
        Rules.from_yaml("n_players: 5\nrevolutoin: true\n")


def test_unknown_key_error_lists_the_allowed_fields():
    with pytest.raises(ValueError) as err:
        Rules.from_dict({"colour": "red"})
    assert "colour" in str(err.value)
    for name in RULE_FIELDS:
        assert name in str(err.value)


def test_unknown_yaml_key_in_a_file_is_rejected(tmp_path):
    path = tmp_path / "typo.yaml"
    path.write_text("players: 5\n", encoding="utf-8")
    with pytest.raises(ValueError, match="players"):
        Rules.from_yaml(path)


def test_empty_yaml_file_gives_the_defaults(tmp_path):
    path = tmp_path / "empty.yaml"
    path.write_text("", encoding="utf-8")
    assert Rules.from_yaml(path) == Rules()
    assert Rules.from_yaml(str(path)) == Rules()


@pytest.mark.parametrize("text", ["\n", "# only a comment\n", "---\n"])
def test_empty_yaml_text_gives_the_defaults(text):
    assert Rules.from_yaml(text) == Rules()


def test_partial_yaml_keeps_defaults_for_missing_fields():
    assert Rules.from_yaml("n_players: 6\nrevolution: true\n") == Rules(n_players=6, revolution=True)


@pytest.mark.parametrize(
    "text",
    [
        "n_players: [4,\n",
        "n_players: 4\n  decks: 1\n",
        "exchange: [2, 1\nn_players: 4\n",
        "{unclosed: 1\n",
        "a: b: c\n",
    ],
)
def test_invalid_yaml_text_raises_value_error(text):
    with pytest.raises(ValueError):
        Rules.from_yaml(text)


@pytest.mark.parametrize("text", ["- 4\n- 5\n", "just a string\n", "42\n"])
def test_yaml_that_is_not_a_mapping_raises_value_error(text):
    with pytest.raises(ValueError, match="mapping"):
        Rules.from_yaml(text)


def test_missing_yaml_file_raises_value_error(tmp_path):
    with pytest.raises(ValueError, match="does not exist"):
        Rules.from_yaml(str(tmp_path / "nowhere.yaml"))


def test_invalid_value_in_yaml_names_the_field():
    with pytest.raises(ValueError, match="equal_rank"):
        Rules.from_yaml("equal_rank: sometimes\n")
    with pytest.raises(ValueError, match="exchange"):
        Rules.from_yaml("exchange: [2, 5]\n")


def assert_exact_round_trip(rules: Rules, tmp_path: Path | None = None) -> None:
    text = rules.to_yaml()
    again = Rules.from_yaml(text)
    assert again == rules
    assert again.to_yaml() == text
    assert list(yaml.safe_load(text)) == list(RULE_FIELDS), "to_yaml writes every field, in declaration order"
    assert Rules.from_dict(rules.to_dict()) == rules
    if tmp_path is not None:
        path = tmp_path / "rules.yaml"
        assert rules.to_yaml(path) == text
        assert path.read_text(encoding="utf-8") == text
        assert Rules.from_yaml(path) == rules


@pytest.mark.parametrize("name", PRESETS)
def test_preset_round_trips_exactly_through_yaml(name, tmp_path):
    assert_exact_round_trip(load_preset(name), tmp_path)


def test_to_dict_gives_plain_yaml_types():
    data = Rules(exchange=(1,)).to_dict()
    assert data["exchange"] == [1] and isinstance(data["exchange"], list)
    assert yaml.safe_load(yaml.safe_dump(data)) == data


@st.composite
def valid_rules(draw) -> Rules:
    decks = draw(st.sampled_from([1, 2]))
    fields = {
        "n_players": draw(st.integers(3, 8)),
        "decks": decks,
        "jokers": draw(st.integers(0, 2 * decks)),
        "exchange": draw(st.lists(st.integers(1, 4), min_size=0, max_size=4)),
        "manches": draw(st.integers(1, MAX_MANCHES)),
    }
    for name in BOOL_FIELDS:
        fields[name] = draw(st.booleans())
    for name, allowed in RULE_CHOICES.items():
        fields[name] = draw(st.sampled_from(allowed))
    assert set(fields) == set(RULE_FIELDS)
    return Rules(**fields)


@settings(max_examples=300, deadline=None)
@given(valid_rules())
def test_random_valid_rules_round_trip_exactly_through_yaml(rules):
    assert_exact_round_trip(rules)
    assert hash(Rules.from_yaml(rules.to_yaml())) == hash(rules)


@settings(max_examples=50, deadline=None)
@given(valid_rules(), st.sampled_from(RULE_FIELDS))
def test_replace_keeps_validation(rules, field):
    with pytest.raises(ValueError, match=field):
        rules.replace(**{field: BAD_VALUES[field][0]})


# ---- presets ----------------------------------------------------------------


def test_every_preset_has_a_yaml_file_and_every_file_is_a_preset():
    assert sorted(p.stem for p in RULES_DIR.glob("*.yaml")) == sorted(PRESETS)


@pytest.mark.parametrize("name", PRESETS)
def test_preset_has_its_documented_values(name):
    rules = load_preset(name)
    assert differences_from_standard(rules) == PRESET_DIFFERENCES[name]
    assert rules == Rules(**PRESET_DIFFERENCES[name])


@pytest.mark.parametrize("name", PRESETS)
def test_preset_file_writes_every_field_in_order(name):
    data = yaml.safe_load((RULES_DIR / f"{name}.yaml").read_text(encoding="utf-8"))
    assert list(data) == list(RULE_FIELDS)


@pytest.mark.parametrize("name", PRESETS)
def test_preset_loads_with_from_yaml_and_load_preset_alike(name):
    assert Rules.from_yaml(RULES_DIR / f"{name}.yaml") == load_preset(name)
    assert preset_path(name).name == f"{name}.yaml"


def test_standard_preset_is_the_default_rules():
    assert load_preset("standard") == Rules()


def test_unknown_preset_lists_the_valid_names():
    with pytest.raises(ValueError) as err:
        load_preset("nonexistent")
    assert "nonexistent" in str(err.value)
    for name in PRESETS:
        assert name in str(err.value)


# ---- equality, hashing ------------------------------------------------------


def test_exchange_given_as_list_equals_tuple_and_is_hashable():
    as_list, as_tuple = Rules(exchange=[1]), Rules(exchange=(1,))
    assert as_list == as_tuple
    assert as_list.exchange == (1,)
    assert hash(as_list) == hash(as_tuple)
    assert len({as_list, as_tuple, Rules()}) == 2
    assert {as_list: "family"}[as_tuple] == "family"


def test_replace_returns_a_new_validated_rules():
    rules = Rules().replace(n_players=5, exchange=[3])
    assert rules == Rules(n_players=5, exchange=(3,))
    assert Rules().n_players == 4


# ---- derived sizes ----------------------------------------------------------


def test_standard_derived_sizes():
    rules = Rules()
    assert rules.n_ranks == 13
    assert rules.max_count == 4
    assert rules.n_cards == 52
    assert rules.copies == (4,) * 13
    assert rules.num_actions == 66 == 1 + 13 * 4 + 13
    assert rules.top_rank == 12


def test_two_decks_with_jokers_derived_sizes():
    rules = Rules(n_players=8, decks=2, jokers=4)
    assert rules.n_ranks == 14
    assert rules.max_count == 8
    assert rules.n_cards == 108
    assert rules.copies == (8,) * 13 + (4,)
    assert rules.num_actions == 1 + 14 * 8 + 14
    assert rules.top_rank == 13


@pytest.mark.parametrize(("decks", "jokers"), [(1, 0), (1, 1), (1, 2), (2, 0), (2, 1), (2, 4)])
def test_derived_sizes_follow_decks_and_jokers(decks, jokers):
    rules = Rules(decks=decks, jokers=jokers)
    n_ranks = 13 + (jokers > 0)
    assert rules.n_ranks == n_ranks
    assert rules.max_count == 4 * decks
    assert sum(rules.copies) == rules.n_cards == 52 * decks + jokers
    assert rules.num_actions == 1 + n_ranks * 4 * decks + n_ranks


@pytest.mark.parametrize(
    ("n_players", "exchange", "pairs"),
    [
        (3, (2, 1), ((0, 2, 2),)),
        (4, (2, 1), ((0, 3, 2), (1, 2, 1))),
        (4, (1,), ((0, 3, 1),)),
        (5, (2, 1), ((0, 4, 2), (1, 3, 1))),
        (5, (2, 1, 1), ((0, 4, 2), (1, 3, 1))),
        (8, (4, 3, 2, 1), ((0, 7, 4), (1, 6, 3), (2, 5, 2), (3, 4, 1))),
    ],
)
def test_exchange_pairs_exist_only_between_different_positions(n_players, exchange, pairs):
    assert Rules(n_players=n_players, exchange=exchange).exchange_pairs == pairs
