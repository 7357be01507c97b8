"""Readers follow writes: a workspace held open (a notebook's, the app's, the MCP server's) finds
what another process ingested since, vector search included, before it answers."""

from __future__ import annotations

from pathlib import Path

from tests.conftest import run_cli

from workbench.retrieve import retrieve

ARCHIVE = "The telescope archive is owned by the astronomy data team and stores raw sky images."
QUESTION = "Who owns the telescope archive of sky images?"


def _first_corpus(folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "auth.md").write_text("The Auth Service depends on Redis for its token cache.\n", encoding="utf-8")
    (folder / "billing.md").write_text("The billing service calls the ledger every night.\n", encoding="utf-8")
    return folder


def _ingest_elsewhere(workspace: Path, corpus: Path) -> None:
    """Another process adds the archive note."""
    (corpus / "archive.md").write_text(ARCHIVE + "\n", encoding="utf-8")
    done = run_cli("--workspace", workspace, "ingest", corpus)
    assert done.returncode == 0, done.stderr


def _vector_documents(ws, question: str = QUESTION) -> list[str]:
    result = retrieve(ws, question, "vector", 5)
    assert result.mode_used == "vector"
    return [hit.document for hit in result.hits]


def test_an_open_workspace_searches_what_another_process_ingested(make_workspace, tmp_path):
    corpus = _first_corpus(tmp_path / "notes")
    ws = make_workspace()
    ws.ingest([corpus])
    assert "notes/archive.md" not in _vector_documents(ws)
    assert ws.vectors.is_open  # the search opened the vector store
    version = ws.version

    _ingest_elsewhere(ws.path, corpus)
    assert ws.version > version
    assert _vector_documents(ws)[0] == "notes/archive.md"


def test_the_mcp_servers_workspace_answers_from_the_newer_record(make_workspace, tmp_path, embedder, settings):
    from workbench.mcp_server.server import _search, open_read_only
    from workbench.workspace.scoped_view import Scopes

    corpus = _first_corpus(tmp_path / "notes")
    make_workspace().ingest([corpus])
    server_ws = open_read_only(tmp_path / "ws", settings, embedder=embedder)
    try:
        scopes = Scopes(server_ws)  # as the server holds them
        first = _search(scopes, QUESTION, "vector", 5, None)
        assert "notes/archive.md" not in [hit["document"] for hit in first["hits"]]
        _ingest_elsewhere(server_ws.path, corpus)
        plain = _search(scopes, QUESTION, "vector", 5, None)
        assert plain["hits"][0]["document"] == "notes/archive.md"
        scoped = _search(scopes, QUESTION, "hybrid", 5, ["notes/archive.md"])
        assert [hit["document"] for hit in scoped["hits"]] == ["notes/archive.md"]
        assert scoped["mode_used"] == "hybrid"  # no fallback to keyword_only
    finally:
        server_ws.close()


def test_the_app_shows_what_another_process_ingested_on_its_next_run(monkeypatch, make_workspace, tmp_path):
    from tests.test_app import open_app, page, texts

    corpus = _first_corpus(tmp_path / "notes")
    ws = make_workspace()
    ws.ingest([corpus])
    at = page(open_app(monkeypatch, ws.path), "compare")
    at.text_input(key="keep.compare.question").input(QUESTION)
    at.multiselect(key="keep.compare.modes").set_value(["vector"])
    at.button(key="compare.run").click().run()
    assert not at.exception
    assert "No hits." in texts(at)  # nothing the vector store holds is near the question

    _ingest_elsewhere(ws.path, corpus)
    at.button(key="compare.run").click().run()  # the same question asked again
    assert not at.exception
    shown = texts(at)
    assert "No hits." not in shown and "archive\\.md" in shown  # a vector hit (the graph alone followed before)
