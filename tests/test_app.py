"""AppTest for every page of the Streamlit app, on real workspaces (no JavaScript runs here)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.conftest import REDIS_QUESTION, ROOT

PAGES = ["corpus", "canonicalization", "graph", "compare", "evaluate"]
HOSTILE = "<img src=x onerror=alert(1)>"


def open_app(monkeypatch, workspace_path):
    from streamlit.testing.v1 import AppTest

    monkeypatch.setenv("WORKBENCH_WORKSPACE", str(workspace_path))
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=180)
    at.run()
    assert not at.exception
    return at


def page(at, name):
    at.switch_page(f"pages/{name}.py").run()
    assert not at.exception, at.exception
    return at


def texts(at) -> str:
    return "\n".join(str(e.value) for kind in ("text", "caption", "markdown", "info", "warning", "error", "success")
                     for e in at.get(kind))


def dataframes(at):
    return [frame.value for frame in at.dataframe]


def node_data(srcdoc: str) -> list[dict]:
    found = re.search(r"nodes = new vis\.DataSet\((\[.*?\])\);", srcdoc, re.DOTALL)
    return json.loads(found.group(1))


@pytest.fixture
def hostile_workspace(make_workspace, tmp_path):
    """A tiny corpus whose note title (an entity name) and text carry HTML and script."""
    corpus = tmp_path / "hostile"
    corpus.mkdir()
    (corpus / "evil.md").write_text(
        f'---\ntitle: "{HOSTILE}"\nrelations:\n  - {{type: DEPENDS_ON, target: redis.md}}\n---\n'
        f"The {HOSTILE} service depends on Redis.\n\n<script>alert(2)</script> uses Redis.\n", encoding="utf-8")
    (corpus / "redis.md").write_text("---\ntitle: Redis notes\n---\nThe login service calls Redis.\n", encoding="utf-8")
    ws = make_workspace("hostile-ws")
    ws.ingest([corpus])
    return ws


# -- Corpus --------------------------------------------------------------------------------

def test_corpus_page_counts_what_the_workspace_holds(monkeypatch, sample_workspace):
    at = open_app(monkeypatch, sample_workspace.path)
    stats = sample_workspace.stats()
    shown = {m.label: m.value for m in at.metric}
    assert shown == {"Documents": str(stats["documents"]), "Chunks": str(stats["chunks"]),
                     "Entities": str(stats["entities"]), "Edges": str(stats["edges"])}
    documents = dataframes(at)[0]
    assert sorted(documents["document"]) == sorted(d.id for d in sample_workspace.documents())


def test_empty_workspace_offers_the_sample_corpus_and_no_page_fails(monkeypatch, tmp_path):
    at = open_app(monkeypatch, tmp_path / "empty")
    assert "The workspace is empty" in texts(at)
    assert [b.label for b in at.button if b.key == "corpus.ingest_sample"] == ["Ingest the sample corpus"]
    for name in PAGES[1:]:
        page(at, name)
        assert "The workspace is empty" in texts(at), name


def test_removing_a_document_from_the_corpus_page(monkeypatch, hostile_workspace):
    at = open_app(monkeypatch, hostile_workspace.path)
    doomed = next(d.id for d in hostile_workspace.documents() if d.id.endswith("redis.md"))
    at.selectbox[0].select(doomed)
    next(b for b in at.button if b.label == "Remove").click().run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    assert doomed not in [d.id for d in hostile_workspace.documents()]
    assert doomed not in list(dataframes(at)[0]["document"])


def test_upload_is_saved_inside_the_session_folder(monkeypatch, tmp_path):
    import ui

    class Upload:
        name = "../../../etc/passwd"

        def getvalue(self):
            return b"The login service calls Redis."

    class FakeWorkspace:
        path = tmp_path / "ws"

    folder = ui.save_uploads(FakeWorkspace(), [Upload()])
    assert folder.parent == tmp_path / "ws" / "uploads"
    assert [p.name for p in folder.iterdir()] == ["passwd"]
    assert not (tmp_path / "etc").exists()


@given(st.text())
def test_upload_path_never_leaves_its_folder(name):
    import ui

    folder = Path("/ws/uploads/session")
    target = ui.safe_upload_path(folder, name)
    assert target.parent == folder and target.name not in ("", ".", "..")


# -- Canonicalization ------------------------------------------------------------------------

def test_canonicalization_page_lists_merges_with_forms_and_samples(monkeypatch, sample_workspace):
    at = page(open_app(monkeypatch, sample_workspace.path), "canonicalization")
    merges = dataframes(at)[0]
    expected = {(m.canonical, f.form) for m in sample_workspace.merges() for f in m.surface_forms}
    assert set(zip(merges["canonical"], merges["surface form"])) == expected
    assert all(merges["sample chunk"].str.len() > 0)
    assert "Suggested merges" in [h.value for h in at.subheader]


def test_canonicalization_search_filters_the_merges(monkeypatch, sample_workspace):
    at = page(open_app(monkeypatch, sample_workspace.path), "canonicalization")
    target = sample_workspace.merges()[0].canonical
    at.text_input(key="keep.canon.search").input(target).run()
    merges = dataframes(at)[0]
    assert set(merges["canonical"]) == {target}


def test_adding_an_alias_merges_the_entities_in_the_graph(monkeypatch, hostile_workspace):
    at = page(open_app(monkeypatch, hostile_workspace.path), "canonicalization")
    before = len(hostile_workspace.graph)
    assert hostile_workspace.graph.resolve("login service") != hostile_workspace.graph.resolve("Redis notes")
    at.text_input[1].input("login service")
    at.text_input[2].input("Redis notes")
    next(b for b in at.button if b.label == "Add alias").click().run()
    assert not at.exception and not at.error
    graph = hostile_workspace.graph
    assert graph.resolve("login service") == graph.resolve("Redis notes") and len(graph) == before - 1
    assert "alias" in list(dataframes(at)[-1]["action"])


# -- Graph --------------------------------------------------------------------------------------

def test_graph_page_draws_offline_with_vis_network_inline(monkeypatch, sample_workspace):
    at = page(open_app(monkeypatch, sample_workspace.path), "graph")
    srcdoc = at.get("iframe")[0].proto.srcdoc
    assert "new vis.Network(" in srcdoc and "vis-network" in srcdoc
    assert not re.search(r"<script[^>]*\bsrc\s*=\s*[\"']?https?://", srcdoc, re.IGNORECASE)
    assert not re.search(r"<link[^>]*\bhref\s*=\s*[\"']?https?://", srcdoc, re.IGNORECASE)
    shown = {n["label"] for n in node_data(srcdoc)}
    relation_ends = {sample_workspace.graph.name(e.source) for e in sample_workspace.graph.edges()}
    assert relation_ends <= shown


def test_graph_page_escapes_a_hostile_entity_name(monkeypatch, hostile_workspace):
    at = page(open_app(monkeypatch, hostile_workspace.path), "graph")
    srcdoc = at.get("iframe")[0].proto.srcdoc
    assert "<img src=x" not in srcdoc and "alert(2)</script" not in srcdoc
    labels = [n["label"] for n in node_data(srcdoc)]
    assert any(label.startswith("&lt;img src=x onerror=alert(1") for label in labels)
    assert all("<" not in n["label"] and "<img" not in n["title"] for n in node_data(srcdoc))


def test_graph_page_shows_the_chunks_behind_a_nodes_edges(monkeypatch, sample_workspace):
    at = page(open_app(monkeypatch, sample_workspace.path), "graph")
    at.selectbox(key="graph.center").select("redis").run()
    assert not at.exception
    neighbours, evidence = dataframes(at)
    expected = {name for name, _ in sample_workspace.graph.neighbors("redis", direction="both").entities}
    assert set(neighbours["entity"]) == expected
    chunk_ids = {c for e in sample_workspace.graph.neighbors("redis", direction="both").edges for c in e.chunk_ids}
    assert set(evidence["chunk"]) == chunk_ids
    assert all(evidence["text"].str.len() > 0)


def test_graph_filters_change_what_is_drawn(monkeypatch, sample_workspace):
    at = page(open_app(monkeypatch, sample_workspace.path), "graph")
    everything = len(node_data(at.get("iframe")[0].proto.srcdoc))
    at.number_input(key="keep.graph.top_n").set_value(10).run()
    assert len(node_data(at.get("iframe")[0].proto.srcdoc)) == 10 < everything
    assert any("Showing the top 10" in i.value for i in at.info)


# -- Compare ------------------------------------------------------------------------------------

def test_compare_page_shows_the_redis_chain_side_by_side(monkeypatch, sample_workspace):
    from workbench.retrieve import retrieve

    at = page(open_app(monkeypatch, sample_workspace.path), "compare")
    assert at.text_input(key="keep.compare.question").value == REDIS_QUESTION
    assert [h.value for h in at.subheader][:3] == ["graphrag", "hybrid", "paths"]
    shown = texts(at)
    k = sample_workspace.settings.retrieval.k
    for mode in ("graphrag", "hybrid", "paths"):
        for hit in retrieve(sample_workspace, REDIS_QUESTION, mode, k).hits:
            assert hit.text[:200] in shown
    impact = dataframes(at)[0]
    assert {"Auth Service", "login flow", "token cache"} <= set(impact["entity"])
    assert "★" in shown and "mode used: full_graphrag" in shown
    assert "Survivors (not impacted)" in shown
    assert len(at.expander) == 3 and "# Question" in at.code[0].value


def test_compare_page_state_survives_navigation(monkeypatch, sample_workspace):
    at = page(open_app(monkeypatch, sample_workspace.path), "compare")
    at.text_input(key="keep.compare.question").input("Who owns the auth service?")
    at.multiselect(key="keep.compare.modes").set_value(["keyword"]).run()
    page(at, "graph")
    page(at, "compare")
    assert at.text_input(key="keep.compare.question").value == "Who owns the auth service?"
    assert at.multiselect(key="keep.compare.modes").value == ["keyword"]


# -- Evaluate -----------------------------------------------------------------------------------

def test_evaluate_page_runs_the_sample_tasks_with_charts_and_downloads(monkeypatch, sample_workspace):
    at = page(open_app(monkeypatch, sample_workspace.path), "evaluate")
    assert "press Run" in texts(at)
    at.button(key="eval.run").click().run()
    assert not at.exception and not at.error
    summary, cases = dataframes(at)
    assert set(summary["strategy"]) == {"vector", "expand", "graphrag"}
    assert "d_recall_low" in summary.columns and len(cases) == 3 * len(set(cases["task"]))
    assert len(at.get("plotly_chart")) == 3
    assert [b.proto.label for b in at.get("download_button")] == ["Download cases (CSV)", "Download report (Markdown)"]
    assert len(at.expander) == 3
