"""The context graph: canonical entities joined by cited relation edges.

:class:`ContextGraph` keeps a :class:`networkx.MultiDiGraph` whose nodes are entity keys and
whose edges are keyed by relation, each carrying its :class:`~workbench.model.Edge` and so its
citations. On top of it: name resolution with suggestions, k-hop neighbourhoods, failure
impact (reverse reachability over every relation, or over the dependency-like ones, with the
survivors), ranked cited paths between two entities, and Personalized PageRank over the whole
graph.

Co-mention edges (relation ``co_mentioned``) stay in the graph for PageRank and the
co-mention view; traversal, impact and paths ignore them unless asked.

Examples
--------
>>> from workbench.model import Edge, Entity
>>> graph = ContextGraph(
...     [Entity("loginflow", "login flow"), Entity("authservice", "auth service"),
...      Entity("redis", "Redis")],
...     [Edge("loginflow", "depends_on", "authservice", chunk_ids=("c1",)),
...      Edge("authservice", "backed_by", "redis", chunk_ids=("c2", "c3"))])
>>> impact = graph.impacted_by("redis")
>>> [(name, path.nodes) for name, path in impact.impacted]
[('auth service', ['Redis', 'auth service']), ('login flow', ['Redis', 'auth service', 'login flow'])]
>>> graph.paths("login flow", "redis")[0].corroboration
1
"""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Callable, Collection, Hashable, Iterable, Mapping
from dataclasses import dataclass, field
from itertools import chain, repeat
from typing import TYPE_CHECKING, Any, Literal

import numpy as np

from ..model import COMENTION_RELATION, Edge, Entity, Hop
from ..settings import setting_default
from .entity_table import EntityTable
from ..text.name_keys import name_key
from .graph_walks import GraphWalks, _name_order
from .name_resolution import EntityNotFound, near_names
from .passages import NameMatcher, PassageLayer

if TYPE_CHECKING:  # imported where used: `stats` and a snapshot's load need neither
    import networkx as nx

    from .ppr import PageRankIndex

__all__ = [
    "COMENTION_RELATION",
    "DEFAULT_IMPACT_RELATIONS",
    "ContextGraph",
    "EntityNotFound",
    "Neighborhood",
]

#: Relations along which a failure spreads: ``settings.graph.impact_relations``'s default.
DEFAULT_IMPACT_RELATIONS: tuple[str, ...] = tuple(setting_default("graph.impact_relations"))


Direction = Literal["out", "in", "both"]


@dataclass
class Neighborhood:
    """The entities within a number of hops of a center, and the edges walked to reach them."""

    center: str
    """Display name of the center."""
    entities: list[tuple[str, int]]
    """``(display name, distance)`` of every entity reached (not the center), by distance
    then name."""
    edges: list[Edge]
    """The edges walked inside the neighbourhood, in stored direction."""
    keys: list[str] = field(default_factory=list)
    """Keys of the center and of every entity reached, for :meth:`ContextGraph.subgraph`."""


class ContextGraph(GraphWalks):
    """Canonical entities and cited relation edges, with traversal, impact and paths.

    The graph is immutable once built: derived structures (the PageRank index, path
    projections) are computed once and cached.

    Parameters
    ----------
    entities : iterable of Entity, or EntityTable
        The nodes; keys must be unique. A snapshot's :class:`EntityTable` is kept as it is.
    edges : iterable of Edge
        The relations; both ends must be entity keys, one edge per (source, relation, target).
    impact_relations : collection of str
        The dependency-like relations: along which a failure spreads in the dependency reading
        of :meth:`impacted_by`, and what :meth:`dependencies_of` follows.
    key_of : callable, optional
        The canonicalizer's name -> key function (aliases, splits), tried first by
        :meth:`resolve`; :func:`workbench.text.name_keys.name_key` is always tried after it.
    passages : PassageLayer, optional
        The passages (chunks) and the entities each mentions: nodes of the graph that
        PageRank walks (:meth:`pagerank_index`), not of :attr:`nx`.
    passage_documents, passage_times : mapping, optional
        Chunk id -> its document id, and -> its timestamp: the provenance and time span of the
        co-mention edges derived from passages (:meth:`comention_edges`).
    pagerank_index : PageRankIndex, optional
        The index :meth:`pagerank_index` would build, kept by a snapshot; its nodes must be the
        entities then the passages, in order (else ``ValueError``).
    checked : bool
        Whether the entities and edges are checked (below). A derivation from the record, which
        makes unique keys and one edge per (source, relation, target) between its entities, and
        is tested to equal :func:`~workbench.context_graph.assemble.assemble_graph`, passes False:
        checking a million edges is most of making the graph after a small write.

    Attributes
    ----------
    nx : networkx.MultiDiGraph
        Nodes are entity keys with attribute ``entity``; edges are keyed by relation and
        carry ``edge`` (the Edge) and ``weight`` (its corroboration).

    Raises
    ------
    ValueError
        On a duplicate entity key, a duplicate edge, an edge to an unknown entity, or a
        ``pagerank_index`` of other nodes.
    """

    def __init__(
        self,
        entities: Iterable[Entity] | EntityTable | dict[str, Entity],
        edges: Iterable[Edge],
        impact_relations: Collection[str] = DEFAULT_IMPACT_RELATIONS,
        *,
        key_of: Callable[[str], str] | None = None,
        passages: PassageLayer | None = None,
        passage_documents: Mapping[str, str] | None = None,
        passage_times: Mapping[str, str] | None = None,
        pagerank_index: PageRankIndex | None = None,
        checked: bool = True,
    ) -> None:
        self.impact_relations = tuple(impact_relations)
        self._key_of = key_of
        edges = list(edges)
        self._entity: Mapping[str, Entity]
        if isinstance(entities, EntityTable):  # a snapshot's: its keys are unique, its entities made on read
            self._entity = entities
        elif isinstance(entities, dict):  # key -> entity, handed over (a derivation's)
            self._entity = entities
            if checked and any(key != entity.key for key, entity in entities.items()):
                raise ValueError("an entity is given under another key than its own")
        else:
            entities = list(entities)
            self._entity = {entity.key: entity for entity in entities}
            if checked and len(self._entity) != len(entities):
                counts = Counter(entity.key for entity in entities)
                twice = next(entity for entity in reversed(entities) if counts[entity.key] > 1)
                raise ValueError(f"entity key {twice.key!r} given twice ({twice.name!r})")
        stated: set[tuple[str, str, str]] = set()
        for edge in edges if checked else ():
            for end in (edge.source, edge.target):
                if end not in self._entity:
                    raise ValueError(
                        f"edge {edge.source} -{edge.relation}-> {edge.target} names {end!r}, "
                        "which is not an entity of the graph"
                    )
            triple = (edge.source, edge.relation, edge.target)
            if triple in stated:
                raise ValueError(f"edge {edge.source} -{edge.relation}-> {edge.target} given twice")
            stated.add(triple)
        self._edge_list = edges
        self._nx: nx.MultiDiGraph | None = None
        self._nx_lock = threading.Lock()
        self._out: dict[str, list[Edge]] | None = None
        self._in: dict[str, list[Edge]] | None = None
        self._ordered: list[Edge] | None = None
        self._by_display: dict[str, str] | None = None  # built when first resolved: slow on many names
        for end in (key for pair in (passages.synonyms if passages else ()) for key in pair[:2]):
            if end not in self._entity:
                raise ValueError(f"synonym edge names {end!r}, which is not an entity of the graph")
        self.passages = passages if passages is not None else PassageLayer(
            {}, {}, {}, frozenset(), (), (), NameMatcher({}))
        self._pagerank: PageRankIndex | None = None
        self._entity_pagerank: PageRankIndex | None = None
        self._passage_positions: tuple[list[str], np.ndarray] | None = None
        self._comention: list[Edge] | None = None
        self._centrality: dict[str, float] | None = None
        #: Chunk id -> its document and its time, for the derived co-mention edges.
        self.passages_document: dict[str, str] = dict(passage_documents or {})
        self.passages_time: dict[str, str] = dict(passage_times or {})
        self._projections: dict[tuple, nx.Graph] = {}
        if pagerank_index is not None:
            nodes, n = pagerank_index.nodelist, len(self._entity)
            if nodes[:n] != list(self._entity) or nodes[n:] != [("p", cid) for cid in sorted(self.passages.entities_of)]:
                raise ValueError("the PageRank index's nodes are not this graph's entities and passages")
            self._pagerank = pagerank_index

    @property
    def nx(self) -> nx.MultiDiGraph:
        """The graph as networkx keeps it, built on first use: lookups, PageRank and a question's
        edges never need it (it is most of a second per 100k entities to build)."""
        if self._nx is None:
            with self._nx_lock:
                if self._nx is None:
                    import networkx as nx

                    graph = nx.MultiDiGraph()
                    graph.add_nodes_from((key, {"entity": entity}) for key, entity in self._entity.items())
                    graph.add_edges_from((e.source, e.target, e.relation, {"edge": e, "weight": e.weight})
                                         for e in self._edge_list)
                    self._nx = graph
        return self._nx

    # -- lookup -------------------------------------------------------------------------

    def __len__(self) -> int:
        return len(self._entity)

    def __contains__(self, key: object) -> bool:
        return key in self._entity

    def number_of_edges(self) -> int:
        """Every edge, co-mention included."""
        return len(self._edge_list)

    def entity(self, key: str) -> Entity:
        """The entity with this key; :class:`EntityNotFound` if there is none."""
        try:
            return self._entity[key]
        except KeyError:
            raise EntityNotFound(key, near_names(key, self._entity)) from None

    def name(self, key: str) -> str:
        """Display name of the entity with this key."""
        return self.entity(key).name

    def keys(self) -> list[str]:
        """Every entity key, in graph order."""
        return list(self._entity)

    def entities(self) -> list[Entity]:
        """Every entity, in graph order."""
        return list(self._entity.values())

    def names(self) -> dict[str, str]:
        """Entity key -> display name, in graph order. A loaded graph reads its name column
        instead of making every entity."""
        if isinstance(self._entity, EntityTable):
            return dict(zip(self._entity, self._entity.names()))
        return {key: entity.name for key, entity in self._entity.items()}

    def types(self) -> dict[str, str]:
        """Entity key -> type, in graph order, read as :meth:`names` reads the names."""
        if isinstance(self._entity, EntityTable):
            return dict(zip(self._entity, self._entity.types()))
        return {key: entity.type for key, entity in self._entity.items()}

    def _edges_in_order(self) -> list[Edge]:
        """Every edge in graph order: by source, then by target as first connected, then as given
        (the order networkx walks them in)."""
        if self._ordered is None:
            by_source: dict[str, dict[str, list[Edge]]] = {}
            for edge in self._edge_list:
                by_source.setdefault(edge.source, {}).setdefault(edge.target, []).append(edge)
            self._ordered = [edge for key in self._entity if key in by_source
                             for group in by_source[key].values() for edge in group]
        return self._ordered

    def edges_as_given(self) -> list[Edge]:
        """Every edge (co-mention included) in the order the graph was built with: what a snapshot
        keeps, so the graph it loads is built edge for edge as this one was."""
        return list(self._edge_list)

    def out_edges(self, key: str) -> list[Edge]:
        """The edges leaving ``key`` (co-mention included), in graph order."""
        if self._out is None:
            self._out = self._incidence(lambda edge: (edge.source, edge.target))
        return self._out.get(key, [])

    def in_edges(self, key: str) -> list[Edge]:
        """The edges reaching ``key`` (co-mention included), in graph order."""
        if self._in is None:
            self._in = self._incidence(lambda edge: (edge.target, edge.source))
        return self._in.get(key, [])

    def _incidence(self, ends: Callable[[Edge], tuple[str, str]]) -> dict[str, list[Edge]]:
        grouped: dict[str, dict[str, list[Edge]]] = {}
        for edge in self._edge_list:
            at, other = ends(edge)
            grouped.setdefault(at, {}).setdefault(other, []).append(edge)
        return {at: [edge for group in others.values() for edge in group] for at, others in grouped.items()}

    def edges(self, relation: str | None = None, include_comention: bool = False) -> list[Edge]:
        """Edges in graph order, optionally of one relation; co-mention only when asked.

        Asking for ``relation="co_mentioned"`` gives the co-mention edges.
        """
        return [
            edge
            for edge in self._edges_in_order()
            if (edge.relation == relation if relation is not None
                else include_comention or edge.relation != COMENTION_RELATION)
        ]

    def resolve(self, name: str) -> str:
        """The key of the entity a display name, a surface form or a key refers to.

        Tries the key itself, the canonicalizer's key (if given), the name key, then the
        display name ignoring case.

        Raises
        ------
        EntityNotFound
            With up to ten suggestions: near names, then names containing the query.

        Examples
        --------
        >>> graph = ContextGraph([Entity("authservice", "Auth Service")], [])
        >>> graph.resolve("the auth-service")
        'authservice'
        """
        if name in self._entity:
            return name
        candidates = [self._key_of(name)] if self._key_of is not None else []
        candidates.append(name_key(name))
        for key in candidates:
            if key and key in self._entity:
                return key
        if self._by_display is None:
            by_display: dict[str, str] = {}
            for key, shown in self.names().items():
                by_display.setdefault(shown.casefold(), key)
            self._by_display = by_display
        displayed = self._by_display.get(name.casefold())
        if displayed is not None:
            return displayed
        raise EntityNotFound(name, near_names(name, self._entity))

    # -- traversal ----------------------------------------------------------------------

    @staticmethod
    def _allowed(relation: str, relations: Collection[str] | None, include_comention: bool) -> bool:
        if relations is not None:
            return relation in relations
        return include_comention or relation != COMENTION_RELATION

    def _incident(self, key: str, direction: Direction) -> Iterable[tuple[Edge, str]]:
        """``(edge, other end)`` for the edges at ``key`` in the given direction."""
        if direction in ("out", "both"):
            for edge in self.out_edges(key):
                yield edge, edge.target
        if direction in ("in", "both"):
            for edge in self.in_edges(key):
                yield edge, edge.source

    def neighbors(
        self,
        name: str,
        hops: int = 1,
        direction: Direction = "out",
        relations: Collection[str] | None = None,
        include_comention: bool = False,
    ) -> Neighborhood:
        """The entities within ``hops`` edges of ``name``, walking edges in ``direction``.

        ``"out"`` follows edges source -> target, ``"in"`` target -> source, ``"both"``
        either way. ``relations`` limits the walk to those relations (co-mention included
        only if listed or ``include_comention``).

        Examples
        --------
        >>> graph = ContextGraph(
        ...     [Entity("a", "A"), Entity("b", "B"), Entity("c", "C")],
        ...     [Edge("a", "uses", "b"), Edge("b", "uses", "c")])
        >>> graph.neighbors("A", hops=2).entities
        [('B', 1), ('C', 2)]
        >>> graph.neighbors("C", direction="in").entities
        [('B', 1)]
        """
        if direction not in ("out", "in", "both"):
            raise ValueError(f"direction must be 'out', 'in' or 'both', got {direction!r}")
        if hops < 0:
            raise ValueError(f"hops must be 0 or more, got {hops}")
        center = self.resolve(name)
        distance = {center: 0}
        walked: dict[tuple[str, str, str], Edge] = {}
        frontier = [center]
        for step in range(1, hops + 1):
            reached = []
            for key in frontier:
                for edge, other in self._incident(key, direction):
                    if not self._allowed(edge.relation, relations, include_comention):
                        continue
                    walked[(edge.source, edge.relation, edge.target)] = edge
                    if other not in distance:
                        distance[other] = step
                        reached.append(other)
            frontier = reached
        entities = sorted(
            ((self.name(key), d) for key, d in distance.items() if key != center),
            key=lambda item: (item[1], _name_order(item[0])),
        )
        edges = sorted(walked.values(), key=self._edge_order)
        return Neighborhood(self.name(center), entities, edges, keys=list(distance))

    def _edge_order(self, edge: Edge) -> tuple:
        return (_name_order(self.name(edge.source)), edge.relation, _name_order(self.name(edge.target)))

    def _hop(self, edge: Edge) -> Hop:
        return Hop(
            source=self.name(edge.source),
            relation=edge.relation,
            target=self.name(edge.target),
            weight=edge.weight,
            chunks=tuple(edge.chunk_ids),
            documents=tuple(edge.documents),
            confidence=edge.confidence,
            origin=edge.origin,
            first_seen=edge.first_seen,
            last_seen=edge.last_seen,
        )

    # -- impact -------------------------------------------------------------------------

    def cited_hop(self, edge: Edge) -> Hop:
        """An edge between display names, with its citations: how every edge leaves the core
        (``cited_hop(edge).to_json()`` is its one JSON form)."""
        return self._hop(edge)

    # -- PageRank -----------------------------------------------------------------------

    def pagerank_index(self) -> PageRankIndex:
        """The PageRank index over the whole graph, entities and passages, built once.

        Nodes are the entity keys, in graph order, then ``("p", chunk id)`` for every
        passage. Undirected edges: between two entities, the summed corroboration of every
        edge between them (co-mention included) plus 1 for a synonym edge; between a
        passage and each entity it mentions (common names left out), 1, or
        ``relation_weight`` where the passage states a relation of that entity; a cited
        relation edge counts ``relation_weight`` times its corroboration; from a passage to
        each passage whose title it names, the layer's ``title_link_weight``.
        """
        if self._pagerank is None:
            from .ppr import PageRankIndex

            keys = list(self._entity)
            n = len(keys)
            layer = self.passages
            chunk_ids = sorted(layer.entities_of)
            position = {key: i for i, key in enumerate(keys)}
            edges = self._edges_in_order()
            relational = [edge for edge in edges if edge.relation != COMENTION_RELATION]
            scale = np.fromiter((1.0 if edge.relation == COMENTION_RELATION else layer.relation_weight
                                 for edge in edges), dtype=np.float64, count=len(edges))
            rows = [np.fromiter((position[edge.source] for edge in edges), dtype=np.int64, count=len(edges))]
            cols = [np.fromiter((position[edge.target] for edge in edges), dtype=np.int64, count=len(edges))]
            weights = [scale * np.fromiter((edge.weight for edge in edges), dtype=np.float64, count=len(edges))]
            rows.append(np.fromiter((position[a] for a, _, _ in layer.synonyms), dtype=np.int64))
            cols.append(np.fromiter((position[b] for _, b, _ in layer.synonyms), dtype=np.int64))
            weights.append(np.ones(len(layer.synonyms)))
            # (passage, entity) where the passage states a relation of the entity: a link of relation_weight
            chunk_at = {cid: i for i, cid in enumerate(chunk_ids)}
            stating = np.fromiter(map(chunk_at.get, chain.from_iterable(edge.chunk_ids for edge in relational),
                                      repeat(-1)), dtype=np.int64)
            per_edge = [len(edge.chunk_ids) for edge in relational]
            ends = [np.repeat(np.fromiter((position[getattr(edge, end)] for edge in relational), dtype=np.int64,
                                          count=len(relational)), per_edge) for end in ("source", "target")]
            held = stating >= 0
            stated = np.unique(np.concatenate([stating[held] * n + end[held] for end in ends]))
            linked = [layer.entities_of[cid] for cid in chunk_ids]
            passage = np.repeat(np.arange(len(chunk_ids), dtype=np.int64), [len(keys_of) for keys_of in linked])
            entity = np.fromiter(map(position.get, chain.from_iterable(linked), repeat(-1)), dtype=np.int64,
                                 count=len(passage))
            walked = entity >= 0
            walked[walked] = ~np.isin(entity[walked], [position[key] for key in layer.common if key in position])
            passage, entity = passage[walked], entity[walked]
            rows.append(passage + n)
            cols.append(entity)
            weights.append(np.where(np.isin(passage * n + entity, stated), layer.relation_weight, 1.0))
            rows.append(np.fromiter((chunk_at[cid] + n for cid, _ in layer.title_links), dtype=np.int64))
            cols.append(np.fromiter((chunk_at[target] + n for _, target in layer.title_links), dtype=np.int64))
            weights.append(np.full(len(layer.title_links), layer.title_link_weight))
            self._pagerank = PageRankIndex.from_edges(keys + [("p", cid) for cid in chunk_ids], np.concatenate(rows),
                                                      np.concatenate(cols), np.concatenate(weights))
        return self._pagerank

    def entity_pagerank_index(self) -> PageRankIndex:
        """The PageRank index over the entities alone (graphrag-seed's walk, seed 003's), built once.

        Nodes are the entity keys in graph order; edges are the cited relation edges in their
        stored direction, each counting 1 (two relations from A to B count 2), so a step hands
        an entity's score to the targets of its outgoing edges divided by its out-degree.
        Co-mention and synonym edges are left out, and a directed index is walked by power
        iteration (:meth:`~workbench.context_graph.ppr.PageRankIndex.walk`).
        """
        if self._entity_pagerank is None:
            keys = list(self._entity)
            position = {key: i for i, key in enumerate(keys)}
            rows: list[int] = []
            cols: list[int] = []
            for edge in self._edges_in_order():
                if edge.relation != COMENTION_RELATION:
                    rows.append(position[edge.source])
                    cols.append(position[edge.target])
            from .ppr import PageRankIndex

            self._entity_pagerank = PageRankIndex.from_edges(
                keys, np.array(rows, dtype=np.int64), np.array(cols, dtype=np.int64), directed=True)
        return self._entity_pagerank

    def centrality(self) -> dict[str, float]:
        """Each entity's PageRank in the whole graph (passages included), with no seed: how
        central it is to the corpus. Built once."""
        if self._centrality is None:
            index = self.pagerank_index()
            n = len(self._entity)
            if n == 0:
                self._centrality = {}
            else:
                scores, _, _ = index.walk(np.ones(len(index)), 0.85)
                self._centrality = dict(zip(list(self._entity), scores[:n].tolist()))
        return self._centrality

    def passage_positions(self) -> tuple[list[str], np.ndarray]:
        """Chunk ids of the passage nodes and their positions in :meth:`pagerank_index`."""
        if self._passage_positions is None:
            chunk_ids = sorted(self.passages.entities_of)
            first = len(self._entity)
            self._passage_positions = (chunk_ids, np.arange(first, first + len(chunk_ids), dtype=np.int64))
        return self._passage_positions

    def personalized_pagerank(
        self, seeds: Mapping[str, float], damping: float = setting_default("graphrag.ppr_damping"), tol: float = 1e-6,
        max_iter: int = 100,
    ) -> dict[Hashable, float]:
        """Personalized PageRank from seed nodes: node -> score, summing to 1 over every node
        (entity keys, and ``("p", chunk id)`` for passages).

        Seeds not in the graph are ignored; a ``ValueError`` says so if none is left.

        Examples
        --------
        >>> graph = ContextGraph([Entity("a", "A"), Entity("b", "B"), Entity("c", "C")],
        ...                      [Edge("a", "uses", "b", chunk_ids=("c1",))])
        >>> scores = graph.personalized_pagerank({"a": 1.0})
        >>> scores["b"] > scores["c"]
        True
        """
        return self.pagerank_index().run(seeds, alpha=damping, tol=tol, max_iter=max_iter)

    # -- views --------------------------------------------------------------------------

    def subgraph(self, keys: Iterable[str]) -> ContextGraph:
        """The entities with these keys and every edge between them, as a new graph."""
        wanted = set()
        for key in keys:
            if key not in self._entity:
                raise EntityNotFound(key, near_names(key, self._entity))
            wanted.add(key)
        return ContextGraph(
            (entity for key, entity in self._entity.items() if key in wanted),
            (edge for edge in self._edges_in_order() if edge.source in wanted and edge.target in wanted),
            self.impact_relations,
            key_of=self._key_of,
        )

    def to_json(self) -> dict[str, list[dict[str, Any]]]:
        """Nodes and edges as JSON-ready dicts; edge ends are display names."""
        nodes = [
            {
                "key": entity.key,
                "name": entity.name,
                "type": entity.type,
                "mentions": entity.mentions,
                "first_seen": entity.first_seen,
                "last_seen": entity.last_seen,
            }
            for entity in self.entities()
        ]
        edges = [self.cited_hop(edge).to_json() for edge in self.edges(include_comention=True)]
        return {"nodes": nodes, "edges": edges}
