"""The benchmark runs as ``bench multihop`` and ``bench scale`` start them, each returning a typed
result whose ``to_json()`` the command prints: the multi-hop recall of every mode
(:class:`MultihopRun`), graphrag's ablation (:class:`AblationRun`), the scale figures
(:class:`ScaleRun`).

Examples
--------
>>> IngestTiming(12.3456, 1000, 1000, {"embed": 10.04, "graph": 1.26}).to_json()
{'seconds': 12.35, 'passages_per_second': 81.0, 'chunks_embedded': 1000, 'stage_seconds': {'embed': 10.0, 'graph': 1.3}}
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Sequence

from .multihop import BenchError, ModeScore, MultihopReport, bench_workspace, load_bench, run_multihop

__all__ = ["AblationRun", "IngestTiming", "MultihopRun", "ScaleRun", "multihop_run", "scale_run"]


@dataclass(frozen=True)
class IngestTiming:
    """The ingest a multi-hop run began with, in a workspace new to it: opening, the model's load
    and every passage embedded."""

    seconds: float
    passages: int
    """Passages of the set."""
    chunks_embedded: int
    stage_seconds: dict[str, float]
    """Seconds per stage of the ingest."""

    def to_json(self) -> dict[str, Any]:
        return {"seconds": round(self.seconds, 2), "passages_per_second": round(self.passages / self.seconds, 2),
                "chunks_embedded": self.chunks_embedded,
                "stage_seconds": {k: round(v, 1) for k, v in self.stage_seconds.items()}}


@dataclass
class MultihopRun:
    """Recall@2 and @5 of every mode on a multi-hop set, with the embedder and the ingest it began with."""

    report: MultihopReport
    embedder: str
    """The embedder's name."""
    ingest: IngestTiming | None = None
    """The ingest timed, when the run began with one (None: the workspace was ingested before)."""

    def to_json(self) -> dict[str, Any]:
        return {**self.report.to_json(), "embedder": self.embedder,
                "ingest": self.ingest.to_json() if self.ingest is not None else None}


@dataclass
class AblationRun:
    """graphrag's Recall@2 and @5 on a multi-hop set under each variant of :mod:`workbench.bench.ablation`."""

    dataset: str
    questions: int
    passages: int
    results: dict[str, ModeScore]
    """Variant name -> its scores."""

    def to_json(self) -> dict[str, Any]:
        return {"dataset": self.dataset, "questions": self.questions, "passages": self.passages,
                "ablation": {name: {"recall@2": round(s.recall_at_2, 1), "recall@5": round(s.recall_at_5, 1),
                                    "seconds": round(s.seconds, 2), "modes_used": s.modes_used}
                             for name, s in self.results.items()}}


def multihop_run(data: str | Path, workspace: str | Path | None = None, settings=None, modes: Sequence[str] = (),
                 limit: int | None = None, ablation: bool = False, progress=None) -> MultihopRun | AblationRun:
    """The multi-hop benchmark at ``data`` (``corpus.jsonl`` and ``queries.jsonl``), its first
    ``limit`` questions, over the workspace ``workspace`` (None: a cache folder of its own):
    every mode (the baselines and ``modes``, else every registered mode), or with ``ablation``
    graphrag under each variant. :class:`BenchError` names a bad set or an unknown mode."""
    from ..retrieve import MODES

    bench = load_bench(data, limit=limit)
    unknown = [m for m in modes if m not in MODES]
    if unknown:
        raise BenchError(f"unknown mode(s) {', '.join(unknown)}; modes: {', '.join(MODES)}")
    ingests: list = []
    started = time.perf_counter()
    ws = bench_workspace(bench, workspace, settings=settings, progress=progress, on_ingest=ingests.append)
    # Opening, loading the model and the whole ingest: in a new workspace, a first ingest.
    ingest = None
    if ingests:
        ingest = IngestTiming(time.perf_counter() - started, len(bench.passages), ingests[0].chunks_embedded,
                              dict(ingests[0].stage_seconds))
    try:
        if ablation:
            from .ablation import run_ablation

            return AblationRun(bench.name, len(bench.questions), len(bench.passages), run_ablation(ws, bench))
        return MultihopRun(run_multihop(ws, bench, list(modes) or None), ws.embedder.name, ingest)
    finally:
        ws.close()


@dataclass
class ScaleRun:
    """The figures of ``bench scale``: each part run, the others None."""

    notes: dict[str, Any] | None = None
    """Generated one-paragraph notes ingested, then one added (:func:`~workbench.bench.sizes.bench_notes`)."""
    big_file: dict[str, Any] | None = None
    """One generated Markdown file (:func:`~workbench.bench.sizes.bench_big_file`)."""
    chat_log: dict[str, Any] | None = None
    """One generated chat log (:func:`~workbench.bench.sizes.bench_big_chat_log`)."""
    distinct_text: dict[str, Any] | None = None
    """One generated handbook of all-different sections (:func:`~workbench.bench.distinct_text.bench_distinct_text`)."""
    corpus: dict[str, Any] = field(default_factory=dict)
    """The corpus repeated with perturbed names (:func:`~workbench.bench.scale.bench_scale`)."""

    def to_json(self) -> dict[str, Any]:
        parts = {"notes": self.notes, "big_file": self.big_file, "chat_log": self.chat_log,
                 "distinct_text": self.distinct_text}
        return {**{name: figures for name, figures in parts.items() if figures is not None}, **self.corpus}


def scale_run(data: str | Path, cache_dir: Path, settings, copies: int = 10, queries: int = 50, server: bool = True,
              embedder: str = "model", notes: int = 0, file_mb: float = 0, chat_mb: float = 0,
              distinct_mb: float = 0) -> ScaleRun:
    """The parts of the scale run asked for: ``notes`` notes, a ``file_mb`` MB file, a ``chat_mb``
    MB chat log, a ``distinct_mb`` MB handbook of distinct text (embedded by ``embedder``),
    ``copies`` copies of the corpus at ``data`` (0 of each: skipped).
    :class:`~workbench.bench.common.PerfError` says what is missing."""
    from .common import PerfError
    from .scale import bench_scale
    from .sizes import bench_big_chat_log, bench_big_file, bench_notes

    corpus = Path(data) / "corpus.jsonl"
    if copies and not corpus.is_file():  # said before the notes' and the file's runs, not after
        raise PerfError(f"{corpus}: not found; give the benchmark folder with --data "
                        "(e.g. ../shared/bench/2wikimultihopqa), or --copies 0 to skip the corpus run")
    run = ScaleRun()
    if notes:
        run.notes = bench_notes(cache_dir, settings, notes)
    if file_mb:
        run.big_file = bench_big_file(cache_dir, settings, file_mb)
    if chat_mb:
        run.chat_log = bench_big_chat_log(cache_dir, settings, chat_mb)
    if distinct_mb:
        from .distinct_text import bench_distinct_text

        run.distinct_text = bench_distinct_text(cache_dir, settings, distinct_mb, embedder)
    if copies:
        run.corpus = bench_scale(Path(data), cache_dir, settings, copies=copies, queries=queries, server=server,
                                 embedder=embedder)
    return run
