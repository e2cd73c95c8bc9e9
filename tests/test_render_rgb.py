"""``render_mode="rgb_array"``: the table drawn with Pillow, one frame shape for every table, recorded by
Gymnasium's ``RecordVideo``."""

from __future__ import annotations

import importlib.util
import warnings
from pathlib import Path

import gymnasium
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env
from PIL import Image

import president_env as pe
from president_env.core.engine import sample_legal
from president_env.game.picture import SIZE, _pieces, draw_table
from president_env.game.render import describe_table, render_table

ROOT = Path(__file__).resolve().parents[1]
FRAME_SHAPE = (SIZE[1], SIZE[0], 3)


def legal(mask: np.ndarray, rng: np.random.Generator) -> int:
    return int(sample_legal(mask[None].astype(bool), rng)[0])


def aec_frames(rules, seed: int = 0, every: int = 1) -> list[np.ndarray]:
    """The AEC env's picture before the first move, every ``every`` moves and at the end of one game."""
    aec = pe.env(rules=rules, render_mode="rgb_array")
    aec.reset(seed=seed)
    rng = np.random.default_rng(seed)
    frames, moves = [aec.render()], 0
    for _ in aec.agent_iter():
        observation, _, terminated, truncated, _ = aec.last()
        if terminated or truncated:
            aec.step(None)
            continue
        aec.step(legal(observation["action_mask"], rng))
        moves += 1
        if moves % every == 0:
            frames.append(aec.render())
    frames.append(aec.render())
    return frames


def check_frames(frames: list[np.ndarray]) -> None:
    for frame in frames:
        assert frame.shape == FRAME_SHAPE and frame.dtype == np.uint8
    assert len({frame.tobytes() for frame in frames}) > len(frames) // 2  # the picture follows the game


@pytest.mark.parametrize(
    "rules",
    [
        pe.Rules(n_players=3, manches=1),
        pe.load_preset("big_table").replace(manches=1),  # 8 players, two decks and jokers
        pe.Rules(n_players=3, decks=2, jokers=4, manches=1),  # the largest hands: 36 cards
        pe.load_preset("party").replace(manches=2),  # revolution, the exchange
    ],
    ids=["3p", "big_table", "3p-two-decks", "party"],
)
def test_aec_frames_keep_one_shape_and_follow_the_game(rules):
    check_frames(aec_frames(rules, seed=1, every=4))


def test_gym_frames_keep_one_shape_and_follow_the_game():
    env = pe.gym_env(rules=pe.Rules(manches=2), render_mode="rgb_array", seat=0)
    rng = np.random.default_rng(0)
    _, info = env.reset(seed=0)
    frames, terminated = [env.render()], False
    while not terminated:
        _, _, terminated, _, info = env.step(legal(info["action_mask"], rng))
        frames.append(env.render())
    check_frames(frames)
    assert not np.array_equal(frames[-2], frames[-1])  # the result, after the last table


def test_the_picture_draws_the_text_renders_view():
    """One view serves both drawings: the text of ``describe_table`` is ``render_table``'s, and the same view
    always draws the same picture."""
    rules = pe.load_preset("party")
    aec = pe.raw_env(rules=rules)
    aec.reset(seed=4)
    view = describe_table(rules, aec.game.to_state(), 0, None, aec.game.cards)
    assert view.text() == render_table(rules, aec.game.to_state(), 0, None, aec.game.cards)
    assert view.phase == "play" and view.order == "normal order" and len(view.hand) == 13
    np.testing.assert_array_equal(draw_table(view), draw_table(view))


def test_suits_and_accents_are_drawn_not_left_to_the_font():
    """Pillow's built-in font has ASCII only: suit symbols become shapes, an acute accent goes over its letter."""
    assert _pieces("Président 7♥ 2 × A") == [
        ("text", "Pr"),
        ("accent", "e"),
        ("text", "sident 7"),
        ("suit", "H"),
        ("text", " 2 x A"),
    ]


def test_red_suits_are_red_on_the_cards():
    """A hand of hearts shows red on its faces; a hand of spades does not."""
    rules = pe.Rules(n_players=3, manches=1)
    aec = pe.raw_env(rules=rules)
    aec.reset(seed=0)
    reds = []
    for suit in "HS":
        hands = [[f"{rank}{suit}" for rank in ("3", "4", "5", "6")]] + aec.game.cards[1:]
        view = describe_table(rules, aec.game.to_state(), 0, 0, hands)
        hand_area = draw_table(view)[-104:-40, :300].astype(int)
        reds.append(((hand_area[..., 0] > 150) & (hand_area[..., 1] < 80) & (hand_area[..., 2] < 80)).sum())
    assert reds[0] > 200 and reds[1] == 0


@pytest.mark.parametrize("make", [pe.env, pe.gym_env])
def test_rgb_array_is_a_declared_mode_and_a_bad_mode_still_raises(make):
    env = make(render_mode="rgb_array")
    assert "rgb_array" in env.metadata["render_modes"] and env.metadata["render_fps"] > 0
    with pytest.raises(ValueError, match="render_mode must be None or one of ansi, human, rgb_array"):
        make(render_mode="rgb")


def test_gymnasium_check_env_passes_in_every_render_mode(capsys):
    """Made through its registration (with a spec), the env is checked in each of its render modes."""
    env = gymnasium.make("president_env/President-v0", render_mode="rgb_array")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        check_env(env.unwrapped)


def test_record_video_records_a_game(tmp_path):
    """Gymnasium's RecordVideo (moviepy writes the file) records one whole game of the Gym env."""
    pytest.importorskip("moviepy")
    from gymnasium.wrappers import RecordVideo

    env = RecordVideo(
        pe.gym_env(rules=pe.Rules(manches=1), render_mode="rgb_array", seat=0),
        str(tmp_path / "videos"),
        episode_trigger=lambda episode: True,
        fps=4,
    )
    rng = np.random.default_rng(0)
    _, info = env.reset(seed=0)
    terminated = False
    while not terminated:
        _, _, terminated, _, info = env.step(legal(info["action_mask"], rng))
    env.close()
    videos = list((tmp_path / "videos").glob("*.mp4"))
    assert len(videos) == 1 and videos[0].stat().st_size > 0


def test_the_demo_writes_a_gif_and_the_docs_gif_stays_small(tmp_path):
    """``scripts/render_demo.py --gif`` writes the frames of a game; ``docs/render-demo.gif`` is such a GIF, under
    1 MB."""
    spec = importlib.util.spec_from_file_location("render_demo", ROOT / "scripts" / "render_demo.py")
    demo = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(demo)
    path = tmp_path / "game.gif"
    count = demo.write_gif(path, "standard", seed=0, manches=1, every=20)
    with Image.open(path) as gif:
        assert gif.n_frames == count > 2 and gif.size == (720, 405)
    docs_gif = ROOT / "docs" / "render-demo.gif"
    assert docs_gif.stat().st_size < 1_000_000
    with Image.open(docs_gif) as gif:
        assert gif.n_frames > 10
