"""GraphRAG: seeds, Personalized PageRank, cited graph context, and each degradation mode."""

from __future__ import annotations

import networkx as nx
import numpy as np
import pytest

from workbench.retrieve import retrieve
from workbench.retrieve.graphrag import find_seeds, rank_provenance, seed_pagerank, top_entities
from workbench.retrieve.vector import embed_query

from tests.conftest import REDIS_QUESTION, BrokenEmbedder, chunk_id, reopened


def test_full_graphrag_gives_the_cited_chain_as_graph_context(sample_workspace):
    ws = sample_workspace
    result = retrieve(ws, REDIS_QUESTION, mode="graphrag", k=10)
    assert result.mode_used == "full_graphrag"
    assert result.stats["seeds"][0]["entity"] == "Redis"
    assert all(s["similarity"] >= ws.settings.graphrag.seed_similarity_threshold for s in result.stats["seeds"])
    assert len(result.stats["seeds"]) <= ws.settings.graphrag.max_seeds
    assert result.stats["entities_explored"] == ws.settings.graphrag.ppr_top_k
    assert set(result.stats["seconds"]) >= {"embed", "seeds", "ppr", "provenance", "hybrid", "fuse", "total"}
    triples = {(t["source"], t["relation"], t["target"]): t["chunks"] for t in result.graph_context["triples"]}
    assert chunk_id(ws, "infrastructure/redis.md", "The token cache is backed by Redis.") in \
        triples[("token cache", "backed_by", "Redis")]
    assert chunk_id(ws, "architecture/auth-service.md", "relies on the token cache") in \
        triples[("Auth Service", "depends_on", "token cache")]
    assert len(triples) <= ws.settings.graphrag.max_triples
    hit_ids = {h.chunk_id for h in result.hits}
    assert chunk_id(ws, "infrastructure/redis.md", "The token cache is backed by Redis.") in hit_ids
    assert result.stats["provenance_hits"] + result.stats["vector_hits"] >= len(result.hits)
    for hit in result.hits:
        assert hit.why["provenance_rank"] is not None or hit.why["hybrid_rank"] is not None
        if hit.why["provenance_rank"] is not None:
            assert hit.why["entities"] and hit.why["ppr_mass"] > 0


def test_graphrag_brings_the_login_flow_chunk_for_the_login_question(sample_workspace):
    ws = sample_workspace
    result = retrieve(ws, "If Redis goes down, does the login flow break?", mode="graphrag", k=10)
    login = chunk_id(ws, "architecture/login-flow.md", "The login flow depends on the auth service.")
    hit = next(h for h in result.hits if h.chunk_id == login)
    assert hit.why["provenance_rank"] is not None and "login flow" in hit.why["entities"]
    triples = {(t["source"], t["relation"], t["target"]): t["chunks"] for t in result.graph_context["triples"]}
    assert triples[("login flow", "depends_on", "Auth Service")] == [login]


def test_no_seed_above_the_threshold_falls_back_to_vector_only(sample_workspace):
    ws = reopened(sample_workspace, graphrag__seed_similarity_threshold=0.99)
    try:
        result = retrieve(ws, REDIS_QUESTION, mode="graphrag", k=5)
        vector = retrieve(ws, REDIS_QUESTION, mode="vector", k=5)
    finally:
        ws.close()
    assert result.mode_used == "vector_only"
    assert "seed_similarity_threshold" in result.reason and "Redis" in result.reason
    assert [h.chunk_id for h in result.hits] == [h.chunk_id for h in vector.hits]
    assert result.stats["seeds"] == []


def test_a_graph_larger_than_max_graph_nodes_falls_back_to_vector_only(sample_workspace):
    ws = reopened(sample_workspace, graphrag__max_graph_nodes=1)
    try:
        result = retrieve(ws, REDIS_QUESTION, mode="graphrag", k=5)
    finally:
        ws.close()
    assert result.mode_used == "vector_only"
    assert "max_graph_nodes=1" in result.reason
    assert result.hits and all("similarity" in h.why for h in result.hits)


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


def test_seeding_then_ppr_equals_networkx_on_the_sample_graph(sample_workspace):
    ws = sample_workspace
    seeds, _, _ = find_seeds(ws, embed_query(ws, REDIS_QUESTION))
    assert seeds
    scores = seed_pagerank(ws, dict(seeds))
    nodelist = ws.graph.pagerank_index().nodelist
    # Every stored edge, co-mention included, as an undirected edge weighted by its corroboration.
    undirected = nx.MultiGraph()
    undirected.add_nodes_from(ws.graph.nx)
    for source, target, weight in ws.graph.nx.edges(data="weight"):
        undirected.add_edge(source, target, weight=weight)
    expected = nx.pagerank(undirected, alpha=ws.settings.graphrag.ppr_damping, personalization=dict(seeds),
                           weight="weight", tol=1e-6, max_iter=100)
    assert np.allclose(scores, [expected[key] for key in nodelist], atol=1e-9)


@pytest.mark.parametrize("seed", range(5))
def test_personalized_pagerank_equals_networkx_on_random_graphs(seed):
    from workbench.graph import ContextGraph
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
