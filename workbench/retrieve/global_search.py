"""Global search: corpus-wide questions answered from the community reports (map, then reduce).

Map: every community report, themes and sub-themes (see :mod:`workbench.corpus.communities`), is
ranked by the cosine similarity of its embedding to the question's; a theme is ordered by its
report's similarity plus ``SIZE_WEIGHT`` for its size (a corpus-wide question is
about equally unlike every theme; its main themes are the larger ones). Reduce: the themes at
or above ``min_similarity``, in that order, each give one point per round, so ``k`` hits cover as many distinct themes as there
are before any theme gives a second. A theme's points are its report's and its sub-themes'
(taken in turn, ``points_per_community`` of each), then its other passages, so the mode
never returns fewer than ``k`` hits while a community holds a passage not yet given. The
first ``max(max_communities, k)`` themes are used first (so ``k`` points come from ``k``
distinct themes when there are that many); the others follow when they run out.

A question that names a theme (one of its key phrases, and no other theme's as strongly: "What
was decided about the partner export?") narrows the answer to that theme: its sub-themes then
take the turns. ``reason`` says so.

The reports are those of the record as it is (:func:`~workbench.corpus.summaries.current_summaries`
follows each write); while reports that must be made from nothing are rebuilt in the background
for a long-lived reader, the last ones are used and ``graph_context.themes_from`` and ``reason``
say which record version they describe.

A question asking for the themes themselves ("What are the main themes of the corpus?", see
:func:`asks_for_themes`) is answered with the themes, largest first (as ``communities`` lists
them), each with its cited points: the themes take the turns in that order, each giving its own
report's points, and ``graph_context.themes`` is set, ``graph_context.communities`` listing the
themes in that order with each point's chunk (``citations``).

Each hit is the chunk a point quotes; its ``why`` names the community (the theme or the
sub-theme whose report holds the point) and the point, and ``graph_context.communities`` lists
the communities used. A hit's score is ``1 / (round + 1)`` plus a thousandth of the similarity.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import replace
from typing import TYPE_CHECKING

from ..corpus.keyphrases import content_words, phrase_counts
from ..corpus.community_reports import report_order
from ..corpus.summaries import current_summaries, rank_by_similarity
from ..embedding import EmbeddingUnavailable
from ..text.sentences import split_sentences
from ..model import CommunityReport, CommunityUse, GraphContext, Hit, RetrievalResult, RetrievalStats, Why
from .base import Capabilities, SearchSkeleton, StageTimer, empty_result
from .vector import embed_query

if TYPE_CHECKING:
    from ..corpus.workspace_view import WorkspaceView

__all__ = ["ABOUT_THE_CORPUS", "THEME_WORDS", "GlobalRetriever", "asks_for_themes", "named_theme"]

#: Weight of a theme's size (log of its passages, the largest theme 1) added to its similarity when
#: ordering themes: a corpus-wide question is about as unlike every theme, and its main themes are
#: the larger ones; a question about one theme is far more similar to it than this.
SIZE_WEIGHT = 0.3
#: A theme is named when its key phrases in the question weigh this many times the next theme's.
NAMED_MARGIN = 1.5
#: Words a corpus-wide question uses about the corpus itself: a phrase made of them alone names no
#: theme ("What are the main themes?" asked of a corpus with a theme about literary themes).
ABOUT_THE_CORPUS = frozenset({"theme", "themes", "topic", "topics", "subject", "subjects", "main", "major", "key",
                              "overall", "corpus", "document", "documents", "notes", "summary", "summarize",
                              "summarise", "across"})
#: Words of a question that asks for the themes themselves, not for what one theme says.
THEME_WORDS = frozenset({"theme", "themes", "topic", "topics", "subject", "subjects"})


def asks_for_themes(query: str) -> bool:
    """Whether the question asks for the corpus's themes (it writes one of :data:`THEME_WORDS`).

    >>> asks_for_themes("What are the main themes of the corpus?"), asks_for_themes("What breaks if Redis fails?")
    (True, False)
    """
    return any(word in THEME_WORDS for word in re.findall(r"\w+", query.casefold()))


def named_theme(query: str, themes: Sequence[CommunityReport]) -> tuple[CommunityReport, str] | None:
    """The theme whose key phrases the question writes, clearly more than any other's, with the
    phrase; None when it names none (or two alike).

    Examples
    --------
    >>> a = CommunityReport("c-a", "partner export", 3, ("x",), [], [], [], key_phrases=(("partner export", 0.2),))
    >>> b = CommunityReport("c-b", "cloud budget", 3, ("y",), [], [], [], key_phrases=(("cloud budget", 0.2),))
    >>> named_theme("What did we decide about the partner export?", [a, b])[1]
    'partner export'
    >>> named_theme("What are the main themes across all documents?", [a, b]) is None
    True
    >>> c = CommunityReport("c-c", "themes, novel", 3, ("z",), [], [], [], key_phrases=(("themes", 0.3),))
    >>> named_theme("What are the main themes?", [a, b, c]) is None
    True
    """
    asked = {p for p in phrase_counts(query) if not set(p.split(" ")) <= ABOUT_THE_CORPUS}
    scored = []
    for theme in themes:
        found = [(w, p) for p, w in theme.key_phrases if p in asked]
        if found:
            scored.append((sum(w for w, _ in found), max(found)[1], theme))
    if not scored:
        return None
    scored.sort(key=lambda s: (-s[0], s[2].id))
    if len(scored) > 1 and scored[0][0] < NAMED_MARGIN * scored[1][0]:
        return None
    return scored[0][2], scored[0][1]


def _queue(theme: CommunityReport, parts: Sequence[CommunityReport], per_report: int, entities_of) -> list:
    """``(report, point or None, chunk id)`` in the order a theme gives them: its report's and its
    parts' points in turn (``per_report`` of each), their other points, then its other passages
    (most linked to its entities first)."""
    reports = [theme, *parts]
    order: list = []
    for depth in range(max((len(r.points) for r in reports), default=0)):
        for report in reports:
            if depth < len(report.points):
                order.append((depth >= per_report, report, report.points[depth], report.points[depth].chunk_id))
    order.sort(key=lambda item: item[0])  # stable: the first per_report rounds, then the rest
    queue = [(report, point, cid) for _, report, point, cid in order]
    members = set(theme.members)
    rest = sorted(theme.chunks, key=lambda c: (-len(entities_of.get(c, frozenset()) & members), c))
    return queue + [(theme, None, cid) for cid in rest]


def _passage_point(text: str, theme: CommunityReport) -> str:
    """The sentence of a passage that writes most of the theme's key phrases' words."""
    words = {w for p, _ in theme.key_phrases for w in p.split(" ")}
    sentences = split_sentences(text) or [text]
    return max(sentences, key=lambda s: (len(set(content_words(s)) & words), len(content_words(s)) >= 4,
                                         -sentences.index(s)))


class GlobalRetriever(SearchSkeleton):
    """Map over community reports, reduce to cited points from distinct themes."""

    name = "global"
    description = ("corpus-wide questions: community reports ranked against the question, one cited point per "
                   "theme per round (a question naming a theme narrows to it)")
    # without the model, the themes are taken largest first (inside the step); no chunk vectors
    capabilities = Capabilities(embedder=True, graph=True, community_reports=True)

    def search(self, ws: WorkspaceView, query: str, k: int, timer: StageTimer) -> RetrievalResult:
        settings = ws.settings.global_search
        with timer("reports"):
            summaries = current_summaries(ws)
        reports = summaries.reports
        if not reports:
            result = empty_result(query, self.name, reason="no community reports: the graph has no community of "
                                  f"{ws.settings.communities.min_size} or more entities")
            result.stats.seconds = timer.total()
            return result
        themes_from = summaries.themes_from
        # Reports older than the record (rebuilt in the background) are used, and the answer says so.
        notes: list[str] = [themes_from.statement()] if themes_from.behind else []
        with timer("map"):
            try:
                ranked = rank_by_similarity(summaries.report_vectors, embed_query(ws, query))
                if not ranked:
                    notes.append("community reports have no embeddings: themes taken largest first")
            except EmbeddingUnavailable as exc:
                ranked = []
                notes.append(f"embedding unavailable ({exc}): themes taken largest first")
            if not ranked:
                ranked = [(i, 0.0) for i in range(len(reports))]
            similarity = {reports[i].id: sim for i, sim in ranked}
            by_id = {r.id: r for r in reports}

            def theme_of(report: CommunityReport) -> CommunityReport:
                while report.parent in by_id:
                    report = by_id[report.parent]  # type: ignore[index]
                return report

            themes = [r for r in reports if r.level == 0]
            parts: dict[str, list[CommunityReport]] = {t.id: [] for t in themes}
            for r in reports:
                if r.level > 0 and theme_of(r).id in parts:
                    parts[theme_of(r).id].append(r)
            best = {t.id: similarity.get(t.id, 0.0) for t in themes}
            largest = math.log1p(max((len(t.chunks) for t in themes), default=0)) or 1.0
            order = {t.id: best[t.id] + SIZE_WEIGHT * math.log1p(len(t.chunks)) / largest for t in themes}
            named = named_theme(query, themes)
            listing = named is None and asks_for_themes(query)
            units: list[tuple[CommunityReport, list[CommunityReport]]]
            if listing:
                units = [(t, []) for t in sorted(themes, key=report_order)]
                notes.append(f"a question asking for the themes: the {len(units)} themes, "
                             "largest first, each with its cited points")
            elif named is not None:
                theme, phrase = named
                notes.append(f"the question names the theme {theme.title!r} (key phrase {phrase!r}): its points only")
                units = [(theme, [])] if not parts[theme.id] else \
                    [(p, []) for p in sorted(parts[theme.id], key=lambda p: (-similarity.get(p.id, 0.0), p.id))]
                units += [(theme, [])] if parts[theme.id] else []
            else:
                chosen = sorted((t for t in themes if best[t.id] >= settings.min_similarity),
                                key=lambda t: (-order[t.id], t.id))
                units = [(t, sorted(parts[t.id], key=lambda p: (-similarity.get(p.id, 0.0), p.id))) for t in chosen]
        with timer("reduce"):
            entities_of = ws.graph.passages.entities_of
            queues = [_queue(theme, sub, settings.points_per_community, entities_of) for theme, sub in units]
            picked: list[tuple[int, int, CommunityReport, object, str]] = []
            seen: set[str] = set()
            used: dict[str, list[tuple[str, str]]] = {}
            first = min(max(settings.max_communities, k), len(units))  # k points from k themes when there are k
            for batch in (range(first), range(first, len(units))):
                depth = [0] * len(queues)
                rnd = 0
                while len(picked) < k and any(depth[u] < len(queues[u]) for u in batch):
                    for u in batch:
                        while depth[u] < len(queues[u]) and queues[u][depth[u]][2] in seen:
                            depth[u] += 1
                        if depth[u] >= len(queues[u]) or len(picked) >= k:
                            continue
                        report, point, cid = queues[u][depth[u]]
                        depth[u] += 1
                        seen.add(cid)
                        picked.append((rnd, u, report, point, cid))
                    rnd += 1
            texts = {c.id: c for c in ws.store.chunks([cid for *_, cid in picked])}
            hits: list[Hit] = []
            for rnd, u, report, point, cid in picked:
                chunk = texts.get(cid)
                if chunk is None:
                    continue
                text = point.text if point is not None else _passage_point(chunk.text, units[u][0])  # type: ignore[attr-defined]
                sim = similarity.get(report.id, 0.0)
                # Within a round, the larger theme first when the themes are listed; else the more similar.
                tie = 1.0 - u / len(units) if listing else sim
                why = Why(community=report.id, community_title=report.title, point=text, similarity=round(sim, 6),
                          entities=list(point.entities) if point is not None else [],  # type: ignore[attr-defined]
                          point_kind=point.kind if point is not None else "passage")  # type: ignore[attr-defined]
                hits.append(Hit(chunk_id=cid, document=chunk.document_id, text=chunk.text,
                                score=round(1.0 / (rnd + 1) + 0.001 * tie, 6), rank=len(hits) + 1, why=why))
                used.setdefault(report.id, []).append((text, cid))
            # Best first by the score stated above: within a round, the more similar report's point.
            hits = [replace(h, rank=i) for i, h in enumerate(sorted(hits, key=lambda h: -h.score), 1)]
        listed = reports
        if listing:  # every theme, largest first, with its report's first points beside those the hits quote
            listed = [theme for theme, _ in units]
            for theme in listed:
                quoted = used.setdefault(theme.id, [])
                quoted += [(p.text, p.chunk_id) for p in theme.points[:settings.points_per_community]
                           if (p.text, p.chunk_id) not in quoted][:max(0, settings.points_per_community - len(quoted))]
        context = GraphContext(communities=[
            CommunityUse(r.id, r.title, r.size, round(similarity.get(r.id, 0.0), 6), first_seen=r.first_seen,
                         last_seen=r.last_seen, key_entities=tuple(name for name, _, _ in r.key_entities),
                         points=tuple(text for text, _ in used[r.id]), citations=tuple(cid for _, cid in used[r.id]),
                         passages=len(r.chunks))
            for r in listed if r.id in used], themes=listing, themes_from=themes_from)
        if not hits:
            notes.append(f"no theme reaches min_similarity={settings.min_similarity}")
        return RetrievalResult(
            query=query, mode_requested=self.name, mode_used=self.name, hits=hits,
            stats=RetrievalStats(seconds=timer.total(), communities=len(reports),
                                 communities_used=len(context.communities), global_hits=len(hits)),
            graph_context=context, reason="; ".join(notes))
