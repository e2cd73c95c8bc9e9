"""A learned policy with Monte-Carlo search on top: the policy proposes, determinized rollouts of it decide.

For each decision (a row of ``act_batch``) the agent

1. asks the policy for its probabilities; a decision with one legal action, or whose most
   probable action reaches ``confident``, is played as the policy says (no search);
2. otherwise it keeps the policy's ``candidates`` most probable legal actions and scores each as
   :mod:`.monte_carlo` does: ``worlds`` sampled deals of the hidden cards consistent with the
   observation (:mod:`.determinize`; fewer at a deck above ``worlds_at_cards``), the same worlds for every
   candidate, each played to the end of the manche — but the searching seat's later moves in the rollouts
   are the *policy's* (greedy), and the other seats play heuristic-3 (``others``; or the policy too);
3. plays the candidate with the best mean points; the policy's own choice gets ``tie_bonus``.

This is one step of policy improvement over the policy, in the sampled worlds: when the rollouts
model the table well, the agent plays at least as well as its policy. Heuristic-3 at the other seats
serves at least as well as the policy there: against three mc-5 over 200 deal groups, +0.18 ± 0.07
where ``others=None`` gets +0.15 ± 0.08 (the policy alone: +0.12 ± 0.08). The policy must be an agent
with a ``policy_logits(observations)`` method (:class:`~.torch_policy.TorchPolicyAgent`).
``agents.make("ppo-universal-search", rules)`` makes it over the shipped universal policy with
:data:`SHIPPED_SEARCH` (``agents.SEARCH_AGENTS``); any other learned policy is wrapped with
``PolicySearchAgent(rules, policy)``. Like every agent, it reads only the observation and the mask.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from president_env.core import engine
from president_env.core.observation import observe
from president_env.core.rules import Rules

from .base import check_batch, legal_probabilities
from .heuristic import choose_in_state
from .monte_carlo import MonteCarloAgent, SearchConfig


@dataclass(frozen=True)
class PolicySearchConfig:
    """How hard the agent searches (defaults: those measured in docs/agents.md)."""

    worlds: int = 128  # sampled deals of the hidden cards per decision, each candidate played in all of them
    candidates: int = 4  # the policy's most probable legal actions that are searched
    confident: float = 0.99  # no search when the policy's top action has at least this probability
    tie_bonus: float = 0.02  # points credited to the policy's own choice (breaks ties, damps noise)
    others: int | None = 3  # heuristic level of the other seats in the rollouts; None: the policy plays them too
    worlds_at_cards: int | None = None  # worlds are for a deck of this many cards, fewer at a larger deck (None: all)

    def __post_init__(self) -> None:
        for name in ("worlds", "candidates"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
                raise ValueError(f"{name} must be a positive integer, got {value!r}")
        if self.others is not None and self.others not in (1, 2, 3):
            raise ValueError(f"others must be a heuristic level (1, 2 or 3) or None, got {self.others!r}")
        if not 0.0 < self.confident <= 1.0:
            raise ValueError(f"confident must be a probability in (0, 1], got {self.confident!r}")
        cards = self.worlds_at_cards
        if cards is not None and (isinstance(cards, bool) or not isinstance(cards, (int, np.integer)) or cards < 1):
            raise ValueError(f"worlds_at_cards must be a positive integer or None, got {cards!r}")

    def worlds_for(self, rules: Rules) -> int:
        """The worlds searched at ``rules``: ``worlds``, or in proportion fewer where the deck holds more cards than
        ``worlds_at_cards`` (a rollout's moves, and so its time, grow with the cards in play), at least 16."""
        if self.worlds_at_cards is None or rules.n_cards <= self.worlds_at_cards:
            return self.worlds
        return max(min(16, self.worlds), round(self.worlds * self.worlds_at_cards / rules.n_cards))


SHIPPED_SEARCH = PolicySearchConfig(others=None, worlds_at_cards=52)
"""The search of ``ppo-universal-search`` (``agents.SEARCH_AGENTS``): the policy plays every seat of the rollouts
(a model of strong play at any table, where heuristic-3 is one of weaker play); its play time and strength are in
docs/agents.md."""


def searched_choice(values: np.ndarray, probs: np.ndarray, tie_bonus: float) -> np.ndarray:
    """``(S,)`` the action a search plays: the best of ``values`` (``(S, A)``, ``-inf`` off the candidates), the
    policy's favourite (the argmax of ``probs``) credited ``tie_bonus``."""
    values = np.array(values, dtype=np.float64)
    values[np.arange(len(values)), probs.argmax(axis=1)] += tie_bonus
    return np.argmax(values, axis=1)


class PolicySearchAgent(MonteCarloAgent):
    """Monte-Carlo search over a learned policy's best proposals, with the policy playing the rollouts.

    Args:
        rules: the rules of the game (the policy's).
        policy: an agent with ``policy_logits(observations) -> (B, A)`` logits, for these rules.
        seed: seed of the generator that samples the worlds.
        config: how hard it searches (:class:`PolicySearchConfig`).
        name: the name tournaments report it under (default ``search-<policy's name>``).
    """

    def __init__(
        self,
        rules: Rules,
        policy: Any,
        seed: Any = None,
        config: PolicySearchConfig | None = None,
        name: str | None = None,
    ) -> None:
        if not callable(getattr(policy, "policy_logits", None)):
            raise TypeError(f"policy must have a policy_logits(observations) method, got {type(policy).__name__}")
        self.search = config or PolicySearchConfig()
        self.worlds = self.search.worlds_for(rules)
        """The worlds each searched decision samples at these rules (:meth:`PolicySearchConfig.worlds_for`)."""
        super().__init__(rules, seed=seed, config=SearchConfig(worlds=self.worlds, rollout_level=3))
        self.policy = policy
        self.name = name or f"search-{getattr(policy, 'name', 'policy')}"

    def for_rules(self, rules: Rules, seed: Any = None) -> PolicySearchAgent:
        """The same search at ``rules`` with a generator of its own, over this agent's policy for them
        (``policy.for_rules``: its weights shared, not copied)."""
        policy = self.policy.for_rules(rules, seed)
        return PolicySearchAgent(rules, policy, seed=seed, config=self.search, name=self.name)

    def probabilities(self, observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
        """``(B, A) float64``: the policy's probabilities over the legal actions (0 elsewhere)."""
        return legal_probabilities(self.policy.policy_logits(observations), masks)

    def explain(self, observation: dict[str, np.ndarray], info: dict | None = None) -> dict[str, Any]:
        """The decision and the mean points of each searched candidate; a decision not searched (one legal action,
        or the policy sure of its move) shows the policy's probability of every legal action."""
        decision = super().explain(observation, info)
        if decision["values"]:
            return decision
        mask = np.asarray(observation["action_mask"]).astype(bool)
        probs = self.probabilities(np.asarray(observation["observation"], np.float32)[None], mask[None])[0]
        values = {int(a): float(probs[a]) for a in np.flatnonzero(mask)}
        return {"action": decision["action"], "measure": "probability", "values": values}

    def act_batch(self, observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
        """The searched choice per row: the policy's best moves scored by rollouts over sampled hidden hands."""
        observations, masks = check_batch(self.rules, observations, masks)
        probs = self.probabilities(observations, masks)
        actions = probs.argmax(axis=1)
        searched, candidates = self.candidates(probs, masks)
        if searched.size == 0:
            return actions
        values = self.action_values(observations[searched], candidates, self.worlds)
        actions[searched] = searched_choice(values, probs[searched], self.search.tie_bonus)
        return actions

    def candidates(self, probs: np.ndarray, masks: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The rows searched (more than one legal action, the policy's favourite below ``confident``) and, for
        each, the ``(S, A)`` mask of the policy's ``candidates`` most probable legal actions."""
        searched = np.flatnonzero((masks.sum(axis=1) > 1) & (probs.max(axis=1) < self.search.confident))
        best_first = np.argsort(-probs[searched], axis=1, kind="stable")[:, : self.search.candidates]
        candidates = np.zeros((searched.size, masks.shape[1]), bool)
        candidates[np.arange(searched.size)[:, None], best_first] = True
        return searched, candidates & masks[searched]

    def rollout_actions(self, state: engine.GameState, mask: np.ndarray) -> np.ndarray:
        """The searching seat (seat 0 of the worlds) plays the policy's most probable legal action; the other
        seats play heuristic ``others`` (or the policy too)."""
        rules = self._rollout_rules
        if self.search.others is None:
            return self._greedy(observe(rules, state), mask)
        actions = choose_in_state(rules, state, mask, self.search.others)
        own = np.flatnonzero(state.current == 0)
        if own.size:  # observe only the searching seat's rows: about a quarter of them at 4 players
            actions[own] = self._greedy(observe(rules, state.take(own)), mask[own])
        return actions

    def _greedy(self, observations: np.ndarray, masks: np.ndarray) -> np.ndarray:
        """``(B,)`` the policy's most probable legal action."""
        return np.where(masks, self.policy.policy_logits(observations), -np.inf).argmax(axis=1)
