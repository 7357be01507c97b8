"""Issue 57, item 5: a copied workspace folder (``cp -r``) kept its identity. On a shared Chroma
server the copy's ingest wrote into the original's collection, breaking its queries, and the
original's ``repair`` deleted the copy's vectors. The copy is now refused on the server until
``repair --new-identity`` gives it collections of its own; derived files follow the new id."""

from __future__ import annotations

import shutil

import pytest

from workbench.retrieve import retrieve
from workbench.vectors.index import CHUNKS
from workbench.workspace import Workspace
from workbench.workspace.identity import WorkspaceCopied

from tests.conftest import make_corpus

QUESTION = "which queue does service number 3 depend on"


def _on_server(settings, host: str, port: int):
    copy = settings.model_copy(deep=True)
    copy.vector_store.backend = "server"
    copy.vector_store.host, copy.vector_store.port = host, port
    return copy


def _hits(ws) -> list[str]:
    return [h.chunk_id for h in retrieve(ws, QUESTION, "vector", allow_fallback=False).hits]


def test_a_copy_on_a_shared_server_is_refused_until_it_takes_a_new_identity(chroma_server, tmp_path, embedder,
                                                                               settings, run_cli):
    on_server = _on_server(settings, *chroma_server)
    original = Workspace(tmp_path / "original", settings=on_server, embedder=embedder)
    original.ingest([make_corpus(tmp_path / "corpus", 6)])
    before = _hits(original)
    assert before
    shutil.copytree(original.path, tmp_path / "copy")
    copy = Workspace(tmp_path / "copy", settings=on_server, embedder=embedder)
    try:
        with pytest.raises(WorkspaceCopied, match="repair --new-identity"):
            copy.ingest([make_corpus(tmp_path / "more", 3, offset=100)])
        with pytest.raises(WorkspaceCopied):
            retrieve(copy, QUESTION, "vector")
        assert copy.store.chunk_ids() == original.store.chunk_ids()  # the refused ingest wrote nothing

        settings_file = tmp_path / "server.yaml"
        settings_file.write_text(f"vector_store:\n  backend: server\n  host: {chroma_server[0]}\n"
                                 f"  port: {chroma_server[1]}\n", encoding="utf-8")
        refused = run_cli("--workspace", copy.path, "--settings", settings_file, "query", QUESTION)
        assert refused.returncode == 1 and "repair --new-identity" in refused.stderr
        assert len(refused.stderr.splitlines()) == 1

        old, new, copied = copy.new_identity()
        assert old == original.store.workspace_id != new == copy.store.workspace_id
        assert copied == len(original.store.chunk_ids())
        assert not (copy.path / "graph.npz").exists()  # keyed by the id: made again
        copy.repair()
        copy.ingest([make_corpus(tmp_path / "more", 3, offset=100)])
        assert copy.vectors.ids(CHUNKS) == copy.store.chunk_ids() != original.store.chunk_ids()

        original.repair()  # finds its own collection as it was: deletes nothing of the copy's
        assert original.vectors.ids(CHUNKS) == original.store.chunk_ids()
        assert copy.vectors.ids(CHUNKS) == copy.store.chunk_ids()
        assert _hits(original) == before
    finally:
        copy.close()
        original.close()


def test_embedded_sibling_copies_never_take_each_others_derived_files(tmp_path, make_workspace, write_corpus):
    original = make_workspace("original")
    original.ingest([write_corpus(tmp_path / "corpus", 6)])
    original.close()
    for name in ("a", "b"):
        shutil.copytree(original.path, tmp_path / name)
    a, b = make_workspace("a"), make_workspace("b")
    (tmp_path / "only-a").mkdir()
    (tmp_path / "only-a" / "a.txt").write_text("The ledger service depends on the queue number 1.\n")
    (tmp_path / "only-b").mkdir()
    (tmp_path / "only-b" / "b.txt").write_text("The billing service depends on the queue number 2.\n")
    a.ingest([tmp_path / "only-a"])
    b.ingest([tmp_path / "only-b"])
    ids = {original.store.workspace_id, a.store.workspace_id, b.store.workspace_id}
    assert len(ids) == 3 and a.store.version == b.store.version  # each copy took an id of its own
    assert "ledger service" in {n.lower() for n in a.graph.names().values()} and b.graph is not None
    a.close()
    shutil.copy(b.path / "graph.npz", a.path / "graph.npz")  # the sibling's file, same record version
    again = make_workspace("a")
    names = {n.lower() for n in again.graph.names().values()}
    assert again.derivation.snapshot_status.startswith("rebuilt") and "ledger service" in names and "billing service" not in names
    assert "a.txt" in retrieve(again, "ledger service", "vector", allow_fallback=False).hits[0].document


def test_an_embedded_copy_takes_a_new_identity_by_renaming_its_own_collections(tmp_path, make_workspace,
                                                                               write_corpus):
    original = make_workspace("original")
    original.ingest([write_corpus(tmp_path / "corpus", 6)])
    original.close()
    shutil.copytree(original.path, tmp_path / "copy")
    copy = make_workspace("copy")
    before = _hits(copy)  # an embedded copy holds its own store: usable as it is
    old, new, moved = copy.new_identity()
    assert old != new and moved == 0  # renamed, not copied
    assert _hits(copy) == before
    assert copy.vectors.ids(CHUNKS) == copy.store.chunk_ids()
