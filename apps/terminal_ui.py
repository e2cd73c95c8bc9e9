"""The screen and the keyboard of ``president-play``: rich output, prompt_toolkit input (the ``play`` extra).

:class:`Screen` prints through a ``rich.console.Console``: hearts and diamonds in red, tables and the list of
moves laid out to the terminal's width, and plain text without a single escape code when the output is not a
terminal or ``NO_COLOR`` is set. With ``ascii_only`` (``--ascii``, or an output whose encoding is not UTF) the
text is plain ASCII: suit letters C D H S, arrows as ``->``, accents dropped.

:class:`Keyboard` reads the player's lines. At a terminal it is a ``prompt_toolkit`` ``PromptSession``: Tab
completes the legal moves (:class:`MoveCompleter`), the up arrow recalls earlier lines (kept in memory for the
game), and a bottom toolbar counts the legal moves. Elsewhere (pipes, scripts, tests) it reads plain lines
and echoes each after its prompt, so a transcript reads as it was played.

This module knows nothing of the game: ``president_env.apps.terminal`` says what to print and which moves to
offer.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Sequence
from typing import Any, TextIO

from prompt_toolkit import PromptSession
from prompt_toolkit.completion import CompleteEvent, Completer, Completion
from prompt_toolkit.document import Document
from prompt_toolkit.history import InMemoryHistory
from prompt_toolkit.input import Input, create_input
from prompt_toolkit.output import Output, create_output
from rich import box
from rich.columns import Columns
from rich.console import Console, ConsoleOptions
from rich.measure import Measurement
from rich.padding import Padding
from rich.table import Table
from rich.text import Text

from president_env.core.cards import SUIT_SYMBOLS

# --ascii: the renderer's symbols in plain ASCII; anything else non-ASCII loses its accents (NFKD) in Screen.plain.
_ASCII = str.maketrans(
    {
        **{symbol: letter for letter, symbol in SUIT_SYMBOLS.items()},
        "·": "-",
        "←": "<-",
        "×": "x",
        "…": "...",
        "→": "->",
        "─": "-",
    }
)
_RED_CARD = re.compile(r"(?:10|[2-9JQKA])[♥♦]")
# SIMPLE_HEAD (a rule under the header, no frame) drawn with "-": rich would swap any other box for a framed one.
_ASCII_SIMPLE_HEAD = box.Box("    \n    \n -- \n    \n    \n    \n    \n    \n", ascii=True)


class Screen:
    """What the player sees, printed on ``stdout`` through rich.

    Args:
        stdout: the output stream.
        ascii_only: plain ASCII whatever the stream's encoding (``--ascii``).
    """

    def __init__(self, stdout: TextIO, ascii_only: bool = False) -> None:
        options: dict[str, Any] = {"file": stdout, "highlight": False, "markup": False, "emoji": False}
        console = Console(**options)
        if console.no_color:  # rich's reading of NO_COLOR; it would still send bold and dim: send nothing
            console = Console(**options, color_system=None)
        self.console = console
        self.ascii_only = ascii_only or console.options.ascii_only
        """Plain ASCII: asked for, or the output's encoding is not UTF (rich's test)."""

    def plain(self, text: str) -> str:
        """``text`` as it can be written: in ASCII when :attr:`ascii_only`."""
        if not self.ascii_only:
            return text
        return unicodedata.normalize("NFKD", text.translate(_ASCII)).encode("ascii", "ignore").decode()

    def text(self, text: str, style: str = "") -> Text:
        """``text`` ready to print, red cards in red."""
        shown = Text(self.plain(text), style=style)
        if not self.ascii_only:
            shown.highlight_regex(_RED_CARD, "red")
        return shown

    def say(self, text: str = "", style: str = "") -> None:
        """Print a line as it is: a long line is left to the terminal to wrap, a transcript keeps one line each."""
        self.console.print(self.text(text, style), soft_wrap=True)

    def moves(self, title: str, entries: Sequence[tuple[str, str]]) -> None:
        """``title`` and the ``(number, move)`` entries beside it in columns, each entry whole on one line."""
        cells = [Text.assemble((self.plain(number), "dim"), " ", self.text(move)) for number, move in entries]
        for cell in cells:
            cell.no_wrap = True
        grid = Table.grid(padding=(0, 1))
        grid.add_row(self.text(title, "bold"), _Flow(cells, padding=(0, 3)))
        self.console.print(grid)

    def table(self, headers: Sequence[str], rows: Iterable[Sequence[str]], right: Sequence[bool] = ()) -> None:
        """A table: one column per header (``right[i]``: the column is right-aligned), every cell whole."""
        table = Table(
            box=_ASCII_SIMPLE_HEAD if self.ascii_only else box.SIMPLE_HEAD,
            show_edge=False,
            pad_edge=False,
            header_style="bold",
        )
        for i, header in enumerate(headers):
            # A wide table (a 5-manche match's standings) folds its cells rather than cut them with "…".
            justify = "right" if i < len(right) and right[i] else "left"
            table.add_column(self.text(header), justify=justify, overflow="fold")
        for row in rows:
            table.add_row(*(self.text(cell) for cell in row))
        # Never cut a cell (a game of many manches is wider than 80 columns): print the table at its full width,
        # and a narrower terminal wraps its lines.
        width = Measurement.get(self.console, self.console.options.update_width(10_000), table).maximum
        terminal = self.console.width
        self.console.width = max(width, terminal)
        try:
            self.console.print(table, crop=False)
        finally:
            self.console.width = terminal


class _Flow(Columns):
    """rich's ``Columns``, measured as wide as its entries on one line: a short list is not padded to the
    terminal's width beside its title."""

    def __rich_measure__(self, console: Console, options: ConsoleOptions) -> Measurement:
        widths = [Measurement.get(console, options, entry).maximum for entry in self.renderables]
        _, right, _, left = Padding.unpack(self.padding)
        gap = max(left, right)  # as Columns spaces its entries
        return Measurement(max(widths, default=0), sum(widths) + gap * (len(widths) - 1))


def completions(moves: Sequence[Sequence[str]], typed: str) -> list[tuple[int, str]]:
    """The ``(number, text)`` of the moves that complete ``typed``: for each move (``moves[i]``, its ways of
    being typed, the listed one first) in order, its first way that starts with ``typed``, case and runs of
    spaces aside. Move numbers start at 1, as in the list."""
    prefix = re.sub(r"\s+", " ", typed.lstrip()).lower()
    found = []
    for number, forms in enumerate(moves, start=1):
        match = next((form for form in forms if form.lower().startswith(prefix)), None)
        if match is not None:
            found.append((number, match))
    return found


class MoveCompleter(Completer):
    """Completes the line being typed with the legal moves; :attr:`moves` is set by the game before each prompt."""

    def __init__(self) -> None:
        self.moves: list[tuple[str, ...]] = []
        """For each legal move, in the order of the list, the ways to type it: ``("7 7", "7x2")``, ``("pass",)``."""

    def get_completions(self, document: Document, complete_event: CompleteEvent) -> Iterable[Completion]:
        typed = document.text_before_cursor
        for number, text in completions(self.moves, typed):
            yield Completion(text, start_position=-len(typed), display_meta=f"#{number}")


class Keyboard:
    """The player's lines: a ``PromptSession`` at a terminal, plain lines of ``stdin`` elsewhere.

    Args:
        stdin, stdout: the streams of the conversation; the session is used when both are terminals.
        screen: where plain lines are echoed (in ASCII when the screen is).
        completer: the legal moves, completed with Tab; the toolbar counts them.
        terminal: the session's own input and output instead of the streams' (tests drive a session with
            ``create_pipe_input()`` and ``DummyOutput()``).
    """

    def __init__(
        self,
        stdin: TextIO,
        stdout: TextIO,
        screen: Screen,
        completer: MoveCompleter,
        terminal: tuple[Input, Output] | None = None,
    ) -> None:
        self.stdin, self.stdout, self.screen, self.completer = stdin, stdout, screen, completer
        self.echo = not _is_tty(stdin)  # a terminal echoes what is typed; piped input is echoed by us
        if terminal is None and _is_tty(stdin) and _is_tty(stdout):
            terminal = (create_input(stdin), create_output(stdout))
        self.session: PromptSession[str] | None = None
        if terminal is not None:
            self.session = PromptSession(
                history=InMemoryHistory(),
                completer=completer,
                complete_while_typing=True,
                bottom_toolbar=self.toolbar,
                input=terminal[0],
                output=terminal[1],
            )

    def toolbar(self) -> str:
        count = len(self.completer.moves)
        return self.screen.plain(
            f" {count} legal move{'s' if count != 1 else ''} · Tab completes {'them' if count != 1 else 'it'}"
            " · ↑ recalls what you typed"
        )

    def read(self, prompt: str) -> str:
        """One line; ``EOFError`` at the end of input (Ctrl-D), ``KeyboardInterrupt`` on Ctrl-C."""
        if self.session is not None:
            return self.session.prompt(self.screen.plain(prompt))
        self.stdout.write(self.screen.plain(prompt))
        self.stdout.flush()
        line = self.stdin.readline()
        if not line:
            raise EOFError
        if self.echo:
            self.stdout.write(self.screen.plain(line.rstrip("\n")) + "\n")
            self.stdout.flush()
        return line


def _is_tty(stream: Any) -> bool:
    isatty = getattr(stream, "isatty", None)
    return bool(isatty and isatty())
