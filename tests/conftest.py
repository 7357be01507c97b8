"""Shared fixtures and helpers: the real bundled model, real Chroma, a workspace built from the
sample corpus, small generated corpora, the command line run as a user runs it."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("ANONYMIZED_TELEMETRY", "False")

ROOT = Path(__file__).resolve().parent.parent
SAMPLE = ROOT / "sample_corpus"
#: Small committed slices of the multi-hop benchmark sets (tests/data/bench/README.md).
BENCH = ROOT / "tests" / "data" / "bench"


@pytest.fixture(scope="session")
def embedder():
    """The bundled all-MiniLM-L6-v2 run by the default ``embedding.backend`` (what the CLI and the
    app use, so workspaces built here are searched in the same vector space), loaded once per run;
    an exported backend is exported on first use into the user cache (a few seconds)."""
    from workbench.embedding import embedder_from_settings
    from workbench.settings import Settings

    return embedder_from_settings(Settings())


@pytest.fixture(scope="session")
def settings():
    from workbench.settings import load_settings

    return load_settings()


@pytest.fixture
def make_workspace(tmp_path, embedder, settings):
    """Open a fresh workspace in a temporary folder (real SQLite, real Chroma, real model)."""
    from workbench.workspace import Workspace

    opened = []

    def make(name: str = "ws", **kwargs):
        ws = Workspace(tmp_path / name, settings=kwargs.pop("settings", settings), embedder=embedder, **kwargs)
        opened.append(ws)
        return ws

    yield make
    for ws in opened:
        ws.close()


def _ingested_sample(tmp_path_factory, embedder, settings):
    """A new workspace holding a copy of the sample corpus, ingested; open."""
    from workbench.workspace import Workspace

    corpus = tmp_path_factory.mktemp("corpus") / "sample_corpus"
    shutil.copytree(SAMPLE, corpus)
    ws = Workspace(tmp_path_factory.mktemp("sample") / "ws", settings=settings, embedder=embedder)
    ws.ingest([corpus])
    return ws


@pytest.fixture(scope="session")
def sample_workspace(tmp_path_factory, embedder, settings):
    """A workspace holding the ingested sample corpus, shared read-only by many tests."""
    ws = _ingested_sample(tmp_path_factory, embedder, settings)
    yield ws
    ws.close()


@pytest.fixture(scope="session")
def sample_template(tmp_path_factory, embedder, settings):
    """The folder of a workspace holding the ingested sample corpus, closed: copied by
    :func:`sample_private`, never opened by a test."""
    ws = _ingested_sample(tmp_path_factory, embedder, settings)
    ws.close()
    return ws.path


@pytest.fixture
def sample_private(sample_template, make_workspace, tmp_path):
    """A workspace of its own holding the ingested sample corpus, for a test that may write to it
    but not to the corpus files: a copy of the folder of one ingest per run (as a user copies a
    workspace folder), where :func:`sample_copy` ingests again (about 9 s a test)."""
    shutil.copytree(sample_template, tmp_path / "ws")
    return make_workspace("ws")


@pytest.fixture
def sample_copy(make_workspace, tmp_path):
    """A fresh workspace of a copy of the sample corpus, and that copy (tests may add files to it)."""
    corpus = tmp_path / "sample_corpus"
    shutil.copytree(SAMPLE, corpus)
    ws = make_workspace()
    ws.ingest([corpus])
    return ws, corpus


#: A name that is HTML and script: every page must show it as text.
HOSTILE = "<img src=x onerror=alert(1)>"


#: The sample corpus's chain question: Redis -> token cache -> Auth Service -> login flow.
REDIS_QUESTION = "If Redis goes down, what breaks?"


def chunk_id(ws, document_suffix: str, contains: str) -> str:
    """The id of the one chunk of the document ending in ``document_suffix`` that contains ``contains``."""
    found = [c.id for c in ws.chunks() if c.document_id.endswith(document_suffix) and contains in c.text]
    assert len(found) == 1, (document_suffix, contains, found)
    return found[0]


def reopened(ws, embedder=None, **changes):
    """The same workspace folder opened again with changed settings (``section__field=value``) and,
    optionally, another embedder. Close it after use."""
    from workbench.workspace import Workspace

    settings = ws.settings.model_copy(deep=True)
    for name, value in changes.items():
        section, field = name.split("__")
        setattr(getattr(settings, section), field, value)
    return Workspace(ws.path, settings=settings, embedder=embedder or ws.embedder)


class BrokenEmbedder:
    """An embedder whose model cannot load: every ``embed`` raises ``EmbeddingUnavailable``."""

    name = "broken"
    dimension = 384

    def embed(self, texts):
        from workbench.embedding import EmbeddingUnavailable

        raise EmbeddingUnavailable("model files missing (test)")


def make_corpus(folder: Path, n: int, offset: int = 0, reviewed: bool = False) -> Path:
    """``n`` documents ``svcNNNN.txt``, each stating that a service depends on a queue (and, with
    ``reviewed``, a second paragraph); returns the folder."""
    folder.mkdir(parents=True, exist_ok=True)
    for i in range(offset, offset + n):
        text = f"The service number {i} depends on the queue number {i % 7}.\n"
        if reviewed:
            text += f"\nService {i} was reviewed by the team in week {i % 52}.\n"
        (folder / f"svc{i:04d}.txt").write_text(text, encoding="utf-8")
    return folder


def run_cli(*args, env: dict | None = None, timeout: float = 240) -> subprocess.CompletedProcess:
    """``python -m workbench ARGS`` in a subprocess from the repository root, output captured."""
    return subprocess.run(
        [sys.executable, "-m", "workbench", *map(str, args)], cwd=ROOT, capture_output=True, text=True,
        timeout=timeout, stdin=subprocess.DEVNULL, env={**os.environ, "TQDM_DISABLE": "1", **(env or {})},
    )


def committed_documents(db: Path) -> int:
    """Documents committed to a workspace's SQLite file so far (0 while it cannot be read)."""
    import sqlite3

    try:
        with sqlite3.connect(db, timeout=5) as conn:
            return conn.execute("SELECT COUNT(*) FROM documents").fetchone()[0]
    except sqlite3.Error:
        return 0


def free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for_http(url: str, proc, timeout: float = 60.0) -> None:
    """Poll ``url`` until it answers 200, failing early if ``proc`` exits."""
    import time
    import urllib.request

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"server exited with status {proc.returncode} before {url} answered")
        try:
            with urllib.request.urlopen(url, timeout=2) as resp:
                if resp.status == 200:
                    return
        except OSError:
            time.sleep(0.3)
    raise RuntimeError(f"{url} did not answer within {timeout} s")


def stop_process(proc, timeout: float = 10.0) -> None:
    """Terminate a server we started, and kill it if it does not stop in time."""
    import subprocess

    proc.terminate()
    try:
        proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()


@pytest.fixture(scope="session")
def chroma_server(tmp_path_factory):
    """A real ``chroma run`` server on a free loopback port: yields ``(host, port)``."""
    import subprocess
    import sys

    port = free_port()
    data = tmp_path_factory.mktemp("chroma-server")
    exe = Path(sys.executable).parent / "chroma"
    log = open(data / "server.log", "wb")
    proc = subprocess.Popen([str(exe), "run", "--path", str(data / "db"), "--host", "127.0.0.1", "--port", str(port)],
                            stdout=log, stderr=subprocess.STDOUT, env={**os.environ, "ANONYMIZED_TELEMETRY": "False"})
    try:
        wait_for_http(f"http://127.0.0.1:{port}/api/v2/heartbeat", proc)
        yield "127.0.0.1", port
    finally:
        stop_process(proc)
        log.close()


@pytest.fixture(scope="session", params=["embedded", "server"])
def backend_workspace(request, tmp_path_factory, embedder, settings):
    """The sample corpus ingested into a workspace on each vector-store backend.

    The retrieval contract runs against both: Chroma embedded in the workspace folder, and a
    real ``chroma run`` server.
    """
    from workbench.workspace import Workspace

    if request.param == "server":
        host, port = request.getfixturevalue("chroma_server")
        settings = settings.model_copy(deep=True)
        settings.vector_store.backend = "server"
        settings.vector_store.host, settings.vector_store.port = host, port
    ws = Workspace(tmp_path_factory.mktemp(f"backend-{request.param}") / "ws", settings=settings, embedder=embedder)
    ws.ingest([SAMPLE])
    yield ws
    ws.close()


@pytest.fixture
def hostile_workspace(make_workspace, tmp_path):
    """A tiny corpus whose note title (an entity name) and text carry HTML and script."""
    corpus = tmp_path / "hostile"
    corpus.mkdir()
    (corpus / "evil.md").write_text(
        f'---\ntitle: "{HOSTILE}"\nrelations:\n  - {{type: DEPENDS_ON, target: redis.md}}\n---\n'
        f"The {HOSTILE} service depends on Redis.\n\n<script>alert(2)</script> uses Redis.\n", encoding="utf-8")
    (corpus / "redis.md").write_text("---\ntitle: Redis notes\n---\nThe login service calls Redis.\n", encoding="utf-8")
    ws = make_workspace("hostile-ws")
    ws.ingest([corpus])
    return ws
