"""One cited chunk as a reader opens it: its text with the cited words marked, its document (title
and date), the chunks before and after it, and the edges it states.

:func:`chunk_view` gathers it from the workspace; :func:`highlighted_html` turns its text into
HTML with every character from the document escaped. The app's chunk viewer and the notebooks
show the same :class:`ChunkView`.

Examples
--------
>>> highlighted_html("Redis backs the <b>token cache</b>.", ["token cache", "redis"])
'<mark>Redis</mark> backs the &lt;b&gt;<mark>token cache</mark>&lt;/b&gt;.'
>>> highlighted_html("no match here", ["Redis"])
'no match here'
"""

from __future__ import annotations

import html
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from ..context_graph.graph import COMENTION_RELATION
from ..model import Chunk, Hop

if TYPE_CHECKING:
    from ..corpus.workspace_view import WorkspaceView

__all__ = ["ChunkNotFound", "ChunkView", "chunk_view", "highlighted_html", "human_date", "neighbour_texts"]


class ChunkNotFound(KeyError):
    """A cited chunk id the workspace does not hold (removed since it was cited)."""

    def __str__(self) -> str:
        return f"chunk {self.args[0]} is not in the workspace (its document was removed or changed since)"


@dataclass
class ChunkView:
    """A chunk with what a reader needs to judge it."""

    chunk: Chunk
    """The chunk itself."""
    title: str = ""
    """Its document's title."""
    date: str | None = None
    """Its time: the chunk's timestamp, else its document's date."""
    kind: str = ""
    """Its document's kind (markdown, text, chat...)."""
    before: Chunk | None = None
    """The chunk just before it in its document."""
    after: Chunk | None = None
    """The chunk just after it in its document."""
    edges: list[Hop] = field(default_factory=list)
    """The typed relations it states (co-mentions left out), best corroborated first."""
    chunks_in_document: int = 0
    """How many chunks its document has."""


def chunk_view(ws: WorkspaceView, chunk_id: str) -> ChunkView:
    """The chunk ``chunk_id`` of ``ws`` with its document, neighbours and the edges it states.

    Raises :class:`ChunkNotFound` for an id the workspace does not hold.
    """
    found = ws.chunks([chunk_id])
    if not found:
        raise ChunkNotFound(chunk_id)
    chunk = found[0]
    record = next((d for d in ws.documents() if d.id == chunk.document_id), None)
    siblings = {c.ordinal: c for c in ws.chunks(ws.store.chunk_ids_of([chunk.document_id]))}
    graph = ws.graph
    stated: dict[tuple[str, str, str], Hop] = {}
    for key in ws.graph.passages.entities_of.get(chunk_id, ()):
        if key not in graph:
            continue
        for edge in graph.out_edges(key) + graph.in_edges(key):
            if edge.relation != COMENTION_RELATION and chunk_id in edge.chunk_ids:
                stated.setdefault((edge.source, edge.relation, edge.target), graph.cited_hop(edge))
    edges = sorted(stated.values(), key=lambda h: (-h.weight, h.source.casefold(), h.relation, h.target.casefold()))
    return ChunkView(chunk=chunk, title=record.title if record else "", kind=record.kind if record else "",
                     date=chunk.timestamp or (record.date if record else None),
                     before=siblings.get(chunk.ordinal - 1), after=siblings.get(chunk.ordinal + 1), edges=edges,
                     chunks_in_document=len(siblings))


def highlighted_html(text: str, terms: Iterable[str]) -> str:
    """``text`` as HTML (every character escaped) with each of ``terms`` marked by ``<mark>``,
    ignoring case; overlapping terms are marked once, the longest first."""
    wanted = sorted({t.strip() for t in terms if t and t.strip()}, key=len, reverse=True)
    if not wanted:
        return html.escape(text)
    pattern = re.compile("|".join(re.escape(t) for t in wanted), re.IGNORECASE)
    out, at = [], 0
    for match in pattern.finditer(text):
        out.append(html.escape(text[at:match.start()]))
        out.append(f"<mark>{html.escape(match.group(0))}</mark>")
        at = match.end()
    out.append(html.escape(text[at:]))
    return "".join(out)


_MONTHS = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")


def human_date(stamp: str | None, with_time: bool = False) -> str:
    """An ISO day or time as people read it: ``'2024-06-10T09:05:00Z'`` -> ``'10 Jun 2024'``
    (``'10 Jun 2024 09:05'`` with ``with_time``); anything else as given, nothing as ``''``.

    >>> human_date("2024-06-10"), human_date("2024-06-10T09:05:00Z", with_time=True), human_date("2024-06")
    ('10 Jun 2024', '10 Jun 2024 09:05', 'Jun 2024')
    >>> human_date(None), human_date("spring")
    ('', 'spring')
    """
    if not stamp:
        return ""
    text = str(stamp).strip()
    found = re.match(r"^(\d{4})-(\d{2})(?:-(\d{2}))?(?:[T ](\d{2}):(\d{2}))?", text)
    if not found or not 1 <= int(found.group(2)) <= 12:
        return text
    year, month, day, hour, minute = found.groups()
    shown = f"{int(day)} " if day else ""
    shown += f"{_MONTHS[int(month) - 1]} {year}"
    if with_time and hour is not None:
        shown += f" {hour}:{minute}"
    return shown


def neighbour_texts(view: ChunkView) -> Sequence[tuple[str, Chunk]]:
    """``(label, chunk)`` for the chunks around it, in document order."""
    return [(label, chunk) for label, chunk in (("Before", view.before), ("After", view.after)) if chunk is not None]
