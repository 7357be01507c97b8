"""Which pairs of similar notes become ``SIMILAR_TO`` candidates: best pairs first, each title in
at most ``cap`` of them, decided for the whole corpus (:func:`keep_best`) or again for only the
titles a write touched (:func:`rekeep`).

The whole-corpus rule is a greedy pass: pairs in :func:`pair_order` (most similar first, then by
the two titles, then by the two note ids), each kept when neither of its titles is already in
``cap`` kept pairs. A write that adds or removes a few pairs changes what that pass keeps only
along a chain: a pair kept or dropped changes how many pairs its two titles hold from then on,
which may keep or drop a later pair of one of them, and so on. :func:`rekeep` follows that chain
and reads the pairs of no other title (tested equal to :func:`keep_best` after random writes).
"""

from __future__ import annotations

import heapq
from bisect import bisect_left
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from itertools import accumulate
from typing import Protocol

__all__ = ["CandidateRow", "Pair", "PairBook", "keep_best", "pair_order", "rekeep"]

Pair = tuple[str, str]
"""The ids of a pair's two notes, the smaller first (the candidate's subject note)."""


@dataclass(frozen=True)
class CandidateRow:
    """What a pair's candidate says: its two notes' titles and their similarity."""

    subject: str
    """The title of the pair's first note (the smaller id)."""
    object: str
    """The title of its second note."""
    confidence: float
    """The notes' cosine similarity (float64, at most 1)."""


def pair_order(pair: Pair, row: CandidateRow) -> tuple[float, str, str, str, str]:
    """The greedy pass's order: most similar first, then by subject's and object's title, then ids.

    Examples
    --------
    >>> pair_order(("a", "b"), CandidateRow("A", "B", 0.9)) < pair_order(("a", "c"), CandidateRow("A", "C", 0.8))
    True
    """
    return -row.confidence, row.subject, row.object, pair[0], pair[1]


def keep_best(pairs: Mapping[Pair, CandidateRow], cap: int) -> dict[Pair, CandidateRow]:
    """The pairs kept by the greedy pass over all ``pairs``: each title in at most ``cap`` of them.

    Examples
    --------
    >>> rows = {("a", "b"): CandidateRow("A", "B", 0.9), ("a", "c"): CandidateRow("A", "C", 0.8),
    ...         ("b", "c"): CandidateRow("B", "C", 0.7)}
    >>> sorted(keep_best(rows, 1))
    [('a', 'b')]
    """
    used: dict[str, int] = {}
    kept = {}
    for pair, row in sorted(pairs.items(), key=lambda item: pair_order(*item)):
        if used.get(row.subject, 0) < cap and used.get(row.object, 0) < cap:
            used[row.subject] = used.get(row.subject, 0) + 1
            used[row.object] = used.get(row.object, 0) + 1
            kept[pair] = row
    return kept


class PairBook(Protocol):
    """The pairs :func:`rekeep` reads, a title at a time."""

    def pairs_of(self, title: str) -> Mapping[Pair, CandidateRow]:
        """Every pair now (kept or not) with a note of ``title``."""
        ...

    def kept_before(self, title: str) -> Mapping[Pair, CandidateRow]:
        """The pairs kept before the write whose subject or object was ``title``."""
        ...


def rekeep(book: PairBook, touched: Iterable[str], cap: int) -> tuple[dict[Pair, CandidateRow], dict[Pair, CandidateRow]]:
    """``(kept before, kept now)`` of every title whose kept pairs may differ from before, as
    :func:`keep_best` decides them over every pair now.

    ``touched`` must name, under the titles before the write, both titles of every kept pair
    that is gone, and, under the titles now, a title of every pair that is new. Those titles are
    decided again from their first pair; another title joins them at the first of its pairs
    whose keeping changed, with as many kept pairs as it held before that pair.

    Examples
    --------
    >>> class Book:
    ...     def __init__(self, now, before):
    ...         self.now, self.before = now, before
    ...     def pairs_of(self, title):
    ...         return {p: r for p, r in self.now.items() if title in (r.subject, r.object)}
    ...     def kept_before(self, title):
    ...         return {p: r for p, r in self.before.items() if title in (r.subject, r.object)}
    >>> ab, bc = CandidateRow("A", "B", 0.9), CandidateRow("B", "C", 0.8)
    >>> before, now = rekeep(Book({("b", "c"): bc}, {("a", "b"): ab}), ["A", "B"], 1)  # a-b is gone
    >>> sorted(before), sorted(now)
    ([('a', 'b')], [('b', 'c')])
    """
    used: dict[str, int] = {}  # titles decided again -> pairs kept so far
    before: dict[Pair, CandidateRow] = {}
    now: dict[Pair, CandidateRow] = {}
    heap: list[tuple[tuple[float, str, str, str, str], Pair, CandidateRow]] = []
    queued: set[Pair] = set()
    held: dict[str, tuple[list[tuple], list[int]]] = {}  # title -> its kept pairs' order before, running count

    def held_before(title: str, at: tuple) -> int:
        if title not in held:
            weighted = sorted((pair_order(pair, row), (row.subject == title) + (row.object == title))
                              for pair, row in book.kept_before(title).items())
            held[title] = [order for order, _ in weighted], [0, *accumulate(count for _, count in weighted)]
        orders, counts = held[title]
        return counts[bisect_left(orders, at)]

    def decide_again(title: str, at: tuple | None) -> None:
        used[title] = 0 if at is None else held_before(title, at)
        for pair, row in book.kept_before(title).items():
            before[pair] = row
            if at is not None and pair_order(pair, row) < at:
                now[pair] = row  # kept before the chain reached this title: kept still
        for pair, row in book.pairs_of(title).items():
            order = pair_order(pair, row)
            if pair not in queued and (at is None or order > at):
                queued.add(pair)
                heapq.heappush(heap, (order, pair, row))

    for title in sorted(set(touched)):
        decide_again(title, None)
    while heap:
        at, pair, row = heapq.heappop(heap)
        titles = (row.subject, row.object)
        counts = {title: used[title] if title in used else held_before(title, at) for title in titles}
        keep = all(counts[title] < cap for title in titles)
        if keep != (before.get(pair) == row):
            for title in titles:
                if title not in used:
                    decide_again(title, at)
        if keep:
            now[pair] = row
            for title in titles:
                if title in used:
                    used[title] += 1
    return before, now
