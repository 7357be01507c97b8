"""Ranking metrics for one query: a ranked list of ids against a set of relevant ids.

Relevance is binary. A duplicate in the ranked list is removed before scoring (the first
occurrence stays), so it neither earns credit twice nor takes a place in the top ``k``.
An empty relevant set is an error: a task without gold cannot be scored.

Examples
--------
>>> ranked, relevant = ["a", "b", "c", "d"], {"a", "c", "e"}
>>> recall_at_k(ranked, relevant, 3)
0.6666666666666666
>>> precision_at_k(ranked, relevant, 2)
0.5
>>> reciprocal_rank(["b", "c"], relevant)
0.5
>>> round(ndcg_at_k(["a", "b", "c"], {"a", "c"}, 3), 4)
0.9197
>>> all_found(ranked, {"a", "c"}, 3)
True
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence

__all__ = [
    "EmptyRelevantSet",
    "recall_at_k",
    "precision_at_k",
    "reciprocal_rank",
    "ndcg_at_k",
    "all_found",
]


class EmptyRelevantSet(ValueError):
    """A query was scored against no relevant ids; every evaluation task needs gold."""


def _prepare(ranked: Sequence[str], relevant: Iterable[str], k: int | None) -> tuple[list[str], set[str]]:
    """Ranked ids without duplicates, cut at ``k``; the relevant ids as a set."""
    gold = set(relevant)
    if not gold:
        raise EmptyRelevantSet("relevant ids are empty: give every evaluation task at least one relevant id")
    if k is not None and k < 1:
        raise ValueError(f"k must be >= 1, got {k}")
    unique = list(dict.fromkeys(ranked))
    return (unique if k is None else unique[:k]), gold


def recall_at_k(ranked: Sequence[str], relevant: Iterable[str], k: int) -> float:
    """Share of the relevant ids found in the top ``k``.

    Examples
    --------
    >>> recall_at_k(["a", "x", "b"], {"a", "b"}, 2)
    0.5
    """
    top, gold = _prepare(ranked, relevant, k)
    return sum(item in gold for item in top) / len(gold)


def precision_at_k(ranked: Sequence[str], relevant: Iterable[str], k: int) -> float:
    """Relevant ids in the top ``k``, divided by ``k`` (a short list is not excused, as in trec_eval).

    Examples
    --------
    >>> precision_at_k(["a"], {"a"}, 2)
    0.5
    """
    top, gold = _prepare(ranked, relevant, k)
    return sum(item in gold for item in top) / k


def reciprocal_rank(ranked: Sequence[str], relevant: Iterable[str], k: int | None = None) -> float:
    """1 / rank of the first relevant id (ranks from 1), 0 if none is in the top ``k``.

    The mean over queries is MRR. ``k=None`` looks at the whole list.

    Examples
    --------
    >>> reciprocal_rank(["x", "y", "a"], {"a"})
    0.3333333333333333
    >>> reciprocal_rank(["x", "y", "a"], {"a"}, k=2)
    0.0
    """
    top, gold = _prepare(ranked, relevant, k)
    for rank, item in enumerate(top, start=1):
        if item in gold:
            return 1.0 / rank
    return 0.0


def ndcg_at_k(ranked: Sequence[str], relevant: Iterable[str], k: int) -> float:
    """Normalized discounted cumulative gain at ``k`` with binary gains.

    DCG sums ``1 / log2(rank + 1)`` over the relevant ids in the top ``k``; the ideal DCG puts
    ``min(k, |relevant|)`` relevant ids first.

    Examples
    --------
    >>> ndcg_at_k(["a", "c"], {"a", "c"}, 5)
    1.0
    """
    top, gold = _prepare(ranked, relevant, k)
    dcg = sum(1.0 / math.log2(rank + 1) for rank, item in enumerate(top, start=1) if item in gold)
    ideal = sum(1.0 / math.log2(rank + 1) for rank in range(1, min(k, len(gold)) + 1))
    return dcg / ideal


def all_found(ranked: Sequence[str], relevant: Iterable[str], k: int) -> bool:
    """True when every relevant id is in the top ``k`` (what a multi-hop question needs).

    Examples
    --------
    >>> all_found(["a", "b", "c"], {"a", "c"}, 2)
    False
    """
    top, gold = _prepare(ranked, relevant, k)
    return gold.issubset(top)
