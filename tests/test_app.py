"""AppTest for every page of the Streamlit app, on real workspaces (no JavaScript runs here)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from tests.conftest import HOSTILE, REDIS_QUESTION, ROOT

PAGES = ["corpus", "canonicalization", "graph", "communities", "timeline", "compare", "evaluate"]


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
def twins_workspace(make_workspace, tmp_path):
    """Two spellings of the Auth Service, its Chinese name, and the folder's own task set."""
    corpus = tmp_path / "twins"
    corpus.mkdir()
    (corpus / "auth.md").write_text("---\ntitle: Auth notes\n---\nThe Auth Service depends on the token cache.\n\n"
                                    "The auth-service is deployed in Kubernetes.\n", encoding="utf-8")
    (corpus / "zh.md").write_text("---\ntitle: 认证说明\n---\n认证服务使用令牌缓存。登录流程依赖认证服务。\n", encoding="utf-8")
    (corpus / "tasks.yaml").write_text("- id: t1\n  question: What does the Auth Service depend on?\n  gold: [auth.md]\n",
                                       encoding="utf-8")
    ws = make_workspace("twins-ws")
    ws.corpus = corpus
    return ws


def one_sentence_workspace(make_workspace, tmp_path, name: str):
    """A workspace holding one document of one sentence (a relation between two services)."""
    corpus = tmp_path / "c"
    corpus.mkdir()
    (corpus / "a.md").write_text("The login flow depends on the auth service.\n", encoding="utf-8")
    ws = make_workspace(name)
    ws.ingest([corpus])
    return ws


def submit(at, label):
    next(b for b in at.button if b.label == label).click().run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    return at


# -- Corpus --------------------------------------------------------------------------------

def test_corpus_page_counts_what_the_workspace_holds(monkeypatch, sample_workspace):
    at = open_app(monkeypatch, sample_workspace.path)
    stats = sample_workspace.stats()
    shown = {m.label: m.value for m in at.metric}
    assert shown == {"Documents": str(stats["documents"]), "Chunks": str(stats["chunks"]),
                     "Entities": str(stats["entities"]), "Edges": str(stats["edges"])}
    documents = dataframes(at)[0]
    assert sorted(documents["document"]) == sorted(d.id for d in sample_workspace.documents())


def test_corpus_page_shows_the_record_while_the_graph_is_still_being_built(monkeypatch, make_workspace, tmp_path):
    # On 60k passages the graph takes a minute to build: the front page must not wait for it.
    import threading

    import ui
    import workbench.workspace.derivation as workspace_module

    ws = one_sentence_workspace(make_workspace, tmp_path, "slow-graph")
    expected = ws.stats()
    (ws.path / "graph.npz").unlink()  # no snapshot to load (a workspace made before them): the graph is derived
    release = threading.Event()

    def slowed(real):
        def slow(*args, **kwargs):
            release.wait(60)
            return real(*args, **kwargs)
        return slow

    # A process that can take the write lock follows the record from the kept rows (follow_record),
    # one that cannot derives from the whole record (assemble_graph): both wait.
    for name in ("assemble_graph", "follow_record"):
        monkeypatch.setattr(workspace_module, name, slowed(getattr(workspace_module, name)))
    monkeypatch.setattr(ui, "GRAPH_WAIT_S", 0.2)
    try:
        at = open_app(monkeypatch, ws.path)
        assert {m.label: m.value for m in at.metric} == {"Documents": "1", "Chunks": str(expected["chunks"]),
                                                         "Entities": "…", "Edges": "…"}
        assert "building the context graph" in texts(at)
    finally:
        release.set()
    at.run()
    assert not at.exception
    assert {m.label: m.value for m in at.metric}["Entities"] == str(expected["entities"])


def test_the_warm_up_starts_once_the_first_page_has_run(monkeypatch, make_workspace, tmp_path):
    # Started with the page, the warm-up (graph, name index, BM25) held the interpreter while the
    # page ran: at 61k passages the first page took 4.8-5.9 s with it beside, 3.0-3.7 s after it.
    import threading
    import time

    import ui
    import workbench.retrieve.cache as cache

    ws = one_sentence_workspace(make_workspace, tmp_path, "warm-after")
    drawn, calls = threading.Event(), []
    real_metrics = ui.workspace_metrics

    def metrics(workspace):
        shown = real_metrics(workspace)
        drawn.set()
        return shown

    def warm(workspace):
        calls.append((drawn.is_set(), threading.current_thread().name, Path(workspace.path)))

    monkeypatch.setattr(ui, "workspace_metrics", metrics)
    monkeypatch.setattr(cache, "warm", warm)
    at = open_app(monkeypatch, ws.path)
    page(at, "graph")  # more runs start no second warm-up
    deadline = time.monotonic() + 30
    while not calls and time.monotonic() < deadline:
        time.sleep(0.05)
    time.sleep(0.2)
    assert calls == [(True, "warm-workspace", Path(ws.path))]


def test_empty_workspace_offers_the_sample_corpus_and_no_page_fails(monkeypatch, tmp_path):
    at = open_app(monkeypatch, tmp_path / "empty")
    assert "The workspace is empty" in texts(at)
    assert [b.label for b in at.button if b.key == "corpus.ingest_sample"] == ["Ingest the sample corpus"]
    for name in PAGES[1:]:
        page(at, name)
        assert "The workspace is empty" in texts(at), name


def test_removing_a_document_asks_first_and_cancel_keeps_it(monkeypatch, hostile_workspace):
    from ui import md_text

    at = open_app(monkeypatch, hostile_workspace.path)
    doomed = next(d.id for d in hostile_workspace.documents() if d.id.endswith("redis.md"))
    at.multiselect(key="corpus.doomed").set_value([doomed]).run()
    # The name is shown as written: its Markdown marks escaped (md_text), so "." and "-" stay literal.
    assert any(w.value.startswith(f"Remove {md_text(doomed)}?") for w in at.warning)
    assert doomed in [d.id for d in hostile_workspace.documents()]  # choosing is not removing
    at.button(key="corpus.cancel").click().run()
    assert doomed in [d.id for d in hostile_workspace.documents()] and not at.warning
    at.multiselect(key="corpus.doomed").set_value([doomed]).run()
    at.button(key="corpus.remove").click().run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    assert doomed not in [d.id for d in hostile_workspace.documents()]
    assert doomed not in list(dataframes(at)[0]["document"])


def test_ingesting_a_folder_with_its_task_set_warns_about_nothing(monkeypatch, twins_workspace):
    monkeypatch.chdir(twins_workspace.corpus.parent)  # the folder the app is started in: typed paths below it
    at = open_app(monkeypatch, twins_workspace.path)
    at.text_input(key="keep.corpus.folder").input(str(twins_workspace.corpus))
    at.button(key="corpus.ingest_folder").click().run()
    assert not at.exception and "2 added" in texts(at)
    assert not [w.value for w in at.warning]
    assert any("Not ingested, as expected: " in c.value and "tasks\\.yaml" in c.value for c in at.caption)


# -- Canonicalization ------------------------------------------------------------------------

def test_canonicalization_page_lists_merges_with_forms_and_samples(monkeypatch, sample_workspace):
    at = page(open_app(monkeypatch, sample_workspace.path), "canonicalization")
    merges = dataframes(at)[0]
    expected = {(m.canonical, f.form) for m in sample_workspace.merges() for f in m.surface_forms}
    assert set(zip(merges["canonical"], merges["surface form"])) == expected
    assert all(merges["sample chunk"].str.len() > 0)
    assert "Suggested merges" in [h.value for h in at.subheader]
    # Every form lists all its chunks, and its own reason.
    auth = {f.form: f for m in sample_workspace.merges() if m.key == "authservice" for f in m.surface_forms}
    rows = merges[merges["canonical"] == "Auth Service"].set_index("surface form")
    assert {form: rows.loc[form, "chunks"] for form in auth} == {f: ", ".join(x.chunk_ids) for f, x in auth.items()}
    assert rows.loc["Auth Service", "why"] == "canonical: the most frequent form"
    assert rows.loc["auth-service", "why"] == "same name key as Auth Service (authservice)"


def test_chinese_twins_are_suggested_with_why(monkeypatch, sample_workspace):
    at = page(open_app(monkeypatch, sample_workspace.path), "canonicalization")
    suggested = [m.value for m in at.markdown if "↔" in m.value]
    assert any("Auth Service  ↔  认证服务" in m and "translation" in m and "认证 = auth" in m for m in suggested)
    assert any("token cache  ↔  令牌缓存" in m for m in suggested)


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
    log = dataframes(at)[-1]
    assert list(log["change"]) == ["Merged “login service” into “Redis notes”"]
    assert re.fullmatch(r"\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}", log.loc[0, "when"])  # local time, not an epoch


def test_a_split_can_be_undone_and_merging_a_split_form_again_works(monkeypatch, twins_workspace):
    ws = twins_workspace
    ws.ingest([ws.corpus])
    at = page(open_app(monkeypatch, ws.path), "canonicalization")
    entities = len(ws.graph)
    next(sb for sb in at.selectbox if sb.label == "Surface form").select("auth-service")  # the split form's surface form
    submit(at, "Split")
    assert len(ws.graph) == entities + 1 and ws.graph.resolve("auth-service") != ws.graph.resolve("Auth Service")
    # Merging the two names again is no longer refused as "already one name": it undoes the split.
    at.text_input[1].input("auth-service")
    at.text_input[2].input("Auth Service")
    submit(at, "Add alias")
    assert len(ws.graph) == entities and ws.graph.resolve("auth-service") == ws.graph.resolve("Auth Service")
    # Split again, then undo it from the log.
    next(sb for sb in at.selectbox if sb.label == "Surface form").select("auth-service")
    submit(at, "Split")
    assert len(ws.graph) == entities + 1
    split_entry = max(e["id"] for e in ws.corrections.merge_log() if e["action"] == "split")
    undo = next(sb for sb in at.selectbox if sb.label == "Undo a change")
    undo.select(next(o for o in undo.options if o.startswith(f"#{split_entry}:")))
    submit(at, "Undo")
    assert len(ws.graph) == entities and ws.graph.resolve("auth-service") == ws.graph.resolve("Auth Service")
    log = dataframes(at)[-1]
    assert log.loc[0, "change"] == f"Undid #{split_entry}: folded “auth-service” back into its entity"
    assert log.set_index("#").loc[split_entry, "status"] == f"undone by #{log.loc[0, '#']}"


def test_accepting_a_chinese_twin_merges_it_and_undo_separates_it_again(monkeypatch, twins_workspace):
    ws = twins_workspace
    ws.ingest([ws.corpus])
    at = page(open_app(monkeypatch, ws.path), "canonicalization")
    before = len(ws.graph)
    assert ws.graph.resolve("认证服务") != ws.graph.resolve("Auth Service")
    row = next(i for i, m in enumerate(m.value for m in at.markdown if "↔" in m.value) if "认证服务" in m)
    at.button(key=f"canon.accept.{row}").click().run()
    assert not at.exception and ws.graph.resolve("认证服务") == ws.graph.resolve("Auth Service")
    assert len(ws.graph) == before - 1
    assert dataframes(at)[-1].loc[0, "change"] == "Accepted a suggestion: merged “认证服务” into “Auth Service”"
    undo = next(sb for sb in at.selectbox if sb.label == "Undo a change")
    undo.select(undo.options[0])
    submit(at, "Undo")
    assert ws.graph.resolve("认证服务") != ws.graph.resolve("Auth Service") and len(ws.graph) == before


# -- Graph --------------------------------------------------------------------------------------

def test_graph_page_draws_offline_with_vis_network_inline(monkeypatch, sample_workspace):
    at = page(open_app(monkeypatch, sample_workspace.path), "graph")
    at.toggle(key="keep.graph.noise").set_value(True).run()  # note titles and dates drawn too
    srcdoc = at.get("iframe")[0].proto.srcdoc
    assert "new vis.Network(" in srcdoc and "vis-network" in srcdoc
    assert not re.search(r"<script[^>]*\bsrc\s*=\s*[\"']?https?://", srcdoc, re.IGNORECASE)
    assert not re.search(r"<link[^>]*\bhref\s*=\s*[\"']?https?://", srcdoc, re.IGNORECASE)
    shown = {n["label"] for n in node_data(srcdoc)}
    relation_ends = {sample_workspace.graph.name(e.source) for e in sample_workspace.graph.edges()}
    assert relation_ends <= shown


def test_graph_page_shows_a_hostile_entity_name_as_written_escaped_once(monkeypatch, hostile_workspace):
    at = page(open_app(monkeypatch, hostile_workspace.path), "graph")
    at.toggle(key="keep.graph.noise").set_value(True).run()  # note titles and dates drawn too
    srcdoc = at.get("iframe")[0].proto.srcdoc
    assert "<img src=x" not in srcdoc and "alert(2)</script" not in srcdoc
    nodes = node_data(srcdoc)  # the JSON, decoded: what vis-network draws as text
    assert any(n["label"].startswith("<img src=x onerror=alert(1") for n in nodes)
    assert any(n["label"] == "2)</script" for n in nodes)  # an extracted name, drawn as written
    assert not any("&lt;" in n["label"] or "&lt;" in n["title"] for n in nodes)
    edges = json.loads(re.search(r"edges = new vis\.DataSet\((\[.*?\])\);", srcdoc, re.DOTALL).group(1))
    assert edges and not any("&lt;" in e["title"] or "&gt;" in e["title"] for e in edges)
    assert any(e["title"].startswith(f"{HOSTILE} -DEPENDS_ON-> Redis notes") for e in edges)


def test_graph_page_has_a_legend_and_a_weight_slider_that_fits_the_data(monkeypatch, sample_workspace):
    from workbench.views.graph_html import type_color

    at = page(open_app(monkeypatch, sample_workspace.path), "graph")
    at.toggle(key="keep.graph.noise").set_value(True).run()  # note titles and dates drawn too
    srcdoc = at.get("iframe")[0].proto.srcdoc
    legend = srcdoc[srcdoc.index('<div id="legend"'):srcdoc.index("</div>", srcdoc.index('<div id="legend"'))]
    shown_types = {n["color"]["background"] for n in node_data(srcdoc)}
    for entity_type in {e.type for e in sample_workspace.graph.entities() if e.key in {
            k for edge in sample_workspace.graph.edges() for k in (edge.source, edge.target)}}:
        assert f"{entity_type} (" in legend and type_color(entity_type) in legend and type_color(entity_type) in shown_types
    top = max(e.weight for e in sample_workspace.graph.edges())
    assert at.slider(key="keep.graph.min_weight.relations").max == top == 2
    types = at.multiselect(key="keep.graph.types").options
    assert set(types) == {e.type for e in sample_workspace.graph.entities()}
    assert any(i.value.startswith("Hidden: ") and "with no edge" in i.value for i in at.info)


def test_graph_page_shows_the_chunks_behind_a_nodes_edges(monkeypatch, sample_workspace):
    at = page(open_app(monkeypatch, sample_workspace.path), "graph")
    at.toggle(key="keep.graph.noise").set_value(True).run()  # note titles and dates drawn too
    at.selectbox(key="keep.entity").select("redis").run()
    assert not at.exception
    neighbours, evidence = dataframes(at)
    expected = {name for name, _ in sample_workspace.graph.neighbors("redis", direction="both").entities}
    assert set(neighbours["entity"]) == expected
    row = neighbours.set_index("entity").loc["token cache"]
    assert (row["relation"], row["direction"], row["weight"]) == ("backed_by", "← in", 1)
    redis = next(n for n in node_data(at.get("iframe")[0].proto.srcdoc) if n["label"] == "Redis")
    assert redis["borderWidth"] == 5  # the picked entity is highlighted
    chunk_ids = {c for e in sample_workspace.graph.neighbors("redis", direction="both").edges for c in e.chunk_ids}
    assert set(evidence["chunk"]) == chunk_ids
    assert all(evidence["text"].str.len() > 0)


def test_graph_filters_change_what_is_drawn(monkeypatch, sample_workspace):
    at = page(open_app(monkeypatch, sample_workspace.path), "graph")
    everything = len(node_data(at.get("iframe")[0].proto.srcdoc))
    at.number_input(key="keep.graph.top_n").set_value(10).run()
    assert len(node_data(at.get("iframe")[0].proto.srcdoc)) == 10 < everything
    assert any(f"{everything - 10} below the top 10 by degree" in i.value for i in at.info)
    at.toggle(key="keep.graph.chunks").set_value(True).run()
    nodes = node_data(at.get("iframe")[0].proto.srcdoc)
    chunk_nodes = [n for n in nodes if n.get("shape") == "square"]
    assert len(nodes) == 10 + len(chunk_nodes) and chunk_nodes
    assert all(n["title"].startswith("chunk ") for n in chunk_nodes)


# -- Compare ------------------------------------------------------------------------------------

def test_compare_page_shows_the_redis_chain_side_by_side(monkeypatch, sample_workspace):
    from ui import md_text
    from workbench.retrieve import retrieve
    from workbench.views.retrieval import longest_chains

    at = page(open_app(monkeypatch, sample_workspace.path), "compare")
    assert at.text_input(key="keep.compare.question").value == REDIS_QUESTION
    assert [h.value for h in at.subheader][:3] == ["graphrag", "hybrid", "paths"]
    shown = texts(at)
    k = sample_workspace.settings.retrieval.k
    results = {mode: retrieve(sample_workspace, REDIS_QUESTION, mode, k) for mode in ("graphrag", "hybrid", "paths")}
    for mode, result in results.items():
        assert result.hits, mode
        for hit in result.hits:
            assert hit.text[:200] in shown and md_text(hit.why.describe()) in shown  # the why, as a sentence
    impact = next(f for f in dataframes(at) if "entity" in f.columns and "path" in f.columns)
    assert {"Auth Service", "login flow", "token cache"} <= set(impact["entity"])
    assert "★" in shown and "mode used: full_graphrag" in shown
    assert "Survivors (not impacted)" in shown
    assert len([e for e in at.expander if e.label.startswith("Assembled context")]) == 3
    assert "# Question" in at.code[0].value
    for hit in results["hybrid"].hits:
        assert f"chunk {hit.chunk_id}" in shown and md_text(hit.document) in shown
    assert "Fused by RRF" in shown and "rrf=" not in shown and "rrf:" not in shown
    overlap = dataframes(at)[0]
    assert list(overlap.columns) == ["chunk", "document", "strategies", "graphrag", "hybrid", "paths"]
    assert "What graphrag walked" in [h.value for h in at.subheader]
    assert "Structural reading: impact (the cited paths below answer the question)." in shown
    walked = results["graphrag"].graph_context
    assert walked.triples and walked.paths and walked.seeds
    triples = next(f for f in dataframes(at) if "relation" in f.columns and "documents" in f.columns
                   and "target" in f.columns and len(f) == len(walked.triples))
    assert set(triples["relation"]) == {t.relation for t in walked.triples}
    # graphrag's own seeds and cited paths, each hop with the chunks that state it, in its column.
    seeds = next(c.value for c in at.caption if c.value.startswith("seeds: "))
    assert all(md_text(s.entity) in seeds for s in walked.seeds)
    first = longest_chains(walked.paths)[0]  # the whole chains first, not the one-hop paths they extend
    column = next(t.value for t in at.text if t.value.startswith("Cited path 1: "))
    assert " → ".join(first.nodes) in column
    assert all(f"{h.source} -{h.relation}-> {h.target} [{', '.join(h.chunks)}]" in column for h in first.hops)
    assert at.get("download_button") and not at.exception


def test_compare_page_state_survives_navigation(monkeypatch, sample_workspace):
    at = page(open_app(monkeypatch, sample_workspace.path), "compare")
    at.text_input(key="keep.compare.question").input("Who owns the auth service?")
    at.multiselect(key="keep.compare.modes").set_value(["keyword"]).run()
    page(at, "graph")
    page(at, "compare")
    assert at.text_input(key="keep.compare.question").value == "Who owns the auth service?"
    assert at.multiselect(key="keep.compare.modes").value == ["keyword"]


# -- Evaluate -----------------------------------------------------------------------------------

def test_evaluate_page_runs_with_an_estimate_ci_strings_and_a_saved_run_comparison(monkeypatch, make_workspace):
    from workbench.evaluate.report import list_runs

    ws = make_workspace("eval-ws")
    ws.ingest([ROOT / "sample_corpus"])
    at = page(open_app(monkeypatch, ws.path), "evaluate")
    shown = texts(at)
    assert "press Run" in shown and "few seconds" not in shown
    assert "36 tasks × 4 strategies = 144 cases" in shown and "No saved run to estimate the time from" in shown
    at.button(key="eval.run").click().run()
    assert not at.exception and not at.error
    summary, deltas, cases = dataframes(at)[:3]
    assert set(summary["strategy"]) == {"direct", "expand", "expand-comention", "graphrag"}
    assert len(deltas) == 3 * len(summary)  # every metric's difference, a row a strategy and metric
    ci = summary.set_index("strategy")["Δ recall [95% CI]"]
    assert ci["direct"] == "+0.00 [0.00, 0.00]"
    assert all(re.fullmatch(r"[+-]\d\.\d\d \[-?\d\.\d\d, -?\d\.\d\d\]", v) for v in ci)
    assert not [c for c in summary.columns if c.startswith("d_")] and len(cases) == 4 * len(set(cases["task"]))
    assert len(at.get("plotly_chart")) == 3
    bars = json.loads(at.get("plotly_chart")[0].proto.spec)["data"][0]
    assert bars["name"] == "Δ recall" and bars["y"] and "error_y" in bars  # the CI is plotted on the difference
    assert [b.proto.label for b in at.get("download_button")] == ["Download cases (CSV)", "Download report (Markdown)",
                                                                   "Download report (HTML, opens offline)"]
    assert len(at.expander) == 5  # every metric's difference, then one per strategy
    assert "Run the evaluation again" in texts(at)  # one saved run: nothing to compare yet
    assert "This run has no answer stage: retrieval only." in texts(at)  # no model configured here

    at.multiselect(key="keep.eval.modes").set_value(["vector", "graphrag"])
    at.button(key="eval.run").click().run()
    assert not at.exception and not at.error
    assert "At the pace of the runs saved here, about" in texts(at)
    runs = list_runs(ws.path)
    assert len(runs) == 2 and runs[0]["seconds"] > 0
    saved = next(f for f in dataframes(at) if "run" in f.columns)
    assert list(saved["run"]) == [runs[1]["run_id"], runs[0]["run_id"]]
    comparison = dataframes(at)[-1]
    assert list(comparison["strategy"]) == ["direct", "graphrag"]  # the strategies both runs have
    assert comparison.set_index("strategy").loc["direct", "Δ recall (B − A) [95% CI]"] == "+0.00 [0.00, 0.00]"
    assert "Download the comparison (CSV)" in [b.proto.label for b in at.get("download_button")]


def test_evaluate_page_shows_the_answer_stage_apart_from_retrieval(monkeypatch, make_workspace, tmp_path):
    import threading
    from http.server import BaseHTTPRequestHandler, HTTPServer

    class Canned(BaseHTTPRequestHandler):  # an OpenAI-compatible server that answers without citing
        def do_POST(self):
            self.rfile.read(int(self.headers["Content-Length"]))
            payload = json.dumps({"choices": [{"message": {"role": "assistant",
                                                           "content": "The token cache is backed by Redis."}}]}).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

        def log_message(self, *args):
            pass

    server = HTTPServer(("127.0.0.1", 0), Canned)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    monkeypatch.setenv("WORKBENCH_LLM_BASE_URL", f"http://127.0.0.1:{server.server_address[1]}/v1")
    monkeypatch.setenv("WORKBENCH_LLM_MODEL", "canned")
    corpus = tmp_path / "c"
    corpus.mkdir()
    (corpus / "redis.md").write_text("# Redis\n\nThe token cache is backed by Redis.\n", encoding="utf-8")
    tasks = tmp_path / "tasks.yaml"
    tasks.write_text("- {id: backed, question: 'What backs the token cache?', gold_documents: [redis.md]}\n"
                     "- {id: cost, question: 'What does Redis cost?', gold_documents: [redis.md], tags: [unanswerable]}\n",
                     encoding="utf-8")
    monkeypatch.chdir(tmp_path)  # the app's root, where the task file is typed from
    ws = make_workspace("answers-ws")
    ws.ingest([corpus])
    try:
        at = page(open_app(monkeypatch, ws.path), "evaluate")
        at.text_input(key="keep.eval.tasks").set_value(str(tasks)).run()
        at.multiselect(key="keep.eval.modes").set_value(["keyword"]).run()
        at.checkbox(key="keep.eval.answers").check().run()
        at.button(key="eval.run").click().run()
    finally:
        server.shutdown()
        server.server_close()
    assert not at.exception and not at.error
    assert "canned answered every case from its cited context" in texts(at)
    frames = dataframes(at)
    summary = next(f for f in frames if "unanswerable ok" in f.columns)
    assert set(summary["strategy"]) == {"direct", "keyword"}
    assert list(summary["no citation"]) == [2, 2] and list(summary["unanswerable ok"]) == ["0/1", "0/1"]
    assert list(summary["passed"]) == ["0/2", "0/2"]
    retrieval = frames[0]
    assert "recall" in retrieval.columns and "coverage" not in retrieval.columns  # the two stages apart


def searched_entity_box(monkeypatch, workspace, page_name: str, typed: str):
    """``page_name`` opened with a listing limit of 20 names, then ``typed`` into its search box:
    the page and the names its entity box lists (none before anything is typed)."""
    from workbench.views import graph as graph_views

    monkeypatch.setattr(graph_views, "MAX_LISTED_NAMES", 20)
    at = page(open_app(monkeypatch, workspace.path), page_name)
    assert len(workspace.graph) > 20 and at.selectbox(key="keep.entity").options == []
    at.text_input(key=f"{page_name}.find").input(typed).run()
    listed = at.selectbox(key="keep.entity").options
    assert listed and all(typed.casefold() in name.casefold() for name in listed)
    return at, listed


def test_a_graph_too_large_to_list_is_searched_by_typed_text(monkeypatch, sample_workspace):
    # Past MAX_LISTED_NAMES the search box lists only the names matching the typed text.
    at, listed = searched_entity_box(monkeypatch, sample_workspace, "graph", "REDI")
    assert listed[0] == "Redis"
    at.selectbox(key="keep.entity").select("redis").run()
    neighbours, _ = dataframes(at)
    assert "token cache" in set(neighbours["entity"])
    at.text_input(key="graph.find").input("token").run()  # looking for another keeps the one shown
    assert not at.exception and at.selectbox(key="keep.entity").value == "redis"
    assert at.selectbox(key="keep.entity").options[0] == "Redis"
