"""Known answers of the strategies on the sample corpus, and their explanations."""

from __future__ import annotations

import pytest

from workbench.model import Why
from workbench.retrieve import retrieve
from workbench.retrieve.expand import expansion_score
from workbench.retrieve.hybrid import fuse_rankings

from tests.conftest import REDIS_QUESTION, chunk_id, reopened


@pytest.fixture(scope="module")
def chain(sample_workspace):
    ws = sample_workspace
    return {
        "login": chunk_id(ws, "architecture/login-flow.md", "The login flow depends on the auth service."),
        "auth": chunk_id(ws, "architecture/auth-service.md", "The Auth Service relies on the token cache."),
        "cache": chunk_id(ws, "infrastructure/redis.md", "The token cache is backed by Redis."),
    }


@pytest.mark.parametrize("mode", ["keyword", "vector"])
def test_chunk_retrieval_finds_the_sentences_that_mention_redis_not_the_chain(sample_workspace, chain, mode):
    result = retrieve(sample_workspace, REDIS_QUESTION, mode=mode, k=10)
    texts = [h.text for h in result.hits]
    assert len(texts) >= 2
    assert sum("Redis" in t for t in texts) >= len(texts) - 1
    assert "Redis" in texts[0] or "Redis" in texts[1]
    assert chain["login"] not in {h.chunk_id for h in result.hits}
    assert chain["auth"] not in {h.chunk_id for h in result.hits}


def test_keyword_hits_name_the_matched_terms(sample_workspace):
    result = retrieve(sample_workspace, REDIS_QUESTION, mode="keyword", k=5)
    assert result.hits
    for hit in result.hits:
        assert hit.why.bm25 > 0
        assert hit.why.matched_terms and set(hit.why.matched_terms) <= {"redis", "goes", "breaks"}
        assert any(term in hit.text.lower() for term in hit.why.matched_terms)


def test_paths_returns_the_chain_with_citations(sample_workspace, chain):
    result = retrieve(sample_workspace, REDIS_QUESTION, mode="paths", k=10)
    ids = [h.chunk_id for h in result.hits]
    assert {chain["login"], chain["auth"], chain["cache"]} <= set(ids)
    # Path order: the token cache hop comes before the auth service hop, then the login flow.
    assert ids.index(chain["cache"]) < ids.index(chain["auth"]) < ids.index(chain["login"])
    step = result.hits[ids.index(chain["login"])].why.cited_path
    assert step.path == ("Redis", "token cache", "Auth Service", "login flow") and step.reading == "impact"
    assert chain["login"] in step.hop.chunks and step.hop.states == "login flow -depends_on-> Auth Service"
    assert all(h.why.cited_path for h in result.hits)  # every hit states a hop of a cited path
    impact = result.graph_context.impact
    assert {"token cache", "Auth Service", "login flow"} <= {entity for entity, _ in impact.impacted}
    assert "search service" in impact.survivors and result.graph_context.failed == "Redis"


def _keys(data, name):
    """How many times ``name`` is a key anywhere in the JSON document ``data``."""
    if isinstance(data, dict):
        return (name in data) + sum(_keys(value, name) for value in data.values())
    if isinstance(data, list):
        return sum(_keys(value, name) for value in data)
    return 0


@pytest.mark.parametrize("mode", ["paths", "graphrag"])
def test_an_impact_answer_states_the_failed_entity_and_the_survivors_once(sample_workspace, mode):
    context = retrieve(sample_workspace, REDIS_QUESTION, mode=mode, k=5).to_json()["graph_context"]
    assert context["reading"] == "impact" and context["impact"]["failed"] == "Redis"
    assert "search service" in context["impact"]["survivors"]
    assert _keys(context, "failed") == 1 and _keys(context, "survivors") == 1


def test_paths_answers_a_relation_question_with_cited_paths(sample_workspace, chain):
    result = retrieve(sample_workspace, "How is the login flow related to Redis?", mode="paths", k=10)
    assert result.graph_context.reading == "relate"
    assert result.graph_context.paths[0].nodes == ["login flow", "Auth Service", "token cache", "Redis"]
    assert [h.chunk_id for h in result.hits][:2] == [chain["login"], chain["auth"]]


def test_paths_without_an_entity_says_so_and_gives_hybrid_hits(sample_workspace):
    query = "what breaks if the xylophone fails?"
    result = retrieve(sample_workspace, query, mode="paths", k=5)
    hybrid = retrieve(sample_workspace, query, mode="hybrid", k=5)
    assert result.mode_used == "hybrid" and result.graph_context.empty
    assert "no structural reading" in result.reason and "names no entity" in result.reason
    assert result.hits and [h.chunk_id for h in result.hits] == [h.chunk_id for h in hybrid.hits]


def test_chinese_query_finds_the_chinese_document_by_keyword(sample_workspace):
    result = retrieve(sample_workspace, "缓存雪崩", mode="keyword", k=5)
    assert result.hits[0].document.endswith("zh/缓存说明.md")
    assert "缓存雪崩" in result.hits[0].text
    assert result.hits[0].why.matched_terms == ["缓存", "雪崩"]


def test_identifiers_match_literally(sample_workspace):
    result = retrieve(sample_workspace, "volatile-lru", mode="keyword", k=3)
    assert result.hits and "volatile-lru" in result.hits[0].text


def test_vector_min_score_and_dedupe_come_from_settings(sample_workspace):
    ws = reopened(sample_workspace, retrieval__dedupe_by_document=True, retrieval__min_vector_score=0.45)
    try:
        result = retrieve(ws, REDIS_QUESTION, mode="vector", k=10)
    finally:
        ws.close()
    documents = [h.document for h in result.hits]
    assert documents
    assert len(documents) == len(set(documents))
    assert all(h.why.similarity >= 0.45 for h in result.hits)
    plain = retrieve(sample_workspace, REDIS_QUESTION, mode="vector", k=10)
    assert len({h.document for h in plain.hits}) < len(plain.hits)  # the setting made the difference


def test_hybrid_fuses_both_rankings(sample_workspace):
    result = retrieve(sample_workspace, REDIS_QUESTION, mode="hybrid", k=10)
    keyword = [h.chunk_id for h in retrieve(sample_workspace, REDIS_QUESTION, mode="keyword", k=30).hits]
    vector = [h.chunk_id for h in retrieve(sample_workspace, REDIS_QUESTION, mode="vector", k=30).hits]
    assert result.hits and keyword and vector
    ranks = [(h, h.why.ranks["keyword"], h.why.ranks["vector"]) for h in result.hits]
    assert any(by_keyword and by_vector for _, by_keyword, by_vector in ranks)  # some hit is in both rankings
    for hit, by_keyword, by_vector in ranks:
        assert by_keyword or by_vector
        expected = sum(1 / (60 + rank) for rank in (by_keyword, by_vector) if rank)
        assert hit.score == pytest.approx(expected) and hit.why.rrf == pytest.approx(expected, abs=1e-6)
        if by_keyword:
            assert keyword[by_keyword - 1] == hit.chunk_id
        if by_vector:
            assert vector[by_vector - 1] == hit.chunk_id


def test_fusion_never_drops_a_candidate():
    fused = fuse_rankings([("a", 2.0, Why()), ("b", 1.0, Why())], [("c", 0.9, Why()), ("a", 0.5, Why())])
    assert {c for c, _, _ in fused} == {"a", "b", "c"} and fused[0][0] == "a"


def test_expand_adds_what_the_direct_hits_edges_lead_to(sample_workspace, chain):
    result = retrieve(sample_workspace, "How does the login flow work?", mode="expand", k=5)
    by_id = {h.chunk_id: h for h in result.hits}
    direct = [h for h in result.hits if h.why.via == "direct"]
    expanded = [h for h in result.hits if h.why.via == "expansion"]
    assert len(direct) == 5 and len({h.document for h in direct}) == 5
    assert expanded and len(expanded) <= 5, "no one-hop expansion"
    assert result.stats.direct_hits == 5 and result.stats.expanded_hits == len(expanded)
    direct_documents = {h.document for h in direct}
    graph = sample_workspace.graph
    for hit in expanded:
        # Every parent is a direct hit of this result: no score check is skipped.
        assert hit.why.parent in by_id and by_id[hit.why.parent].why.via == "direct"
        parent, edge = by_id[hit.why.parent], hit.why.edge
        # The edge touches the parent's note (a chunk of it states the edge, or the note's title is
        # an end), and it leads out of the parent's document.
        titles = {graph.name(graph.passages.title_of[c.id]) for c in sample_workspace.chunks()
                  if c.document_id == parent.document and c.id in graph.passages.title_of}
        assert parent.document in edge.documents or titles & {edge.source, edge.target}
        assert edge.confidence >= 0.5
        assert hit.why.reached in (edge.source, edge.target)
        assert hit.document not in direct_documents
        assert hit.score == pytest.approx(expansion_score(parent.score, 0.7, edge.confidence))
    # The login flow's edge to the Auth Service leads to the Auth Service's note.
    assert any(h.document.endswith("architecture/auth-service.md") and h.why.reached == "Auth Service"
               for h in expanded)


def test_expand_follows_a_declared_relation_to_the_linked_note(sample_workspace):
    result = retrieve(sample_workspace, "Why were the finance reports delayed?", mode="expand", k=5)
    assert result.hits[0].document.endswith("incidents/2024-07-18-report-delay.md")
    runbook = [h for h in result.hits if h.document.endswith("runbooks/kafka-consumer-lag.md")]
    assert runbook and runbook[0].why.via == "expansion"
    assert runbook[0].why.edge.relation == "RESOLVED_BY" and runbook[0].why.edge.origin == "declared"


def test_expand_gives_more_to_read_than_vector_on_the_same_query(sample_workspace):
    query = "Why were the finance reports delayed?"
    vector = retrieve(sample_workspace, query, mode="vector", k=5)
    expand = retrieve(sample_workspace, query, mode="expand", k=5)
    assert len(expand.hits) > len(vector.hits)
    assert sum(len(h.text) for h in expand.hits) > sum(len(h.text) for h in vector.hits)


def test_comention_adds_the_documents_of_entities_named_beside_the_hits(sample_workspace):
    result = retrieve(sample_workspace, "How does the login flow work?", mode="comention", k=5)
    direct = [h for h in result.hits if h.why.via == "direct"]
    added = [h for h in result.hits if h.why.via == "comention"]
    assert len(direct) == 5 and added and result.hits[:5] == direct
    direct_documents = {h.document for h in direct}
    graph = sample_workspace.graph
    for hit in added:
        assert hit.document not in direct_documents
        assert hit.why.parent in {h.chunk_id for h in direct} and hit.why.hops == 1
        assert hit.why.reached in (hit.why.edge.source, hit.why.edge.target)
        # The added chunk is one the passage layer links to the entity it was fetched for.
        assert hit.why.reached in {graph.name(key) for key in graph.passages.entities_of[hit.chunk_id]}
    two_hops = reopened(sample_workspace, retrieval__comention_hops=2)
    try:
        two = retrieve(two_hops, "How does the login flow work?", mode="comention", k=5)
    finally:
        two_hops.close()
    assert two.stats.entities_reached > result.stats.entities_reached


def test_vector_and_hybrid_boost_a_literal_identifier(sample_workspace):
    query = "why did evicted_keys climb on the Redis dashboards?"
    for mode in ("vector", "hybrid"):
        result = retrieve(sample_workspace, query, mode=mode, k=5)
        assert result.stats.literal_terms == ["evicted_keys"]
        boosted = [h for h in result.hits if h.why.literal_match]
        assert boosted and all("evicted_keys" in h.text for h in boosted)
        assert boosted[0].why.literal_match == ["evicted_keys"] and boosted[0].why.literal_boost == pytest.approx(0.05)


def test_warm_builds_the_indexes_a_first_query_needs(make_workspace, tmp_path):
    from workbench.retrieve.cache import indexes_for, warm

    corpus = tmp_path / "c"
    corpus.mkdir()
    (corpus / "a.md").write_text("The search service depends on Elasticsearch.\n")
    empty = make_workspace("empty")
    assert warm(empty).keyword.search("search", 5) == []  # an empty workspace warms without error
    ws = make_workspace("full")
    ws.ingest([corpus])
    indexes = warm(ws)
    assert indexes is indexes_for(ws) and "keyword" in vars(indexes) and "entity_chunks" in vars(indexes)
    assert indexes.keyword.search("elasticsearch", 5)
    assert "entity_names" not in vars(indexes)  # left to the first question written without spaces


def test_entity_chunks_is_the_mention_map_of_the_passage_layer(sample_workspace):
    from collections import defaultdict

    from workbench.retrieve.cache import indexes_for

    expected = defaultdict(list)
    for cid, keys in sample_workspace.graph.passages.entities_of.items():
        for key in keys:
            expected[key].append(cid)
    found = indexes_for(sample_workspace).entity_chunks
    assert found and dict(found) == {key: tuple(sorted(ids)) for key, ids in expected.items()}
