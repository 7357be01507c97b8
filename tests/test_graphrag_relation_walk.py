"""graphrag-seed: seed 003 to the letter (name-embedding seeds by similarity, PageRank by power
iteration over the entities' directed relation edges to a largest change of 1e-6, provenance and
hybrid chunks fused by RRF k=60, the three degradation modes with the seed's 50,000), registered
beside graphrag; and graphrag's walk-size guard counting the nodes it walks."""

from __future__ import annotations

import networkx as nx
import numpy as np
import pytest

from tests.conftest import REDIS_QUESTION, BrokenEmbedder, reopened
from workbench.bench.ablation import MODE_VARIANTS
from workbench.bench.multihop import available_modes
from workbench.retrieve import MODES, retrieve
from workbench.model import COMENTION_RELATION
from workbench.retrieve.graphrag import find_seeds
from workbench.retrieve.graphrag_relation_walk import SEED_PPR_MAX_ITERATIONS, SEED_PPR_TOLERANCE
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


def _seed_walk_reference(graph, restart: dict[str, float], damping: float) -> dict[str, float]:
    """networkx's PageRank of the entities' directed relation edges, each counting 1 (no weight),
    restarting on the seeds by similarity, solved far past the seed's tolerance."""
    expected_graph = nx.MultiDiGraph()
    expected_graph.add_nodes_from(graph.nx)
    for source, target, _, edge in graph.nx.edges(keys=True, data="edge"):
        if edge.relation != COMENTION_RELATION:
            expected_graph.add_edge(source, target)
    personalization = {n: restart.get(n, 0.0) for n in expected_graph}
    return nx.pagerank(expected_graph, alpha=damping, personalization=personalization, weight=None, tol=1e-14,
                       max_iter=10_000, dangling=personalization)


def test_the_walk_is_power_iteration_over_the_directed_relation_edges(sample_workspace):
    ws = sample_workspace
    graph = ws.graph
    result = retrieve(ws, REDIS_QUESTION, mode="graphrag-seed", k=5)
    assert result.stats.walk_nodes == len(graph) and str(len(graph)) in result.reason
    damping = ws.settings.graphrag.ppr_damping
    expected = _seed_walk_reference(graph, {s.key: s.similarity for s in result.graph_context.seeds}, damping)
    nodes = result.graph_context.nodes
    # Only what the seeds' outgoing edges reach has mass: fewer than ppr_top_k entities here.
    reached = sum(score > 1e-12 for score in expected.values())
    assert len(nodes) == min(ws.settings.graphrag.ppr_top_k, reached) == result.stats.top_entities > 3
    # The power iteration stops once no score moves by 1e-6: a score is then within about
    # tolerance x d / (1 - d) of the fixed point (d the damping).
    assert SEED_PPR_TOLERANCE == 1e-6 and SEED_PPR_MAX_ITERATIONS == 100
    for node in nodes:
        assert node.key in graph and node.ppr == pytest.approx(expected[node.key],
                                                              abs=SEED_PPR_TOLERANCE * damping / (1 - damping))
    best = sorted(expected.items(), key=lambda item: (-item[1], item[0]))[:3]
    assert [n.key for n in nodes[:3]] == [key for key, _ in best]
    assert result.stats.ppr_converged and result.stats.ppr_iterations > 1


def test_the_walk_follows_edges_forward_and_divides_by_out_degree():
    from workbench.context_graph.graph import ContextGraph
    from workbench.model import Edge, Entity

    # a -> b, a -> c, c -> d by relations; b and e are only co-mentioned.
    graph = ContextGraph([Entity(key, key.upper()) for key in "abcde"],
                         [Edge("a", "uses", "b"), Edge("a", "uses", "c"), Edge("c", "calls", "d"),
                          Edge("b", COMENTION_RELATION, "e")])
    index = graph.entity_pagerank_index()
    assert not index.reversible  # directed: walked by power iteration, not the Chebyshev semi-iteration
    p = np.array([1.0, 0, 0, 0, 0])
    scores, iterations, converged = index.walk(p, 0.85, SEED_PPR_TOLERANCE, SEED_PPR_MAX_ITERATIONS)
    score = dict(zip(index.nodelist, scores))
    assert converged and score["e"] == 0.0  # the co-mention edge is not walked
    assert score["b"] == pytest.approx(score["c"]) == pytest.approx(0.85 * score["a"] / 2, abs=1e-6)
    assert score["d"] == pytest.approx(0.85 * score["c"], abs=1e-6)
    reverse, _, _ = index.walk(np.array([0, 0, 0, 1.0, 0]), 0.85, SEED_PPR_TOLERANCE, SEED_PPR_MAX_ITERATIONS)
    assert reverse.tolist() == [0.0, 0.0, 0.0, 1.0, 0.0]  # nothing flows against an edge


def test_provenance_and_hybrid_chunks_are_fused_by_rrf_k_60(sample_workspace):
    from workbench.retrieve.hybrid import hybrid_ranking

    ws = sample_workspace
    result = retrieve(ws, REDIS_QUESTION, mode="graphrag-seed", k=8)
    hybrid = [cid for cid, _, _ in hybrid_ranking(ws, REDIS_QUESTION, embed_query(ws, REDIS_QUESTION), 8 * 3)]
    assert len(result.hits) == 8 and ws.settings.retrieval.rrf_k == 60
    for hit in result.hits:
        assert set(hit.why.ranks) == {"provenance", "hybrid"}
        ranks = [r for r in hit.why.ranks.values() if r is not None]
        assert ranks and hit.score == pytest.approx(sum(1 / (60 + r) for r in ranks))
        if hit.why.ranks["hybrid"] is not None:
            assert hybrid[hit.why.ranks["hybrid"] - 1] == hit.chunk_id
        if hit.why.ranks["provenance"] is not None:
            assert hit.why.entities and hit.why.ppr_mass is not None
    assert [h.score for h in result.hits] == sorted((h.score for h in result.hits), reverse=True)
    stats = result.stats
    assert stats.provenance_hits == sum(h.why.ranks["provenance"] is not None for h in result.hits) > 0
    assert stats.hybrid_hits == sum(h.why.ranks["hybrid"] is not None for h in result.hits) > 0
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


def test_an_entity_graph_over_seed_max_graph_nodes_is_vector_only(sample_workspace):
    assert sample_workspace.settings.graphrag.seed_max_graph_nodes == 50_000  # the seed's
    nodes = len(sample_workspace.graph)
    ws = reopened(sample_workspace, graphrag__seed_max_graph_nodes=nodes - 1)
    try:
        result = retrieve(ws, REDIS_QUESTION, mode="graphrag-seed", k=5)
        hybrid = retrieve(ws, REDIS_QUESTION, mode="hybrid", k=5)
    finally:
        ws.close()
    assert result.mode_used == "vector_only" and result.graph_context.empty
    assert f"over {nodes} nodes (entities), more than seed_max_graph_nodes={nodes - 1}" in result.reason
    assert [h.chunk_id for h in result.hits] == [h.chunk_id for h in hybrid.hits]


def test_the_seed_guard_leaves_graphrag_walking_a_2wiki_sized_graph(sample_workspace):
    """graphrag's guard stays its own: a walk of 2Wiki's 47,813 entities and 6,918 passages is
    over the seed's 50,000 but under graphrag.max_graph_nodes."""
    settings = sample_workspace.settings.graphrag
    assert settings.seed_max_graph_nodes < 47_813 + 6_918 <= settings.max_graph_nodes
    ws = reopened(sample_workspace, graphrag__seed_max_graph_nodes=len(sample_workspace.graph) - 1)
    try:
        assert retrieve(ws, REDIS_QUESTION, mode="graphrag", k=5).mode_used == "full_graphrag"
    finally:
        ws.close()


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
    assert (f"hits from: provenance {stats.provenance_hits}, hybrid {stats.hybrid_hits}; top entities "
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
