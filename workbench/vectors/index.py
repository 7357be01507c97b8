"""The Chroma collection of chunk vectors.

The store is embedded in the workspace folder by default, or a shared ``chroma run`` server
(``vector_store.backend: server``). Collections are named
``<prefix>_<workspace id>_<kind>`` so several workspaces can share one server, and each
embedder's vectors (its *space*, named by the embedder's name) have collections of their own:
the bundled MiniLM run by torch keeps those original names, any other embedder gets
``<prefix>_<workspace id>_<kind>_<space>``, so switching ``embedding.backend`` never puts
vectors of two models in one collection. Vectors are always passed in: Chroma never embeds
anything itself (its default embedder would try to download a model). Entity-name vectors are
not here: :mod:`workbench.vectors.entity_vectors` keeps them as an exact index beside the record
(workspaces made before kept them in a collection ``<prefix>_<workspace id>_entities``, which
:meth:`VectorIndex.drop_legacy_entities` removes).

An embedded Chroma keeps every collection it opened in memory until its client is closed;
:meth:`VectorIndex.release` closes the client this process opened once no call is using it (an
ingest does so before it derives the graph), and the next call opens it again.

>>> space_suffix("all-MiniLM-L6-v2")
''
>>> space_suffix("all-MiniLM-L6-v2+onnx-int8-avx512_vnni-e1")
'_all-MiniLM-L6-v2-onnx-int8-avx512_vnni-e1-ad3dd569'
"""

from __future__ import annotations

import functools
import hashlib
import re
import threading
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterator, Sequence

import numpy as np

from ..embedding import LEGACY_NAME

__all__ = ["NeedsRepair", "VectorIndex", "VectorMatch", "VectorStoreMissing", "VectorStoreUnavailable", "chroma_client",
           "space_suffix"]

CHUNKS = "chunks"
#: The collection of entity-name vectors that earlier workspaces kept in Chroma.
LEGACY_ENTITIES = "entities"
#: Collection metadata: how many vectors were deleted from the collection since it was built.
DELETED_KEY = "deleted_vectors"
#: The name of a collection's copy while :meth:`VectorIndex.rebuild` makes it, after its own.
REBUILD_SUFFIX = "_rebuild"
#: Tries of one read before it gives up: the original may be deleted under it, then the copy renamed.
_READ_ATTEMPTS = 3


class VectorStoreUnavailable(RuntimeError):
    """The Chroma store cannot be opened or reached; the message says where and why."""


class NeedsRepair(RuntimeError):
    """A store derived from the record is missing, damaged or out of step with it; the message
    says which and names ``repair``. Never turned into an empty answer or a quieter mode."""


class VectorStoreMissing(NeedsRepair):
    """The chunk vectors are gone or fewer than the chunks stored (``rm -rf WS/chroma``, a dropped
    collection): searching would return nothing, or keyword hits only, without saying so."""


def _is_missing(exc: Exception) -> bool:
    """Whether Chroma said the collection does not exist (its NotFoundError moved between versions;
    a helper process's error names it as its ``kind``)."""
    return "does not exist" in str(exc) or "NotFoundError" in (type(exc).__name__, getattr(exc, "kind", None))


@dataclass(frozen=True)
class VectorMatch:
    """One nearest neighbour: an id and its cosine similarity to the query."""

    id: str
    similarity: float
    metadata: dict[str, Any] | None = None


def chroma_client(settings, workspace_dir: Path):
    """A Chroma client for the configured backend, with telemetry off."""
    import chromadb
    from chromadb.config import Settings as ChromaSettings

    chroma_settings = ChromaSettings(anonymized_telemetry=False)
    vs = settings.vector_store
    try:
        if vs.backend == "server":
            _answers_in_time(vs.host, vs.port, vs.timeout_seconds)
            client = chromadb.HttpClient(host=vs.host, port=vs.port, settings=chroma_settings)
            _with_timeout(client, vs.timeout_seconds)
            client.heartbeat()
            return client
        return chromadb.PersistentClient(path=str(workspace_dir / "chroma"), settings=chroma_settings)
    except Exception as exc:
        where = f"server {vs.host}:{vs.port}" if vs.backend == "server" else f"{workspace_dir / 'chroma'}"
        raise VectorStoreUnavailable(f"cannot open the Chroma store at {where}: {exc}") from exc


def _answers_in_time(host: str, port: int, seconds: float) -> None:
    """Raise unless the server's heartbeat answers within ``seconds``: chromadb makes its first
    request while the client is constructed, before :func:`_with_timeout` can bound it."""
    import urllib.request

    with urllib.request.urlopen(f"http://{host}:{port}/api/v2/heartbeat", timeout=seconds) as response:
        response.read()


def _with_timeout(client, seconds: float) -> None:
    """Bound every later request of a server client to ``seconds`` (chromadb 1.5 makes its HTTP
    session with no timeout: a stopped server hung every command)."""
    import httpx

    session = getattr(getattr(client, "_server", None), "_session", None)
    if not isinstance(session, httpx.Client):  # another chromadb: tests/reliability/test_vector_failures.py says
        raise VectorStoreUnavailable("this chromadb's HTTP client cannot be given a timeout")
    session.timeout = httpx.Timeout(seconds)


def space_suffix(space: str) -> str:
    """What the collections of the vector space ``space`` (an embedder's name) add to their names:
    nothing for the bundled MiniLM on torch, else the name in the characters Chroma allows and
    a hash of it (two names that read alike still get two collections)."""
    if space == LEGACY_NAME:
        return ""
    readable = re.sub(r"[^A-Za-z0-9_-]+", "-", space).strip("-_")[:200]
    return f"_{readable}-{hashlib.sha256(space.encode('utf-8')).hexdigest()[:8]}"


class _SharedClient:
    """A store's Chroma client and the collections opened through it, shared by the
    :class:`VectorIndex` of each vector space: opened on first use, closed by :meth:`release`
    when no call is using it."""

    def __init__(self, client) -> None:
        handed = hasattr(client, "get_or_create_collection")
        self._client = client if handed else None
        self._make = None if handed else client
        self._lock = threading.Lock()
        self._collections: dict[str, Any] = {}
        self._read_from: set[str] = set()  # collections read since the client opened: their vectors are loaded
        self._users = 0

    def client(self):
        with self._lock:  # opened once, whichever thread asks first
            if self._client is None:
                self._client = self._make()
            return self._client

    def cached(self, name: str):
        return self._collections.get(name)

    @property
    def is_open(self) -> bool:
        return self._client is not None

    def collection(self, name: str, open_it: Callable[[Any], Any]):
        """The collection ``name``, opened by ``open_it(client)`` the first time."""
        found = self._collections.get(name)
        if found is None:
            found = self._collections[name] = open_it(self.client())
        return found

    def forget(self) -> None:
        self._collections.clear()
        self._read_from.clear()

    def mark_read(self, name: str) -> None:
        self._read_from.add(name)

    def was_read(self, name: str) -> bool:
        return name in self._read_from

    @contextmanager
    def using(self) -> Iterator[None]:
        """One call's use of the client: :meth:`release` waits for none."""
        with self._lock:
            self._users += 1
        try:
            yield
        finally:
            with self._lock:
                self._users -= 1

    def release(self) -> bool:
        with self._lock:
            if self._make is None or self._client is None or self._users:
                return False
            client, self._client = self._client, None
            self._collections.clear()
            self._read_from.clear()
            close = getattr(client, "close", None)
            if close is not None:
                close()
            return True


def _in_use(method):
    """Run ``method`` as one use of the shared client (see :meth:`_SharedClient.using`)."""
    @functools.wraps(method)
    def used(self, *args, **kwargs):
        with self._shared.using():
            return method(self, *args, **kwargs)
    return used


class VectorIndex:
    """The workspace's Chroma collection of chunk vectors of one vector space."""

    def __init__(self, client, prefix: str, workspace_id: str, space: str = LEGACY_NAME,
                 guard: Callable[[str], str | None] | None = None,
                 verify: Callable[[VectorIndex], None] | None = None,
                 exists: Callable[[], bool] | None = None):
        """``client`` is a Chroma client, or a function making one on first use (so a step
        that touches no vector, such as re-ingesting an unchanged corpus, never opens Chroma).
        ``space`` is the name of the embedder whose vectors these collections hold; ``guard(space)``,
        asked before every search, says why that space cannot be searched now (None: it can);
        ``verify(index)``, asked next, raises :class:`NeedsRepair` when the store is missing or
        out of step with the record. ``exists()`` says whether the store is there at all: when it
        is not, reads find nothing and never open (so never create) it; only writes create it."""
        self._shared = client if isinstance(client, _SharedClient) else _SharedClient(client)
        self.space = space
        self._guard = guard
        self._verify = verify
        self._exists = exists
        self._prefix, self._workspace_id = prefix, workspace_id
        self._names = {CHUNKS: f"{prefix}_{workspace_id}_{CHUNKS}{space_suffix(space)}"}
        self._legacy = f"{prefix}_{workspace_id}_{LEGACY_ENTITIES}"  # the one an earlier version kept, whatever the space
        self._batch_size: int | None = None

    def in_space(self, space: str) -> VectorIndex:
        """The same store's collections of another vector space, through the same client."""
        return VectorIndex(self._shared, self._prefix, self._workspace_id, space, self._guard, self._verify,
                           self._exists)

    def collection_name(self, kind: str) -> str:
        """The name of the collection of ``kind`` (:data:`CHUNKS`) in this vector space."""
        return self._names[kind]

    @property
    def client(self):
        """The Chroma client, opened now if it is not open."""
        return self._shared.client()

    @property
    def is_open(self) -> bool:
        """Whether the client is open now (a read opens it; :meth:`release` closes it)."""
        return self._shared.is_open

    def release(self) -> bool:
        """Close the client this index opened, when no call is using it, so Chroma frees the
        collections it holds in memory (hundreds of MB for a large file's vectors); the next call
        opens it again. True when it was closed. A client handed in is never closed."""
        return self._shared.release()

    def vectors_loaded(self, kind: str) -> bool:
        """Whether this process read the collection since it opened the client: Chroma loads a
        collection's vectors at its first read (0.2-0.4 s for 20,000 chunks), later reads are quick."""
        return self._shared.was_read(self._names[kind])

    @_in_use
    def warm(self) -> None:
        """Open the client and the chunk collection now, if the store is there (a reader never
        creates it): Chroma's first count loads the collection."""
        if self._exists is None or self._exists():
            found = self.existing(CHUNKS)
            if found is not None:
                found.count()
                self._shared.mark_read(self._names[CHUNKS])

    @property
    def _batch(self) -> int:
        if self._batch_size is None:
            self._batch_size = max(1, min(int(self.client.get_max_batch_size()), 4000))
        return self._batch_size

    def collection(self, kind: str):
        """The collection, created when absent (writers only: readers use :meth:`existing`)."""
        name = self._names[kind]
        return self._shared.collection(name, lambda client: client.get_or_create_collection(
            name, configuration={"hnsw": {"space": "cosine"}}, embedding_function=None))

    def existing(self, kind: str):
        """The collection if the store and the collection exist, else None; creates nothing."""
        name = self._names[kind]
        found = self._shared.cached(name)
        if found is not None:
            return found
        if self._exists is not None and not self._exists():
            return None
        try:
            return self._shared.collection(name, lambda client: client.get_collection(name, embedding_function=None))
        except Exception as exc:
            if _is_missing(exc):
                return None
            raise

    def _read(self, kind: str, read: Callable[[Any], Any]) -> Any:
        """``read(collection)``, None when there is no collection. A collection another process
        rebuilt since this one opened it (:meth:`rebuild`) is opened again; in the instant between
        the original's deletion and the copy's rename, the copy (whole by then) is read."""
        for attempt in range(_READ_ATTEMPTS):
            col = self._readable(kind)
            if col is None:
                return None
            try:
                found = read(col)
                self._shared.mark_read(self._names[kind])
                return found
            except Exception as exc:
                if not _is_missing(exc) or attempt == _READ_ATTEMPTS - 1:
                    raise
            self._shared.forget()
        return None  # not reached: the last attempt returns or raises

    def _readable(self, kind: str):
        """The collection, else a rebuild's copy, else the collection again (the copy may have
        just taken its name), else None."""
        for find in (self.existing, self._rebuilt_copy, self.existing):
            col = find(kind)
            if col is not None:
                return col
        return None

    def _rebuilt_copy(self, kind: str):
        """The copy of a :meth:`rebuild` whose original is deleted and which is not renamed yet, else None."""
        name = self._names[kind] + REBUILD_SUFFIX
        try:
            return self._shared.collection(name, lambda client: client.get_collection(name, embedding_function=None))
        except Exception as exc:
            if _is_missing(exc):
                return None
            raise

    @_in_use
    def upsert(self, kind: str, ids: Sequence[str], vectors: np.ndarray,
               metadatas: Sequence[dict] | None = None) -> None:
        """Insert or replace vectors by id, in batches Chroma accepts."""
        for lo in range(0, len(ids), self._batch):
            hi = lo + self._batch
            self.collection(kind).upsert(
                ids=list(ids[lo:hi]),
                embeddings=np.asarray(vectors[lo:hi], dtype=np.float32),
                metadatas=list(metadatas[lo:hi]) if metadatas is not None else None,
            )

    @_in_use
    def delete(self, kind: str, ids: Sequence[str]) -> None:
        """Delete vectors by id, counting them in the collection's metadata (:meth:`deleted`)."""
        col = self.existing(kind) if ids else None
        if col is None:  # nothing stored: nothing to delete
            return
        for lo in range(0, len(ids), self._batch):
            col.delete(ids=list(ids[lo:lo + self._batch]))
        metadata = dict(self._fresh(kind).metadata or {})
        metadata[DELETED_KEY] = int(metadata.get(DELETED_KEY, 0)) + len(ids)
        col.modify(metadata=metadata)

    def _fresh(self, kind: str):
        """The collection as the store holds it now (another process may have changed its metadata)."""
        return self.client.get_collection(self._names[kind], embedding_function=None)

    @_in_use
    def deleted(self, kind: str) -> int:
        """Vectors deleted from the collection since it was built. Chroma keeps each one's slot
        in its HNSW index, on disk and in memory (chroma-core/chroma#2594); :meth:`rebuild` frees them."""
        return 0 if self.existing(kind) is None else int((self._fresh(kind).metadata or {}).get(DELETED_KEY, 0))

    @_in_use
    def rebuild(self, kind: str) -> int:
        """Copy the collection's vectors into a new collection that then takes its name, so the
        slots of deleted vectors are gone (writers only; a reader holding the old collection opens
        the new one on its next read). Returns the vectors copied.

        A rebuild cut short is finished or undone by :meth:`finish_rebuild`: the copy is whole
        before the original is deleted."""
        old = self.existing(kind)
        if old is None:
            return 0
        name, client = self._names[kind], self.client
        self._drop(name + REBUILD_SUFFIX)  # a copy a rebuild cut short left
        copy = client.create_collection(name + REBUILD_SUFFIX, configuration={"hnsw": {"space": "cosine"}},
                                        embedding_function=None)
        ids = sorted(self.ids(kind))
        for lo in range(0, len(ids), self._batch):
            part = old.get(ids=ids[lo:lo + self._batch], include=["embeddings", "metadatas"])
            copy.add(ids=part["ids"], embeddings=np.asarray(part["embeddings"], dtype=np.float32),
                     metadatas=part["metadatas"])
        self._drop(name)
        copy.modify(name=name)
        return len(ids)

    @_in_use
    def finish_rebuild(self, kind: str) -> bool:
        """Finish a :meth:`rebuild` cut short: a whole copy takes the name the original no longer
        holds, a partial one is dropped. True when one was found."""
        if self._exists is not None and not self._exists():
            return False
        name, client = self._names[kind], self.client
        if name + REBUILD_SUFFIX not in {getattr(c, "name", c) for c in client.list_collections()}:
            return False
        if self.existing(kind) is None:
            client.get_collection(name + REBUILD_SUFFIX, embedding_function=None).modify(name=name)
        else:
            self._drop(name + REBUILD_SUFFIX)
        self._shared.forget()
        return True

    def _drop(self, name: str) -> None:
        try:
            self.client.delete_collection(name)
        except Exception as exc:
            if not _is_missing(exc):
                raise
        self._shared.forget()

    @_in_use
    def ids(self, kind: str) -> set[str]:
        """Every id stored in a collection (none when it does not exist)."""
        out: set[str] = set()
        col = self.existing(kind)
        if col is None:
            return out
        total = col.count()
        for offset in range(0, total, self._batch):
            out.update(col.get(limit=self._batch, offset=offset, include=[])["ids"])
        return out

    @_in_use
    def count(self, kind: str) -> int:
        return self._read(kind, lambda col: col.count()) or 0

    @_in_use
    def query(self, kind: str, vector: np.ndarray, k: int, where: dict | None = None) -> list[VectorMatch]:
        """The ``k`` nearest ids by cosine similarity, best first.

        Raises :class:`VectorStoreUnavailable` when the guard says the space is not searchable,
        :class:`NeedsRepair` when ``verify`` finds the store missing or out of step."""
        problem = self._guard(self.space) if self._guard is not None else None
        if problem:
            raise VectorStoreUnavailable(problem)
        if self._verify is not None:
            self._verify(self)
        if k <= 0:
            return []
        # Chroma returns what there is when asked for more (nothing from an empty collection),
        # so no count() first: that is a second round trip per query.
        res = self._read(kind, lambda col: col.query(query_embeddings=[np.asarray(vector, dtype=np.float32)],
                                                     n_results=k, where=where, include=["distances", "metadatas"]))
        if res is None:  # nothing was ever stored (verify has said whether something should be)
            return []
        ids, dists, metas = res["ids"][0], res["distances"][0], (res.get("metadatas") or [[None] * len(res["ids"][0])])[0]
        return [VectorMatch(i, 1.0 - float(d), m) for i, d, m in zip(ids, dists, metas)]

    @_in_use
    def get_vectors(self, kind: str, ids: Sequence[str]) -> dict[str, np.ndarray]:
        res = self._read(kind, lambda col: col.get(ids=list(ids), include=["embeddings"])) if ids else None
        if res is None:
            return {}
        return {i: np.asarray(v, dtype=np.float32) for i, v in zip(res["ids"], res["embeddings"])}

    @_in_use
    def drop_legacy_entities(self) -> None:
        """Delete the entity-name collection an earlier version kept here, if there is one."""
        if self._exists is not None and not self._exists():
            return
        try:
            self.client.delete_collection(self._legacy)
        except Exception:  # absent: nothing to do
            pass

    @_in_use
    def drop(self) -> None:
        """Delete the collections (used when a workspace is cleared)."""
        for name in [*self._names.values(), self._legacy]:
            try:
                self.client.delete_collection(name)
            except Exception:  # already absent
                pass
        self._shared.forget()
