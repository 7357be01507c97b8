"""The retrieval contract: what every strategy returns, typed, with one ``to_json()`` each.

A :class:`RetrievalResult` holds ranked :class:`Hit` objects, each with a :class:`Why`; its
:class:`RetrievalStats` (timings and counts) and its :class:`GraphContext` (seeds, walked
entities, cited triples and paths, community reports). :meth:`RetrievalResult.to_json` is the
one serialization of a result: the CLI's ``--json``, the MCP server, the notebooks and the app
use it. Every edge in it is a :class:`~workbench.model.graph.Hop` and uses ``Hop.to_json``.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, ClassVar

from .graph import GraphPath, Hop, Impact
from .jsonable import to_json
from .summaries import ThemesFrom

__all__ = ["TimeWindow", "PathStep", "Why", "Hit", "Seed", "ContextNode", "PassageMass", "CommunityUse", "GraphContext",
           "WindowUse", "RetrievalStats", "RetrievalResult"]


@dataclass(frozen=True)
class TimeWindow:
    """An inclusive range of days that hits must fall in, and where it came from."""

    since: str | None = None
    """First day kept (ISO ``YYYY-MM-DD``), or None for no lower bound."""
    until: str | None = None
    """Last day kept (ISO ``YYYY-MM-DD``), or None for no upper bound."""
    phrase: str = ""
    """The words of the question that set it ("last month"), empty when given as arguments."""
    as_of: str = ""
    """The reference day relative phrases were resolved against."""

    def describe(self) -> str:
        """``2024-06-01..2024-06-30 ("last month" as of 2024-07-15)``."""
        span = f"{self.since or '...'}..{self.until or '...'}"
        return span + (f' ("{self.phrase}" as of {self.as_of})' if self.phrase else "")

    def to_json(self) -> dict[str, Any]:
        return to_json(self)


@dataclass(frozen=True)
class PathStep:
    """The hop of a cited path that a hit's chunk states."""

    path: tuple[str, ...]
    """Display names along the path, first to last."""
    path_rank: int
    """1-based rank of the path among those that answer the question."""
    hop_number: int
    """1-based position of the hop along the path."""
    hop: Hop
    """The hop, with its citations."""
    reading: str | None = None
    """The question's structural reading (``impact``, ``owner``...; see
    :mod:`workbench.retrieve.questions`)."""

    def to_json(self) -> dict[str, Any]:
        return to_json(self, order=("path", "path_rank", "hop_number", "states"), states=self.hop.states)


_ARROW = " → "


def _quote(values: Iterable[str]) -> str:
    return ", ".join(f"“{v}”" for v in values)


def _round(value: float, digits: int = 2) -> str:
    return f"{value:.{digits}f}"


@dataclass
class Why:
    """Why a hit came back. One shape for every mode: each field means the same in every mode
    that fills it, and a mode leaves the rest ``None`` (left out of :meth:`to_json`).

    Examples
    --------
    >>> Why(rrf=0.0323, ranks={"keyword": 3, "vector": 1}, similarity=0.629).describe()
    'Fused by RRF (0.032): keyword rank 3, vector rank 1; embedding similarity 0.63.'
    >>> Why(matched_terms=["redis", "down"], bm25=1.27).to_json()
    {'matched_terms': ['redis', 'down'], 'bm25': 1.27}
    >>> Why().describe()
    'No explanation given.'
    """

    JSON_DROPS_NONE: ClassVar[bool] = True

    similarity: float | None = None
    """Cosine similarity to the query: of the chunk (vector, hybrid, graphrag, the direct hits of
    expand and comention), or of the community report the point belongs to (global)."""
    matched_terms: list[str] | None = None
    """Query terms the chunk contains (keyword, hybrid)."""
    bm25: float | None = None
    """The chunk's BM25 score (keyword)."""
    literal_match: list[str] | None = None
    """Identifiers of the query the chunk holds literally (vector, hybrid)."""
    literal_boost: float | None = None
    """What those identifiers added to the score."""
    rrf: float | None = None
    """Reciprocal Rank Fusion score (hybrid, graphrag)."""
    ranks: dict[str, int | None] = field(default_factory=dict)
    """Rank of the chunk in each ranking fused, ``None`` where it is absent: ``keyword`` and
    ``vector`` (hybrid); ``walk``, ``provenance`` and ``hybrid`` (graphrag). JSON: ``<name>_rank``."""
    via: str | None = None
    """How an expansion mode reached it: ``direct`` (vector hit), ``expansion`` or ``comention``;
    ``bridge`` when graphrag placed it after the passage whose names lead to it."""
    parent: str | None = None
    """The direct hit's chunk it was reached from (expand, comention) or bridged from (graphrag);
    for a direct hit (expand), the higher hit whose note has a relation leading to its note."""
    edge: Hop | None = None
    """The edge that led from the parent to it (expand, comention)."""
    reached: str | None = None
    """The entity on that edge whose chunk this is (expand, comention)."""
    direction: str | None = None
    """Which way that edge was followed (expand): ``forward`` from its source to the target
    reached ("A is resolved by B"), ``backward`` from its target to the source reached ("B
    resolves A"); :meth:`~workbench.model.graph.Hop.reads` says it as a sentence."""
    hops: int | None = None
    """Edges walked from the parent's entities (comention: 1 or 2)."""
    pagerank: float | None = None
    """Walk mass the chunk received, relative to the best chunk's (graphrag)."""
    ppr_mass: float | None = None
    """Summed walk mass of the top entities it mentions or relates (graphrag provenance)."""
    entities: list[str] | None = None
    """Entities it names: top walked entities (graphrag provenance) or the point's (global)."""
    cited_path: PathStep | None = None
    """The hop of a cited path it states (paths, graphrag on a structural question)."""
    community: str | None = None
    """Id of the community whose report quotes it (global)."""
    community_title: str | None = None
    """That community's title."""
    point: str | None = None
    """The report's point, a sentence of the chunk."""
    point_kind: str | None = None
    """``relation`` for a point stating one of the community's strongest relations, ``sentence`` for
    another point of its report, ``passage`` for a sentence of a passage of the theme beyond its report."""
    kept_by_window: str | None = None
    """Why a time window kept it after the hits dated inside it, though it is dated outside the
    window or undated: the relation that leads to it from a hit inside the window."""

    def to_json(self) -> dict[str, Any]:
        """The fields set, in declaration order; ``ranks`` as ``<name>_rank`` keys, ``None`` kept."""
        out: dict[str, Any] = {}
        for name, value in to_json(self).items():
            out.update({f"{ranking}_rank": rank for ranking, rank in value.items()} if name == "ranks" else {name: value})
        return out

    def describe(self) -> str:
        """One readable sentence: which rankings found it, over which edge or path, on what evidence.

        >>> Why(via="expansion", parent="c1", reached="Auth Service",
        ...     edge=Hop("login flow", "depends_on", "Auth Service", 1, ("c1",), ())).describe()
        'Reached over an edge of chunk c1; through login flow -depends_on-> Auth Service (weight 1), stated by c1; for Auth Service.'
        """
        lead, parts = "", []
        if self.rrf is not None:
            ranks = [f"{name} rank {rank}" for name, rank in self.ranks.items() if rank is not None]
            lead = f"Fused by RRF ({_round(self.rrf, 3)})" + (": " + ", ".join(ranks) if ranks else "")
        elif self.via == "direct":
            lead = "Direct vector hit"
            if self.parent is not None and self.edge is not None and self.direction is not None:
                lead += (f", also the end of a relation from chunk {self.parent}: "
                         f"{self.edge.reads(backward=self.direction == 'backward')}")
        elif self.via == "expansion":
            lead = f"Reached over an edge of chunk {self.parent}"
            if self.edge is not None and self.direction is not None:
                lead += f", followed {self.direction}: {self.edge.reads(backward=self.direction == 'backward')}"
        elif self.via == "comention":
            lead = f"Reached {self.hops or 1} hop(s) from the entities of chunk {self.parent}"
        if self.via == "bridge":
            lead = (lead + "; " if lead else "") + (f"placed after chunk {self.parent}, which names its title, as the "
                                                   "linked passage most similar to what the question asks beside its names")
        if self.edge is not None:
            parts.append("through " + self.edge.describe())
        if self.reached is not None:
            parts.append(f"for {self.reached}")
        if self.cited_path is not None:
            step = self.cited_path
            parts.append(f"states hop {step.hop_number} of the path {_ARROW.join(step.path)}: {step.hop.describe()}")
        if self.community is not None:
            where = "a passage of" if self.point_kind == "passage" else "quoted by the report of"
            parts.append(f"{where} the community “{self.community_title or self.community}”"
                         + (f" (similarity {_round(self.similarity)})" if self.similarity is not None else ""))
        if self.matched_terms is not None:
            parts.append((f"matched the words {_quote(self.matched_terms)}" if self.matched_terms else "matched no word")
                         + (f" (BM25 {_round(self.bm25)})" if self.bm25 is not None else ""))
        if self.literal_match:
            parts.append(f"holds {_quote(self.literal_match)} literally (+{self.literal_boost or 0:g})")
        if self.similarity is not None and self.community is None:
            parts.append(f"embedding similarity {_round(self.similarity)}")
        if self.pagerank is not None:
            parts.append(f"PageRank {_round(self.pagerank)}")
        if self.ppr_mass is not None:
            parts.append(f"PageRank mass {_round(self.ppr_mass)}")
        if self.entities is not None:
            parts.append(f"mentions {_quote(self.entities)}" if self.entities else "mentions no graph entity")
        if self.kept_by_window is not None:
            parts.append(self.kept_by_window)
        if not lead and not parts:
            return "No explanation given."
        sentence = "; ".join(([lead] if lead else []) + parts)
        return sentence[:1].upper() + sentence[1:] + "."


@dataclass
class Hit:
    """One ranked chunk returned by a retriever."""

    chunk_id: str
    """The chunk's id (its citation)."""
    document: str
    """The chunk's document id."""
    text: str
    """The chunk's text."""
    score: float
    """The mode's score; higher is better, comparable within one result only."""
    rank: int = 0
    """1-based rank in the result."""
    why: Why = field(default_factory=Why)
    """Why it came back."""
    time: str | None = None
    """When its chunk was written: the chunk's timestamp, else its document's date (ISO 8601)."""

    def to_json(self) -> dict[str, Any]:
        return to_json(self, order=("rank", "chunk_id", "document", "score", "time", "text"))


@dataclass(frozen=True)
class Seed:
    """An entity graphrag's walk restarts from."""

    JSON_DROPS_NONE: ClassVar[bool] = True

    entity: str
    """Display name."""
    key: str
    """Canonical key."""
    source: str
    """``named`` (the query names it) or ``similar`` (its name embedding is near the query's)."""
    specificity: float | None = None
    """For a named seed: 1 / the passages that mention it."""
    similarity: float | None = None
    """For a similar seed: the cosine similarity of its name to the query."""

    @property
    def score(self) -> float:
        """Its similarity, else its specificity."""
        return self.similarity if self.similarity is not None else (self.specificity or 0.0)

    def to_json(self) -> dict[str, Any]:
        return to_json(self)


@dataclass(frozen=True)
class ContextNode:
    """An entity of a graph context."""

    name: str
    """Display name."""
    key: str | None = None
    """Canonical key, when the mode knows it."""
    type: str | None = None
    """Entity type, when the mode knows it."""
    ppr: float | None = None
    """PageRank mass of the walk (graphrag)."""

    def to_json(self) -> dict[str, Any]:
        return to_json(self)


@dataclass(frozen=True)
class PassageMass:
    """A passage the walk reached, with the mass it received (graphrag)."""

    chunk: str
    """The chunk id."""
    mass: float
    """The walk mass added to it."""

    def to_json(self) -> dict[str, Any]:
        return to_json(self)


@dataclass(frozen=True)
class CommunityUse:
    """A community report global search used."""

    id: str
    """The report's id."""
    title: str
    """Its title."""
    size: int
    """Member entities."""
    similarity: float
    """Cosine similarity of the report to the question."""
    first_seen: str | None = None
    """Earliest time of a member."""
    last_seen: str | None = None
    """Latest time of a member."""
    key_entities: tuple[str, ...] = ()
    """Display names of its most central members."""
    points: tuple[str, ...] = ()
    """The points taken from it, in order."""
    citations: tuple[str, ...] = ()
    """The chunk id each point quotes, in the order of ``points``."""
    passages: int = 0
    """Its passages."""

    def to_json(self) -> dict[str, Any]:
        return to_json(self)


@dataclass
class GraphContext:
    """What a mode walked of the graph, each fact cited; empty for chunk-only modes.

    ``to_json`` always has every key (empty lists, ``None``), so a reader never guesses.
    """

    seeds: list[Seed] = field(default_factory=list)
    """Entities the walk restarted from (graphrag)."""
    nodes: list[ContextNode] = field(default_factory=list)
    """Entities of the context: the walk's top entities (graphrag), those on the paths (paths)."""
    triples: list[Hop] = field(default_factory=list)
    """Cited edges among them."""
    passages: list[PassageMass] = field(default_factory=list)
    """Passages the walk reached, most mass first (graphrag)."""
    reading: str | None = None
    """The question's structural reading, if it has one (paths, graphrag)."""
    entities: list[str] = field(default_factory=list)
    """Display names of the entities that reading starts from (paths)."""
    paths: list[GraphPath] = field(default_factory=list)
    """The cited paths that answer it, best first (paths, graphrag)."""
    impact: Impact | None = None
    """For an impact reading: the whole impact, the failed entity and the survivors included
    (paths, graphrag)."""
    communities: list[CommunityUse] = field(default_factory=list)
    """Community reports used (global)."""
    themes: bool = False
    """True when global search answered a question asking for the corpus's themes: ``communities``
    are then the themes, largest first, each with its cited points."""
    themes_from: ThemesFrom | None = None
    """The record version the community reports global search used describe (older than the
    record's while they are rebuilt in the background); None for the other modes."""

    @property
    def empty(self) -> bool:
        """True when the mode walked no graph."""
        return not (self.seeds or self.nodes or self.triples or self.passages or self.paths or self.communities
                    or self.reading or self.impact)

    @property
    def failed(self) -> str | None:
        """For an impact reading: the failed entity (``impact.failed``, which the JSON holds once)."""
        return self.impact.failed if self.impact is not None else None

    def to_json(self) -> dict[str, Any]:
        """Every field, once: the failed entity and the survivors are the impact's
        (``impact.failed``, ``impact.survivors``)."""
        return to_json(self)


@dataclass(frozen=True)
class WindowUse:
    """How :func:`workbench.retrieve.retrieve` applied a time window."""

    JSON_DROPS_NONE: ClassVar[bool] = True

    window: TimeWindow
    """The window."""
    in_window: int
    """Hits fetched that fall in it."""
    asked: int | None = None
    """Hits asked of the retriever (more than ``k``, to fill ``k`` inside the window)."""
    fetched: int | None = None
    """Hits the retriever returned."""
    kept: int | None = None
    """Hits kept (at most ``k``)."""
    searched_text: str | None = None
    """The text searched: the question without the phrase that set the window, or all of it."""
    ignored: bool = False
    """True when no dated source fell in the window and the question was answered without it."""
    undated_kept: int | None = None
    """Undated hits kept after the dated ones (see :func:`workbench.retrieve.undated_policy`)."""
    outside_kept: int | None = None
    """Hits dated outside the window kept after the dated ones because a relation leads to them
    from a hit inside it (the runbook, written before, that an incident in it is resolved by)."""

    def to_json(self) -> dict[str, Any]:
        """The window's keys, then the counts; a count not taken is left out."""
        out = to_json(self, order=("window", "in_window", "ignored"))
        return {**out.pop("window"), **out}


@dataclass
class RetrievalStats:
    """Timings and counts of one retrieval. ``seconds`` is always there; a mode fills the counts
    that apply to it and leaves the rest ``None`` (left out of :meth:`to_json`). The mode used and
    why it differs from the one requested are on :class:`RetrievalResult`."""

    JSON_DROPS_NONE: ClassVar[bool] = True

    seconds: dict[str, float] = field(default_factory=dict)
    """Seconds per stage (``embed``, ``search``, ``ppr``...) and ``total``."""
    keyword_hits: int | None = None
    """Hits found by keyword search (keyword, hybrid, graphrag without embeddings)."""
    vector_hits: int | None = None
    """Hits found by vector search (vector, hybrid, graphrag-seed's vector ranking)."""
    hybrid_hits: int | None = None
    """Hits in the hybrid ranking graphrag fuses (graphrag), or hits of the hybrid search the
    ``vector_only`` fallback returns (graphrag, graphrag-seed)."""
    literal_terms: list[str] | None = None
    """Identifiers of the query that earn the literal boost (vector, hybrid)."""
    direct_hits: int | None = None
    """Direct vector hits, best chunk per document (direct, expand, comention)."""
    expanded_hits: int | None = None
    """Hits added over one edge (expand)."""
    edges_followed: int | None = None
    """Edges followed from the direct hits (expand)."""
    comention_hits: int | None = None
    """Hits added by the co-mention walk (comention)."""
    entities_reached: int | None = None
    """Entities the walk reached (comention)."""
    hops: int | None = None
    """Hops the walk took (comention)."""
    seeds: list[Seed] | None = None
    """The seed entities (graphrag; the same as :attr:`GraphContext.seeds`)."""
    dense_seeds: list[str] | None = None
    """Chunk ids of the dense passage seeds (graphrag)."""
    top_entities: int | None = None
    """Entities with the most walk mass taken for the context, at most ``ppr_top_k`` (graphrag,
    graphrag-seed)."""
    walk_nodes: int | None = None
    """Nodes of the graph the walk runs over, the count ``max_graph_nodes`` guards: entities and
    passages (graphrag), entities (graphrag-seed)."""
    graph: dict[str, int] | None = None
    """Counts of the passage layer the walk ran over: passages, links, title links... (graphrag)."""
    ppr_iterations: int | None = None
    """PageRank iterations (graphrag)."""
    ppr_converged: bool | None = None
    """Whether PageRank converged within its iterations (graphrag)."""
    walk_hits: int | None = None
    """Hits ranked by the walk (graphrag)."""
    provenance_hits: int | None = None
    """Hits that are provenance chunks of the top entities (graphrag, graphrag-seed)."""
    entities: list[str] | None = None
    """Entities the question names (paths)."""
    matched_by: str | None = None
    """How they were found: ``name``, ``similarity`` or ``none`` (paths)."""
    reading: str | None = None
    """The question's structural reading (paths)."""
    paths: int | None = None
    """Cited paths found (paths)."""
    communities: int | None = None
    """Community reports available (global)."""
    communities_used: int | None = None
    """Community reports used (global)."""
    global_hits: int | None = None
    """Hits taken from their points (global)."""
    time_window: WindowUse | None = None
    """How a time window was applied, when one was (every mode)."""
    time_phrases_not_understood: list[str] | None = None
    """Phrases of the question that look like time but set no window (every mode)."""

    def to_json(self) -> dict[str, Any]:
        return to_json(self)


@dataclass
class RetrievalResult:
    """What every retrieval strategy returns; :meth:`to_json` is the one serialization the CLI,
    the MCP server, the notebooks and the app share."""

    query: str
    """The question as asked."""
    mode_requested: str
    """The mode asked for."""
    mode_used: str
    """The mode that ran (``full_graphrag``, ``vector_only``, ``keyword_only``... when it differs)."""
    hits: list[Hit] = field(default_factory=list)
    """Ranked hits, best first."""
    stats: RetrievalStats = field(default_factory=RetrievalStats)
    """Timings and counts."""
    graph_context: GraphContext = field(default_factory=GraphContext)
    """What the mode walked of the graph, when it walks one."""
    reason: str = ""
    """Why the mode used differs from the one requested, or how it was chosen."""

    def to_json(self) -> dict[str, Any]:
        return to_json(self, order=("query", "mode_requested", "mode_used", "reason"))
