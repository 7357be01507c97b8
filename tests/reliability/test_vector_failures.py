"""Issue 57, items 6 and 9: a vector store that fails. With the Chroma server refusing
connections, hybrid and graphrag queries answered from the keyword ranking with exit 0, and
``query --k 10**30`` did the same ("Python int too large"); with the server stopped (SIGSTOP)
``query --mode hybrid`` still waited at 150 s and ``ingest`` at 90 s: no client timeout."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from workbench.retrieve import KEYWORD_ONLY, MODES, get_retriever, retrieve
from workbench.vectors.index import VectorStoreUnavailable
from workbench.workspace import Workspace

from tests.conftest import free_port, stop_process, wait_for_http

QUESTION = "which queue does service number 3 depend on"


@pytest.fixture(scope="module")
def own_server(tmp_path_factory):
    """A ``chroma run`` server of this module's own (its tests stop and resume it): ``(host, port, process)``."""
    port = free_port()
    data = tmp_path_factory.mktemp("own-chroma")
    log = open(data / "server.log", "wb")
    proc = subprocess.Popen([str(Path(sys.executable).parent / "chroma"), "run", "--path", str(data / "db"),
                             "--host", "127.0.0.1", "--port", str(port)],
                            stdout=log, stderr=subprocess.STDOUT, env={**os.environ, "ANONYMIZED_TELEMETRY": "False"})
    try:
        wait_for_http(f"http://127.0.0.1:{port}/api/v2/heartbeat", proc)
        yield "127.0.0.1", port, proc
    finally:
        os.kill(proc.pid, signal.SIGCONT)  # a test stopped it: it must run to terminate
        stop_process(proc)
        log.close()


def _on_server(settings, host: str, port: int, timeout: float | None = None):
    copy = settings.model_copy(deep=True)
    copy.vector_store.backend = "server"
    copy.vector_store.host, copy.vector_store.port = host, port
    if timeout is not None:
        copy.vector_store.timeout_seconds = timeout
    return copy


def _settings_file(path: Path, host: str, port: int, timeout: float | None = None, extra: str = "") -> Path:
    bound = f"  timeout_seconds: {timeout}\n" if timeout is not None else ""
    path.write_text(f"vector_store:\n  backend: server\n  host: {host}\n  port: {port}\n{bound}{extra}", encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def served(own_server, tmp_path_factory, embedder, settings):
    """A small corpus ingested with its vectors on the module's server; the workspace's folder."""
    from tests.conftest import make_corpus

    host, port, _ = own_server
    folder = tmp_path_factory.mktemp("served")
    ws = Workspace(folder / "ws", settings=_on_server(settings, host, port), embedder=embedder)
    ws.ingest([make_corpus(folder / "corpus", 8)])
    ws.close()
    return ws.path


def test_with_the_server_refusing_connections_a_query_stops_unless_a_fallback_is_allowed(served, embedder, settings):
    nobody = free_port()  # nothing listens here: every connection is refused
    ws = Workspace(served, settings=_on_server(settings, "127.0.0.1", nobody), embedder=embedder)
    try:
        for mode in ("hybrid", "graphrag", "vector", "expand"):
            with pytest.raises(VectorStoreUnavailable, match=f"127.0.0.1:{nobody}"):
                retrieve(ws, QUESTION, mode, allow_fallback=False)
        for mode in ("hybrid", "graphrag"):
            fallback = retrieve(ws, QUESTION, mode)
            assert fallback.mode_used == "keyword_only" and "vector store unavailable" in fallback.reason
            assert fallback.hits
        assert retrieve(ws, QUESTION, "keyword", allow_fallback=False).hits  # needs no vector store
    finally:
        ws.close()


def test_each_mode_falls_back_as_its_capabilities_declare(served, embedder, settings):
    nobody = free_port()
    ws = Workspace(served, settings=_on_server(settings, "127.0.0.1", nobody), embedder=embedder)
    try:
        assert len(MODES) >= 11
        for mode in MODES:
            capabilities = get_retriever(mode).capabilities
            result = retrieve(ws, QUESTION, mode)
            # The keyword ranking alone where declared, and nowhere else.
            assert (result.mode_used == KEYWORD_ONLY) == (capabilities.fallback == KEYWORD_ONLY), (mode, result.reason)
            if capabilities.fallback == KEYWORD_ONLY:
                assert result.hits and "unavailable" in result.reason, mode
            if not capabilities.vectors:  # reads no chunk vector: the refused store is never met
                assert retrieve(ws, QUESTION, mode, allow_fallback=False).mode_used == mode
    finally:
        ws.close()


def test_the_cli_says_the_store_failed_in_one_line_and_exits_1(served, tmp_path, run_cli):
    refused = _settings_file(tmp_path / "refused.yaml", "127.0.0.1", free_port())
    done = run_cli("--workspace", served, "--settings", refused, "query", QUESTION, "--mode", "graphrag")
    assert done.returncode == 1 and done.stdout == "", done.stderr
    [line] = done.stderr.splitlines()
    assert line.startswith("error: graphrag: the vector store failed (") and "--allow-fallback" in line
    allowed = run_cli("--workspace", served, "--settings", refused, "query", QUESTION, "--mode", "graphrag",
                      "--allow-fallback")
    assert allowed.returncode == 0 and "(used: keyword_only) - vector store unavailable" in allowed.stdout


def test_graphrag_still_degrades_to_vector_only_when_the_graph_is_too_large(served, own_server, tmp_path, run_cli):
    host, port, _ = own_server
    small = _settings_file(tmp_path / "small.yaml", host, port, extra="graphrag:\n  max_graph_nodes: 1\n")
    done = run_cli("--workspace", served, "--settings", small, "query", QUESTION, "--mode", "graphrag")
    assert done.returncode == 0, done.stderr
    assert "(used: vector_only)" in done.stdout and "max_graph_nodes=1" in done.stdout


def test_a_stopped_server_makes_queries_and_ingest_stop_after_the_timeout(served, own_server, embedder, settings,
                                                                            tmp_path, run_cli):
    host, port, proc = own_server
    stopped = _settings_file(tmp_path / "stopped.yaml", host, port, timeout=1)
    (tmp_path / "more").mkdir()
    (tmp_path / "more" / "extra.txt").write_text("The service number 99 depends on the queue number 2.\n")
    os.kill(proc.pid, signal.SIGSTOP)
    try:
        ws = Workspace(served, settings=_on_server(settings, host, port, timeout=1), embedder=embedder)
        try:
            started = time.monotonic()
            with pytest.raises(VectorStoreUnavailable, match="timed out"):
                retrieve(ws, QUESTION, "hybrid", allow_fallback=False)
            assert time.monotonic() - started < 10
            assert retrieve(ws, QUESTION, "hybrid").mode_used == "keyword_only"
        finally:
            ws.close()
        started = time.monotonic()
        ingest = run_cli("--workspace", served, "--settings", stopped, "ingest", tmp_path / "more", timeout=60)
        assert ingest.returncode == 1 and "timed out" in ingest.stderr, ingest.stderr
        assert time.monotonic() - started < 45
    finally:
        os.kill(proc.pid, signal.SIGCONT)
    wait_for_http(f"http://{host}:{port}/api/v2/heartbeat", proc)
