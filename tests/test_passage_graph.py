"""The passage graph and the passage_graph retrieval mode: bridges, determinism, degradation."""

from __future__ import annotations

import json
import random

import pytest

from workbench.passage_graph_index import build_passage_graph, entity_key, extract_names
from workbench.retrieve import MODES, retrieve
from workbench.retrieve.passage_graph import PassageGraphOptions, PassageGraphRetriever, fuse_scores

from tests.conftest import BrokenEmbedder

# A two-hop question: passage 1 names the bridge (Vellmar), which titles passage 2. Passage 2
# never mentions the painter, and the distractors talk about populations and birthplaces,
# so similarity alone prefers them to the second hop.
TOY = [
    {"id": "p1", "title": "Ingrid Halvorsen", "text": "Ingrid Halvorsen was a Norwegian painter of seascapes. "
     "She was born in Vellmar and trained in Bergen."},
    {"id": "p2", "title": "Vellmar", "text": "Vellmar is a fishing village on the western coast. "
     "About 3,400 people live there, most of them working in the harbour."},
    {"id": "d1", "title": "Population of Norwegian towns", "text": "The population of a Norwegian town where "
     "painters were born is counted by the census every ten years."},
    {"id": "d2", "title": "Painters and their birthplaces", "text": "Many painters were born in towns whose "
     "population was small; the town where a painter was born often keeps a museum."},
    {"id": "d3", "title": "Town population statistics", "text": "Statistics on the population of the town "
     "where each painter was born are kept by the national bureau."},
]
QUESTION = "What is the population of the town where Ingrid Halvorsen was born?"


def _ingest(make_workspace, tmp_path, records):
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    lines = [json.dumps({"id": r["id"], "title": r["title"], "text": f"{r['title']}\n{r['text']}"}) for r in records]
    (corpus / "passages.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    ws = make_workspace()
    ws.ingest([corpus / "passages.jsonl"])
    return ws


def _passages(result):
    return [h.document.split("#", 1)[1] for h in result.hits]


@pytest.fixture
def toy_workspace(make_workspace, tmp_path):
    return _ingest(make_workspace, tmp_path, TOY)


def test_mode_is_registered():
    assert "passage_graph" in MODES


def test_dense_misses_the_second_hop_that_the_passage_graph_finds(toy_workspace):
    dense = _passages(retrieve(toy_workspace, QUESTION, mode="vector", k=2))
    graph = retrieve(toy_workspace, QUESTION, mode="passage_graph", k=2)
    assert "p2" not in dense
    assert set(_passages(graph)) == {"p1", "p2"}
    assert "ingrid halvorsen" in graph.stats["query_entities"]
    bridge_hit = graph.hits[_passages(graph).index("p2")]
    assert bridge_hit.why["pagerank"] > 0


def test_without_graph_seeds_the_mode_ranks_like_dense(toy_workspace):
    dense_only = PassageGraphRetriever(PassageGraphOptions(use_entities=False, use_dense_seeds=False), name="x")
    assert _passages(dense_only.retrieve(toy_workspace, QUESTION, 3)) == \
        _passages(retrieve(toy_workspace, QUESTION, mode="vector", k=3))


def test_results_are_deterministic(toy_workspace):
    first = retrieve(toy_workspace, QUESTION, mode="passage_graph", k=5)
    second = retrieve(toy_workspace, QUESTION, mode="passage_graph", k=5)
    assert [(h.chunk_id, h.score) for h in first.hits] == [(h.chunk_id, h.score) for h in second.hits]


def test_without_embeddings_bm25_and_names_seed_the_walk(toy_workspace):
    toy_workspace.embedder = BrokenEmbedder()
    result = retrieve(toy_workspace, QUESTION, mode="passage_graph", k=3)
    assert result.mode_used == "passage_graph"
    assert "embeddings unavailable" in result.reason
    assert "p2" not in _passages(retrieve(toy_workspace, QUESTION, mode="keyword", k=3))
    assert "p2" in _passages(result)


def test_a_passage_is_linked_to_every_title_it_mentions():
    chunks = [("c1", "d1", "Ann Lee\nAnn Lee moved from Oslo to the Bergen Museum."),
              ("c2", "d2", "Oslo\nOslo is a city."), ("c3", "d3", "Bergen Museum\nA museum.")]
    index = build_passage_graph(chunks, {"d1": "Ann Lee", "d2": "Oslo", "d3": "Bergen Museum"})
    assert {"oslo", "bergen museum", "ann lee"} <= index.passage_entities["c1"]
    assert index.graph.has_edge(("p", "c1"), ("e", "oslo"))
    assert index.graph.edges[("p", "c2"), ("e", "oslo")]["kind"] == "title"


def test_lowercase_use_of_a_common_word_title_is_not_a_mention():
    chunks = [("c1", "d1", "Music\nMusic is an art."), ("c2", "d2", "Ann\nAnn likes music and art.")]
    index = build_passage_graph(chunks, {"d1": "Music", "d2": "Ann"})
    assert "music" not in index.passage_entities["c2"]


def test_near_identical_names_get_a_synonym_edge():
    chunks = [("c1", "d1", "Wiley-Blackwell published it."), ("c2", "d2", "Wiley Blackwel printed it.")]
    index = build_passage_graph(chunks, {}, synonym_threshold=0.7)
    assert index.graph.has_edge(("e", "wiley blackwell"), ("e", "wiley blackwel"))
    assert build_passage_graph(chunks, {}, synonym_threshold=1.0).synonym_edges == 0


def test_names_in_too_many_passages_stay_out_of_the_graph():
    chunks = [(f"c{i}", f"d{i}", f"Report {i} was filed in 1999.") for i in range(5)]
    index = build_passage_graph(chunks, {}, max_entity_passages=3)
    assert not index.graph.has_node(("e", "1999"))


def test_graph_does_not_depend_on_chunk_order():
    chunks = [(f"c{i}", f"d{i}", f"Town {i}\nTown {i} lies near Town {(i + 1) % 6} and the River Ode.")
              for i in range(6)]
    titles = {f"d{i}": f"Town {i}" for i in range(6)}
    shuffled = chunks[:]
    random.Random(7).shuffle(shuffled)
    a, b = build_passage_graph(chunks, titles), build_passage_graph(shuffled, titles)
    assert sorted(a.graph.edges(data="kind")) == sorted(b.graph.edges(data="kind"))


def test_names_are_found_and_keyed():
    assert extract_names("She met John Smith in 1984 at the Bank of England.") == \
        ["John Smith", "1984", "Bank of England"]
    assert entity_key("The Beatles") == entity_key("beatles")


def test_fusion_adds_scaled_pagerank_to_similarity():
    assert fuse_scores({"a": 2.0, "b": 1.0}, {"a": 0.1, "b": 0.4}, graph_weight=1.0) == [("a", 1.1), ("b", 0.9)]
