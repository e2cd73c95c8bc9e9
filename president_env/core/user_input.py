"""What a user supplies (YAML files and values, text files, output folders): bounded cost, short errors.

A 500-byte YAML "billion laughs" (aliases of aliases) expands to billions of values, and a
``repr`` of such a value, or of a 200,000-entry list, would make an error message of gigabytes.
Every YAML the package reads goes through :func:`load_yaml`, which refuses a document above
:data:`MAX_YAML_CHARS` characters, :data:`MAX_YAML_VALUES` values once its aliases are expanded,
:data:`MAX_YAML_DEPTH` levels of nesting, or a recursive alias, all found on the parser's event stream
before any value is built, refuses a mapping that holds a key twice (PyYAML's ``safe_load`` keeps the last value
silently: ``manches: 5`` then ``manches: 7`` would play 7), and every error message shows a value through
:func:`short_repr`.
Every command line parses its arguments with :class:`ArgumentParser`: a usage error is one line and exit code 2,
and runs under :func:`one_line_warnings`: a warning is one line too, and a retired name the user typed is told.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import reprlib
import sys
import tempfile
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any, NoReturn

import yaml

MAX_YAML_CHARS = 16_384
"""Longest YAML text read (the shipped rules files and training configs have under 2,000 characters)."""
MAX_YAML_VALUES = 10_000
"""Most scalars, lists and mappings a YAML document may hold with its aliases expanded."""
MAX_YAML_DEPTH = 64
"""Deepest nesting of lists and mappings in a YAML document."""


class _ShortRepr(reprlib.Repr):
    """``reprlib`` limits, and no conversion of huge integers (Python refuses those past 4,300 digits)."""

    def __init__(self) -> None:
        super().__init__()
        self.maxlevel = 3
        self.maxlist = self.maxtuple = self.maxset = self.maxdict = 6
        self.maxstring = self.maxother = 40

    def repr_int(self, x: int, level: int) -> str:
        if x.bit_length() > 128:
            return f"<an integer of about {int(x.bit_length() * 0.30103) + 1} digits>"
        return repr(x)


_SHORT = _ShortRepr()


def short_repr(value: Any, limit: int = 80) -> str:
    """``repr(value)`` cut to at most ``limit`` characters, in time bounded whatever the value's size."""
    try:
        text = _SHORT.repr(value)
    except Exception:  # a value whose own __repr__ fails still gets a message
        text = f"<{type(value).__name__}>"
    return text if len(text) <= limit else text[: limit - 3] + "..."


def is_file(path: str) -> bool:
    """Whether ``path`` names an existing file; False, not an error, for a name too long or holding a NUL byte."""
    try:
        return os.path.isfile(path)
    except ValueError:
        return False


def read_text(path: str | Path, what: str, max_chars: int = MAX_YAML_CHARS) -> str:
    """The UTF-8 text of the file ``path``; ``ValueError`` naming ``what`` and the file if it is missing,
    unreadable, larger than ``max_chars`` bytes or not UTF-8."""
    path = Path(path)
    name = short_repr(str(path), 200)
    try:
        if not path.is_file():
            raise ValueError(f"{what} {name} does not exist or is not a file")
        with path.open("rb") as stream:  # read at most one byte past the bound, whatever the file claims
            data = stream.read(max_chars + 1)
        if len(data) > max_chars:
            raise ValueError(f"{what} {name} has more than {max_chars} bytes; at most {max_chars} are read")
    except OSError as err:
        raise ValueError(f"{what} {name} cannot be read: {err.strerror or err}") from None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as err:
        raise ValueError(f"{what} {name} is not UTF-8 text (byte {err.start}); is it a binary file?") from None


class _UniqueKeyLoader(yaml.SafeLoader):
    """``yaml.SafeLoader`` that refuses a mapping holding a key twice (merge keys ``<<`` may still be overridden)."""

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict:
        seen: set = set()
        for key_node, _ in node.value:
            if key_node.tag == "tag:yaml.org,2002:merge":
                continue
            key = self.construct_object(key_node, deep=True)
            try:
                duplicate = key in seen
            except TypeError:  # an unhashable key: the constructor below refuses it
                continue
            if duplicate:
                raise yaml.constructor.ConstructorError(
                    None, None, f"the key {short_repr(key, 40)} appears twice", key_node.start_mark
                )
            seen.add(key)
        return super().construct_mapping(node, deep)


def load_yaml(text: str, what: str) -> Any:
    """The value of the YAML document ``text`` (``safe_load`` semantics: plain data only, ``None`` if empty).

    ``ValueError`` starting with ``what`` for invalid YAML, several documents, a key given twice in a mapping, or a
    document beyond the bounds above; it never shows more than a short excerpt of the input.
    """
    if len(text) > MAX_YAML_CHARS:
        raise ValueError(f"{what} has {len(text)} characters; at most {MAX_YAML_CHARS} are read")
    try:
        _check_events(text, what)
    except yaml.YAMLError as err:
        raise ValueError(f"{what} is not valid YAML: {_first_lines(str(err))}") from None
    loader = _UniqueKeyLoader(text)
    try:
        return loader.get_single_data()
    except yaml.YAMLError as err:
        raise ValueError(f"{what} is not valid YAML: {_first_lines(str(err))}") from None
    except (ValueError, TypeError, OverflowError) as err:  # e.g. a 5,000-digit integer, a 30 February
        reason = "an integer of more than 4300 digits" if "integer string conversion" in str(err) else str(err)
        raise ValueError(f"{what} holds a value that cannot be read: {_first_lines(reason)}") from None
    finally:
        loader.dispose()


def _check_events(text: str, what: str) -> None:
    """Walk the YAML event stream (PyYAML's parser is iterative) and refuse, before anything is built, a
    document nested deeper than :data:`MAX_YAML_DEPTH` or holding more than :data:`MAX_YAML_VALUES` values
    once its aliases are expanded, or an alias of a node that is not complete (a recursive value)."""
    open_nodes: list[list[Any]] = []  # per open list or mapping: [values so far, its anchor]
    sizes: dict[str, int] = {}  # anchor -> expanded values of its complete node
    for event in yaml.parse(text, Loader=yaml.SafeLoader):
        if isinstance(event, (yaml.SequenceStartEvent, yaml.MappingStartEvent)):
            open_nodes.append([1, event.anchor])
            if len(open_nodes) > MAX_YAML_DEPTH:
                raise ValueError(f"{what} is nested too deeply (at most {MAX_YAML_DEPTH} levels)")
            continue
        if isinstance(event, (yaml.SequenceEndEvent, yaml.MappingEndEvent)):
            size, anchor = open_nodes.pop()
        elif isinstance(event, yaml.ScalarEvent):
            size, anchor = 1, event.anchor
        elif isinstance(event, yaml.AliasEvent):
            if event.anchor not in sizes:
                raise ValueError(f"{what} holds an alias of no complete value (undefined or recursive)")
            size, anchor = sizes[event.anchor], None
        else:
            continue
        if anchor is not None:
            sizes[anchor] = size
        if open_nodes:
            open_nodes[-1][0] += size
        if size > MAX_YAML_VALUES or (open_nodes and open_nodes[0][0] > MAX_YAML_VALUES):
            raise ValueError(f"{what} holds more than {MAX_YAML_VALUES} values once its aliases (*name) are expanded")


def _first_lines(text: str, limit: int = 300) -> str:
    """An error text of PyYAML (which quotes the input) cut to ``limit`` characters."""
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


class ArgumentParser(argparse.ArgumentParser):
    """The command-line parser of every CLI of the project: a usage error is one line, ``PROG: error: MESSAGE`` on
    stderr, and exit code 2 (argparse's own prints its usage block first). ``--help`` still shows the usage."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {' '.join(str(message).split())}\n")


class RetiredAgentWarning(DeprecationWarning):
    """A retired agent name was used; the agent that replaces it plays in its place (``agents.RETIRED_AGENTS``)."""


@contextlib.contextmanager
def one_line_warnings(prog: str) -> Iterator[None]:
    """Within a command line's run: every warning is one line on stderr, ``PROG: warning: MESSAGE`` (no source
    line), each message once, and :class:`RetiredAgentWarning` shows, which Python hides outside ``__main__`` as a
    ``DeprecationWarning``. The warning settings are restored on exit."""
    shown: set[str] = set()

    def show(message: Any, category: Any, filename: str, lineno: int, file: Any = None, line: Any = None) -> None:
        text = " ".join(str(message).split())
        if text not in shown:
            shown.add(text)
            print(f"{prog}: warning: {text}", file=sys.stderr if file is None else file)

    with warnings.catch_warnings():
        warnings.simplefilter("always", RetiredAgentWarning)
        warnings.showwarning = show
        yield


def check_writable_dir(path: str | Path, what: str) -> Path:
    """Create the folder ``path`` if needed and prove a file can be written in it, before any long work.

    ``ValueError`` naming ``what`` and the folder when it cannot be created or written (a file is in the way,
    a read-only file system, no permission).
    """
    folder = Path(path)
    try:
        folder.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryFile(dir=folder):
            pass
    except (OSError, ValueError) as err:  # ValueError: a NUL byte in the path
        reason = getattr(err, "strerror", None) or str(err)
        raise ValueError(f"{what} {short_repr(str(folder), 200)} cannot be written: {reason}") from None
    return folder


__all__ = [
    "ArgumentParser",
    "MAX_YAML_CHARS",
    "MAX_YAML_DEPTH",
    "MAX_YAML_VALUES",
    "RetiredAgentWarning",
    "check_writable_dir",
    "is_file",
    "load_yaml",
    "one_line_warnings",
    "read_text",
    "short_repr",
]
