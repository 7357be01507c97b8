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


def test_timeline_page_of_a_long_chat_log_finds_its_sessions_and_shows_a_page_at_a_time(monkeypatch, make_workspace,
                                                                                        tmp_path):
    # A 30 MB log falls into 27,162 sessions: the page drew each as an open panel, 13 s a rerun.
    from workbench.bench.sizes import write_big_chat_log
    from workbench.views.episodes import EPISODES_A_PAGE

    ws = make_workspace()
    ws.ingest([write_big_chat_log(tmp_path / "chat" / "channel.jsonl", 0.05).parent])
    episodes = ws.episodes()
    assert len(episodes) > 2 * EPISODES_A_PAGE
    at = page(open_app(monkeypatch, ws.path), "timeline")
    assert len(at.expander) == EPISODES_A_PAGE
    assert f"{len(episodes):,} of {len(episodes):,} sessions" in texts(at)
    pages = -(-len(episodes) // EPISODES_A_PAGE)
    at.number_input(key="timeline.episodes.page").set_value(pages).run()
    assert not at.exception and len(at.expander) == len(episodes) - (pages - 1) * EPISODES_A_PAGE
    last = episodes[-1]
    assert last.participants[0][0] in texts(at)
    decided = next(e for e in episodes[:EPISODES_A_PAGE] if e.decisions)  # on page 1, not on this one
    words = decided.decisions[0].text.split(": ", 1)[-1]
    at.text_input(key="timeline.episodes.find").input(words).run()
    found = [e for e in episodes if any(words.casefold() in d.text.casefold() for d in e.decisions)]
    assert not at.exception and at.number_input(key="timeline.episodes.page").value == 1  # held within the pages
    assert len(at.expander) == min(len(found), EPISODES_A_PAGE) and words in texts(at).replace("\\", "")


def test_the_communities_page_says_its_themes_are_from_an_older_version_while_they_are_rebuilt(
        monkeypatch, make_workspace, settings, tmp_path):
    import shutil
    import threading
    import time

    from tests.conftest import SAMPLE
    from tests.test_communities_follow import NOTE, _stored_by_an_earlier_version
    from workbench.corpus import summaries

    bounded = settings.model_copy(update={"communities": settings.communities.model_copy(
        update={"sync_max_passages": 10})})  # no write step builds them: the page's reader does
    (tmp_path / "settings.yaml").write_text("communities:\n  sync_max_passages: 10\n", encoding="utf-8")
    monkeypatch.setenv("WORKBENCH_SETTINGS", str(tmp_path / "settings.yaml"))
    corpus = shutil.copytree(SAMPLE, tmp_path / "sample_corpus")
    ws = make_workspace(settings=bounded)
    ws.ingest([corpus])
    first = ws.summaries()
    assert summaries.wait_for_store(ws, timeout=60)
    _stored_by_an_earlier_version(ws)  # stored before partitions were: the next build starts over
    (corpus / "notes" / "greenhouse.md").write_text(NOTE, encoding="utf-8")
    ws.ingest([corpus])
    gate = threading.Event()
    build = summaries._build

    def held(*args, **kwargs):  # the rebuild waits until the page has been seen
        if threading.current_thread().name == "rebuild-summaries":
            gate.wait(120)
        return build(*args, **kwargs)

    monkeypatch.setattr(summaries, "_build", held)
    at = page(open_app(monkeypatch, ws.path), "communities")
    notice = f"themes from record version {first.version} (the record is at version {ws.store.version}"
    assert notice in texts(at) and len(at.dataframe[0].value) == len(first.reports)
    gate.set()
    deadline = time.monotonic() + 300
    while notice in texts(at) and time.monotonic() < deadline:
        time.sleep(1)
        at.run()
    assert not at.exception and notice not in texts(at)
    from tests.test_communities_follow import _scratch

    assert len(at.dataframe[0].value) == len(_scratch(ws)[0].communities)  # the themes of the record as it is
