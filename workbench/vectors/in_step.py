"""Whether the vector store is in step with the record: a mark set while vectors are written
(still set after a crash, so the next write step reconciles), and the embedder whose collection
was last kept in step."""

from __future__ import annotations

from contextlib import contextmanager

from ..embedding import LEGACY_NAME, Embedder
from ..record.store import Store

__all__ = ["VECTORS_IN_FLIGHT", "VECTORS_SPACE", "stale_space", "vector_writes", "vectors_behind"]

#: Meta key set while vectors are being written; still set after a crash.
VECTORS_IN_FLIGHT = "vectors_in_flight"
#: Meta key: the name of the embedder whose chunk collection was last kept in step with SQLite
#: (absent in workspaces made before backends existed: the bundled MiniLM on torch).
VECTORS_SPACE = "vectors_space"


@contextmanager
def vector_writes(store: Store):
    """Mark the vector store as being written for the block; a crash leaves the mark behind."""
    store.set_meta(VECTORS_IN_FLIGHT, "1")
    yield
    store.set_meta(VECTORS_IN_FLIGHT, "0")


def vectors_behind(store: Store, embedder: Embedder) -> bool:
    """Whether ``embedder``'s chunk collection may disagree with SQLite: a write was interrupted
    (or the mark was never set), or another embedder's space was the one kept in step."""
    return store.meta(VECTORS_IN_FLIGHT) != "0" or (store.meta(VECTORS_SPACE) or LEGACY_NAME) != embedder.name


def stale_space(store: Store, space: str) -> str | None:
    """Why the collections of ``space`` (an embedder's name) cannot be searched: another
    embedder's were the ones last kept in step, so these may lack chunks or not exist (None:
    they can be searched). Readers never write; a write step (ingest, repair) brings them in step."""
    last = store.meta(VECTORS_SPACE)
    if last is None:
        if store.meta(VECTORS_IN_FLIGHT) is None:
            return None  # nothing was ever written
        last = LEGACY_NAME
    if last == space:
        return None
    return (f"the workspace's vectors were made by {last}, not by {space} (embedding.backend or embedding.model "
            "changed): run `python -m workbench ingest <folder>` or `python -m workbench repair` to embed the chunks "
            "with it (vectors it made before are reused), or set the setting back")
