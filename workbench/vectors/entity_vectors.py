"""Entity-name vectors: an exact cosine index over the graph's entities, kept beside the record.

GraphRAG seeds entities by the similarity of their names to the query. The names are derived
data (a merge renames, a split adds), tens of thousands on a real corpus, and searched a handful
at a time, so an exact search over one matrix beats an approximate index: building an HNSW
collection costs far more than a matrix product over the names, and nothing is approximate.

The index is one file, ``entity_vectors.npz`` in the workspace folder: the entity keys and
names (each column one UTF-8 buffer with offsets, a string decoded when read: fixed-width string
arrays would take the longest name's width for every row, and the JSON text of format 1, still
read, was slow to parse at a fresh process's first query), their unit vectors, the
record version and the embedder they were computed with. A write that changes few rows of a large
index writes only those, to ``entity_vectors.delta.npz``: the rows added or renamed and the
positions of the base rows they supersede, tied to the base by its checksum and version (rewriting every
vector for a few dozen new names made one note's write as slow as a large one's). Past a tenth of the
base, the base is written whole and the delta removed. A process that follows its writes (a watch)
finds the delta from the keys its derivation changed, not from every name
(:mod:`~workbench.vectors.entity_changes`). Each file is replaced by an atomic rename,
so a reader (the app, the MCP server) sees an old index or the new one, never half of one: a
delta left beside a base it was not written over is never applied. A name is embedded once per embedder: a sync copies the vector
of every name the index holds already (under any key) and embeds only the others. The index is
the only copy of the name vectors (the record's embedding cache keeps chunk texts: names there
doubled the space they take), so a damaged file, or a change of embedder, embeds
every name again.

The file is an :mod:`~workbench.runtime.array_file` (manifest, SHA-256 of the arrays), and every load is
validated: one row per key and name, a 2-D float matrix of finite unit vectors, the width the
query has. A file failing any of these is *damaged*: a search raises :class:`EntityVectorsDamaged`
(naming ``repair``), and the next writer, or ``repair``, builds it again. A file of the earlier
format (no manifest) counts as damaged too, so it is rebuilt once.
"""

from __future__ import annotations

import os
import threading
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Callable, Iterable, Iterator, Mapping, Sequence

import numpy as np

from ..runtime.array_file import ArrayFileUnusable, TextColumn, from_text, read_array_file, read_manifest, write_array_file
from ..runtime.threads import thread_map, usable_cores
from ..runtime.gc_paused import gc_paused
from .entity_changes import changes_from, follow_keys, strings
from .index import NeedsRepair, VectorMatch

__all__ = ["DELTA_FILE_NAME", "EntityVectors", "EntityVectorsDamaged", "FILE_NAME", "remove_stale_temporaries", "similarities"]

#: Fewest rows a block of :func:`similarities` takes to a thread of its own.
_BLOCK_ROWS = 50_000


def similarities(vectors: np.ndarray, query: np.ndarray) -> np.ndarray:
    """``vectors @ query``, in row blocks on the shared pool and with no BLAS thread. OpenBLAS's
    worker spins for a while after each call it shares, and the PageRank walk that follows a
    name search lost a core to it. ``einsum`` is numpy's own loop and releases the GIL.

    >>> similarities(np.array([[1.0, 0.0], [0.6, 0.8]], dtype=np.float32), np.array([1.0, 0.0], dtype=np.float32))
    array([1. , 0.6], dtype=float32)
    """
    parts = max(1, min(usable_cores(), len(vectors) // _BLOCK_ROWS))
    blocks = np.array_split(vectors, parts) if parts > 1 else [vectors]
    return np.concatenate(thread_map(lambda block: np.einsum("ij,j->i", block, query), blocks))

FILE_NAME = "entity_vectors.npz"
#: The array file's kind and format (see :mod:`workbench.runtime.array_file`).
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
#: The file a sync writes when few rows changed: the rows added or renamed and the positions of the
#: base file's rows they supersede, tied to that base by its checksum (see :meth:`EntityVectors.sync`).
DELTA_FILE_NAME = "entity_vectors.delta.npz"
DELTA_KIND, DELTA_FORMAT = "entity_vectors_delta", 1
#: A base of fewer rows is written whole at every sync (a few MB: cheaper than keeping two files).
DELTA_FROM_ROWS = 20_000
#: The delta's rows (added plus superseded) may reach this share of the base's before a sync
#: writes the base whole again and drops the delta: a write rewrites at most a tenth of the
#: index, and a search reads at most a tenth more rows.
DELTA_SHARE = 0.1


@dataclass(eq=False)
class _Delta:
    """The delta file's rows: ``keys``, ``names`` and ``vectors`` added, ``superseded`` base rows."""

    stamp: tuple[int, int]
    version: str
    keys: Sequence[str]
    names: Sequence[str]
    vectors: np.ndarray
    superseded: np.ndarray


@dataclass(eq=False)
class _Loaded:
    """What the files held when last read: the base's rows (``keys``, ``names``, ``vectors``;
    ``stamp``: its mtime and size), its ``checksum``, and the delta over it, if any. Positions past
    the base's last row are the delta's rows."""

    stamp: tuple[int, int]
    version: str
    embedder: str
    keys: Sequence[str]
    names: Sequence[str]
    vectors: np.ndarray
    checksum: str = ""
    delta: _Delta | None = None
    _row_of_name: dict[str, int] | None = None
    _live: np.ndarray | None = None

    @property
    def current_version(self) -> str:
        """The record version the rows are for: the delta's when there is one."""
        return self.delta.version if self.delta is not None else self.version

    @property
    def width(self) -> int:
        return self.vectors.shape[1] if len(self.keys) or self.delta is None else self.delta.vectors.shape[1]

    def live(self) -> np.ndarray:
        """Whether each base row is still in the index (the delta supersedes the others)."""
        if self._live is None:
            live = np.ones(len(self.keys), dtype=bool)
            if self.delta is not None:
                live[self.delta.superseded] = False
            self._live = live
        return self._live

    def rows(self) -> Iterator[tuple[str, str]]:
        """``(key, name)`` of every row in the index: the base's not superseded, then the delta's."""
        if self.delta is None:
            yield from zip(self.keys, self.names)
            return
        live = self.live()
        yield from ((key, name) for key, name, kept in zip(self.keys, self.names, live.tolist()) if kept)
        yield from zip(self.delta.keys, self.delta.names)

    def count(self) -> int:
        return int(self.live().sum()) + len(self.delta.keys) if self.delta is not None else len(self.keys)

    def key_at(self, position: int) -> str:
        base = len(self.keys)
        return self.keys[position] if position < base else self.delta.keys[position - base]  # type: ignore[union-attr]

    def name_at(self, position: int) -> str:
        base = len(self.keys)
        return self.names[position] if position < base else self.delta.names[position - base]  # type: ignore[union-attr]

    def vectors_at(self, positions: Sequence[int]) -> np.ndarray:
        """The vectors at ``positions`` (of the base or of the delta), as one matrix."""
        at = np.asarray(positions, dtype=np.int64)
        if self.delta is None:
            return np.asarray(self.vectors[at])
        base = len(self.keys)
        out = np.empty((len(at), self.width), dtype=np.float32)
        in_base = at < base
        out[in_base] = self.vectors[at[in_base]]
        out[~in_base] = self.delta.vectors[at[~in_base] - base]
        return out

    def scores(self, query: np.ndarray) -> np.ndarray:
        """Cosine of every position with the unit ``query``; -inf where a base row is superseded."""
        scores = similarities(self.vectors, query) if len(self.keys) else np.zeros(0, dtype=np.float32)
        if self.delta is None:
            return scores
        scores[~self.live()] = -np.inf
        if not len(self.delta.keys):
            return scores
        return np.concatenate([scores, similarities(self.delta.vectors, query)])

    def row_of_name(self, base_names: list[str] | None = None) -> dict[str, int]:
        """Name -> the first position holding it (superseded rows too: a name's vector is the
        name's, whichever key held it), made on first use; ``base_names``: the base's names
        already decoded by the caller."""
        if self._row_of_name is None:
            names = base_names if base_names is not None else strings(self.names)
            row_of = dict(zip(reversed(names), range(len(names) - 1, -1, -1)))
            if self.delta is not None:
                for row, name in enumerate(self.delta.names, start=len(self.keys)):
                    row_of.setdefault(name, row)
            self._row_of_name = row_of
        return self._row_of_name


def _stamp(path: Path) -> tuple[int, int] | None:
    """A file's mtime and size (None: no file), to tell when another writer replaced it."""
    try:
        stat = path.stat()
    except FileNotFoundError:
        return None
    return stat.st_mtime_ns, stat.st_size


class EntityVectors:
    """The entity-name index of one workspace folder; safe to share between threads.

    Two files: the base, :data:`FILE_NAME`, and the delta over it, :data:`DELTA_FILE_NAME`, which a
    sync writes instead of the whole base when few rows changed (see :meth:`sync`);
    ``delta_from_rows`` is the fewest base rows a delta is written over.
    """

    def __init__(self, folder: Path, delta_from_rows: int = DELTA_FROM_ROWS):
        self.path = Path(folder) / FILE_NAME
        self.delta_path = Path(folder) / DELTA_FILE_NAME
        self.delta_from_rows = delta_from_rows
        self._loaded: _Loaded | None = None
        self._loaded_for: tuple | None = None  # the two files' stamps when _loaded was read
        self._damage: tuple[tuple, str] | None = None
        self._base_alone: _Loaded | None = None  # an intact base under a damaged delta: its vectors reused
        self._lock = threading.Lock()

    # -- reading -----------------------------------------------------------------------
    def _current(self) -> _Loaded | None:
        """The files' contents, read again when another writer replaced either (the base only
        when it was the base); None when there is no base or a file is damaged (:meth:`damage`)."""
        stamp = _stamp(self.path)
        if stamp is None:
            return None
        stamps = (stamp, _stamp(self.delta_path))
        with self._lock:
            if self._damage is not None and self._damage[0] == stamps:
                return None
            if self._loaded_for != stamps:
                base = self._loaded if self._loaded is not None and self._loaded.stamp == stamp else None
                self._loaded, self._loaded_for, self._damage, self._base_alone = None, None, None, None
                try:
                    base = base if base is not None else self._load(stamp)
                except ArrayFileUnusable as exc:
                    self._damage = (stamps, str(exc))
                    return None
                try:
                    delta = self._load_delta(base) if stamps[1] is not None else None
                except ArrayFileUnusable as exc:
                    self._damage, self._base_alone = (stamps, str(exc)), base
                    return None
                self._loaded = replace(base, delta=delta, _row_of_name=None, _live=None)
                self._loaded_for = stamps
            return self._loaded

    def _load(self, stamp: tuple[int, int]) -> _Loaded:
        try:
            manifest = read_manifest(self.path, KIND, READABLE_FORMATS)
            # Mapped, not read: a large index's vectors are hundreds of megabytes.
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
                       np.ascontiguousarray(vectors, dtype=np.float32), checksum=_base_identity(manifest))

    def _load_delta(self, base: _Loaded) -> _Delta | None:
        """The delta over ``base``; None when there is none, or it was written over another base
        (a sync that wrote the base whole died before removing it): such a delta is never applied."""
        stamp = _stamp(self.delta_path)
        if stamp is None:
            return None
        try:
            manifest = read_manifest(self.delta_path, DELTA_KIND, DELTA_FORMAT)
            if manifest.get("base") != base.checksum or manifest.get("embedder") != base.embedder:
                return None
            _, arrays = read_array_file(self.delta_path, DELTA_KIND, DELTA_FORMAT, str(manifest.get("key")))
            keys = TextColumn(arrays["keys"], arrays["key_offsets"])
            names = TextColumn(arrays["names"], arrays["name_offsets"])
            vectors, superseded = arrays["vectors"], arrays["superseded"]
        except ArrayFileUnusable as exc:
            if _stamp(self.delta_path) is None:  # removed by a writer since: there is no delta
                return None
            raise ArrayFileUnusable(f"{self.delta_path} is damaged ({exc})") from None
        except (KeyError, ValueError, UnicodeDecodeError) as exc:
            raise ArrayFileUnusable(f"{self.delta_path} is damaged ({exc})") from None
        problem = _validated(keys, names, vectors)
        if not problem and len(keys) and len(base.keys) and vectors.shape[1] != base.vectors.shape[1]:
            problem = f"its vectors have {vectors.shape[1]} dimensions, the base's {base.vectors.shape[1]}"
        if not problem and (superseded.ndim != 1 or not np.issubdtype(superseded.dtype, np.integer)
                            or (len(superseded) and (superseded.min() < 0 or superseded.max() >= len(base.keys)))
                            or len(np.unique(superseded)) != len(superseded)):
            problem = "the base rows it supersedes are not distinct rows of the base"
        if problem:
            raise ArrayFileUnusable(f"{self.delta_path} is damaged: {problem}")
        if not len(keys):  # written with no rows: of no width
            vectors = np.zeros((0, base.vectors.shape[1]), dtype=np.float32)
        return _Delta(stamp, str(manifest.get("key")), keys, names, np.asarray(vectors, dtype=np.float32),
                      np.asarray(superseded, dtype=np.int64))

    def damage(self, space: str | None = None, dimension: int | None = None) -> str | None:
        """Why the files cannot be used (None: they can, or there is none); with the embedder's
        name and width (``space``, ``dimension``), also an index of that embedder whose vectors
        have another width."""
        loaded = self._current()
        with self._lock:
            if self._damage is not None:
                return self._damage[1]
        if loaded is not None and loaded.count() and space == loaded.embedder and dimension is not None \
                and loaded.width != dimension:
            return (f"{self.path} is damaged: its vectors have {loaded.width} dimensions, the embedder "
                    f"{space} gives {dimension}")
        return None

    def version(self) -> str | None:
        """The record version the index was built for (None before the first build)."""
        loaded = self._current()
        return loaded.current_version if loaded else None

    def space(self) -> str | None:
        """The name of the embedder the vectors were computed with (None before the first build)."""
        loaded = self._current()
        return loaded.embedder if loaded else None

    def ids(self) -> set[str]:
        loaded = self._current()
        return {key for key, _ in loaded.rows()} if loaded else set()

    def count(self) -> int:
        loaded = self._current()
        return loaded.count() if loaded else 0

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
        if k <= 0 or not loaded.count() or (space is not None and space != loaded.embedder):
            return []
        query = np.asarray(vector, dtype=np.float32).ravel()
        if query.shape[0] != loaded.width:
            raise EntityVectorsDamaged(
                f"{self.path} is damaged: its vectors have {loaded.width} dimensions, the embedder "
                f"{loaded.embedder} gives {query.shape[0]}: run `python -m workbench --workspace {self.path.parent} "
                "repair` to build it again from the record")
        norm = float(np.linalg.norm(query))
        scores = loaded.scores(query / norm if norm else query)
        key_at, total = loaded.key_at, len(scores)
        wanted = k
        while True:  # the best few first; more only when ``keep`` turned too many away
            rows = np.argpartition(-scores, wanted)[:wanted] if wanted < total else range(total)
            order = sorted((i for i in rows if scores[i] > -np.inf), key=lambda i: (-float(scores[i]), key_at(i)))
            out = [VectorMatch(key_at(i), float(scores[i]), {"name": loaded.name_at(i)})
                   for i in order if keep is None or keep(key_at(i))]
            if len(out) >= k or wanted >= total:
                return out[:k]
            wanted *= 8

    # -- writing -----------------------------------------------------------------------
    def sync(self, names: Mapping[str, str], version: str, embedder_name: str,
             vectors_for: Callable[[list[str]], np.ndarray], dimension: int | None = None,
             whole: bool = False, progress: Callable[[int, int], None] | None = None) -> int:
        """Make the index hold exactly ``names`` (key -> name); returns the entries changed.

        A name the index holds already, under any key, keeps its vector (an alias that re-keys an
        entity embeds nothing); ``vectors_for`` embeds the other names (unit vectors, each name
        once), :data:`SYNC_BATCH` rows at a time. A change of embedder (or of ``dimension``, the
        embedder's width), or a damaged file, embeds every name again.

        Over a base of at least ``delta_from_rows`` rows, the rows added or renamed since the base
        and the base rows they supersede are written as the delta, while they are at most
        :data:`DELTA_SHARE` of the base; past that, or when ``whole``, the base is written whole
        and the delta removed, so one note added does not rewrite every vector.
        ``progress(rows written, rows to write)`` is called after each block of rows.
        """
        loaded = self._current()
        if loaded is not None and (loaded.embedder != embedder_name or (loaded.count() and dimension is not None
                                                                        and loaded.width != dimension)):
            loaded = None  # another embedder's, or of a width this one does not give: every row again
        # Under a damaged delta the base's vectors are still the names' own: copied, not embedded again.
        reuse = loaded if loaded is not None else self._intact_base(embedder_name, dimension)
        keys = sorted(names)
        added: list[str] = keys
        superseded: list[int] = []
        changed, gone = len(keys), 0
        if loaded is not None:
            with gc_paused():  # some million strings and pairs, none cyclic: the collector halved its speed
                added, superseded, kept_superseded = changes_from(loaded, names, keys)
            # Held now: a kept base row the current delta does not supersede, or a row of that delta.
            in_delta = set(zip(loaded.delta.keys, loaded.delta.names)) if loaded.delta is not None else set()
            changed = sum((key, names[key]) not in in_delta for key in (*added, *kept_superseded))
            gone = loaded.count() - (len(keys) - changed)
            if not changed and not gone and loaded.current_version == version \
                    and not (whole and loaded.delta is not None):
                return 0
        if loaded is not None and not whole and len(loaded.keys) >= self.delta_from_rows:
            if len(added) + len(superseded) <= DELTA_SHARE * len(loaded.keys):
                added_names = [names[key] for key in added]
                self._write_delta(loaded, added, added_names, _row_blocks(added_names, loaded, vectors_for, progress),
                                  superseded, version)
                return changed + gone
        self._write(keys, [names[key] for key in keys],
                    _row_blocks([names[key] for key in keys], reuse, vectors_for, progress), version, embedder_name)
        return changed + gone

    def sync_keys(self, changes: Mapping[str, str | None], since: str, version: str, embedder_name: str,
                  vectors_for: Callable[[list[str]], np.ndarray], dimension: int | None = None,
                  progress: Callable[[int, int], None] | None = None) -> int | None:
        """Bring an index made for the record at ``since`` to ``version`` by the keys whose
        entities changed between the two (key -> its name now, None: gone); returns the entries
        changed, as :meth:`sync` of every name would, whose files it writes
        (:func:`~workbench.vectors.entity_changes.follow_keys`). None, and nothing written, when
        the index is not of ``since`` and of this embedder (and ``dimension``): :meth:`sync` then.
        """
        loaded = self._current()
        if loaded is None or loaded.current_version != since or loaded.embedder != embedder_name \
                or (loaded.count() and dimension is not None and loaded.width != dimension):
            return None
        followed = follow_keys(loaded, changes)
        if not followed.changed and not followed.gone and since == version:
            return 0
        if len(loaded.keys) >= self.delta_from_rows \
                and len(followed.keys) + len(followed.superseded) <= DELTA_SHARE * len(loaded.keys):
            blocks = _row_blocks(followed.names, loaded, vectors_for, progress, followed.row_of_name)
            self._write_delta(loaded, followed.keys, followed.names, blocks, followed.superseded, version)
        else:
            names = followed.every_name(loaded, changes)
            keys = sorted(names)
            self._write(keys, [names[key] for key in keys],
                        _row_blocks([names[key] for key in keys], loaded, vectors_for, progress), version, embedder_name)
        return followed.changed + followed.gone

    def _intact_base(self, embedder_name: str, dimension: int | None) -> _Loaded | None:
        """The base, when it is intact and of this embedder but its delta is damaged."""
        with self._lock:
            base = self._base_alone
        if base is None or base.embedder != embedder_name or (dimension is not None and len(base.keys)
                                                               and base.vectors.shape[1] != dimension):
            return None
        return replace(base, delta=None, _row_of_name=None, _live=None)

    def names(self) -> list[str]:
        """The names held, one per row (empty when there is no usable file)."""
        loaded = self._current()
        return [name for _, name in loaded.rows()] if loaded is not None else []

    def vectors_of(self, texts: Iterable[str]) -> dict[str, np.ndarray]:
        """The stored vector of each of ``texts`` that is a name in the index (of the embedder
        :meth:`space` names)."""
        loaded = self._current()
        if loaded is None or not loaded.count():
            return {}
        row_of_name = loaded.row_of_name()
        return {text: loaded.vectors_at([row_of_name[text]])[0] for text in texts if text in row_of_name}

    def _write(self, keys: list[str], names: list[str], blocks: Iterable[np.ndarray], version: str,
               embedder: str) -> None:
        # Written beside its place and renamed over it; the partial file is removed on any failure.
        # The vectors are streamed into the file; the next read maps it (and checks it). A delta
        # left by a failure between the rename and its removal names the old base: never applied.
        columns = _text_columns(keys, names)
        write_array_file(self.path, KIND, FORMAT, version, columns, extra={"embedder": embedder},
                         streamed=("vectors", len(keys), blocks))
        self.delta_path.unlink(missing_ok=True)
        with self._lock:
            self._loaded, self._loaded_for, self._damage = None, None, None

    def _write_delta(self, loaded: _Loaded, keys: list[str], names: list[str], blocks: Iterable[np.ndarray],
                     superseded: list[int], version: str) -> None:
        columns = _text_columns(keys, names)
        columns["superseded"] = np.asarray(superseded, dtype=np.int64)
        write_array_file(self.delta_path, DELTA_KIND, DELTA_FORMAT, version, columns,
                         extra={"embedder": loaded.embedder, "base": loaded.checksum},
                         streamed=("vectors", len(keys), blocks))
        with self._lock:
            self._loaded_for = None  # the delta is read again, the base kept


def _text_columns(keys: list[str], names: list[str]) -> dict[str, np.ndarray]:
    """The key and name columns of a base or delta file."""
    columns = dict(zip(("keys", "key_offsets"), TextColumn.arrays(keys)))
    columns.update(zip(("names", "name_offsets"), TextColumn.arrays(names)))
    return columns


def _base_identity(manifest: dict) -> str:
    """What ties a delta to its base: the base's checksum and record version (a base written
    again for another version with the same rows has the same checksum)."""
    return f"{manifest.get('checksum')}@{manifest.get('key')}"


def _row_blocks(row_names: list[str], loaded: _Loaded | None, vectors_for: Callable[[list[str]], np.ndarray],
                progress: Callable[[int, int], None] | None = None,
                row_of_name: Mapping[str, int] | None = None) -> Iterator[np.ndarray]:
    """The vectors of ``row_names``, :data:`SYNC_BATCH` rows at a time: names ``loaded`` holds (base
    or delta, superseded rows too) copied, the others embedded; never the whole matrix in memory. ``progress(rows done, rows)`` follows each block.
    ``row_of_name``: where to copy each held name's vector from (else ``loaded.row_of_name()``)."""
    if row_of_name is None:
        row_of_name = loaded.row_of_name() if loaded is not None else {}
    for lo in range(0, len(row_names), SYNC_BATCH):
        block_names = row_names[lo:lo + SYNC_BATCH]
        held_rows = [i for i, name in enumerate(block_names) if name in row_of_name]
        new_rows = [i for i, name in enumerate(block_names) if name not in row_of_name]
        new = list(dict.fromkeys(block_names[i] for i in new_rows))
        embedded = np.asarray(vectors_for(new), dtype=np.float32) if new else None
        width = loaded.width if row_of_name and loaded is not None else embedded.shape[1] \
            if embedded is not None else 0
        block = np.zeros((len(block_names), width), dtype=np.float32)
        if held_rows and loaded is not None:
            block[held_rows] = loaded.vectors_at([row_of_name[block_names[i]] for i in held_rows])
        if embedded is not None:
            at = {name: i for i, name in enumerate(new)}
            block[new_rows] = embedded[[at[block_names[i]] for i in new_rows]]
        if progress is not None:
            progress(lo + len(block_names), len(row_names))
        yield block
