"""One harness for "two implementations agree": play both with the same actions and demand the same facts.

Each implementation is wrapped in a *side*: ``facts()`` gives what must agree before a step (a mapping of
names to values or arrays), and ``step(action)`` plays the action and gives what must agree about the step.
:func:`lockstep` alternates the two and stops when ``until`` says so; the first difference fails with the
step, the fact's name and both values. Its users: ``tests/test_differential.py`` (the engine against the
reference oracle, the two implementations of the rules), ``tests/test_single_game.py`` (``SingleGame`` against
``VecGame(batch_size=1)``) and ``tests/test_aec_env.py`` (the AEC env against ``VecGame(batch_size=1)``).
"""

from __future__ import annotations

import reprlib
from collections.abc import Callable, Mapping
from typing import Any, Protocol

import numpy as np

_SHORT = reprlib.Repr()
_SHORT.maxlist = _SHORT.maxtuple = _SHORT.maxother = 200


class Side(Protocol):
    def facts(self) -> Mapping[str, Any]: ...

    def step(self, action: Any) -> Mapping[str, Any]: ...


def assert_same(first: Mapping[str, Any], second: Mapping[str, Any], context: str) -> None:
    """Equal facts: the same names, and for each the same value (arrays: same shape, dtype and entries)."""
    assert list(first) == list(second), f"{context}: facts {list(first)} vs {list(second)}"
    for name, a in first.items():
        b = second[name]
        if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
            a, b = np.asarray(a), np.asarray(b)
            same = a.shape == b.shape and a.dtype == b.dtype and np.array_equal(a, b)
        else:
            same = a == b
        assert same, f"{context}: {name} differs: {_SHORT.repr(a)} vs {_SHORT.repr(b)}"


def lockstep(
    first: Side,
    second: Side,
    choose: Callable[[Mapping[str, Any], int], Any],
    until: Callable[[Mapping[str, Any], int], bool],
    context: str = "",
) -> int:
    """Play both sides step by step: equal ``facts()``, the action ``choose(facts, t)``, equal ``step`` results,
    until ``until(step_result, t)`` (after step ``t``); the facts are compared once more at the end. Returns the
    number of steps played."""
    t = 0
    while True:
        facts = first.facts()
        assert_same(facts, second.facts(), f"{context} step {t}")
        action = choose(facts, t)
        result = first.step(action)
        assert_same(result, second.step(action), f"{context} step {t}, action {_SHORT.repr(action)}")
        t += 1
        if until(result, t):
            assert_same(first.facts(), second.facts(), f"{context} at the end (step {t})")
            return t
