"""Widgets the pages share: tables with plain-language headers and help, and the chunk viewer
every citation opens."""

from __future__ import annotations

from collections.abc import Iterable

import streamlit as st

from ui import md_text
from workbench.text.safe_text import printable
from workbench.workspace import Workspace

__all__ = ["COLUMN_HELP", "chunk_dialog", "citation_picker", "eval_columns", "table"]


# -- tables: plain-language headers with help ---------------------------------------------------

def _columns() -> dict:
    number, text = st.column_config.NumberColumn, st.column_config.TextColumn
    return {
        "score": number("score", format="%.2f", help="The strategy's own score; scales differ between strategies, "
                                                   "so compare ranks across them, not scores."),
        "weight": number("chunks stating it", help="Corroboration: how many distinct chunks state this edge."),
        "hops": number("steps", help="Relations walked from the starting entity."),
        "chunks": text("cited chunks", width="medium",
                       help="Ids of the chunks that state it: open one with the chunk box below."),
        "title": text("title", width="medium", help="The document's title (its front matter's, else its first heading)."),
        "tags": text("tags", width="medium", help="The document's tags, from its front matter."),
        "why": text("why", width="medium", help="Why this form belongs to the entity."),
        "sample chunk": text("sample chunk", width="large", help="A chunk where the form occurs."),
        "key entities": text("key entities", width="large", help="The community's most central entities, with their types."),
        "chunk": text("chunk", help="The chunk's id: open it with the chunk box below."),
        "text": text("text", width="large", help="The chunk's text; open the chunk for all of it and its context."),
        "document": text("document", width="medium", help="The document the chunk belongs to."),
        "documents": text("documents", help="The documents of the cited chunks."),
        "similarity": number("similarity", format="%.2f", help="Cosine similarity to the question (1 = same meaning)."),
        "date": text("date", help="The document's date, as written in its front matter or file."),
        "time": text("when", help="The chunk's time, else its document's date."),
        "direction": text("direction", help="→ out: the entity states the relation; ← in: another states it about "
                                            "the entity; —: named together, no direction."),
    }


#: ``column_config`` for the columns the tables share; pass it to ``st.dataframe``.
COLUMN_HELP = _columns()

_METRICS = {"recall": "share of the gold documents found in the top k",
            "precision": "share of the returned documents that are gold",
            "mrr": "mean reciprocal rank: 1 when the first hit is gold, 1/2 when the second is...",
            "ndcg": "ranking quality (normalised discounted cumulative gain): gold documents ranked high score more",
            "all_found": "1 when every gold document was found"}


#: The Evaluate summary's short headers (``SUMMARY_HEADERS``), with what they count.
_SUMMARY_HELP = {"beyond direct": "Gold documents found that the direct strategy missed.",
                 "not gold": "Documents returned beyond direct's that are not gold.",
                 "ms": "Time to answer one question, in milliseconds."}


def table(frame) -> None:
    """An Evaluate table: plain headers with help, rounded numbers, scrolling sideways when wide."""
    st.dataframe(frame, hide_index=True, width="stretch", column_config=eval_columns(frame.columns))


def eval_columns(columns) -> dict:
    """``column_config`` for the Evaluate page's tables: plain headers, help, two decimals."""
    number, text = st.column_config.NumberColumn, st.column_config.TextColumn
    config: dict = {}
    for column in map(str, columns):
        base = column.split("_")[0]
        if column in _METRICS:
            config[column] = number(column, format="%.2f", help=_METRICS[column].capitalize() + ".")
        elif column.endswith("_w/t/l"):
            config[column] = text(f"{base}: wins / ties / losses",
                                  help=f"Tasks where this strategy's {base} beat, tied or lost to the direct strategy's.")
        elif column.endswith("W/T/L"):
            config[column] = text(column, help="Tasks where this strategy's metric beat, tied or lost to the direct "
                                               "strategy's: wins / ties / losses.")
        elif column in _SUMMARY_HELP:
            config[column] = number(column, format="%.0f", help=_SUMMARY_HELP[column])
        elif column in (f"{base}_a", f"{base}_b") and base in _METRICS:
            config[column] = number(f"{base} in run {column[-1].upper()}", format="%.2f",
                                    help=f"Mean {base} of run {column[-1].upper()}: {_METRICS[base]}.")
        elif column == "found_beyond_direct":
            config[column] = number("found beyond direct", help="Gold documents found that the direct strategy missed.")
        elif column == "added_irrelevant":
            config[column] = number("added, not gold", help="Documents returned beyond direct's that are not gold.")
        elif column == "latency_ms":
            config[column] = number("latency (ms)", format="%.0f", help="Time to answer one question, in milliseconds.")
        elif column == "tokens":
            config[column] = number("reading tokens", format="%.0f", help="About how many tokens a reader of the hits pays.")
        elif column == "mode_used":
            config[column] = text("mode used", help="The mode that answered (a graph mode may fall back to hybrid).")
        elif column.startswith("Δ"):
            against = "run B minus run A" if "B − A" in column else "the strategy minus the direct strategy"
            config[column] = text(column, help=f"The difference on the same tasks ({against}), with its 95% "
                                               "bootstrap confidence interval; an interval that excludes 0 is a real "
                                               "difference.")
    return config


# -- the chunk viewer: every citation opens here -------------------------------------------------

_VIEWER_STYLE = ("<div style='white-space:pre-wrap;border:1px solid #ddd;border-radius:6px;padding:8px 10px;"
                 "max-height:{h}px;overflow:auto;font-size:0.92em;{extra}'>{body}</div>")


@st.dialog("Cited chunk", width="large")
def chunk_dialog(ws: Workspace, chunk_id: str, terms: tuple[str, ...] = ()) -> None:
    """The chunk viewer: the text with the cited words marked, its document, title and date, the
    chunks around it and the edges it states (all from :func:`workbench.views.chunks.chunk_view`)."""
    import html

    from workbench.views.chunks import ChunkNotFound, chunk_view, highlighted_html, human_date, neighbour_texts

    try:
        view = chunk_view(ws, chunk_id)
    except ChunkNotFound as exc:
        st.warning(md_text(exc))
        return
    chunk = view.chunk
    st.markdown(f"**{md_text(view.title or chunk.document_id)}**")
    st.caption(md_text(f"{chunk.document_id} · {human_date(view.date, with_time=True) or 'undated'} · chunk "
                       f"{chunk.ordinal + 1} of {view.chunks_in_document} · id {chunk.id}"
                       + (f" · {chunk.speaker}" if chunk.speaker else "")))
    marked = set(terms) | {name for hop in view.edges for name in (hop.source, hop.target)}
    st.html(_VIEWER_STYLE.format(h=360, extra="", body=highlighted_html(printable(chunk.text, keep_newlines=True),
                                                                        marked)))
    st.markdown("**Edges it states**")
    if view.edges:
        st.dataframe([{"source": printable(h.source), "relation": printable(h.relation), "target": printable(h.target),
                       "chunks stating it": h.weight} for h in view.edges], hide_index=True, width="stretch")
    else:
        st.caption("No typed relation is stated by this chunk.")
    for label, other in neighbour_texts(view):
        st.markdown(f"**{label}** (chunk {other.ordinal + 1}, id {other.id})")
        st.html(_VIEWER_STYLE.format(h=140, extra="color:#555;",
                                     body=html.escape(printable(other.text, keep_newlines=True))))


def citation_picker(ws: Workspace, chunk_ids: Iterable[str], key: str, label: str = "Open a cited chunk",
                    documents: dict[str, str] | None = None) -> None:
    """A box listing the chunks a page cites; choosing one opens the chunk viewer."""
    ids = list(dict.fromkeys(c for c in chunk_ids if c))
    if not ids:
        return
    names = documents or {}

    def opened() -> None:  # the box empties again, so the same chunk can be opened twice
        st.session_state[f"{key}.open"] = st.session_state.get(key)
        st.session_state[key] = None

    st.selectbox(label, ids, index=None, key=key, on_change=opened, placeholder="Choose a chunk id",
                 format_func=lambda c: f"{c} · {printable(names[c])}" if c in names else c,
                 help="Opens the chunk: its text, document, date, the chunks around it and the edges it states.")
    chosen = st.session_state.pop(f"{key}.open", None)
    if chosen:
        chunk_dialog(ws, chosen)
