"""One write step: ``Workspace.ingest``, ``remove`` and the merge steps leave every structure
derived from the record current, the keyword index included, so no surface (the CLI, the app,
the MCP server, ``watch``, a notebook) derives anything after them and no reader pays for it."""

from __future__ import annotations

import pytest

from tests.conftest import make_corpus
from workbench.cli import main
from workbench.corpus.keyword_index import KeywordIndex
from workbench.retrieve import retrieve
from workbench.workspace.workspace import KEYWORD_INDEX_FILE


@pytest.fixture
def keyword_builds(monkeypatch) -> list[bool]:
    """One entry per keyword index built: whether the workspace's write lock was held then."""
    import workbench.workspace.workspace as workspace

    builds: list[bool] = []
    build = KeywordIndex.build.__func__  # type: ignore[attr-defined]

    def counted(cls, ids, texts, earlier=None):
        builds.append(any(ws.lock.is_locked for ws in opened))
        return build(cls, ids, texts, earlier=earlier)

    opened: list = []
    init = workspace.Workspace.__init__

    def remembered(self, *args, **kwargs):
        init(self, *args, **kwargs)
        opened.append(self)

    monkeypatch.setattr(KeywordIndex, "build", classmethod(counted))
    monkeypatch.setattr(workspace.Workspace, "__init__", remembered)
    return builds


def test_after_an_ingest_alone_a_keyword_search_finds_the_new_document_without_building(make_workspace, tmp_path,
                                                                                    keyword_builds):
    corpus = make_corpus(tmp_path / "notes", 3)
    ws = make_workspace()
    ws.ingest([corpus])
    (corpus / "ledger.md").write_text("The ledger service writes to Cassandra.\n", encoding="utf-8")
    ws.ingest([corpus])
    assert keyword_builds == [True, True]  # one per write, inside it
    hits = retrieve(ws, "ledger cassandra", mode="keyword", k=3).hits
    assert len(hits) == 1 and ws.chunk(hits[0].chunk_id).document_id == "notes/ledger.md"
    assert keyword_builds == [True, True]  # the search loaded the index the write kept


def test_remove_and_an_alias_leave_the_keyword_index_current(make_workspace, tmp_path, keyword_builds):
    corpus = make_corpus(tmp_path / "notes", 4)
    ws = make_workspace()
    ws.ingest([corpus])
    ws.remove(corpus / "svc0001.txt")
    ws.corrections.add_alias("service number 2", "service number 3")
    path = ws.path / KEYWORD_INDEX_FILE
    assert KeywordIndex.kept_for(path, f"{ws.store.workspace_id}:{ws.store.version}")
    assert keyword_builds == [True, True]  # the ingest, the removal; the alias changed no chunk: kept as it was
    hits = retrieve(ws, "service number", mode="keyword", k=10).hits
    assert {ws.chunk(h.chunk_id).document_id for h in hits} == {f"notes/svc000{i}.txt" for i in (0, 2, 3)}
    assert keyword_builds == [True, True]


def test_the_command_line_ingest_leaves_the_keyword_index_to_its_child(tmp_path, monkeypatch, embedder,
                                                                       keyword_builds, capsys):
    """The command returns once it wrote: the keyword index is built, once, by the child it forks
    to save the derived files, not in the command's process (nor read back there)."""
    from workbench.workspace.write_lock import WriteLock

    monkeypatch.setattr("workbench.workspace.workspace.embedder_from_settings", lambda settings: embedder)
    loads: list[str] = []
    load = KeywordIndex.load.__func__  # type: ignore[attr-defined]
    monkeypatch.setattr(KeywordIndex, "load", classmethod(lambda cls, path, key: loads.append(key) or load(cls, path, key)))
    corpus = make_corpus(tmp_path / "notes", 3)
    assert main(["--workspace", str(tmp_path / "ws"), "ingest", str(corpus), "--json"]) == 0
    capsys.readouterr()
    assert keyword_builds == [] and loads == []  # not in this process
    assert WriteLock(tmp_path / "ws", timeout=0).wait_free(120)  # the child done
    from workbench.record.store import Store

    store = Store(tmp_path / "ws" / "workspace.sqlite")
    try:
        assert KeywordIndex.kept_for(tmp_path / "ws" / KEYWORD_INDEX_FILE, f"{store.workspace_id}:{store.version}")
    finally:
        store.close()


def test_an_accepted_candidate_leaves_nothing_unfinished(sample_private):
    ws = sample_private
    candidate = ws.candidates()[0]
    assert ws.corrections.accept_candidate(candidate.subject, candidate.relation, candidate.object)
    assert ws.unfinished() is None  # the entity-name index follows the new version
    assert KeywordIndex.kept_for(ws.path / KEYWORD_INDEX_FILE, f"{ws.store.workspace_id}:{ws.store.version}")


def test_a_write_builds_the_keyword_index_from_the_one_its_process_holds(make_workspace, tmp_path, monkeypatch):
    corpus = make_corpus(tmp_path / "notes", 3)
    ws = make_workspace()
    ws.ingest([corpus])
    held = ws.keyword_index(ws.store.version)
    lent: list = []
    build = KeywordIndex.build.__func__  # type: ignore[attr-defined]

    def unread(*args, **kwargs):
        raise AssertionError("the keyword index was read back from the folder")

    monkeypatch.setattr(KeywordIndex, "build", classmethod(
        lambda cls, ids, texts, earlier=None: lent.append(earlier) or build(cls, ids, texts, earlier=earlier)))
    monkeypatch.setattr(KeywordIndex, "load_earlier", classmethod(unread))
    monkeypatch.setattr(KeywordIndex, "load", classmethod(unread))
    (corpus / "ledger.md").write_text("The ledger service writes to Cassandra.\n", encoding="utf-8")
    ws.ingest([corpus])
    assert lent == [held]  # the index the last write built, not the file it saved
    now = ws.keyword_index(ws.store.version)
    assert now is not held and [h.id for h in now.search("ledger cassandra", 3)] == ws.store.chunk_ids_of(["notes/ledger.md"])
    monkeypatch.undo()
    other = make_workspace()  # another process opening the folder loads what the write saved
    assert other.keyword_index(other.store.version).search("ledger service", 5) == now.search("ledger service", 5)
