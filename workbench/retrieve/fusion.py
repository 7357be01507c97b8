"""Reciprocal Rank Fusion: one ranking from several, by rank alone (scores need not agree).

Cormack, Clarke and Buettcher (2009): an id's fused score is the sum, over the rankings that
hold it, of ``weight / (rrf_k + rank)``, rank counted from 1. A large ``rrf_k`` flattens the
advantage of the very first ranks.

Examples
--------
>>> [(i, round(s, 4)) for i, s in rrf([["a", "b", "c"], ["c", "a"]], rrf_k=1)]
[('a', 0.8333), ('c', 0.75), ('b', 0.3333)]
"""

from __future__ import annotations

from collections.abc import Sequence

from ..settings import setting_default

__all__ = ["rrf"]


def rrf(
    rankings: Sequence[Sequence[str]],
    rrf_k: int = setting_default("retrieval.rrf_k"),
    weights: Sequence[float] | None = None,
) -> list[tuple[str, float]]:
    """Fuse rankings of ids by Reciprocal Rank Fusion.

    Parameters
    ----------
    rankings : sequence of sequences of str
        Each a ranked list of ids, best first. An id repeated within one ranking counts once,
        at its best rank.
    rrf_k : int, default ``settings.retrieval.rrf_k``
        Rank constant, >= 0.
    weights : sequence of float, optional
        One non-negative weight per ranking; all 1 when omitted.

    Returns
    -------
    list of (id, score)
        Every id of every ranking exactly once, by fused score descending; equal scores keep
        the order in which the ids first appear (ranking by ranking).

    Raises
    ------
    ValueError
        If ``rrf_k`` is negative, or ``weights`` has the wrong length or a negative weight.

    Examples
    --------
    ``b`` is second in both rankings, ``a`` first and third: with ``rrf_k=0``, 1/1 + 1/3 beats
    1/2 + 1/2.

    >>> rrf([["a", "b", "c"], ["d", "b", "a"]], rrf_k=0)
    [('a', 1.3333333333333333), ('b', 1.0), ('d', 1.0), ('c', 0.3333333333333333)]
    """
    if rrf_k < 0:
        raise ValueError(f"rrf: rrf_k must be >= 0, got {rrf_k}")
    if weights is None:
        weights = [1.0] * len(rankings)
    elif len(weights) != len(rankings):
        raise ValueError(f"rrf: got {len(weights)} weights for {len(rankings)} rankings; pass one weight per ranking")
    elif any(w < 0 for w in weights):
        raise ValueError(f"rrf: weights must be >= 0, got {list(weights)}")

    scores: dict[str, float] = {}  # insertion order is first appearance, the tie-break
    for ranking, weight in zip(rankings, weights):
        seen: set[str] = set()
        for rank, item in enumerate(ranking, start=1):
            if item in seen:
                continue
            seen.add(item)
            scores[item] = scores.get(item, 0.0) + weight / (rrf_k + rank)
    # sorted() is stable, so equal scores stay in first-appearance order.
    return sorted(scores.items(), key=lambda pair: -pair[1])
