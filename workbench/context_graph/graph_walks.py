"""The walks over the context graph that answer its questions: what breaks when an entity
fails (:meth:`~GraphWalks.impacted_by`, with the survivors), what an entity depends on, the cited
paths between two entities, and the entities co-mentioned with one.

:class:`GraphWalks` is a part of :class:`~workbench.context_graph.graph.ContextGraph` (mixed into it, which is
where to call these from): each walk reads the graph's entities and cited edges and returns
display names, cited hops and paths.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Collection, Mapping
from typing import TYPE_CHECKING

from ..model import COMENTION_RELATION, Edge, Entity, GraphPath, Hop, Impact
from ..settings import setting_default

if TYPE_CHECKING:
    import networkx

    from .passages import PassageLayer

__all__ = ["GraphWalks", "MAX_PASSAGE_COMENTIONS"]

#: Derived co-mention edges pair at most this many entities of one passage.
MAX_PASSAGE_COMENTIONS = 30


# Enumerating simple paths is exponential on dense graphs; rank at most this many.
_MAX_PATHS_ENUMERATED = 10_000


def _name_order(name: str) -> tuple[str, str]:
    """Sort key for display names: case-insensitive, then exact, for stability."""
    return (name.casefold(), name)


class GraphWalks:
    """Impact, dependencies, cited paths and co-mentions of a :class:`~workbench.context_graph.graph.ContextGraph`."""

    impact_relations: tuple[str, ...]
    passages: PassageLayer
    passages_document: dict[str, str]
    passages_time: dict[str, str]
    _entity: Mapping[str, Entity]
    _edge_list: list[Edge]
    _projections: dict[tuple, networkx.Graph]
    _comention: list[Edge] | None

    if TYPE_CHECKING:  # the rest of the graph these walks read
        @property
        def nx(self) -> networkx.MultiDiGraph: ...

        def name(self, key: str) -> str: ...

        def resolve(self, name: str) -> str: ...

        def out_edges(self, key: str) -> list[Edge]: ...

        def in_edges(self, key: str) -> list[Edge]: ...

        def edges(self, relation: str | None = None, include_comention: bool = False) -> list[Edge]: ...

        def _edges_in_order(self) -> list[Edge]: ...

        def _edge_order(self, edge: Edge) -> tuple: ...

        def _hop(self, edge: Edge) -> Hop: ...

        @staticmethod
        def _allowed(relation: str, relations: Collection[str] | None, include_comention: bool) -> bool: ...

    def _reach(self, start: str, spread: Collection[str] | None,
               incoming: bool) -> dict[str, tuple[float, tuple[str, ...], list[Hop]]]:
        """Breadth-first search from ``start`` over ``spread`` edges (None: every relation,
        co-mention aside), against their direction when ``incoming``: key -> (corroboration, names
        along the path, hops), the shortest path to each (ties: better corroborated, then by names)."""
        best: dict[str, tuple[float, tuple[str, ...], list[Hop]]] = {start: (math.inf, (self.name(start),), [])}
        frontier = [start]
        while frontier:
            candidates: dict[str, tuple[tuple, tuple[float, tuple[str, ...], list[Hop]]]] = {}
            for reached in frontier:
                corroboration, names, hops = best[reached]
                edges = (((e.source, e.relation, e) for e in self.in_edges(reached)) if incoming else
                         ((e.target, e.relation, e) for e in self.out_edges(reached)))
                for other, relation, edge in edges:
                    if (relation == COMENTION_RELATION if spread is None else relation not in spread) or other in best:
                        continue
                    path_corroboration = min(corroboration, edge.weight)
                    path_names = names + (self.name(other),)
                    rank = (-path_corroboration, tuple(map(_name_order, path_names)), relation)
                    if other not in candidates or rank < candidates[other][0]:
                        candidates[other] = (rank, (path_corroboration, path_names, hops + [self._hop(edge)]))
            for other, (_, entry) in candidates.items():
                best[other] = entry
            frontier = list(candidates)
        return best

    @staticmethod
    def _reached(best: Mapping[str, tuple[float, tuple[str, ...], list[Hop]]], start: str) -> list[tuple[str, GraphPath]]:
        return sorted(
            ((names[-1], GraphPath(nodes=list(names), hops=hops)) for key, (_, names, hops) in best.items()
             if key != start),
            key=lambda item: (len(item[1].hops), _name_order(item[0])),
        )

    def impacted_by(self, name: str, relations: Collection[str] | None = None) -> Impact:
        """What breaks when ``name`` fails: every entity with a relation to it, directly or not,
        with a path.

        If A has a relation to B (A depends_on B, A is RESOLVED_BY B, A is owned_by B) and B
        fails, A is impacted: a breadth-first search from the failed entity over its incoming
        edges, every cited relation by default (seed 001's ``impacted_by``; co-mention aside),
        or only ``relations`` (the dependency reading: :attr:`impact_relations`). Each impacted
        entity gets its shortest path (ties go to the better corroborated path, then by names),
        running from the failed entity to the impacted one with each hop in stored direction.
        Impacted entities come by hop count, then name; survivors are every other entity of the
        relation graph (any cited relation, co-mention aside: the owner teams too), by name.

        Parameters
        ----------
        name : str
            The failed entity.
        relations : collection of str, optional
            Relations along which failure spreads; None (the default) spreads it along every
            relation. :attr:`impact_relations` is the dependency reading.
        """
        failed = self.resolve(name)
        spread = None if relations is None else set(relations)
        best = self._reach(failed, spread, incoming=True)
        taking_part = {
            end
            for edge in self._edge_list
            if edge.relation != COMENTION_RELATION
            for end in (edge.source, edge.target)
        }
        survivors = sorted((self.name(key) for key in taking_part - best.keys()), key=_name_order)
        reading = ("all" if spread is None else "dependencies" if spread == set(self.impact_relations)
                   else "listed")
        return Impact(failed=self.name(failed), impacted=self._reached(best, failed), survivors=survivors,
                      relations=reading)

    def dependencies_of(self, name: str, relations: Collection[str] | None = None) -> list[tuple[str, GraphPath]]:
        """What ``name`` depends on, directly or not: forward reachability over the impact
        relations, ``(entity, path)`` by hop count then name, each path cited hop by hop.

        Examples
        --------
        >>> from workbench.context_graph.graph import ContextGraph
        >>> g = ContextGraph([Entity("a", "A"), Entity("b", "B"), Entity("c", "C")],
        ...                  [Edge("a", "depends_on", "b"), Edge("b", "uses", "c")])
        >>> [(entity, path.nodes) for entity, path in g.dependencies_of("A")]
        [('B', ['A', 'B']), ('C', ['A', 'B', 'C'])]
        """
        start = self.resolve(name)
        spread = set(self.impact_relations if relations is None else relations)
        return self._reached(self._reach(start, spread, incoming=False), start)

    def _projection(self, relations: Collection[str] | None, undirected: bool) -> networkx.Graph:
        """A simple (Di)Graph over the non-co-mention edges, the best corroborated per pair."""
        cache_key = (None if relations is None else tuple(sorted(relations)), undirected)
        if cache_key in self._projections:
            return self._projections[cache_key]
        import networkx as nx

        projection = nx.Graph() if undirected else nx.DiGraph()
        projection.add_nodes_from(self._entity)
        for edge in self._edges_in_order():
            source, target, relation = edge.source, edge.target, edge.relation
            if not self._allowed(relation, relations, include_comention=False):
                continue
            current = projection.get_edge_data(source, target)
            # Higher weight wins; on a tie the alphabetically first relation, for stability.
            if current is None or (-edge.weight, edge.relation) < (-current["edge"].weight, current["edge"].relation):
                projection.add_edge(source, target, edge=edge)
        self._projections[cache_key] = projection
        return projection

    def paths(
        self, a: str, b: str, max_hops: int = setting_default("graph.max_path_hops"),
        k: int = setting_default("graph.max_paths"), relations: Collection[str] | None = None,
    ) -> list[GraphPath]:
        """Up to ``k`` cited simple paths from ``a`` to ``b``, best corroborated first.

        Paths follow stored direction; when there is none, edges may also be walked
        backwards (each hop still shows its stored direction). Ranked by corroboration
        (the weakest hop's weight) descending, then hop count, then total weight
        descending. Co-mention edges are never walked; at most 10,000 candidate paths
        are ranked.

        Raises
        ------
        EntityNotFound
            If ``a`` or ``b`` names no entity.
        """
        if max_hops < 1 or k < 1:
            raise ValueError(f"max_hops and k must be at least 1, got {max_hops} and {k}")
        source, target = self.resolve(a), self.resolve(b)
        if source == target:
            return []
        import networkx as nx

        for undirected in (False, True):
            projection = self._projection(relations, undirected)
            found = [
                self._cited_path(projection, nodes)
                for nodes in itertools.islice(
                    nx.all_simple_paths(projection, source, target, cutoff=max_hops), _MAX_PATHS_ENUMERATED
                )
            ]
            if found:
                found.sort(key=lambda p: (
                    -p.corroboration, len(p.hops), -sum(h.weight for h in p.hops),
                    tuple(map(_name_order, p.nodes)),
                ))
                return found[:k]
        return []

    def _cited_path(self, projection: networkx.Graph, nodes: list[str]) -> GraphPath:
        hops = [self._hop(projection.edges[u, v]["edge"]) for u, v in itertools.pairwise(nodes)]
        return GraphPath(nodes=[self.name(key) for key in nodes], hops=hops)

    def comention_edges(self) -> list[Edge]:
        """Co-mention edges: the stored ones (typed entities named in one chunk) and, for every
        other pair of entities that passages name together, one derived from those passages.

        A derived edge's chunks are the shared passages (its weight their number), its time
        span theirs, its origin ``passage``. Common names and all but the first
        :data:`MAX_PASSAGE_COMENTIONS` entities of a passage are left out, so a long list of
        names cannot explode into millions of pairs. Built once.
        """
        if self._comention is None:
            stored = {(e.source, e.target): e for e in self.edges(COMENTION_RELATION)}
            shared: dict[tuple[str, str], list[str]] = {}
            layer = self.passages
            for cid in sorted(layer.entities_of):
                keys = sorted(k for k in layer.entities_of[cid] if k in self._entity and k not in layer.common)
                for i, a in enumerate(keys[:MAX_PASSAGE_COMENTIONS]):
                    for b in keys[i + 1:MAX_PASSAGE_COMENTIONS]:
                        if (a, b) not in stored and (b, a) not in stored:
                            shared.setdefault((a, b), []).append(cid)
            derived = []
            for (a, b), chunk_ids in sorted(shared.items()):
                span = [when for c in chunk_ids if (when := self.passages_time.get(c))]
                derived.append(Edge(a, COMENTION_RELATION, b, chunk_ids=tuple(chunk_ids),
                                    documents=tuple(sorted({self.passages_document.get(c, "") for c in chunk_ids} - {""})),
                                    first_seen=min(span, default=None), last_seen=max(span, default=None),
                                    origin="passage"))
            self._comention = list(stored.values()) + derived
        return self._comention

    def comention_neighbors(self, name: str) -> list[tuple[str, Edge]]:
        """``(display name, edge)`` of every entity co-mentioned with ``name`` (stored or derived
        from passages), most corroborated first, then by name; each edge carries its chunks and
        its first and last seen."""
        key = self.resolve(name)
        found = [(self.name(e.target if e.source == key else e.source), e)
                 for e in self.comention_edges() if key in (e.source, e.target)]
        return sorted(found, key=lambda item: (-item[1].weight, _name_order(item[0])))
