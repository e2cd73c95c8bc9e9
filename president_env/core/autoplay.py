"""The other seats' play as one compiled loop: a policy's decisions until each game is at its learner's turn.

A batched env that holds one learner seat per game lets its opponents act until every game is back at its learner's
turn (the vector env, ``president_env.envs.gym_vector_env``). Where the opponents' policy can be compiled, that loop
is one kernel call, in parallel over chunks of games like the rule kernels (:func:`~president_env.core.compiled.run`):
in a chunk, the games still playing take turns, ``trick``'s mask kernel for all of them, the policy's decision for
each, their plays by ``trick``'s play kernel, until each game's learner is to act, the game is over or its manche
ends. A manche's end goes back to the caller, which has the engine score it and deal the next
(:func:`~president_env.core.engine.end_manches`: the deal is the one random draw of the game's generator, so the
vector env deals in the order its Python loop did: by the opponents' decision at which the manches ended, then by
game).

**The protocol.** An agent offers its compiled form by a method ``compiled_policy(rules)`` that returns a
:class:`CompiledPolicy` (or ``None`` where it cannot, e.g. for other rules than its own):

- ``decide(params, state, slot, legal, n_legal, word, scratch) -> action``: a Numba function (e.g. a
  :func:`~president_env.core.compiled.slot_function`, inlined into the loop) that chooses for the seat to act in
  slot ``slot`` of the ``GameState`` ``state``, among the ``n_legal`` legal actions ``legal[:n_legal]``
  (ascending); ``word`` is a ``uint64`` of random bits for this decision, ``scratch`` an ``int64`` array of
  ``scratch`` entries it may use (one per chunk of games). It must choose what the agent's ``act_batch`` chooses on
  that seat's observation, or, for a random policy, draw from the same distribution.
- ``params``: what ``decide`` reads: a tuple or named tuple of numbers and arrays (one level: Numba's threaded
  loop does not take a tuple nested in it).
- ``key``: ``None`` for a deterministic policy, else a function the loop calls once per call for a fresh 63-bit
  key (from the agent's generator, so reseeding the agent reseeds it): the ``word`` of a decision is a
  counter-based hash of (key, game, the game's decisions so far in the call), so each game draws its own
  stream and the results are the same whatever the number of threads. An illegal choice stops that game (status
  :data:`ILLEGAL`, nothing of it played).

Several agents may offer one policy (the same ``decide`` and ``params``; each draws its own key, and :func:`play`
takes one key per opponent position). The registry's :class:`~president_env.core.registry.RandomAgent`
(:func:`uniform_decision`) and the heuristics (``agents/heuristic.py``) offer it. The loop is compiled once per
``decide`` function (:func:`kernel`: the loop's code with ``decide`` bound in, cached on disk under a name that
carries a digest of the source files it inlines).
"""

from __future__ import annotations

import hashlib
import inspect
import types
from collections.abc import Callable
from functools import cache
from pathlib import Path
from typing import Any, NamedTuple

import numba
import numpy as np

from president_env.core import trick
from president_env.core.compiled import Kernel, jit, run, slot_function
from president_env.core.rules import Rules
from president_env.core.state import PHASE_OVER, GameState

CHUNK = 32
"""Games per chunk of the loop: each chunk allocates its masks, legal list and scratch once, and its games share the
calls of the mask and play kernels."""
AT_TURN, MANCHE_OVER, ILLEGAL = 0, 1, 2
"""A game's status after :func:`play`: at its learner's turn (or over), its manche just ended (the engine scores
it), or the policy chose an illegal action (nothing of that decision was played)."""


class CompiledPolicy(NamedTuple):
    """A policy the compiled loop calls (see the module docstring for the protocol)."""

    decide: Any  # a slot_function: decide(params, state, slot, legal, n_legal, word, scratch) -> action
    params: Any  # what decide reads
    scratch: int = 0  # int64 scratch entries decide may use
    key: Callable[[], int] | None = None  # a fresh 63-bit key per loop call (a random policy), None if deterministic


def compiled_policy(agent: Any, rules: Rules) -> CompiledPolicy | None:
    """``agent``'s :class:`CompiledPolicy` under ``rules``, or ``None`` where it offers none."""
    offer = getattr(agent, "compiled_policy", None)
    policy = offer(rules) if callable(offer) else None
    return policy if isinstance(policy, CompiledPolicy) else None


def play(
    rules: Rules,
    state: GameState,
    games: np.ndarray,
    learner: np.ndarray,
    policy: CompiledPolicy,
    keys: np.ndarray,
    decisions: np.ndarray,
) -> np.ndarray:
    """Play ``policy`` for every seat but the learner's in the distinct slots ``games (n,) int64`` of ``state``
    until each is at its learner's turn (``learner (B,)``, the learner's player by slot), over, or its manche ends;
    returns each game's status (:data:`AT_TURN`, :data:`MANCHE_OVER`, :data:`ILLEGAL`). ``keys (P-1,) uint64``: the
    random key of each opponent, in player order without the learner (several opponent objects may share one
    ``decide`` and its ``params``, each with its own generator). ``decisions (B,) int64`` counts each slot's
    decisions (it numbers their random words), carried on by the caller."""
    status = np.zeros(games.size, np.int8)
    chunks, a = (games.size + CHUNK - 1) // CHUNK, rules.num_actions
    run(
        kernel(policy.decide), games.size, trick.kernel_rules(rules), state, games, learner,
        np.ascontiguousarray(keys, dtype=np.uint64),
        policy.params, decisions, status, np.zeros((chunks, CHUNK, a), np.bool_), np.zeros((chunks, a), np.int64),
        np.zeros((chunks, max(policy.scratch, 1)), np.int64), np.zeros((chunks, 3, CHUNK), np.int64),
        np.zeros((chunks, CHUNK), np.bool_),
    )  # fmt: skip
    return status


def _autoplay_kernel(t, state, games, learner, keys, params, decisions, status, masks, legals, scratches, lists, ends):
    """:func:`play`, chunk by chunk of :data:`CHUNK` games (``decide`` is bound by :func:`kernel`). In a chunk, the
    games still playing take turns: the rules' mask kernel (``mask_kernel``) for all of them, a decision each, their
    plays by the play kernel (``play_kernel``), so each kernel call serves several games. Each chunk works in its own
    rows of the caller's arrays (``masks``, ``legals``, ``scratches``, ``lists``, ``ends``): the loop allocates
    nothing, so it compiles without reference counting (``compiled.jit(..., counted=False)``), and neither does the
    decision inlined into it."""
    n_actions = t.kind.size
    for c in numba.prange((games.size + CHUNK - 1) // CHUNK):  # each game alone: the same on any number of threads
        mask, legal, scratch, ended = masks[c], legals[c], scratches[c], ends[c]
        slots, rows, actions = lists[c, 0], lists[c, 1], lists[c, 2]  # the chunk's games still playing, their rows
        n = 0
        for i in range(c * CHUNK, min(games.size, (c + 1) * CHUNK)):
            slots[n], rows[n] = games[i], i
            n += 1
        while True:
            playing = 0  # the games whose opponent is to act, moved to the front
            for j in range(n):
                s = slots[j]
                if state.phase[s] != PHASE_OVER and state.player_at_seat[s, state.current[s]] != learner[s]:
                    slots[playing], rows[playing] = s, rows[j]
                    playing += 1
            n = playing
            if n == 0:
                break
            mask[:n] = False
            mask_kernel(t, state, slots[:n], mask)  # noqa: F821
            chosen = 0  # the games whose decision is legal, moved to the front
            for j in range(n):
                s = slots[j]
                n_legal = 0
                for a in range(n_actions):
                    if mask[j, a]:
                        legal[n_legal] = a
                        n_legal += 1
                acting = state.player_at_seat[s, state.current[s]]
                word = random_word(keys[acting - 1 if acting > learner[s] else acting], s, decisions[s])
                action = decide(params, state, s, legal, n_legal, word, scratch)  # noqa: F821
                if action < 0 or action >= n_actions or not mask[j, action]:
                    status[rows[j]] = ILLEGAL
                    continue
                decisions[s] += 1
                slots[chosen], rows[chosen], actions[chosen] = s, rows[j], action
                chosen += 1
            n = chosen
            ended[:n] = False
            play_kernel(t, state, slots[:n], actions[:n], ended)  # noqa: F821
            going_on = 0
            for j in range(n):
                if ended[j]:
                    status[rows[j]] = MANCHE_OVER
                else:
                    slots[going_on], rows[going_on] = slots[j], rows[j]
                    going_on += 1
            n = going_on


_GOLDEN = np.uint64(0x9E3779B97F4A7C15)


@slot_function
def _mix(z):
    """SplitMix64's finalizer: 64 well-mixed bits of ``z`` (``uint64``)."""
    z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return z ^ (z >> np.uint64(31))


@slot_function
def random_word(key, game, counter):
    """``uint64`` random bits for decision ``counter`` of game ``game`` under ``key``: a counter-based hash, so
    each game's stream depends on nothing but these three."""
    z = _mix(key + np.uint64(game + 1) * _GOLDEN)
    return _mix(z + np.uint64(counter + 1) * _GOLDEN)


@slot_function
def uniform_decision(params, state, s, legal, n_legal, word, scratch):
    """A uniformly random legal action (the registry's ``RandomAgent``): the top 53 bits of ``word`` scaled to
    ``n_legal``."""
    return legal[((word >> np.uint64(11)) * np.uint64(n_legal)) >> np.uint64(53)]


@cache
def kernel(decide: Any) -> Kernel:
    """The loop of :func:`play` with ``decide`` bound in, compiled (:func:`~president_env.core.compiled.jit`). Its
    disk cache is named after ``decide`` and a digest of the source files the machine code inlines (this module,
    ``trick`` and ``decide``'s own), since Numba checks only the loop's own file for changes."""
    sources = [Path(__file__), Path(trick.__file__)]
    try:
        sources.append(Path(inspect.getfile(decide.py_func)))
    except (TypeError, OSError):  # defined where no file holds it: no cache can be kept
        pass
    digest = hashlib.sha256()
    for source in sources:
        digest.update(source.read_bytes() if source.is_file() else str(source).encode())
    name = f"_autoplay_{decide.__name__}_{digest.hexdigest()[:12]}"
    mask_kernel, play_kernel = trick.kernels()
    bound = {"decide": decide, "mask_kernel": mask_kernel.serial, "play_kernel": play_kernel.serial}
    loop = types.FunctionType(_autoplay_kernel.__code__, {**_autoplay_kernel.__globals__, **bound}, name)
    loop.__qualname__ = name
    return jit(loop, counted=False)


__all__ = ["AT_TURN", "ILLEGAL", "MANCHE_OVER", "CompiledPolicy", "compiled_policy", "play", "uniform_decision"]
