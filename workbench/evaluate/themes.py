"""How well communities match labelled themes: each document goes to the community holding most
of its passages, then purity, normalized mutual information and coverage against the labels.

Examples
--------
>>> m = theme_match({"d1": "c1", "d2": "c1", "d3": "c2", "d4": None}, {"d1": "a", "d2": "a", "d3": "b", "d4": "b"})
>>> (m.purity, round(m.nmi, 3), m.coverage)
(1.0, 1.0, 0.75)
"""

from __future__ import annotations

import json
import math
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from ..model import CommunityReport
from ..model.jsonable import NOT_IN_JSON, to_json

if TYPE_CHECKING:
    from ..corpus.workspace_view import WorkspaceView

__all__ = ["LabelledThemes", "LabelsError", "ThemeMatch", "theme_match", "themes_against_labels",
           "documents_by_community", "label_keys", "nmi"]


class LabelsError(ValueError):
    """A labels file that cannot be read, is not document -> theme, or names no document."""


@dataclass
class ThemeMatch:
    """Communities against labelled themes, over the labelled documents."""

    purity: float
    """Share of assigned documents whose community's majority theme is their own."""
    nmi: float
    """Normalized mutual information of communities and themes (assigned documents; arithmetic mean)."""
    coverage: float
    """Share of labelled documents that some community holds."""
    documents: int
    """Labelled documents."""
    table: list[dict] = field(default_factory=list)
    """Per community: its id, majority theme and the documents of each theme."""

    def to_json(self) -> dict:
        return to_json(self, purity=round(self.purity, 4), nmi=round(self.nmi, 4), coverage=round(self.coverage, 4))


@dataclass
class LabelledThemes:
    """The communities' match to a labels file (``communities --labels``)."""

    match: ThemeMatch
    """Purity, NMI, coverage and the documents of each theme per community."""
    titles: dict[str, str] = field(default_factory=dict, metadata=NOT_IN_JSON)
    """Community id -> its title, for a reader of the table."""

    def to_json(self) -> dict:
        return to_json(self)


def themes_against_labels(ws: WorkspaceView, reports: Sequence[CommunityReport], path: str | Path) -> LabelledThemes:
    """How the themes of ``reports`` match the labels file at ``path`` (JSON: document id or file
    name -> theme); :class:`LabelsError` names what is wrong with the file."""
    try:
        labels = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise LabelsError(f"cannot read the labels file {path}: {exc}") from None
    if not isinstance(labels, dict) or not all(isinstance(v, str) for v in labels.values()):
        raise LabelsError(f"{path}: expected a JSON object of document id (or file name) -> theme")
    documents = ws.graph.passages_document
    keys = label_keys(documents.values(), labels)
    if not keys:
        raise LabelsError(f"{path}: no label names a document of the workspace (ids or file names)")
    by_chunk = {cid: keys[d] for cid, d in documents.items() if d in keys}
    match = theme_match(documents_by_community(reports, by_chunk), {k: labels[k] for k in keys.values()})
    return LabelledThemes(match, {r.id: r.title for r in reports})


def nmi(a: Iterable, b: Iterable) -> float:
    """Normalized mutual information of two labelings of the same items (arithmetic normalization).

    >>> nmi([1, 1, 2, 2], ["x", "x", "y", "y"]), nmi([1, 1, 1, 1], ["x", "x", "y", "y"])
    (1.0, 0.0)
    """
    a, b = list(a), list(b)
    n = len(a)
    if n == 0:
        return 0.0
    ca, cb, cab = Counter(a), Counter(b), Counter(zip(a, b))
    mi = sum(v / n * math.log((v / n) / ((ca[x] / n) * (cb[y] / n))) for (x, y), v in cab.items())
    ha = -sum(v / n * math.log(v / n) for v in ca.values())
    hb = -sum(v / n * math.log(v / n) for v in cb.values())
    if ha == 0 and hb == 0:
        return 1.0
    return max(0.0, mi / ((ha + hb) / 2)) if ha + hb else 0.0


def documents_by_community(reports: Iterable, document_of: Mapping[str, str], level: int = 0) -> dict[str, str | None]:
    """Document -> id of the community of ``level`` holding most of its passages (ties: smaller id)."""
    votes: dict[str, Counter] = {}
    for report in reports:
        if report.level != level:
            continue
        for cid in report.chunks:
            doc = document_of.get(cid)
            if doc is not None:
                votes.setdefault(doc, Counter())[report.id] += 1
    return {doc: min(c.items(), key=lambda kv: (-kv[1], kv[0]))[0] for doc, c in votes.items()}


def theme_match(assigned: Mapping[str, str | None], labels: Mapping[str, str]) -> ThemeMatch:
    """Purity, NMI and coverage of ``assigned`` (document -> community or None) against ``labels``."""
    docs = sorted(labels)
    held = [d for d in docs if assigned.get(d) is not None]
    by_community: dict[str, Counter] = {}
    for d in held:
        by_community.setdefault(str(assigned[d]), Counter())[labels[d]] += 1
    right = sum(max(c.values()) for c in by_community.values())
    table = [{"community": cid, "majority": min(c.items(), key=lambda kv: (-kv[1], kv[0]))[0], "themes": dict(sorted(c.items()))}
             for cid, c in sorted(by_community.items(), key=lambda kv: (-sum(kv[1].values()), kv[0]))]
    return ThemeMatch(purity=right / len(held) if held else 0.0,
                      nmi=nmi([assigned[d] for d in held], [labels[d] for d in held]),
                      coverage=len(held) / len(docs) if docs else 0.0, documents=len(docs), table=table)


def label_keys(document_ids: Iterable[str], labels: Mapping[str, str]) -> dict[str, str]:
    """Document id -> the key it has in ``labels``: the id itself, else its file name when that
    names one document only.

    >>> label_keys(["corpus/a.md", "corpus/b.md"], {"a.md": "x", "corpus/b.md": "y"})
    {'corpus/a.md': 'a.md', 'corpus/b.md': 'corpus/b.md'}
    """
    ids = sorted(set(document_ids))
    names = Counter(d.rsplit("/", 1)[-1] for d in ids)
    found = {}
    for d in ids:
        name = d.rsplit("/", 1)[-1]
        if d in labels:
            found[d] = d
        elif name in labels and names[name] == 1:
            found[d] = name
    return found
