"""Global search: corpus-wide questions answered from the community reports (map, then reduce).

Map: every community report (see :mod:`workbench.communities`) is ranked by the cosine
similarity of its embedding to the question's; the best ``global_search.max_communities`` at or
above ``min_similarity`` are used. Reduce: each used community gives its first
``points_per_community`` points (sentences chosen by centrality and coverage), taken in rounds,
one point of each community per round, so the answer covers every theme before going deep in
one. Each hit is the chunk a point quotes; its ``why`` names the community and the point, and
``graph_context.communities`` lists the communities used. A hit's score is
``2 x (rounds left) + similarity``: higher rounds first, more similar communities first within one.
"""

from __future__ import annotations

from ..embedding import EmbeddingUnavailable
from ..model import CommunityUse, GraphContext, Hit, RetrievalResult, RetrievalStats, Why
from ..summaries import current_summaries, rank_by_similarity
from .base import StageTimer, empty_result, is_empty_query
from .vector import embed_query

__all__ = ["GlobalRetriever"]


class GlobalRetriever:
    """Map over community reports, reduce to their best cited points."""

    name = "global"
    description = ("corpus-wide questions: community reports ranked against the question, their best cited "
                   "points taken in rounds, one per community")

    def retrieve(self, ws, query: str, k: int) -> RetrievalResult:
        if is_empty_query(query):
            return empty_result(query, self.name)
        timer = StageTimer()
        settings = ws.settings.global_search
        with timer("reports"):
            summaries = current_summaries(ws)
        reports = summaries.reports
        if not reports:
            result = empty_result(query, self.name, reason="no community reports: the graph has no community of "
                                  f"{ws.settings.communities.min_size} or more entities")
            result.stats.seconds = timer.total()
            return result
        reason = ""
        with timer("map"):
            try:
                ranked = rank_by_similarity(summaries.report_vectors, embed_query(ws, query))
            except EmbeddingUnavailable as exc:
                ranked = []
                reason = f"embedding unavailable ({exc}): communities taken largest first"
            if not ranked:
                reason = reason or "community reports have no embeddings: communities taken largest first"
                ranked = [(i, 0.0) for i in range(len(reports))]
            used = [(reports[i], sim) for i, sim in ranked if sim >= settings.min_similarity][:settings.max_communities]
        with timer("reduce"):
            hits: list[Hit] = []
            seen: set[str] = set()
            rounds = settings.points_per_community
            for j in range(rounds):
                for report, sim in used:
                    if j >= len(report.points) or len(hits) >= k:
                        continue
                    point = report.points[j]
                    if point.chunk_id in seen:
                        continue
                    seen.add(point.chunk_id)
                    why = Why(community=report.id, community_title=report.title, point=point.text,
                              similarity=round(sim, 6), entities=list(point.entities), point_kind=point.kind)
                    hits.append(Hit(chunk_id=point.chunk_id, document=point.document, text="",
                                    score=round(2.0 * (rounds - j) + sim, 6), rank=len(hits) + 1, why=why))
            texts = {c.id: c.text for c in ws.store.chunks([h.chunk_id for h in hits])}
            hits = [h for h in hits if h.chunk_id in texts]
            for rank, hit in enumerate(hits, 1):
                hit.text, hit.rank = texts[hit.chunk_id], rank
        context = GraphContext(communities=[
            CommunityUse(r.id, r.title, r.size, round(sim, 6), first_seen=r.first_seen, last_seen=r.last_seen,
                         key_entities=tuple(name for name, _, _ in r.key_entities),
                         points=tuple(p.text for p in r.points[:rounds])) for r, sim in used])
        return RetrievalResult(
            query=query, mode_requested=self.name, mode_used=self.name, hits=hits,
            stats=RetrievalStats(seconds=timer.total(), communities=len(reports), communities_used=len(used),
                                 global_hits=len(hits)),
            graph_context=context, reason=reason or ("" if hits else "no community reaches min_similarity="
                                                     f"{settings.min_similarity}"))


def _register() -> None:
    from . import register

    register(GlobalRetriever())


_register()
