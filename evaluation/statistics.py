"""Confidence intervals and ratings for tournaments: :class:`Estimate`, :func:`mean_ci`, :func:`bradley_terry`.

Rotations of a deal group share its cards, so they are not independent: the unit of a confidence interval
is the deal group. Each statistic is averaged within each group, then reported as mean ± t(0.975, n-1)·sd/√n
over the n groups (:func:`mean_ci`). Ratings are Bradley–Terry strengths on the Elo scale fitted (by choix)
to every pairwise finishing comparison between seats of *different* agents (:func:`bradley_terry`); unlike
online Elo they do not depend on the order of the games.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

RATING_MEAN = 1500.0
"""Ratings are anchored so that their mean over the agents of a tournament is this value."""


def t_quantile_975(df: int) -> float:
    """Student's t quantile t(0.975, df), from ``scipy.stats.t`` (scipy comes with the ``eval`` extra)."""
    if df < 1:
        raise ValueError(f"degrees of freedom must be >= 1, got {df}")
    try:
        from scipy.stats import t
    except ImportError as err:
        raise ImportError("confidence intervals need scipy: pip install 'president-env[eval]'") from err
    return float(t.ppf(0.975, df))


UNBOUNDED = (-math.inf, math.inf)


@dataclass(frozen=True)
class Estimate:
    """A mean over ``n`` independent units with the half-width ``ci`` of its 95 % confidence interval.

    ``bounds`` is the range the statistic can take (``(0, 1)`` for a rate): the interval ``low``..``high`` is
    ``mean ± ci`` cut to it, so a rate measured on few groups never reports an interval past 0 or 100 %."""

    mean: float
    ci: float
    n: int
    bounds: tuple[float, float] = UNBOUNDED

    @property
    def low(self) -> float:
        return max(self.mean - self.ci, self.bounds[0])

    @property
    def high(self) -> float:
        return min(self.mean + self.ci, self.bounds[1])

    @property
    def clipped(self) -> bool:
        """Whether ``mean ± ci`` reaches past ``bounds`` (then ``low``..``high`` is not symmetric)."""
        return self.mean - self.ci < self.bounds[0] or self.mean + self.ci > self.bounds[1]


def mean_ci(values: np.ndarray | Sequence[float], bounds: tuple[float, float] = UNBOUNDED) -> Estimate:
    """Mean of ``values (n,)`` (one per independent unit) ± t(0.975, n-1)·sd/√n; ``ci`` is NaN when n < 2.
    ``bounds``: the statistic's range, which the reported interval is cut to (:class:`Estimate`)."""
    values = np.asarray(values, dtype=np.float64)
    n = values.size
    if n == 0:
        return Estimate(math.nan, math.nan, 0, bounds)
    if n == 1:
        return Estimate(float(values[0]), math.nan, 1, bounds)
    half = t_quantile_975(n - 1) * float(values.std(ddof=1)) / math.sqrt(n)
    return Estimate(float(values.mean()), half, n, bounds)


def bradley_terry(wins: np.ndarray) -> np.ndarray:
    """Bradley–Terry ratings on the Elo scale from ``wins (K, K)``: ``wins[a, b]`` = times a finished ahead of b.

    The maximum-likelihood fit of ``P(a ahead of b) = gamma_a / (gamma_a + gamma_b)``, by choix's iterative Luce
    spectral ranking (:func:`choix.ilsr_pairwise_dense`; choix comes with the ``eval`` extra). Every pair that met
    also gets one virtual draw (half a win each way), so that an agent that always wins or always loses keeps a
    finite rating; against thousands of comparisons its weight is negligible. Returns ``(K,) float64`` ratings
    ``400·log10(gamma)`` shifted to mean :data:`RATING_MEAN` (so a 400-point gap means 10:1 odds of finishing
    ahead). Agents that met nobody get the mean; ValueError when the others fall into groups that never met.
    """
    wins = np.asarray(wins, dtype=np.float64)
    if wins.ndim != 2 or wins.shape[0] != wins.shape[1] or not np.isfinite(wins).all() or (wins < 0).any():
        raise ValueError(f"wins must be a square matrix of counts >= 0, got shape {wins.shape}")
    met = (wins + wins.T) > 0
    active = met.any(axis=1)
    ratings = np.zeros(wins.shape[0])
    if active.sum() >= 2:
        try:
            import choix
            from scipy.sparse.csgraph import connected_components
        except ImportError as err:
            raise ImportError("ratings need choix and scipy: pip install 'president-env[eval]'") from err
        among = np.ix_(active, active)
        parts, _ = connected_components(met[among], directed=False)
        if parts > 1:
            raise ValueError(f"the comparisons fall into {parts} groups of agents that never met: no common scale")
        # ``strengths`` = ln(gamma), centred on 0 over the agents that met someone.
        strengths = choix.ilsr_pairwise_dense((wins + 0.5 * met)[among], max_iter=1000, tol=1e-12)
        ratings[active] = 400.0 / math.log(10.0) * strengths
    return ratings - ratings.mean() + RATING_MEAN


__all__ = ["RATING_MEAN", "UNBOUNDED", "Estimate", "bradley_terry", "mean_ci", "t_quantile_975"]
