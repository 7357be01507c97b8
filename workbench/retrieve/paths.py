"""Path retrieval: the question read structurally, answered by the cited paths of that walk.

:func:`~workbench.retrieve.questions.read_question` finds the walk a question asks for: what
breaks if X fails (reverse impact), what X depends on (forward), who owns X, who leads the team
that owns X, how X relates to Y. The entities come from the question's text, or failing that
(when it carries a cue) by entity-name embedding similarity. The hits are the chunks cited by
the hops, in path order; path ``i`` scores ``1 / i``. A question with no structural reading
says so and gets the hybrid hits.

Examples
--------
>>> PathsRetriever.name
'paths'
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..context_graph.graph import EntityNotFound
from ..embedding import EmbeddingUnavailable
from ..model import ContextNode, GraphContext, GraphPath, PathStep, RetrievalResult, RetrievalStats, Why
from ..vectors.index import VectorStoreUnavailable
from .base import Capabilities, Ranked, SearchSkeleton, StageTimer, make_hits
from .naming import FAILURE_WORDS, find_entities, is_failure_question
from .questions import Reading, cue_of, read_question
from .vector import embed_query, entity_query

if TYPE_CHECKING:
    from ..corpus.workspace_view import WorkspaceView

__all__ = ["PathsRetriever", "entity_by_similarity", "find_entities", "is_failure_question", "FAILURE_WORDS"]

def entity_by_similarity(ws: WorkspaceView, query: str) -> str | None:
    """The entity whose name embedding is nearest the query, if it passes the seed threshold."""
    try:
        matches = entity_query(ws, embed_query(ws, query), 5)
    except (EmbeddingUnavailable, VectorStoreUnavailable):
        return None
    graph = ws.graph
    threshold = ws.settings.graphrag.seed_similarity_threshold
    ranked = sorted(((m.id, m.similarity) for m in matches if m.id in graph), key=lambda p: (-p[1], p[0]))
    return ranked[0][0] if ranked and ranked[0][1] >= threshold else None


def _hits_along(paths: list[GraphPath], reading: str) -> list[Ranked]:
    """The chunks cited by the hops, path by path, each once; path ``i`` scores ``1 / i``."""
    ranked: list[Ranked] = []
    seen: set[str] = set()
    for i, path in enumerate(paths, 1):
        for number, hop in enumerate(path.hops, 1):
            for chunk_id in hop.chunks:
                if chunk_id in seen:
                    continue
                seen.add(chunk_id)
                step = PathStep(path=tuple(path.nodes), path_rank=i, hop_number=number, hop=hop, reading=reading)
                ranked.append((chunk_id, 1.0 / i, Why(cited_path=step)))
    return ranked


def _context(ws: WorkspaceView, reading: Reading) -> GraphContext:
    """The reading's paths, the entities on them and their hops as the cited triples."""
    graph = ws.graph
    nodes = []
    for name in dict.fromkeys(name for path in reading.paths for name in path.nodes):
        try:
            key = graph.resolve(name)
        except EntityNotFound:  # a display name always resolves; kept whole if one ever does not
            nodes.append(ContextNode(name))
        else:
            nodes.append(ContextNode(name, key=key, type=graph.entity(key).type))
    hops = {(h.source, h.relation, h.target): h for path in reading.paths for h in path.hops}
    return GraphContext(
        nodes=nodes,
        triples=list(hops.values()), reading=reading.kind, entities=list(reading.entities), paths=list(reading.paths),
        impact=reading.impact)


class PathsRetriever(SearchSkeleton):
    """The question read structurally (impact, dependencies, owner, lead, relation), answered by
    the cited paths of that walk; hybrid search when it has no structural reading."""

    name = "paths"
    description = ("questions read structurally: what breaks if X fails, what X depends on, who owns X, who leads "
                   "the team that owns X, how X relates to Y; each answered by cited paths")
    # the vectors, the model and the keyword index for the hybrid hits of a question it cannot read
    capabilities = Capabilities(vectors=True, embedder=True, graph=True, keyword_index=True)

    def search(self, ws: WorkspaceView, query: str, k: int, timer: StageTimer) -> RetrievalResult:
        with timer("entities"):
            keys = find_entities(ws, query)
            matched_by = "name"
            if not keys and cue_of(query) is not None:
                fallback = entity_by_similarity(ws, query)
                keys, matched_by = ([fallback], "similarity") if fallback else ([], "none")
        with timer("traverse"):
            reading = read_question(ws, query, keys)
        if reading is None:
            return self._unread(ws, query, k, timer, keys)
        with timer("fetch"):
            ranked = _hits_along(reading.paths, reading.kind)
            hits = make_hits(ws, ranked[:k])
        stats = RetrievalStats(seconds=timer.total(), entities=list(reading.entities), matched_by=matched_by,
                               reading=reading.kind, paths=len(reading.paths))
        return RetrievalResult(query=query, mode_requested=self.name, mode_used=self.name, hits=hits, stats=stats,
                               graph_context=_context(ws, reading), reason=reading.summary)

    def _unread(self, ws: WorkspaceView, query: str, k: int, timer: StageTimer, keys: list[str]) -> RetrievalResult:
        """No structural reading: say so, and give the hybrid hits rather than a walk nobody asked for."""
        from .hybrid import hybrid_ranking
        from .vector import embed_query as embed

        named = [ws.graph.name(key) for key in keys]
        with timer("hybrid"):
            try:
                vector = embed(ws, query)
            except EmbeddingUnavailable:
                vector = None
            try:
                ranked = hybrid_ranking(ws, query, vector, k)
            except VectorStoreUnavailable:
                ranked = hybrid_ranking(ws, query, None, k)
            hits = make_hits(ws, ranked[:k])
        what = f"it names {', '.join(named)}" if named else "it names no entity of the graph"
        reason = (f"no structural reading: {what}, but asks neither what breaks, what it depends on, who owns or "
                  "leads it, nor how two entities relate; hybrid hits instead")
        stats = RetrievalStats(seconds=timer.total(), entities=named, paths=0)
        return RetrievalResult(query=query, mode_requested=self.name, mode_used="hybrid", hits=hits, stats=stats,
                               reason=reason)
