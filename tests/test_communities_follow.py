"""Communities follow writes: a note added, edited and removed changes only the communities it
touches, and the result is consistent with a detection from scratch of the same graph; while
reports that must be made from nothing are rebuilt in the background, readers are given the
last ones with the record version they describe."""

from __future__ import annotations

import shutil
import threading

import numpy as np
import pytest

from tests.conftest import SAMPLE
from workbench.corpus import summaries as summaries_module
from workbench.corpus.communities import community_graph, detect, modularity
from workbench.corpus.community_reports import ReportOptions

#: A note about a topic the sample corpus never mentions: its entities form a theme of their own,
#: and its last paragraph ties it to two themes of the corpus (the Platform team's, Redis's).
NOTE = """# Greenhouse sensors

The greenhouse controller depends on the humidity gateway. The humidity gateway is backed by the sensor hub.

The sensor hub publishes to the irrigation planner. The irrigation planner depends on the greenhouse controller.

Operators calibrate the humidity gateway every spring, and the sensor hub keeps a week of readings for the irrigation planner.

The Platform team owns the sensor hub, and its readings are kept in Redis.
"""
#: The note edited: the irrigation planner is no longer in it.
EDITED = NOTE.replace("The sensor hub publishes to the irrigation planner. The irrigation planner depends on the "
                      "greenhouse controller.", "The sensor hub publishes to the greenhouse controller.") \
    .replace(" for the irrigation planner", "")
#: The note without its last paragraph: tied to nothing the corpus holds.
APART = NOTE.split("\n\nThe Platform team owns")[0] + "\n"
NOTE_KEYS = {"greenhousecontroller", "humiditygateway", "sensorhub", "irrigationplanner"}
THEMES = "What are the main themes of the corpus?"


def _scratch(ws):
    """A detection from scratch of the workspace's graph, and the graph it ran on."""
    options = ReportOptions.from_settings(ws.settings.communities)
    graph = ws.graph
    texts = {c.id: c.text for c in ws.store.chunks(sorted(graph.passages.entities_of))}
    adjacency, names = community_graph(graph, options.relation_weight, texts, options.words_per_passage)
    return detect(graph, **options.detection(), texts=texts), adjacency, names


def _memberships(reports) -> set[tuple[int, frozenset[str], frozenset[str]]]:
    return {(r.level, frozenset(r.members), frozenset(r.chunks)) for r in reports}


def _assert_describes_the_graph_as_it_is(ws, summaries) -> None:
    """No report holds an entity or a passage the graph no longer has, and each theme is one
    part of the partition the next build starts from."""
    graph = ws.graph
    entities = {e.key for e in graph.entities()}
    passages = set(graph.passages.entities_of)
    assert summaries.reports
    for report in summaries.reports:
        assert set(report.members) <= entities, set(report.members) - entities
        assert set(report.chunks) <= passages, set(report.chunks) - passages
    where = {name: i for i, name in enumerate(summaries.partition.names)}
    for theme in (r for r in summaries.reports if r.level == 0):
        parts = {int(summaries.partition.labels[0][where[m]]) for m in theme.members}
        parts |= {int(summaries.partition.labels[0][where[("p", c)]]) for c in theme.chunks}
        assert len(parts) == 1, (theme.id, parts)


@pytest.mark.parametrize("built_by", ["write step", "reader"])
def test_a_note_added_edited_and_removed_changes_only_the_communities_it_touches(make_workspace, settings, tmp_path,
                                                                                  built_by):
    # The write step follows them up to sync_max_passages; past it, the first reader does.
    if built_by == "reader":
        settings = settings.model_copy(update={"communities": settings.communities.model_copy(
            update={"sync_max_passages": 10})})
    corpus = shutil.copytree(SAMPLE, tmp_path / "sample_corpus")
    ws = make_workspace(settings=settings)
    ws.ingest([corpus])
    before = ws.summaries()
    assert before.changed is None and before.built == len(before.reports) >= 4  # the first build starts from nothing
    note = corpus / "notes" / "greenhouse.md"

    note.write_text(NOTE, encoding="utf-8")
    ws.ingest([corpus])
    added = ws.summaries()
    assert added.version == ws.store.version and added.changed is not None and added.changed > 0
    # Followed, not rebuilt: the note touches two themes (the Platform team's, Redis's) and makes its own.
    assert added.built < len(added.reports) / 2 and added.kept > len(before.reports) / 2
    theme = next(r for r in added.reports if NOTE_KEYS <= set(r.members))
    assert theme.level == 0 and any(p.document.endswith("greenhouse.md") for p in theme.points)
    kept = {r.id: r for r in before.reports}
    unchanged = [(r, i) for i, r in enumerate(added.reports) if r.id in kept and r.to_json() == kept[r.id].to_json()]
    assert len(unchanged) > len(before.reports) / 2
    old_vector = {r.id: before.report_vectors[i] for i, r in enumerate(before.reports)}
    assert all(np.array_equal(added.report_vectors[i], old_vector[r.id]) for r, i in unchanged)  # not embedded again
    _assert_describes_the_graph_as_it_is(ws, added)
    scratch, adjacency, names = _scratch(ws)
    assert added.partition.names == names
    # As good a partition as Louvain from scratch finds (which moves themes the note never touched).
    assert modularity(adjacency, added.partition.labels[0]) >= modularity(adjacency, scratch.partition.labels[0]) - 0.005

    note.write_text(EDITED, encoding="utf-8")
    ws.ingest([corpus])
    edited = ws.summaries()
    assert edited.changed is not None and edited.built < len(edited.reports) / 2
    members = {m for r in edited.reports for m in r.members}
    assert "irrigationplanner" not in members and {"greenhousecontroller", "sensorhub"} <= members  # no stale member
    _assert_describes_the_graph_as_it_is(ws, edited)

    note_chunks = set(ws.store.chunk_ids_of(ws.documents_under(note)))
    assert note_chunks
    note.unlink()
    ws.ingest([corpus])
    removed = ws.summaries()
    assert removed.changed is not None
    assert not NOTE_KEYS & {m for r in removed.reports for m in r.members}  # the removed note's theme is gone
    assert not note_chunks & {c for r in removed.reports for c in r.chunks}  # and its passages from every theme
    _assert_describes_the_graph_as_it_is(ws, removed)
    scratch, adjacency, _ = _scratch(ws)
    assert modularity(adjacency, removed.partition.labels[0]) >= modularity(adjacency, scratch.partition.labels[0]) - 0.005


def test_a_note_tied_to_nothing_leaves_the_communities_as_they_were_once_removed(make_workspace, tmp_path):
    corpus = shutil.copytree(SAMPLE, tmp_path / "sample_corpus")
    ws = make_workspace()
    ws.ingest([corpus])
    before = ws.summaries()
    note = corpus / "notes" / "greenhouse.md"
    note.write_text(APART, encoding="utf-8")
    ws.ingest([corpus])
    added = ws.summaries()
    assert added.built <= 3 and any(NOTE_KEYS == set(r.members) - {"greenhousesensors"} for r in added.reports)
    note.unlink()
    ws.ingest([corpus])
    removed = ws.summaries()
    # The note's theme and the parts its passage had opened are made again without it: the same
    # communities as before the note, and as a detection from scratch of the same graph.
    assert removed.changed is not None and removed.built <= 3
    assert _memberships(removed.reports) == _memberships(before.reports)
    assert {(c.level, c.members, c.chunks) for c in _scratch(ws)[0].communities} == _memberships(removed.reports)


def test_a_detection_started_from_its_own_partition_keeps_every_community(sample_workspace):
    options = ReportOptions.from_settings(sample_workspace.settings.communities)
    graph = sample_workspace.graph
    texts = {c.id: c.text for c in sample_workspace.chunks()}
    first = detect(graph, **options.detection(), texts=texts)
    again = detect(graph, **options.detection(), texts=texts, previous=first.partition)
    assert again.changed == 0 and again.kept == len(set(first.partition.labels[0].tolist()))
    assert again.communities == first.communities
    assert all(np.array_equal(a, b) for a, b in zip(again.partition.labels, first.partition.labels))
    other = detect(graph, **{**options.detection(), "resolution": 1.5}, texts=texts, previous=first.partition)
    assert other.changed is None  # a partition made under other settings is not started from


def _a_note_after_earlier_reports(make_workspace, settings, tmp_path):
    """The sample corpus in a workspace whose write steps build no reports (a reader does), its
    reports stored by an earlier version (no partition), then one note added; the workspace, its
    settings and the first reports."""
    bounded = settings.model_copy(update={"communities": settings.communities.model_copy(
        update={"sync_max_passages": 10})})  # no write step builds them: the reader does
    corpus = shutil.copytree(SAMPLE, tmp_path / "sample_corpus")
    ws = make_workspace(settings=bounded)
    ws.ingest([corpus])
    first = ws.summaries()
    assert summaries_module.wait_for_store(ws, timeout=60) and first.stored and first.version == ws.store.version
    _stored_by_an_earlier_version(ws)
    (corpus / "notes" / "greenhouse.md").write_text(NOTE, encoding="utf-8")
    ws.ingest([corpus])
    return ws, bounded, first


def _stored_by_an_earlier_version(ws) -> None:
    """The stored summaries as a workbench before partitions stored them: no partition."""
    from workbench.corpus.summaries import PARTITION, SUMMARIES_VERSION

    ws.store.replace_summaries({PARTITION: []}, SUMMARIES_VERSION, ws.store.meta(SUMMARIES_VERSION))


def test_while_reports_are_rebuilt_in_the_background_every_surface_says_which_version_they_are_from(
        make_workspace, settings, tmp_path, monkeypatch):
    import anyio

    from workbench.corpus.community_listing import community_listing
    from workbench.mcp_server.server import build_server, open_read_only
    from workbench.retrieve import retrieve

    ws, bounded, first = _a_note_after_earlier_reports(make_workspace, settings, tmp_path)
    record = ws.store.version
    assert record > first.version

    gate = threading.Event()  # the rebuild waits until the surfaces have been read
    build = summaries_module._build

    def held(*args, **kwargs):
        if threading.current_thread().name == "rebuild-summaries":
            gate.wait(120)
        return build(*args, **kwargs)

    monkeypatch.setattr(summaries_module, "_build", held)
    server_ws = open_read_only(ws.path, bounded, embedder=ws.embedder)  # the MCP server's workspace
    try:
        shown = server_ws.summaries()
        assert shown.rebuilding and (shown.themes_from.version, shown.themes_from.record_version) == (first.version, record)
        assert [r.id for r in shown.reports] == [r.id for r in first.reports]
        statement = f"themes from record version {first.version} (the record is at version {record}"
        assert shown.themes_from.statement().startswith(statement)
        listing = community_listing(server_ws).to_json()
        assert listing["themes_from"] == {"version": first.version, "record_version": record, "rebuilding": True}
        tool = anyio.run(build_server(server_ws).call_tool, "communities", {})
        assert not tool.is_error and tool.structured_content["themes_from"]["version"] == first.version
        answer = retrieve(server_ws, THEMES, mode="global", k=4)
        assert answer.hits and answer.graph_context.themes_from.version == first.version
        assert statement in answer.reason
        gate.set()
        assert summaries_module.wait_for_rebuild(server_ws, timeout=300)
        now = server_ws.summaries()
        assert now.version == record and not now.themes_from.behind and not now.rebuilding
        assert any(NOTE_KEYS <= set(r.members) for r in now.reports)
        assert community_listing(server_ws).to_json()["themes_from"] == {"version": record, "record_version": record,
                                                                         "rebuilding": False}
    finally:
        gate.set()
        server_ws.close()


def test_a_one_shot_reader_builds_them_at_once_and_says_which_version_they_describe(make_workspace, settings,
                                                                                     tmp_path, capsys):
    from workbench.cli import main

    ws, bounded, _ = _a_note_after_earlier_reports(make_workspace, settings, tmp_path)
    reader = type(ws)(ws.path, settings=bounded, embedder=ws.embedder, create=False)  # not a background reader
    try:
        built = reader.summaries()
        assert not built.rebuilding and built.version == ws.store.version and built.changed is None
    finally:
        reader.close()
    assert main(["--workspace", str(ws.path), "communities"]) == 0
    assert capsys.readouterr().out.startswith(f"themes of record version {ws.store.version}\n")


def test_a_background_rebuild_that_fails_leaves_the_next_reader_to_build_and_meet_the_error(
        make_workspace, settings, tmp_path, monkeypatch):
    from workbench.corpus.summaries import rebuild_in_background, wait_for_rebuild

    ws, bounded, _ = _a_note_after_earlier_reports(make_workspace, settings, tmp_path)

    def broken(*args, **kwargs):
        raise RuntimeError("the reports could not be built")

    monkeypatch.setattr(summaries_module, "build_reports", broken)
    reader = type(ws)(ws.path, settings=bounded, embedder=ws.embedder, create=False, read_only=True)
    try:
        rebuild_in_background(reader)
        assert reader.summaries().rebuilding
        assert wait_for_rebuild(reader, timeout=120)
        with pytest.raises(RuntimeError, match="could not be built"):  # not the old reports again, silently
            reader.summaries()
        monkeypatch.undo()
        assert reader.summaries().rebuilding  # asked again, it tries again in the background
        assert wait_for_rebuild(reader, timeout=300)
        assert reader.summaries().version == ws.store.version
    finally:
        reader.close()
