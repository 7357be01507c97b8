"""BM25 keyword search over passages, with the script-aware tokens of :mod:`workbench.text.tokenize`.

bm25s scores; we tokenize. Its own tokenizer does not segment Chinese, so the index is built
from token lists. bm25s returns ``k`` results even when every score is zero: those are
dropped here, and ties are broken by id so results never depend on hash order.

Examples
--------
>>> index = KeywordIndex.build(
...     ["c1", "c2", "c3"],
...     ["Redis refused connections: ECONNREFUSED", "Postgres is the primary store", "发生缓存雪崩时数据库被打满"],
... )
>>> [m.id for m in index.search("econnrefused redis", k=5)]
['c1']
>>> index.search("缓存雪崩", k=5)[0].id
'c3'
>>> index.search("kafka", k=5)
[]
"""

from __future__ import annotations

import importlib.metadata
from bisect import bisect_left
from collections import Counter
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass
from functools import cached_property
from itertools import repeat
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

import numpy as np

from ..runtime.array_file import (ArrayFileUnusable, from_text, read_array_file, read_manifest, to_text,
                                  write_array_file)
from ..text.tokenize import TOKENIZER_VERSION, tokenize
from .bm25_matrix import Occurrences

if TYPE_CHECKING:
    from ..model import Chunk

_KIND = "keyword index"
_FORMAT = 2  # 2: each passage's token ids kept, so a rebuild tokenizes only new passages
#: The formats read: a format 1 file (no tokens) answers searches as before; the next build tokenizes every passage.
_READS = (1, 2)


def _versioned(key: str) -> str:
    """The key with what else decides the index: the tokenizer's and bm25s's versions."""
    return f"{key}:tokenizer {TOKENIZER_VERSION}:bm25s {importlib.metadata.version('bm25s')}"

__all__ = ["ChunkTexts", "KeywordIndex", "KeywordMatch", "KeywordIndexError", "built_index", "current_index"]


class KeywordIndexError(ValueError):
    """Passages that cannot be indexed: ids and texts of different lengths, or a repeated id."""


@dataclass(frozen=True)
class KeywordMatch:
    """One passage that shares terms with the query."""

    id: str
    """The passage id given to :meth:`KeywordIndex.build`."""
    score: float
    """BM25 score, > 0."""
    matched_terms: tuple[str, ...]
    """Query tokens found in the passage, in query order."""


class KeywordIndex:
    """A BM25 index over passages; build with :meth:`KeywordIndex.build`."""

    def __init__(self, ids: tuple[str, ...], bm25, tokens: tuple[np.ndarray, np.ndarray] | None = None,
                 occurrences: Occurrences | None = None) -> None:
        self._ids = ids
        self._bm25 = bm25  # None when no passage has a token: every search is empty
        # Each passage's token ids (in bm25's vocabulary), flat, and where each passage's start:
        # what a later build reuses for the passages it still holds.
        self._tokens = tokens
        # What the scores are made of, for a later build to update rather than make again (a
        # loaded index has none: its first build makes them from the tokens).
        self._occurrences = occurrences

    @cached_property
    def _id_order(self) -> np.ndarray:
        """Position of each passage in id order, the tie-break between equal scores (made at the
        first search: a write step's build never searches)."""
        return np.argsort(np.argsort(np.array(self._ids, dtype=object))) if self._ids else np.empty(0, dtype=np.int64)

    @cached_property
    def _positions(self) -> dict[str, int]:
        """Each passage's position, by id (made when a build is first lent this index)."""
        return dict(zip(self._ids, range(len(self._ids))))

    @classmethod
    def build(cls, ids: Sequence[str], texts: Sequence[str], earlier: KeywordIndex | None = None) -> KeywordIndex:
        """Tokenize and index passages.

        Parameters
        ----------
        ids : sequence of str
            Unique passage ids (chunk ids), one per text.
        texts : sequence of str
            Passage texts, Chinese, English or mixed.
        earlier : KeywordIndex, optional
            An index of an earlier version of the same passages: a passage it holds under the
            same id (a chunk id names its text) keeps its tokens instead of being tokenized again,
            unless fewer than half of its passages are still there.

        Raises
        ------
        KeywordIndexError
            If ``ids`` and ``texts`` differ in length or an id repeats.
        """
        if len(ids) != len(texts):
            raise KeywordIndexError(f"KeywordIndex.build got {len(ids)} ids but {len(texts)} texts; pass one id per text")
        ids = tuple(ids)
        if len(set(ids)) != len(ids):
            repeated = sorted(i for i, n in Counter(ids).items() if n > 1)[:5]
            raise KeywordIndexError(f"KeywordIndex.build got repeated ids {repeated}; ids must be unique")
        reuse = earlier if earlier is not None and earlier.lends_to(ids) else None
        if reuse is not None and reuse._tokens is not None:
            vocabulary: dict[str, int] = reuse._bm25.vocab_dict
            flat, starts = reuse._tokens
            at = np.fromiter(map(reuse._positions.get, ids, repeat(-1)), dtype=np.int64, count=len(ids))
        else:
            vocabulary, flat, starts = {}, np.zeros(0, dtype=np.int32), np.zeros(1, dtype=np.int64)
            at = np.full(len(ids), -1, dtype=np.int64)
        words = [tokenize(texts[i]) for i in np.flatnonzero(at < 0).tolist()]
        if vocabulary and any(word not in vocabulary for row in words for word in row):
            vocabulary = dict(vocabulary)  # the earlier index (a reader may hold it) keeps its own
        fresh_starts = np.zeros(len(words) + 1, dtype=np.int64)
        np.cumsum([len(row) for row in words], out=fresh_starts[1:])
        fresh = np.fromiter((vocabulary.setdefault(word, len(vocabulary)) for row in words for word in row),
                            dtype=np.int32, count=int(fresh_starts[-1]))
        tokens = _gathered(flat, starts, at, fresh, fresh_starts)
        if not len(tokens[0]):
            return cls(ids, None, tokens)
        import bm25s  # imported here: it pulls in scipy, which callers without keyword search never need

        if reuse is not None and reuse._occurrences is not None and np.all(np.diff(at[at >= 0]) > 0):
            occurrences = reuse._occurrences.updated(at, fresh, fresh_starts, len(vocabulary))
        else:  # passages in another order, or an index loaded without its occurrences: made from the tokens
            occurrences = Occurrences.of(tokens[0], tokens[1], len(vocabulary))
        bm25 = bm25s.BM25()
        bm25.scores = occurrences.scores(bm25.k1, bm25.b, bm25.method)
        if "" not in vocabulary:  # bm25s gives the empty token an id after the others, as its index() does
            vocabulary[""] = max(vocabulary.values()) + 1
        bm25.vocab_dict = vocabulary
        bm25.unique_token_ids_set = reuse._bm25.unique_token_ids_set if reuse is not None and \
            vocabulary is reuse._bm25.vocab_dict else set(range(len(vocabulary)))
        bm25.nonoccurrence_array = None  # the method scores occurrences only
        return cls(ids, bm25, tokens, occurrences)

    def lends_to(self, ids: Sequence[str]) -> bool:
        """Whether a :meth:`build` of ``ids`` given this index as ``earlier`` keeps the tokens of
        the passages this one holds (not when it has no tokens, or when fewer than half of its
        passages are still there: a fresh vocabulary then leaves out the words of theirs alone).

        >>> index = KeywordIndex.build(["a", "b", "c"], ["redis", "kafka", "queue"])
        >>> index.lends_to(["a", "b", "x"]), index.lends_to(["a", "x", "y"])
        (True, False)
        """
        if self._tokens is None or self._bm25 is None:
            return False
        return 2 * sum(map(self._positions.__contains__, ids)) >= len(self._ids)

    @classmethod
    def load_earlier(cls, path: Path, key_prefix: str) -> KeywordIndex | None:
        """The index kept in ``path`` for any key starting with ``key_prefix`` (the workspace,
        another version of it) by this tokenizer, for :meth:`build` to reuse; None when there is none."""
        try:
            key = str(read_manifest(path, _KIND, _READS).get("key", ""))
            if not (key.startswith(key_prefix) and key.endswith(_versioned(""))):
                return None
            return cls.load(path, key[:-len(_versioned(""))])
        except ArrayFileUnusable:
            return None

    @staticmethod
    def kept_for(path: Path, key: str) -> bool:
        """Whether ``path`` holds an index made for ``key`` by this tokenizer (its manifest alone is read)."""
        try:
            return read_manifest(path, _KIND, _READS).get("key") == _versioned(key)
        except ArrayFileUnusable:
            return False

    def holds_exactly(self, ids: Sequence[str]) -> bool:
        """Whether this index is of exactly the passages ``ids`` (a chunk id names its text), with
        their tokens kept, so that it serves a later version unchanged.

        >>> index = KeywordIndex.build(["a", "b"], ["redis", "kafka"])
        >>> index.holds_exactly(["b", "a"]), index.holds_exactly(["a"])
        (True, False)
        """
        return self._tokens is not None and len(ids) == len(self._ids) and all(map(self._positions.__contains__, ids))

    def save(self, path: Path, key: str) -> None:
        """Keep the index in ``path`` for :meth:`load`, as made for ``key`` (what it indexes)."""
        arrays = {"ids": to_text(list(self._ids))}
        if self._tokens is not None:
            arrays.update({"tokens": self._tokens[0], "token_starts": self._tokens[1]})
        if self._bm25 is not None:
            vocabulary = self._bm25.vocab_dict
            arrays.update({"vocabulary": to_text(sorted(vocabulary, key=vocabulary.__getitem__)),
                           "data": self._bm25.scores["data"], "indices": self._bm25.scores["indices"],
                           "indptr": self._bm25.scores["indptr"]})
        write_array_file(path, _KIND, _FORMAT, _versioned(key), arrays)

    @classmethod
    def load(cls, path: Path, key: str) -> KeywordIndex:
        """The index :meth:`save` kept in ``path`` for ``key``, without tokenizing a passage.

        Raises
        ------
        ArrayFileUnusable
            None kept, one made for another key or tokenizer, or a damaged file.
        """
        _, arrays = read_array_file(path, _KIND, _READS, _versioned(key))
        try:
            ids = tuple(from_text(arrays["ids"]))
            bm25 = None
            if "vocabulary" in arrays:
                import bm25s

                bm25 = bm25s.BM25()
                bm25.vocab_dict = {token: i for i, token in enumerate(from_text(arrays["vocabulary"]))}
                bm25.unique_token_ids_set = set(bm25.vocab_dict.values())
                bm25.nonoccurrence_array = None  # the default method (lucene) scores occurrences only
                bm25.scores = {"data": arrays["data"], "indices": arrays["indices"], "indptr": arrays["indptr"],
                               "num_docs": len(ids)}
                if len(arrays["indptr"]) - 1 > len(bm25.vocab_dict) or (
                        len(arrays["indices"]) and int(arrays["indices"].max()) >= len(ids)):
                    raise ValueError("its matrix does not fit its vocabulary and passages")
            tokens = None
            if "tokens" in arrays:
                tokens = (arrays["tokens"], arrays["token_starts"])
                starts = tokens[1]
                if len(starts) != len(ids) + 1 or starts[0] != 0 or int(starts[-1]) != len(tokens[0]) \
                        or np.any(np.diff(starts) < 0) or (len(tokens[0]) and (
                            bm25 is None or int(tokens[0].min()) < 0 or int(tokens[0].max()) >= len(bm25.vocab_dict))):
                    raise ValueError("its passages' tokens do not fit its vocabulary and passages")
        except (ValueError, KeyError, TypeError, UnicodeDecodeError) as exc:
            raise ArrayFileUnusable(f"{path} is damaged ({exc})") from None
        return cls(ids, bm25, tokens)

    def _holds(self, term_id: int, passages: np.ndarray) -> np.ndarray:
        """Which of ``passages`` contain the term: each occurrence has a positive BM25 weight, so
        the term's column of the score matrix lists exactly the passages that hold it."""
        indptr = self._bm25.scores["indptr"]
        if term_id >= len(indptr) - 1:
            return np.zeros(len(passages), dtype=bool)
        return np.isin(passages, self._bm25.scores["indices"][indptr[term_id]:indptr[term_id + 1]])

    def __len__(self) -> int:
        return len(self._ids)

    def search(self, query: str, k: int) -> list[KeywordMatch]:
        """The ``k`` best passages for ``query`` with a positive BM25 score.

        Parameters
        ----------
        query : str
            Free text, tokenized like the passages.
        k : int
            Most matches returned; capped at the number of passages.

        Returns
        -------
        list of KeywordMatch
            Best first; equal scores in id order. Empty when the query has no token the
            passages share, or the index is empty.
        """
        if self._bm25 is None or k <= 0:
            return []
        # A repeated query word adds nothing: each distinct term is scored once.
        terms = list(dict.fromkeys(tokenize(query)))
        vocabulary = self._bm25.vocab_dict
        known = [t for t in terms if t in vocabulary]
        if not known:
            return []
        scores = self._bm25.get_scores_from_ids([vocabulary[t] for t in known])
        positive = np.flatnonzero(scores > 0)
        best = positive[np.lexsort((self._id_order[positive], -scores[positive]))][:k]
        held = {t: self._holds(vocabulary[t], best) for t in known}
        return [
            KeywordMatch(id=self._ids[i], score=float(scores[i]), matched_terms=tuple(t for t in known if held[t][row]))
            for row, i in enumerate(best)
        ]


def _gathered(flat: np.ndarray, starts: np.ndarray, at: np.ndarray, fresh: np.ndarray,
              fresh_starts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Each passage's token ids, one after another, and where each starts: those of the passages
    held at ``at`` (>= 0) in ``flat``/``starts``, then in turn those of the others, ``fresh`` split at ``fresh_starts``."""
    held = at >= 0
    lengths = np.zeros(len(at), dtype=np.int64)
    lengths[held] = starts[at[held] + 1] - starts[at[held]]
    lengths[~held] = np.diff(fresh_starts)
    source = np.concatenate([flat.astype(np.int32, copy=False), fresh.astype(np.int32, copy=False)])
    first = np.empty(len(at), dtype=np.int64)
    first[held] = starts[at[held]]
    first[~held] = len(flat) + fresh_starts[:-1]
    offsets = np.zeros(len(at) + 1, dtype=np.int64)
    np.cumsum(lengths, out=offsets[1:])
    row = np.repeat(np.arange(len(at), dtype=np.int64), lengths)
    return source[first[row] + np.arange(offsets[-1], dtype=np.int64) - offsets[row]], offsets


class ChunkTexts(Protocol):
    """Where an index's passages come from (the record's :class:`~workbench.record.store.Store`)."""

    def chunk_ids(self) -> Collection[str]: ...

    def chunks(self, ids: Sequence[str] | None = None) -> Sequence[Chunk]: ...


def current_index(path: Path, workspace_id: str, version: int, chunks: ChunkTexts,
                  keep: Callable[[Callable[[], object]], object], earlier: KeywordIndex | None = None) -> KeywordIndex:
    """The keyword index of a workspace's record at ``version``: the one kept in ``path`` for it,
    else :func:`built_index` (from ``earlier`` when given)."""
    try:
        return KeywordIndex.load(path, f"{workspace_id}:{version}")
    except ArrayFileUnusable:
        return built_index(path, workspace_id, version, chunks, keep, earlier)


def built_index(path: Path, workspace_id: str, version: int, chunks: ChunkTexts,
                keep: Callable[[Callable[[], object]], object], earlier: KeywordIndex | None = None) -> KeywordIndex:
    """The keyword index of the chunks of a workspace's record at ``version`` (in id order), built
    (reading and tokenizing only the chunks that ``earlier``, an index of another version of the
    workspace, lacks: when not given, the one kept in ``path``) and handed to ``keep``, which saves
    it there when the record is still at ``version``."""
    if earlier is None:
        earlier = KeywordIndex.load_earlier(path, f"{workspace_id}:")
    current = chunks.chunk_ids()
    if earlier is None:
        ids, new = sorted(current), set(current)
    else:  # the earlier ids come in order: one sorted run, and the few new ones to merge in
        current = current if isinstance(current, (set, frozenset)) else set(current)
        new = set(current - earlier._positions.keys())
        ids = sorted([*filter(current.__contains__, earlier._ids), *new])
    if earlier is not None and not new and earlier.holds_exactly(ids):  # a merge step: the same chunks, the same index
        index = earlier
    else:
        read = sorted(new) if earlier is not None and earlier.lends_to(ids) else ids
        index = KeywordIndex.build(ids, _texts_at(ids, {c.id: c.text for c in chunks.chunks(read)}), earlier=earlier)
    keep(lambda: index.save(path, f"{workspace_id}:{version}"))
    return index


def _texts_at(ids: list[str], texts: dict[str, str]) -> list[str]:
    """The text of each of ``ids`` (sorted) that ``texts`` holds, an empty one for each other one
    (the passages a build is lent): a few are placed by bisection rather than all looked up."""
    if 8 * len(texts) > len(ids):
        return [texts.get(i, "") for i in ids]
    placed = [""] * len(ids)
    for passage, text in texts.items():
        placed[bisect_left(ids, passage)] = text
    return placed
