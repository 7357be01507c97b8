"""Views of the context graph for people: filtered pyvis HTML and pandas tables for the pages.

:func:`select_view` filters the co-mention graph or the typed relation graph (entity type,
minimum weight, time range, relation), ranks nodes by degree, mentions or PageRank, keeps the
top N of large graphs and says how many entities each filter hides; on request it adds the
chunks that mention the shown entities as small nodes. :func:`graph_html` renders a view with
pyvis, fully offline: vis-network is inlined and every remaining CDN tag (Bootstrap) is
stripped. Names reach the page exactly once and as text: node and edge data are written as
JSON with ``<``, ``>`` and ``&`` escaped (Jinja's ``tojson``), labels are drawn on a canvas and
string tooltips are shown with ``innerText``, so a document may name an entity
``<img src=x onerror=alert(1)>`` and it is shown as written, never run.

A type's colour is derived from the type's name (:func:`type_color`), so it is the same in every
view, after every ingest and for types added later; :func:`type_legend` lists the colours shown.

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
>>> page = graph_html(view)
>>> "<b>A</b>" in page, "\\\\u003cb\\\\u003eA\\\\u003c/b\\\\u003e" in page
(False, True)
"""

from __future__ import annotations

import colorsys
import html
import json
import math
import re
import zlib
from collections.abc import Callable, Collection, Iterable, Mapping
from dataclasses import dataclass, field

import pandas as pd

from .graph import COMENTION_RELATION, ContextGraph, Neighborhood
from .explain import why_sentence
from .model import Edge, Entity, GraphPath, RetrievalResult

__all__ = [
    "COMENTION",
    "RELATIONS",
    "VIEWS",
    "RANKINGS",
    "GraphFilters",
    "GraphView",
    "ChunkNode",
    "select_view",
    "community_view",
    "communities_frame",
    "timeline_frame",
    "type_color",
    "type_legend",
    "legend_html",
    "max_edge_weight",
    "edge_tooltip",
    "graph_html",
    "strip_cdn_tags",
    "graph_dates",
    "documents_frame",
    "merges_frame",
    "suggestions_frame",
    "merge_log_frame",
    "local_time",
    "log_sentence",
    "undoable",
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
#: How nodes are ranked for the top-N cut and sized.
RANKINGS = ("degree", "pagerank", "mentions")

_CHUNK_COLOR = "#9aa0a6"
_MAX_TOOLTIP_CHUNKS = 8
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
    """How nodes are ranked and sized: ``degree`` (edges shown), ``pagerank`` or ``mentions``."""
    top_n: int = 150
    """Show at most this many entities, the highest ranked first."""
    show_chunks: bool = False
    """Also draw the chunks that mention the shown entities, as small nodes."""
    max_chunks: int = 150
    """Draw at most this many chunks (those mentioning the most shown entities first)."""
    focus: str | None = None
    """An entity key to keep in view with its neighbours, whatever the top-N cut."""


@dataclass(frozen=True)
class ChunkNode:
    """A passage drawn beside the entities it mentions."""

    id: str
    """The chunk id."""
    entities: tuple[str, ...]
    """Keys of the shown entities it mentions."""
    document: str = ""
    """The document it belongs to, when known."""


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


def _view_edges(graph: ContextGraph, view: str) -> list[Edge]:
    return graph.comention_edges() if view == COMENTION else graph.edges()


def max_edge_weight(graph: ContextGraph, view: str = RELATIONS) -> int:
    """The largest edge weight in ``view`` (1 for an empty graph): the top of a weight slider.

    Examples
    --------
    >>> from workbench.graph import ContextGraph
    >>> g = ContextGraph([Entity("a", "A"), Entity("b", "B")], [Edge("a", "uses", "b", chunk_ids=("c1", "c2"))])
    >>> max_edge_weight(g), max_edge_weight(g, COMENTION)
    (2, 1)
    """
    return max((edge.weight for edge in _view_edges(graph, view)), default=1) or 1


def _plural(count: int, word: str, many: str | None = None) -> str:
    return f"{count} {word if count == 1 else (many or word + 's')}"


def _hidden_note(hidden: Mapping[str, int], f: GraphFilters, shown: int) -> str:
    parts = []
    if hidden.get("type"):
        parts.append(f"{_plural(hidden['type'], 'entity', 'entities')} of other types")
    if hidden.get("no edge"):
        why = [] if f.min_weight <= 1 else [f"weight ≥ {f.min_weight}"]
        why += ["the time range"] if f.time_range else []
        why += ["the chosen relations"] if f.relations else []
        reason = f" passing {', '.join(why)}" if why else " in this view"
        parts.append(f"{hidden['no edge']} with no edge{reason}")
    if hidden.get("top n"):
        parts.append(f"{hidden['top n']} below the top {shown} by {f.size_by} (raise the node limit or filter)")
    return ("Hidden: " + "; ".join(parts) + ".") if parts else ""


def select_view(graph: ContextGraph, view: str = COMENTION, filters: GraphFilters | None = None,
                chunk_entities: Mapping[str, Collection[str]] | None = None,
                chunk_documents: Mapping[str, str] | None = None) -> GraphView:
    """The entities and edges of ``view`` (:data:`COMENTION` or :data:`RELATIONS`) that pass ``filters``.

    Only entities with at least one edge left are shown; when more than ``filters.top_n``
    remain, the highest ranked are kept (plus ``filters.focus`` and its neighbours). The note
    says how many entities each filter hid. With ``filters.show_chunks``, ``chunk_entities``
    (chunk id -> entity keys it mentions) gives the chunks to draw.
    """
    if view not in VIEWS:
        raise ValueError(f"unknown graph view {view!r}; views: {', '.join(VIEWS)}")
    f = filters or GraphFilters()
    if f.size_by not in RANKINGS:
        raise ValueError(f"size_by must be one of {', '.join(RANKINGS)}, got {f.size_by!r}")
    types = set(f.types) if f.types is not None else None
    keep_type = {key for key, e in graph.nx.nodes(data="entity") if types is None or e.type in types}
    edges = [
        edge for edge in _view_edges(graph, view)
        if edge.source in keep_type and edge.target in keep_type and edge.weight >= f.min_weight
        and _in_time(edge, f.time_range)
        and (view == COMENTION or f.relations is None or edge.relation in f.relations)
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
    if focus is not None:  # the picked entity and its neighbours stay in view
        shown |= {focus} | {e.target if e.source == focus else e.source for e in edges if focus in (e.source, e.target)}
    hidden = {"type": len(graph.nx) - len(keep_type), "no edge": len(keep_type) - len(degree),
              "top n": len(ranked) - len(shown)}
    hidden = {reason: count for reason, count in hidden.items() if count > 0}
    shown_edges = [e for e in edges if e.source in shown and e.target in shown]
    chunks: list[ChunkNode] = []
    if f.show_chunks and chunk_entities:
        linked = [(chunk, tuple(sorted(k for k in keys if k in shown))) for chunk, keys in chunk_entities.items()]
        linked = sorted(((c, ks) for c, ks in linked if ks), key=lambda item: (-len(item[1]), item[0]))
        documents = chunk_documents or {}
        chunks = [ChunkNode(c, ks, documents.get(c, "")) for c, ks in linked[: max(f.max_chunks, 0)]]
        if len(linked) > len(chunks):
            hidden["chunks"] = len(linked) - len(chunks)
    note = _hidden_note(hidden, f, len(shown))
    if hidden.get("chunks"):
        note = (note + " " if note else "") + f"Showing {len(chunks)} of {len(chunks) + hidden['chunks']} chunks."
    return GraphView(
        nodes=[graph.entity(k) for k in ranked if k in shown],
        edges=shown_edges,
        sizes={k: sizes[k] for k in shown},
        directed=view == RELATIONS,
        total_nodes=len(ranked),
        note=note,
        hidden=hidden,
        chunks=chunks,
        focus=focus,
    )


# Well separated colours for the types extractors commonly emit; any other type gets a colour
# hashed from its name. Either way the colour depends on the name alone, never on order.
_TYPE_COLORS = {
    "technology": "#4e79a7", "service": "#f28e2b", "person": "#e15759", "concept": "#76b7b2", "note": "#59a14f",
    "title": "#edc948", "name": "#b07aa1", "date": "#9c755f", "organization": "#ff9da7", "team": "#ff9da7",
    "location": "#8cd17d", "event": "#d37295",
}


def type_color(entity_type: str) -> str:
    """The colour of an entity type, derived from its name alone (stable across views and ingests).

    Examples
    --------
    >>> type_color("service"), type_color("person")
    ('#f28e2b', '#e15759')
    >>> type_color("some new type") == type_color("some new type")
    True
    """
    known = _TYPE_COLORS.get(entity_type.casefold())
    if known:
        return known
    hue = (zlib.crc32(entity_type.encode("utf-8")) % 360) / 360.0
    red, green, blue = colorsys.hls_to_rgb(hue, 0.45, 0.55)
    return "#{:02x}{:02x}{:02x}".format(round(red * 255), round(green * 255), round(blue * 255))


def type_legend(view: GraphView) -> list[tuple[str, str, int]]:
    """``(type, colour, entities shown)`` for every entity type in ``view``, most shown first."""
    counts: dict[str, int] = {}
    for entity in view.nodes:
        counts[entity.type] = counts.get(entity.type, 0) + 1
    return [(t, type_color(t), n) for t, n in sorted(counts.items(), key=lambda item: (-item[1], item[0]))]


def legend_html(legend: Iterable[tuple[str, str, int]], chunks: int = 0) -> str:
    """The legend as HTML: one coloured swatch per type, names escaped.

    Examples
    --------
    >>> legend_html([("<b>", "#123456", 2)])
    '<span ...>&lt;b&gt; (2)</span>'
    """
    swatch = ('<span style="display:inline-block;margin:0 12px 4px 0;white-space:nowrap">'
              '<span style="display:inline-block;width:12px;height:12px;border-radius:6px;background:{color};'
              'margin-right:5px;vertical-align:middle"></span>{label}</span>')
    items = [swatch.format(color=color, label=html.escape(f"{name} ({count})")) for name, color, count in legend]
    if chunks:
        items.append(swatch.format(color=_CHUNK_COLOR, label=html.escape(f"chunk ({chunks})")))
    return "".join(items)


def _seen(first: str | None, last: str | None) -> str:
    if not first and not last:
        return "first and last seen: undated"
    return f"first seen {first or '?'}, last seen {last or first or '?'}"


def edge_tooltip(edge: Edge, names: Mapping[str, str]) -> str:
    """An edge's tooltip as plain text: relation, weight, first/last seen, chunks and documents.

    Examples
    --------
    >>> print(edge_tooltip(Edge("a", "uses", "b", chunk_ids=("c1",), documents=("d.md",)), {"a": "A", "b": "B"}))
    A -uses-> B
    weight 1: stated by 1 chunk in 1 document
    first and last seen: undated
    chunks: c1
    documents: d.md
    """
    source, target = names.get(edge.source, edge.source), names.get(edge.target, edge.target)
    head = (f"{source} — co-mentioned with — {target}" if edge.relation == COMENTION_RELATION
            else f"{source} -{edge.relation}-> {target}")
    chunks = list(edge.chunk_ids[:_MAX_TOOLTIP_CHUNKS])
    more = len(edge.chunk_ids) - len(chunks)
    return "\n".join([
        head,
        f"weight {edge.weight}: stated by {_plural(edge.weight, 'chunk')} in {_plural(len(edge.documents), 'document')}",
        _seen(edge.first_seen, edge.last_seen),
        "chunks: " + (", ".join(chunks) or "none") + (f" (+{more} more)" if more > 0 else ""),
        "documents: " + (", ".join(edge.documents[:_MAX_TOOLTIP_CHUNKS]) or "none"),
    ])


def strip_cdn_tags(page: str) -> str:
    """Remove every ``<link>`` and ``<script src>`` tag that points at another host."""
    return _CDN_SCRIPT.sub("", _CDN_LINK.sub("", page))


# Runs after pyvis's drawGraph(): keep labels readable (never zoomed out below a legible scale)
# and centre on the picked entity. `network` and `nodes` are pyvis's globals.
_AFTER_DRAW = """<script>
(function () {
  var focus = %s, minScale = %s;
  function settle() {
    if (focus !== null && nodes.get(focus)) {
      network.selectNodes([focus], true);
      network.focus(focus, {scale: Math.max(network.getScale(), 1.0)});
    } else if (network.getScale() < minScale) {
      network.moveTo({scale: minScale});
    }
  }
  network.once("stabilizationIterationsDone", settle);
  setTimeout(settle, 2500);
})();
</script>
"""


def graph_html(view: GraphView, height: int = 600) -> str:
    """A self-contained HTML page drawing ``view`` with pyvis (no network access needed).

    Names are passed as they are written: pyvis writes node and edge data with ``tojson``
    (``<`` becomes ``\\u003c``), vis-network draws labels on a canvas and shows string
    tooltips as text, so nothing from a document is ever parsed as HTML, and nothing is
    escaped twice. Node ids are integers. Co-mention edges have no arrow; a picked entity
    (``view.focus``) is drawn larger with a dark border and the view centres on it.
    """
    from pyvis.network import Network  # imported here: pyvis is only needed to draw

    net = Network(height=f"{height}px", width="100%", directed=False, cdn_resources="in_line")
    index = {entity.key: i for i, entity in enumerate(view.nodes)}
    largest = max(view.sizes.values(), default=1.0) or 1.0
    for entity in view.nodes:
        size = view.sizes.get(entity.key, 0.0)
        tooltip = "\n".join([entity.name, f"type: {entity.type}", f"mentions: {entity.mentions}",
                             f"seen: {entity.first_seen or '?'} .. {entity.last_seen or '?'}"])
        options = dict(label=entity.name, title=tooltip, size=12 + 26 * math.sqrt(max(size, 0.0) / largest),
                       color=type_color(entity.type))
        if entity.key == view.focus:
            options.update(borderWidth=5, color={"background": type_color(entity.type), "border": "#111111"},
                           font={"size": 24, "bold": True}, size=options["size"] + 10)
        net.add_node(index[entity.key], **options)
    names = {entity.key: entity.name for entity in view.nodes}
    for edge in view.edges:
        directed = edge.relation != COMENTION_RELATION
        net.add_edge(index[edge.source], index[edge.target], title=edge_tooltip(edge, names),
                     width=1 + min(edge.weight, 9), arrows="to" if directed else "",
                     label=edge.relation if directed else None)
    for offset, chunk in enumerate(view.chunks):
        chunk_node = len(view.nodes) + offset
        net.add_node(chunk_node, label=chunk.id[:8], shape="square", size=6, color=_CHUNK_COLOR,
                     title="\n".join(["chunk " + chunk.id, f"document: {chunk.document or '?'}",
                                      "mentions: " + ", ".join(names[k] for k in chunk.entities)]),
                     font={"size": 11, "color": "#5f6368"})
        for key in chunk.entities:
            net.add_edge(chunk_node, index[key], width=1, dashes=True, arrows="", color="#c7c9cc",
                         title=f"chunk {chunk.id} mentions {names[key]}")
    net.set_options(json.dumps({
        "physics": {"stabilization": {"iterations": 200}, "barnesHut": {"springLength": 120, "gravitationalConstant": -6000}},
        "nodes": {"font": {"size": 18, "strokeWidth": 3, "strokeColor": "#ffffff"}},
        "edges": {"font": {"size": 14, "align": "middle", "strokeWidth": 3, "strokeColor": "#ffffff"},
                  "color": {"inherit": "from"}, "smooth": {"type": "continuous"}},
        "interaction": {"hover": True, "tooltipDelay": 150, "navigationButtons": False},
    }))
    page = strip_cdn_tags(net.generate_html())
    legend = legend_html(type_legend(view), len(view.chunks))
    if legend:
        page = page.replace("<body>", '<body>\n<div id="legend" style="font:13px sans-serif;padding:4px 2px">'
                            f"{legend}</div>", 1)
    focus = json.dumps(index[view.focus]) if view.focus in index else "null"
    return page.replace("</body>", _AFTER_DRAW % (focus, "0.7") + "</body>", 1)


# -- tables ---------------------------------------------------------------------------------

def documents_frame(records: Iterable) -> pd.DataFrame:
    """One row per stored document (a :class:`~workbench.store.DocumentRecord`)."""
    rows = [{"document": r.id, "title": r.title, "kind": r.kind, "date": r.date or "", "chunks": r.chunks,
             "tags": ", ".join(r.tags)} for r in records]
    return pd.DataFrame(rows, columns=["document", "title", "kind", "date", "chunks", "tags"])


def merges_frame(merges: Iterable, sample_text: Callable[[str], str], search: str = "",
                 reasons: Mapping[str, Mapping[str, str]] | None = None) -> pd.DataFrame:
    """One row per surface form of each merge: its count, every chunk it occurs in, why it is in
    the entity and a sample chunk's text. ``reasons`` (merge key -> form -> reason, see
    :func:`workbench.canon.form_reasons`) gives each form its own reason; without it the merge's
    reasons are shown. ``search`` filters (case-insensitive) on the canonical name and the forms."""
    needle = search.strip().casefold()
    rows = []
    for merge in merges:
        forms = " ".join(f.form for f in merge.surface_forms)
        if needle and needle not in merge.canonical.casefold() and needle not in forms.casefold():
            continue
        for form in merge.surface_forms:
            sample = sample_text(form.chunk_ids[0]) if form.chunk_ids else ""
            why = (reasons or {}).get(merge.key, {}).get(form.form) or ", ".join(merge.reasons)
            rows.append({"canonical": merge.canonical, "surface form": form.form, "count": form.count,
                         "chunks": ", ".join(form.chunk_ids), "why": why, "sample chunk": sample})
    return pd.DataFrame(rows, columns=["canonical", "surface form", "count", "chunks", "why", "sample chunk"])


def suggestions_frame(suggestions: Iterable) -> pd.DataFrame:
    """Suggested merges, best first."""
    rows = [{"a": s.a, "b": s.b, "score": round(s.score, 3), "reason": s.reason} for s in suggestions]
    return pd.DataFrame(rows, columns=["a", "b", "score", "reason"])


def local_time(epoch: float | str | None) -> str:
    """A Unix time as local date and time, ``YYYY-MM-DD HH:MM:SS``; text is returned as it is.

    Examples
    --------
    >>> import re
    >>> bool(re.fullmatch(r"\\d{4}-\\d{2}-\\d{2} \\d{2}:\\d{2}:\\d{2}", local_time(1796107481.8936)))
    True
    """
    from datetime import datetime

    if epoch is None or epoch == "":
        return ""
    try:
        return datetime.fromtimestamp(float(epoch)).astimezone().strftime("%Y-%m-%d %H:%M:%S")
    except (TypeError, ValueError, OverflowError, OSError):
        return str(epoch)


def _quoted(value) -> str:
    return f"“{value}”"


def log_sentence(entry: Mapping) -> str:
    """One merge-log entry as a sentence.

    Examples
    --------
    >>> log_sentence({"action": "alias", "alias": "login service", "canonical": "Auth Service"})
    'Merged “login service” into “Auth Service”'
    >>> log_sentence({"action": "undo", "undoes": 3, "of": "split", "form": "auth-service"})
    'Undid #3: folded “auth-service” back into its entity'
    """
    action = entry.get("action", "")
    if action in ("alias", "accept"):
        text = f"Merged {_quoted(entry.get('alias'))} into {_quoted(entry.get('canonical'))}"
        text = ("Accepted a suggestion: " + text[0].lower() + text[1:]) if action == "accept" else text
        return text + (f" (it pointed to {_quoted(entry['replaced'])})" if entry.get("replaced") else "")
    if action == "unalias":
        return f"Removed the alias {_quoted(entry.get('alias'))}" + (
            f" of {_quoted(entry['canonical'])}" if entry.get("canonical") else "")
    if action == "split":
        return f"Split {_quoted(entry.get('form'))} out into an entity of its own"
    if action == "unsplit":
        return f"Folded {_quoted(entry.get('form'))} back into its entity"
    if action == "reject":
        return f"Rejected the suggestion {_quoted(entry.get('a'))} ↔ {_quoted(entry.get('b'))}"
    if action == "undo":
        of = entry.get("of", "")
        if of in ("alias", "accept"):
            inverse = (f"pointed {_quoted(entry.get('alias'))} back to {_quoted(entry['restored'])}"
                       if entry.get("restored") else
                       f"{_quoted(entry.get('alias'))} is no longer merged into {_quoted(entry.get('canonical'))}")
        elif of == "unalias":
            inverse = f"merged {_quoted(entry.get('alias'))} into {_quoted(entry.get('canonical'))} again"
        elif of == "split":
            inverse = f"folded {_quoted(entry.get('form'))} back into its entity"
        elif of == "unsplit":
            inverse = f"split {_quoted(entry.get('form'))} out again"
        elif of == "reject":
            inverse = f"{_quoted(entry.get('a'))} ↔ {_quoted(entry.get('b'))} may be suggested again"
        else:
            inverse = of
        return f"Undid #{entry.get('undoes')}: {inverse}"
    detail = ", ".join(f"{k}={v}" for k, v in entry.items() if k not in ("id", "at", "action"))
    return f"{action}: {detail}" if detail else str(action)


def merge_log_frame(log: Iterable[Mapping]) -> pd.DataFrame:
    """The merge log, newest first: entry number, local time, the change as a sentence, and
    whether it was undone (or what it undid)."""
    entries = list(log)
    undone_by = {e.get("undoes"): e.get("id") for e in entries if e.get("action") == "undo"}
    rows = []
    for e in entries:
        status = ""
        if e.get("id") in undone_by:
            status = f"undone by #{undone_by[e['id']]}"
        elif e.get("action") == "undo":
            status = "undo"
        rows.append({"#": e.get("id"), "when": local_time(e.get("at")), "change": log_sentence(e), "status": status})
    return pd.DataFrame(rows[::-1], columns=["#", "when", "change", "status"])


def undoable(log: Iterable[Mapping]) -> list[Mapping]:
    """Log entries that can still be undone (not undos, not undone), newest first."""
    entries = list(log)
    undone = {e.get("undoes") for e in entries}
    return [e for e in entries[::-1] if e.get("action") != "undo" and e.get("id") not in undone]


def neighbours_frame(neighborhood: Neighborhood, graph: ContextGraph | None = None) -> pd.DataFrame:
    """The entities around a center. With ``graph``: one row per edge at the center, with the
    relation, its direction as seen from the center, and its weight."""
    if graph is None:
        return pd.DataFrame([{"entity": name, "hops": d} for name, d in neighborhood.entities],
                            columns=["entity", "hops"])
    center = neighborhood.keys[0] if neighborhood.keys else graph.resolve(neighborhood.center)
    rows = []
    for edge in neighborhood.edges:
        if center not in (edge.source, edge.target):
            continue
        outgoing = edge.source == center
        other = edge.target if outgoing else edge.source
        if edge.relation == COMENTION_RELATION:
            direction = "— (no direction)"
        else:
            direction = "→ out" if outgoing else "← in"
        rows.append({"entity": graph.name(other), "relation": edge.relation, "direction": direction,
                     "weight": edge.weight, "type": graph.entity(other).type})
    rows.sort(key=lambda r: (-r["weight"], r["entity"].casefold(), r["relation"]))
    return pd.DataFrame(rows, columns=["entity", "relation", "direction", "weight", "type"])


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


def hits_frame(result: RetrievalResult, shared: Collection[str] = ()) -> pd.DataFrame:
    """The hits of one result; a ★ marks chunks that other strategies returned too."""
    rows = [{"": "★" if hit.chunk_id in shared else "", "rank": hit.rank, "score": round(hit.score, 4),
             "document": hit.document, "text": hit.text, "why": why_sentence(hit.why), "chunk": hit.chunk_id}
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


def community_view(graph: ContextGraph, members: Collection[str], view: str = RELATIONS) -> GraphView:
    """The entities of one community and the edges among them, for :func:`graph_html`.

    ``view`` is :data:`RELATIONS` (cited relations) or :data:`COMENTION`; a community held
    together by co-mentions alone is drawn with its co-mention edges either way.
    """
    sub = graph.subgraph([key for key in members if key in graph])
    chosen = view if view == COMENTION or sub.edges() else COMENTION
    return select_view(sub, chosen, GraphFilters(top_n=max(1, len(sub))))


def communities_frame(reports: Iterable) -> pd.DataFrame:
    """One row per community report: id, size, title, time span, key entities."""
    return pd.DataFrame([{"id": r.id, "size": r.size, "title": r.title,
                          "from": (r.first_seen or "")[:10], "to": (r.last_seen or "")[:10],
                          "key entities": ", ".join(f"{n} ({t})" for n, t, _ in r.key_entities)} for r in reports],
                        columns=["id", "size", "title", "from", "to", "key entities"])


def timeline_frame(entries: Iterable) -> pd.DataFrame:
    """An entity's timeline entries as a table, oldest first."""
    return pd.DataFrame([{"time": e.time or "(undated)", "kind": e.kind, "text": e.text, "chunk": e.chunk_id,
                          "document": e.document} for e in entries],
                        columns=["time", "kind", "text", "chunk", "document"])
