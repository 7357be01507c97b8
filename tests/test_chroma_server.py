"""The vector store on a real ``chroma run`` server: the same workspace behaviour as embedded."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import chromadb
import pytest
from chromadb.config import Settings as ChromaSettings

from workbench.vectors.index import VectorStoreUnavailable
from workbench.workspace import Workspace

from tests.conftest import SAMPLE, free_port, run_cli


def server_settings(settings, host: str, port: int):
    copy = settings.model_copy(deep=True)
    copy.vector_store.backend = "server"
    copy.vector_store.host, copy.vector_store.port = host, port
    return copy


def write_settings_yaml(path: Path, host: str, port: int) -> Path:
    path.write_text(f"vector_store:\n  backend: server\n  host: {host}\n  port: {port}\n", encoding="utf-8")
    return path


def server_ids(client, ws: Workspace, kind: str) -> set[str]:
    """Ids in a workspace's collection, read from the server by a client of our own."""
    from workbench.vectors.index import space_suffix

    # <prefix>_<workspace id>_<kind>, and the embedder's vector space for all but torch MiniLM
    name = f"{ws.settings.vector_store.collection_prefix}_{ws.store.workspace_id}_{kind}{space_suffix(ws.embedder.name)}"
    collection = client.get_collection(name)
    return set(collection.get(limit=collection.count() + 1, include=[])["ids"])


@pytest.fixture(scope="module")
def observer(chroma_server):
    """A separate HTTP client that checks what the server holds."""
    host, port = chroma_server
    return chromadb.HttpClient(host=host, port=port, settings=ChromaSettings(anonymized_telemetry=False))


@pytest.fixture(scope="module")
def server_workspace(chroma_server, tmp_path_factory, embedder, settings):
    """The sample corpus ingested with vectors on the server; yields the workspace and its first report."""
    ws = Workspace(tmp_path_factory.mktemp("server-ws") / "ws", settings=server_settings(settings, *chroma_server),
                   embedder=embedder)
    report = ws.ingest([SAMPLE])
    yield ws, report
    ws.close()


def test_ingest_fills_the_servers_chunk_collection_and_keeps_entity_names_local(server_workspace, observer):
    ws, report = server_workspace
    assert report.chunks_embedded > 0
    chunk_ids = {c.id for c in ws.chunks()}
    assert server_ids(observer, ws, "chunks") == chunk_ids
    assert ws.entity_vectors.ids() == set(ws.graph.nx.nodes)  # the exact name index, in the folder
    legacy = f"{ws.settings.vector_store.collection_prefix}_{ws.store.workspace_id}_entities"
    assert legacy not in {c.name for c in observer.list_collections()}
    assert not (ws.path / "chroma").exists()  # nothing embedded in the folder


def test_reingest_against_the_server_embeds_nothing(server_workspace, observer):
    ws, _ = server_workspace
    before = server_ids(observer, ws, "chunks")
    again = ws.ingest([SAMPLE])
    assert again.chunks_embedded == 0 and again.documents_unchanged == again.documents_seen
    assert server_ids(observer, ws, "chunks") == before


def test_vector_search_on_the_server_finds_the_redis_note(server_workspace):
    from workbench.retrieve import retrieve

    ws, _ = server_workspace
    result = retrieve(ws, "Redis primary failover steps", mode="vector", k=5)
    assert result.mode_used == "vector"
    assert any(hit.document.endswith("runbooks/redis-failover.md") for hit in result.hits)


def test_removing_a_document_deletes_its_vectors_on_the_server(chroma_server, tmp_path, embedder, settings, observer):
    corpus = tmp_path / "corpus"
    (corpus / "architecture").mkdir(parents=True)
    for name in ("login-flow.md", "auth-service.md"):
        shutil.copy(SAMPLE / "architecture" / name, corpus / "architecture" / name)
    ws = Workspace(tmp_path / "ws", settings=server_settings(settings, *chroma_server), embedder=embedder)
    try:
        ws.ingest([corpus])
        gone = {c.id for c in ws.chunks() if c.document_id.endswith("auth-service.md")}
        kept = {c.id for c in ws.chunks()} - gone
        assert gone and kept
        removed = ws.remove(corpus / "architecture" / "auth-service.md")
        assert [d for d in removed if d.endswith("auth-service.md")] == removed and removed
        assert server_ids(observer, ws, "chunks") == kept
        assert ws.entity_vectors.ids() == set(ws.graph.nx.nodes)
    finally:
        ws.close()


def test_two_workspaces_on_one_server_keep_their_vectors_apart(server_workspace, chroma_server, tmp_path,
                                                               embedder, settings, observer):
    ws, _ = server_workspace
    before = server_ids(observer, ws, "chunks")
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    shutil.copy(SAMPLE / "architecture" / "login-flow.md", corpus / "login-flow.md")
    other = Workspace(tmp_path / "other", settings=server_settings(settings, *chroma_server), embedder=embedder)
    try:
        other.ingest([corpus])
        assert server_ids(observer, other, "chunks") == {c.id for c in other.chunks()}
        assert server_ids(observer, ws, "chunks") == before
    finally:
        other.close()


def test_unreachable_server_names_host_and_port(tmp_path, embedder, settings):
    port = free_port()  # nothing listens here
    ws = Workspace(tmp_path / "ws", settings=server_settings(settings, "127.0.0.1", port), embedder=embedder)
    try:
        with pytest.raises(VectorStoreUnavailable, match=rf"127\.0\.0\.1:{port}"):
            ws.ingest([SAMPLE / "architecture"])
    finally:
        ws.close()


def test_cli_prints_an_unreachable_server_as_one_line_and_exits_1(tmp_path):
    port = free_port()
    settings_file = write_settings_yaml(tmp_path / "server.yaml", "127.0.0.1", port)
    done = run_cli("--workspace", str(tmp_path / "ws"), "--settings", str(settings_file), "ingest",
                   str(SAMPLE / "architecture"))
    assert done.returncode == 1
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: cannot open the Chroma store"), done.stderr
    assert f"127.0.0.1:{port}" in lines[0]


def test_cli_chroma_check_reports_the_server_in_step_with_sqlite(server_workspace, chroma_server, tmp_path):
    ws, _ = server_workspace
    settings_file = write_settings_yaml(tmp_path / "server.yaml", *chroma_server)
    done = run_cli("--workspace", str(ws.path), "--settings", str(settings_file), "chroma-check", "--json")
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["backend"] == "server" and report["in_step"] is True
    assert report["chunks"] == len(ws.chunks()) and report["entities"] == len(ws.graph)
    assert f"{chroma_server[0]}:{chroma_server[1]}" in report["where"]
