"""The observation is pinned: trained checkpoints read its layout, so its order and values must never change.

The hashes below were recorded before the observation spec replaced the hand-written encoders; any change of
segment order, size or value on any preset fails here.
"""

from __future__ import annotations

import hashlib

import numpy as np
import pytest

from president_env import VecGame, load_preset
from president_env.core.engine import sample_legal
from president_env.core.presets import PRESETS

GOLDEN = {
    ("standard", 3): "e305eecee46ecfa90903a19d9bec7c14ccc1aed1805290b7acccc9d3a2b8cd7e",
    ("standard", 96): "1d1416ae5a837990b67cc4aad72417e05ff19b8db29d45c3afc6b67b5b2fc3ae",
    ("quebec", 3): "f4641451ce0a477d0672a93b85e5b4a68ad28f7b9d47ad88cb1b05feded4874f",
    ("quebec", 96): "0e4c20683484403a27f3909dbc45b941210ff6f7a2d52822b9e3830ad23062c9",
    ("big_table", 3): "1a13c3413bb3505e8e3b21a2008ae772f0d31dc9451f97821a5aa2a096dfa716",
    ("big_table", 96): "4b890778753fab86877fef587b2c5df86e931d6b89ad6f0b308c80dc0dd6e5fb",
    ("family", 3): "0ef1abee8d232d8a1f07c4abbee3ba304ed9ddd2536173d5d039e9e548d9f20a",
    ("family", 96): "f093afcad8d1ae03d37c9dc1ac784bee7f280c98233904508f23870ed42fa650",
    ("party", 3): "8e3cae291447ae686e8067346fde1a71902d37c032c44653aba58f18b73dfe74",
    ("party", 96): "936f5ce3981299d4dcb2b280c74ec24b1dc3cb76cc4f6c37aa176b7b0ebc9038",
    ("or_nothing", 3): "e7527c017d7e4dc325ccb07d5d016f91f58b56baa14d6f65119ef74d3a26e510",
    ("or_nothing", 96): "2a20599e9249c54821fbac5c02e48acbff2428fd9870929aee62f41a0c1fb46d",
}


def observation_digest(preset: str, batch_size: int, steps: int = 400) -> str:
    """SHA-256 of the observations (acting seat, then every seat) of seeded random games of ``preset``, played
    as games of 3 manches so that exchanges, roles, scores and decisive manches show too."""
    rules = load_preset(preset).replace(manches=3)
    game = VecGame(rules, batch_size=batch_size, seed=7)
    rng = np.random.default_rng(11)
    digest = hashlib.sha256()
    for _ in range(steps):
        digest.update(game.observe().tobytes())
        for seat in range(rules.n_players):
            digest.update(game.observe(np.full(batch_size, seat)).tobytes())
        game.step(sample_legal(game.legal_mask(), rng))
    return digest.hexdigest()


@pytest.mark.parametrize("preset", PRESETS)
@pytest.mark.parametrize("batch_size", [3, 96])  # both encoder paths: the plan (small B) and by segment (large B)
def test_observations_are_bit_identical_to_the_recorded_ones(preset: str, batch_size: int) -> None:
    assert observation_digest(preset, batch_size) == GOLDEN[preset, batch_size]
