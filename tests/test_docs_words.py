"""The user-facing pages speak of the project alone: no internal tracker references.

The pages read are ``README.md``, ``results/README.md`` and every ``docs/**/*.md``. A reader has no access to the
tracker the project was planned in, nor to the machine or the working days it was built on, so a target is named by
what it measures and a run by its config or its date. The rule, line by line:

- ``issue`` / ``issues`` as a word (``issue 33``, ``Issue 33's``, ``the engine issue``) is refused, except as the text
  or the address of a Markdown link to an outside tracker: ``[Ray issue 123](https://github.com/ray-project/ray/
  issues/123)`` is fine, because the link leads somewhere a reader can go. Words such as ``issued`` do not count.
- ``#N`` (a hash and digits, not inside a word, an address or an ``&#N;`` entity) is refused as an issue
  reference outside code; inside an inline code span or a fenced code block it is text to type (``#4`` picks the
  fourth listed move in the terminal game) and stays.
- ``sitting`` / ``sittings`` as a word is refused. A path segment that holds it (``phase2_sitting4/checkpoint.pt``,
  ``sitting1/``) is the name of a committed file and stays: ``_``, ``/`` or a digit next to it is no word boundary.
- ``session`` / ``sessions`` as a word is refused (the working sittings' sense), except a web or browser session
  (``browser session``, ``web session``, ``per browser session``). ``InferenceSession`` or ``session_id`` are no words.
- ``shared 2-core machine``, ``the shared machine``, ``this shared machine`` and ``2-core machine shared with`` (``2``
  or ``two``) are refused: the figures say how many cores and what load they ran at instead.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

_EXTERNAL_LINK = re.compile(r"\[([^\]]*)\]\((https?://[^)\s]+)\)")
_URL = re.compile(r"<?https?://\S+")
_CODE_SPAN = re.compile(r"(`+)(.+?)\1")
_RULES = [
    ("an issue reference", re.compile(r"\bissues?\b", re.IGNORECASE)),
    ("a sitting", re.compile(r"\bsittings?\b", re.IGNORECASE)),
    ("a working session", re.compile(r"(?<!browser )(?<!web )\bsessions?\b", re.IGNORECASE)),
    (
        "the shared machine",
        re.compile(
            r"shared\s+(?:2|two)-core|(?:the|this|a)\s+shared\s+machine|(?:2|two)-core\s+(?:\w+\s+)?machine,?\s+shared",
            re.IGNORECASE,
        ),
    ),
]
_HASH_NUMBER = ("an issue reference", re.compile(r"(?<![\w&/#])#\d+\b"))


def _outside_links(line: str) -> str:
    """``line`` with links to outside trackers, and bare addresses, blanked (their words are allowed)."""
    line = _EXTERNAL_LINK.sub(lambda m: " " if "/issues" in m.group(2) or "/pull" in m.group(2) else m.group(1), line)
    return _URL.sub(" ", line)


def find_internal_references(text: str) -> list[tuple[int, str, str]]:
    """``(line number, what, the words)`` for every internal tracker reference in the Markdown ``text``."""
    found = []
    fenced = False
    for number, line in enumerate(text.splitlines(), start=1):
        if line.lstrip().startswith(("```", "~~~")):
            fenced = not fenced
            continue
        prose = _outside_links(line)
        for what, pattern in _RULES:
            found += [(number, what, m.group(0)) for m in pattern.finditer(prose)]
        if not fenced:
            what, pattern = _HASH_NUMBER
            found += [(number, what, m.group(0)) for m in pattern.finditer(_CODE_SPAN.sub(" ", prose))]
    return found


def _pages() -> list[Path]:
    return [ROOT / "README.md", ROOT / "results" / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]


def test_the_pages_cite_no_internal_tracker():
    bad = []
    for page in _pages():
        for number, what, words in find_internal_references(page.read_text(encoding="utf-8")):
            bad.append(f"{page.relative_to(ROOT)}:{number}: {what}: {words!r}")
    assert not bad, "user-facing pages cite the internal tracker:\n" + "\n".join(bad)


@pytest.mark.parametrize(
    "line",
    [
        "All of issue 33's targets are met.",
        "Measured as Issue 34 asks.",
        "the engine issue's AEC target",
        "see #12 for the plan",
        "Sitting 7's held-out measurement",
        "over three sittings",
        "in this session the 1.6× target is left open",
        "on the shared 2-core machine (load 5)",
        "on this 2-core machine shared with other jobs",
        "this shared machine's speed",
        "a [plan](https://example.org/plan) from issue 5",
    ],
)
def test_a_planted_reference_is_found(line):
    found = find_internal_references(f"A first line.\n{line}\n")
    assert found and all(number == 2 for number, _, _ in found), found


@pytest.mark.parametrize(
    "line",
    [
        "A fix waits on [Ray issue 12345](https://github.com/ray-project/ray/issues/12345).",
        "See https://github.com/pytorch/pytorch/issues/99 upstream.",
        "type `#4` for the fourth listed move",
        "results/experiments/universal_rules/phase2_sitting4/checkpoint.pt",
        "docs/results/experiments/standard_4p_long/sitting1/vs_mc-4/versus.md",
        "one per browser session; an `InferenceSession` per model; a token issued at login",
        "on two cores (load 1.9 to 5.7, other jobs running)",
        "the [targets](#the-held-out-targets) table; a shared trunk",
        "&#8212; an entity",
    ],
)
def test_allowed_words_pass(line):
    assert find_internal_references(line) == []


def test_a_fenced_block_keeps_its_hash_numbers():
    assert find_internal_references("```\npick #4\n```\n") == []
    assert [w for _, _, w in find_internal_references("```\nsee issue 3\n```\n")] == ["issue"]
