"""The observation and its spec: the kernel writes into a caller's buffer, the segments cover the vector within their
bounds, the named views decode what the encoder wrote (from an observation or straight from a state), the docs show
the spec."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from helpers import rules_strategy
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import president_env as pe
from president_env import load_preset
from president_env.core import observation
from president_env.core.engine import sample_legal
from president_env.core.rules import Rules
from president_env.core.vec_game import VecGame


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(rules=rules_strategy(), seed=st.integers(0, 2**32 - 1))
def test_the_kernel_writes_each_slots_observation_into_the_callers_buffer(rules: Rules, seed: int) -> None:
    """``observe(..., out=, slots=)`` writes the rows of the chosen slots, seen from any seat, into the caller's
    buffer (here rows of a bigger one, as a rollout buffer's): the same values as the whole batch's observation."""
    game = VecGame(rules, batch_size=8, seed=seed)
    rng = np.random.default_rng(seed)
    buffer = np.full((12, observation.obs_dim(rules)), np.nan, np.float32)
    for _ in range(60):
        viewers = rng.integers(0, rules.n_players, 8)
        whole = observation.observe(rules, game.state, viewers)
        slots = np.flatnonzero(rng.random(8) < 0.5)
        rows = buffer[2 : 2 + slots.size]
        written = observation.observe(rules, game.state, viewers[slots], out=rows, slots=slots)
        assert written is rows
        np.testing.assert_array_equal(rows, whole[slots])
        np.testing.assert_array_equal(game.observe(slots=slots), observation.observe(rules, game.state)[slots])
        game.step(sample_legal(game.legal_mask(), rng))


def test_a_buffer_of_the_wrong_shape_or_type_is_refused_and_left_as_it_was() -> None:
    rules = Rules()
    game = VecGame(rules, batch_size=4, seed=0)
    size = observation.obs_dim(rules)
    for out in (np.zeros((4, size), np.float64), np.zeros((3, size), np.float32), np.zeros((size, 4), np.float32).T):
        before = out.copy()
        with pytest.raises(ValueError, match="out must be a writeable float32 array of shape"):
            game.observe(out=out)
        np.testing.assert_array_equal(out, before)
    with pytest.raises(ValueError, match="viewer must hold one seat per observed slot"):
        observation.observe(rules, game.state, np.zeros(3, np.int64))


def test_layout_covers_the_vector_and_one_hots_are_one_hot() -> None:
    rules = Rules(n_players=5, jokers=2, exchange=(2, 1))
    lay = observation.layout(rules)
    assert sum(seg.size for seg in lay.segments) == lay.size == observation.obs_dim(rules)
    assert [seg.offset for seg in lay.segments] == [0, *np.cumsum([seg.size for seg in lay.segments])[:-1]]
    game = VecGame(rules, batch_size=64, seed=0)
    rng = np.random.default_rng(0)
    for _ in range(200):
        obs = game.observe()
        for name in ("to_act", "phase"):
            np.testing.assert_array_equal(obs[:, lay[name]].sum(axis=1), 1)
        assert (obs[:, lay["to_act"]][:, 0] == 1).all()  # the default viewer is the player to act
        for name in ("trick_rank", "trick_count", "trick_owner", "exchange_partner"):
            assert set(np.unique(obs[:, lay[name]].sum(axis=1))) <= {0, 1}
        hand = obs[:, lay["hand"]]
        np.testing.assert_array_equal(hand.sum(axis=1), obs[:, lay["held"]][:, 0])
        game.step(sample_legal(game.legal_mask(), rng))
    assert "| `hand` | 0..13 | R = 14 | 0..4 | own cards, count per rank |" in lay.table()


def test_the_standard_layout_is_the_one_checkpoints_were_trained_on() -> None:
    lay = observation.layout(Rules())
    sizes = [(seg.name, seg.size) for seg in lay.segments]
    assert sizes == [
        ("hand", 13), ("played", 52), ("held", 4), ("trick_rank", 13), ("trick_count", 4), ("trick_owner", 4),
        ("passed", 4), ("out_order", 16), ("penalized", 4), ("roles", 20), ("revolution", 1), ("constrained", 1),
        ("to_act", 4), ("phase", 2), ("gave", 13), ("received", 13), ("exchange_partner", 4), ("gives_left", 1),
        ("scores", 4), ("manche", 1), ("decisive", 1),
    ]  # fmt: skip
    assert lay.size == 179 and lay["played"] == slice(13, 65) and lay["decisive"] == slice(178, 179)


def test_the_docs_show_exactly_the_rendered_table_of_the_standard_rules() -> None:
    docs = (Path(__file__).resolve().parents[1] / "docs" / "environment.md").read_text(encoding="utf-8")
    rendered = observation.layout(Rules()).table()
    header = rendered.splitlines()[0]
    assert docs.count(header) == 1
    start = docs.index(header)
    end = docs.find("\n\n", start)
    assert docs[start:end] == rendered


def test_an_unknown_segment_or_a_wrong_size_is_refused_by_name() -> None:
    lay = observation.layout(Rules())
    with pytest.raises(KeyError, match="no observation segment 'cards'; segments: hand, played"):
        lay["cards"]
    with pytest.raises(ValueError, match=r"shape \(\.\.\., 179\)"):
        lay.view(np.zeros((2, 178), np.float32))


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(rules=rules_strategy(), seed=st.integers(0, 2**32 - 1))
def test_the_named_views_decode_the_encoder_and_equal_the_views_of_the_state(rules: Rules, seed: int) -> None:
    rules = rules.replace(manches=2)
    lay = observation.layout(rules)
    game = VecGame(rules, batch_size=6, seed=seed)
    rng = np.random.default_rng(seed)
    for _ in range(150):
        viewer = rng.integers(0, rules.n_players, 6)
        obs = observation.observe(rules, game.state, viewer)
        decoded, direct = lay.view(obs), lay.view_state(game.state, viewer)
        assert list(decoded) == list(direct) == list(lay.names)
        for seg in lay.segments:
            assert decoded[seg.name].shape == direct[seg.name].shape == (6, *seg.view_shape)
            assert decoded[seg.name].dtype == direct[seg.name].dtype
            np.testing.assert_array_equal(decoded[seg.name], direct[seg.name], err_msg=seg.name)
            one = lay.view(obs[2])[seg.name]  # one observation, no batch axis
            np.testing.assert_array_equal(one, decoded[seg.name][2])
        game.step(sample_legal(game.legal_mask(), rng))


@pytest.mark.parametrize("preset", ["standard", "big_table", "party"])
def test_every_entry_lies_within_its_segments_bounds(preset: str) -> None:
    rules = load_preset(preset).replace(manches=3)
    lay = observation.layout(rules)
    for space in (
        pe.env(rules=rules).observation_space("player_0")["observation"],
        pe.gym_env(rules=rules).observation_space,
        pe.vector_env(2, rules=rules).single_observation_space,
    ):
        assert space.high.max() == space.high.min() == lay.high and space.shape == (lay.size,)
    game = VecGame(rules, batch_size=64, seed=3)
    rng = np.random.default_rng(3)
    seen = np.zeros(lay.size)
    for _ in range(400):
        obs = game.observe()
        seen = np.maximum(seen, obs.max(axis=0))
        assert (obs >= 0).all() and (obs == np.rint(obs)).all()
        for seg in lay.segments:
            assert (obs[:, seg.slice] <= seg.high).all(), seg.name
            if seg.encoding == observation.ONE_HOT:
                per_value = obs[:, seg.slice].reshape(-1, *seg.shape).sum(axis=-1)
                assert set(np.unique(per_value)) <= {0, 1}, seg.name
        game.step(sample_legal(game.legal_mask(), rng))
    assert seen[lay["scores"]].max() > 0 and seen[lay["gives_left"]].max() > 0  # the bounds were put to the test
    if preset == "standard":  # 4 players tie often enough for a decisive manche
        assert seen[lay["decisive"]].max() == 1
