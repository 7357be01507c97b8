"""The context graph drawn for people: filtered views, rendered as offline pyvis HTML.

:func:`select_view` filters the co-mention graph or the typed relation graph (entity type,
minimum weight, time range, relation), ranks nodes by degree, mentions or PageRank, keeps the
top N of large graphs and says how many entities each filter hides; on request it adds the
chunks that mention the shown entities as small nodes. :func:`~workbench.views.graph_html.graph_html` renders a view with
pyvis, fully offline: vis-network is inlined and every remaining CDN tag (Bootstrap) is
stripped. Names reach the page exactly once and as text: node and edge data are written as
JSON with ``<``, ``>`` and ``&`` escaped (Jinja's ``tojson``), labels are drawn on a canvas and
string tooltips are shown with ``innerText``, so a document may name an entity
``<img src=x onerror=alert(1)>`` and it is shown as written, never run.

A type's colour is derived from the type's name (:func:`type_color`), so it is the same in every
view, after every ingest and for types added later; :func:`type_legend` lists the colours shown.

Examples
--------
>>> from workbench.context_graph.graph import ContextGraph
>>> from workbench.model import Edge, Entity
>>> graph = ContextGraph([Entity("a", "<b>A</b>", mentions=3), Entity("b", "B", mentions=1)],
...                      [Edge("a", "uses", "b", chunk_ids=("c1",))])
>>> view = select_view(graph, RELATIONS)
>>> [e.name for e in view.nodes], view.note
(['<b>A</b>', 'B'], '')
>>> from workbench.views.graph_html import graph_html
>>> page = graph_html(view)
>>> "<b>A</b>" in page, "\\\\u003cb\\\\u003eA\\\\u003c/b\\\\u003e" in page
(False, True)
"""

from __future__ import annotations

import re
from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass, field

from ..context_graph.graph import ContextGraph
from ..model import Edge, Entity
from .wording import counted

__all__ = [
    "COMENTION",
    "RELATIONS",
    "VIEWS",
    "GraphFacts",
    "graph_facts",
    "MAX_LISTED_NAMES",
    "entity_choices",
    "RANKINGS",
    "GraphFilters",
    "GraphView",
    "ChunkNode",
    "select_view",
    "community_view",
    "max_edge_weight",
    "graph_dates",
    "edge_passes",
    "within_hops",
    "is_noise",
    "NOISE_TYPES",
    "TITLE_TYPES",
]

#: The co-mention graph: entities named in the same chunk.
COMENTION = "co-mention"
#: The typed relation graph: relations stated by the text or declared by notes.
RELATIONS = "relations"
VIEWS = (COMENTION, RELATIONS)
#: How nodes are ranked for the top-N cut and sized.
RANKINGS = ("degree", "pagerank", "mentions")



@dataclass(frozen=True)
class GraphFilters:
    """What to show of the graph."""

    types: tuple[str, ...] | None = None
    """Entity types to keep; ``None`` keeps all."""
    min_weight: int = 1
    """Keep edges stated by at least this many chunks."""
    time_range: tuple[str, str] | None = None
    """``(start, end)`` ISO dates: keep edges seen in that range (undated edges are kept)."""
    relations: tuple[str, ...] | None = None
    """Relations to keep in the relation view; ``None`` keeps all."""
    size_by: str = "degree"
    """How nodes are ranked and sized: ``degree`` (edges shown), ``pagerank`` or ``mentions``."""
    top_n: int = 150
    """Show at most this many entities, the highest ranked first."""
    show_chunks: bool = False
    """Also draw the chunks that mention the shown entities, as small nodes."""
    max_chunks: int = 150
    """Draw at most this many chunks (those mentioning the most shown entities first)."""
    focus: str | None = None
    """An entity key to keep in view with its neighbours, whatever the top-N cut."""
    hops: int = 0
    """With ``focus``: show only the entities within this many edges of it (0: the whole view);
    those one edge further are drawn hidden, and a click on a node shows its neighbours."""
    show_noise: bool = False
    """Also show entities that are numbers, durations, dates or document titles (:func:`is_noise`)."""


@dataclass(frozen=True)
class ChunkNode:
    """A passage drawn beside the entities it mentions."""

    id: str
    """The chunk id."""
    entities: tuple[str, ...]
    """Keys of the shown entities it mentions."""
    document: str = ""
    """The document it belongs to, when known."""
    title: str = ""
    """Its document's title, when known: the node's label."""


@dataclass
class GraphView:
    """The part of the graph to draw."""

    nodes: list[Entity]
    """Entities shown, highest ranked first."""
    edges: list[Edge]
    """Edges between shown entities."""
    sizes: dict[str, float] = field(default_factory=dict)
    """Rank measure per entity key (degree, PageRank or mentions)."""
    directed: bool = True
    """Whether the view's relations have a direction (co-mention has none)."""
    total_nodes: int = 0
    """Entities that passed the filters, before the top-N cut."""
    note: str = ""
    """Says what the filters and the top-N cut hide; empty when everything is shown."""
    hidden: dict[str, int] = field(default_factory=dict)
    """Entities hidden, by reason: ``type``, ``no edge``, ``top n``."""
    chunks: list[ChunkNode] = field(default_factory=list)
    """Chunks drawn as small nodes (with ``show_chunks``)."""
    focus: str | None = None
    """The entity to highlight and centre on, if it is shown."""
    folded: frozenset[str] = frozenset()
    """Entities drawn hidden, shown when a neighbour is clicked (the focused view's next hop)."""
    focus_edges: list[Edge] = field(default_factory=list)
    """The drawn edges at :attr:`focus`: what the page lists as its neighbours."""
    focus_total: int = 0
    """The edges at the entity found in this view before any filter (those left out = this - drawn)."""

    @property
    def visible(self) -> int:
        """Entities on screen when the view opens (:attr:`folded` ones wait for a click)."""
        return len(self.nodes) - len(self.folded)


def _day(stamp: str | None) -> str | None:
    return stamp[:10] if stamp else None


def _in_time(edge: Edge, time_range: tuple[str, str] | None) -> bool:
    if time_range is None:
        return True
    first, last = _day(edge.first_seen), _day(edge.last_seen or edge.first_seen)
    if first is None:
        return True  # an undated statement cannot be placed outside the range
    start, end = time_range
    return first <= end and (last or first) >= start


def graph_dates(graph: ContextGraph) -> list[str]:
    """Distinct ISO dates on which edges were seen, sorted (for a time-range slider)."""
    days: set[str] = set()
    for edge in graph.edges_as_given():  # every edge, co-mention included; no networkx graph built
        days.update(d for d in (_day(edge.first_seen), _day(edge.last_seen)) if d)
    return sorted(days)


def edge_passes(edge: Edge, graph: ContextGraph, filters: GraphFilters, view: str = RELATIONS) -> bool:
    """Whether ``edge`` passes the filters of the Graph page (types, weight, time, relations):
    the drawing and the tables below it apply the same test."""
    types = set(filters.types) if filters.types is not None else None
    if types is not None and (graph.entity(edge.source).type not in types or graph.entity(edge.target).type not in types):
        return False
    return (edge.weight >= filters.min_weight and _in_time(edge, filters.time_range)
            and (view == COMENTION or filters.relations is None or edge.relation in filters.relations))


def within_hops(edges: Iterable[Edge], start: str, hops: int) -> dict[str, int]:
    """Entity key -> edges from ``start`` (either direction), for those within ``hops``.

    >>> from workbench.model import Edge
    >>> within_hops([Edge("a", "uses", "b"), Edge("c", "uses", "b"), Edge("c", "uses", "d")], "a", 2)
    {'a': 0, 'b': 1, 'c': 2}
    """
    around: dict[str, set[str]] = {}
    for edge in edges:
        around.setdefault(edge.source, set()).add(edge.target)
        around.setdefault(edge.target, set()).add(edge.source)
    distance, frontier = {start: 0}, [start]
    for step in range(1, hops + 1):
        frontier = sorted({n for at in frontier for n in around.get(at, ()) if n not in distance})
        distance.update((n, step) for n in frontier)
    return distance


_NUMBER = re.compile(r"^[\s\d.,:/%#+\-–]+$")
_DURATION = re.compile(r"^\s*(?:\d+(?:[.,]\d+)?|an?|one|two|three|four|five|six|seven|eight|nine|ten|twelve|"
                       r"twenty|thirty|sixty|ninety|hundred)[\s-]*(?:ms|s|sec|secs|seconds?|minutes?|mins?|hours?|hrs?|"
                       r"h|days?|d|weeks?|wk|months?|mo|quarters?|years?|yrs?|y)\s*$", re.IGNORECASE)
_MONTH = re.compile(r"^\s*(?:\d{1,2}\s+)?(?:jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec)[a-z]*\.?"
                    r"(?:\s+\d{1,2}(?:st|nd|rd|th)?)?,?(?:\s+\d{4})?\s*$", re.IGNORECASE)
#: Entity types that are values, not things (extractors' names for them).
NOISE_TYPES = frozenset({"date", "time", "number", "duration", "quantity", "money", "percent", "cardinal",
                         "ordinal"})
#: Entity types a document's own title takes (a note's node; a service named by its note is a service).
TITLE_TYPES = frozenset({"title", "note"})


def is_noise(entity: Entity, titles: Collection[str] = ()) -> bool:
    """Whether an entity is a value or a label rather than a thing: a number, a duration, a date,
    or a document's title (one of ``titles``, case-folded, as a title or note entity). Hidden from
    the graph unless asked for.

    Examples
    --------
    >>> [is_noise(Entity(k, n)) for k, n in [("a", "90 days"), ("b", "2023"), ("c", "Nov 2024"), ("d", "Redis")]]
    [True, True, True, False]
    >>> titles = {"decision: move sessions to redis", "auth service"}
    >>> is_noise(Entity("e", "Decision: move sessions to Redis", type="note"), titles)
    True
    >>> is_noise(Entity("f", "Auth Service", type="service"), titles)
    False
    """
    name = entity.name.strip()
    return (entity.type.casefold() in NOISE_TYPES or bool(_NUMBER.match(name)) or bool(_DURATION.match(name))
            or (bool(_MONTH.match(name)) and any(ch.isdigit() for ch in name))
            or (entity.type.casefold() in TITLE_TYPES and name.casefold() in titles))


def _view_edges(graph: ContextGraph, view: str) -> list[Edge]:
    return graph.comention_edges() if view == COMENTION else graph.edges()


def max_edge_weight(graph: ContextGraph, view: str = RELATIONS) -> int:
    """The largest edge weight in ``view`` (1 for an empty graph): the top of a weight slider.

    Examples
    --------
    >>> from workbench.context_graph.graph import ContextGraph
    >>> g = ContextGraph([Entity("a", "A"), Entity("b", "B")], [Edge("a", "uses", "b", chunk_ids=("c1", "c2"))])
    >>> max_edge_weight(g), max_edge_weight(g, COMENTION)
    (2, 1)
    """
    return max((edge.weight for edge in _view_edges(graph, view)), default=1) or 1


@dataclass(frozen=True)
class GraphFacts:
    """What the Graph page's filters are made of, computed once per graph version: every entity's
    name (and the keys in name order, for the search box), the types, relations and dates the
    graph holds. (The co-mention view's top weight is not here: deriving the co-mention edges
    of a large graph takes a while, so it is computed only when that view is chosen.)"""

    names: dict[str, str]
    keys_by_name: tuple[str, ...]
    types: tuple[str, ...]
    relations: tuple[str, ...]
    dates: tuple[str, ...]
    folded_by_name: tuple[str, ...] = ()
    """The names of :attr:`keys_by_name`, case-folded, for :func:`entity_choices`."""


def graph_facts(graph: ContextGraph) -> GraphFacts:
    """The :class:`GraphFacts` of ``graph``.

    >>> from workbench.context_graph.graph import ContextGraph
    >>> g = ContextGraph([Entity("b", "beta"), Entity("a", "Alpha")], [Edge("a", "uses", "b", chunk_ids=("c1", "c2"))])
    >>> facts = graph_facts(g)
    >>> facts.keys_by_name, facts.relations
    (('a', 'b'), ('uses',))
    """
    names = graph.names()  # read from a loaded graph's columns: no entity made
    by_name = sorted((name.casefold(), key) for key, name in names.items())
    return GraphFacts(names, tuple(key for _, key in by_name), tuple(sorted(set(graph.types().values()))),
                      tuple(sorted({edge.relation for edge in graph.edges()})), tuple(graph_dates(graph)),
                      tuple(folded for folded, _ in by_name))


#: Most entities the Graph page's search box lists. A larger graph is narrowed by typed text
#: first: every option is sent to the browser at each rerun.
MAX_LISTED_NAMES = 2000


def entity_choices(facts: GraphFacts, text: str, limit: int | None = None) -> tuple[str, ...]:
    """The keys the search box lists: all of them in a graph of at most ``limit`` entities
    (default :data:`MAX_LISTED_NAMES`), else those whose name contains ``text`` (case-folded),
    names starting with it first, at most ``limit``; none before anything is typed.

    >>> from workbench.context_graph.graph import ContextGraph
    >>> facts = graph_facts(ContextGraph([Entity("r", "Redis"), Entity("t", "token cache"), Entity("p", "PostgreSQL")], []))
    >>> entity_choices(facts, ""), entity_choices(facts, "", limit=2), entity_choices(facts, "RE", limit=2)
    (('p', 'r', 't'), (), ('r', 'p'))
    """
    limit = MAX_LISTED_NAMES if limit is None else limit
    if len(facts.keys_by_name) <= limit:
        return facts.keys_by_name
    text = text.strip().casefold()
    if not text:
        return ()
    starting, containing = [], []
    for key, folded in zip(facts.keys_by_name, facts.folded_by_name):
        if folded.startswith(text):
            starting.append(key)
        elif text in folded:
            containing.append(key)
        if len(starting) >= limit:
            break
    return tuple((starting + containing)[:limit])


def _hidden_note(hidden: Mapping[str, int], f: GraphFilters, shown: int) -> str:
    parts = []
    if hidden.get("type"):
        parts.append(f"{counted(hidden['type'], 'entity', 'entities')} of other types")
    if hidden.get("noise"):
        noise = counted(hidden["noise"], "number, duration, date or document title",
                        "numbers, durations, dates and document titles")
        parts.append(f"{noise} (turn on “Show values and titles”)")
    if hidden.get("no edge"):
        why = [] if f.min_weight <= 1 else [f"weight ≥ {f.min_weight}"]
        why += ["the time range"] if f.time_range else []
        why += ["the chosen relations"] if f.relations else []
        reason = f" passing {', '.join(why)}" if why else " in this view"
        parts.append(f"{hidden['no edge']} with no edge{reason}")
    if hidden.get("far"):
        parts.append(f"{hidden['far']} more than {f.hops} {'edge' if f.hops == 1 else 'edges'} away from the entity "
                     "found (click a node to show its neighbours, or raise the steps)")
    if hidden.get("top n"):
        parts.append(f"{hidden['top n']} below the top {shown} by {f.size_by} (raise the node limit or filter)")
    return ("Hidden: " + "; ".join(parts) + ".") if parts else ""


def select_view(graph: ContextGraph, view: str = COMENTION, filters: GraphFilters | None = None,
                chunk_entities: Mapping[str, Collection[str]] | None = None,
                chunk_documents: Mapping[str, str] | None = None,
                chunk_titles: Mapping[str, str] | None = None, document_titles: Collection[str] = ()) -> GraphView:
    """The entities and edges of ``view`` (:data:`COMENTION` or :data:`RELATIONS`) that pass ``filters``.

    Only entities with at least one edge left are shown; when more than ``filters.top_n``
    remain, the highest ranked are kept (plus ``filters.focus`` and its neighbours). The note
    says how many entities each filter hid. With ``filters.show_chunks``, ``chunk_entities``
    (chunk id -> entity keys it mentions) gives the chunks to draw. Unless
    ``filters.show_noise``, numbers, durations, dates and the title entities of
    ``document_titles`` are left out (:func:`is_noise`), the focused entity excepted.
    """
    if view not in VIEWS:
        raise ValueError(f"unknown graph view {view!r}; views: {', '.join(VIEWS)}")
    f = filters or GraphFilters()
    if f.size_by not in RANKINGS:
        raise ValueError(f"size_by must be one of {', '.join(RANKINGS)}, got {f.size_by!r}")
    types = set(f.types) if f.types is not None else None
    # None: every entity passes (no set of every key made)
    keep_type = None if types is None else {key for key, t in graph.types().items() if t in types}
    kept = len(graph) if keep_type is None else len(keep_type)
    all_edges = _view_edges(graph, view)
    noise: set[str] = set()
    if not f.show_noise:
        folded_titles = {title.casefold().strip() for title in document_titles if title}
        ends = {end for edge in all_edges for end in (edge.source, edge.target)}
        noise = {key for key in ends if key != f.focus and is_noise(graph.entity(key), folded_titles)}
    edges = [
        edge for edge in all_edges
        if (keep_type is None or (edge.source in keep_type and edge.target in keep_type)) and edge.weight >= f.min_weight
        and _in_time(edge, f.time_range)
        and (view == COMENTION or f.relations is None or edge.relation in f.relations)
        and edge.source not in noise and edge.target not in noise
    ]
    degree: dict[str, int] = {}
    for edge in edges:
        for end in (edge.source, edge.target):
            degree[end] = degree.get(end, 0) + 1
    if f.size_by == "degree":
        sizes = {key: float(d) for key, d in degree.items()}
    elif f.size_by == "mentions":
        sizes = {key: float(graph.entity(key).mentions) for key in degree}
    else:  # the one graph's own PageRank, passages included
        centrality = graph.centrality()
        total = sum(centrality.get(key, 0.0) for key in degree) or 1.0
        sizes = {key: centrality.get(key, 0.0) / total for key in degree}
    ranked = sorted(sizes, key=lambda k: (-sizes[k], graph.name(k).casefold(), k))
    shown = set(ranked[: max(f.top_n, 0)])
    focus = f.focus if f.focus in degree else None
    folded: set[str] = set()
    if focus is not None and f.hops > 0:  # the focused view: the picked entity's neighbourhood only
        distance = within_hops(edges, focus, f.hops + 1)
        shown = {key for key, d in distance.items() if d <= f.hops}
        folded = {key for key, d in distance.items() if d == f.hops + 1}
    elif focus is not None:  # the picked entity and its neighbours stay in view
        shown |= {focus} | {e.target if e.source == focus else e.source for e in edges if focus in (e.source, e.target)}
    noise_kept = len(noise) if keep_type is None else len(noise & keep_type)
    hidden = {"type": len(graph) - kept, "noise": noise_kept, "no edge": kept - noise_kept - len(degree),
              "far": len(ranked) - len(shown) if focus is not None and f.hops > 0 else 0,
              "top n": len(ranked) - len(shown) if focus is None or f.hops <= 0 else 0}
    hidden = {reason: count for reason, count in hidden.items() if count > 0}
    drawn = shown | folded
    shown_edges = [e for e in edges if e.source in drawn and e.target in drawn]
    chunks: list[ChunkNode] = []
    if f.show_chunks and chunk_entities:
        linked = [(chunk, tuple(sorted(k for k in keys if k in shown))) for chunk, keys in chunk_entities.items()]
        linked = sorted(((c, ks) for c, ks in linked if ks), key=lambda item: (-len(item[1]), item[0]))
        documents, titles = chunk_documents or {}, chunk_titles or {}
        chunks = [ChunkNode(c, ks, documents.get(c, ""), titles.get(c, "")) for c, ks in linked[: max(f.max_chunks, 0)]]
        if len(linked) > len(chunks):
            hidden["chunks"] = len(linked) - len(chunks)
    note = _hidden_note(hidden, f, len(shown))
    if hidden.get("chunks"):
        note = (note + " " if note else "") + f"Showing {len(chunks)} of {len(chunks) + hidden['chunks']} chunks."
    at_focus = [e for e in shown_edges if focus is not None and focus in (e.source, e.target)]
    focus_total = sum(1 for e in all_edges if f.focus is not None and f.focus in (e.source, e.target))
    return GraphView(
        focus_edges=at_focus,
        focus_total=focus_total,
        nodes=[graph.entity(k) for k in ranked if k in drawn],
        edges=shown_edges,
        sizes={k: sizes[k] for k in drawn},
        directed=view == RELATIONS,
        total_nodes=len(ranked),
        note=note,
        hidden=hidden,
        chunks=chunks,
        focus=focus,
        folded=frozenset(folded),
    )


def community_view(graph: ContextGraph, members: Collection[str], view: str = RELATIONS) -> GraphView:
    """The entities of one community and the edges among them, for :func:`~workbench.views.graph_html.graph_html`.

    ``view`` is :data:`RELATIONS` (cited relations) or :data:`COMENTION`; a community held
    together by co-mentions alone is drawn with its co-mention edges either way.
    """
    sub = graph.subgraph([key for key in members if key in graph])
    chosen = view if view == COMENTION or sub.edges() else COMENTION
    return select_view(sub, chosen, GraphFilters(top_n=max(1, len(sub))))
