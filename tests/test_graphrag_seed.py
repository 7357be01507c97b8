"""graphrag-seed: seed 003 to the letter (name-embedding seeds by similarity, PageRank over
entities, provenance and vector chunks fused by RRF k=60, the three degradation modes), registered
beside graphrag; and graphrag's walk-size guard counting the nodes it walks."""

from __future__ import annotations

import networkx as nx
import numpy as np
import pytest

from tests.conftest import REDIS_QUESTION, BrokenEmbedder, reopened
from workbench.bench.ablation import MODE_VARIANTS
from workbench.bench.multihop import available_modes
from workbench.retrieve import MODES, retrieve
from workbench.retrieve.graphrag import PPR_TOLERANCE, find_seeds
from workbench.retrieve.vector import embed_query


def test_seeds_are_entity_names_at_the_threshold_weighted_by_similarity(sample_workspace):
    ws = sample_workspace
    result = retrieve(ws, REDIS_QUESTION, mode="graphrag-seed", k=5)
    assert result.mode_used == "full_graphrag"
    seeds = result.graph_context.seeds
    expected, _, _ = find_seeds(ws, embed_query(ws, REDIS_QUESTION))
    assert seeds and [(s.key, s.similarity) for s in seeds] == [(key, round(sim, 6)) for key, sim in expected]
    assert all(s.source == "similar" and s.similarity >= ws.settings.graphrag.seed_similarity_threshold
               for s in seeds)
    assert len(seeds) <= ws.settings.graphrag.max_seeds
    assert result.stats.seeds == seeds


def test_the_walk_is_pagerank_over_the_entities_alone(sample_workspace):
    ws = sample_workspace
    graph = ws.graph
    result = retrieve(ws, REDIS_QUESTION, mode="graphrag-seed", k=5)
    assert result.stats.walk_nodes == len(graph) and str(len(graph)) in result.reason
    # networkx's pagerank on the entity graph, restarting on the seeds by similarity.
    expected_graph = nx.Graph()
    expected_graph.add_nodes_from(graph.nx)
    for source, target, _, edge in graph.nx.edges(keys=True, data="edge"):
        previous = expected_graph.get_edge_data(source, target, {"weight": 0.0})["weight"]
        expected_graph.add_edge(source, target, weight=previous + edge.weight)
    for a, b, _ in graph.passages.synonyms:
        previous = expected_graph.get_edge_data(a, b, {"weight": 0.0})["weight"]
        expected_graph.add_edge(a, b, weight=previous + 1.0)
    restart = {s.key: s.similarity for s in result.graph_context.seeds}
    expected = nx.pagerank(expected_graph, alpha=ws.settings.graphrag.ppr_damping,
                           personalization={n: restart.get(n, 0.0) for n in expected_graph}, tol=1e-12,
                           max_iter=1000, dangling={n: restart.get(n, 0.0) for n in expected_graph})
    nodes = result.graph_context.nodes
    assert len(nodes) == ws.settings.graphrag.ppr_top_k == result.stats.top_entities
    # The walk stops once no score moves by PPR_TOLERANCE: a score is then within about
    # tolerance x d / (1 - d) of the fixed point (d the damping).
    damping = ws.settings.graphrag.ppr_damping
    for node in nodes:
        assert node.key in graph and node.ppr == pytest.approx(expected[node.key],
                                                              abs=PPR_TOLERANCE * damping / (1 - damping))
    best = sorted(expected.items(), key=lambda item: (-item[1], item[0]))[:3]
    assert [n.key for n in nodes[:3]] == [key for key, _ in best]


def test_provenance_and_vector_chunks_are_fused_by_rrf_k_60(sample_workspace):
    ws = sample_workspace
    result = retrieve(ws, REDIS_QUESTION, mode="graphrag-seed", k=8)
    vector = [h.chunk_id for h in retrieve(ws, REDIS_QUESTION, mode="vector", k=8 * 4).hits]
    assert len(result.hits) == 8 and ws.settings.retrieval.rrf_k == 60
    for hit in result.hits:
        assert set(hit.why.ranks) == {"provenance", "vector"}
        ranks = [r for r in hit.why.ranks.values() if r is not None]
        assert ranks and hit.score == pytest.approx(sum(1 / (60 + r) for r in ranks))
        if hit.why.ranks["vector"] is not None:
            assert vector[hit.why.ranks["vector"] - 1] == hit.chunk_id
        if hit.why.ranks["provenance"] is not None:
            assert hit.why.entities and hit.why.ppr_mass is not None
    assert [h.score for h in result.hits] == sorted((h.score for h in result.hits), reverse=True)
    stats = result.stats
    assert stats.provenance_hits == sum(h.why.ranks["provenance"] is not None for h in result.hits) > 0
    assert stats.vector_hits == sum(h.why.ranks["vector"] is not None for h in result.hits) > 0
    assert not any(h.why.cited_path for h in result.hits)  # nothing pinned above the fusion


def test_no_seed_at_the_threshold_is_vector_only_and_says_why(sample_workspace):
    ws = reopened(sample_workspace, graphrag__seed_similarity_threshold=1.0)
    try:
        result = retrieve(ws, REDIS_QUESTION, mode="graphrag-seed", k=5)
        hybrid = retrieve(ws, REDIS_QUESTION, mode="hybrid", k=5)
    finally:
        ws.close()
    assert result.mode_used == "vector_only" and "seed_similarity_threshold=1.0" in result.reason
    assert "best: " in result.reason
    assert [h.chunk_id for h in result.hits] == [h.chunk_id for h in hybrid.hits]
    assert result.graph_context.empty


def test_an_entity_graph_over_max_graph_nodes_is_vector_only(sample_workspace):
    nodes = len(sample_workspace.graph)
    ws = reopened(sample_workspace, graphrag__max_graph_nodes=nodes - 1)
    try:
        result = retrieve(ws, REDIS_QUESTION, mode="graphrag-seed", k=5)
    finally:
        ws.close()
    assert result.mode_used == "vector_only"
    assert f"over {nodes} nodes (entities), more than max_graph_nodes={nodes - 1}" in result.reason


def test_unavailable_embeddings_are_keyword_only(sample_workspace):
    ws = reopened(sample_workspace, embedder=BrokenEmbedder())
    try:
        result = retrieve(ws, REDIS_QUESTION, mode="graphrag-seed", k=5)
        keyword = retrieve(ws, REDIS_QUESTION, mode="keyword", k=5)
    finally:
        ws.close()
    assert result.mode_used == "keyword_only" and "embeddings unavailable" in result.reason
    assert [h.chunk_id for h in result.hits] == [h.chunk_id for h in keyword.hits]


def test_graphrag_guards_the_walk_by_its_entities_and_passages(sample_workspace):
    graph = sample_workspace.graph
    walk = len(graph.pagerank_index())
    assert walk == len(graph) + len(graph.passages.entities_of) > len(graph)
    ws = reopened(sample_workspace, graphrag__max_graph_nodes=walk - 1)  # every entity fits, not the walk
    try:
        result = retrieve(ws, REDIS_QUESTION, mode="graphrag", k=5)
    finally:
        ws.close()
    assert result.mode_used == "vector_only"
    assert f"over {walk} nodes (entities and passages)" in result.reason
    full = retrieve(sample_workspace, REDIS_QUESTION, mode="graphrag", k=5)
    assert full.mode_used == "full_graphrag" and full.stats.walk_nodes == walk


def test_graphrag_seed_is_registered_for_compare_the_benchmark_and_the_ablation():
    assert "graphrag-seed" in MODES and "direct" in MODES  # the Compare page and the CLI list MODES
    assert "graphrag-seed" in available_modes()
    assert list(MODE_VARIANTS.values()) == ["graphrag-seed"]


def test_the_entity_index_is_the_entity_block_of_the_whole_walk(sample_workspace):
    graph = sample_workspace.graph
    entity = graph.entity_pagerank_index()
    assert entity.nodelist == list(graph.pagerank_index().nodelist[:len(graph)])
    assert entity is graph.entity_pagerank_index()  # built once
    scores, _, converged = entity.walk(np.eye(len(entity))[0])
    assert converged and scores.sum() == pytest.approx(1.0)


def test_the_query_table_shows_the_provenance_vector_split(sample_workspace, capsys):
    from workbench.cli import main

    result = retrieve(sample_workspace, REDIS_QUESTION, mode="graphrag-seed", k=6)
    code = main(["--workspace", str(sample_workspace.path), "query", REDIS_QUESTION, "--mode", "graphrag-seed",
                 "--k", "6"])
    out = capsys.readouterr().out
    assert code == 0
    stats = result.stats
    assert (f"hits from: provenance {stats.provenance_hits}, vector {stats.vector_hits}; top entities "
            f"{stats.top_entities}, walk nodes {stats.walk_nodes}") in out


def test_min_vector_score_keeps_every_gold_hit_and_drops_off_topic_ones(sample_workspace):
    """The measurement behind retrieval.min_vector_score, on the sample tasks."""
    from tests.conftest import SAMPLE
    from workbench.evaluate.tasks import load_resolved_tasks
    from workbench.retrieve.vector import vector_ranking

    ws = sample_workspace
    floor = ws.settings.retrieval.min_vector_score
    assert floor == 0.2
    documents = {c.id: c.document_id for c in ws.chunks()}
    gold = []
    for task in load_resolved_tasks(ws, SAMPLE / "tasks.yaml"):
        ranked = vector_ranking(ws, embed_query(ws, task.question), 10, min_score=-1.0, dedupe=False)
        gold += [sim for cid, sim, _ in ranked if documents[cid] in task.gold_documents]
    assert len(gold) > 30 and min(gold) >= floor
    off_topic = ["What is the recipe for banana bread?", "How do I repot an orchid?", "How many moons does Jupiter have?"]
    dropped = kept = 0
    for question in off_topic:
        ranked = vector_ranking(ws, embed_query(ws, question), 10, min_score=-1.0, dedupe=False)
        dropped += sum(sim < floor for _, sim, _ in ranked)
        kept += len(retrieve(ws, question, mode="vector", k=10).hits)
    assert dropped > 0.5 * 3 * 10 and kept == 3 * 10 - dropped
