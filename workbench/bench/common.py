"""What the benchmarks share: their one error, passage vectors cached between runs, the
benchmark passages as a records file, and a fresh ingest measured in a child process."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from ..runtime.progress import DOCUMENTS, tqdm_progress

if TYPE_CHECKING:
    from ..workspace.workspace import Workspace

__all__ = ["ROOT", "PerfError", "RssSampler", "cache_chunk_vectors", "cached_vectors", "cpu_seconds", "fresh_ingest",
           "graph_seconds", "passages_file"]

#: The project folder (its app.py, sample corpus and the shared benchmark data beside it).
ROOT = Path(__file__).resolve().parents[2]

class PerfError(ValueError):
    """A benchmark argument or input that cannot be used."""


def cached_vectors(texts: list[str], embedder, cache_dir: Path) -> np.ndarray:
    """``embedder.embed(texts)``, kept as ``.npy`` under ``cache_dir/perf-vectors`` and keyed by
    the texts and the embedder's name, so a benchmark embeds a fixed passage set once."""
    digest = hashlib.sha256(("\n\x00".join(texts) + embedder.name).encode()).hexdigest()[:16]
    path = cache_dir / "perf-vectors" / f"{embedder.name}-{digest}.npy"
    if path.exists():
        return np.load(path)
    vectors = embedder.embed(texts)
    path.parent.mkdir(parents=True, exist_ok=True)
    np.save(path, vectors)
    return vectors


class RssSampler:
    """Peak resident memory of this process while the ``with`` block runs, sampled every 20 ms;
    :attr:`by_stage` the peak of each value :attr:`stage` was set to meanwhile (an ingest's
    progress stages), so a peak says which step reached it."""

    def __enter__(self) -> RssSampler:
        import psutil

        self._process = psutil.Process()
        self.peak = self._process.memory_info().rss
        self.stage = "start"
        self.by_stage: dict[str, int] = {}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()
        return self

    def _sample(self) -> None:
        rss, stage = self._process.memory_info().rss, self.stage
        self.peak = max(self.peak, rss)
        self.by_stage[stage] = max(self.by_stage.get(stage, 0), rss)

    def _run(self):
        while not self._stop.wait(0.02):
            self._sample()

    def __exit__(self, *exc):
        self._stop.set()
        self._thread.join()
        self._sample()


def passages_file(data_dir: Path, target_dir: Path) -> tuple[Path, list[dict]]:
    """The benchmark's passages as a records file (text = title + newline + text), as multihop writes them."""
    from .multihop import BenchError, read_jsonl

    try:
        passages = read_jsonl(data_dir / "corpus.jsonl")
    except BenchError as exc:
        raise PerfError(str(exc)) from None
    lines = []
    for p in passages:
        title = str(p.get("title") or "").strip()
        text = f"{title}\n{p['text']}" if title else p["text"]
        lines.append(json.dumps({"id": str(p["id"]), "title": title or str(p["id"]), "text": text}, ensure_ascii=False))
    content = "\n".join(lines) + "\n"
    target_dir.mkdir(parents=True, exist_ok=True)
    path = target_dir / "passages.jsonl"
    if not path.exists() or path.read_text(encoding="utf-8") != content:
        path.write_text(content, encoding="utf-8")
    return path, passages


def graph_seconds(ws: Workspace) -> float:
    """Canonicalization + the one graph (entities, passages, PageRank index) built from the stored
    record, as ``ws.graph`` derives it."""
    started = time.perf_counter()
    graph = ws.derivation.assemble()
    graph.pagerank_index()
    return time.perf_counter() - started


class ModelClock:
    """An embedder whose calls are timed: :attr:`seconds` is the time the model itself took to
    embed (chunks and entity names), what an ingest's time is measured against; :attr:`cpu_seconds`
    the CPU time this process spent meanwhile (every core's), which other jobs on the machine
    change far less than the wall time; :attr:`texts` how many texts it was given."""

    def __init__(self, embedder) -> None:
        self._embedder = embedder
        self.seconds = 0.0
        self.cpu_seconds = 0.0
        self.texts = 0

    def embed(self, texts):
        started, cpu = time.perf_counter(), cpu_seconds()
        try:
            return self._embedder.embed(texts)
        finally:
            self.seconds += time.perf_counter() - started
            self.cpu_seconds += cpu_seconds() - cpu
            self.texts += len(texts)

    def __getattr__(self, name):
        return getattr(self._embedder, name)


def cpu_seconds() -> float:
    """User and system CPU time of this process so far, all its threads."""
    times = os.times()
    return times.user + times.system


def cache_name_vectors(folder: Path) -> int:
    """Copy the entity-name vectors of the workspace in ``folder`` into its embedding cache, where
    a served ingest reads every vector (an ingest keeps names in their index alone, and the
    child reading that index would count all of it in its RSS). Returns the rows added."""
    from ..vectors.entity_vectors import EntityVectors
    from ..embedding import text_hash
    from ..record.store import RECORD_FILE, Store

    index = EntityVectors(folder)
    space = index.space()
    if space is None:
        return 0
    store = Store(Path(folder) / RECORD_FILE)
    try:
        hashes = {text_hash(name): name for name in index.names()}
        held = store.has_embeddings(sorted(hashes), space)
        missing = sorted(h for h in hashes if h not in held)
        for lo in range(0, len(missing), 16384):
            part = missing[lo:lo + 16384]
            vectors = index.vectors_of(hashes[h] for h in part)
            store.cache_embeddings(part, np.stack([vectors[hashes[h]] for h in part]), space)
        return len(missing)
    finally:
        store.close()


def cache_chunk_vectors(folder: Path, settings) -> int:
    """Copy the chunk vectors of the workspace in ``folder`` from its Chroma collection into its
    record's embedding cache, where a served ingest reads every vector (a workspace keeps them in
    Chroma alone). Returns the rows added."""
    from ..embedding import text_hash
    from ..vectors.index import CHUNKS
    from ..workspace.workspace import Workspace

    ws = Workspace(folder, settings=settings, create=False)
    try:
        space = ws.vectors.space
        holder = {text_hash(text): chunk_id for chunk_id, text in ws.store.chunk_texts()}
        held = ws.store.has_embeddings(sorted(holder), space)
        missing = sorted(h for h in holder if h not in held)
        added = 0
        for lo in range(0, len(missing), 16384):
            vectors = ws.vectors.get_vectors(CHUNKS, [holder[h] for h in missing[lo:lo + 16384]])
            part = [h for h in missing[lo:lo + 16384] if holder[h] in vectors]
            if part:
                ws.store.cache_embeddings(part, np.stack([vectors[holder[h]] for h in part]), space)
            added += len(part)
        return added
    finally:
        ws.close()


def fresh_ingest(path: Path, folder: Path, settings, served_from: Path | None, desc: str,
                  embedder: str = "model", keep: bool = False, resident_model: bool = False) -> dict:
    """A fresh ingest in a child process, so its peak RSS is that of an ingest as a user runs it
    (model loaded, nothing left over from the sections before).

    ``embedder``: ``"model"`` (the settings' embedder, warmed up first) or ``"static"``. With
    ``served_from``, chunk and name vectors are read from that workspace's embedding cache (copied
    there first from its Chroma collection and its name index) and
    the embedder computes only the misses (:class:`~workbench.vectors.embedding_cache.CacheFirstEmbedder`).
    ``resident_model`` keeps the settings' model loaded beside a static embedder, as an app
    would. ``keep`` leaves the workspace in ``folder`` afterwards.
    """
    import multiprocessing

    if served_from is not None:
        cache_name_vectors(served_from)
        cache_chunk_vectors(served_from, settings)
    context = multiprocessing.get_context("spawn")
    with context.Pool(1) as pool:
        return pool.apply(_fresh_ingest_child, (path, folder, settings, served_from, desc, embedder, keep,
                                                resident_model))


def _fresh_ingest_child(path: Path, folder: Path, settings, served_from: Path | None, desc: str,
                        embedder_kind: str, keep: bool, resident_model: bool) -> dict:
    import psutil

    from ..embedding import embedder_from_settings
    from ..vectors.embedding_cache import CacheFirstEmbedder
    from ..embedding.static import StaticEmbedder
    from ..record.store import RECORD_FILE, Store

    from ..workspace.workspace import Workspace

    cache = None
    embedder: Any
    resident = None
    if embedder_kind == "model" or resident_model:
        resident = embedder_from_settings(settings)
        resident.embed(["warm the model as a user's ingest would"])
    model = ModelClock(StaticEmbedder() if embedder_kind == "static" else resident)
    embedder = model
    if served_from is not None:
        cache = Store(served_from / RECORD_FILE)
        embedder = CacheFirstEmbedder(embedder, cache)
    shutil.rmtree(folder, ignore_errors=True)
    ws = Workspace(folder, settings=settings, embedder=embedder)
    bar = tqdm_progress(desc)
    chunk_phase: dict[str, float] = {}
    rss = RssSampler()

    def progress(stage: str, done: int, total: int) -> None:
        if stage != DOCUMENTS and not chunk_phase:  # the documents are stored: the model has done their chunks
            chunk_phase.update(seconds=model.seconds, cpu_s=model.cpu_seconds, texts=model.texts)
        rss.stage = stage
        bar(stage, done, total)

    try:
        baseline = psutil.Process().memory_info().rss
        load_before = os.getloadavg()[0]
        with rss:
            started = time.perf_counter()
            report = ws.ingest([path], progress=progress)
            seconds = time.perf_counter() - started
            model_s, model_cpu_s, model_texts = model.seconds, model.cpu_seconds, model.texts
            load_after = os.getloadavg()[0]
        graph_s = graph_seconds(ws)
        stages = {k: round(v, 3) for k, v in report.stage_seconds.items()}
        stages["canonicalize+graph"] = round(graph_s, 3)
        # ws.ingest also derives the graph, embeds the entity names and builds the summaries.
        stages["entity_vectors+summaries"] = round(max(seconds - report.seconds - graph_s, 0.0), 3)
        started = time.perf_counter()
        second = ws.ingest([path])
        second_s = time.perf_counter() - started
        return {"seconds": seconds, "stages": stages, "peak_rss_mb": rss.peak / 2**20,
                "peak_rss_by_stage_mb": {stage: round(peak / 2**20) for stage, peak in rss.by_stage.items()},
                "model_s": model_s, "model_cpu_s": model_cpu_s, "model_texts": model_texts,
                "chunks_model": chunk_phase, "embedded": report.chunks_embedded,
                "load": [round(load_before, 2), round(load_after, 2)],
                "rss_before_mb": baseline / 2**20, "second": second_s,
                "unchanged": second.documents_unchanged, "chunks": report.chunks_written,
                "documents": report.documents_added,
                "missed": embedder.missed if isinstance(embedder, CacheFirstEmbedder) else None}
    finally:
        ws.close()
        if cache is not None:
            cache.close()
        if not keep:
            shutil.rmtree(folder, ignore_errors=True)
