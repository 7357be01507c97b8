"""The context graph's dataclasses: entities, cited edges, merges, hops, paths, and the typed
answer of each graph question: :class:`Impact`, :class:`Neighborhood`, :class:`Comentions`,
:class:`PathAnswer` (made by :mod:`workbench.context_graph.graph_questions`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .jsonable import NOT_IN_JSON, json_name, to_json

__all__ = ["COMENTION_ORIGIN", "COMENTION_RELATION", "Entity", "Edge", "SurfaceForm", "Merge", "Hop", "GraphPath", "Impact", "Neighbour", "Neighborhood",
           "Comention", "Comentions", "PathAnswer", "relation_phrases"]

#: Relation label of the edges between entities named in the same chunk (or passage).
COMENTION_RELATION = "co_mentioned"

#: The origin of the triples the entity extractor gives each co-mentioned pair.
COMENTION_ORIGIN = "comention"

#: Relation label (upper-cased) -> (forward phrase, reverse phrase): ``A <forward> B`` states
#: ``A -relation-> B``; ``B <reverse> A`` says the same fact from B's side.
_PHRASES = {
    "RESOLVED_BY": ("is resolved by", "resolves"), "CAUSED_BY": ("is caused by", "causes"),
    "LEADS_TO": ("leads to", "follows from"), "SIMILAR_TO": ("is similar to", "is similar to"),
    "CONTRADICTS": ("contradicts", "is contradicted by"), "DEPENDS_ON": ("depends on", "is depended on by"),
    "EXTENDS": ("extends", "is extended by"), "REFERENCES": ("references", "is referenced by"),
    "BACKED_BY": ("is backed by", "backs"), "RUNS_ON": ("runs on", "runs"), "OWNED_BY": ("is owned by", "owns"),
    "USES": ("uses", "is used by"), "CALLS": ("calls", "is called by"), "READS_FROM": ("reads from", "is read by"),
    "WRITES_TO": ("writes to", "is written to by"), "PART_OF": ("is part of", "has as a part"),
    "REPLACES": ("replaces", "is replaced by"), "CONNECTS_TO": ("connects to", "is connected to by"),
    "AUTHENTICATES_WITH": ("authenticates with", "authenticates"), "ROUTES_TO": ("routes to", "is routed to by"),
    "LEADS": ("leads", "is led by"), "CO_MENTIONED": ("is mentioned with", "is mentioned with"),
}


def relation_phrases(relation: str) -> tuple[str, str]:
    """How ``A -relation-> B`` reads from A's side and from B's: ``(forward, reverse)``.

    A relation without a phrase of its own reads forward as its label and backward as the object
    of that label, so the reverse reading is never stated as the forward one.

    >>> relation_phrases("resolved_by")
    ('is resolved by', 'resolves')
    >>> relation_phrases("mentors")
    ("'mentors'", "is the object of 'mentors' from")
    """
    known = _PHRASES.get(relation.upper())
    if known:
        return known
    return f"'{relation}'", f"is the object of '{relation}' from"


@dataclass(slots=True)  # slots: a graph holds them by the million, and slots take less memory than a dict each
class Entity:
    """A node of the context graph: one canonical name."""

    key: str
    """The canonical name key (see :func:`workbench.text.name_keys.name_key`)."""
    name: str
    """Display name: the most frequent surface form."""
    type: str = "concept"
    """The most frequent entity type among its mentions."""
    mentions: int = 0
    """Number of mentions across all chunks."""
    first_seen: str | None = None
    """Earliest timestamp of a chunk that mentions it."""
    last_seen: str | None = None
    """Latest timestamp of a chunk that mentions it."""


@dataclass(slots=True)  # slots: a large graph holds a million of them
class Edge:
    """A directed relation between two entities, with its provenance."""

    source: str
    """Canonical key of the subject."""
    relation: str
    """Relation label."""
    target: str
    """Canonical key of the object."""
    chunk_ids: tuple[str, ...] = ()
    """Distinct chunks that state it, sorted."""
    documents: tuple[str, ...] = ()
    """Distinct documents of those chunks, sorted."""
    confidence: float = 1.0
    """Highest confidence among the statements."""
    first_seen: str | None = None
    """Earliest timestamp among the stating chunks."""
    last_seen: str | None = None
    """Latest timestamp among the stating chunks."""
    origin: str = "pattern"
    """Extractor of the statements (see :attr:`Triple.origin`)."""

    @property
    def weight(self) -> int:
        """Corroboration: the number of distinct chunks that state the edge."""
        return len(self.chunk_ids)


@dataclass(frozen=True)
class SurfaceForm:
    """One way a canonical entity is written, and where."""

    form: str
    """The text as written."""
    count: int
    """How many mentions use this form."""
    chunk_ids: tuple[str, ...] = ()
    """Chunks where the form occurs."""


@dataclass
class Merge:
    """The record of names merged into one canonical entity."""

    canonical: str
    """Display name of the canonical entity."""
    key: str
    """Its canonical key."""
    surface_forms: list[SurfaceForm] = field(default_factory=list)
    """Every surface form with its count, most frequent first."""
    reasons: list[str] = field(default_factory=list)
    """Why the forms are one: ``name key``, ``alias (settings)``, ``alias (user)``."""


@dataclass(frozen=True)
class Hop:
    """One cited edge between display names, in stored direction ``source -relation-> target``.

    The one JSON shape of an edge leaving the core: a hop of a path, a triple of a graph
    context, the edge an expanded hit was reached by (see
    :meth:`workbench.context_graph.graph.ContextGraph.cited_hop`).

    >>> Hop("token cache", "backed_by", "Redis", 1, ("c4",), ("redis.md",)).states
    'token cache -backed_by-> Redis'
    """

    source: str
    """Display name of the subject."""
    relation: str
    """Relation label."""
    target: str
    """Display name of the object."""
    weight: int
    """Corroboration: the distinct chunks that state it."""
    chunks: tuple[str, ...]
    """Those chunks' ids (its citations)."""
    documents: tuple[str, ...]
    """Their documents."""
    confidence: float = 1.0
    """Highest confidence among the statements."""
    origin: str = "pattern"
    """Extractor of the statements (see :attr:`Triple.origin`)."""
    first_seen: str | None = None
    """Earliest time among the stating chunks."""
    last_seen: str | None = None
    """Latest time among the stating chunks."""

    @property
    def states(self) -> str:
        """The edge as text: ``source -relation-> target``."""
        return f"{self.source} -{self.relation}-> {self.target}"

    def reads(self, backward: bool = False) -> str:
        """The edge as a sentence, from its source (``A is resolved by B``) or, ``backward``, from
        its target (``B resolves A``): the same fact, never the reverse stated as the forward.

        >>> hop = Hop("report delay", "RESOLVED_BY", "kafka lag runbook", 1, ("c1",), ())
        >>> hop.reads(), hop.reads(backward=True)
        ('report delay is resolved by kafka lag runbook', 'kafka lag runbook resolves report delay')
        """
        forward, reverse = relation_phrases(self.relation)
        return f"{self.target} {reverse} {self.source}" if backward else f"{self.source} {forward} {self.target}"

    def describe(self) -> str:
        """``A -r-> B (weight 2), stated by c1, c2``."""
        return f"{self.states} (weight {self.weight})" + (", stated by " + ", ".join(self.chunks) if self.chunks else "")

    def to_json(self) -> dict[str, Any]:
        return to_json(self, order=("source", "relation", "target", "weight", "confidence", "origin", "first_seen",
                                    "last_seen"))

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Hop:
        """The hop :meth:`to_json` wrote."""
        return cls(**{**data, "chunks": tuple(data["chunks"]), "documents": tuple(data["documents"])})


@dataclass
class GraphPath:
    """A path between entities with a citation per hop."""

    nodes: list[str]
    """Display names along the path, first to last."""
    hops: list[Hop]
    """The edges walked, each cited."""

    @property
    def corroboration(self) -> int:
        """The weakest hop's weight: a chain is as well attested as its weakest link."""
        return min((h.weight for h in self.hops), default=0)

    def to_json(self) -> dict[str, Any]:
        """``{"nodes": [...], "hops": [...], "corroboration": n}``."""
        return to_json(self, corroboration=self.corroboration)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> GraphPath:
        """The path :meth:`to_json` wrote (its corroboration follows from the hops)."""
        return cls(nodes=list(data["nodes"]), hops=[Hop.from_json(h) for h in data["hops"]])


@dataclass
class Impact:
    """What breaks when an entity fails: reverse reachability with paths, and the survivors."""

    failed: str
    """Display name of the failed entity."""
    impacted: list[tuple[str, GraphPath]]
    """``(entity, path)`` for every entity that depends on it, by hop count. The path runs
    from the failed entity to the impacted one; its hops keep the stored direction."""
    survivors: list[str]
    """Entities not impacted."""
    relations: str = "all"
    """The relations failure spread along: ``all`` (every cited relation), ``dependencies``
    (``graph.impact_relations``) or ``listed`` (relations the caller named)."""

    def to_json(self) -> dict[str, Any]:
        """``{"failed", "impacted": [{"entity", "path", "hops"}], "survivors", "relations"}``."""
        return to_json(self, impacted=[{"entity": entity, "path": list(path.nodes), "hops": path.hops}
                                       for entity, path in self.impacted])


@dataclass(frozen=True)
class Neighbour:
    """An entity of a neighbourhood and its distance from the center."""

    entity: str
    """Display name."""
    distance: int
    """Edges walked from the center to reach it (1 or more)."""

    def to_json(self) -> dict[str, Any]:
        return to_json(self)


@dataclass
class Neighborhood:
    """The answer to "what is within n hops of this entity?": the entities reached and the cited
    edges walked (``neighbors`` in the CLI and the MCP server).

    :class:`workbench.context_graph.graph.Neighborhood` is the graph's own walk (keys and stored edges); this is
    its answer as it leaves the core, every edge a cited :class:`Hop`.

    >>> hood = Neighborhood("A", [Neighbour("B", 1)], [Hop("A", "uses", "B", 1, ("c1",), ("a.md",))])
    >>> Neighborhood.from_json(hood.to_json()) == hood
    True
    """

    center: str
    """Display name of the entity asked about."""
    entities: list[Neighbour]
    """Every entity reached (not the center), by distance then name."""
    edges: list[Hop]
    """The edges walked inside the neighbourhood, in stored direction, each cited."""

    def to_json(self) -> dict[str, Any]:
        return to_json(self)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Neighborhood:
        return cls(center=data["center"], entities=[Neighbour(**e) for e in data["entities"]],
                   edges=[Hop.from_json(h) for h in data["edges"]])


@dataclass(frozen=True)
class Comention:
    """An entity named in the same chunks as another, and the co-mention edge that says so."""

    entity: str
    """Display name of the other entity."""
    hop: Hop
    """The co-mention edge: its weight (shared chunks), the chunks, first and last seen."""

    def to_json(self) -> dict[str, Any]:
        """The entity beside the hop's keys: ``{"entity", "source", "relation", ...}``."""
        return {"entity": self.entity, **self.hop.to_json()}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Comention:
        hop = {name: value for name, value in data.items() if name != "entity"}
        return cls(entity=data["entity"], hop=Hop.from_json(hop))


@dataclass
class Comentions:
    """The answer to "what is mentioned with this entity?" (``neighbors --comention``).

    >>> hop = Hop("A", "co_mentioned", "B", 2, ("c1", "c2"), ("a.md",), origin="passage")
    >>> found = Comentions("A", [Comention("B", hop)])
    >>> found.to_json()["comentions"][0]["entity"], Comentions.from_json(found.to_json()) == found
    ('B', True)
    """

    center: str
    """Display name of the entity asked about."""
    comentions: list[Comention]
    """The entities co-mentioned with it, most corroborated first, then by name."""

    def to_json(self) -> dict[str, Any]:
        return to_json(self)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Comentions:
        return cls(center=data["center"], comentions=[Comention.from_json(c) for c in data["comentions"]])


@dataclass
class PathAnswer:
    """The answer to "how does A lead to B?": the cited paths between two entities, best
    corroborated first (``path`` in the CLI and the MCP server). JSON: ``{"from", "to", "paths"}``.

    >>> answer = PathAnswer("A", "B", [GraphPath(["A", "B"], [Hop("A", "uses", "B", 1, ("c1",), ())])], max_hops=3)
    >>> answer.to_json()["from"], PathAnswer.from_json(answer.to_json()) == answer
    ('A', True)
    """

    source: str = field(metadata=json_name("from"))
    """Display name of the entity the paths start from."""
    target: str = field(metadata=json_name("to"))
    """Display name of the entity they reach."""
    paths: list[GraphPath] = field(default_factory=list)
    """The cited paths, best corroborated first; empty when none is within :attr:`max_hops`."""
    max_hops: int | None = field(default=None, compare=False, metadata=NOT_IN_JSON)
    """The longest path searched: how the question was asked, not part of its answer."""

    def to_json(self) -> dict[str, Any]:
        return to_json(self)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> PathAnswer:
        return cls(source=data["from"], target=data["to"], paths=[GraphPath.from_json(p) for p in data["paths"]])
