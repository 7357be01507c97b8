"""AppTest for the Communities and Timeline pages."""

from __future__ import annotations

from tests.test_app import open_app, page, searched_entity_box, texts


def test_communities_page_lists_reports_and_draws_one(monkeypatch, sample_workspace):
    at = page(open_app(monkeypatch, sample_workspace.path), "communities")
    frame = at.dataframe[0].value
    assert len(frame) == len(sample_workspace.communities()) >= 4
    shown = texts(at).replace("\\", "")  # Markdown escapes are not what a person reads
    first = sample_workspace.communities()[0]
    assert first.points[0].chunk_id in shown
    srcdoc = at.get("iframe")[0].proto.srcdoc
    assert "vis.DataSet" in srcdoc and first.key_entities[0][0].split()[0] in srcdoc


def test_communities_page_shows_a_themes_sub_themes(monkeypatch, sample_workspace):
    reports = sample_workspace.communities()
    theme = next(r for r in reports if any(p.parent == r.id for p in reports))
    part = next(p for p in reports if p.parent == theme.id and p.points)
    at = page(open_app(monkeypatch, sample_workspace.path), "communities")
    assert set(at.dataframe[0].value["level"]) == {"theme", "sub-theme"}
    at.selectbox(key="keep.communities.id").set_value(theme.id).run()
    assert not at.exception and theme.points[0].chunk_id in texts(at)
    at.radio(key=f"keep.communities.part.{theme.id}").set_value(part.id).run()
    assert not at.exception
    shown = texts(at).replace("\\", "")
    assert "Sub-theme" in shown and part.points[0].chunk_id in shown


def test_timeline_page_shows_episodes_with_participants_and_decisions(monkeypatch, sample_workspace):
    at = page(open_app(monkeypatch, sample_workspace.path), "timeline")
    shown = texts(at).replace("\\", "")  # Markdown escapes are not what a person reads
    assert "@sam.okafor" in shown and "go for the rollback" in shown
    assert "moves to next Tuesday" in shown
    at.selectbox(key="keep.entity").set_value("tokencache").run()
    assert not at.exception
    assert any("decision" in set(f["kind"]) for f in (d.value for d in at.dataframe))


def test_timeline_page_of_a_graph_too_large_to_list_is_searched_by_typed_text(monkeypatch, sample_workspace):
    # 412k names at 61k passages were all sent to the browser, and each made an entity: narrowed first now.
    at, _ = searched_entity_box(monkeypatch, sample_workspace, "timeline", "token c")
    at.selectbox(key="keep.entity").set_value("tokencache").run()
    assert not at.exception
    assert any("decision" in set(f["kind"]) for f in (d.value for d in at.dataframe))
    at.text_input(key="timeline.find").input("redis").run()  # looking for another keeps the one shown
    assert at.selectbox(key="keep.entity").value == "tokencache"
