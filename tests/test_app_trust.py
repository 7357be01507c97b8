"""AppTests of the app an analyst trusts (issue 56): what is shown is what is cited, uploads are
documents like any other, and a view is a link that survives a reload."""

from __future__ import annotations

import datetime as dt
import re
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from tests.conftest import REDIS_QUESTION, ROOT
from tests.test_app import dataframes, node_data, open_app, page, texts


def edge_data(srcdoc: str) -> list[dict]:
    import json

    found = re.search(r"edges = new vis\.DataSet\((\[.*?\])\);", srcdoc, re.DOTALL)
    return json.loads(found.group(1))


# -- 1. Canonicalization: the preview shows the pair chosen ------------------------------------

def test_the_merge_preview_keeps_its_pair_when_another_suggestion_is_accepted(monkeypatch, sample_private):
    ws = sample_private
    at = page(open_app(monkeypatch, ws.path), "canonicalization")
    found = ws.corrections.suggestions()
    assert len(found) >= 3
    chosen = (found[2].a, found[2].b)
    at.selectbox(key="canon.preview").set_value(chosen).run()
    at.button(key="canon.accept.0").click().run()
    assert not at.exception
    assert ws.graph.resolve(found[0].a) == ws.graph.resolve(found[0].b)  # suggestion 1 was accepted
    assert at.selectbox(key="canon.preview").value == chosen
    canonical, alias = sorted(chosen, key=lambda n: -{e.name: e.mentions for e in ws.entities()}.get(n, 0))
    previews = [c.value for c in at.caption if c.value.startswith("Merging ")]
    assert len(previews) == 1
    assert set(re.findall(r"Merging (.+) into (.+) moves", previews[0].replace("\\", ""))[0]) == set(chosen)


def test_the_preview_empties_when_its_own_pair_is_accepted(monkeypatch, sample_private):
    ws = sample_private
    at = page(open_app(monkeypatch, ws.path), "canonicalization")
    first = ws.corrections.suggestions()[0]
    at.selectbox(key="canon.preview").set_value((first.a, first.b)).run()
    at.button(key="canon.accept.0").click().run()
    assert not at.exception
    assert at.selectbox(key="canon.preview").value is None
    assert not [c.value for c in at.caption if c.value.startswith("Merging ")]


# -- 2. Uploads ------------------------------------------------------------------------------------

def test_uploads_keep_their_folders_and_same_bytes_are_left_untouched(tmp_path):
    from workbench.ingest.uploads import save_uploads

    folder = tmp_path / "uploads"
    files = [("notes/a.md", b"A"), ("notes/deep/b.md", b"B"), ("loose.txt", b"C")]
    saved = save_uploads(folder, files)
    assert saved.paths == [folder / "notes", folder / "loose.txt"] and saved.saved == 3
    assert (folder / "notes" / "deep" / "b.md").read_bytes() == b"B"
    before = (folder / "notes" / "a.md").stat().st_mtime_ns
    again = save_uploads(folder, files)
    assert again.saved == 0 and again.same_path == 3 and again.paths == saved.paths
    assert (folder / "notes" / "a.md").stat().st_mtime_ns == before


def test_an_upload_holding_a_stored_files_bytes_is_not_saved(tmp_path):
    import hashlib

    from workbench.ingest.uploads import save_uploads

    stored = {hashlib.sha256(b"same text").hexdigest(): "sample_corpus/redis.md"}
    saved = save_uploads(tmp_path, [("copy of redis.md", b"same text"), ("new.md", b"other")], stored)
    assert saved.identical == [("copy of redis.md", "sample_corpus/redis.md")]
    assert saved.paths == [tmp_path / "new.md"] and not (tmp_path / "copy of redis.md").exists()


@given(st.text())
def test_an_upload_is_never_saved_outside_its_folder(name):
    from workbench.ingest.uploads import upload_parts

    parts = upload_parts(name)
    assert parts and all(part not in ("", ".", "..") and "/" not in part and "\\" not in part for part in parts)
    target = Path("/ws/uploads").joinpath(*parts)
    assert Path("/ws/uploads") in target.parents


def upload(at, files: list[tuple[str, bytes]], key: str = "corpus.uploads"):
    """Upload ``files`` on the Corpus page (nothing in its other box) and press its ingest button."""
    for box in ("corpus.uploads", "corpus.upload_folder"):
        at.file_uploader(key=box).set_value([(name, data, "text/markdown") for name, data in files] if box == key
                                            else None)
    at.run()
    at.button(key="corpus.ingest_uploads").click().run()
    assert not at.exception, at.exception
    return texts(at)


FOLDER = [("team/auth.md", b"---\ntitle: Auth notes\n---\nThe Auth Service depends on the token cache.\n"),
          ("team/ops/redis.md", b"---\ntitle: Redis notes\n---\nThe token cache runs on Redis.\n")]


def test_the_same_files_uploaded_twice_are_reported_unchanged_with_their_folders(monkeypatch, make_workspace):
    ws = make_workspace("uploads-ws")
    at = open_app(monkeypatch, ws.path)
    assert "2 added" in upload(at, FOLDER, key="corpus.upload_folder")
    assert sorted(d.id for d in ws.documents()) == ["team/auth.md", "team/ops/redis.md"]
    again = open_app(monkeypatch, ws.path)  # another session (a reload), the same folder
    assert "0 added, 0 updated, 2 unchanged" in upload(again, FOLDER, key="corpus.upload_folder")
    assert len(ws.documents()) == 2
    # The same text under another name: recognised, not added.
    shown = upload(again, [("copy.md", FOLDER[0][1])])
    assert "1 uploaded file unchanged" in shown and "team/auth\\.md" in shown and "Ingested" not in shown
    assert len(ws.documents()) == 2


def test_the_ingest_time_is_the_wait(monkeypatch, make_workspace):
    import time

    import workbench.workspace.workspace as workspace_module

    ws = make_workspace("slow-upload-ws")
    real = workspace_module.Workspace.ingest

    def slow(self, *args, **kwargs):
        time.sleep(1.5)  # a wait outside the pipeline's own clock (the write lock, say)
        return real(self, *args, **kwargs)

    monkeypatch.setattr(workspace_module.Workspace, "ingest", slow)
    shown = upload(open_app(monkeypatch, ws.path), [("a.md", b"The login flow depends on the auth service.\n")])
    assert float(re.search(r"Ingested in ([\d.]+) s", shown).group(1)) >= 1.5


def test_several_documents_are_removed_at_once(monkeypatch, make_workspace, tmp_path):
    from tests.conftest import make_corpus

    ws = make_workspace("three-ws")
    ws.ingest([make_corpus(tmp_path / "three", 3)])
    at = open_app(monkeypatch, ws.path)
    doomed = [d.id for d in ws.documents()][:2]
    at.multiselect(key="corpus.doomed").set_value(doomed).run()
    assert any(w.value.startswith("Remove these 2 documents?") for w in at.warning)
    at.button(key="corpus.remove").click().run()
    assert not at.exception and not at.error
    assert len(ws.documents()) == 1 and not set(doomed) & {d.id for d in ws.documents()}
    assert at.multiselect(key="corpus.doomed").value == [] and not at.warning


def test_hit_cards_show_the_document_title(monkeypatch, sample_workspace):
    from tests.test_app_analyst import compare

    at = page(open_app(monkeypatch, sample_workspace.path), "compare")
    compare(at, REDIS_QUESTION, ["keyword"])
    titles = {d.id: d.title for d in sample_workspace.documents()}
    cards = [m.value for m in at.markdown if m.value.startswith("**#")]
    assert cards
    for card in cards:
        heading = card.split("**")[1]
        assert any(heading.endswith(title.replace("-", "\\-").replace(".", "\\.").replace(":", "\\:"))
                   for title in titles.values() if title), card


# -- 5. A view is a link ------------------------------------------------------------------------------

def _linked_app(monkeypatch, workspace_path, page_name: str, params: dict):
    from streamlit.testing.v1 import AppTest

    monkeypatch.setenv("WORKBENCH_WORKSPACE", str(workspace_path))
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=180)
    at.switch_page(f"pages/{page_name}.py")
    for name, value in params.items():
        at.query_params[name] = value
    at.run()
    assert not at.exception, at.exception
    return at


def test_a_compare_link_opens_the_same_question_modes_and_days(monkeypatch, sample_workspace):
    at = _linked_app(monkeypatch, sample_workspace.path, "compare",
                     {"q": "Where are web sessions stored?", "modes": ["keyword", "vector"], "as_of": "2024-07-15",
                      "k": "3"})
    assert at.text_input(key="keep.compare.question").value == "Where are web sessions stored?"
    assert at.multiselect(key="keep.compare.modes").value == ["keyword", "vector"]
    assert at.date_input(key="keep.compare.as_of").value == dt.date(2024, 7, 15)
    assert at.slider(key="keep.compare.k").value == 3
    assert [h.value for h in at.subheader][:2] == ["keyword", "vector"]  # answered at once, as shown before
    # What the person changes goes back into the link.
    at.text_input(key="keep.compare.question").input("Who owns the auth service?").run()
    assert at.query_params["q"] == "Who owns the auth service?"
    assert at.query_params["modes"] == ["keyword", "vector"] and at.query_params["as_of"] == "2024-07-15"


def test_a_graph_link_opens_the_same_view_entity_and_steps(monkeypatch, sample_workspace):
    at = _linked_app(monkeypatch, sample_workspace.path, "graph",
                     {"view": "co-mention", "entity": "redis", "steps": "1"})
    assert at.radio(key="keep.graph.view").value == "co-mention"
    assert at.selectbox(key="keep.entity").value == "redis"
    assert at.slider(key="keep.graph.hops").value == 1
    at.slider(key="keep.graph.hops").set_value(2).run()
    assert at.query_params["steps"] == "2" and at.query_params["entity"] == "redis"


def test_a_link_with_unknown_values_opens_the_page_without_them(monkeypatch, sample_workspace):
    at = _linked_app(monkeypatch, sample_workspace.path, "graph", {"view": "nonsense", "entity": "no such", "steps": "9"})
    assert at.radio(key="keep.graph.view").value == "relations" and at.selectbox(key="keep.entity").value is None


def test_the_app_page_of_the_docs_says_how_to_share_a_view():
    text = (ROOT / "docs" / "app.md").read_text(encoding="utf-8")
    assert "**Share a view**" in text and "/compare?q=" in text and "/graph?view=" in text


# -- 3. Graph: what is drawn is what is listed ---------------------------------------------------------

def test_the_co_mention_table_lists_exactly_the_edges_drawn(monkeypatch, sample_workspace):
    at = page(open_app(monkeypatch, sample_workspace.path), "graph")
    at.radio(key="keep.graph.view").set_value("co-mention").run()
    at.selectbox(key="keep.entity").select("redis").run()
    srcdoc = at.get("iframe")[0].proto.srcdoc
    nodes = node_data(srcdoc)
    redis = next(n["id"] for n in nodes if n["label"] == "Redis")
    labels = {n["id"]: n["label"] for n in nodes}
    drawn = sorted(labels[e["to"] if e["from"] == redis else e["from"]] for e in edge_data(srcdoc)
                   if redis in (e["from"], e["to"]))
    neighbours = dataframes(at)[0]
    assert len(drawn) >= 5 and sorted(neighbours["entity"]) == drawn
    assert any(c.value.startswith(f"{len(drawn)} edges drawn at Redis") for c in at.caption)
    # The caption's counts are those of the drawing: entities on screen, edges drawn.
    visible = [n for n in nodes if not n.get("hidden")]
    caption = next(c.value for c in at.caption if " entities shown" in c.value)
    assert caption.startswith(f"{len(visible)} of {len(sample_workspace.graph)} entities shown")
    assert f"{len(edge_data(srcdoc))} edges drawn" in caption


def test_the_graph_opens_fitted_with_a_seeded_layout(monkeypatch, sample_workspace):
    at = page(open_app(monkeypatch, sample_workspace.path), "graph")
    srcdoc = at.get("iframe")[0].proto.srcdoc
    assert '"randomSeed": 7' in srcdoc
    settle = srcdoc[srcdoc.index("function settle()"):]
    assert settle.index("network.fit()") < settle.index("}")  # fitted first, whatever is focused
    assert "moveTo({scale: minScale})" not in srcdoc  # no zoom that crops the view


def test_numbers_durations_dates_and_titles_are_hidden_until_asked_for(monkeypatch, sample_workspace):
    from workbench.views.graph import is_noise

    titles = {d.title.casefold() for d in sample_workspace.documents() if d.title and d.kind != "record"}
    noisy = {e.name for e in sample_workspace.entities() if is_noise(e, titles)}
    assert {"2024", "Decision: move web sessions to Redis"} <= noisy
    assert not {"Auth Service", "token cache", "Circuit breaker"} & noisy  # things, though documents share the names
    at = page(open_app(monkeypatch, sample_workspace.path), "graph")
    at.radio(key="keep.graph.view").set_value("co-mention").run()
    at.slider(key="keep.graph.min_weight.co-mention").set_value(1).run()
    shown = {n["label"] for n in node_data(at.get("iframe")[0].proto.srcdoc)}
    assert shown and not shown & noisy
    assert any("numbers, durations, dates and document titles" in i.value for i in at.info)
    at.toggle(key="keep.graph.noise").set_value(True).run()
    assert {n["label"] for n in node_data(at.get("iframe")[0].proto.srcdoc)} & noisy


def test_a_value_or_a_title_is_noise_and_a_thing_is_not():
    from workbench.model import Entity
    from workbench.views.graph import is_noise

    for name in ("90 days", "2023", "30-day", "5 minutes", "2024-06-10", "14:00", "June 2024", "12 Nov 2024", "3.5"):
        assert is_noise(Entity("k", name)), name
    for name in ("Redis", "Auth Service", "May", "S3", "PostgreSQL 15", "token cache"):
        assert not is_noise(Entity("k", name)), name
    assert is_noise(Entity("k", "anything", type="date"))


# -- 4. Compare: every broken item cited -------------------------------------------------------------

def test_what_breaks_cites_a_path_for_every_item_it_lists(monkeypatch, sample_workspace):
    from tests.test_app_analyst import compare

    at = page(open_app(monkeypatch, sample_workspace.path), "compare")
    compare(at, REDIS_QUESTION, ["paths"])
    impacted = [name for name, _ in sample_workspace.graph.impacted_by(
        "Redis", sample_workspace.graph.impact_relations).impacted]
    assert len(impacted) >= 4
    cited = [t.value for t in at.text if t.value.startswith("Cited path: ")]
    assert len(cited) >= 2, [t.value[:80] for t in at.text]
    for name in impacted:
        assert any(f"→ {name}" in line for line in cited), (name, cited)
    assert any(line.startswith("Cited path: Redis → token cache → Auth Service → login flow") for line in cited), cited


def test_the_paths_column_shows_the_whole_chains_first(monkeypatch, sample_workspace):
    from tests.test_app_analyst import compare

    at = page(open_app(monkeypatch, sample_workspace.path), "compare")
    compare(at, REDIS_QUESTION, ["paths"])
    column = [t.value for t in at.text if re.match(r"Cited path \d: ", t.value)]
    assert column and "login flow" in column[0] and column[0].count("→") >= 3


# -- minor defects ------------------------------------------------------------------------------------

def test_an_empty_question_clears_the_old_results(monkeypatch, sample_workspace):
    at = page(open_app(monkeypatch, sample_workspace.path), "compare")
    assert [m.value for m in at.markdown if m.value.startswith("**#")]
    at.text_input(key="keep.compare.question").input("").run()
    assert not at.exception
    assert not [m.value for m in at.markdown if m.value.startswith("**#")]
    assert "Type a question" in texts(at)


def test_a_refused_or_missing_path_gives_one_message_naming_the_allowed_folder(monkeypatch, sample_workspace,
                                                                                tmp_path):
    from ui import md_text

    monkeypatch.chdir(tmp_path)  # the app's root: nothing else may be read
    at = open_app(monkeypatch, sample_workspace.path)
    at.text_input(key="keep.corpus.folder").input(str(tmp_path / "missing"))
    at.button(key="corpus.ingest_folder").click().run()
    errors = [e.value for e in at.error]
    assert len(errors) == 1 and "no such file or folder" in errors[0]
    at.text_input(key="keep.corpus.folder").input("/etc")
    at.button(key="corpus.ingest_folder").click().run()
    assert not at.exception
    errors = [e.value for e in at.error]
    assert len(errors) == 1 and md_text(str(tmp_path.resolve())) in errors[0] and "/etc" not in errors[0].split(
        "outside")[1]


def test_a_bare_agreed_is_not_listed_as_a_decision(sample_workspace):
    decisions = [d.text for episode in sample_workspace.episodes() for d in episode.decisions]
    assert decisions
    assert not [text for text in decisions if re.fullmatch(r"(@[\w.]+:\s*)?Agreed\.", text)], decisions


# -- 6. Superseding read from the text ------------------------------------------------------------

EXPORT_QUESTION = "When does the nightly partner export start?"


def export_notes(folder: Path) -> Path:
    """A November 2024 schedule, another note of that month, and a February 2025 note whose text
    says it replaces the November schedule (no front matter says so)."""
    folder.mkdir(parents=True)
    notes = {
        "2024-11-partner-export.md": ("Decision: nightly partner export at 04:30 UTC", "2024-11-12",
                                      "Decision: the nightly partner export starts at 04:30 UTC every night and writes "
                                      "Parquet files to the partner drop. The nightly partner export start time is "
                                      "04:30 UTC."),
        "2024-11-billing.md": ("Decision: billing batch at 01:00 UTC", "2024-11-20",
                               "The billing batch starts at 01:00 UTC and finishes before the backups."),
        "2025-02-partner-export.md": ("Partner export moves earlier", "2025-02-03",
                                      "From 3 February the export starts at 02:00 UTC. This replaces the November "
                                      "2024 schedule."),
    }
    for name, (title, day, text) in notes.items():
        (folder / name).write_text(f"---\ntitle: \"{title}\"\ndate: {day}\n---\n{text}\n", encoding="utf-8")
    return folder


def test_a_note_that_says_it_replaces_another_gets_a_supersedes_candidate(make_workspace, tmp_path):
    ws = make_workspace("exports-ws")
    ws.ingest([export_notes(tmp_path / "exports")])
    found = [(t.subject, t.relation, t.object) for t in ws.store.candidate_triples("SUPERSEDES")]
    assert found == [("Partner export moves earlier", "SUPERSEDES", "Decision: nightly partner export at 04:30 UTC")]
    assert not any(e.relation == "SUPERSEDES" for e in ws.graph.edges())  # a candidate, not a fact
    ws.ingest([tmp_path / "exports"])  # nothing changed: proposed once
    assert len(ws.store.candidate_triples("SUPERSEDES")) == 1


def test_an_accepted_supersedes_candidate_badges_the_old_note_and_ranks_the_new_one_first(monkeypatch, make_workspace,
                                                                                        tmp_path):
    from tests.test_app_analyst import compare
    from workbench.retrieve import retrieve

    ws = make_workspace("exports-ws")
    ws.ingest([export_notes(tmp_path / "exports")])
    assert retrieve(ws, EXPORT_QUESTION, "keyword", 5).hits[0].document.endswith("2024-11-partner-export.md")
    at = open_app(monkeypatch, ws.path)
    assert any("replaces" in m.value and "Partner export moves earlier" in m.value for m in at.markdown)
    at.button(key="corpus.supersedes.0").click().run()
    assert not at.exception and not at.error
    assert not ws.store.candidate_triples("SUPERSEDES")
    page(at, "compare")
    compare(at, EXPORT_QUESTION, ["keyword"])
    cards = [m.value for m in at.markdown if m.value.startswith("**#")]
    assert cards[0].startswith("**#1 · Partner export moves earlier**")
    badges = [m.value for m in at.markdown if "superseded] by" in m.value]
    assert len(badges) == 1 and "2025\\-02\\-partner\\-export\\.md" in badges[0] and "ranked #1 by keyword" in badges[0]


def test_the_legend_counts_the_entities_on_screen(monkeypatch, sample_workspace):
    at = page(open_app(monkeypatch, sample_workspace.path), "graph")
    at.selectbox(key="keep.entity").select("redis").run()
    srcdoc = at.get("iframe")[0].proto.srcdoc
    visible = [n for n in node_data(srcdoc) if not n.get("hidden")]
    assert len(visible) < len(node_data(srcdoc))  # some wait for a click
    legend = srcdoc[srcdoc.index('<div id="legend"'):srcdoc.index("</div>", srcdoc.index('<div id="legend"'))]
    assert sum(int(n) for n in re.findall(r"\((\d+)\)</span>", legend)) == len(visible)


# -- teams review a run ---------------------------------------------------------------------------

def small_eval(make_workspace, tmp_path):
    """A workspace of three notes and a two-task set beside them."""
    corpus = tmp_path / "evalcorpus"
    corpus.mkdir()
    (corpus / "auth.md").write_text("---\ntitle: Auth notes\n---\nThe Auth Service depends on the token cache.\n",
                                    encoding="utf-8")
    (corpus / "cache.md").write_text("---\ntitle: Cache notes\n---\nThe token cache is backed by Redis.\n",
                                     encoding="utf-8")
    (corpus / "billing.md").write_text("---\ntitle: Billing\n---\nThe billing service sends invoices monthly.\n",
                                       encoding="utf-8")
    tasks = tmp_path / "tasks.yaml"
    tasks.write_text("- id: t1\n  question: What does the Auth Service depend on?\n"
                     "  gold_documents: [evalcorpus/auth.md, evalcorpus/cache.md]\n"
                     "- id: t2\n  question: Who sends invoices?\n  gold_documents: [evalcorpus/billing.md]\n",
                     encoding="utf-8")
    ws = make_workspace("eval-small")
    ws.ingest([corpus])
    return ws, tasks


def test_a_saved_run_opens_as_it_was_shown_and_its_link_opens_it_again(monkeypatch, make_workspace, tmp_path):
    ws, tasks = small_eval(make_workspace, tmp_path)
    monkeypatch.chdir(tmp_path)  # the task file lies under the folder the app starts in
    at = page(open_app(monkeypatch, ws.path), "evaluate")
    at.text_input(key="keep.eval.tasks").set_value(str(tasks)).run()
    at.multiselect(key="keep.eval.modes").set_value(["vector"]).run()
    at.button(key="eval.run").click().run()
    assert not at.exception and not at.error
    run_id = at.selectbox(key="eval.open_run").value
    assert run_id and at.query_params["run"] == run_id
    summary = dataframes(at)[0]
    labels = [b.proto.label for b in at.get("download_button")]
    assert "Download report (HTML, opens offline)" in labels
    # A reload (a new session) on the same address shows the same run, table for table.
    from streamlit.testing.v1 import AppTest

    again = AppTest.from_file(str(ROOT / "app.py"), default_timeout=180)
    again.switch_page("pages/evaluate.py")
    again.query_params["run"] = run_id
    again.run()
    assert not again.exception
    assert any(h.value.startswith(f"Summary (run {run_id}") for h in again.subheader)
    assert dataframes(again)[0].equals(summary)
    assert len(again.get("plotly_chart")) == 3


def test_the_html_report_is_self_contained_with_the_numbers_of_the_page(make_workspace, tmp_path):
    from workbench.evaluate.runner import run_evaluation
    from workbench.evaluate.tasks import load_resolved_tasks
    from workbench.views.eval_html import offline_check, run_html
    from workbench.views.eval_tables import summary_table

    ws, tasks = small_eval(make_workspace, tmp_path)
    run = run_evaluation(ws, load_resolved_tasks(ws, tasks), ["vector"], k=3, task_file=str(tasks))
    page_html = run_html(run, version="abc123")
    assert offline_check(page_html) == []
    assert "Plotly.newPlot" in page_html and len(page_html) > 1_000_000  # plotly.js inlined
    assert page_html.count('class="plotly-graph-div"') == 3
    assert "abc123" in page_html and "retrieval" in page_html  # the code version and the settings
    for value in summary_table(run).select_dtypes("number").to_numpy().ravel():
        assert f"{value:.2f}" in page_html
    for text in summary_table(run).select_dtypes("object").to_numpy().ravel():
        assert str(text) in page_html


def test_eval_html_writes_the_same_report(make_workspace, tmp_path):
    from tests.conftest import run_cli

    ws, tasks = small_eval(make_workspace, tmp_path)
    ws.close()
    out = tmp_path / "report.html"
    done = run_cli("--workspace", str(ws.path), "eval", str(tasks), "--modes", "vector", "--k", "3", "--html", str(out))
    assert done.returncode == 0, done.stderr
    written = out.read_text(encoding="utf-8")
    assert "<h1>Evaluation run " in written and "Plotly.newPlot" in written and f"wrote {out}" in done.stdout


def test_no_caption_of_compare_names_a_setting(monkeypatch, sample_workspace):
    at = page(open_app(monkeypatch, sample_workspace.path), "compare")
    shown = texts(at).replace("\\", "")
    assert "Failure spreads along dependencies only" in shown
    assert not re.search(r"\b(?:graph|graphrag|retrieval|extraction)\.[a-z_]+\b|\b[a-z]+_[a-z_]+=", shown), shown


def test_a_reason_naming_a_setting_is_said_in_words():
    from workbench.views.wording import plain_reason

    said = plain_reason("vector_only: no entity name reached seed_similarity_threshold=0.3 (best 0.21)")
    assert "seed_similarity_threshold" not in said and "(0.3)" in said and said.startswith("vector_only: no entity")
