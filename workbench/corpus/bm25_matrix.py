"""The BM25 score matrix bm25s makes, made in array operations and kept up to date as passages come and go.

bm25s makes its matrix (one column of passages and scores per term) in a Python pass over every
passage. :func:`bm25_scores` makes the same matrix, the same to the bit, in a few array operations.
A write changes a few passages but every score: the number of passages and their average length
are in each one. :class:`Occurrences` keeps what the scores are made of (each term's passages in
the matrix's order with how often the term occurs there, and each passage's length), so that
:meth:`Occurrences.updated` makes the next one by merging the changed passages' pairs into the kept
ones (no sort of every pair, no passage tokenized again) and :meth:`Occurrences.scores` scores every
pair in a few passes over arrays.

Examples
--------
>>> rows = [[0, 1, 1], [1, 2], [3]]
>>> kept = Occurrences.of(np.array([t for r in rows for t in r]), np.array([0, 3, 5, 6]), 4)
>>> kept.passages.tolist(), kept.counts.tolist(), kept.indptr.tolist()
([0, 0, 1, 1, 2], [1, 2, 1, 1, 1], [0, 1, 3, 4, 5])
>>> later = kept.updated(np.array([0, -1, 2]), np.array([4, 4]), np.array([0, 2]), 5)  # passage 1 now reads [4, 4]
>>> later == Occurrences.of(np.array([0, 1, 1, 4, 4, 3]), np.array([0, 3, 5, 6]), 5)
True
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["METHODS", "Occurrences", "bm25_scores"]

#: The bm25s methods whose matrix is made here: those that score the terms a passage holds, and
#: nothing for the others (bm25l and bm25+ also score absent terms).
METHODS = ("lucene", "robertson", "atire")


@dataclass(frozen=True, eq=False)
class Occurrences:
    """Which terms each passage holds and how often, in the order of the score matrix's entries
    (by term, then passage), and each passage's length: what its scores are made of."""

    indptr: np.ndarray
    """int64, one more than the vocabulary: term ``t``'s entries are ``indptr[t]:indptr[t + 1]``."""
    passages: np.ndarray
    """int32: each entry's passage, ascending within a term (the matrix's ``indices``)."""
    counts: np.ndarray
    """int32: how often the entry's term occurs in its passage, >= 1."""
    lengths: np.ndarray
    """int64: each passage's number of tokens."""

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Occurrences) and all(
            np.array_equal(getattr(self, name), getattr(other, name)) for name in ("indptr", "passages", "counts", "lengths"))

    @classmethod
    def of(cls, tokens: np.ndarray, starts: np.ndarray, vocabulary: int) -> Occurrences:
        """The occurrences of the passages whose token ids are ``tokens[starts[i]:starts[i + 1]]``
        (ids below ``vocabulary``): one sort of every token, by term then passage."""
        lengths = np.diff(starts).astype(np.int64)
        terms, passages, counts = _pairs(tokens, np.repeat(np.arange(len(lengths), dtype=np.int64), lengths),
                                         len(lengths))
        return cls(_indptr(np.bincount(terms, minlength=vocabulary)), passages.astype(np.int32),
                   counts.astype(np.int32), lengths)

    def updated(self, at: np.ndarray, fresh_tokens: np.ndarray, fresh_starts: np.ndarray, vocabulary: int) -> Occurrences:
        """The occurrences of passages that are, each in turn, these ones' passage ``at[i]`` (>= 0),
        or (``at[i] < 0``) a new one whose token ids are the next of ``fresh_tokens`` split at
        ``fresh_starts``; equal to :meth:`of` over all their tokens.

        Only the new passages' pairs are sorted; the kept ones keep their order, so the passages
        ``at`` keeps must come in the order they have here (``at[at >= 0]`` ascending). Term ids
        are those of these occurrences, and new ones up to ``vocabulary``.
        """
        held = at >= 0
        kept_at = at[held]
        if np.any(np.diff(kept_at) <= 0):
            raise ValueError("Occurrences.updated: the kept passages must keep their order, each once")
        count = len(at)
        renumbered = np.full(len(self.lengths), -1, dtype=np.int32)
        renumbered[kept_at] = np.flatnonzero(held)
        columns = np.diff(self.indptr)
        terms = np.repeat(np.arange(len(columns), dtype=np.int64), columns)
        passages = renumbered[self.passages]
        counts = self.counts
        stays = passages >= 0
        gone = np.zeros(vocabulary, dtype=np.int64)
        if not stays.all():
            gone = np.bincount(terms[~stays], minlength=vocabulary)
            terms, passages, counts = terms[stays], passages[stays], counts[stays]
        fresh_lengths = np.diff(fresh_starts).astype(np.int64)
        new_terms, new_passages, new_counts = _pairs(
            fresh_tokens, np.repeat(np.flatnonzero(~held), fresh_lengths), count)
        # Each new pair goes where its (term, passage) falls among the kept ones, already in that order.
        where = np.searchsorted(terms * count + passages, new_terms * count + new_passages)
        lengths = np.empty(count, dtype=np.int64)
        lengths[held] = self.lengths[kept_at]
        lengths[~held] = fresh_lengths
        columns = np.concatenate([columns, np.zeros(vocabulary - len(columns), dtype=columns.dtype)]) - gone \
            + np.bincount(new_terms, minlength=vocabulary)
        return Occurrences(_indptr(columns), np.insert(passages, where, new_passages.astype(np.int32)),
                           np.insert(counts, where, new_counts.astype(np.int32)), lengths)

    def scores(self, k1: float, b: float, method: str = "lucene") -> dict:
        """The score matrix ``bm25s.BM25(k1=k1, b=b, method=method)`` makes of these passages, the
        same to the bit: each operation bm25s does on a passage's terms, done on every entry at once
        (a term's inverse document frequency once per distinct document frequency)."""
        from bm25s.scoring import _select_idf_scorer

        if method not in METHODS:
            raise ValueError(f"bm25_scores: method {method!r} needs scores of absent terms, which it does not make")
        passages = len(self.lengths)
        frequencies = np.diff(self.indptr)
        scorer = _select_idf_scorer(method)
        distinct = np.flatnonzero(np.bincount(frequencies))
        distinct = distinct[distinct > 0]
        idf = np.zeros(int(frequencies.max(initial=0)) + 1, dtype=np.float32)
        idf[distinct] = [scorer(df, N=passages) for df in distinct.tolist()]
        tf = self.counts.astype(np.float32)
        # bm25s: k1 * ((1 - b) + b * l_d / l_avg), in float64, once per passage here
        norms = k1 * ((1 - b) + b * self.lengths / self.lengths.mean()) if passages else np.zeros(0)
        scores = norms[self.passages]  # float64, worked on in place: each step as bm25s does it
        scores += tf
        np.divide(tf * (k1 + 1) if method == "atire" else tf, scores, out=scores)
        scores *= np.repeat(idf[frequencies], frequencies)  # each entry's term's idf: entries come by term
        return {"data": scores.astype(np.float32), "indices": self.passages, "indptr": self.indptr, "num_docs": passages}


def bm25_scores(tokens: np.ndarray, starts: np.ndarray, vocabulary: int, k1: float, b: float,
                method: str = "lucene") -> dict:
    """The score matrix ``bm25s.BM25(k1=k1, b=b, method=method).index((token ids, vocabulary))``
    makes of the passages whose token ids are ``tokens[starts[i]:starts[i + 1]]``, the same to
    the bit, in a few array operations instead of a Python pass over every passage.

    >>> import bm25s
    >>> rows = [[0, 1, 1], [1, 2], [3]]
    >>> made = bm25_scores(np.array([t for r in rows for t in r]), np.array([0, 3, 5, 6]), 5, 1.5, 0.75)
    >>> index = bm25s.BM25(); index.index((rows, {"a": 0, "b": 1, "c": 2, "d": 3, "e": 4}), show_progress=False)
    >>> all(np.array_equal(made[name], index.scores[name]) for name in ("data", "indices", "indptr"))
    True
    """
    if method not in METHODS:
        raise ValueError(f"bm25_scores: method {method!r} needs scores of absent terms, which it does not make")
    return Occurrences.of(tokens, starts, vocabulary).scores(k1, b, method)


def _pairs(tokens: np.ndarray, passages: np.ndarray, count: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Each distinct (term, passage) of the tokens ``tokens`` of the passages ``passages`` (of
    ``count``), by term then passage, and how often it occurs."""
    if not len(tokens):
        empty = np.zeros(0, dtype=np.int64)
        return empty, empty, empty
    keys, counts = np.unique(tokens.astype(np.int64) * count + passages, return_counts=True)
    terms = keys // count
    return terms, keys - terms * count, counts


def _indptr(columns: np.ndarray) -> np.ndarray:
    """Where each column starts, given each one's number of entries, and the end."""
    indptr = np.zeros(len(columns) + 1, dtype=np.int64)
    np.cumsum(columns, out=indptr[1:])
    return indptr
