"""Retrieval results for people: hits as tables and cards, how strategies overlap, and what a
graph strategy walked (seeds, entities, cited triples, cited paths, impacts).

Everything here reads the typed contract of :mod:`workbench.model.retrieval`; a hit's reason is
its :meth:`~workbench.model.Why.describe`. Names and texts from documents pass through
:func:`~workbench.text.safe_text.printable`.

Examples
--------
>>> from workbench.model import Hit, RetrievalResult, Why
>>> a = RetrievalResult("q", "a", "a", hits=[Hit("c1", "d1.md", "t", 1.0, rank=1), Hit("c2", "d2.md", "t", 0.5, rank=2)])
>>> b = RetrievalResult("q", "b", "b", hits=[Hit("c2", "d2.md", "t", 1.0, rank=1, why=Why(similarity=0.91))])
>>> shared_hits({"a": a, "b": b})
{'c2': ['a', 'b']}
>>> side_by_side({"a": a, "b": b})["b"].tolist()
['★ d2.md [c2]', '']
>>> hits_frame(b).loc[0, "why"]
'Embedding similarity 0.91.'
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping

import pandas as pd

from ..text.safe_text import printable
from ..model import GraphContext, GraphPath, Hit, Hop, Impact, RetrievalResult, Seed

__all__ = ["shared_hits", "hits_frame", "hit_card", "side_by_side", "rank_overlap", "seeds_text", "walk_frames",
           "path_frame", "path_line", "path_text", "longest_chains", "impact_frame", "communities_used_frame"]


def longest_chains(paths: Iterable[GraphPath]) -> list[GraphPath]:
    """The chains among ``paths``: each path that no other path extends (its nodes are not the
    start of another's), longest first, then in the given order. Every entity a path reaches
    lies on one of them, so they cite all of it in the fewest lines.

    Examples
    --------
    >>> def p(*names): return GraphPath(list(names), [])
    >>> [x.nodes for x in longest_chains([p("Redis", "Sessions"), p("Redis", "token cache"),
    ...                                   p("Redis", "token cache", "Auth Service", "login flow"),
    ...                                   p("Redis", "token cache", "Auth Service")])]
    [['Redis', 'token cache', 'Auth Service', 'login flow'], ['Redis', 'Sessions']]
    """
    paths = list(paths)
    kept = [path for path in paths
            if not any(len(other.nodes) > len(path.nodes) and other.nodes[:len(path.nodes)] == path.nodes
                       for other in paths)]
    unique = list({tuple(path.nodes): path for path in reversed(kept)}.values())[::-1]
    return sorted(unique, key=lambda path: -len(path.nodes))


def shared_hits(results: Mapping[str, RetrievalResult]) -> dict[str, list[str]]:
    """Chunk id -> the strategies that returned it, for chunks returned by two or more."""
    seen: dict[str, list[str]] = {}
    for mode, result in results.items():
        for hit in result.hits:
            modes = seen.setdefault(hit.chunk_id, [])
            if mode not in modes:
                modes.append(mode)
    return {chunk: modes for chunk, modes in seen.items() if len(modes) > 1}


def hits_frame(result: RetrievalResult, shared: Collection[str] = ()) -> pd.DataFrame:
    """The hits of one result, each with its reason as a sentence; a ★ marks chunks that other
    strategies returned too."""
    rows = [{"": "★" if hit.chunk_id in shared else "", "rank": hit.rank, "score": round(hit.score, 4),
             "document": printable(hit.document), "text": printable(hit.text, keep_newlines=True),
             "why": printable(hit.why.describe()), "chunk": hit.chunk_id}
            for hit in result.hits]
    return pd.DataFrame(rows, columns=["", "rank", "score", "document", "text", "why", "chunk"])


def hit_card(hit: Hit, also_in: Iterable[str] = (), max_chars: int = 600) -> tuple[str, str, str]:
    """``(heading, text, why)`` of a hit's card: rank, score, chunk id and document; the text cut
    at ``max_chars``; its reason as a sentence.

    >>> from workbench.model import Why
    >>> hit_card(Hit("c1", "notes/\\x1b[2Jx.md", "Redis.", 0.5, rank=1, why=Why(bm25=1.0, matched_terms=["redis"])),
    ...          ["vector"])
    ('#1 · 0.500 · chunk c1 ★ also in vector\\nnotes/\\\\x1b[2Jx.md', 'Redis.', 'Matched the words “redis” (BM25 1.00).')
    """
    others = list(also_in)
    mark = " ★ also in " + ", ".join(others) if others else ""
    text = hit.text if len(hit.text) < max_chars else hit.text[:max_chars] + "…"
    return (f"#{hit.rank} · {hit.score:.3f} · chunk {hit.chunk_id}{mark}\n{printable(hit.document)}",
            printable(text, keep_newlines=True), printable(hit.why.describe()))


def side_by_side(results: Mapping[str, RetrievalResult]) -> pd.DataFrame:
    """Rank x mode: each cell is ``document [chunk id]``; ★ marks chunks that two or more modes
    returned."""
    shared = shared_hits(results)
    depth = max((len(r.hits) for r in results.values()), default=0)
    rows = []
    for i in range(depth):
        row = {}
        for mode, result in results.items():
            hit = result.hits[i] if i < len(result.hits) else None
            row[mode] = "" if hit is None else (("★ " if hit.chunk_id in shared else "")
                                                + f"{printable(hit.document)} [{hit.chunk_id}]")
        rows.append(row)
    return pd.DataFrame(rows, columns=list(results), index=pd.RangeIndex(1, depth + 1, name="rank"))


def rank_overlap(results: Mapping[str, RetrievalResult]) -> pd.DataFrame:
    """One row per chunk returned by any strategy: its rank in each (blank where absent), how many
    strategies returned it, and its document; shared chunks first, then by best rank.

    Examples
    --------
    >>> a = RetrievalResult("q", "a", "a", hits=[Hit("c1", "d1", "t", 1.0, 1), Hit("c2", "d2", "t", 0.5, 2)])
    >>> b = RetrievalResult("q", "b", "b", hits=[Hit("c2", "d2", "t", 1.0, 1)])
    >>> rank_overlap({"a": a, "b": b}).to_dict("records")
    [{'chunk': 'c2', 'document': 'd2', 'strategies': 2, 'a': '2', 'b': '1'}, {'chunk': 'c1', 'document': 'd1', 'strategies': 1, 'a': '1', 'b': ''}]
    """
    ranks: dict[str, dict[str, int]] = {}
    documents: dict[str, str] = {}
    for mode, result in results.items():
        for position, hit in enumerate(result.hits, 1):
            ranks.setdefault(hit.chunk_id, {}).setdefault(mode, hit.rank or position)
            documents.setdefault(hit.chunk_id, hit.document)
    order = sorted(ranks, key=lambda c: (-len(ranks[c]), min(ranks[c].values()), c))
    rows = [{"chunk": c, "document": printable(documents[c]), "strategies": len(ranks[c]),
             **{mode: str(ranks[c][mode]) if mode in ranks[c] else "" for mode in results}} for c in order]
    return pd.DataFrame(rows, columns=["chunk", "document", "strategies", *results])


def seeds_text(seeds: Iterable[Seed]) -> str:
    """Seed entities as ``name (score)``: a named seed's specificity, a similar seed's similarity.

    >>> seeds_text([Seed("Redis", "redis", "named", specificity=0.25), Seed("cache", "cache", "similar", similarity=0.61)])
    'Redis (named, 0.25), cache (similar, 0.61)'
    """
    return ", ".join(f"{printable(s.entity)} ({s.source}, {s.score:.2f})" for s in seeds)


def walk_frames(context: GraphContext) -> tuple[pd.DataFrame, pd.DataFrame]:
    """``(entities, cited triples)`` of a graph context as tables: the entities ranked by the walk
    with their type and PageRank mass; each triple with its weight, chunks and documents."""
    nodes = pd.DataFrame([{"entity": printable(n.name), "type": printable(n.type or ""),
                           "score": None if n.ppr is None else round(n.ppr, 4)} for n in context.nodes],
                         columns=["entity", "type", "score"])
    return nodes, _hops_frame(context.triples)


def _hops_frame(hops: Iterable[Hop]) -> pd.DataFrame:
    rows = [{"source": printable(h.source), "relation": printable(h.relation), "target": printable(h.target),
             "weight": h.weight, "chunks": ", ".join(h.chunks), "documents": printable(", ".join(h.documents))}
            for h in hops]
    return pd.DataFrame(rows, columns=["source", "relation", "target", "weight", "chunks", "documents"])


def path_frame(path: GraphPath) -> pd.DataFrame:
    """One row per hop of a cited path: source, relation, target, weight, chunks, documents."""
    return _hops_frame(path.hops)


def path_line(path: GraphPath) -> str:
    """The names along a path, ``A → B → C``."""
    return " → ".join(printable(name) for name in path.nodes)


def path_text(path: GraphPath) -> str:
    """A cited path as lines: the names along it, then each hop with the chunks that state it.

    >>> print(path_text(GraphPath(["Redis", "token cache"], [Hop("token cache", "backed_by", "Redis", 1, ("c4",), ())])))
    Redis → token cache (corroboration 1)
      token cache -backed_by-> Redis [c4]
    """
    hops = [f"  {printable(h.states)} [{', '.join(h.chunks)}]" for h in path.hops]
    return "\n".join([f"{path_line(path)} (corroboration {path.corroboration})", *hops])


def impact_frame(impact: Impact) -> pd.DataFrame:
    """The entities an impact reaches: hops from the failed entity, the path, the chunks cited."""
    rows = [{"entity": printable(entity), "hops": len(path.hops), "path": path_line(path),
             "chunks": ", ".join(c for hop in path.hops for c in hop.chunks)}
            for entity, path in impact.impacted]
    return pd.DataFrame(rows, columns=["entity", "hops", "path", "chunks"])


def communities_used_frame(context: GraphContext) -> pd.DataFrame:
    """The community reports global search used, most similar first (for a question asking for the
    themes: every theme, largest first), with the points it took."""
    rows = [{"community": c.id, "title": printable(c.title), "size": c.size, "similarity": round(c.similarity, 3),
             "points": printable(" | ".join(c.points))} for c in context.communities]
    return pd.DataFrame(rows, columns=["community", "title", "size", "similarity", "points"])
