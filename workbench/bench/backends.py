"""The embedding backends side by side: speed on the same chunks and dense recall on a multi-hop set.

``bench perf``'s ``embedding`` section. Every backend of ``embedding.backend`` embeds the same
chunks in each of a few rounds, the order of the backends rotating from round to round so that
warm-up and a changing load hit each alike; a backend's figure is its best round. Loading (and
exporting, the first time on a machine) is timed apart. Each backend's vectors are compared with
torch's on those chunks (cosine), and its dense Recall@2/@5 is measured on a multi-hop set
(MuSiQue by default) the way ``bench_static_recall`` measures the static embedder's: every
question against every passage by cosine, the passage vectors cached per backend.

The recommended default is the fastest backend whose R@5 is within :data:`RECALL_TOLERANCE`
points of torch's.

Examples
--------
>>> rows = {"torch": {"chunks_per_second": 40.0, "recall@5": 62.0},
...         "onnx-int8": {"chunks_per_second": 130.0, "recall@5": 61.5},
...         "openvino": {"chunks_per_second": 150.0, "recall@5": 58.0}}
>>> fastest_within(rows, 1.0)
'onnx-int8'
"""

from __future__ import annotations

import statistics
import time
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from ..settings import setting_default
from .common import PerfError, cached_vectors

__all__ = ["BACKENDS", "RECALL_TOLERANCE", "sample_chunks", "backend_embedders", "bench_backend_speed",
           "dense_recall", "fastest_within", "bench_backends"]

#: Every value of ``embedding.backend``, the reference first.
BACKENDS = ("torch", "onnx-int8", "openvino", "openvino-int8")
#: Points of R@5 a backend may lose against torch and still be recommended as the default.
RECALL_TOLERANCE = 1.0


def sample_chunks(data_dir: Path, count: int = 512,
                  max_chars: int = setting_default("chunking.max_chars")) -> list[str]:
    """The first ``count`` chunks of a benchmark corpus, chunked as the ingest chunks its records
    (title + newline + text, at most ``max_chars`` characters a chunk)."""
    from ..ingest.chunking import chunk_document
    from ..model import Document
    from .multihop import BenchError, read_jsonl

    try:
        passages = read_jsonl(Path(data_dir) / "corpus.jsonl")
    except BenchError as exc:
        raise PerfError(str(exc)) from None
    texts: list[str] = []
    for p in passages:
        title = str(p.get("title") or "").strip()
        text = f"{title}\n{p['text']}" if title else str(p["text"])
        doc = Document(id=str(p["id"]), source_path="", title=title or str(p["id"]), kind="record", text=text,
                       content_hash="")
        texts += [c.text for c in chunk_document(doc, max_chars)]
        if len(texts) >= count:
            break
    return texts[:count]


def backend_embedders(settings, backends: Sequence[str] = BACKENDS) -> dict[str, Any]:
    """One embedder per backend for ``settings.embedding.model``, loaded lazily."""
    from ..embedding import embedder_from_settings

    out = {}
    for backend in backends:
        chosen = settings.model_copy(deep=True)
        chosen.embedding.backend = backend
        out[backend] = embedder_from_settings(chosen)
    return out


def bench_backend_speed(texts: Sequence[str], embedders: dict[str, Any], rounds: int = 3) -> dict[str, dict]:
    """Chunks/s of each embedder on ``texts`` (best of ``rounds``), with its ratio to the first
    (torch) and the cosine of its vectors to the first's."""
    texts = list(texts)
    names = list(embedders)
    loads: dict[str, float] = {}
    for name in names:  # load (and export if needed) and warm up, untimed by the rounds
        started = time.perf_counter()
        embedders[name].embed(texts[:8])
        loads[name] = time.perf_counter() - started
    times: dict[str, list[float]] = {name: [] for name in names}
    vectors: dict[str, np.ndarray] = {}
    for round_number in range(rounds):
        shift = round_number % len(names)
        for name in names[shift:] + names[:shift]:
            started = time.perf_counter()
            vectors[name] = embedders[name].embed(texts)
            times[name].append(time.perf_counter() - started)
    reference = names[0]
    out = {}
    for name in names:
        best = min(times[name])
        cosine = (vectors[name] * vectors[reference]).sum(axis=1)
        export = getattr(embedders[name], "export", None)
        out[name] = {
            "embedder": embedders[name].name, "texts": len(texts), "seconds": round(best, 3),
            "chunks_per_second": round(len(texts) / best, 1),
            "ratio": round(min(times[reference]) / best, 2),
            "cosine_to_torch_min": round(float(cosine.min()), 4), "cosine_to_torch_mean": round(float(cosine.mean()), 4),
            "dimension": int(vectors[name].shape[1]),
            "norm_max_error": float(f"{np.abs(np.linalg.norm(vectors[name], axis=1) - 1).max():.2g}"),
            "load_s": round(loads[name], 2),
            "exported_now": bool(export.exported_now) if export is not None else None,
            "export_s": round(export.seconds, 1) if export is not None else None,
        }
    return out


def dense_recall(bench, embedder, cache_dir: Path) -> tuple[float, float]:
    """Dense (R@2, R@5) in percent of ``embedder`` on a loaded multi-hop set, passage vectors cached."""
    from .multihop import recall_at

    ids = [str(p["id"]) for p in bench.passages]
    texts = [f"{p.get('title') or ''}\n{p['text']}".strip() for p in bench.passages]
    passages = cached_vectors(texts, embedder, cache_dir)
    queries = embedder.embed([q.question for q in bench.questions])
    order = np.argsort(-(queries @ passages.T), axis=1)[:, :5]
    ranked = [[ids[i] for i in row] for row in order]
    r2 = statistics.mean(recall_at(r, q.gold_ids, 2) for r, q in zip(ranked, bench.questions))
    r5 = statistics.mean(recall_at(r, q.gold_ids, 5) for r, q in zip(ranked, bench.questions))
    return round(100 * r2, 1), round(100 * r5, 1)


def fastest_within(rows: dict[str, dict], tolerance: float = RECALL_TOLERANCE, reference: str = "torch") -> str:
    """The fastest backend whose ``recall@5`` is at most ``tolerance`` points below ``reference``'s."""
    floor = rows[reference]["recall@5"] - tolerance
    eligible = [name for name, row in rows.items() if row["recall@5"] >= floor]
    return max(eligible, key=lambda name: rows[name]["chunks_per_second"])


def bench_backends(settings, texts: Sequence[str], recall_data: Path | None, cache_dir: Path,
                   backends: Sequence[str] = BACKENDS, rounds: int = 3, embedders: dict[str, Any] | None = None) -> dict:
    """The section: speed per backend on ``texts``, recall per backend on ``recall_data`` (None:
    skipped), the backend recommended as the default and the one the settings name.

    ``embedders`` (backend -> embedder, torch first) replaces the ones made from ``settings``."""
    from .multihop import BenchError, load_bench

    embedders = embedders if embedders is not None else backend_embedders(settings, backends)
    if next(iter(embedders)) != "torch":
        raise PerfError("the embedding section measures every backend against torch: list torch first")
    rows = bench_backend_speed(texts, embedders, rounds)
    out: dict[str, Any] = {"texts": len(texts), "rounds": rounds, "backends": rows,
                           "configured_backend": settings.embedding.backend}
    if recall_data is not None:
        try:
            bench = load_bench(recall_data)
        except BenchError as exc:
            raise PerfError(str(exc)) from None
        out["recall_dataset"] = bench.name
        out["recall_questions"] = len(bench.questions)
        for name, embedder in embedders.items():
            rows[name]["recall@2"], rows[name]["recall@5"] = dense_recall(bench, embedder, cache_dir)
        out["recommended_backend"] = fastest_within(rows)
        out["recall_tolerance_points"] = RECALL_TOLERANCE
    return out
