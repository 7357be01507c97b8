"""Graph views, offline pyvis HTML with escaped text, and the tables the pages show."""

from __future__ import annotations

import json
import re

import pytest

from workbench.graph import ContextGraph
from workbench.model import Edge, Entity, GraphPath, Hit, Hop, Merge, RetrievalResult, SurfaceForm
from workbench.visual import (COMENTION, RELATIONS, GraphFilters, edge_chunks_frame, graph_dates, graph_html,
                              hits_frame, impact_frame, merges_frame, path_frame, select_view, shared_hits,
                              strip_cdn_tags)

HOSTILE = "<img src=x onerror=alert(1)>"


@pytest.fixture
def graph():
    entities = [Entity("login", "login flow", "service", 5), Entity("auth", "Auth Service", "service", 9),
                Entity("redis", "Redis", "technology", 7), Entity("evil", HOSTILE, "concept", 1),
                Entity("alice", "Alice", "person", 2)]
    edges = [
        Edge("login", "depends_on", "auth", chunk_ids=("c1", "c2"), documents=("a.md",),
             first_seen="2024-01-10", last_seen="2024-01-10"),
        Edge("auth", "backed_by", "redis", chunk_ids=("c3",), documents=("b.md",),
             first_seen="2024-05-01T09:00:00", last_seen="2024-05-02"),
        Edge("evil", "uses", "redis", chunk_ids=("c4",), documents=("evil.md",)),
        Edge("alice", "co_mentioned", "auth", chunk_ids=("c1",), documents=("a.md",), first_seen="2024-01-10"),
        Edge("auth", "co_mentioned", "redis", chunk_ids=("c3", "c5", "c6"), documents=("b.md",)),
    ]
    return ContextGraph(entities, edges)


def nodes_of(page: str) -> list[dict]:
    return json.loads(re.search(r"nodes = new vis\.DataSet\((\[.*?\])\);", page, re.DOTALL).group(1))


def edges_of(page: str) -> list[dict]:
    return json.loads(re.search(r"edges = new vis\.DataSet\((\[.*?\])\);", page, re.DOTALL).group(1))


def test_relation_view_has_no_comention_edges_and_comention_view_only_those(graph):
    relations = select_view(graph, RELATIONS)
    comention = select_view(graph, COMENTION)
    assert {e.relation for e in relations.edges} == {"depends_on", "backed_by", "uses"}
    assert {e.relation for e in comention.edges} == {"co_mentioned"}
    assert {n.key for n in comention.nodes} == {"alice", "auth", "redis"}
    assert relations.directed and not comention.directed


def test_minimum_weight_drops_weaker_edges_and_their_lonely_nodes(graph):
    view = select_view(graph, RELATIONS, GraphFilters(min_weight=2))
    assert [(e.source, e.target) for e in view.edges] == [("login", "auth")]
    assert {n.key for n in view.nodes} == {"login", "auth"}


def test_type_filter_keeps_edges_between_kept_types_only(graph):
    view = select_view(graph, RELATIONS, GraphFilters(types=("service",)))
    assert {n.key for n in view.nodes} == {"login", "auth"}


def test_relation_filter_keeps_the_chosen_relations(graph):
    view = select_view(graph, RELATIONS, GraphFilters(relations=("backed_by",)))
    assert [e.relation for e in view.edges] == ["backed_by"]


def test_time_range_keeps_overlapping_and_undated_edges(graph):
    view = select_view(graph, RELATIONS, GraphFilters(time_range=("2024-04-01", "2024-05-01")))
    assert {e.relation for e in view.edges} == {"backed_by", "uses"}
    assert graph_dates(graph) == ["2024-01-10", "2024-05-01", "2024-05-02"]


def test_top_n_keeps_the_largest_nodes_and_says_so(graph):
    view = select_view(graph, RELATIONS, GraphFilters(top_n=2, size_by="mentions"))
    assert [n.key for n in view.nodes] == ["auth", "redis"]
    assert view.total_nodes == 4 and "top 2 of 4" in view.note
    assert all(e.source in {"auth", "redis"} and e.target in {"auth", "redis"} for e in view.edges)
    assert select_view(graph, RELATIONS).note == ""


def test_node_size_follows_degree_or_mentions(graph):
    by_degree = select_view(graph, RELATIONS, GraphFilters(size_by="degree")).sizes
    by_mentions = select_view(graph, RELATIONS, GraphFilters(size_by="mentions")).sizes
    assert by_degree == {"auth": 2, "redis": 2, "login": 1, "evil": 1}
    assert by_mentions == {"auth": 9, "redis": 7, "login": 5, "evil": 1}


def test_unknown_view_or_size_is_refused(graph):
    with pytest.raises(ValueError, match="unknown graph view"):
        select_view(graph, "3d")
    with pytest.raises(ValueError, match="size_by"):
        select_view(graph, RELATIONS, GraphFilters(size_by="pagerank"))


def test_html_is_offline_inline_and_escapes_every_label_and_title(graph):
    page = graph_html(select_view(graph, RELATIONS))
    assert "new vis.Network(" in page and len(page) > 300_000  # vis-network is inlined
    assert not re.search(r"<(?:script|link)\b[^>]*(?:src|href)\s*=\s*[\"']?(?:https?:)?//", page, re.IGNORECASE)
    assert HOSTILE not in page
    nodes = nodes_of(page)
    evil = next(n for n in nodes if "onerror" in n["label"])
    assert evil["label"] == "&lt;img src=x onerror=alert(1)&gt;"
    assert "&lt;img src=x onerror=alert(1)&gt;" in evil["title"] and "<img" not in evil["title"]
    assert all("<img" not in e["title"] for e in edges_of(page))


def test_edge_width_grows_with_weight(graph):
    widths = {e["label"]: e["width"] for e in edges_of(graph_html(select_view(graph, RELATIONS)))}
    assert widths["depends_on"] > widths["backed_by"]


def test_strip_cdn_tags_removes_remote_links_and_scripts_only():
    page = ('<link href="https://cdn.example/b.css" rel="stylesheet" />\n<script\n src="https://cdn.example/b.js"\n>'
            '</script><script>var inline = 1;</script><link rel="icon" href="data:,">')
    assert strip_cdn_tags(page).strip() == '<script>var inline = 1;</script><link rel="icon" href="data:,">'


def test_shared_hits_are_starred_in_each_result():
    a = RetrievalResult("q", "a", "a", hits=[Hit("c1", "d", "t", 0.9, 1, {"similarity": 0.91234}), Hit("c2", "d", "t", 0.5, 2)])
    b = RetrievalResult("q", "b", "b", hits=[Hit("c2", "d", "t", 1.0, 1, {"matched_terms": ["redis", "down"]})])
    shared = shared_hits({"a": a, "b": b})
    assert shared == {"c2": ["a", "b"]}
    frame = hits_frame(a, shared)
    assert list(frame[""]) == ["", "★"] and frame.loc[0, "why"] == "similarity: 0.912"
    assert hits_frame(b, shared).loc[0, "why"] == "matched_terms: redis, down"


def test_path_and_impact_tables_cite_each_hop():
    hop = Hop("Auth Service", "backed_by", "Redis", 2, ("c3", "c7"), ("b.md",))
    frame = path_frame(GraphPath(["Redis", "Auth Service"], [hop]))
    assert frame.to_dict("records") == [{"source": "Auth Service", "relation": "backed_by", "target": "Redis",
                                         "weight": 2, "chunks": "c3, c7", "documents": "b.md"}]
    impact = {"failed": "Redis", "impacted": [{"entity": "Auth Service", "path": ["Redis", "Auth Service"],
                                               "hops": [{"chunks": ["c3"]}]}], "survivors": []}
    assert impact_frame(impact).to_dict("records") == [{"entity": "Auth Service", "hops": 1,
                                                        "path": "Redis → Auth Service", "chunks": "c3"}]


def test_merges_table_has_a_sample_per_form_and_filters_by_search():
    merges = [Merge("Auth Service", "authservice", [SurfaceForm("Auth Service", 3, ("c1",)),
                                                    SurfaceForm("AuthService", 1, ("c2",))], ["name key"]),
              Merge("Redis", "redis", [SurfaceForm("Redis", 5, ("c3",)), SurfaceForm("redis", 1, ())], ["name key"])]
    texts = {"c1": "The Auth Service...", "c2": "AuthService depends...", "c3": "Redis runs..."}
    frame = merges_frame(merges, texts.get, search="authserv")
    assert list(frame["surface form"]) == ["Auth Service", "AuthService"]
    assert list(frame["sample chunk"]) == ["The Auth Service...", "AuthService depends..."]
    assert len(merges_frame(merges, texts.get)) == 4


def test_edge_evidence_lists_one_row_per_stating_chunk(graph):
    class Chunk:
        def __init__(self, document_id, text):
            self.document_id, self.text = document_id, text

    chunks = {"c1": Chunk("a.md", "Login depends on auth."), "c2": Chunk("a.md", "Again.")}
    frame = edge_chunks_frame(graph, graph.edges("depends_on"), chunks)
    assert list(frame["chunk"]) == ["c1", "c2"] and set(frame["source"]) == {"login flow"}
