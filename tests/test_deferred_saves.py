"""A write step that tells what it derived before saving the files other processes load it from
(a watch's batch): this process answers at once, another process waits for the files rather than
deriving the graph itself, and a writer gone before saving them keeps nobody waiting."""

from __future__ import annotations

import threading
import time
from pathlib import Path

from workbench.context_graph.graph_snapshot import FILE_NAME as SNAPSHOT_FILE
from workbench.corpus.keyword_index import KeywordIndex
from workbench.workspace import Workspace
from workbench.workspace.derivation import SNAPSHOT_FOLLOWS
from workbench.workspace.write_lock import WriteLock

from tests.conftest import make_corpus


def _entity_keys(ws: Workspace) -> set[str]:
    return {entity.key for entity in ws.graph.entities()}


def test_a_reader_of_another_handle_waits_for_the_files_the_writer_saves_after_telling(make_workspace, tmp_path,
                                                                                       monkeypatch):
    corpus = make_corpus(tmp_path / "notes", 6)
    writer = make_workspace("ws")
    writer.ingest([corpus])
    writer.derivation.prime()  # a writer that follows its writes, as a watch is
    # read-only, as the MCP server opens a workspace: it cannot take the lock, and waits all the same
    reader = Workspace(writer.path, settings=writer.settings, embedder=writer.embedder, read_only=True)
    try:
        assert len(reader.graph)  # the reader holds the graph of the record before the write
        (corpus / "ledger.txt").write_text("The Ledger Service depends on the Audit Vault.\n", encoding="utf-8")
        seen: dict[str, object] = {}
        asked, searched = threading.Event(), threading.Event()
        searcher = Workspace(writer.path, settings=writer.settings, embedder=writer.embedder, read_only=True)
        builds: list[int] = []
        build = KeywordIndex.build

        def counted_build(*args, **kwargs):
            builds.append(threading.get_ident())
            return build(*args, **kwargs)

        monkeypatch.setattr(KeywordIndex, "build", counted_build)
        waiting: list[int] = []
        wait_free = WriteLock.wait_free

        def told_wait(lock, timeout):  # each reader says it waits before it does
            waiting.append(threading.get_ident())
            return wait_free(lock, timeout)

        monkeypatch.setattr(WriteLock, "wait_free", told_wait)

        def ask() -> None:
            asked.set()
            seen["keys"] = _entity_keys(reader)
            seen["status"] = reader.derivation.snapshot_status

        def search() -> None:  # another reader's keyword search waits for the writer's index too
            searched.set()
            seen["searcher"] = threading.get_ident()
            seen["hits"] = searcher.keyword_index(writer.store.version).search("ledger", 3)

        def current(report) -> None:
            # told before the saves: this process answers with the write already ...
            seen["writer_keys"] = _entity_keys(writer)
            # ... while the snapshot on disk is still the one before, and the record says it follows
            seen["manifest_at_tell"] = writer.derivation.current_manifest()
            seen["follows"] = writer.store.meta(SNAPSHOT_FOLLOWS)
            threads = [threading.Thread(target=ask), threading.Thread(target=search)]
            seen["threads"] = threads
            for thread in threads:
                thread.start()
            assert asked.wait(30) and searched.wait(30)
            deadline = time.monotonic() + 30
            while len(set(waiting)) < 2 and time.monotonic() < deadline:  # both readers wait for the lock
                time.sleep(0.01)
            assert {thread.ident for thread in threads} <= set(waiting)

        writer.ingest([corpus], when_current=current)
        for thread in seen["threads"]:  # type: ignore[attr-defined]
            thread.join(120)
            assert not thread.is_alive()
        assert "auditvault" in seen["writer_keys"]  # type: ignore[operator]
        assert seen["manifest_at_tell"] is None
        assert seen["follows"] == str(writer.store.version)
        # the reader did not derive the graph: it waited for the writer's snapshot and loaded it
        assert seen["status"] == "loaded, once its writer saved it"
        assert seen["keys"] == seen["writer_keys"]
        assert seen["searcher"] not in builds and seen["hits"]  # loaded the writer's keywords.npz
        assert writer.derivation.current_manifest() is not None
    finally:
        reader.close()
        searcher.close()


def test_a_writer_gone_before_saving_keeps_no_reader_waiting(make_workspace, tmp_path):
    corpus = make_corpus(tmp_path / "notes", 4)
    writer = make_workspace("ws")
    writer.ingest([corpus])
    expected = _entity_keys(writer)
    # the record says the files follow, but no writer holds the lock: it was killed before saving
    (writer.path / SNAPSHOT_FILE).unlink()
    writer.store.set_meta(SNAPSHOT_FOLLOWS, str(writer.store.version))
    reader = Workspace(writer.path, settings=writer.settings, embedder=writer.embedder, read_only=True)
    try:
        assert _entity_keys(reader) == expected
        assert str(reader.derivation.snapshot_status).startswith("rebuilt")
    finally:
        reader.close()
    again = Workspace(writer.path, settings=writer.settings, embedder=writer.embedder)
    try:
        assert _entity_keys(again) == expected  # derived, and saved for the next process
        assert str(again.derivation.snapshot_status).startswith("rebuilt")
        assert Path(again.path / SNAPSHOT_FILE).exists()
    finally:
        again.close()
