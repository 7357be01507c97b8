"""Path retrieval: failure questions answered by impact, relation questions by cited paths.

The entities a question names are found in its text (n-grams folded like entity names, then
display names as substrings, longest first), or failing that by entity-name embedding
similarity. A failure question ("what breaks if X fails", "if X goes down", "X outage",
"impact of X") runs :meth:`ContextGraph.impacted_by` on the first entity named; a question
naming two entities without a failure word runs :meth:`ContextGraph.paths` between them.
The hits are the chunks cited by the hops, in path order; path ``i`` scores ``1 / i``.

Examples
--------
>>> bool(is_failure_question("If Redis goes down, what breaks?"))
True
>>> bool(is_failure_question("How is the login flow related to Redis?"))
False
"""

from __future__ import annotations

import re

from ..embedding import EmbeddingUnavailable
from ..graph import hop_to_json, impact_to_json, path_to_json
from ..model import GraphPath, RetrievalResult
from ..vectors import ENTITIES, VectorStoreUnavailable
from .base import Ranked, StageTimer, empty_result, is_empty_query, make_hits
from .cache import indexes_for
from .tokenize import ENGLISH_STOPWORDS
from .vector import embed_query, vector_query

__all__ = ["PathsRetriever", "find_entities", "is_failure_question", "FAILURE_WORDS"]

#: Words that make a question a failure question; they never name an entity in one.
FAILURE_WORDS = re.compile(
    r"\b(?:fail\w*|go(?:es)?\s+down|went\s+down|down|outage\w*|break\w*|broke\w*|impact\w*|affect\w*|"
    r"unavailable|crash\w*|dies|died|dead|offline|stops?|stopped)\b|故障|宕机|挂了|不可用|影响|中断",
    re.IGNORECASE,
)
_WORD = re.compile(r"\w[\w.'/-]*\w|\w")
_MAX_NGRAM = 6


def is_failure_question(query: str) -> bool:
    """Whether the query asks what breaks when something fails."""
    return FAILURE_WORDS.search(query) is not None


def _overlaps(span: tuple[int, int], taken: list[tuple[int, int]]) -> bool:
    return any(span[0] < end and start < span[1] for start, end in taken)


def find_entities(ws, query: str) -> list[str]:
    """Keys of the graph entities named in ``query``, in the order they appear.

    Longer names win over the names inside them ("auth service" over "service"); failure
    words ("outage") and stopwords never count as names.
    """
    from ..canon import name_key

    graph = ws.graph
    indexes = indexes_for(ws)
    words = [(m.start(), m.end()) for m in _WORD.finditer(query)]
    found: list[tuple[int, str]] = []
    taken: list[tuple[int, int]] = []

    def accept(span: tuple[int, int], key: str) -> None:
        text = query[span[0]:span[1]]
        if FAILURE_WORDS.fullmatch(text.strip()) or key in {f[1] for f in found}:
            return
        found.append((span[0], key))
        taken.append(span)

    # Word n-grams folded like names catch "auth-service", "AuthService" and aliases.
    for n in range(min(_MAX_NGRAM, len(words)), 0, -1):
        for i in range(len(words) - n + 1):
            span = (words[i][0], words[i + n - 1][1])
            if _overlaps(span, taken):
                continue
            grams = [query[s:e].casefold() for s, e in words[i:i + n]]
            if all(g in ENGLISH_STOPWORDS for g in grams):
                continue
            text = query[span[0]:span[1]]
            for key in (indexes.key_of(text), name_key(text)):
                if key and key in graph:
                    accept(span, key)
                    break
    # Display names as substrings catch names inside Chinese text, which has no spaces.
    folded = query.casefold()
    for name, key in indexes.entity_names:
        if len(name) < 2 or name in ENGLISH_STOPWORDS:
            continue
        start = folded.find(name)
        while start != -1:
            span = (start, start + len(name))
            bounded = ((start == 0 or not folded[start - 1].isascii() or not folded[start - 1].isalnum())
                       and (span[1] == len(folded) or not folded[span[1]].isascii() or not folded[span[1]].isalnum()))
            if bounded and not _overlaps(span, taken):
                accept(span, key)
                break
            start = folded.find(name, start + 1)
    return [key for _, key in sorted(found)]


def _entity_by_similarity(ws, query: str) -> str | None:
    """The entity whose name embedding is nearest the query, if it passes the seed threshold."""
    try:
        matches = vector_query(ws, ENTITIES, embed_query(ws, query), 5)
    except (EmbeddingUnavailable, VectorStoreUnavailable):
        return None
    graph = ws.graph
    threshold = ws.settings.graphrag.seed_similarity_threshold
    ranked = sorted(((m.id, m.similarity) for m in matches if m.id in graph), key=lambda p: (-p[1], p[0]))
    return ranked[0][0] if ranked and ranked[0][1] >= threshold else None


def _hits_along(paths: list[GraphPath], extra: list[dict]) -> list[Ranked]:
    """The chunks cited by the hops, path by path, each once; path ``i`` scores ``1 / i``."""
    ranked: list[Ranked] = []
    seen: set[str] = set()
    for i, (path, detail) in enumerate(zip(paths, extra), 1):
        for hop in path.hops:
            for chunk_id in hop.chunks:
                if chunk_id in seen:
                    continue
                seen.add(chunk_id)
                ranked.append((chunk_id, 1.0 / i, {"path": list(path.nodes), "hop": hop_to_json(hop), **detail}))
    return ranked


def _subgraph(paths: list[GraphPath]) -> dict:
    nodes = list(dict.fromkeys(name for path in paths for name in path.nodes))
    triples = {}
    for path in paths:
        for hop in path.hops:
            triples.setdefault((hop.source, hop.relation, hop.target), hop_to_json(hop))
    return {"nodes": [{"name": name} for name in nodes], "triples": list(triples.values())}


class PathsRetriever:
    """Impact of a failure, or cited paths between two named entities."""

    name = "paths"
    description = "failure questions: what depends on the entity (impact); two entities: cited paths between them"

    def retrieve(self, ws, query: str, k: int) -> RetrievalResult:
        if is_empty_query(query):
            return empty_result(query, self.name)
        timer = StageTimer()
        graph = ws.graph
        with timer("entities"):
            keys = find_entities(ws, query)
            matched_by = "name"
            if not keys:
                fallback = _entity_by_similarity(ws, query)
                keys, matched_by = ([fallback], "similarity") if fallback else ([], "none")
        if not keys:
            result = empty_result(query, self.name, reason="no entity of the graph is named in the query")
            result.stats["seconds"] = timer.total()
            return result
        names = [graph.name(key) for key in keys]
        failure = is_failure_question(query)
        with timer("traverse"):
            if failure or len(keys) == 1:
                ranked, graph_context, reason = self._impact(ws, keys, failure)
            else:
                ranked, graph_context, reason = self._paths(ws, keys)
        with timer("fetch"):
            hits = make_hits(ws, ranked[:k])
        stats = {"entities": names, "matched_by": matched_by, "paths": len(graph_context.get("paths", []))
                 or len(graph_context.get("impact", {}).get("impacted", [])), "seconds": timer.total()}
        return RetrievalResult(query=query, mode_requested=self.name, mode_used=self.name, hits=hits, stats=stats,
                               graph_context=graph_context, reason=reason)

    @staticmethod
    def _impact(ws, keys: list[str], failure: bool) -> tuple[list[Ranked], dict, str]:
        graph = ws.graph
        impact = graph.impacted_by(keys[0])
        impacted = list(impact.impacted)
        # "If Redis goes down, does the login flow break?": the path to the entity asked about first.
        asked = {graph.name(key) for key in keys[1:]}
        impacted.sort(key=lambda item: item[0] not in asked)
        ranked = _hits_along([path for _, path in impacted], [{"impacted": entity} for entity, _ in impacted])
        graph_context = {"kind": "impact", "failed": impact.failed, "impact": impact_to_json(impact),
                         "survivors": list(impact.survivors), **_subgraph([path for _, path in impacted])}
        how = "failure question" if failure else "one entity named and no second one: what depends on it"
        reason = f"{how}: {len(impacted)} entities break if {impact.failed} fails"
        return ranked, graph_context, reason

    @staticmethod
    def _paths(ws, keys: list[str]) -> tuple[list[Ranked], dict, str]:
        graph = ws.graph
        settings = ws.settings.graph
        found = graph.paths(keys[0], keys[1], max_hops=settings.max_path_hops, k=settings.max_paths)
        ranked = _hits_along(found, [{"path_rank": i} for i in range(1, len(found) + 1)])
        source, target = graph.name(keys[0]), graph.name(keys[1])
        graph_context = {"kind": "paths", "from": source, "to": target,
                         "paths": [path_to_json(p) for p in found], **_subgraph(found)}
        reason = (f"relation question: {len(found)} paths from {source} to {target}" if found
                  else f"no path from {source} to {target} within {settings.max_path_hops} hops")
        return ranked, graph_context, reason
