"""A fresh process's first write follows the derivation state the last writer kept
(workbench.context_graph.graph_state_file), and ``ingest`` returns once it wrote, leaving the
derived files and that state to a forked child that readers wait for
(GraphDerivation.publish_detached). The kept state is a pickle signed for this user: one another
key signed, or none, is never unpickled.

Real parts: the bundled model, Chroma, SQLite, the command line in subprocesses.
"""

from __future__ import annotations

import json
import os
import pickle
import time
from pathlib import Path

import pytest

from tests.conftest import reopened, run_cli
from tests.test_incremental_derivation import differences, note_text
from workbench.context_graph.graph_state_file import FILE_NAME as STATE_FILE
from workbench.corpus.keyword_index import KeywordIndex
from workbench.workspace.workspace import KEYWORD_INDEX_FILE
from workbench.context_graph.graph_state_file import StateUnusable, load_graph_state
from workbench.runtime.signed_pickle import MAGIC, SignedFileUnusable, dump_signed, load_signed, signing_key


def _vault(folder: Path, notes: int = 4, start: int = 0) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for i in range(notes):
        (folder / f"note-{i}.md").write_text(note_text(start + i, notes), encoding="utf-8")
    return folder


def _kept_after_a_first_ingest(make_workspace, tmp_path) -> tuple:
    """A workspace of a few notes, ingested, its state kept; and the notes' folder."""
    corpus = _vault(tmp_path / "notes")
    ws = make_workspace()
    ws.ingest([corpus])
    assert ws.derivation.save_state()
    return ws, corpus


class _Planted:
    """What a planted pickle would do when unpickled: write a marker file."""

    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self):
        return (Path.write_text, (self.marker, "code ran"))


def test_a_fresh_writer_follows_the_state_the_last_one_kept(make_workspace, tmp_path):
    ws, corpus = _kept_after_a_first_ingest(make_workspace, tmp_path)
    kept_at = ws.store.version
    (corpus / "note-9.md").write_text("# Quartz Scheduler\n\nQuartz Scheduler calls Redis.\n", encoding="utf-8")
    (corpus / "note-1.md").unlink()
    fresh = reopened(ws)  # a process of its own: no state in memory
    try:
        fresh.ingest([corpus])
        assert fresh.derivation.state_status == f"followed the kept state of version {kept_at}"
        assert fresh.derivation.touched != "everything"
        assert differences(fresh) == []  # the snapshot of a full derivation, array by array
    finally:
        fresh.close()


def test_a_state_kept_for_other_graph_settings_is_not_followed(make_workspace, tmp_path):
    ws, corpus = _kept_after_a_first_ingest(make_workspace, tmp_path)
    (corpus / "note-0.md").write_text(note_text(77), encoding="utf-8")
    other = reopened(ws, graph__max_entity_passages=2)
    try:
        other.ingest([corpus])
        assert other.derivation.state_status.startswith("derived whole: "), other.derivation.state_status
        assert "other graph settings" in other.derivation.state_status
        assert other.derivation.touched == "everything"
        assert differences(other) == []
    finally:
        other.close()


def test_a_state_of_a_later_record_is_not_followed(make_workspace, tmp_path):
    """A record restored from before the state was kept (a backup put back): derived whole."""
    ws, corpus = _kept_after_a_first_ingest(make_workspace, tmp_path)
    since, state = load_graph_state(ws.path, ws.derivation.state_key())
    from workbench.context_graph.graph_state_file import save_graph_state

    save_graph_state(ws.path, ws.derivation.state_key(), since + 50, state)
    (corpus / "note-0.md").write_text(note_text(78), encoding="utf-8")
    fresh = reopened(ws)
    try:
        fresh.ingest([corpus])
        assert fresh.derivation.state_status == (f"derived whole: the kept state is of version {since + 50}, "
                                                 f"the record of {fresh.store.version}")
        assert differences(fresh) == []
    finally:
        fresh.close()


def test_a_pickle_not_signed_with_this_users_key_is_never_unpickled(tmp_path):
    marker = tmp_path / "marker"
    path = tmp_path / "state.pickle"
    dump_signed(path, {"label": "probe"}, _Planted(marker))
    load_signed(path, "probe")
    assert marker.read_text() == "code ran"  # the plant is real: signed by this user, it runs
    marker.unlink()
    raw = path.read_bytes()
    forged = bytearray(raw)
    signature_at = len(raw) - len(pickle.dumps(_Planted(marker), protocol=pickle.HIGHEST_PROTOCOL)) - 32
    forged[signature_at:signature_at + 32] = bytes(32)  # another key's signature, or a guess
    path.write_bytes(bytes(forged))
    with pytest.raises(SignedFileUnusable, match="not signed by this user's key"):
        load_signed(path, "probe")
    assert not marker.exists()
    path.write_bytes(MAGIC + b"\x00" * 8)
    with pytest.raises(SignedFileUnusable, match="another kind of file|damaged"):
        load_signed(path, "probe")


def test_a_key_others_can_read_is_not_trusted(tmp_path, monkeypatch, make_workspace):
    monkeypatch.setenv("WORKBENCH_CACHE", str(tmp_path / "cache"))
    assert signing_key() is not None
    key_file = tmp_path / "cache" / "signing.key"
    assert key_file.stat().st_mode & 0o777 == 0o600
    os.chmod(key_file, 0o644)
    assert signing_key() is None
    corpus = _vault(tmp_path / "notes", notes=2)
    ws = make_workspace()
    ws.ingest([corpus])
    assert not ws.derivation.save_state()  # nothing pickled unsigned
    assert not (ws.path / STATE_FILE).exists()
    with pytest.raises(StateUnusable, match="no private signing key"):
        load_graph_state(ws.path, ws.derivation.state_key())


def _wait_for_state(ws, seconds: float = 120) -> None:
    """Until the state kept in ``ws``'s folder is of its record's version (a child's last save)."""
    deadline = time.monotonic() + seconds
    while True:
        try:
            if load_graph_state(ws.path, ws.derivation.state_key())[0] == ws.store.version:
                return
        except StateUnusable:
            pass
        assert time.monotonic() < deadline, f"no state of version {ws.store.version} within {seconds} s"
        time.sleep(0.05)


def test_ingest_returns_and_its_child_saves_what_readers_and_the_next_ingest_use(tmp_path, embedder, settings):
    from workbench.workspace import Workspace

    corpus, folder = _vault(tmp_path / "notes", notes=5), tmp_path / "ws"
    first = run_cli("ingest", "--workspace", folder, "--json", corpus)
    assert first.returncode == 0, first.stderr
    assert json.loads(first.stdout)["documents_added"] == 5
    (corpus / "note-2.md").write_text(note_text(901), encoding="utf-8")
    second = run_cli("ingest", "--workspace", folder, "--json", corpus)
    assert second.returncode == 0, second.stderr
    assert json.loads(second.stdout)["documents_updated"] == 1
    reader = Workspace(folder, settings=settings, embedder=embedder, read_only=True)
    try:
        graph = reader.graph  # waits for the child when it has not saved yet
        assert reader.derivation.snapshot_status in ("loaded", "loaded, once its writer saved it")
        assert sorted(e.key for e in graph.entities()) == sorted(e.key for e in reader.derivation.assemble().entities())
        assert reader.lock.wait_free(120)  # the child done: it built the keyword index too
        key = f"{reader.store.workspace_id}:{reader.store.version}"
        assert KeywordIndex.kept_for(folder / KEYWORD_INDEX_FILE, key)
    finally:
        reader.close()
    writer = Workspace(folder, settings=settings, embedder=embedder)
    try:
        _wait_for_state(writer)
        version = writer.store.version
        (corpus / "note-3.md").unlink()
        writer.ingest([corpus])
        assert writer.derivation.state_status == f"followed the kept state of version {version}"
        assert differences(writer) == []
    finally:
        writer.close()


def test_a_watch_keeps_its_state_when_it_stops(make_workspace, tmp_path):
    from tests.test_watch import watched_in_a_thread

    corpus = _vault(tmp_path / "notes", notes=3)
    ws = make_workspace()
    with watched_in_a_thread(ws, corpus) as told:
        (corpus / "note-7.md").write_text(note_text(31), encoding="utf-8")
        deadline = time.monotonic() + 60
        while not any(b.state == "written" and b.number == 1 for b in told):
            assert time.monotonic() < deadline, told
            time.sleep(0.05)
    assert load_graph_state(ws.path, ws.derivation.state_key())[0] == ws.store.version


def test_an_older_state_does_not_replace_a_later_writers(make_workspace, tmp_path):
    """A process whose state is older than the one kept (another process wrote since) leaves the
    kept one: the next fresh writer follows fewer changes from it."""
    corpus = _vault(tmp_path / "notes", notes=3)
    ws = make_workspace()
    ws.ingest([corpus])
    (corpus / "note-5.md").write_text(note_text(41), encoding="utf-8")
    other = reopened(ws)
    try:
        other.ingest([corpus])
        assert other.derivation.save_state()
        assert not ws.derivation.save_state()  # older than the kept one
        assert load_graph_state(ws.path, ws.derivation.state_key())[0] == other.store.version
    finally:
        other.close()


def test_repair_and_a_new_identity_drop_the_kept_state(make_workspace, tmp_path):
    ws, _ = _kept_after_a_first_ingest(make_workspace, tmp_path)
    assert (ws.path / STATE_FILE).exists()
    ws.repair()  # every derived file made again from the record
    assert not (ws.path / STATE_FILE).exists()
    assert ws.derivation.save_state()
    ws.new_identity()  # keyed by the old id: of no use to the copy
    assert not (ws.path / STATE_FILE).exists()
