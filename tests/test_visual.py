"""The views: graph views as offline pyvis HTML with escaped text, the tables the pages show, and
hits explained in sentences."""

from __future__ import annotations

import json
import re

import pytest

from workbench.context_graph.graph import ContextGraph
from workbench.model import (ContextNode, Edge, Entity, GraphContext, GraphPath, Hit, Hop, Impact, Merge, PathStep,
                             RetrievalResult, Seed, SurfaceForm, Why)
from workbench.views.graph import COMENTION, RELATIONS, GraphFilters, graph_dates, max_edge_weight, select_view
from workbench.views.graph_html import graph_html, legend_html, strip_cdn_tags, type_color, type_legend
from workbench.views.merges import local_time, merge_log_frame, merges_frame
from workbench.views.retrieval import (hit_card, hits_frame, impact_frame, path_frame, path_text, rank_overlap,
                                       seeds_text, shared_hits, walk_frames)
from workbench.views.tables import documents_frame, edge_chunks_frame, neighbours_frame

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
        return {n["label"]: n["color"]["background"] for n in nodes_of(graph_html(view))}

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
    # Selected, it keeps its type colour: only the border darkens.
    assert login["color"]["highlight"] == {"background": type_color("service"), "border": "#111111"}
    assert f"var focus = {login['id']}," in page


def test_the_focused_view_shows_k_steps_and_folds_the_next_one(graph):
    view = select_view(graph, RELATIONS, GraphFilters(focus="login", hops=1))
    assert {n.key for n in view.nodes} == {"login", "auth", "redis"} and view.folded == {"redis"}
    assert "more than 1 edge away" in view.note and view.hidden["far"] == 2
    nodes = {n["label"]: n for n in nodes_of(graph_html(view))}
    assert nodes["Redis"]["hidden"] is True and not nodes["Auth Service"].get("hidden")
    wider = select_view(graph, RELATIONS, GraphFilters(focus="login", hops=3))
    assert {n.key for n in wider.nodes} == {"login", "auth", "redis", "evil"} and not wider.folded


def test_passages_are_added_on_request_as_small_nodes(graph):
    chunk_entities = {"c1": {"login", "auth"}, "c3": {"auth", "redis"}, "c7": {"alice"}}
    assert select_view(graph, RELATIONS, chunk_entities=chunk_entities).chunks == []
    view = select_view(graph, RELATIONS, GraphFilters(show_chunks=True), chunk_entities, {"c1": "a.md"})
    assert [(c.id, c.entities, c.document) for c in view.chunks] == [("c1", ("auth", "login"), "a.md"),
                                                                    ("c3", ("auth", "redis"), "")]
    nodes = nodes_of(graph_html(view))
    # Labelled by the document's title, else its id, else the chunk id.
    assert [n["label"] for n in nodes if n.get("shape") == "square"] == ["a.md", "c3"]
    titled = select_view(graph, RELATIONS, GraphFilters(show_chunks=True), chunk_entities, {"c1": "a.md"},
                         {"c1": "Login flow notes"})
    assert [n["label"] for n in nodes_of(graph_html(titled)) if n.get("shape") == "square"] == ["Login flow notes", "c3"]
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
    a = RetrievalResult("q", "a", "a", hits=[Hit("c1", "d", "t", 0.9, 1, Why(similarity=0.91234)),
                                             Hit("c2", "d", "t", 0.5, 2)])
    b = RetrievalResult("q", "b", "b", hits=[Hit("c2", "d", "t", 1.0, 1, Why(matched_terms=["redis", "down"]))])
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
    impact = Impact("Redis", [("Auth Service", GraphPath(["Redis", "Auth Service"], [hop]))], survivors=[])
    assert impact_frame(impact).to_dict("records") == [{"entity": "Auth Service", "hops": 1,
                                                        "path": "Redis → Auth Service", "chunks": "c3, c7"}]
    assert path_text(GraphPath(["Redis", "Auth Service"], [hop])) == (
        "Redis → Auth Service (corroboration 2)\n  Auth Service -backed_by-> Redis [c3, c7]")


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


EDGE = Hop("Auth Service", "depends_on", "token cache", 1, ("c7",), ("auth.md",), confidence=0.9)


def test_why_reads_as_a_sentence_for_every_kind_of_hit():
    assert Why(via="expansion", parent="c1", edge=EDGE, reached="token cache").describe() == (
        "Reached over an edge of chunk c1; through Auth Service -depends_on-> token cache (weight 1), stated by c7; "
        "for token cache.")
    assert Why(via="comention", parent="c1", edge=EDGE, reached="token cache", hops=2).describe().startswith(
        "Reached 2 hop(s) from the entities of chunk c1; through Auth Service -depends_on-> token cache")
    assert Why(via="direct", similarity=0.634).describe() == "Direct vector hit; embedding similarity 0.63."
    fused = Why(rrf=0.03, ranks={"walk": None, "provenance": 4, "hybrid": 1}, ppr_mass=0.66, entities=["Redis"])
    assert fused.describe() == "Fused by RRF (0.030): provenance rank 4, hybrid rank 1; PageRank mass 0.66; mentions “Redis”."
    step = PathStep(("Redis", "token cache"), path_rank=1, hop_number=1, hop=EDGE, reading="impact")
    assert Why(cited_path=step).describe() == ("States hop 1 of the path Redis → token cache: Auth Service "
                                               "-depends_on-> token cache (weight 1), stated by c7.")
    assert Why(community="k1", community_title="Auth and Redis", point="Redis backs the cache.", similarity=0.5,
               entities=[]).describe() == ("Quoted by the report of the community “Auth and Redis” (similarity 0.50); "
                                           "mentions no graph entity.")
    assert Why(matched_terms=[], literal_match=["ECONNREFUSED"], literal_boost=0.05).describe() == (
        "Matched no word; holds “ECONNREFUSED” literally (+0.05).")
    assert Why().describe() == "No explanation given."


def test_why_json_has_the_fields_set_and_the_fused_ranks_with_their_gaps():
    why = Why(rrf=0.03, ranks={"keyword": None, "vector": 2}, similarity=0.5, cited_path=PathStep(
        ("Redis", "token cache"), path_rank=1, hop_number=1, hop=EDGE))
    data = why.to_json()
    assert data == {"similarity": 0.5, "rrf": 0.03, "keyword_rank": None, "vector_rank": 2, "cited_path": {
        "path": ["Redis", "token cache"], "path_rank": 1, "hop_number": 1, "states": "Auth Service -depends_on-> token cache",
        "hop": EDGE.to_json(), "reading": None}}
    assert EDGE.to_json() == {"source": "Auth Service", "relation": "depends_on", "target": "token cache", "weight": 1,
                              "confidence": 0.9, "origin": "pattern", "first_seen": None, "last_seen": None,
                              "chunks": ["c7"], "documents": ["auth.md"]}


def test_rank_overlap_and_the_walk_tables_read_the_typed_result():
    a = RetrievalResult("q", "a", "a", hits=[Hit("c1", "d1", "t", 1.0, 1)])
    context = GraphContext(seeds=[Seed("Redis", "redis", "similar", similarity=0.6)],
                           nodes=[ContextNode("Redis", "redis", "technology", 0.25)], triples=[EDGE])
    b = RetrievalResult("q", "graphrag", "full_graphrag", hits=[Hit("c1", "d1", "t", 1.0, 2)], graph_context=context)
    assert rank_overlap({"a": a, "graphrag": b}).to_dict("records") == [
        {"chunk": "c1", "document": "d1", "strategies": 2, "a": "1", "graphrag": "2"}]
    assert seeds_text(context.seeds) == "Redis (similar, 0.60)"
    nodes, triples = walk_frames(context)
    assert nodes.to_dict("records") == [{"entity": "Redis", "type": "technology", "score": 0.25}]
    assert triples.to_dict("records") == [{"source": "Auth Service", "relation": "depends_on", "target": "token cache",
                                           "weight": 1, "chunks": "c7", "documents": "auth.md"}]
    assert not context.empty and GraphContext().empty and a.graph_context.empty


def test_tables_and_cards_show_control_characters_as_escapes_and_markup_as_written():
    class Record:
        id, title, kind, date, chunks, tags = "notes/\x1b[2Jx.md", HOSTILE, "markdown", None, 1, ("a\u202eb",)

    row = documents_frame([Record()]).to_dict("records")[0]
    assert row["document"] == "notes/\\x1b[2Jx.md" and row["title"] == HOSTILE and row["tags"] == "a\\u202eb"
    hit = Hit("c1", "notes/\x1b[2Jx.md", "line one\nline two\x07", 0.5, rank=1, why=Why(entities=["A\nB"]))
    heading, text, why = hit_card(hit)
    assert heading == "#1 · 0.500 · chunk c1\nnotes/\\x1b[2Jx.md"
    assert text == "line one\nline two\\x07" and why == "Mentions “A\\nB”."


def test_edge_evidence_lists_one_row_per_stating_chunk(graph):
    class Chunk:
        def __init__(self, document_id, text):
            self.document_id, self.text = document_id, text

    chunks = {"c1": Chunk("a.md", "Login depends on auth."), "c2": Chunk("a.md", "Again.")}
    frame = edge_chunks_frame(graph, graph.edges("depends_on"), chunks)
    assert list(frame["chunk"]) == ["c1", "c2"] and set(frame["source"]) == {"login flow"}
