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

from workbench.extract.base import Extraction
from workbench.model import DECLARED_RELATION_TYPES, Chunk, Document, Triple

__all__ = ["DeclaredRelationExtractor", "similar_note_candidates"]


class DeclaredRelationExtractor:
    """One triple per relation declared in a document's front matter.

    The subject is the document's title, the object the target as written, the provenance
    the document's first chunk. Both ends are typed ``note``.
    """

    name = "declared"

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


def similar_note_candidates(
    doc_embeddings: Mapping[str, np.ndarray],
    titles: Mapping[str, str],
    threshold: float,
    first_chunk_ids: Mapping[str, str] | None = None,
) -> list[Triple]:
    """``SIMILAR_TO`` candidates for document pairs whose embeddings are similar enough.

    One triple per unordered pair (documents taken in id order) with cosine similarity at
    least ``threshold``; its confidence is the similarity and its origin ``candidate``. The
    chunk cited is the subject document's first chunk when ``first_chunk_ids`` gives it,
    else ``""``. Best pairs first.

    Examples
    --------
    >>> emb = {"a": np.array([1.0, 0.0]), "b": np.array([0.9, 0.1]), "c": np.array([0.0, 1.0])}
    >>> [(t.subject, t.object, round(t.confidence, 3))
    ...  for t in similar_note_candidates(emb, {"a": "A", "b": "B", "c": "C"}, 0.8)]
    [('A', 'B', 0.994)]
    """
    ids = sorted(doc_embeddings)
    if len(ids) < 2:
        return []
    matrix = np.vstack([np.asarray(doc_embeddings[i], dtype=float).ravel() for i in ids])
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    matrix = matrix / np.where(norms == 0, 1.0, norms)
    similarity = matrix @ matrix.T
    rows, cols = np.nonzero(np.triu(similarity >= threshold, k=1))
    chunk_of = first_chunk_ids or {}
    triples = [
        Triple(
            titles.get(ids[i], ids[i]),
            "SIMILAR_TO",
            titles.get(ids[j], ids[j]),
            chunk_of.get(ids[i], ""),
            float(min(1.0, similarity[i, j])),
            "candidate",
            "note",
            "note",
        )
        for i, j in zip(rows.tolist(), cols.tolist())
    ]
    triples.sort(key=lambda t: (-t.confidence, t.subject, t.object))
    return triples
