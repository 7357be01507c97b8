"""Views of the context graph for people: filtered pyvis HTML and pandas tables for the pages.

:func:`select_view` filters the co-mention graph or the typed relation graph (entity type,
minimum weight, time range, relation), sizes nodes by degree or mentions and keeps the top N
nodes of large graphs, saying so. :func:`graph_html` renders a view with pyvis, fully offline:
vis-network is inlined, every remaining CDN tag (Bootstrap) is stripped, and every label and
tooltip is HTML-escaped, because pyvis shows tooltips with ``innerHTML`` and a document may name
an entity ``<img src=x onerror=alert(1)>``.

The ``*_frame`` functions turn core results into :class:`pandas.DataFrame` tables.

Examples
--------
>>> from workbench.graph import ContextGraph
>>> from workbench.model import Edge, Entity
>>> graph = ContextGraph([Entity("a", "<b>A</b>", mentions=3), Entity("b", "B", mentions=1)],
...                      [Edge("a", "uses", "b", chunk_ids=("c1",))])
>>> view = select_view(graph, RELATIONS)
>>> [e.name for e in view.nodes], view.note
(['<b>A</b>', 'B'], '')
>>> html = graph_html(view)
>>> "<b>A</b>" in html
False
"""

from __future__ import annotations

import html
import json
import math
import re
import zlib
from collections.abc import Callable, Collection, Iterable, Mapping
from dataclasses import dataclass, field

import pandas as pd

from .graph import COMENTION_RELATION, ContextGraph, Neighborhood
from .model import Edge, Entity, GraphPath, RetrievalResult

__all__ = [
    "COMENTION",
    "RELATIONS",
    "VIEWS",
    "GraphFilters",
    "GraphView",
    "select_view",
    "graph_html",
    "strip_cdn_tags",
    "graph_dates",
    "documents_frame",
    "merges_frame",
    "suggestions_frame",
    "merge_log_frame",
    "neighbours_frame",
    "edge_chunks_frame",
    "shared_hits",
    "hits_frame",
    "path_frame",
    "impact_frame",
    "seeds_text",
]

#: The co-mention graph: entities named in the same chunk.
COMENTION = "co-mention"
#: The typed relation graph: relations stated by the text or declared by notes.
RELATIONS = "relations"
VIEWS = (COMENTION, RELATIONS)

_PALETTE = ("#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948", "#b07aa1", "#ff9da7",
            "#9c755f", "#bab0ac")
_CDN_LINK = re.compile(r"<link\b[^>]*?href\s*=\s*[\"']?(?:https?:)?//[^>]*>", re.IGNORECASE | re.DOTALL)
_CDN_SCRIPT = re.compile(r"<script\b[^>]*?src\s*=\s*[\"']?(?:https?:)?//[^>]*>.*?</script\s*>",
                         re.IGNORECASE | re.DOTALL)


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
    """``degree`` (edges shown) or ``mentions``."""
    top_n: int = 150
    """Show at most this many nodes, the largest first."""


@dataclass
class GraphView:
    """The part of the graph to draw."""

    nodes: list[Entity]
    """Entities shown, largest first."""
    edges: list[Edge]
    """Edges between shown entities."""
    sizes: dict[str, float] = field(default_factory=dict)
    """Size measure per entity key (degree or mentions)."""
    directed: bool = True
    total_nodes: int = 0
    """Entities that passed the filters, before the top-N cut."""
    note: str = ""
    """Says when only the top N nodes are shown; empty otherwise."""


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
    days = set()
    for _, _, edge in graph.nx.edges(data="edge"):
        days.update(d for d in (_day(edge.first_seen), _day(edge.last_seen)) if d)
    return sorted(days)


def select_view(graph: ContextGraph, view: str = COMENTION, filters: GraphFilters | None = None) -> GraphView:
    """The entities and edges of ``view`` (:data:`COMENTION` or :data:`RELATIONS`) that pass ``filters``.

    Only entities with at least one edge left are shown; when more than ``filters.top_n``
    remain, the largest are kept and :attr:`GraphView.note` says so.
    """
    if view not in VIEWS:
        raise ValueError(f"unknown graph view {view!r}; views: {', '.join(VIEWS)}")
    f = filters or GraphFilters()
    if f.size_by not in ("degree", "mentions"):
        raise ValueError(f"size_by must be 'degree' or 'mentions', got {f.size_by!r}")
    types = set(f.types) if f.types is not None else None
    keep_type = {key for key, e in graph.nx.nodes(data="entity") if types is None or e.type in types}
    edges = [
        edge for edge in (graph.edges(COMENTION_RELATION) if view == COMENTION else graph.edges())
        if edge.source in keep_type and edge.target in keep_type and edge.weight >= f.min_weight
        and _in_time(edge, f.time_range)
        and (view == COMENTION or f.relations is None or edge.relation in f.relations)
    ]
    degree: dict[str, int] = {}
    for edge in edges:
        for end in (edge.source, edge.target):
            degree[end] = degree.get(end, 0) + 1
    sizes = {key: float(d if f.size_by == "degree" else graph.entity(key).mentions) for key, d in degree.items()}
    ranked = sorted(sizes, key=lambda k: (-sizes[k], graph.name(k).casefold(), k))
    shown = set(ranked[: max(f.top_n, 0)])
    note = ""
    if len(ranked) > len(shown):
        note = (f"Showing the top {len(shown)} of {len(ranked)} entities by {f.size_by}; "
                "raise the node limit or filter to see others.")
    return GraphView(
        nodes=[graph.entity(k) for k in ranked if k in shown],
        edges=[e for e in edges if e.source in shown and e.target in shown],
        sizes={k: sizes[k] for k in shown},
        directed=view == RELATIONS,
        total_nodes=len(ranked),
        note=note,
    )


def _color(entity_type: str) -> str:
    return _PALETTE[zlib.crc32(entity_type.encode("utf-8")) % len(_PALETTE)]


def _lines(*lines: str) -> str:
    """Tooltip text, each line escaped: vis-network shows it with ``innerText``, but pyvis's own
    popup (``tooltip_link``) uses ``innerHTML``, so the text must be safe as HTML too."""
    return "\n".join(html.escape(line) for line in lines)


def strip_cdn_tags(page: str) -> str:
    """Remove every ``<link>`` and ``<script src>`` tag that points at another host."""
    return _CDN_SCRIPT.sub("", _CDN_LINK.sub("", page))


def graph_html(view: GraphView, height: int = 600) -> str:
    """A self-contained HTML page drawing ``view`` with pyvis (no network access needed).

    Every label and tooltip is escaped with :func:`html.escape`; node ids are integers, so no
    document text reaches the page unescaped.
    """
    from pyvis.network import Network  # imported here: pyvis is only needed to draw

    net = Network(height=f"{height}px", width="100%", directed=view.directed, cdn_resources="in_line")
    index = {entity.key: i for i, entity in enumerate(view.nodes)}
    largest = max(view.sizes.values(), default=1.0) or 1.0
    for entity in view.nodes:
        size = view.sizes.get(entity.key, 0.0)
        tooltip = _lines(entity.name, f"type: {entity.type}", f"mentions: {entity.mentions}",
                         f"seen: {entity.first_seen or '?'} .. {entity.last_seen or '?'}")
        net.add_node(index[entity.key], label=html.escape(entity.name), title=tooltip,
                     size=10 + 30 * math.sqrt(size / largest), color=_color(entity.type),
                     group=html.escape(entity.type))
    names = {entity.key: entity.name for entity in view.nodes}
    for edge in view.edges:
        tooltip = _lines(f"{names[edge.source]} -{edge.relation}-> {names[edge.target]}",
                         f"stated by {edge.weight} chunk(s) in {len(edge.documents)} document(s)")
        net.add_edge(index[edge.source], index[edge.target], title=tooltip,
                     width=1 + min(edge.weight, 9), label=None if edge.relation == COMENTION_RELATION
                     else html.escape(edge.relation))
    net.set_options(json.dumps({
        "physics": {"stabilization": {"iterations": 150}, "barnesHut": {"springLength": 140}},
        "edges": {"font": {"size": 10, "align": "middle"}, "color": {"inherit": "from"}},
        "interaction": {"hover": True, "tooltipDelay": 150},
    }))
    return strip_cdn_tags(net.generate_html())


# -- tables ---------------------------------------------------------------------------------

def documents_frame(records: Iterable) -> pd.DataFrame:
    """One row per stored document (a :class:`~workbench.store.DocumentRecord`)."""
    rows = [{"document": r.id, "title": r.title, "kind": r.kind, "date": r.date or "", "chunks": r.chunks,
             "tags": ", ".join(r.tags)} for r in records]
    return pd.DataFrame(rows, columns=["document", "title", "kind", "date", "chunks", "tags"])


def merges_frame(merges: Iterable, sample_text: Callable[[str], str], search: str = "") -> pd.DataFrame:
    """One row per surface form of each merge, with a sample chunk's text; ``search`` filters
    (case-insensitive) on the canonical name and the forms."""
    needle = search.strip().casefold()
    rows = []
    for merge in merges:
        forms = " ".join(f.form for f in merge.surface_forms)
        if needle and needle not in merge.canonical.casefold() and needle not in forms.casefold():
            continue
        for form in merge.surface_forms:
            sample = sample_text(form.chunk_ids[0]) if form.chunk_ids else ""
            rows.append({"canonical": merge.canonical, "surface form": form.form, "count": form.count,
                         "why": ", ".join(merge.reasons), "sample chunk": sample})
    return pd.DataFrame(rows, columns=["canonical", "surface form", "count", "why", "sample chunk"])


def suggestions_frame(suggestions: Iterable) -> pd.DataFrame:
    """Suggested merges, best first."""
    rows = [{"a": s.a, "b": s.b, "score": round(s.score, 3), "reason": s.reason} for s in suggestions]
    return pd.DataFrame(rows, columns=["a", "b", "score", "reason"])


def merge_log_frame(log: Iterable[Mapping]) -> pd.DataFrame:
    """The merge log, newest first; each entry's details in one column."""
    rows = [{"when": e.get("at", ""), "action": e.get("action", ""),
             "detail": ", ".join(f"{k}={v}" for k, v in e.items() if k not in ("id", "at", "action"))}
            for e in log]
    return pd.DataFrame(rows[::-1], columns=["when", "action", "detail"])


def neighbours_frame(neighborhood: Neighborhood) -> pd.DataFrame:
    """The entities around a center with their distance."""
    return pd.DataFrame([{"entity": name, "hops": d} for name, d in neighborhood.entities], columns=["entity", "hops"])


def edge_chunks_frame(graph: ContextGraph, edges: Iterable[Edge], chunk_text: Mapping[str, object]) -> pd.DataFrame:
    """One row per (edge, stating chunk): the evidence behind each edge.

    ``chunk_text`` maps chunk id -> :class:`~workbench.model.Chunk`.
    """
    rows = []
    for edge in edges:
        for chunk_id in edge.chunk_ids:
            chunk = chunk_text.get(chunk_id)
            rows.append({"source": graph.name(edge.source), "relation": edge.relation,
                         "target": graph.name(edge.target), "chunk": chunk_id,
                         "document": getattr(chunk, "document_id", ""), "text": getattr(chunk, "text", "")})
    return pd.DataFrame(rows, columns=["source", "relation", "target", "chunk", "document", "text"])


def shared_hits(results: Mapping[str, RetrievalResult]) -> dict[str, list[str]]:
    """Chunk id -> the strategies that returned it, for chunks returned by two or more.

    Examples
    --------
    >>> from workbench.model import Hit
    >>> a = RetrievalResult("q", "a", "a", hits=[Hit("c1", "d", "t", 1.0), Hit("c2", "d", "t", 0.5)])
    >>> b = RetrievalResult("q", "b", "b", hits=[Hit("c2", "d", "t", 1.0)])
    >>> shared_hits({"a": a, "b": b})
    {'c2': ['a', 'b']}
    """
    seen: dict[str, list[str]] = {}
    for mode, result in results.items():
        for hit in result.hits:
            modes = seen.setdefault(hit.chunk_id, [])
            if mode not in modes:
                modes.append(mode)
    return {chunk: modes for chunk, modes in seen.items() if len(modes) > 1}


def _why(why: Mapping) -> str:
    parts = []
    for key, value in why.items():
        if isinstance(value, float):
            value = round(value, 3)
        elif isinstance(value, dict):
            value = f"{value.get('source', '')} -{value.get('relation', '')}-> {value.get('target', '')}"
        elif isinstance(value, (list, tuple)):
            value = ", ".join(map(str, value))
        parts.append(f"{key}: {value}")
    return "; ".join(parts)


def hits_frame(result: RetrievalResult, shared: Collection[str] = ()) -> pd.DataFrame:
    """The hits of one result; a ★ marks chunks that other strategies returned too."""
    rows = [{"": "★" if hit.chunk_id in shared else "", "rank": hit.rank, "score": round(hit.score, 4),
             "document": hit.document, "text": hit.text, "why": _why(hit.why), "chunk": hit.chunk_id}
            for hit in result.hits]
    return pd.DataFrame(rows, columns=["", "rank", "score", "document", "text", "why", "chunk"])


def path_frame(path: GraphPath | Mapping) -> pd.DataFrame:
    """One row per hop of a cited path (a :class:`GraphPath` or its JSON form)."""
    hops = path.hops if isinstance(path, GraphPath) else path.get("hops", [])
    rows = []
    for hop in hops:
        get = (lambda k: getattr(hop, k)) if not isinstance(hop, Mapping) else hop.get
        rows.append({"source": get("source"), "relation": get("relation"), "target": get("target"),
                     "weight": get("weight"), "chunks": ", ".join(get("chunks") or ()),
                     "documents": ", ".join(get("documents") or ())})
    return pd.DataFrame(rows, columns=["source", "relation", "target", "weight", "chunks", "documents"])


def impact_frame(impact: Mapping) -> pd.DataFrame:
    """The impacted entities of an impact's JSON form (:func:`workbench.graph.impact_to_json`)."""
    rows = [{"entity": item["entity"], "hops": len(item.get("hops", [])), "path": " → ".join(item.get("path", [])),
             "chunks": ", ".join(c for hop in item.get("hops", []) for c in hop.get("chunks", []))}
            for item in impact.get("impacted", [])]
    return pd.DataFrame(rows, columns=["entity", "hops", "path", "chunks"])


def seeds_text(stats: Mapping) -> str:
    """The seed entities of a result's stats, as ``name (similarity)`` text."""
    seeds = stats.get("seeds") or []
    return ", ".join(f"{s.get('entity', s)} ({s.get('similarity', 0):.2f})" if isinstance(s, Mapping) else str(s)
                     for s in seeds)
