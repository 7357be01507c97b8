"""The entity-name index, a part of the workspace (``ws.names``): kept equal to the graph's
entities by each write step, built when a workspace has none, and said damaged when it cannot be
used. Its file is :class:`~workbench.vectors.entity_vectors.EntityVectors`; each embedder's vector
space is synced on its own.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Callable, Protocol

from ..ingest.failures import StepFailed, describe_os_error
from ..vectors.entity_vectors import EntityVectors, EntityVectorsDamaged, remove_stale_temporaries
from ..vectors.index import space_suffix
from .write_lock import WorkspaceBusy

if TYPE_CHECKING:
    from ..context_graph.graph import ContextGraph
    from ..embedding import Embedder
    from ..record.store import Store
    from ..vectors.index import VectorIndex
    from .derivation import GraphDerivation, KeysChanged
    from .write_lock import WriteLock

__all__ = ["ENTITY_VECTORS_VERSION", "NameIndexUpkeep", "entity_vectors_key"]

#: Meta key: the workspace version whose entities the entity-name index holds.
ENTITY_VECTORS_VERSION = "entity_vectors_version"


def entity_vectors_key(space: str) -> str:
    """The meta key holding the version whose entities the entity collection of ``space`` holds."""
    return ENTITY_VECTORS_VERSION + space_suffix(space)


class IndexedWorkspace(Protocol):
    """What the name index reads of its workspace."""

    path: Path
    store: Store
    embedder: Embedder
    entity_vectors: EntityVectors
    lock: WriteLock
    read_only: bool
    derivation: GraphDerivation

    @property
    def graph(self) -> ContextGraph: ...

    @property
    def vectors(self) -> VectorIndex: ...

    @property
    def interrupted(self) -> bool: ...


class NameIndexUpkeep:
    """The entity-name index of one workspace (see the module docstring)."""

    def __init__(self, ws: IndexedWorkspace) -> None:
        self.ws = ws
        self._legacy_looked_at = False  # see drop_legacy
        #: What the last sync not skipped compared: ``keys`` (those the derivation changed), or ``every name``.
        self.compared: str | None = None

    def sync(self, force: bool = False, progress: Callable[[int, int], None] | None = None) -> int:
        """Keep the entity-name index equal to the graph's entities. Returns the entries changed.

        Skipped when nothing changed since the last complete sync (unless ``force``, which also
        writes the index whole, folding in its delta: ``repair``). An index synced for the record
        the graph's derivation followed from is brought forward by the keys it changed alone
        (:attr:`GraphDerivation.keys_changed <workbench.workspace.derivation.GraphDerivation.keys_changed>`),
        with the same result as comparing every name. ``progress(rows, of rows)``
        follows the rows written (a long step on a first ingest of many names).
        """
        version = str(self.ws.store.version)
        mark = entity_vectors_key(self.ws.embedder.name)  # each vector space is synced on its own
        if not force and self.ws.store.meta(mark) == version and self.ws.entity_vectors.version() == version \
                and self.ws.entity_vectors.space() == self.ws.embedder.name:
            return 0
        remove_stale_temporaries(self.ws.path)  # left by a write killed or refused (disk full) before
        self.drop_legacy()
        graph = self.ws.graph  # first: a derivation it makes tells the keys it changed
        followed = None if force else self._followed(mark, version)
        dimension = getattr(self.ws.embedder, "dimension", None)
        try:
            changed = None
            if followed is not None:
                self.compared = "keys"
                changes = {key: graph.name(key) if key in graph else None for key in followed.keys}
                changed = self.ws.entity_vectors.sync_keys(changes, str(followed.since), version, self.ws.embedder.name,
                                                           self.ws.embedder.embed, dimension=dimension,
                                                           progress=progress)
            if changed is None:
                self.compared = "every name"
                wanted = {entity.key: entity.name for entity in graph.entities()}
                changed = self.ws.entity_vectors.sync(wanted, version, self.ws.embedder.name,
                                                   self.ws.embedder.embed, dimension=dimension, whole=force,
                                                   progress=progress)
        except OSError as exc:  # a full disk, an I/O error: the record is complete, this file is not
            raise StepFailed(
                f"writing {self.ws.entity_vectors.path} failed ({describe_os_error(exc)}); every change is kept in "
                f"the record: free disk space, then run `python -m workbench --workspace {self.ws.path} repair` "
                "(the next write step finishes it too)") from exc
        self.ws.store.set_meta(mark, version)
        return changed

    def _followed(self, mark: str, version: str) -> KeysChanged | None:
        """The keys the derivation of the record at ``version`` changed, when it followed the one
        for the record this index (and its meta mark) was last synced for; else None."""
        keys_changed = self.ws.derivation.keys_changed
        if keys_changed is None or str(keys_changed.version) != version:
            return None
        since = str(keys_changed.since)
        if self.ws.store.meta(mark) != since or self.ws.entity_vectors.version() != since \
                or self.ws.entity_vectors.space() != self.ws.embedder.name:
            return None
        return keys_changed

    def drop_legacy(self) -> None:
        """Remove the entity-name collection an earlier version kept in Chroma, when this workspace
        has no entity-name index yet; looked at once by this handle."""
        if not self._legacy_looked_at and self.ws.entity_vectors.version() is None \
                and self.ws.entity_vectors.damage() is None:
            self.ws.vectors.drop_legacy_entities()
        self._legacy_looked_at = True

    def damage(self) -> str | None:
        """Why the entity-name index cannot be used (see :meth:`EntityVectors.damage`), None if it can."""
        return self.ws.entity_vectors.damage(self.ws.embedder.name, getattr(self.ws.embedder, "dimension", None))

    def ensure(self) -> None:
        """Build the entity-name index if the folder has none (a workspace made before it existed).

        Also rebuilt when damaged, and synced when it was made for an older record while no
        writer is at work (a step died before syncing it). Skipped when another process is writing (name search uses the
        index as it is, or none). A read-only workspace (the MCP server) writes nothing: a damaged
        index then fails the search with :class:`EntityVectorsDamaged`, naming ``repair``. An index
        of another embedder (``embedding.backend`` switched) is not rebuilt on a read: name search
        finds nothing in it, like vector search, until ``ingest`` or ``repair`` syncs the new space.
        """
        damaged = self.damage() is not None
        built_for = self.ws.entity_vectors.version()
        if built_for is not None and not damaged:
            if built_for != str(self.ws.store.version) and not self.ws.read_only and not self.ws.interrupted \
                    and self.ws.entity_vectors.space() == self.ws.embedder.name and self.ws.lock.try_take():
                # Made for an older record and no writer at work: a step died before it synced it.
                try:
                    self.sync()
                except (AttributeError, OSError, StepFailed):  # a scoped view, a full disk: used as it is
                    pass
                finally:
                    self.ws.lock.release()
            return
        if not len(self.ws.graph):
            return
        if self.ws.read_only:
            if damaged:  # the search itself says so, naming repair
                return
            raise EntityVectorsDamaged(f"the entity-name index {self.ws.entity_vectors.path} is missing: run "
                                       f"`python -m workbench --workspace {self.ws.path} repair` to build it from the record")
        try:
            with self.ws.lock.hold():
                self.sync(force=True)
        except (WorkspaceBusy, AttributeError, OSError, StepFailed):  # busy, a read-only scoped view, a full disk
            pass
