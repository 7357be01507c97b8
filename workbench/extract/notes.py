"""Relations a note declares about itself in front matter, and similar-note candidates.

Declared relations are facts the author wrote down: ``this RESOLVED_BY target``. Targets stay
as written here; graph assembly resolves them to other documents. Similar-note pairs found by
embedding similarity are *candidates* (origin ``candidate``), never shown as facts.

Examples
--------
>>> from workbench.model import Chunk, DeclaredRelation, Document
>>> doc = Document("inc-42.md", "/n/inc-42.md", "Login outage", "markdown", "text", "h",
...                relations=(DeclaredRelation("resolved_by", "fix-token-ttl.md"),))
>>> [(t.subject, t.relation, t.object, t.chunk_id, t.origin)
...  for t in DeclaredRelationExtractor().extract(doc, [Chunk("c0", "inc-42.md", 0, "text", 0, 4)]).triples]
[('Login outage', 'RESOLVED_BY', 'fix-token-ttl.md', 'c0', 'declared')]
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from .base import Extraction
from ..model import DECLARED_RELATION_TYPES, Chunk, Document, Triple

__all__ = ["DeclaredRelationExtractor", "similar_note_candidates", "NEAREST_NOTES"]


class DeclaredRelationExtractor:
    """One triple per relation declared in a document's front matter.

    The subject is the document's title, the object the target as written, the provenance
    the document's first chunk. Both ends are typed ``note``.
    """

    name = "declared"

    def for_document(self, document: Document, chunks: Sequence[Chunk]) -> _DeclaredOfDocument:
        """The extractor for windows of ``chunks``: the triples come with the window holding the
        document's first chunk (with every chunk's window when there is none), never twice."""
        return _DeclaredOfDocument(self, min(chunks, key=lambda c: c.ordinal) if chunks else None)

    def extract(self, document: Document, chunks: Sequence[Chunk]) -> Extraction:
        """Triples for ``document.relations``; a problem line if there is no chunk to cite."""
        result = Extraction()
        if not document.relations:
            return result
        if not chunks:
            result.problems.append(
                f"{document.id}: {len(document.relations)} declared relation(s) skipped: the document has no chunk to cite"
            )
            return result
        first = min(chunks, key=lambda c: c.ordinal)
        for declared in document.relations:
            relation = declared.relation.strip().upper()
            target = declared.target.strip()
            if not target:
                result.problems.append(f"{document.id}: declared relation {relation} has an empty target; skipped")
                continue
            if relation not in DECLARED_RELATION_TYPES:
                result.problems.append(
                    f"{document.id}: declared relation {relation} is not one of {', '.join(DECLARED_RELATION_TYPES)}; kept as written"
                )
            result.triples.append(Triple(document.title, relation, target, first.id, 1.0, "declared", "note", "note"))
        return result


class _DeclaredOfDocument:
    """:class:`DeclaredRelationExtractor` for windows of one document's chunks."""

    name = "declared"

    def __init__(self, base: DeclaredRelationExtractor, first: Chunk | None):
        self.base, self.first = base, first

    def extract(self, document: Document, chunks: Sequence[Chunk]) -> Extraction:
        if self.first is None:
            return self.base.extract(document, chunks)
        if any(chunk.id == self.first.id for chunk in chunks):
            return self.base.extract(document, [self.first])
        return Extraction()


#: Nearest neighbours each note is compared with: a pair is a candidate when one of its two notes
#: has the other among its this many most similar notes (and the pair is above the threshold).
#: Ingest keeps at most 3 candidates per note, so 16 leaves room for neighbours already full.
NEAREST_NOTES = 16
#: Similarities held at once: a block of rows times every note (float32, about 16 MB).
BLOCK_ELEMENTS = 1 << 22
#: Selection in float32 admits pairs this far below the threshold; the float64 check decides.
SLACK = 1e-5


def similar_note_candidates(
    doc_embeddings: Mapping[str, np.ndarray],
    titles: Mapping[str, str],
    threshold: float,
    first_chunk_ids: Mapping[str, str] | None = None,
    k: int = NEAREST_NOTES,
    block_rows: int | None = None,
) -> list[Triple]:
    """``SIMILAR_TO`` candidates between each document and its ``k`` nearest neighbours.

    A pair of documents (taken in id order) is a candidate when its cosine similarity is at
    least ``threshold`` and one of the two has the other among its ``k`` most similar
    documents. Its confidence is the similarity, its origin ``candidate``; the chunk cited is
    the subject document's first chunk when ``first_chunk_ids`` gives it, else ``""``. Best
    pairs first. When no document has more than ``k`` others above the threshold this is
    every pair above it, as :func:`_similar_note_candidates_reference` finds them.

    The search runs over row blocks of float32 unit vectors (``block_rows`` rows at a time,
    by default as many as keep a block near 16 MB), keeping per row only its ``k`` best, so
    memory is O(block x n + n x k), never n x n. The confidences of the pairs found are then
    computed in float64.

    Examples
    --------
    >>> emb = {"a": np.array([1.0, 0.0]), "b": np.array([0.9, 0.1]), "c": np.array([0.0, 1.0])}
    >>> [(t.subject, t.object, round(t.confidence, 3))
    ...  for t in similar_note_candidates(emb, {"a": "A", "b": "B", "c": "C"}, 0.8)]
    [('A', 'B', 0.994)]
    """
    ids = sorted(doc_embeddings)
    n = len(ids)
    if n < 2:
        return []
    if k < 1:
        raise ValueError(f"k must be at least 1, not {k}")
    unit = unit_rows(np.vstack([np.asarray(doc_embeddings[i], dtype=np.float64).ravel() for i in ids]))
    unit32 = unit.astype(np.float32)
    rows = block_rows if block_rows is not None else max(1, min(1024, BLOCK_ELEMENTS // n))
    floor = np.float32(threshold - SLACK)
    firsts, seconds = [], []
    for lo in range(0, n, rows):
        hi = min(n, lo + rows)
        block = unit32[lo:hi] @ unit32.T  # (hi - lo) x n
        block[np.arange(hi - lo), np.arange(lo, hi)] = -np.inf  # not a note's own neighbour
        near = block >= floor
        counts = near.sum(axis=1)
        if counts.sum() <= block.size // 8:  # few above the floor: sort them, keep each row's k best
            r, c = np.nonzero(near)
            order = np.lexsort((c, -block[r, c], r))
            rank = np.arange(len(order)) - np.repeat(np.cumsum(counts) - counts, counts)
            keep = order[rank < k]
            firsts.append(r[keep] + lo)
            seconds.append(c[keep])
        else:
            crowded = counts > k
            r, c = np.nonzero(near & ~crowded[:, None])  # rows with k or fewer: all of them
            firsts.append(r + lo)
            seconds.append(c)
            if crowded.any():  # rows with more: their k best (all above the floor)
                where = np.flatnonzero(crowded)
                best = np.argpartition(block[where], n - k, axis=1)[:, n - k:]
                firsts.append(np.repeat(where + lo, k))
                seconds.append(best.ravel())
        del block, near
    a, b = np.concatenate(firsts), np.concatenate(seconds)
    pairs = np.unique(np.minimum(a, b).astype(np.int64) * n + np.maximum(a, b))
    i_of, j_of = pairs // n, pairs % n
    similarity = np.empty(len(pairs))
    for lo in range(0, len(pairs), 8192):  # exact float64 cosines, a slice of pairs at a time
        part = slice(lo, lo + 8192)
        similarity[part] = np.einsum("ij,ij->i", unit[i_of[part]], unit[j_of[part]])
    keep = similarity >= threshold
    return _candidate_triples(ids, i_of[keep], j_of[keep], similarity[keep], titles, first_chunk_ids)


def unit_rows(matrix: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    return matrix / np.where(norms == 0, 1.0, norms)


def _candidate_triples(ids, rows, cols, similarity, titles, first_chunk_ids) -> list[Triple]:
    chunk_of = first_chunk_ids or {}
    triples = [
        Triple(
            titles.get(ids[i], ids[i]),
            "SIMILAR_TO",
            titles.get(ids[j], ids[j]),
            chunk_of.get(ids[i], ""),
            float(min(1.0, s)),
            "candidate",
            "note",
            "note",
        )
        for i, j, s in zip(np.asarray(rows).tolist(), np.asarray(cols).tolist(), np.asarray(similarity).tolist())
    ]
    triples.sort(key=lambda t: (-t.confidence, t.subject, t.object))
    return triples


def _similar_note_candidates_reference(
    doc_embeddings: Mapping[str, np.ndarray],
    titles: Mapping[str, str],
    threshold: float,
    first_chunk_ids: Mapping[str, str] | None = None,
) -> list[Triple]:
    """Every pair at least ``threshold`` similar, from the dense n x n matrix: the simple
    version :func:`similar_note_candidates` is tested against (its memory grows with n squared)."""
    ids = sorted(doc_embeddings)
    if len(ids) < 2:
        return []
    matrix = unit_rows(np.vstack([np.asarray(doc_embeddings[i], dtype=float).ravel() for i in ids]))
    similarity = matrix @ matrix.T
    rows, cols = np.nonzero(np.triu(similarity >= threshold, k=1))
    return _candidate_triples(ids, rows, cols, similarity[rows, cols], titles, first_chunk_ids)
