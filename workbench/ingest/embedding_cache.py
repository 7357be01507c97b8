"""The embedding cache every write step reads: a chunk text's vector is computed once per embedder.

Vectors are kept in the record by text hash and embedder name (its vector space), so a text
ingested again, in another document or after a re-chunking, is not embedded twice. Entity names
are not cached here: their index (:mod:`workbench.context_graph.entity_vectors`) is their store.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ..embedding import Embedder, text_hash
from ..context_graph.entity_vectors import EntityVectors
from ..store import Store

__all__ = ["CacheFirstEmbedder", "embed_cached"]


def embed_cached(texts: Sequence[str], store: Store, embedder: Embedder) -> tuple[np.ndarray, int]:
    """Vectors for ``texts``, computing only those not in the cache. Returns (vectors, computed)."""
    hashes = [text_hash(t) for t in texts]
    cached = store.cached_embeddings(sorted(set(hashes)), embedder.name)
    missing = sorted({h for h in hashes if h not in cached})
    if missing:
        first = {h: t for h, t in zip(hashes, texts)}
        new = embedder.embed([first[h] for h in missing])
        store.cache_embeddings(missing, new, embedder.name)
        cached.update(zip(missing, new))
    out = np.zeros((len(texts), embedder.dimension), dtype=np.float32)
    for i, h in enumerate(hashes):
        out[i] = cached[h]
    return out, len(missing)


class CacheFirstEmbedder:
    """An embedder that reads each text's vector from the record's embedding cache (chunk texts)
    or, given ``names`` (an :class:`~workbench.context_graph.entity_vectors.EntityVectors`), from
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
