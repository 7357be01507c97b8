"""Entity-name vectors: an exact cosine index over the graph's entities, kept beside the record.

GraphRAG seeds entities by the similarity of their names to the query. The names are derived
data (a merge renames, a split adds), tens of thousands on a real corpus, and searched a handful
at a time, so an exact search over one matrix beats an approximate index: building an HNSW
collection for the 47,814 names of the 2Wiki corpus took Chroma 28 s, a matrix product over
them takes about 2 ms, and nothing is approximate.

The index is one file, ``entity_vectors.npz`` in the workspace folder: the entity keys and
names (as JSON text: fixed-width string arrays would take the longest name's width for every
row), their unit vectors, the record version and the embedder they were computed with. It is
replaced whole by an atomic rename, so a reader (the app, the MCP server) sees the old index or
the new one, never half of one. Vectors come from the record's embedding cache
(:func:`~workbench.ingest.embed_cached`), so a name is embedded once per embedder.
"""

from __future__ import annotations

import os
import threading
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Mapping

import numpy as np

from .array_file import from_text, to_text
from .vectors import VectorMatch

__all__ = ["EntityVectors", "FILE_NAME"]

FILE_NAME = "entity_vectors.npz"
#: Names embedded per call of a sync's ``vectors_for``, so a large graph is embedded in slices.
SYNC_BATCH = 16384


@dataclass(frozen=True)
class _Loaded:
    stamp: tuple[int, int]
    version: str
    embedder: str
    keys: list[str]
    names: list[str]
    vectors: np.ndarray


class EntityVectors:
    """The entity-name index of one workspace folder; safe to share between threads."""

    def __init__(self, folder: Path):
        self.path = Path(folder) / FILE_NAME
        self._loaded: _Loaded | None = None
        self._lock = threading.Lock()

    # -- reading -----------------------------------------------------------------------
    def _current(self) -> _Loaded | None:
        """The file's contents, reloaded when another writer replaced it."""
        try:
            stat = self.path.stat()
        except FileNotFoundError:
            return None
        stamp = (stat.st_mtime_ns, stat.st_size)
        with self._lock:
            if self._loaded is None or self._loaded.stamp != stamp:
                try:
                    with np.load(self.path, allow_pickle=False) as data:
                        self._loaded = _Loaded(stamp, str(data["version"]), str(data["embedder"]),
                                               from_text(data["keys"]), from_text(data["names"]),
                                               np.ascontiguousarray(data["vectors"], dtype=np.float32))
                except (OSError, ValueError, KeyError, zipfile.BadZipFile, UnicodeDecodeError):
                    return None  # damaged or of another format: as if absent, rebuilt on the next sync
            return self._loaded

    def version(self) -> str | None:
        """The record version the index was built for (None before the first build)."""
        loaded = self._current()
        return loaded.version if loaded else None

    def space(self) -> str | None:
        """The name of the embedder the vectors were computed with (None before the first build)."""
        loaded = self._current()
        return loaded.embedder if loaded else None

    def ids(self) -> set[str]:
        loaded = self._current()
        return set(loaded.keys) if loaded else set()

    def count(self) -> int:
        loaded = self._current()
        return len(loaded.keys) if loaded else 0

    def query(self, vector: np.ndarray, k: int, keep: Callable[[str], bool] | None = None,
              space: str | None = None) -> list[VectorMatch]:
        """The ``k`` entities whose names are most similar to ``vector`` (best first, ties by key),
        among those ``keep`` accepts; none when ``space`` (the query's embedder) is not the index's."""
        loaded = self._current()
        if loaded is None or k <= 0 or not loaded.keys or (space is not None and space != loaded.embedder):
            return []
        query = np.asarray(vector, dtype=np.float32).ravel()
        norm = float(np.linalg.norm(query))
        scores = loaded.vectors @ (query / norm if norm else query)
        keys = loaded.keys
        wanted = k
        while True:  # the best few first; more only when ``keep`` turned too many away
            rows = np.argpartition(-scores, wanted)[:wanted] if wanted < len(keys) else range(len(keys))
            order = sorted(rows, key=lambda i: (-float(scores[i]), keys[i]))
            out = [VectorMatch(keys[i], float(scores[i]), {"name": loaded.names[i]})
                   for i in order if keep is None or keep(keys[i])]
            if len(out) >= k or wanted >= len(keys):
                return out[:k]
            wanted *= 8

    # -- writing -----------------------------------------------------------------------
    def sync(self, names: Mapping[str, str], version: str, embedder_name: str,
             vectors_for: Callable[[list[str]], np.ndarray]) -> int:
        """Make the index hold exactly ``names`` (key -> name); returns the entries changed.

        Rows whose key and name are unchanged are kept; ``vectors_for`` embeds the other names
        (unit vectors), :data:`SYNC_BATCH` at a time. A change of embedder rebuilds every row.
        """
        loaded = self._current()
        old: dict[tuple[str, str], int] = {}
        if loaded is not None and loaded.embedder == embedder_name:
            old = {(k, n): i for i, (k, n) in enumerate(zip(loaded.keys, loaded.names))}
        keys = sorted(names)
        fresh = [row for row, key in enumerate(keys) if (key, names[key]) not in old]
        gone = len(old) - (len(keys) - len(fresh))
        if loaded is not None and not fresh and not gone and loaded.version == version:
            return 0
        matrix: np.ndarray | None = None
        if loaded is not None and old and len(loaded.keys):
            matrix = np.zeros((len(keys), loaded.vectors.shape[1]), dtype=np.float32)
            kept = [row for row, key in enumerate(keys) if (key, names[key]) in old]
            matrix[kept] = loaded.vectors[[old[(keys[row], names[keys[row]])] for row in kept]]
        for lo in range(0, len(fresh), SYNC_BATCH):
            rows = fresh[lo:lo + SYNC_BATCH]
            block = np.asarray(vectors_for([names[keys[row]] for row in rows]), dtype=np.float32)
            if matrix is None:
                matrix = np.zeros((len(keys), block.shape[1]), dtype=np.float32)
            matrix[rows] = block
        if matrix is None:
            matrix = np.zeros((len(keys), 0), dtype=np.float32)
        self._write(keys, [names[key] for key in keys], matrix, version, embedder_name)
        return len(fresh) + gone

    def _write(self, keys: list[str], names: list[str], matrix: np.ndarray, version: str, embedder: str) -> None:
        temporary = self.path.with_name(f".{FILE_NAME}.{os.getpid()}.tmp")
        with open(temporary, "wb") as out:
            np.savez(out, keys=to_text(keys), names=to_text(names), vectors=matrix, version=np.array(version),
                     embedder=np.array(embedder))
            out.flush()
            os.fsync(out.fileno())
        os.replace(temporary, self.path)
        stat = self.path.stat()
        with self._lock:
            self._loaded = _Loaded((stat.st_mtime_ns, stat.st_size), version, embedder, keys, names, matrix)
