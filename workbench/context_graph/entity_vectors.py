"""Entity-name vectors: an exact cosine index over the graph's entities, kept beside the record.

GraphRAG seeds entities by the similarity of their names to the query. The names are derived
data (a merge renames, a split adds), tens of thousands on a real corpus, and searched a handful
at a time, so an exact search over one matrix beats an approximate index: building an HNSW
collection for the 47,814 names of the 2Wiki corpus took Chroma 28 s, a matrix product over
them takes about 2 ms, and nothing is approximate.

The index is one file, ``entity_vectors.npz`` in the workspace folder: the entity keys and
names (each column one UTF-8 buffer with offsets, a string decoded when read: fixed-width string
arrays would take the longest name's width for every row, and the JSON text of format 1, still
read, took 0.3 s of a fresh process's first query at 412k names to parse), their unit vectors, the record version and the embedder they were computed with. It is
replaced whole by an atomic rename, so a reader (the app, the MCP server) sees the old index or
the new one, never half of one. A name is embedded once per embedder: a sync copies the vector
of every name the index holds already (under any key) and embeds only the others. The index is
the only copy of the name vectors (the record's embedding cache keeps chunk texts: names there
were 630 MB of a 61k-passage workspace), so a damaged file, or a change of embedder, embeds
every name again.

The file is an :mod:`~workbench.array_file` (manifest, SHA-256 of the arrays), and every load is
validated: one row per key and name, a 2-D float matrix of finite unit vectors, the width the
query has. A file failing any of these is *damaged*: a search raises :class:`EntityVectorsDamaged`
(naming ``repair``), and the next writer, or ``repair``, builds it again. A file of the earlier
format (no manifest) counts as damaged too, so it is rebuilt once.
"""

from __future__ import annotations

import os
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterable, Iterator, Mapping, Sequence

import numpy as np

from ..array_file import ArrayFileUnusable, TextColumn, from_text, read_array_file, read_manifest, write_array_file
from ..cores import thread_map, usable_cores
from ..vectors import NeedsRepair, VectorMatch

__all__ = ["EntityVectors", "EntityVectorsDamaged", "FILE_NAME", "remove_stale_temporaries", "similarities"]

#: Fewest rows a block of :func:`similarities` takes to a thread of its own.
_BLOCK_ROWS = 50_000


def similarities(vectors: np.ndarray, query: np.ndarray) -> np.ndarray:
    """``vectors @ query``, in row blocks on the shared pool and with no BLAS thread. OpenBLAS's
    worker spins for about 0.1 s after each call it shares, and the PageRank walk that follows a
    name search lost a core to it: the walk took about 110 ms after the search where it takes 60 ms
    alone (61k passages, 412,705 names, 2 cores). ``einsum`` is numpy's own loop and releases the GIL.

    >>> similarities(np.array([[1.0, 0.0], [0.6, 0.8]], dtype=np.float32), np.array([1.0, 0.0], dtype=np.float32))
    array([1. , 0.6], dtype=float32)
    """
    parts = max(1, min(usable_cores(), len(vectors) // _BLOCK_ROWS))
    blocks = np.array_split(vectors, parts) if parts > 1 else [vectors]
    return np.concatenate(thread_map(lambda block: np.einsum("ij,j->i", block, query), blocks))

FILE_NAME = "entity_vectors.npz"
#: The array file's kind and format (see :mod:`workbench.array_file`).
#: 2: keys and names as text columns (format 1: JSON text, still read).
KIND, FORMAT = "entity_vectors", 2
READABLE_FORMATS = (1, 2)
#: How far a stored row's length may be from 1 (float32 rounding is ~1e-7).
UNIT_TOLERANCE = 1e-3


class EntityVectorsDamaged(NeedsRepair):
    """``entity_vectors.npz`` is unreadable or fails validation (rows, width, finite unit vectors)."""


def remove_stale_temporaries(folder: Path) -> list[Path]:
    """Delete the ``.<name>.<pid>.tmp`` files a killed or failed write left in ``folder`` (those of
    a process still running are kept: it may be writing them now). Returns the files removed."""
    removed = []
    for temporary in Path(folder).glob(".*.tmp"):
        pid_text = temporary.name[:-len(".tmp")].rpartition(".")[2]
        if not pid_text.isdigit():
            continue
        pid = int(pid_text)
        if pid != os.getpid():
            try:
                os.kill(pid, 0)
                continue  # alive: its write is in progress
            except ProcessLookupError:
                pass
            except PermissionError:  # alive, another user's
                continue
        try:
            temporary.unlink()
            removed.append(temporary)
        except OSError:
            pass
    return removed


def _text_problem(keys, names) -> str | None:
    """What is wrong with the keys and names of a format-1 index, JSON lists (None: nothing)."""
    if not isinstance(keys, list) or not isinstance(names, list) or not all(isinstance(k, str) for k in keys) \
            or not all(isinstance(n, str) for n in names):
        return "its keys or names are not lists of text"
    if len(set(keys)) != len(keys):
        return "a key appears twice"
    return None


def _validated(keys: Sequence[str], names: Sequence[str], vectors: np.ndarray) -> str | None:
    """What is wrong with the arrays of an index (None: nothing). The keys of a format-2 file are
    not compared for repeats: its writer writes a mapping's keys, sorted, and its checksum holds."""
    if vectors.ndim != 2 or not np.issubdtype(vectors.dtype, np.floating):
        return f"its vectors are a {vectors.ndim}-D {vectors.dtype} array, not a 2-D float matrix"
    if not (len(keys) == len(names) == vectors.shape[0]):
        return f"it has {len(keys)} keys, {len(names)} names and {vectors.shape[0]} vectors"
    if len(keys) and vectors.shape[1] == 0:
        return "its vectors have no width"
    # Squared lengths in one pass, no float64 copy: NaN or infinity makes them non-finite too.
    squared = np.einsum("ij,ij->i", vectors, vectors)
    if not np.isfinite(squared).all():
        return "some vectors are not finite (NaN or infinity)"
    if len(squared) and float(np.abs(squared - 1.0).max()) > 2 * UNIT_TOLERANCE:
        return "some vectors are not unit vectors"
    return None
#: Names embedded per call of a sync's ``vectors_for``, so a large graph is embedded in slices.
SYNC_BATCH = 16384


@dataclass(eq=False)
class _Loaded:
    """What the file held when it was last read (``stamp``: its mtime and size)."""

    stamp: tuple[int, int]
    version: str
    embedder: str
    keys: Sequence[str]
    names: Sequence[str]
    vectors: np.ndarray
    _row_of_name: dict[str, int] | None = None

    def row_of_name(self) -> dict[str, int]:
        """Name -> the first row holding it, made on first use."""
        if self._row_of_name is None:
            row_of: dict[str, int] = {}
            for row, name in enumerate(self.names):
                row_of.setdefault(name, row)
            self._row_of_name = row_of
        return self._row_of_name


class EntityVectors:
    """The entity-name index of one workspace folder; safe to share between threads."""

    def __init__(self, folder: Path):
        self.path = Path(folder) / FILE_NAME
        self._loaded: _Loaded | None = None
        self._damage: tuple[tuple[int, int], str] | None = None
        self._lock = threading.Lock()

    # -- reading -----------------------------------------------------------------------
    def _current(self) -> _Loaded | None:
        """The file's contents, reloaded and validated when another writer replaced it; None when
        there is no file or it is damaged (:meth:`damage` says why)."""
        try:
            stat = self.path.stat()
        except FileNotFoundError:
            return None
        stamp = (stat.st_mtime_ns, stat.st_size)
        with self._lock:
            if self._damage is not None and self._damage[0] == stamp:
                return None
            if self._loaded is None or self._loaded.stamp != stamp:
                self._loaded, self._damage = None, None
                try:
                    loaded = self._load(stamp)
                except ArrayFileUnusable as exc:
                    self._damage = (stamp, str(exc))
                    return None
                self._loaded = loaded
            return self._loaded

    def _load(self, stamp: tuple[int, int]) -> _Loaded:
        try:
            manifest = read_manifest(self.path, KIND, READABLE_FORMATS)
            # Mapped, not read: at 412k names the vectors are 630 MB, read through the zip in 1.9 s.
            _, arrays = read_array_file(self.path, KIND, READABLE_FORMATS, str(manifest.get("key")), mapped=True)
            if manifest["format"] == 1:
                keys, names = from_text(arrays["keys"]), from_text(arrays["names"])
                problem = _text_problem(keys, names)
            else:
                keys = TextColumn(arrays["keys"], arrays["key_offsets"])
                names, problem = TextColumn(arrays["names"], arrays["name_offsets"]), None
        except ArrayFileUnusable:
            raise
        except (KeyError, ValueError, UnicodeDecodeError) as exc:
            raise ArrayFileUnusable(f"{self.path} is damaged ({exc})") from None
        vectors = arrays.get("vectors", np.zeros((0, 0)))
        problem = problem or _validated(keys, names, vectors)
        if problem:
            raise ArrayFileUnusable(f"{self.path} is damaged: {problem}")
        return _Loaded(stamp, str(manifest.get("key")), str(manifest.get("embedder")), keys, names,
                       np.ascontiguousarray(vectors, dtype=np.float32))

    def damage(self, space: str | None = None, dimension: int | None = None) -> str | None:
        """Why the file cannot be used (None: it can, or there is none); with the embedder's
        name and width (``space``, ``dimension``), also an index of that embedder whose vectors
        have another width."""
        loaded = self._current()
        with self._lock:
            if self._damage is not None:
                return self._damage[1]
        if loaded is not None and loaded.keys and space == loaded.embedder and dimension is not None \
                and loaded.vectors.shape[1] != dimension:
            return (f"{self.path} is damaged: its vectors have {loaded.vectors.shape[1]} dimensions, the embedder "
                    f"{space} gives {dimension}")
        return None

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
        if loaded is None:
            damage = self.damage()
            if damage:
                raise EntityVectorsDamaged(f"{damage}: run `python -m workbench --workspace {self.path.parent} "
                                           "repair` to build it again from the record")
            return []
        if k <= 0 or not loaded.keys or (space is not None and space != loaded.embedder):
            return []
        query = np.asarray(vector, dtype=np.float32).ravel()
        if query.shape[0] != loaded.vectors.shape[1]:
            raise EntityVectorsDamaged(
                f"{self.path} is damaged: its vectors have {loaded.vectors.shape[1]} dimensions, the embedder "
                f"{loaded.embedder} gives {query.shape[0]}: run `python -m workbench --workspace {self.path.parent} "
                "repair` to build it again from the record")
        norm = float(np.linalg.norm(query))
        scores = similarities(loaded.vectors, query / norm if norm else query)
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
             vectors_for: Callable[[list[str]], np.ndarray], dimension: int | None = None) -> int:
        """Make the index hold exactly ``names`` (key -> name); returns the entries changed.

        A name the index holds already, under any key, keeps its vector (an alias that re-keys an
        entity embeds nothing); ``vectors_for`` embeds the other names (unit vectors, each name
        once), :data:`SYNC_BATCH` rows at a time. A change of embedder (or of ``dimension``, the
        embedder's width), or a damaged file, embeds every name again.
        """
        loaded = self._current()
        if loaded is not None and (loaded.embedder != embedder_name or (len(loaded.keys) and dimension is not None
                                                                        and loaded.vectors.shape[1] != dimension)):
            loaded = None  # another embedder's, or of a width this one does not give: every row again
        held = set(zip(loaded.keys, loaded.names)) if loaded is not None else set()
        keys = sorted(names)
        changed = sum((key, names[key]) not in held for key in keys)
        gone = len(held) - (len(keys) - changed)
        if loaded is not None and not changed and not gone and loaded.version == version:
            return 0
        row_of_name = loaded.row_of_name() if loaded is not None and len(loaded.keys) else {}
        kept_vectors = loaded.vectors if row_of_name and loaded is not None else None

        def blocks() -> Iterator[np.ndarray]:
            """The rows in key order, :data:`SYNC_BATCH` at a time: names held copied from the old
            index, the others embedded; never the whole matrix in memory (630 MB at 412k names)."""
            for lo in range(0, len(keys), SYNC_BATCH):
                block_names = [names[key] for key in keys[lo:lo + SYNC_BATCH]]
                held_rows = [i for i, name in enumerate(block_names) if name in row_of_name]
                new_rows = [i for i, name in enumerate(block_names) if name not in row_of_name]
                new = list(dict.fromkeys(block_names[i] for i in new_rows))
                embedded = np.asarray(vectors_for(new), dtype=np.float32) if new else None
                width = kept_vectors.shape[1] if kept_vectors is not None else embedded.shape[1] \
                    if embedded is not None else 0
                block = np.zeros((len(block_names), width), dtype=np.float32)
                if held_rows and kept_vectors is not None:
                    block[held_rows] = kept_vectors[[row_of_name[block_names[i]] for i in held_rows]]
                if embedded is not None:
                    at = {name: i for i, name in enumerate(new)}
                    block[new_rows] = embedded[[at[block_names[i]] for i in new_rows]]
                yield block

        self._write(keys, [names[key] for key in keys], blocks(), version, embedder_name)
        return changed + gone

    def names(self) -> list[str]:
        """The names held, one per row (empty when there is no usable file)."""
        loaded = self._current()
        return list(loaded.names) if loaded is not None else []

    def vectors_of(self, texts: Iterable[str]) -> dict[str, np.ndarray]:
        """The stored vector of each of ``texts`` that is a name in the index (of the embedder
        :meth:`space` names)."""
        loaded = self._current()
        if loaded is None or not len(loaded.keys):
            return {}
        row_of_name = loaded.row_of_name()
        return {text: np.array(loaded.vectors[row_of_name[text]]) for text in texts if text in row_of_name}

    def _write(self, keys: list[str], names: list[str], blocks: Iterable[np.ndarray], version: str,
               embedder: str) -> None:
        # Written beside its place and renamed over it; the partial file is removed on any failure.
        # The vectors are streamed into the file; the next read maps it (and checks it).
        columns = dict(zip(("keys", "key_offsets"), TextColumn.arrays(keys)))
        columns.update(zip(("names", "name_offsets"), TextColumn.arrays(names)))
        write_array_file(self.path, KIND, FORMAT, version, columns, extra={"embedder": embedder},
                         streamed=("vectors", len(keys), blocks))
        with self._lock:
            self._loaded, self._damage = None, None
