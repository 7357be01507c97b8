"""A workspace's reads started in the background: the graph while a page shows what the record
holds, and what a fresh process's first query needs while its model loads.

:class:`BackgroundReads` is a part of :class:`~workbench.workspace.workspace.Workspace`: it starts
its derivation (:class:`~workbench.workspace.derivation.GraphDerivation`) and its entity-name
index reading on threads of their own.
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING, Callable

if TYPE_CHECKING:
    from ..context_graph.graph import ContextGraph
    from ..vectors.entity_vectors import EntityVectors
    from .derivation import GraphDerivation

__all__ = ["BackgroundReads"]


class BackgroundReads:
    """Reads of a workspace's graph and name index on background threads; ``graph()`` is the
    workspace's own read of its graph (pinned where the caller is)."""

    def __init__(self, derivation: GraphDerivation, entity_vectors: EntityVectors,
                 graph: Callable[[], ContextGraph]) -> None:
        self._derivation, self._entity_vectors, self._graph = derivation, entity_vectors, graph
        self._builder: threading.Thread | None = None
        self._names_loader: threading.Thread | None = None
        self._builder_lock = threading.Lock()

    def graph_if_ready(self, wait: float = 0.0) -> ContextGraph | None:
        """The context graph if it is derived for the record as it is now, or once it is within
        ``wait`` seconds; else None, the graph being built meanwhile in a background thread
        (a page can show what the record holds in the meantime)."""
        if self._derivation.is_current():
            return self._graph()
        with self._builder_lock:
            if self._builder is None or not self._builder.is_alive():
                self._builder = threading.Thread(target=self._derivation.current, name="derive-graph", daemon=True)
                self._builder.start()
            builder = self._builder
        builder.join(wait)
        return None if builder.is_alive() else self._graph()

    def preload(self) -> None:
        """Start reading what a first query needs from disk, the graph (from its snapshot) and the
        entity-name index, each in a background thread, unless the graph is current. The caller
        loads the model meanwhile: a fresh process's first graphrag query does the three at once
        (the name index is mostly file reading and hashing, which leave the interpreter free, so it
        overlaps the graph's load)."""
        if self._derivation.is_current():
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
                self._builder = threading.Thread(target=quietly(self._derivation.current), name="preload-graph",
                                                 daemon=True)
                self._builder.start()
                self._names_loader = threading.Thread(target=quietly(self._entity_vectors.version),
                                                      name="preload-names", daemon=True)
                self._names_loader.start()
