"""Graph views, offline pyvis HTML with escaped text, and the tables the pages show."""

from __future__ import annotations

import json
import re

import pytest

from workbench.graph import ContextGraph
from workbench.model import Edge, Entity, GraphPath, Hit, Hop, Merge, RetrievalResult, SurfaceForm
from workbench.explain import graph_walk, rank_overlap, why_sentence
from workbench.visual import (COMENTION, RELATIONS, GraphFilters, edge_chunks_frame, graph_dates, graph_html,
                              hits_frame, impact_frame, legend_html, local_time, max_edge_weight, merge_log_frame,
                              merges_frame, neighbours_frame, path_frame, select_view, shared_hits, strip_cdn_tags,
                              type_color, type_legend)

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
    assert view.total_nodes == 4 and view.hidden["top n"] == 2 and "2 below the top 2 by mentions" in view.note
    assert all(e.source in {"auth", "redis"} and e.target in {"auth", "redis"} for e in view.edges)
    assert select_view(graph, RELATIONS).hidden == {"no edge": 1}  # alice has only a co-mention edge


def test_node_size_follows_degree_or_mentions(graph):
    by_degree = select_view(graph, RELATIONS, GraphFilters(size_by="degree")).sizes
    by_mentions = select_view(graph, RELATIONS, GraphFilters(size_by="mentions")).sizes
    assert by_degree == {"auth": 2, "redis": 2, "login": 1, "evil": 1}
    assert by_mentions == {"auth": 9, "redis": 7, "login": 5, "evil": 1}


def test_unknown_view_or_size_is_refused(graph):
    with pytest.raises(ValueError, match="unknown graph view"):
        select_view(graph, "3d")
    with pytest.raises(ValueError, match="size_by"):
        select_view(graph, RELATIONS, GraphFilters(size_by="betweenness"))


def test_html_is_offline_inline_and_shows_a_hostile_name_as_text_escaped_once(graph):
    page = graph_html(select_view(graph, RELATIONS))
    assert "new vis.Network(" in page and len(page) > 300_000  # vis-network is inlined
    assert not re.search(r"<(?:script|link)\b[^>]*(?:src|href)\s*=\s*[\"']?(?:https?:)?//", page, re.IGNORECASE)
    assert HOSTILE not in page and "<img" not in page  # the JSON in the page escapes < and >
    nodes = nodes_of(page)
    evil = next(n for n in nodes if "onerror" in n["label"])
    # Drawn on a canvas and shown with innerText: the text as written, never "&lt;" on screen.
    assert evil["label"] == HOSTILE and evil["title"].startswith(HOSTILE + "\n")
    assert "&lt;" not in evil["title"] and all("&lt;" not in e["title"] and "&gt;" not in e["title"] for e in edges_of(page))
    assert any(e["title"].startswith(HOSTILE + " -uses-> Redis") for e in edges_of(page))


def test_a_script_closing_tag_in_a_name_cannot_end_the_script():
    name = "2)</script><script>alert(3)</script> Service"
    g = ContextGraph([Entity("x", name, "service", 1), Entity("y", "Y", "service", 1)],
                     [Edge("x", "uses", "y", chunk_ids=("c1",))])
    page = graph_html(select_view(g, RELATIONS))
    assert "</script><script>alert(3)" not in page
    assert nodes_of(page)[0]["label"] == name


def test_edge_tooltip_names_relation_weight_dates_and_chunks(graph):
    edges = {e["label"]: e for e in edges_of(graph_html(select_view(graph, RELATIONS)))}
    assert edges["depends_on"]["title"].splitlines() == [
        "login flow -depends_on-> Auth Service", "weight 2: stated by 2 chunks in 1 document",
        "first seen 2024-01-10, last seen 2024-01-10", "chunks: c1, c2", "documents: a.md"]
    assert "first and last seen: undated" in edges["uses"]["title"]


def test_comention_edges_have_no_arrow_and_relations_do(graph):
    relation_edges = edges_of(graph_html(select_view(graph, RELATIONS)))
    comention_edges = edges_of(graph_html(select_view(graph, COMENTION)))
    assert len(relation_edges) == 3 and all(e["arrows"] == "to" for e in relation_edges)
    assert len(comention_edges) == 2 and all(e["arrows"] == "" and e.get("label") is None for e in comention_edges)
    assert all("co-mentioned with" in e["title"] for e in comention_edges)


def test_a_types_colour_is_the_same_in_every_view_and_whatever_else_is_in_the_graph(graph):
    def colours(view):
        return {n["label"]: n["color"] for n in nodes_of(graph_html(view))}

    relations, comention = colours(select_view(graph, RELATIONS)), colours(select_view(graph, COMENTION))
    assert relations["Auth Service"] == comention["Auth Service"] == type_color("service")
    assert relations["Redis"] == comention["Redis"] == type_color("technology") != type_color("service")
    # A graph with other types (added by a later ingest) keeps the colours.
    more = ContextGraph([Entity("t", "Title A", "title", 1), Entity("auth", "Auth Service", "service", 1)],
                        [Edge("t", "names", "auth", chunk_ids=("c9",))])
    assert colours(select_view(more, RELATIONS))["Auth Service"] == type_color("service")


def test_the_legend_lists_every_type_shown_with_its_colour(graph):
    view = select_view(graph, RELATIONS)
    assert type_legend(view) == [("service", type_color("service"), 2), ("concept", type_color("concept"), 1),
                                 ("technology", type_color("technology"), 1)]
    page = graph_html(view)
    assert 'id="legend"' in page and "service (2)" in page and type_color("service") in page
    assert "&lt;b&gt; (1)" in legend_html([("<b>", "#000000", 1)])


def test_the_weight_slider_fits_the_data(graph):
    assert max_edge_weight(graph, RELATIONS) == 2 and max_edge_weight(graph, COMENTION) == 3


def test_filters_say_what_they_hide(graph):
    view = select_view(graph, RELATIONS, GraphFilters(types=("service",), min_weight=2))
    assert view.hidden == {"type": 3}
    assert view.note == "Hidden: 3 entities of other types."
    view = select_view(graph, RELATIONS, GraphFilters(min_weight=2))
    assert view.hidden == {"no edge": 3} and "3 with no edge passing weight ≥ 2" in view.note


def test_pagerank_ranks_the_hub_first(graph):
    view = select_view(graph, RELATIONS, GraphFilters(size_by="pagerank", top_n=1))
    assert [n.key for n in view.nodes] in (["auth"], ["redis"])
    assert abs(sum(select_view(graph, RELATIONS, GraphFilters(size_by="pagerank")).sizes.values()) - 1) < 1e-6


def test_the_focus_stays_in_view_with_its_neighbours_and_is_highlighted(graph):
    view = select_view(graph, RELATIONS, GraphFilters(top_n=1, size_by="mentions", focus="login"))
    assert {n.key for n in view.nodes} == {"auth", "login"} and view.focus == "login"
    page = graph_html(view)
    login = next(n for n in nodes_of(page) if n["label"] == "login flow")
    assert login["borderWidth"] == 5 and login["color"]["border"] == "#111111"
    assert f"var focus = {login['id']}," in page


def test_passages_are_added_on_request_as_small_nodes(graph):
    chunk_entities = {"c1": {"login", "auth"}, "c3": {"auth", "redis"}, "c7": {"alice"}}
    assert select_view(graph, RELATIONS, chunk_entities=chunk_entities).chunks == []
    view = select_view(graph, RELATIONS, GraphFilters(show_chunks=True), chunk_entities, {"c1": "a.md"})
    assert [(c.id, c.entities, c.document) for c in view.chunks] == [("c1", ("auth", "login"), "a.md"),
                                                                    ("c3", ("auth", "redis"), "")]
    nodes = nodes_of(graph_html(view))
    assert [n["shape"] for n in nodes if n["label"].startswith("c")] == ["square", "square"]
    capped = select_view(graph, RELATIONS, GraphFilters(show_chunks=True, max_chunks=1), chunk_entities)
    assert len(capped.chunks) == 1 and "Showing 1 of 2 chunks" in capped.note


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
    assert list(frame[""]) == ["", "★"] and frame.loc[0, "why"] == "Embedding similarity 0.91."
    assert hits_frame(b, shared).loc[0, "why"] == "Matched the words “redis”, “down”."


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


def test_every_form_lists_all_its_chunks_and_its_own_reason():
    merges = [Merge("Auth Service", "authservice", [SurfaceForm("Auth Service", 3, ("c1", "c5", "c9")),
                                                    SurfaceForm("login service", 1, ("c2",))],
                    ["name key", "alias (user)"])]
    reasons = {"authservice": {"Auth Service": "canonical", "login service": "alias (user): login service → Auth Service"}}
    frame = merges_frame(merges, lambda c: "", reasons=reasons)
    assert list(frame["chunks"]) == ["c1, c5, c9", "c2"]
    assert list(frame["why"]) == ["canonical", "alias (user): login service → Auth Service"]


def test_the_merge_log_reads_as_sentences_in_local_time_and_marks_undone_entries():
    log = [{"id": 1, "at": 1796107481.8936, "action": "split", "form": "auth-service"},
           {"id": 2, "at": 1796107490.0, "action": "undo", "undoes": 1, "of": "split", "form": "auth-service"},
           {"id": 3, "at": 1796107500.0, "action": "alias", "alias": "login service", "canonical": "Auth Service"}]
    frame = merge_log_frame(log)
    assert list(frame["#"]) == [3, 2, 1]
    assert list(frame["change"]) == ["Merged “login service” into “Auth Service”",
                                     "Undid #1: folded “auth-service” back into its entity",
                                     "Split “auth-service” out into an entity of its own"]
    assert list(frame["status"]) == ["", "undo", "undone by #2"]
    assert "1796107481" not in frame.to_string() and frame.loc[2, "when"] == local_time(1796107481.8936)
    assert re.fullmatch(r"\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}", frame.loc[2, "when"])


def test_neighbours_table_has_relation_direction_and_weight(graph):
    frame = neighbours_frame(graph.neighbors("auth", direction="both", include_comention=True), graph)
    rows = {(r["entity"], r["relation"]): (r["direction"], r["weight"]) for r in frame.to_dict("records")}
    assert rows == {("login flow", "depends_on"): ("← in", 2), ("Redis", "backed_by"): ("→ out", 1),
                    ("Alice", "co_mentioned"): ("— (no direction)", 1),
                    ("Redis", "co_mentioned"): ("— (no direction)", 3)}


def test_why_reads_as_a_sentence_for_every_kind_of_hit():
    assert why_sentence({"via": {"source": "Auth Service", "relation": "depends_on", "target": "token cache"},
                         "confidence": 1.0}) == "Reached via Auth Service -depends_on-> token cache; confidence 1.00."
    assert why_sentence({"rrf": 0.03, "provenance_rank": 4, "hybrid_rank": 1, "ppr_mass": 0.66,
                         "entities": ["Redis"]}) == ("Fused by RRF (0.030): hybrid rank 1, provenance rank 4; "
                                                     "PageRank mass 0.66; mentions “Redis”.")
    assert why_sentence({"new_key": 0.12345}) == "New key: 0.123."


def test_rank_overlap_and_graph_walk_read_results_defensively():
    a = RetrievalResult("q", "a", "a", hits=[Hit("c1", "d1", "t", 1.0, 1)])
    b = RetrievalResult("q", "graphrag", "full_graphrag", hits=[Hit("c1", "d1", "t", 1.0, 2)],
                        graph_context={"seeds": [{"entity": "Redis", "similarity": 0.6}], "nodes": None,
                                       "triples": [{"source": "A", "relation": "r", "target": "B", "chunks": ["c1"]}, 7]})
    assert rank_overlap({"a": a, "graphrag": b}).to_dict("records") == [
        {"chunk": "c1", "document": "d1", "strategies": 2, "a": "1", "graphrag": "2"}]
    walk = graph_walk(b)
    assert walk.seeds == [("Redis", 0.6)] and walk.nodes == [] and [t["source"] for t in walk.triples] == ["A"]
    assert graph_walk(RetrievalResult("q", "k", "k", graph_context=None)).empty


def test_edge_evidence_lists_one_row_per_stating_chunk(graph):
    class Chunk:
        def __init__(self, document_id, text):
            self.document_id, self.text = document_id, text

    chunks = {"c1": Chunk("a.md", "Login depends on auth."), "c2": Chunk("a.md", "Again.")}
    frame = edge_chunks_frame(graph, graph.edges("depends_on"), chunks)
    assert list(frame["chunk"]) == ["c1", "c2"] and set(frame["source"]) == {"login flow"}
