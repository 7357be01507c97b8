"""The performance benchmark: PPR, ingest, embedding, query latency and app render, one run.

Every ratio is measured within one run on one machine, so a loaded machine slows both sides of
a ratio alike. Sections:

- ``ppr``: our :class:`~workbench.context_graph.ppr.PageRankIndex` (built once from edge arrays, the GraphRAG
  walk timed per query over several personalizations) against ``networkx.pagerank`` and
  igraph's exact PRPACK ``personalized_pagerank`` on the same graphs and seeds, with the
  largest absolute difference to each.
- ``ingest``: a fresh ingest of a benchmark corpus with per-stage seconds, passages per second,
  the peak RSS sampled during the ingest, and a second run over the unchanged corpus. The chunk
  vectors of the fresh ingest are served from the cached benchmark workspace (so extraction and
  storing are timed without the model); MiniLM's own cost is measured separately (our embed path
  against ``model.encode`` on the same texts), and two complete ingests are timed too: the first
  ingest a user meets, every chunk and name embedded by the settings' backend, and one with the
  static embedder. The static embedder's speedup and its recall cost on musique are reported here.
- ``embedding``: every ``embedding.backend`` (torch, onnx-int8, openvino, openvino-int8) on the same 512
  chunks of the ingest corpus, chunks/s with the ratio to torch, and each backend's dense R@2/R@5
  on musique; the recommended default (:mod:`workbench.bench.backends`).
- ``query``: p50/p95 of every retrieval mode over N queries, query embedding included.
- ``communities``: detection and reports from scratch, then on a copy of the workspace the
  reports built from scratch against those that follow one note added, edited and removed, each
  timed to the first answer of ``communities`` (:mod:`workbench.bench.community_follow`).
- ``app``: Graph and Compare page render times through ``streamlit.testing`` in a child process
  (the core never imports streamlit).
- ``app_sample``: the app on the bundled sample corpus as an analyst meets it: first load, a
  switch to every page, and the sample evaluation run in the app against ``workbench eval``.

Examples
--------
>>> percentile([1.0, 2.0, 3.0, 4.0], 50)
2.5
>>> parse_sizes("200:800,1000:4000")
[(200, 800), (1000, 4000)]
"""

from __future__ import annotations

import hashlib
import json
import statistics
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any, Hashable, Sequence

import numpy as np

from ..runtime.progress import tqdm_progress
from .app_perf import bench_app, bench_app_sample, bench_fresh_process
from .common import ROOT, PerfError, cached_vectors, fresh_ingest, passages_file

if TYPE_CHECKING:
    from ..workspace.workspace import Workspace

__all__ = ["DEFAULT_PPR_SIZES", "PerfError", "percentile", "parse_sizes", "random_digraph", "bench_ppr",
           "bench_ingest", "bench_embedding", "bench_static_recall", "bench_queries", "bench_app", "bench_app_sample",
           "bench_communities", "bench_fresh_process",
           "run_perf", "DEFAULT_INGEST_DATA", "DEFAULT_MUSIQUE", "DEFAULT_CACHE", "SECTIONS"]

DEFAULT_PPR_SIZES = [(10_000, 40_000), (200_000, 1_000_000)]
DEFAULT_INGEST_DATA = ROOT.parent / "shared" / "bench" / "2wikimultihopqa"
DEFAULT_MUSIQUE = ROOT.parent / "shared" / "bench" / "musique"
DEFAULT_CACHE = Path.home() / ".cache" / "workbench" / "bench"
SECTIONS = ("ppr", "ingest", "embedding", "query", "fresh", "communities", "app", "app_sample")
#: Chunks every embedding backend encodes in the ``embedding`` section.
EMBEDDING_BACKEND_CHUNKS = 512


def percentile(values: Sequence[float], q: float) -> float:
    """Linear-interpolated percentile (numpy's default)."""
    return float(np.percentile(np.asarray(values, dtype=float), q))


def parse_sizes(text: str) -> list[tuple[int, int]]:
    """``"nodes:edges,nodes:edges"`` -> pairs; :class:`PerfError` on anything else."""
    sizes = []
    for part in text.split(","):
        try:
            nodes, edges = (int(x) for x in part.split(":"))
        except ValueError:
            raise PerfError(f"--ppr-sizes: {part!r} is not NODES:EDGES, e.g. 10000:40000") from None
        if nodes < 2 or edges < 1 or edges > nodes * (nodes - 1):
            raise PerfError(f"--ppr-sizes: no simple directed graph has {nodes} nodes and {edges} edges")
        sizes.append((nodes, edges))
    return sizes


# -- PPR ---------------------------------------------------------------------------------------
def random_edges(nodes: int, edges: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """A random simple directed graph with exactly ``edges`` edges (G(n, m)) as source and target arrays."""
    rng = np.random.default_rng(seed)
    codes = np.empty(0, dtype=np.int64)
    while codes.size < edges:
        src = rng.integers(0, nodes, size=2 * edges)
        dst = rng.integers(0, nodes, size=2 * edges)
        keep = src != dst
        codes = np.unique(np.concatenate([codes, src[keep] * nodes + dst[keep]]))
    codes = rng.permutation(codes)[:edges]
    return codes // nodes, codes % nodes


def random_digraph(nodes: int, edges: int, seed: int = 0):
    """:func:`random_edges` as a networkx graph (what networkx's PageRank needs)."""
    import networkx as nx

    src, dst = random_edges(nodes, edges, seed)
    graph = nx.DiGraph()
    graph.add_nodes_from(range(nodes))
    graph.add_edges_from(zip(src.tolist(), dst.tolist()))
    return graph


def _personalizations(nodes: int, count: int, seed: int) -> list[dict[Hashable, float]]:
    rng = np.random.default_rng(seed)
    return [{int(n): 1.0 for n in rng.choice(nodes, size=3, replace=False)} for _ in range(count)]


#: Agreement wanted with igraph's PRPACK, which solves the system exactly.
IGRAPH_AGREEMENT = 1e-5


def bench_ppr(sizes=DEFAULT_PPR_SIZES, queries: int = 10, seed: int = 0) -> list[dict]:
    """Our PPR against networkx and igraph on the same random graphs and seeds.

    Ours is the GraphRAG walk (:meth:`~workbench.context_graph.ppr.PageRankIndex.walk`: damping 0.85, stop when
    no score moves by 1e-6, at most 100 iterations) over an index built straight from the edge
    arrays. networkx is timed with its defaults (its l1 stop rule loosens with the graph, so its
    difference is reported, not held to a bound); igraph's PRPACK is exact, and ours must agree
    with it to :data:`IGRAPH_AGREEMENT` at every size.
    """
    import networkx as nx

    from ..context_graph.ppr import PageRankIndex

    try:
        import igraph
    except ImportError:
        igraph = None
    out = []
    for nodes, edges in sizes:
        src, dst = random_edges(nodes, edges, seed)
        started = time.perf_counter()
        index = PageRankIndex.from_edges(range(nodes), src, dst, directed=True)
        build_ms = 1000 * (time.perf_counter() - started)
        people = _personalizations(nodes, queries, seed + 1)
        vectors = [index.vector(p) for p in people]
        index.walk(vectors[0])  # warm caches once, like a running app
        ours, iterations, mine = [], [], []
        for p in vectors:
            started = time.perf_counter()
            scores, steps, _ = index.walk(p)
            ours.append(time.perf_counter() - started)
            iterations.append(steps)
            mine.append(scores)
        # networkx rebuilds its matrix on every call; on the big graph one call is enough.
        runs = 3 if edges <= 100_000 else 1
        graph = nx.DiGraph()
        graph.add_nodes_from(range(nodes))
        graph.add_edges_from(zip(src.tolist(), dst.tolist()))
        theirs, diff = [], 0.0
        for person, scores in zip(people[:runs], mine):
            started = time.perf_counter()
            reference = nx.pagerank(graph, personalization=person)
            theirs.append(time.perf_counter() - started)
            diff = max(diff, float(np.abs(scores - np.array([reference[n] for n in range(nodes)])).max()))
        del graph
        ours_ms, nx_ms = 1000 * statistics.mean(ours), 1000 * statistics.mean(theirs)
        entry: dict[str, Any] = {
            "nodes": nodes, "edges": edges, "build_ms": round(build_ms, 1), "ours_ms": float(f"{ours_ms:.4g}"),
            "ours_iterations": max(iterations), "networkx_ms": float(f"{nx_ms:.4g}"), "ratio": float(f"{nx_ms / ours_ms:.4g}"),
            "max_abs_diff": float(f"{diff:.3g}"), "ours_queries": len(ours), "networkx_queries": len(theirs)}
        if igraph is not None:
            entry.update(_versus_igraph(igraph, nodes, src, dst, people, mine))
            entry["igraph_ratio"] = round(entry["igraph_ms"] / ours_ms, 1)
        else:
            entry["igraph"] = "not installed (pip install igraph)"
        out.append(entry)
        del index
    return out


def _versus_igraph(igraph, nodes: int, src: np.ndarray, dst: np.ndarray, people, mine) -> dict:
    """igraph's PRPACK personalized PageRank on the same graph and seeds: time and largest difference."""
    started = time.perf_counter()
    g = igraph.Graph(n=nodes, edges=np.column_stack([src, dst]).tolist(), directed=True)
    build_ms = 1000 * (time.perf_counter() - started)
    times, diff = [], 0.0
    for person, scores in zip(people, mine):
        reset = np.zeros(nodes)
        reset[list(person)] = list(person.values())
        started = time.perf_counter()
        theirs = g.personalized_pagerank(damping=0.85, reset=reset.tolist(), implementation="prpack")
        times.append(time.perf_counter() - started)
        diff = max(diff, float(np.abs(scores - np.asarray(theirs)).max()))
    return {"igraph_ms": round(1000 * statistics.mean(times), 3), "igraph_build_ms": round(build_ms, 1),
            "max_abs_diff_igraph": float(f"{diff:.3g}"), "igraph_agrees": diff <= IGRAPH_AGREEMENT}


# -- ingest ------------------------------------------------------------------------------------
class _FreshQueries:
    """The same embedder under a new identity, so no query vector is served from a cache."""

    def __init__(self, base):
        self.base, self.name, self.dimension = base, base.name, base.dimension

    def embed(self, texts):
        return self.base.embed(texts)


def cached_workspace(data_dir: Path, cache_dir: Path, settings=None, embedder=None):
    """The benchmark corpus ingested once with ``embedder`` (default: the settings' one) in
    ``cache_dir/perf-<set>-<hash>``; reused after."""
    from ..workspace.workspace import Workspace

    corpus = data_dir / "corpus.jsonl"
    try:
        digest = hashlib.sha256(corpus.read_bytes()).hexdigest()[:12]
    except OSError as exc:
        raise PerfError(f"{corpus}: cannot read the benchmark's passages ({exc.strerror or exc}); "
                        "give the folder with --ingest-data (e.g. ../shared/bench/2wikimultihopqa)") from None
    folder = cache_dir / f"perf-{data_dir.resolve().name}-{digest}"
    path, passages = passages_file(data_dir, folder / "corpus")
    ws = Workspace(folder / "ws", settings=settings, embedder=embedder)
    ws.ingest([path], progress=tqdm_progress("cache workspace"))
    return ws, path, passages


def bench_ingest(data_dir: Path, cache_dir: Path, settings, embedder, static) -> tuple[dict, Any]:
    """Fresh ingest figures; returns them and the cached workspace, embedded by ``embedder`` (the
    settings' one), for the queries and the app."""
    ws, path, passages = cached_workspace(data_dir, cache_dir, settings, embedder)
    run = fresh_ingest(path, cache_dir / "perf-fresh", settings, ws.path, "fresh ingest")
    n = len(passages)
    stages = run["stages"]
    pipeline_s = sum(stages.get(k, 0.0) for k in ("chunk", "extract", "canonicalize+graph"))
    without_embed = run["seconds"] - stages.get("embed", 0.0) - stages.get("entity_vectors+summaries", 0.0)
    out = {
        "passages": n, "chunks": run["chunks"], "seconds": round(run["seconds"], 2),
        "passages_per_second": round(n / run["seconds"], 1),
        "peak_rss_mb": round(run["peak_rss_mb"], 1), "rss_before_ingest_mb": round(run["rss_before_mb"], 1),
        "peak_rss_note": "measured in a fresh child process with the model loaded, as `workbench ingest` runs",
        "per_stage_s": stages,
        "second_run_seconds": round(run["second"], 3),
        "second_run_speedup": round(run["seconds"] / max(run["second"], 1e-9), 1),
        "second_run_unchanged": run["unchanged"],
        "extract_canon_graph_passages_per_second": round(n / max(pipeline_s, 1e-9), 1),
        "seconds_without_embedding": round(without_embed, 2),
        "chunk_vectors": f"served from the cached workspace's embedding cache ({run['missed']} computed); "
                         "the model's own cost is under 'embedding'",
    }
    first = fresh_ingest(path, cache_dir / "perf-first", settings, None, "first ingest (everything embedded)")
    out["first_ingest"] = {
        "seconds": round(first["seconds"], 2), "passages_per_second": round(n / first["seconds"], 1),
        "peak_rss_mb": round(first["peak_rss_mb"], 1), "per_stage_s": first["stages"],
        "embedder": settings.embedding.backend, "model_embedding_s": round(first["model_s"], 2),
        "times_model_embedding": round(first["seconds"] / first["model_s"], 2) if first["model_s"] > 0 else None,
        "note": "what a user's first ingest costs: every chunk and entity name embedded by the settings' backend, "
                "its export already made (target < 80 s for 2Wiki)"}
    static_run = fresh_ingest(path, cache_dir / "perf-fresh-static", settings, None, "fresh ingest (static)",
                              embedder="static")
    out["static_embedder_ingest"] = {
        "seconds": round(static_run["seconds"], 2), "passages_per_second": round(n / static_run["seconds"], 1),
        "peak_rss_mb": round(static_run["peak_rss_mb"], 1), "per_stage_s": static_run["stages"],
        "note": "a complete fresh ingest, every chunk and entity name embedded by the static embedder"}
    return out, ws


def bench_embedding(texts: Sequence[str], minilm, static, rounds: int = 3) -> dict:
    """Our ingest's embed path against ``model.encode`` on the same texts, and the static embedder.

    Our path is :func:`~workbench.workspace.ingest_pipeline.embed_cached` into an empty store each round (text
    hashing, the cache lookup and write, batching), so every text reaches the model. (An ingest's
    chunk texts skip the cache write: Chroma keeps their vectors. So this is an upper bound.)
    """
    import tempfile

    from ..vectors.embedding_cache import embed_cached
    from ..record.store import Store

    model = minilm._load()
    texts = list(texts)
    ours, direct, fast = [], [], []

    def run_ours() -> None:
        with tempfile.TemporaryDirectory() as folder:
            store = Store(Path(folder) / "cache.sqlite")
            started = time.perf_counter()
            embed_cached(texts, store, minilm)
            ours.append(time.perf_counter() - started)
            store.close()

    def run_direct() -> None:
        started = time.perf_counter()
        model.encode(texts, batch_size=minilm.batch_size, normalize_embeddings=True, convert_to_numpy=True,
                     show_progress_bar=False)
        direct.append(time.perf_counter() - started)

    for round_number in range(rounds):  # alternate the order so warm-up and load hit both sides alike
        for run in ((run_ours, run_direct) if round_number % 2 == 0 else (run_direct, run_ours)):
            run()
        started = time.perf_counter()
        static.embed(texts)
        fast.append(time.perf_counter() - started)
    ours_s, direct_s, fast_s = min(ours), min(direct), min(fast)
    return {"texts": len(texts), "ours_s": round(ours_s, 3), "model_encode_s": round(direct_s, 3),
            "overhead_pct": round(100 * (ours_s / direct_s - 1), 1),
            "minilm_texts_per_second": round(len(texts) / ours_s, 1),
            "static_s": round(fast_s, 4), "static_texts_per_second": round(len(texts) / max(fast_s, 1e-9), 1),
            "static_speedup": round(ours_s / max(fast_s, 1e-9), 1)}


def bench_static_recall(data_dir: Path, minilm, static, cache_dir: Path) -> dict:
    """Dense R@2/R@5 on a multi-hop set with MiniLM and with the static embedder (cosine over passages)."""
    from .multihop import BenchError, load_bench, recall_at

    try:
        bench = load_bench(data_dir)
    except BenchError as exc:
        raise PerfError(str(exc)) from None
    ids = [str(p["id"]) for p in bench.passages]
    texts = [f"{p.get('title') or ''}\n{p['text']}".strip() for p in bench.passages]
    out: dict[str, Any] = {"dataset": bench.name, "questions": len(bench.questions), "passages": len(ids)}
    for label, embedder in (("minilm", minilm), ("static", static)):
        passages = cached_vectors(texts, embedder, cache_dir)  # MiniLM's pass is cached between runs
        queries = embedder.embed([q.question for q in bench.questions])
        order = np.argsort(-(queries @ passages.T), axis=1)[:, :5]
        r2 = statistics.mean(recall_at([ids[i] for i in row], q.gold_ids, 2) for row, q in zip(order, bench.questions))
        r5 = statistics.mean(recall_at([ids[i] for i in row], q.gold_ids, 5) for row, q in zip(order, bench.questions))
        out[f"{label}_recall@2"], out[f"{label}_recall@5"] = round(100 * r2, 1), round(100 * r5, 1)
    out["recall@2_cost_points"] = round(out["minilm_recall@2"] - out["static_recall@2"], 1)
    out["recall@5_cost_points"] = round(out["minilm_recall@5"] - out["static_recall@5"], 1)
    return out


# -- queries ---------------------------------------------------------------------------------
def title_questions(passages: Sequence[dict], count: int, seed: int = 0) -> list[str]:
    """``count`` questions made from passage titles, e.g. "Who or what was Teutberga?"."""
    rng = np.random.default_rng(seed)
    titles = sorted({str(p.get("title") or "").strip() for p in passages} - {""})
    if not titles:
        raise PerfError("the corpus has no titles to make questions from")
    picked = rng.choice(len(titles), size=count, replace=count > len(titles))
    return [f"Who or what was {titles[i]}?" for i in picked]


def bench_queries(ws: Workspace, questions: Sequence[str], modes: Sequence[str] | None = None) -> dict:
    """p50/p95 per mode; a fresh embedder identity per mode keeps query embedding in the time."""
    from ..retrieve import MODES, retrieve

    base = ws.embedder
    out = {}
    try:
        for mode in modes or MODES:
            ws.embedder = _FreshQueries(base)
            started = time.perf_counter()
            retrieve(ws, "warm-up question about indexes", mode=mode, k=10)  # builds the mode's indexes once
            first_ms = 1000 * (time.perf_counter() - started)
            times: list[float] = []
            used: dict[str, int] = {}
            for q in questions:
                started = time.perf_counter()
                result = retrieve(ws, q, mode=mode, k=10)
                times.append(1000 * (time.perf_counter() - started))
                used[result.mode_used] = used.get(result.mode_used, 0) + 1
            out[mode] = {"p50_ms": round(percentile(times, 50), 1), "p95_ms": round(percentile(times, 95), 1),
                         "queries": len(times), "first_query_ms": round(first_ms, 1), "mode_used": used}
    finally:
        ws.embedder = base
    return out


# -- the whole run -----------------------------------------------------------------------------
def bench_communities(ws: Workspace) -> dict:
    """Community detection plus extractive reports on the workspace's graph, from scratch
    (target < 30 s; embedding the reports is not counted), then again with every report kept."""
    from ..corpus.community_reports import ReportOptions, build_reports

    start = time.perf_counter()
    graph = ws.graph
    graph_s = time.perf_counter() - start
    options = ReportOptions.from_settings(ws.settings.communities)
    fresh = build_reports(graph, ws.store.chunks, options)
    again = build_reports(graph, ws.store.chunks, options, {r.signature: r for r in fresh.reports})
    sizes = [r.size for r in fresh.reports]
    return {"entities": len(graph), "edges": graph.number_of_edges(), "graph_build_s": round(graph_s, 3),
            "communities": len(fresh.reports), "largest": max(sizes, default=0),
            "median_size": statistics.median(sizes) if sizes else 0,
            "detect_s": round(fresh.seconds["detect"], 3), "reports_s": round(fresh.seconds["reports"], 3),
            "seconds": round(fresh.seconds["total"], 3),
            "unchanged_rebuild_s": round(again.seconds["total"], 3), "unchanged_kept": again.kept,
            "unchanged_built": again.built}


def run_perf(ppr_sizes=DEFAULT_PPR_SIZES, ingest_data: Path = DEFAULT_INGEST_DATA,
             musique_data: Path | None = DEFAULT_MUSIQUE, queries: int = 100, cache_dir: Path = DEFAULT_CACHE,
             sections: Sequence[str] = SECTIONS, settings=None, embed_sample: int = 256) -> dict:
    """Every section; a section left out of ``sections`` says so instead of a figure."""
    from ..embedding import SentenceTransformerEmbedder, embedder_from_settings
    from ..settings import load_settings
    from ..embedding.static import StaticEmbedder

    unknown = set(sections) - set(SECTIONS)
    if unknown:
        raise PerfError(f"unknown section(s) {', '.join(sorted(unknown))}; sections: {', '.join(SECTIONS)}")
    settings = settings or load_settings()
    skipped = {"not measured": "section not selected (--sections)"}
    payload: dict[str, Any] = {key: dict(skipped) for key in SECTIONS}
    payload["ppr"] = bench_ppr(ppr_sizes) if "ppr" in sections else skipped
    if "app_sample" in sections:
        payload["app_sample"] = bench_app_sample(Path(cache_dir), settings)
    if "embedding" in sections:  # every embedding.backend on the same chunks (workbench.bench.backends)
        from .backends import bench_backends, sample_chunks

        chunks = sample_chunks(Path(ingest_data), EMBEDDING_BACKEND_CHUNKS, settings.chunking.max_chars)
        payload["embedding"] = bench_backends(settings, chunks, Path(musique_data) if musique_data else None,
                                              Path(cache_dir))
    if not {"ingest", "query", "fresh", "communities", "app"} & set(sections):
        return payload
    # The benchmark workspace is embedded as the settings say (embedding.backend: the default a user
    # gets), so the ingest, the queries and the app are measured in that vector space; MiniLM on
    # torch is kept for the embed-path overhead and the static embedder's recall cost.
    minilm = SentenceTransformerEmbedder(settings.embedding.model, settings.embedding.batch_size)
    configured = embedder_from_settings(settings)
    static = StaticEmbedder()
    ingest, ws = bench_ingest(Path(ingest_data), Path(cache_dir), settings, configured, static) \
        if "ingest" in sections else (None, cached_workspace(Path(ingest_data), Path(cache_dir), settings, configured)[0])
    try:
        if ingest is not None:
            sample = [c.text for c in ws.chunks()[:embed_sample]]
            ingest["embedding"] = bench_embedding(sample, minilm, static)
            rate = ingest["embedding"]["minilm_texts_per_second"]
            ingest["embedding"]["minilm_full_corpus_s_estimate"] = round(ingest["chunks"] / rate, 1)
            if musique_data is not None:
                ingest["static_embedder_recall"] = bench_static_recall(Path(musique_data), minilm, static, Path(cache_dir))
            payload["ingest"] = ingest
        if "query" in sections:
            passages = [json.loads(line) for line in (Path(ingest_data) / "corpus.jsonl").read_text(encoding="utf-8").splitlines() if line.strip()]
            payload["query"] = bench_queries(ws, title_questions(passages, queries))
        if "fresh" in sections:
            passages = [json.loads(line) for line in (Path(ingest_data) / "corpus.jsonl").read_text(encoding="utf-8").splitlines() if line.strip()]
            payload["fresh"] = bench_fresh_process(ws.path, title_questions(passages, 1)[0])
        if "communities" in sections:
            from .community_follow import bench_community_follow

            payload["communities"] = bench_communities(ws)
            # On a copy: the benchmark workspace is never written.
            payload["communities"]["follow"] = bench_community_follow(ws.path, settings,
                                                                      Path(cache_dir) / "perf-community-follow")
        workspace_path = ws.path
    finally:
        ws.close()
    if "app" in sections:
        payload["app"] = bench_app(workspace_path)
    return payload
