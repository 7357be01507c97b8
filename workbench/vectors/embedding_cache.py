"""Where every write step gets a text's vector: computed once per embedder, kept once.

A chunk's vector is kept in one place, the chunk collection of its embedder's space in Chroma
(a second copy in the record doubled a workspace). A chunk text ingested again, in another
document or after a re-chunking, is read back from the Chroma copy of a stored chunk with the
same text (found by the record's text-hash index), not embedded again, unless a few come with
texts the model computes anyway in a process that has not read the collection yet
(:data:`RECOMPUTE_AT_MOST`). Other texts (community reports, episodes) are kept in the record's
embedding cache, by text hash and embedder name; so are chunk vectors written there by earlier
versions, read first. What is lost with a lost vector store (a deleted ``chroma`` folder) is
embedded again by ``repair``. Entity names are not cached here: their index
(:mod:`workbench.vectors.entity_vectors`) is their store.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from ..embedding import Embedder, text_hash
from .entity_vectors import EntityVectors
from ..record.store import Store
from .index import CHUNKS, VectorIndex

__all__ = ["RECOMPUTE_AT_MOST", "CacheFirstEmbedder", "embed_cached"]

#: Texts held by stored chunks that are embedded again, not read back, when the model runs for
#: others anyway, the documents the write replaces had no more chunks than this (a document of
#: many windows reads them back: its later windows would load the collection all the same), and
#: this process has not read the chunk collection yet: Chroma's first read loads every vector of
#: it (0.25-0.35 s at 20,000 chunks), more than the model takes for a few texts more (an edited
#: note's unchanged paragraphs, in a fresh ``ingest`` or a watch's first batches).
RECOMPUTE_AT_MOST = 8


def embed_cached(texts: Sequence[str], store: Store, embedder: Embedder, chunks: VectorIndex | None = None,
                 leaving: Mapping[str, str] | None = None) -> tuple[np.ndarray, int]:
    """Vectors for ``texts``, computing only those found nowhere. Returns (vectors, computed).

    Looked up in the record's cache, then, given ``chunks`` (the chunk collections, when they are
    ``embedder``'s space), in Chroma's copy of a stored chunk with the same text, or of one of
    ``leaving`` (text hash -> chunk id: the chunks of documents being replaced, which the open
    write has taken out of the record and Chroma holds until it commits). With ``chunks`` the
    texts are chunk texts whose vectors Chroma keeps, so what is computed is not cached; without
    it, computed vectors go to the record's cache. A few held texts are computed with the
    others instead while Chroma has not loaded the collection (:data:`RECOMPUTE_AT_MOST`)."""
    hashes = [text_hash(t) for t in texts]
    cached = store.cached_embeddings(sorted(set(hashes)), embedder.name)
    missing = sorted({h for h in hashes if h not in cached})
    if missing and chunks is not None and chunks.space == embedder.name:
        holders = store.chunks_with_texts(missing)
        holders.update((h, leaving[h]) for h in missing if leaving and h in leaving and h not in holders)
        few = len(holders) <= RECOMPUTE_AT_MOST and len(leaving or ()) <= RECOMPUTE_AT_MOST  # here and in the write
        if few and len(holders) < len(missing) and not chunks.vectors_loaded(CHUNKS):
            holders = {}  # the model runs anyway: a few texts more cost less than Chroma's first read
        held = chunks.get_vectors(CHUNKS, sorted(set(holders.values()))) if holders else {}
        cached.update((h, held[i]) for h, i in holders.items() if i in held)
        missing = [h for h in missing if h not in cached]
    if missing:
        first = {h: t for h, t in zip(hashes, texts)}
        new = embedder.embed([first[h] for h in missing])
        if chunks is None:
            store.cache_embeddings(missing, new, embedder.name)
        cached.update(zip(missing, new))
    out = np.zeros((len(texts), embedder.dimension), dtype=np.float32)
    for i, h in enumerate(hashes):
        out[i] = cached[h]
    return out, len(missing)


class CacheFirstEmbedder:
    """An embedder that reads each text's vector from the record's embedding cache (the texts
    cached there: reports, a benchmark's passages, chunk texts an earlier version kept) or,
    given ``names`` (an :class:`~workbench.vectors.entity_vectors.EntityVectors`), from
    that entity-name index when it is this embedder's, and computes only the misses, writing
    nothing (safe on a read path, or a scoped read-only view). ``missed`` counts the texts it
    computed."""

    def __init__(self, base: Embedder, store: Store, names: EntityVectors | None = None):
        self.base, self.store, self.names = base, store, names
        self.name, self.dimension = base.name, base.dimension
        self.missed = 0

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        texts = list(texts)
        hashes = [text_hash(t) for t in texts]
        found = self.store.cached_embeddings(sorted(set(hashes)), self.name)
        missing = [t for t, h in zip(texts, hashes) if h not in found]
        if missing and self.names is not None and self.names.space() == self.name:
            named = self.names.vectors_of(missing)
            found.update((text_hash(t), v) for t, v in named.items())
            missing = [t for t in missing if t not in named]
        if missing:
            self.missed += len(missing)
            found.update(zip((text_hash(t) for t in missing), self.base.embed(missing)))
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        return np.stack([np.asarray(found[h], dtype=np.float32) for h in hashes])

    def __getattr__(self, name):  # represents(), when the base embedder can tell
        return getattr(self.base, name)
