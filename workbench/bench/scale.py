"""The scale run: a benchmark corpus repeated with its names perturbed, ingested and queried.

``bench scale --data ../shared/bench/2wikimultihopqa --copies 10`` makes a corpus of ten copies
of the 2Wiki passages (about 60,000). Copy 0 is the original; in copy ``c`` every capitalised
word gets the syllable ``SUFFIXES[c - 1]`` appended ("Paris" -> "Parisar"), titles included, so no
chunk deduplicates and every copy brings names of its own, as a corpus ten times larger would.

The first run ingests that corpus with the configured embedder into a cached workspace (timed:
the first ingest, embedding included). Every run then measures, each in a fresh child process:
a fresh ingest whose chunk vectors are served from that cache (graph build and peak RSS without
the model's cost), graphrag and hybrid latency, the community reports' first build and their
reading by the next process, the Graph and Communities pages' renders, and, with ``--server``,
the same ingest and queries against a real ``chroma run`` server.

>>> perturb("Teutberga married Lothair II in Lotharingia.", 1)
'Teutbergaar married Lothairar II in Lotharingiaar.'
>>> perturb("Teutberga married Lothair II.", 0)
'Teutberga married Lothair II.'
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import regex

from ..embedding.static import StaticEmbedder
from ..record.store import RECORD_FILE
from ..workspace.workspace import Workspace
from .common import PerfError, fresh_ingest, passages_file
from .app_perf import bench_app, bench_fresh_process, bench_stored_communities
from .perf import bench_queries, title_questions
from .walks import bench_walks

__all__ = ["SUFFIXES", "perturb", "scale_corpus", "bench_scale"]

_SYLLABLES = ("ar", "el", "on", "is", "ur", "an", "et", "ov", "ix", "ad", "em", "os", "ul", "ip", "ek")
#: What each copy after the first appends to every capitalised word: one syllable for copies 1-15,
#: then two (copy 33: "elon").
SUFFIXES = _SYLLABLES + tuple(a + b for a in _SYLLABLES for b in _SYLLABLES)
_CAPITALISED = regex.compile(r"\b(\p{Lu}\p{Ll}+)\b")


def perturb(text: str, copy: int) -> str:
    """``text`` with copy ``copy``'s suffix after every capitalised word (copy 0 unchanged).

    >>> perturb("Paris is in France.", 1), perturb("Paris", 33)
    ('Parisar is in Francear.', 'Pariselon')
    """
    if copy == 0:
        return text
    suffix = SUFFIXES[copy - 1]
    return _CAPITALISED.sub(lambda m: m.group(1) + suffix, text)


def scale_corpus(data_dir: Path, copies: int, folder: Path) -> Path:
    """The ``data_dir/corpus.jsonl`` passages ``copies`` times, perturbed, as ``folder/corpus.jsonl``."""
    if not 1 <= copies <= len(SUFFIXES) + 1:
        raise PerfError(f"--copies must be between 1 and {len(SUFFIXES) + 1}, got {copies}")
    source = Path(data_dir) / "corpus.jsonl"
    try:
        passages = [json.loads(line) for line in source.read_text(encoding="utf-8").splitlines() if line.strip()]
    except (OSError, ValueError) as exc:
        raise PerfError(f"{source}: cannot read the passages ({exc})") from None
    lines = []
    for copy in range(copies):
        for p in passages:
            lines.append(json.dumps({"id": f"{p['id']}~{copy}", "title": perturb(str(p.get("title") or ""), copy),
                                     "text": perturb(str(p["text"]), copy)}, ensure_ascii=False))
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "corpus.jsonl"
    content = "\n".join(lines) + "\n"
    if not path.exists() or path.read_text(encoding="utf-8") != content:
        path.write_text(content, encoding="utf-8")
    return folder


def _server(folder: Path):
    """A real ``chroma run`` server on a free loopback port: ``(process, port)``."""
    import socket
    import urllib.request

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    exe = Path(sys.executable).parent / "chroma"
    folder.mkdir(parents=True, exist_ok=True)
    log = open(folder / "server.log", "wb")
    proc = subprocess.Popen([str(exe), "run", "--path", str(folder / "db"), "--host", "127.0.0.1", "--port", str(port)],
                            stdout=log, stderr=subprocess.STDOUT, env={**os.environ, "ANONYMIZED_TELEMETRY": "False"})
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            urllib.request.urlopen(f"http://127.0.0.1:{port}/api/v2/heartbeat", timeout=1)
            return proc, port
        except OSError:
            if proc.poll() is not None:
                break
            time.sleep(0.3)
    proc.kill()
    raise PerfError(f"chroma run did not start (see {folder / 'server.log'})")


def _figures(run: dict, passages: int) -> dict:
    stages = run["stages"]
    model_s = run.get("model_s") or 0.0
    return {"seconds": round(run["seconds"], 1), "passages_per_second": round(passages / run["seconds"], 1),
            "graph_build_s": stages.get("canonicalize+graph"), "peak_rss_mb": round(run["peak_rss_mb"], 1),
            "per_stage_s": stages, "chunks": run["chunks"],
            # the target: the whole ingest within 1.3x the time the model took to embed (chunks and names)
            "model_embedding_s": round(model_s, 1),
            "times_model_embedding": round(run["seconds"] / model_s, 2) if model_s > 0 else None}


def bench_scale(data_dir: Path, cache_dir: Path, settings, copies: int = 10, queries: int = 50,
                server: bool = True, embedder: str = "model") -> dict:
    """Every figure of the scale run (see the module docstring).

    ``embedder="static"`` embeds the corpus with the static embedder (far faster than MiniLM,
    so a large corpus is ingested in minutes) while keeping the settings' model loaded in every ingest, so that memory is
    counted; the graph, its build and the queries' walk are the same, the query embedding is the
    static one's.
    """
    data_dir, cache_dir = Path(data_dir), Path(cache_dir)
    try:
        digest = hashlib.sha256((data_dir / "corpus.jsonl").read_bytes()).hexdigest()[:12]
    except OSError as exc:
        raise PerfError(f"{data_dir / 'corpus.jsonl'}: cannot read the benchmark's passages ({exc.strerror or exc}); "
                        "give the folder with --data (e.g. ../shared/bench/2wikimultihopqa)") from None
    if embedder not in ("model", "static"):
        raise PerfError(f"--embedder must be model or static, got {embedder!r}")
    root = cache_dir / f"scale-{data_dir.resolve().name}-x{copies}-{digest}" / embedder
    corpus = scale_corpus(data_dir, copies, root / "data")
    backend = getattr(settings.embedding, "backend", "torch")
    out: dict[str, Any] = {"copies": copies, "embedder": "static (the settings' model resident)" if embedder == "static"
                           else f"{settings.embedding.model} ({backend})"}
    static = embedder == "static"
    records, passages = passages_file(corpus, root / "records")
    ws_folder = root / "ws"
    if not (ws_folder / RECORD_FILE).exists():
        first = fresh_ingest(records, ws_folder, settings, None, "first ingest (embedding)", embedder=embedder,
                              keep=True, resident_model=static)
        out["first_ingest"] = {**_figures(first, first["documents"]), "note": "embedding included, the configured embedder"}
    ws = Workspace(ws_folder, settings=settings, embedder=StaticEmbedder() if static else None)
    ws.ingest([records])  # nothing to do, unless the first ingest was interrupted
    n = len(passages)
    out["passages"] = n
    try:
        fresh = fresh_ingest(records, root / "fresh", settings, ws_folder, "fresh ingest (served vectors)",
                              embedder=embedder, resident_model=static)
        out["fresh_ingest"] = {**_figures(fresh, n), "note": "chunk vectors served from the cache: the model's cost excluded"}
        out["entities"], out["graph_edges"] = len(ws.graph), ws.graph.number_of_edges()
        questions = title_questions(passages, queries)
        out["query"] = bench_queries(ws, questions, modes=("graphrag", "hybrid"))
        out["walk"] = bench_walks(ws.graph, questions, settings.graphrag.ppr_damping)
    finally:
        ws.close()
    out["fresh"] = bench_fresh_process(ws_folder, title_questions(passages, 1)[0], embedder)
    out["communities"] = bench_stored_communities(ws_folder)
    # the Graph page embeds nothing; the Communities page reads the reports stored just now
    out["app"] = bench_app(ws_folder, pages=("pages/graph.py", "pages/communities.py"))
    if server:
        out["server"] = _bench_server(records, root, ws_folder, settings, passages, queries, embedder)
    return out


def _bench_server(records: Path, root: Path, ws_folder: Path, settings, passages, queries: int, embedder: str) -> dict:
    """The fresh ingest and the queries again, the vectors on a ``chroma run`` server."""
    proc, port = _server(root / "server")
    try:
        remote = settings.model_copy(deep=True)
        remote.vector_store.backend, remote.vector_store.host, remote.vector_store.port = "server", "127.0.0.1", port
        folder = root / "fresh-server"
        static = embedder == "static"
        run = fresh_ingest(records, folder, remote, ws_folder, "fresh ingest (server)", embedder=embedder, keep=True,
                            resident_model=static)
        ws = Workspace(folder, settings=remote, embedder=StaticEmbedder() if static else None)
        try:
            figures = {**_figures(run, len(passages)),
                       "query": bench_queries(ws, title_questions(passages, queries), modes=("graphrag", "hybrid"))}
        finally:
            ws.close()
        shutil.rmtree(folder, ignore_errors=True)
        return figures
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
