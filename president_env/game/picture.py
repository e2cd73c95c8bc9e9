"""The table as a picture: ``draw_table(view)`` draws a :class:`~president_env.game.render.TableView` with Pillow.

The envs' ``render_mode="rgb_array"`` returns it (an ``(H, W, 3) uint8`` array, :data:`SIZE` for every table of
3 to 8 players, so that video frames share one shape; ``gymnasium.wrappers.RecordVideo`` records it), and
``python scripts/render_demo.py --gif PATH`` writes a game of them as a GIF. It shows what the text render
shows: the manche and the phase, one row per seat (name, role, cards held, out / passed / dealer, the seat to
act highlighted), the trick in force as card faces, the gives due in the exchange, the shown player's hand and
the last action; at the end of a game, each player's place and score and the winner.

The font is Pillow's built-in one (``ImageFont.load_default(size=...)``, in every install), which has ASCII
only: suit symbols are drawn as small shapes, and an acute accent (``é``) is put over its letter.
"""

from __future__ import annotations

import unicodedata
from functools import cache, lru_cache

import numpy as np
from PIL import Image, ImageDraw, ImageFont

from president_env.core.cards import SUIT_SYMBOLS, SUITS
from president_env.game.render import TableView

SIZE: tuple[int, int] = (960, 540)
"""``(width, height)`` of every picture, in pixels."""

FELT = (20, 92, 58)
HEADER = (11, 58, 36)
PANEL = (15, 74, 46)
TEXT = (242, 240, 230)
MUTED = (168, 200, 180)
HIGHLIGHT = (238, 198, 66)
DARK = (30, 30, 30)
RED = (200, 30, 40)
LIGHT_RED = (255, 120, 120)
CARD = (250, 250, 244)
CARD_EDGE = (110, 110, 110)
PHASE_COLORS = {"exchange": (212, 118, 40), "play": (42, 112, 200), "finished": (110, 110, 110)}

CARD_W, CARD_H = 44, 62
_SYMBOL_SUIT = {symbol: suit for suit, symbol in SUIT_SYMBOLS.items()}
_REPLACE = {"×": "x", "←": "<-", "→": "->", "–": "-", "—": "-"}
_FONT_EXTRA = frozenset("©«°±´·»‘’“”…‹›⁄™")  # the built-in font's characters beyond ASCII
_PAD = 2  # pixels around a run of text: a bold stroke reaches past its advance
_SUPERSAMPLE = 4  # suit shapes are drawn 4 times larger, then shrunk: smooth edges


@cache
def _font(size: int) -> ImageFont.FreeTypeFont:
    return ImageFont.load_default(size=size)


def _suit_color(suit: str) -> tuple[int, int, int]:
    return RED if suit in ("D", "H") else DARK


@cache
def _suit_sprite(suit: str, size: int, color: tuple[int, int, int]) -> Image.Image:
    """An RGBA ``size`` x ``size`` image of a suit's shape."""
    s = size * _SUPERSAMPLE
    mask = Image.new("L", (s, s), 0)
    draw = ImageDraw.Draw(mask)
    c, r = s / 2, s / 4
    if suit == "D":
        draw.polygon([(c, 0), (s * 0.85, c), (c, s), (s * 0.15, c)], fill=255)
    elif suit == "H":
        draw.ellipse([0, s * 0.05, 2 * r, s * 0.05 + 2 * r], fill=255)
        draw.ellipse([s - 2 * r, s * 0.05, s, s * 0.05 + 2 * r], fill=255)
        draw.polygon([(s * 0.02, s * 0.38), (s * 0.98, s * 0.38), (c, s)], fill=255)
    elif suit == "S":
        draw.polygon([(c, 0), (s * 0.02, s * 0.56), (s * 0.98, s * 0.56)], fill=255)
        draw.ellipse([0, s * 0.36, 2 * r, s * 0.36 + 2 * r], fill=255)
        draw.ellipse([s - 2 * r, s * 0.36, s, s * 0.36 + 2 * r], fill=255)
        draw.polygon([(c, s * 0.55), (c - s * 0.18, s), (c + s * 0.18, s)], fill=255)
    else:  # clubs
        leaf = s * 0.23
        for x, y in ((c, leaf), (leaf, s * 0.55), (s - leaf, s * 0.55)):
            draw.ellipse([x - leaf, y - leaf, x + leaf, y + leaf], fill=255)
        draw.polygon([(c, s * 0.4), (c - s * 0.18, s), (c + s * 0.18, s)], fill=255)
    sprite = Image.new("RGBA", (size, size), color + (0,))
    sprite.putalpha(mask.resize((size, size), Image.Resampling.LANCZOS))
    return sprite


def _pieces(text: str) -> list[tuple[str, str]]:
    """``text`` as runs the built-in font can draw: ``("text", run)``, ``("accent", letter)`` (a letter with an
    acute accent) and ``("suit", "H")``."""
    pieces: list[tuple[str, str]] = []
    run = ""
    for ch in text:
        ch = _REPLACE.get(ch, ch)
        if ch.isascii() or ch in _FONT_EXTRA:
            run += ch
            continue
        if run:
            pieces.append(("text", run))
            run = ""
        if ch in _SYMBOL_SUIT:
            pieces.append(("suit", _SYMBOL_SUIT[ch]))
        else:
            base = unicodedata.normalize("NFD", ch)
            pieces.append(("accent" if base[1:] == "\u0301" else "text", base[0] if base[0].isascii() else "?"))
    if run:
        pieces.append(("text", run))
    return pieces


@lru_cache(maxsize=4096)
def _width(text: str, size: int) -> float:
    """The width of ``text`` drawn by :func:`_text`, in pixels."""
    font = _font(size)
    return sum(font.getlength(p) if kind != "suit" else size * 0.9 for kind, p in _pieces(text))


@lru_cache(maxsize=1024)
def _fit(text: str, size: int, width: float) -> str:
    """``text``, cut with an ellipsis where it is wider than ``width``."""
    if _width(text, size) <= width:
        return text
    while text and _width(text + "…", size) > width:
        text = text[:-1]
    return text + "…"


def _text(
    image: Image.Image, xy: tuple[float, float], text: str, size: int, fill=TEXT, bold: bool = False, anchor_right=False
) -> float:
    """Draw ``text`` with its top left at ``xy`` (its top right with ``anchor_right``); returns its right end."""
    x, y = xy
    if anchor_right:
        x -= _width(text, size)
    for kind, piece in _pieces(text):
        if kind == "suit":
            glyph = int(size * 0.8)
            red = piece in ("D", "H")
            color = (RED if fill == DARK else LIGHT_RED) if red else fill  # red suits red, on any background
            sprite = _suit_sprite(piece, glyph, color)
            image.paste(sprite, (int(x + size * 0.05), int(y + size * 0.15)), sprite)
            x += size * 0.9
            continue
        run = _run(piece, size, fill, bold, kind == "accent")
        image.paste(run, (int(x) - _PAD, int(y)), run)
        x += _width(piece, size)
    return x


@lru_cache(maxsize=4096)
def _run(text: str, size: int, fill: tuple[int, int, int], bold: bool, accent: bool) -> Image.Image:
    """``text`` drawn once on a transparent image, pasted wherever it appears again (the rows repeat from frame
    to frame); with ``accent``, an acute accent over it (one letter)."""
    font = _font(size)
    image = Image.new("RGBA", (int(font.getlength(text)) + 2 * _PAD, int(size * 1.6)), fill + (0,))
    draw = ImageDraw.Draw(image)
    draw.text((_PAD, 0), text, font=font, fill=fill, **({"stroke_width": 1, "stroke_fill": fill} if bold else {}))
    if accent:
        draw.text((_PAD + (font.getlength(text) - font.getlength("´")) / 2, 0), "´", font=font, fill=fill)
    return image


@lru_cache(maxsize=256)
def _card_face(card: str) -> Image.Image:
    """A card's face: its rank and suit in the top left corner (what stays visible in a fanned hand), the suit
    large below. ``"JK"`` is a joker; a rank alone (suits unknown) has no suit."""
    face = Image.new("RGBA", (CARD_W, CARD_H), (0, 0, 0, 0))
    ImageDraw.Draw(face).rounded_rectangle([0, 0, CARD_W - 1, CARD_H - 1], 5, fill=CARD, outline=CARD_EDGE)
    if card == "JK":
        _text(face, (4, 3), "JK", 15, (120, 40, 160), bold=True)
        ImageDraw.Draw(face).ellipse([16, 30, 36, 50], outline=(120, 40, 160), width=3)
        return face
    rank, suit = (card[:-1], card[-1]) if card[-1] in SUITS else (card, "")
    color = _suit_color(suit) if suit else (90, 90, 90)
    _text(face, (4, 3), rank, 16, color, bold=True)
    if suit:
        small = _suit_sprite(suit, 12, color)
        face.paste(small, (5, 23), small)
        large = _suit_sprite(suit, 22, color)
        face.paste(large, (CARD_W - 27, CARD_H - 27), large)
    return face


def _cards(image: Image.Image, x: int, y: int, cards: tuple[str, ...], width: int) -> None:
    """Cards left to right from ``(x, y)``, overlapping as needed to fit in ``width``."""
    if not cards:
        return
    step = CARD_W + 4 if len(cards) == 1 else min(CARD_W + 4, (width - CARD_W) / (len(cards) - 1))
    for i, card in enumerate(cards):
        face = _card_face(card)
        image.paste(face, (int(x + i * step), y), face)


def _lines(image: Image.Image, x: int, y: int, lines: list[str], width: int, height: int, size: int = 15) -> None:
    """Lines of text from ``(x, y)``, smaller where they would not fit in ``height``."""
    lines = [line for line in lines if line]
    if not lines:
        return
    size = max(10, min(size, int(height / len(lines) / 1.3)))
    for i, line in enumerate(lines):
        _text(image, (x, y + i * size * 1.3), _fit(line, size, width), size)


def draw_table(view: TableView) -> np.ndarray:
    """The picture of ``view``: ``(H, W, 3) uint8``, ``(W, H)`` being :data:`SIZE` whatever the table."""
    width, height = SIZE
    image = Image.new("RGB", SIZE, FELT)
    draw = ImageDraw.Draw(image)
    finished = view.phase == "finished"

    # Header: the game, the manche, the phase.
    draw.rectangle([0, 0, width, 44], fill=HEADER)
    _text(image, (16, 11), f"Président · {view.n_players} players · {view.manche}", 20, bold=True)
    badge = view.phase.upper()
    badge_w = _width(badge, 16) + 24
    draw.rounded_rectangle([width - 16 - badge_w, 8, width - 16, 36], 8, fill=PHASE_COLORS.get(view.phase, PANEL))
    _text(image, (width - 28, 13), badge, 16, bold=True, anchor_right=True)
    if view.order:
        _text(image, (width - 32 - badge_w, 13), view.order, 16, HIGHLIGHT, anchor_right=True)

    # One row per seat (per player once finished); the seat to act, or the winner, highlighted.
    row_h, top = 27, 52
    for i, row in enumerate(view.seats):
        y = top + i * (row_h + 2)
        lit = row.to_act or (finished and row.name == view.winner)
        fill = DARK if lit else TEXT
        draw.rounded_rectangle([16, y, width - 16, y + row_h], 6, fill=HIGHLIGHT if lit else PANEL)
        if lit:
            draw.polygon([(24, y + 7), (24, y + row_h - 7), (36, y + row_h / 2)], fill=DARK)
        _text(image, (44, y + 5), f"seat {row.seat}" if not finished else f"#{row.seat}", 14, DARK if lit else MUTED)
        _text(image, (104, y + 4), _fit(row.name, 16, 128), 16, fill, bold=lit)
        x = 240
        if not finished:
            _text(image, (x, y + 5), row.role or "-", 15, fill)
            x = 380
            draw.rounded_rectangle([x, y + 5, x + 12, y + row_h - 5], 2, fill=(60, 90, 170), outline=CARD)
            _text(image, (x + 18, y + 5), f"{row.cards} card{'s' if row.cards != 1 else ''}", 15, fill)
            x = 480
        _text(image, (x, y + 5), _fit("  ·  ".join(row.notes), 15, width - 24 - x), 15, fill)

    # The middle: the trick in force (or the gives due), what the rules demand; a finished game's result.
    middle = top + 8 * (row_h + 2) + 6
    draw.rounded_rectangle([16, middle, width - 16, middle + 112], 8, fill=PANEL)
    if finished:
        if view.winner:
            _text(image, (32, middle + 10), f"Winner: {view.winner}", 26, HIGHLIGHT, bold=True)
        _lines(image, 32, middle + 50, list(view.result[1:3]), width - 64, 56)
    elif view.phase == "exchange":
        _text(image, (32, middle + 8), "Exchange", 15, MUTED)
        _lines(image, 32, middle + 30, list(view.exchanges), width - 64, 78)
    else:
        _text(image, (32, middle + 8), "Trick", 15, MUTED)
        _cards(image, 32, middle + 30, view.trick, 400)
        if not view.trick:
            draw.rounded_rectangle([32, middle + 30, 32 + CARD_W, middle + 30 + CARD_H], 5, outline=MUTED, width=2)
        _lines(image, 460, middle + 30, [view.trick_line or "", view.constraint or ""], width - 16 - 476, 62)

    # The shown hand, as card faces.
    hand_top = middle + 122
    if not finished:
        _text(image, (16, hand_top), f"Hand of {view.hand_owner} ({len(view.hand)})", 16, bold=True)
        if view.hand_exchange:
            _text(
                image,
                (width - 16, hand_top + 1),
                _fit(f"exchange: {view.hand_exchange}", 14, 560),
                14,
                MUTED,
                anchor_right=True,
            )
        _cards(image, 16, hand_top + 24, view.hand, width - 32)
    if view.last:
        _text(image, (16, height - 24), _fit(f"Last: {view.last}", 15, width - 32), 15, MUTED)
    return np.asarray(image).copy()


__all__ = ["SIZE", "draw_table"]
