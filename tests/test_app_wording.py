"""AppTests of issue 56's last items: Compare's columns say the same thing of the question from
the same data and list the themes a themes question asks for; Evaluate's summary fits the page and
its highlights name each strategy's wins and losses; a noun read as a verb draws no graph node."""

from __future__ import annotations

from tests.test_app import open_app, page


def test_every_compare_column_says_the_same_names_of_the_question(monkeypatch, sample_workspace):
    at = page(open_app(monkeypatch, sample_workspace.path), "compare")
    at.text_input(key="keep.compare.question").input("What did the data team decide?")
    at.multiselect(key="keep.compare.modes").set_value(["graphrag", "paths"])
    at.button(key="compare.run").click().run()
    assert not at.exception
    heads = [c.value.replace("\\", "") for c in at.caption if c.value.startswith("mode used:")]
    assert len(heads) == 2, heads
    assert not any("entities named" in head for head in heads), heads  # graphrag said "0 entities named"
    assert all("it names Data team" in head for head in heads), heads


def test_evaluate_summary_fits_the_page_and_names_wins_and_losses(monkeypatch, make_workspace, tmp_path):
    from tests.test_app import dataframes, texts
    from tests.test_app_trust import small_eval

    ws, tasks = small_eval(make_workspace, tmp_path)
    monkeypatch.chdir(tmp_path)  # the task file lies under the folder the app starts in
    at = page(open_app(monkeypatch, ws.path), "evaluate")
    at.text_input(key="keep.eval.tasks").set_value(str(tasks)).run()
    at.multiselect(key="keep.eval.modes").set_value(["direct", "graphrag", "keyword"]).run()
    at.button(key="eval.run").click().run()
    assert not at.exception and not at.error
    summary = dataframes(at)[0]
    assert len(summary) == 3 and len(summary.columns) <= 10
    # Each column is about as wide as its header or its widest cell: together they fit 1000 px.
    widths = [max(len(str(c)), *(len(str(v)) for v in summary[c])) for c in summary.columns]
    assert sum(widths) <= 100, dict(zip(summary.columns, widths))
    lines = [line for line in texts(at).splitlines() if line.startswith("• ")]
    for strategy in ("graphrag", "keyword"):
        said = [line for line in lines if line.startswith(f"• {strategy} against direct (recall): wins ")]
        assert len(said) == 1 and ", loses " in said[0], lines


def test_compare_answers_a_themes_question_with_the_themes_largest_first(monkeypatch, sample_workspace):
    from workbench.corpus.community_reports import report_order

    at = page(open_app(monkeypatch, sample_workspace.path), "compare")
    at.text_input(key="keep.compare.question").input("What are the main themes of the corpus?")
    at.multiselect(key="keep.compare.modes").set_value(["global"])
    at.button(key="compare.run").click().run()
    assert not at.exception
    themes = sorted((r for r in sample_workspace.communities() if r.level == 0), key=report_order)
    listed = [m.value.replace("\\", "") for m in at.markdown if m.value[:1].isdigit() and ". **" in m.value]
    assert listed == [f"{i}. **{t.title}** ({t.size} entities, {len(t.chunks)} passages)"
                      for i, t in enumerate(themes, 1)]
    points = [c.value for c in at.caption if c.value.rstrip().endswith("]") and c.value.count("[") == 1]
    assert len(points) >= 2 * len(themes)


def test_a_noun_read_as_a_verb_draws_no_node(monkeypatch, sample_workspace):
    from tests.test_app import node_data

    # "escalate to the team lead listed on the team leads page": "leads" there is a noun, the team
    # a word standing for one named elsewhere; it drew "page" led by "team lead listed on the team".
    names = {e.name for e in sample_workspace.entities()}
    assert "Platform team" in names and not {"page", "team lead listed on the team"} & names
    at = page(open_app(monkeypatch, sample_workspace.path), "graph")
    at.toggle(key="keep.graph.noise").set_value(True).run()  # values and titles shown: still not there
    shown = {n["label"] for n in node_data(at.get("iframe")[0].proto.srcdoc)}
    assert "Redis" in shown and not {"page", "team lead listed on the team"} & shown
