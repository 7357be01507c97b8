"""Canonicalization for people: the merges as a table, the suggestions, the change log as sentences.

Every name passes through :func:`~workbench.text.safe_text.printable`: a form written with a control
character or a bidi override is shown as escapes, never obeyed.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping

import pandas as pd

from ..text.safe_text import printable

__all__ = ["merges_frame", "local_time", "log_sentence", "merge_log_frame", "undoable",
           "merge_preview"]


def merges_frame(merges: Iterable, sample_text: Callable[[str], str], search: str = "",
                 reasons: Mapping[str, Mapping[str, str]] | None = None) -> pd.DataFrame:
    """One row per surface form of each merge: its count, every chunk it occurs in, why it is in
    the entity and a sample chunk's text. ``reasons`` (merge key -> form -> reason, see
    :func:`workbench.context_graph.canon.form_reasons`) gives each form its own reason; without it the merge's
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
            rows.append({"canonical": printable(merge.canonical), "surface form": printable(form.form),
                         "count": form.count, "chunks": ", ".join(form.chunk_ids), "why": printable(why),
                         "sample chunk": printable(sample, keep_newlines=True)})
    return pd.DataFrame(rows, columns=["canonical", "surface form", "count", "chunks", "why", "sample chunk"])


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
    return f"“{printable(value)}”"


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
    detail = ", ".join(f"{k}={printable(v)}" for k, v in entry.items() if k not in ("id", "at", "action"))
    return f"{action}: {detail}" if detail else printable(action)


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


def merge_preview(graph, alias: str, canonical: str) -> pd.DataFrame:
    """The edges a merge of ``alias`` into ``canonical`` would move: one row per typed relation at
    the alias, as it reads now and after the merge, with the chunks stating it and whether it
    joins an edge the canonical entity already has (their chunks then add up). Co-mentions are
    left out. Names are display names, surface forms or keys (see ``ContextGraph.resolve``).
    """
    from ..context_graph.graph import COMENTION_RELATION

    columns = ["now", "after the merge", "chunks", "joins an existing edge"]
    moved, kept = graph.resolve(alias), graph.resolve(canonical)
    if moved == kept:
        return pd.DataFrame([], columns=columns)
    existing = {(e.relation, e.target, "out") for e in graph.out_edges(kept)} | \
               {(e.relation, e.source, "in") for e in graph.in_edges(kept)}
    rows = []
    for edge, side in [(e, "out") for e in graph.out_edges(moved)] + [(e, "in") for e in graph.in_edges(moved)]:
        if edge.relation == COMENTION_RELATION:
            continue
        other = edge.target if side == "out" else edge.source
        new_other = kept if other == moved else other
        now = f"{graph.name(edge.source)} -{edge.relation}-> {graph.name(edge.target)}"
        after = (f"{graph.name(kept)} -{edge.relation}-> {graph.name(new_other)}" if side == "out"
                 else f"{graph.name(new_other)} -{edge.relation}-> {graph.name(kept)}")
        rows.append({"now": printable(now), "after the merge": printable(after), "chunks": edge.weight,
                     "joins an existing edge": "yes" if (edge.relation, new_other, side) in existing else "no"})
    return pd.DataFrame(rows, columns=columns)
