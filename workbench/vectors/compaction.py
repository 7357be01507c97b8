"""Keeping ``chroma/`` in proportion to the chunks it holds.

Chroma 1.5 keeps the slot of every vector deleted, on disk and in memory
(chroma-core/chroma#2594), and a chunk whose ordinal moves gets a new id: each edit near the top
of a large file leaves the slots of every chunk below it. :func:`compact_chunk_vectors` rebuilds
the chunk collection (:meth:`~workbench.vectors.index.VectorIndex.rebuild`), deletes the folder Chroma
leaves behind for the old one and gives back its catalogue's pages. A write step (ingest,
remove) calls it when :func:`compaction_due`, so the store holds at most about twice the slots
of its chunks; ``repair`` calls it always.
"""

from __future__ import annotations

from pathlib import Path

from .chroma_folders import compact_catalogue, remove_orphan_folders
from .in_step import vector_writes
from ..record.store import Store
from .index import CHUNKS, VectorIndex

__all__ = ["COMPACT_AFTER_DELETED", "compact_chunk_vectors", "compaction_due"]

#: Deleted vectors' slots a write step leaves in place however few the chunks (a rebuild
#: re-inserts every vector: not worth it for a handful).
COMPACT_AFTER_DELETED = 10_000


def compaction_due(deleted: int, chunks: int) -> bool:
    """Whether the slots of ``deleted`` vectors outnumber the ``chunks`` and
    :data:`COMPACT_AFTER_DELETED`.

    Examples
    --------
    >>> compaction_due(12_000, 10_000), compaction_due(12_000, 20_000), compaction_due(900, 10)
    (True, False, False)
    """
    return deleted > max(chunks, COMPACT_AFTER_DELETED)


def compact_chunk_vectors(store: Store, vectors: VectorIndex, chroma_dir: Path | None) -> int:
    """Rebuild the chunk collection without the slots of deleted vectors; with ``chroma_dir``
    (an embedded store: a server keeps its own files) delete the folders and catalogue pages
    left of the old one. The writer holds the workspace's lock. Returns the slots freed."""
    freed = vectors.deleted(CHUNKS)
    with vector_writes(store):  # a rebuild cut short is finished or undone by the next write step
        vectors.rebuild(CHUNKS)
    if chroma_dir is not None:
        remove_orphan_folders(chroma_dir)
        compact_catalogue(chroma_dir)
    return freed
