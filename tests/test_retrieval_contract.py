"""The contract every registered retrieval mode keeps, on both vector-store backends."""

from __future__ import annotations

import json

import pytest

from workbench.retrieve import KEYWORD_ONLY, MODES, RETRIEVERS, Capabilities, get_retriever, register, retrieve

QUERIES = ["If Redis goes down, what breaks?", "How does the login flow relate to Redis?", "缓存雪崩"]


def test_modes_are_registered_in_a_stable_order():
    assert MODES[:6] == ("keyword", "vector", "hybrid", "expand", "graphrag", "paths")
    assert tuple(RETRIEVERS) == MODES
    assert all(RETRIEVERS[m].name == m and RETRIEVERS[m].description for m in MODES)


def test_every_mode_declares_what_it_reads_and_falls_back_to():
    declared = {m: RETRIEVERS[m].capabilities for m in MODES}
    assert all(isinstance(c, Capabilities) and c.reads() for c in declared.values())
    assert [m for m, c in declared.items() if not c.needs_vector_store_or_model] == ["keyword"]
    assert [m for m, c in declared.items() if c.fallback == KEYWORD_ONLY] == ["hybrid", "graphrag", "graphrag-seed"]
    assert {m for m, c in declared.items() if c.max_hits_per_k == 2} == {"expand", "comention", "expand-comention"}


def test_a_retriever_without_capabilities_is_refused():
    class Bare:
        name, description = "bare", "no declaration"

        def retrieve(self, ws, query, k):
            raise AssertionError("never asked")

    with pytest.raises(TypeError, match="capabilities"):
        register(Bare())
    assert "bare" not in MODES


def test_unknown_mode_names_the_modes():
    with pytest.raises(ValueError, match="keyword, vector, hybrid"):
        get_retriever("bm42")


@pytest.mark.parametrize("mode", MODES)
def test_every_mode_keeps_the_retrieval_contract(backend_workspace, mode):
    ws = backend_workspace
    for query in QUERIES:
        for k in (3, 8):
            result = retrieve(ws, query, mode=mode, k=k)
            assert result.mode_requested == mode
            assert result.mode_used
            # Expansion modes add up to k hits after their k direct ones.
            assert len(result.hits) <= k * get_retriever(mode).capabilities.max_hits_per_k
            assert [h.rank for h in result.hits] == list(range(1, len(result.hits) + 1))
            # Best first; comention ranks its added hits after the direct ones, each part by score.
            parts: dict[str, list[float]] = {}
            for h in result.hits:
                parts.setdefault(h.why.via or "", []).append(h.score)
            vias = [h.why.via or "" for h in result.hits]
            if mode in ("expand", "expand-comention"):  # merged by score (retrieval.expand_order: score)
                assert [h.score for h in result.hits] == sorted((h.score for h in result.hits), reverse=True)
            else:
                assert vias == sorted(vias, key=lambda v: v != "direct"), (mode, query, vias)
            for scores in parts.values():
                assert scores == sorted(scores, reverse=True), (mode, query, scores)
            assert all(h.why.to_json() and h.text and h.document and h.chunk_id for h in result.hits)
            assert "total" in result.stats.seconds
            assert json.loads(json.dumps(result.to_json())) == result.to_json()  # the one serialization is JSON
            again = retrieve(ws, query, mode=mode, k=k)
            assert [(h.chunk_id, h.score, h.why) for h in again.hits] == [(h.chunk_id, h.score, h.why) for h in result.hits]
            assert again.mode_used == result.mode_used
    assert any(retrieve(ws, q, mode=mode, k=8).hits for q in QUERIES), f"{mode} found nothing for any query"

    for empty in ("", "   \n\t"):
        result = retrieve(ws, empty, mode=mode)
        assert result.hits == [] and result.reason == "empty query"

    no_hit = retrieve(ws, "zzzxqv qqqwv", mode=mode, k=5)
    assert len(no_hit.hits) <= 5 * get_retriever(mode).capabilities.max_hits_per_k
    if mode == "keyword":
        assert no_hit.hits == [] and no_hit.reason


def test_k_defaults_to_the_settings(backend_workspace):
    result = retrieve(backend_workspace, "Redis", mode="keyword")
    assert len(result.hits) == backend_workspace.settings.retrieval.k  # Redis is named in many more chunks
    assert len(retrieve(backend_workspace, "Redis", mode="keyword", k=2).hits) == 2
