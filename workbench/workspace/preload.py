"""A workspace's reads started in the background: the graph while a page shows what the record
holds, and what a fresh process's first query needs while its model loads.

:class:`BackgroundReads` is mixed into :class:`~workbench.workspace.workspace.Workspace`, whose derivation
(``_derive``, ``_derive_key``, ``_derived``) and entity-name index it starts reading.
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING, Any, Callable

if TYPE_CHECKING:
    from ..vectors.entity_vectors import EntityVectors
    from ..context_graph.graph import ContextGraph

__all__ = ["BackgroundReads"]


class BackgroundReads:
    """Reads of the workspace's graph and name index on background threads."""

    if TYPE_CHECKING:  # what the workspace it is mixed into has
        _derived: Any
        _builder: threading.Thread | None
        _names_loader: threading.Thread | None
        _builder_lock: threading.Lock
        entity_vectors: EntityVectors

        def _derive_key(self) -> tuple: ...

        def _derive(self) -> Any: ...

        @property
        def graph(self) -> ContextGraph: ...

    def graph_if_ready(self, wait: float = 0.0) -> ContextGraph | None:
        """The context graph if it is derived for the record as it is now, or once it is within
        ``wait`` seconds; else None, the graph being built meanwhile in a background thread
        (a minute on 60k passages: a page can show what the record holds in the meantime)."""
        derived = self._derived
        if derived is not None and derived.version == self._derive_key():
            return derived.graph
        with self._builder_lock:
            if self._builder is None or not self._builder.is_alive():
                self._builder = threading.Thread(target=self._derive, name="derive-graph", daemon=True)
                self._builder.start()
            builder = self._builder
        builder.join(wait)
        return None if builder.is_alive() else self.graph

    def preload(self) -> None:
        """Start reading what a first query needs from disk, the graph (from its snapshot) and the
        entity-name index, each in a background thread, unless the graph is current. The caller
        loads the model meanwhile: a fresh process's first graphrag query does the three at once
        (the name index is mostly file reading and hashing, which leave the interpreter free, so it
        overlaps the graph's load)."""
        derived = self._derived
        if derived is not None and derived.version == self._derive_key():
            return

        def quietly(read: Callable[[], object]) -> Callable[[], None]:
            def run() -> None:
                try:
                    read()
                except Exception:  # noqa: BLE001 - the caller's own read does it again and reports what failed
                    pass
            return run

        with self._builder_lock:
            if self._builder is None or not self._builder.is_alive():
                self._builder = threading.Thread(target=quietly(self._derive), name="preload-graph", daemon=True)
                self._builder.start()
                self._names_loader = threading.Thread(target=quietly(self.entity_vectors.version),
                                                      name="preload-names", daemon=True)
                self._names_loader.start()
