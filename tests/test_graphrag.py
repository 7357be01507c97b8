"""GraphRAG: seeds, Personalized PageRank, cited graph context, and each degradation mode."""

from __future__ import annotations

import networkx as nx
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from workbench.retrieve import retrieve
from workbench.retrieve.graphrag import rank_provenance, top_entities

from tests.conftest import REDIS_QUESTION, BrokenEmbedder, chunk_id, reopened


def _documents(result, n=5):
    return [h.document.rsplit("/", 1)[-1] for h in result.hits[:n]]


def test_full_graphrag_puts_the_cited_chain_in_its_top_five(sample_workspace):
    ws = sample_workspace
    result = retrieve(ws, REDIS_QUESTION, mode="graphrag", k=5)
    assert result.mode_used == "full_graphrag"
    assert {"login-flow.md", "auth-service.md", "redis.md"} <= set(_documents(result))
    named = [s for s in result.stats.seeds if s.source == "named"]
    assert [s.entity for s in named] == ["Redis"] and named[0].specificity > 0
    similar = [s for s in result.stats.seeds if s.source == "similar"]
    assert len(similar) <= ws.settings.graphrag.max_seeds
    assert all(s.similarity >= ws.settings.graphrag.seed_similarity_threshold for s in similar)
    assert set(result.stats.seconds) >= {"embed", "seeds", "dense", "ppr", "provenance", "hybrid", "fuse", "total"}
    assert result.stats.ppr_converged and result.stats.ppr_iterations <= 100
    assert result.graph_context.seeds == result.stats.seeds
    # The hits that state the cited impact path say which hop they state.
    cited = [h for h in result.hits if h.why.cited_path]
    assert [h.why.cited_path.hop.states for h in cited] == [
        "token cache -backed_by-> Redis", "Auth Service -depends_on-> token cache", "login flow -depends_on-> Auth Service"]
    assert result.graph_context.failed == "Redis" and result.graph_context.reading == "impact"
    assert result.graph_context.paths[0].nodes == ["Redis", "token cache", "Auth Service", "login flow"]


def test_graph_context_cites_the_triples_among_the_walked_entities(sample_workspace):
    ws = sample_workspace
    result = retrieve(ws, REDIS_QUESTION, mode="graphrag", k=10)
    assert result.stats.top_entities == ws.settings.graphrag.ppr_top_k == len(result.graph_context.nodes)
    triples = {(t.source, t.relation, t.target): t.chunks for t in result.graph_context.triples}
    assert chunk_id(ws, "infrastructure/redis.md", "The token cache is backed by Redis.") in \
        triples[("token cache", "backed_by", "Redis")]
    assert len(triples) <= ws.settings.graphrag.max_triples
    assert result.hits
    for hit in result.hits:
        assert set(hit.why.ranks) == {"walk", "provenance", "hybrid"}
        # Every hit is in a fused ranking, states a cited path, or follows the chain's start it bridges from.
        assert any(r is not None for r in hit.why.ranks.values()) or hit.why.cited_path or (
            hit.why.via == "bridge" and hit.why.parent in {h.chunk_id for h in result.hits[:hit.rank - 1]})
        if hit.why.ranks["provenance"] is not None:
            assert hit.why.entities and hit.why.ppr_mass > 0
    walked = result.graph_context.passages
    assert walked and walked == sorted(walked, key=lambda p: (-p.mass, p.chunk))


def test_graphrag_brings_the_login_flow_chunk_for_the_login_question(sample_workspace):
    ws = sample_workspace
    result = retrieve(ws, "If Redis goes down, does the login flow break?", mode="graphrag", k=10)
    login = chunk_id(ws, "architecture/login-flow.md", "The login flow depends on the auth service.")
    hit = next(h for h in result.hits if h.chunk_id == login)
    assert hit.why.cited_path.hop.states == "login flow -depends_on-> Auth Service"
    assert login in hit.why.cited_path.hop.chunks


def test_a_query_naming_nothing_with_no_similar_entity_falls_back_to_hybrid(sample_workspace):
    ws = reopened(sample_workspace, graphrag__seed_similarity_threshold=0.99)
    query = "what happens when things get slow?"
    try:
        result = retrieve(ws, query, mode="graphrag", k=5)
        hybrid = retrieve(ws, query, mode="hybrid", k=5)
    finally:
        ws.close()
    assert result.mode_used == "vector_only"
    assert "seed_similarity_threshold" in result.reason and "names no entity" in result.reason
    assert [h.chunk_id for h in result.hits] == [h.chunk_id for h in hybrid.hits]
    assert result.stats.seeds == [] and result.graph_context.empty


def test_a_graph_larger_than_max_graph_nodes_falls_back_to_hybrid(sample_workspace):
    ws = reopened(sample_workspace, graphrag__max_graph_nodes=1)
    try:
        result = retrieve(ws, REDIS_QUESTION, mode="graphrag", k=5)
        hybrid = retrieve(ws, REDIS_QUESTION, mode="hybrid", k=5)
    finally:
        ws.close()
    assert result.mode_used == "vector_only"
    assert "max_graph_nodes=1" in result.reason
    assert [h.chunk_id for h in result.hits] == [h.chunk_id for h in hybrid.hits]


def test_unavailable_embeddings_fall_back_to_keyword_only(sample_workspace):
    ws = reopened(sample_workspace, embedder=BrokenEmbedder())
    try:
        result = retrieve(ws, REDIS_QUESTION, mode="graphrag", k=5)
        keyword = retrieve(ws, REDIS_QUESTION, mode="keyword", k=5)
        hybrid = retrieve(ws, REDIS_QUESTION, mode="hybrid", k=5)
        vector = retrieve(ws, REDIS_QUESTION, mode="vector", k=5)
    finally:
        ws.close()
    assert result.mode_used == "keyword_only" and "embeddings unavailable" in result.reason
    assert [h.chunk_id for h in result.hits] == [h.chunk_id for h in keyword.hits]
    assert hybrid.mode_used == "keyword_only"
    assert vector.hits == [] and "unavailable" in vector.reason


def test_the_walk_equals_networkx_pagerank_over_the_same_graph(sample_workspace):
    """The fast index against a plain networkx graph built from the same parts, by hand."""
    ws = sample_workspace
    graph = ws.graph
    layer = graph.passages
    expected_graph = nx.MultiGraph()
    expected_graph.add_nodes_from(graph.nx)
    expected_graph.add_nodes_from(("p", cid) for cid in layer.entities_of)
    stated = set()
    for source, target, relation, edge in graph.nx.edges(keys=True, data="edge"):
        scale = 1.0 if relation == "co_mentioned" else layer.relation_weight
        if relation != "co_mentioned":
            stated |= {(cid, end) for cid in edge.chunk_ids for end in (source, target)}
        expected_graph.add_edge(source, target, weight=scale * edge.weight)
    for a, b, _ in layer.synonyms:
        expected_graph.add_edge(a, b, weight=1.0)
    for cid, keys in layer.entities_of.items():
        for key in keys - layer.common:
            expected_graph.add_edge(("p", cid), key, weight=layer.relation_weight if (cid, key) in stated else 1.0)
    for cid, target in layer.title_links:
        expected_graph.add_edge(("p", cid), ("p", target), weight=layer.title_link_weight)
    index = graph.pagerank_index()
    assert len(index) == expected_graph.number_of_nodes()
    seeds = {"redis": 0.7, "tokencache": 0.3}
    scores, _, converged = index.walk(index.vector(seeds), 0.85, tol=1e-12, max_iter=1000)
    expected = nx.pagerank(expected_graph, alpha=0.85, personalization=seeds, weight="weight", tol=1e-12,
                           max_iter=1000)
    assert converged
    assert max(abs(scores[index.index[node]] - value) for node, value in expected.items()) < 1e-9


@pytest.mark.parametrize("seed", range(5))
def test_personalized_pagerank_equals_networkx_on_random_graphs(seed):
    from workbench.context_graph.graph import ContextGraph
    from workbench.model import Edge, Entity

    rng = np.random.default_rng(seed)
    n = int(rng.integers(5, 40))
    pairs = {(int(a), int(b)) for a, b in rng.integers(0, n, size=(n * 2, 2)) if a != b}
    graph = ContextGraph([Entity(f"e{i}", f"E{i}") for i in range(n)],
                         [Edge(f"e{a}", "uses", f"e{b}", chunk_ids=tuple(f"c{j}" for j in range(1 + (a + b) % 3)))
                          for a, b in sorted(pairs)])
    seeds = {f"e{int(i)}": float(rng.random()) + 0.01 for i in rng.choice(n, size=min(3, n), replace=False)}
    ours = graph.personalized_pagerank(seeds, damping=0.85, tol=1e-6, max_iter=100)
    undirected = nx.MultiGraph()
    undirected.add_nodes_from(graph.nx)
    undirected.add_edges_from((s, t, {"weight": w}) for s, t, w in graph.nx.edges(data="weight"))
    expected = nx.pagerank(undirected, alpha=0.85, personalization=seeds, weight="weight", tol=1e-6, max_iter=100)
    assert max(abs(ours[k] - expected[k]) for k in expected) < 1e-9


def test_top_entities_break_ties_by_key_and_skip_zero_mass():
    assert top_entities(["b", "a", "c", "d"], np.array([0.3, 0.3, 0.4, 0.0]), 10) == [("c", 0.4), ("a", 0.3), ("b", 0.3)]
    assert top_entities(["b", "a", "c"], np.array([0.3, 0.3, 0.4]), 2) == [("c", 0.4), ("a", 0.3)]


def test_provenance_sums_the_mass_of_the_entities_a_chunk_mentions():
    chunk_entities = {"c1": {"a", "b"}, "c2": {"b", "x"}, "c3": {"x"}}
    mass = {"a": 0.5, "b": 0.25}
    expected = [("c1", 0.75, ["a", "b"]), ("c2", 0.25, ["b"])]
    assert rank_provenance(chunk_entities, mass) == expected
    assert rank_provenance(chunk_entities, mass, {"a": ("c1",), "b": ("c1", "c2"), "x": ("c2", "c3")}) == expected


def test_provenance_puts_chunks_stating_a_relation_between_top_entities_first():
    from workbench.model import Edge

    chunk_entities = {"c1": {"a"}, "c2": {"a", "b"}, "c3": {"b"}}
    mass = {"a": 0.6, "b": 0.1}
    # c3 states "b uses a" but mentions only b by the entity patterns; c1 merely mentions a.
    edges = {"a": (Edge("b", "uses", "a", chunk_ids=("c3",)),), "b": (Edge("b", "uses", "a", chunk_ids=("c3",)),)}
    ranked = rank_provenance(chunk_entities, mass, relation_edges=edges)
    assert [chunk_id for chunk_id, _, _ in ranked] == ["c3", "c2", "c1"]
    assert ranked[0] == ("c3", 1.4, ["a", "b"])  # stated 0.6 + 0.1, then the mentions of both ends


def _provenance_by_full_sort(chunk_entities, mass, relation_edges):
    """rank_provenance's rule chunk by chunk, then one sort: the stating edges between top
    entities first, then the mass of the top entities it names or states."""
    between = list({(e.source, e.relation, e.target): e for edges in relation_edges.values() for e in edges
                    if e.source in mass and e.target in mass}.values())
    rows = []
    for cid in set(chunk_entities) | {c for e in between for c in e.chunk_ids}:
        stating = [e for e in between if cid in e.chunk_ids]
        keys = {k for k in chunk_entities.get(cid, ()) if k in mass} | {k for e in stating for k in (e.source, e.target)}
        if keys:
            stated = round(sum(mass[e.source] + mass[e.target] for e in stating), 12)
            rows.append((-stated, -round(sum(mass[k] for k in keys), 12), cid, sorted(keys)))
    return [(cid, round(-stated - named, 12), keys) for stated, named, cid, keys in sorted(rows)]


@settings(max_examples=300, deadline=None)
@given(st.data())
def test_provenance_with_a_limit_is_the_head_of_the_full_sort(data):
    from workbench.context_graph.passage_links import PassageLinks
    from workbench.model import Edge

    keys = [f"e{i}" for i in range(8)]
    chunks = [f"c{i:02d}" for i in range(30)]
    chunk_entities = {c: frozenset(data.draw(st.sets(st.sampled_from(keys), max_size=4))) for c in chunks}
    # Masses in 64ths: every sum is exact, so the order of the additions cannot change a rank.
    mass = {k: data.draw(st.integers(1, 64)) / 64 for k in data.draw(st.sets(st.sampled_from(keys), min_size=1))}
    edges: dict[str, list] = {}
    for source, target, stating in data.draw(st.lists(st.tuples(st.sampled_from(keys), st.sampled_from(keys),
                                                                st.sets(st.sampled_from(chunks), min_size=1)),
                                                      max_size=6)):
        if any((e.source, e.target) == (source, target) for e in edges.get(source, ())):
            continue  # one edge a (source, relation, target), as in the graph
        edge = Edge(source, "uses", target, chunk_ids=tuple(sorted(stating)))
        edges.setdefault(source, []).append(edge)
        edges.setdefault(target, []).append(edge)
    entity_chunks: dict[str, list[str]] = {}
    for cid, named in chunk_entities.items():
        for key in named:
            entity_chunks.setdefault(key, []).append(cid)
    expected = _provenance_by_full_sort(chunk_entities, mass, edges)
    limit = data.draw(st.integers(0, 40))
    assert rank_provenance(chunk_entities, mass, entity_chunks, edges, limit=limit) == expected[:limit]
    assert rank_provenance(chunk_entities, mass, relation_edges=edges) == expected
    # A loaded snapshot's maps: the masses summed over chunk positions.
    rows = [sorted(keys.index(key) for key in chunk_entities[cid]) for cid in chunks]
    links = PassageLinks(chunks, keys, np.array([k for row in rows for k in row], dtype=np.int32),
                         np.cumsum([0] + [len(row) for row in rows]))
    assert rank_provenance(links.entities_of, mass, links.chunks_of, edges, limit=limit) == expected[:limit]
    assert rank_provenance(links.entities_of, mass, links.chunks_of, edges) == expected


def test_top_positions_are_the_head_of_a_stable_descending_argsort():
    from workbench.retrieve.graphrag import top_positions

    rng = np.random.default_rng(3)
    for _ in range(200):
        values = rng.integers(0, 6, size=int(rng.integers(1, 40))).astype(float)  # many ties
        n = int(rng.integers(0, 45))
        assert top_positions(values, n).tolist() == np.argsort(-values, kind="stable")[:n].tolist()
