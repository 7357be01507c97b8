"""A :class:`~workbench.views.graph.GraphView` drawn as one offline pyvis page: nodes coloured by
type, edges with tooltips citing their chunks, a legend, a seeded layout, and no script or style
fetched from a CDN.
"""

from __future__ import annotations

import colorsys
import html
import json
import math
import re
import zlib
from collections.abc import Iterable, Mapping
from typing import Any

from ..model import COMENTION_RELATION, Edge
from ..text.safe_text import printable
from .graph import GraphView
from .wording import counted

__all__ = ["LAYOUT_SEED", "edge_tooltip", "graph_html", "legend_html", "strip_cdn_tags", "type_color", "type_legend"]

_CHUNK_COLOR = "#9aa0a6"
#: vis-network's layout seed: a view is drawn the same way on every load.
LAYOUT_SEED = 7
_MAX_TOOLTIP_CHUNKS = 8
_CDN_LINK = re.compile(r"<link\b[^>]*?href\s*=\s*[\"']?(?:https?:)?//[^>]*>", re.IGNORECASE | re.DOTALL)
_CDN_SCRIPT = re.compile(r"<script\b[^>]*?src\s*=\s*[\"']?(?:https?:)?//[^>]*>.*?</script\s*>",
                         re.IGNORECASE | re.DOTALL)


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
    """``(type, colour, entities shown)`` for every entity type in ``view``, most shown first; the
    entities drawn hidden until a click (:attr:`GraphView.folded`) are not counted."""
    counts: dict[str, int] = {}
    for entity in view.nodes:
        if entity.key not in view.folded:
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
    items = [swatch.format(color=color, label=html.escape(f"{printable(name)} ({count})")) for name, color, count in legend]
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
    source, target = (printable(names.get(end, end)) for end in (edge.source, edge.target))
    head = (f"{source} — co-mentioned with — {target}" if edge.relation == COMENTION_RELATION
            else f"{source} -{edge.relation}-> {target}")
    chunks = list(edge.chunk_ids[:_MAX_TOOLTIP_CHUNKS])
    documents = [printable(d) for d in edge.documents[:_MAX_TOOLTIP_CHUNKS]]
    more = len(edge.chunk_ids) - len(chunks)
    return "\n".join([
        head,
        f"weight {edge.weight}: stated by {counted(edge.weight, 'chunk')} in {counted(len(edge.documents), 'document')}",
        _seen(edge.first_seen, edge.last_seen),
        "chunks: " + (", ".join(chunks) or "none") + (f" (+{more} more)" if more > 0 else ""),
        "documents: " + (", ".join(documents) or "none"),
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
    network.fit();  // the whole view on screen when it opens: nothing cropped
    if (focus !== null && nodes.get(focus)) {
      network.selectNodes([focus], true);
      if (network.getScale() < minScale) network.focus(focus, {scale: 1.0});  // labels stay legible
    }
  }
  network.once("stabilizationIterationsDone", settle);
  setTimeout(settle, 2500);
  // A click on a node shows its neighbours the focused view drew hidden.
  network.on("click", function (params) {
    if (!params.nodes.length) return;
    network.getConnectedNodes(params.nodes[0]).forEach(function (id) {
      var node = nodes.get(id); if (node && node.hidden) nodes.update({id: id, hidden: false});
    });
  });
})();
</script>
"""


# Fit and zoom buttons above the canvas (vis-network's own navigation buttons need images).
_CONTROLS = ('<span style="margin-right:12px">'
             + "".join(f'<button type="button" title="{tip}" onclick="{js}" style="font:13px sans-serif;'
                       f'margin-right:4px;padding:1px 8px;cursor:pointer">{label}</button>'
                       for label, tip, js in (
                           ("Fit", "Show the whole graph", "network.fit({animation: true})"),
                           ("+", "Zoom in", "network.moveTo({scale: network.getScale() * 1.3})"),
                           ("−", "Zoom out", "network.moveTo({scale: network.getScale() / 1.3})")))
             + "</span>")


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
        tooltip = "\n".join([printable(entity.name), f"type: {printable(entity.type)}",
                             f"mentions: {entity.mentions}", f"seen: {entity.first_seen or '?'} .. {entity.last_seen or '?'}"])
        colour = type_color(entity.type)
        # The type colour stays when a node is selected or hovered: only the border darkens.
        options: dict[str, Any] = dict(label=printable(entity.name), title=tooltip, borderWidthSelected=4,
                                       color={"background": colour, "border": colour,
                                              "highlight": {"background": colour, "border": "#111111"},
                                              "hover": {"background": colour, "border": "#444444"}},
                                       size=12 + 26 * math.sqrt(max(size, 0.0) / largest))
        if entity.key in view.folded:
            options["hidden"] = True
        if entity.key == view.focus:
            options.update(borderWidth=5, font={"size": 24, "bold": True}, size=options["size"] + 10,
                           color={**options["color"], "border": "#111111"})
        net.add_node(index[entity.key], **options)
    names = {entity.key: printable(entity.name) for entity in view.nodes}
    for edge in view.edges:
        directed = edge.relation != COMENTION_RELATION
        net.add_edge(index[edge.source], index[edge.target], title=edge_tooltip(edge, names),
                     width=1 + min(edge.weight, 9), arrows="to" if directed else "",
                     label=edge.relation if directed else None)
    for offset, chunk in enumerate(view.chunks):
        chunk_node = len(view.nodes) + offset
        label = printable(chunk.title or chunk.document or chunk.id[:8])
        net.add_node(chunk_node, label=label if len(label) <= 28 else label[:27] + "…", shape="square", size=6,
                     color=_CHUNK_COLOR,
                     title="\n".join(["chunk " + chunk.id, f"document: {printable(chunk.document or '?')}",
                                      f"title: {printable(chunk.title or '?')}",
                                      "mentions: " + ", ".join(names[k] for k in chunk.entities)]),
                     font={"size": 11, "color": "#5f6368"})
        for key in chunk.entities:
            net.add_edge(chunk_node, index[key], width=1, dashes=True, arrows="", color="#c7c9cc",
                         title=f"chunk {chunk.id} mentions {names[key]}")
    net.set_options(json.dumps({
        "layout": {"randomSeed": LAYOUT_SEED},  # the same drawing on every load
        "physics": {"stabilization": {"iterations": 200}, "barnesHut": {"springLength": 120, "gravitationalConstant": -6000}},
        "nodes": {"font": {"size": 18, "strokeWidth": 3, "strokeColor": "#ffffff"}},
        "edges": {"font": {"size": 14, "align": "middle", "strokeWidth": 3, "strokeColor": "#ffffff"},
                  "color": {"inherit": "from"}, "smooth": {"type": "continuous"}},
        "interaction": {"hover": True, "tooltipDelay": 150, "navigationButtons": False},
    }))
    page = strip_cdn_tags(net.generate_html())
    legend = legend_html(type_legend(view), len(view.chunks))
    page = page.replace("<body>", '<body>\n<div id="legend" style="font:13px sans-serif;padding:4px 2px">'
                        f"{_CONTROLS}{legend}</div>", 1)
    focus = json.dumps(index[view.focus]) if view.focus in index else "null"
    return page.replace("</body>", _AFTER_DRAW % (focus, "0.7") + "</body>", 1)
