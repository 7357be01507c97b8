"""Is one retriever better than another on this task set? Paired deltas, resampled by task.

Each delta is ``metric(B) - metric(A)`` on one task. The percentile bootstrap resamples tasks
with replacement and reads the interval of the mean delta off the resampled means; an
interval above zero says B wins beyond the luck of which tasks were drawn.

Examples
--------
>>> mean, low, high = paired_bootstrap_ci([0.2, 0.1, 0.3, 0.0, 0.2], seed=0)
>>> round(mean, 2), low > 0, high <= 0.3
(0.16, True, True)
>>> win_tie_loss([0.2, 0.0, -0.1, 0.0])
(1, 2, 1)
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

__all__ = ["paired_bootstrap_ci", "win_tie_loss"]


def paired_bootstrap_ci(
    deltas: Sequence[float],
    confidence: float = 0.95,
    n_resamples: int = 2000,
    seed: int = 0,
) -> tuple[float, float, float]:
    """Mean of the paired deltas and its percentile bootstrap confidence interval.

    Parameters
    ----------
    deltas : sequence of float
        One difference per task (same metric, same task, two systems).
    confidence : float, default 0.95
        Coverage of the interval, in (0, 1).
    n_resamples : int, default 2000
        Bootstrap resamples of the tasks.
    seed : int, default 0
        Seed of the resampling; the same seed gives the same interval.

    Returns
    -------
    (mean, low, high)
        The observed mean delta and the interval's bounds. One task gives ``(d, d, d)``.

    Raises
    ------
    ValueError
        If there are no deltas, a delta is not finite, or a parameter is out of range.

    Examples
    --------
    >>> paired_bootstrap_ci([0.5])
    (0.5, 0.5, 0.5)
    """
    values = np.asarray(deltas, dtype=float)
    if values.ndim != 1 or values.size == 0:
        raise ValueError("paired_bootstrap_ci needs at least one delta (one per evaluated task)")
    if not np.all(np.isfinite(values)):
        raise ValueError("paired_bootstrap_ci: every delta must be a finite number; found NaN or infinity")
    if not 0 < confidence < 1:
        raise ValueError(f"paired_bootstrap_ci: confidence must be in (0, 1), got {confidence}")
    if n_resamples < 1:
        raise ValueError(f"paired_bootstrap_ci: n_resamples must be >= 1, got {n_resamples}")
    mean = float(values.mean())
    if values.size == 1:
        return mean, mean, mean
    rng = np.random.default_rng(seed)
    resampled_means = values[rng.integers(0, values.size, size=(n_resamples, values.size))].mean(axis=1)
    tail = (1 - confidence) / 2
    low, high = np.quantile(resampled_means, [tail, 1 - tail])
    return mean, float(low), float(high)


def win_tie_loss(deltas: Sequence[float], eps: float = 1e-9) -> tuple[int, int, int]:
    """Count tasks where B beat A (delta > eps), tied (|delta| <= eps) and lost (delta < -eps).

    Examples
    --------
    >>> win_tie_loss([1e-12, -0.5, 0.5, 0.25])
    (2, 1, 1)
    """
    wins = sum(d > eps for d in deltas)
    losses = sum(d < -eps for d in deltas)
    return wins, len(deltas) - wins - losses, losses
