"""AppTests of the app an analyst lives in (issue 28): the chunk viewer behind every citation,
Compare's time controls, answer first and document differences, the focused graph, the merge
preview, readable tables, and typed paths read only under ``app.allowed_roots``."""

from __future__ import annotations

import datetime as dt
import re
from pathlib import Path

import pytest

from tests.conftest import REDIS_QUESTION
from tests.test_app import dataframes, node_data, open_app, page, texts

SESSIONS = "Where are web sessions stored?"


def doc_id(ws, suffix: str) -> str:
    found = [d.id for d in ws.documents() if d.id.endswith(suffix)]
    assert len(found) == 1, (suffix, found)
    return found[0]


def compare(at, question: str, modes: list[str], **dates):
    at.text_input(key="keep.compare.question").input(question)
    at.multiselect(key="keep.compare.modes").set_value(modes)
    for name, day in dates.items():
        at.date_input(key=f"keep.compare.{name}").set_value(day)
    at.button(key="compare.run").click().run()
    assert not at.exception, at.exception
    return at


def dialog_texts(at) -> str:
    """What the open chunk viewer shows (its title, caption, marked text and neighbours)."""
    shown = texts(at)
    shown += "\n".join(str(h.proto.body) for h in at.get("html"))
    return shown


# -- the chunk viewer ----------------------------------------------------------------------------

def test_chunk_view_gives_text_document_neighbours_and_stated_edges(sample_workspace):
    from tests.conftest import chunk_id
    from workbench.views.chunks import chunk_view

    cited = chunk_id(sample_workspace, "redis.md", "token cache")
    view = chunk_view(sample_workspace, cited)
    assert view.chunk.id == cited and view.title and view.chunks_in_document >= 2
    assert view.before is not None or view.after is not None
    for other in (view.before, view.after):
        assert other is None or (other.document_id == view.chunk.document_id
                                 and abs(other.ordinal - view.chunk.ordinal) == 1)
    assert view.edges and all(cited in hop.chunks for hop in view.edges)
    assert all(hop.relation != "co_mentioned" for hop in view.edges)


def test_chunk_viewer_marks_words_and_escapes_the_text():
    from workbench.views.chunks import highlighted_html

    shown = highlighted_html("<script>alert(1)</script> Redis backs the token cache.", ["redis", "token cache"])
    assert "<script>" not in shown and "&lt;script&gt;" in shown
    assert "<mark>Redis</mark>" in shown and "<mark>token cache</mark>" in shown


def test_a_compare_card_opens_its_chunk_with_document_date_and_edges(monkeypatch, sample_workspace):
    at = page(open_app(monkeypatch, sample_workspace.path), "compare")
    opener = next(b for b in at.button if b.key == "compare.open.paths.0")
    opener.click().run()
    assert not at.exception
    shown = dialog_texts(at)
    assert "Edges it states" in shown and "<mark>" in shown
    assert "chunk 1 of" in shown or "chunk 2 of" in shown or " of " in shown


@pytest.mark.parametrize("name, prepare, key", [
    ("graph", lambda at: at.selectbox(key="keep.entity").select("redis").run(), "graph.open"),
    ("communities", lambda at: at, "communities.open"),
    ("timeline", lambda at: at.selectbox(key="keep.entity").select("redis").run(), "timeline.open"),
    ("compare", lambda at: at, "compare.open_any"),
    ("canonicalization", lambda at: at.selectbox(key="canon.form_chunks").select(
        at.selectbox(key="canon.form_chunks").options[0]).run(), "canon.open"),
])
def test_every_page_opens_its_citations_in_the_chunk_viewer(monkeypatch, sample_workspace, name, prepare, key):
    at = page(open_app(monkeypatch, sample_workspace.path), name)
    prepare(at)
    box = at.selectbox(key=key)
    assert box.options, name
    chunk = box.options[0].split(" · ")[0]
    box.select(chunk).run()
    assert not at.exception
    shown = dialog_texts(at)
    assert f"id {chunk}" in shown and "Edges it states" in shown


# -- Compare: time, supersession, answer first, differences ---------------------------------------

def test_compare_reads_last_month_against_the_as_of_day(monkeypatch, sample_workspace):
    at = page(open_app(monkeypatch, sample_workspace.path), "compare")
    compare(at, "What did we decide about the session store last month?", ["hybrid"], as_of=dt.date(2024, 7, 15))
    shown = texts(at)
    assert "Time window\\: 1 Jun 2024 to 30 Jun 2024 \\(from “last month”\\)" in shown
    newer = doc_id(sample_workspace, "2024-06-session-store-redis.md")
    documents = {c.value for c in at.markdown if c.value.startswith("**#")}
    assert documents and all("2023" not in d for d in documents)
    assert any(newer.split("/")[-1].replace("-", "\\-").replace(".", "\\.") in d for d in documents)


def test_compare_marks_the_superseded_decision_and_dates_every_card(monkeypatch, sample_workspace):
    at = page(open_app(monkeypatch, sample_workspace.path), "compare")
    compare(at, SESSIONS, ["keyword"], as_of=dt.date(2024, 7, 15))
    badges = [m.value for m in at.markdown if "superseded] by" in m.value]
    assert badges and all("2024\\-06\\-session\\-store\\-redis\\.md" in b and "10 Jun 2024" in b for b in badges)
    cards = [m.value for m in at.markdown if m.value.startswith("**#")]
    assert sum("2023\\-11\\-session\\-store\\.md" in c for c in cards) == len(badges) >= 1
    assert "20 Nov 2023" in texts(at)  # the older decision's date on its card
    # Before the newer decision was written, the older one was not superseded yet.
    compare(at, SESSIONS, ["keyword"], as_of=dt.date(2024, 1, 1))
    assert not [m.value for m in at.markdown if "superseded] by" in m.value]


def test_since_and_until_keep_hits_inside_the_window(monkeypatch, sample_workspace):
    at = page(open_app(monkeypatch, sample_workspace.path), "compare")
    compare(at, SESSIONS, ["keyword"], since=dt.date(2023, 11, 1), until=dt.date(2023, 12, 31))
    cards = [m.value for m in at.markdown if m.value.startswith("**#")]
    assert cards and all("2023\\-11\\-session\\-store" in c for c in cards)


@pytest.mark.parametrize("mode", ["vector", "keyword", "hybrid"])
def test_the_structural_answer_comes_first_in_every_mode(monkeypatch, sample_workspace, mode):
    at = page(open_app(monkeypatch, sample_workspace.path), "compare")
    compare(at, REDIS_QUESTION, [mode])
    impact = sample_workspace.graph.impacted_by("Redis")
    headline = next(m.value for m in at.markdown if m.value.startswith("**What breaks if Redis fails?**"))
    assert all(name in headline for name in ("Auth Service", "login flow", "token cache"))
    standing = next(m.value for m in at.markdown if m.value.startswith("**Still standing:**"))
    people = {e.name for e in sample_workspace.graph.entities() if e.type == "person"}
    assert people and not any(f" {p}," in standing or standing.endswith(p) for p in people)
    assert len(standing.split(", ")) < len(impact.survivors)
    paths = "\n".join(t.value for t in at.text if t.value.startswith("Cited path: Redis → "))
    assert impact.impacted[0][1].hops[0].states in paths


def test_compare_names_the_documents_each_mode_missed(monkeypatch, sample_workspace):
    from workbench.retrieve import retrieve

    at = page(open_app(monkeypatch, sample_workspace.path), "compare")
    compare(at, REDIS_QUESTION, ["vector", "paths"])
    k = sample_workspace.settings.retrieval.k
    vector = {h.document for h in retrieve(sample_workspace, REDIS_QUESTION, "vector", k).hits}
    paths = {h.document for h in retrieve(sample_workspace, REDIS_QUESTION, "paths", k).hits}
    assert paths - vector
    line = next(c.value for c in at.caption if c.value.startswith("vector missed "))
    from ui import md_text
    assert all(md_text(doc) in line for doc in sorted(paths - vector)[:6])


def test_every_chosen_strategy_shows_side_by_side_with_a_short_why(monkeypatch, sample_workspace):
    from ui import md_text
    from workbench.retrieve import retrieve
    from workbench.views.compare import short_why

    at = page(open_app(monkeypatch, sample_workspace.path), "compare")
    chosen = ["graphrag", "hybrid", "paths", "keyword", "vector"]
    compare(at, REDIS_QUESTION, chosen)
    assert not at.tabs
    assert [h.value for h in at.subheader][:5] == chosen
    hit = retrieve(sample_workspace, REDIS_QUESTION, "hybrid", sample_workspace.settings.retrieval.k).hits[0]
    why = short_why(hit.why)
    assert len(why) < 90 and "RRF" not in why and md_text(why) in [c.value for c in at.caption]
    assert any(e.label == "Details" for e in at.expander)


# -- Graph ----------------------------------------------------------------------------------------

def test_the_focused_view_draws_the_entitys_neighbourhood_and_folds_the_next_step(monkeypatch, sample_workspace):
    from workbench.views.graph import within_hops

    at = page(open_app(monkeypatch, sample_workspace.path), "graph")
    at.toggle(key="keep.graph.noise").set_value(True).run()  # note titles and dates drawn too
    at.selectbox(key="keep.entity").select("redis").run()
    at.slider(key="keep.graph.hops").set_value(1).run()
    nodes = node_data(at.get("iframe")[0].proto.srcdoc)
    visible = {n["label"] for n in nodes if not n.get("hidden")}
    folded = {n["label"] for n in nodes if n.get("hidden")}
    graph = sample_workspace.graph
    near = within_hops(graph.edges(), "redis", 2)
    assert visible == {graph.name(k) for k, d in near.items() if d <= 1}
    assert folded == {graph.name(k) for k, d in near.items() if d == 2} and folded
    srcdoc = at.get("iframe")[0].proto.srcdoc
    assert 'network.on("click"' in srcdoc and "hidden: false" in srcdoc


def test_graph_keeps_type_colours_on_selection_and_has_fit_and_zoom(monkeypatch, sample_workspace):
    from workbench.views.graph_html import type_color

    at = page(open_app(monkeypatch, sample_workspace.path), "graph")
    at.selectbox(key="keep.entity").select("redis").run()
    srcdoc = at.get("iframe")[0].proto.srcdoc
    for node in node_data(srcdoc):
        entity = sample_workspace.graph.entity(sample_workspace.graph.resolve(node["label"]))
        assert node["color"]["highlight"]["background"] == type_color(entity.type) == node["color"]["background"]
    assert "network.fit(" in srcdoc and "Zoom in" in srcdoc and "Zoom out" in srcdoc


def test_passages_are_labelled_by_their_document_title(monkeypatch, sample_workspace):
    at = page(open_app(monkeypatch, sample_workspace.path), "graph")
    at.toggle(key="keep.graph.chunks").set_value(True).run()
    squares = [n for n in node_data(at.get("iframe")[0].proto.srcdoc) if n.get("shape") == "square"]
    titles = {d.title[:27] for d in sample_workspace.documents()}
    assert squares and all(n["label"].rstrip("…")[:27] in titles for n in squares)


def test_co_mention_view_starts_at_weight_two(monkeypatch, sample_workspace):
    at = page(open_app(monkeypatch, sample_workspace.path), "graph")
    at.radio(key="keep.graph.view").set_value("co-mention").run()
    assert at.slider(key="keep.graph.min_weight.co-mention").value == 2
    assert at.slider(key="keep.graph.min_weight.co-mention").max >= 2


def test_sidebar_filters_apply_to_the_neighbour_and_evidence_tables(monkeypatch, sample_workspace):
    at = page(open_app(monkeypatch, sample_workspace.path), "graph")
    at.selectbox(key="keep.entity").select("redis").run()
    neighbours, evidence = dataframes(at)[:2]
    assert "backed_by" in set(neighbours["relation"]) and len(set(neighbours["relation"])) > 1
    at.multiselect(key="keep.graph.relations").set_value(["backed_by"]).run()
    neighbours, evidence = dataframes(at)[:2]
    assert set(neighbours["relation"]) == {"backed_by"} and set(evidence["relation"]) == {"backed_by"}
    assert any("left out by the sidebar filters" in c.value for c in at.caption)


def test_the_entity_is_remembered_across_pages(monkeypatch, sample_workspace):
    at = page(open_app(monkeypatch, sample_workspace.path), "graph")
    at.selectbox(key="keep.entity").select("redis").run()
    page(at, "compare")
    page(at, "timeline")
    assert at.selectbox(key="keep.entity").value == "redis"
    assert dataframes(at)  # its timeline is shown at once
    page(at, "graph")
    assert at.selectbox(key="keep.entity").value == "redis"


# -- Canonicalization -----------------------------------------------------------------------------

def test_a_merge_preview_lists_the_edges_that_would_move(monkeypatch, sample_workspace):
    from ui import canonical_first
    from workbench.views.merges import merge_preview

    at = page(open_app(monkeypatch, sample_workspace.path), "canonicalization")
    box = at.selectbox(key="canon.preview")
    chosen = next((s.a, s.b) for s in sample_workspace.corrections.suggestions()[:len(box.options)]
                  if not merge_preview(sample_workspace.graph, *reversed(canonical_first(sample_workspace, s.a, s.b))).empty)
    box.set_value(chosen).run()
    assert not at.exception
    canonical, alias = canonical_first(sample_workspace, *chosen)
    preview = next(f for f in dataframes(at) if "after the merge" in f.columns)
    assert len(preview) and all(canonical in after for after in preview["after the merge"])
    assert all(alias in now for now in preview["now"])


# -- Formatting -----------------------------------------------------------------------------------

def test_dates_are_human_and_evaluate_headers_are_plain(monkeypatch, sample_workspace):
    import ui_widgets

    at = open_app(monkeypatch, sample_workspace.path)
    documents = dataframes(at)[0]
    dated = [d for d in documents["date"] if d]
    assert dated and all(not d[:4].isdigit() or len(d) == 4 for d in dated)  # "20 Nov 2023", not "2023-11-20"
    config = ui_widgets.eval_columns(["recall", "recall_w/t/l", "recall_a", "latency_ms"])
    assert config["recall_w/t/l"]["label"] == "recall: wins / ties / losses" and config["recall_w/t/l"]["help"]
    assert config["recall_a"]["label"] == "recall in run A" and config["recall"]["type_config"]["format"] == "%.2f"


# -- Paths typed into the app ---------------------------------------------------------------------

def test_a_typed_path_is_read_only_under_the_allowed_roots(tmp_path):
    from workbench.ingest.allowed_paths import PathRefused, allowed_path

    root = tmp_path / "docs"
    (root / "a").mkdir(parents=True)
    (root / ".secret").write_text("x", encoding="utf-8")
    (root / "link").symlink_to("/etc")
    assert allowed_path("docs/a", ["docs"], base=tmp_path) == (root / "a").resolve()
    for refused in ("/etc", "docs/../..", "docs/.secret", "docs/link/passwd", str(tmp_path)):
        with pytest.raises(PathRefused, match="app.allowed_roots"):
            allowed_path(refused, ["docs"], base=tmp_path)


def test_corpus_refuses_a_folder_outside_the_roots_in_one_line(monkeypatch, sample_workspace, tmp_path):
    monkeypatch.chdir(tmp_path)  # the app's root: nothing else may be read
    before = [d.id for d in sample_workspace.documents()]
    at = open_app(monkeypatch, sample_workspace.path)
    at.text_input(key="keep.corpus.folder").input("/etc")
    at.button(key="corpus.ingest_folder").click().run()
    assert not at.exception
    errors = [e.value for e in at.error]
    assert len(errors) == 1 and "\n" not in errors[0] and "app\\.allowed\\_roots" in errors[0]
    assert [d.id for d in sample_workspace.documents()] == before


def test_evaluate_refuses_a_task_file_outside_the_roots_and_never_quotes_a_file(monkeypatch, sample_workspace,
                                                                                tmp_path):
    outside = tmp_path / "outside.yaml"
    outside.write_text("- id: t\n  question: password hunter2\n  gold: [a.md]\n", encoding="utf-8")
    root = tmp_path / "root"
    root.mkdir()
    broken = root / "tasks.yaml"
    broken.write_text("token: s3cr3t-value\n  bad: [unclosed\n", encoding="utf-8")
    monkeypatch.chdir(root)
    at = page(open_app(monkeypatch, sample_workspace.path), "evaluate")
    at.text_input(key="keep.eval.tasks").set_value(str(outside)).run()
    errors = [e.value for e in at.error]
    assert len(errors) == 1 and "allowed\\_roots" in errors[0] and "hunter2" not in errors[0]
    at.text_input(key="keep.eval.tasks").set_value(str(broken)).run()
    errors = [e.value for e in at.error]
    assert len(errors) == 1 and "line" in errors[0] and "s3cr3t" not in errors[0] and "unclosed" not in errors[0]
    assert at.button(key="eval.run").disabled


def test_the_allowed_roots_setting_defaults_to_the_folder_the_app_started_in():
    from workbench.ingest.allowed_paths import resolved_roots
    from workbench.settings import Settings

    assert resolved_roots(Settings().app.allowed_roots) == [Path.cwd().resolve()]


# -- Corpus page state ------------------------------------------------------------------------------

def test_cancel_clears_the_choice_and_the_prompt_does_not_return(monkeypatch, hostile_workspace):
    at = open_app(monkeypatch, hostile_workspace.path)
    doomed = doc_id(hostile_workspace, "redis.md")
    at.multiselect(key="corpus.doomed").set_value([doomed]).run()
    assert any(w.value.startswith("Remove ") for w in at.warning)
    at.button(key="corpus.cancel").click().run()
    assert at.multiselect(key="corpus.doomed").value == [] and not at.warning
    at.text_input(key="keep.corpus.folder").input("elsewhere").run()  # an unrelated action
    assert at.multiselect(key="corpus.doomed").value == [] and not at.warning


def test_after_a_removal_the_box_no_longer_shows_the_removed_document(monkeypatch, hostile_workspace):
    at = open_app(monkeypatch, hostile_workspace.path)
    doomed = doc_id(hostile_workspace, "redis.md")
    at.multiselect(key="corpus.doomed").set_value([doomed]).run()
    at.button(key="corpus.remove").click().run()
    assert not at.exception and not at.error
    box = at.multiselect(key="corpus.doomed")
    assert box.value == [] and not any(option.startswith(doomed) for option in box.options) and not at.warning
    at.run()
    assert at.multiselect(key="corpus.doomed").value == [] and not at.warning


def test_the_answer_first_shows_a_hostile_name_as_text(monkeypatch, hostile_workspace):
    from tests.conftest import HOSTILE

    at = page(open_app(monkeypatch, hostile_workspace.path), "compare")
    compare(at, f"What does {HOSTILE} depend on?", ["keyword"])
    headline = next(m.value for m in at.markdown if m.value.startswith("**What "))
    assert "Depends on\\: Redis notes" in headline and "\\<img src=x" in headline
    assert not re.search(r"(?<!\\)<img", headline)  # every bracket escaped for Markdown


def test_compare_warns_when_a_strategy_falls_back(monkeypatch, sample_workspace):
    at = page(open_app(monkeypatch, sample_workspace.path), "compare")
    compare(at, "qwzx vbnm plkj", ["graphrag", "hybrid"])  # names nothing the graph knows: graphrag answers hybrid
    warnings = [w.value for w in at.warning]
    assert any(w.startswith("graphrag fell back to hybrid search without the graph walk") for w in warnings), warnings
    assert not any(w.startswith("hybrid fell back") for w in warnings)
