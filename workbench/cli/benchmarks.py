"""The ``bench`` command group: ``bench multihop`` (:mod:`workbench.bench.multihop`) and ``bench perf``
(:mod:`workbench.bench.perf`). The benchmarks are plain functions; their options and tables are here."""

from __future__ import annotations

from pathlib import Path

from .bounds import between, finite_between
from .render import CommandError, emit

__all__ = ["register"]


def _render_multihop(payload: dict) -> str:
    from .render import table

    rows = [{"mode": mode, "R@2 %": f"{r['recall@2']:.1f}", "R@5 %": f"{r['recall@5']:.1f}",
             "seconds": f"{r['seconds']:.1f}",
             "modes used": ", ".join(f"{m} {n}" for m, n in r["modes_used"].items()) if len(r["modes_used"]) > 1
             or set(r["modes_used"]) - {mode} else ""}
            for mode, r in payload["results"].items()]
    head = f"{payload['dataset']}: {payload['questions']} questions over {payload['passages']} passages"
    ingest = payload.get("ingest")
    if ingest:
        head += (f"\nembedder {payload['embedder']}: ingested in {ingest['seconds']} s = {ingest['passages_per_second']} "
                 f"passages/s ({ingest['chunks_embedded']} chunks embedded; "
                 + ", ".join(f"{k} {v} s" for k, v in ingest["stage_seconds"].items()) + ")")
    elif "embedder" in payload:
        head += f"\nembedder {payload['embedder']}: the workspace was ingested before (no ingest timed)"
    return head + "\n" + table(rows, ["mode", "R@2 %", "R@5 %", "seconds", "modes used"])


def cmd_multihop(args):
    from ..bench.multihop import BenchError
    from ..bench.runs import AblationRun, multihop_run
    from ..runtime.progress import tqdm_progress
    from ..settings import load_settings

    modes = [m.strip() for m in (args.modes or "").split(",") if m.strip()]
    # The default workspace is the user's own: the benchmark gets a cache folder instead.
    workspace = None if Path(args.workspace) == Path("workspace") else args.workspace
    try:
        run = multihop_run(args.data, workspace, settings=load_settings(args.settings), modes=modes, limit=args.limit,
                           ablation=args.ablation, progress=tqdm_progress())
    except BenchError as exc:
        raise CommandError(str(exc), code=2) from None
    emit(args, run.to_json(), _render_ablation if isinstance(run, AblationRun) else _render_multihop)


def _render_ablation(payload: dict) -> str:
    from .render import table

    rows = [{"graphrag variant": name, "R@2 %": f"{r['recall@2']:.1f}", "R@5 %": f"{r['recall@5']:.1f}",
             "modes used": ", ".join(f"{m} {n}" for m, n in sorted(r["modes_used"].items()))}
            for name, r in payload["ablation"].items()]
    head = f"{payload['dataset']}: graphrag ablation, {payload['questions']} questions over {payload['passages']} passages"
    return head + "\n" + table(rows, ["graphrag variant", "R@2 %", "R@5 %", "modes used"])


def _fresh_line(fresh: dict) -> str:
    """The fresh-process figures (:func:`workbench.bench.perf.bench_fresh_process`) in one line."""
    return (f"stats {fresh['stats_s']} s (runs {fresh['stats_runs_s']}); first graphrag query "
            f"{fresh['first_graphrag_s']} s (runs {fresh['first_graphrag_runs_s']}, "
            f"{fresh['first_graphrag_in_process_s']} s after the interpreter started; used {fresh['mode_used']}, "
            f"graph {fresh['graph']}; RSS then {fresh['rss_after_first_query_mb']} MB for {fresh['passages']} passages "
            f"and {fresh['entities']} entities); the graph snapshot ({fresh['snapshot_mb']} MB) loads in "
            f"{fresh['snapshot_load_s']} s against {fresh['derive_from_record_s']} s to derive it from the record "
            f"= {fresh['snapshot_speedup']}x")


def _render_perf(payload: dict) -> str:
    """The figures as tables, ratios and targets beside them."""
    from .render import table

    lines = ["PPR (ours: the GraphRAG walk, index built from edge arrays, mean per query; targets: on 1M edges "
             "build < 3 s, >= 3x faster than igraph, |diff| to igraph <= 1e-5 at every size)"]
    if isinstance(payload["ppr"], list):
        lines.append(table([{"nodes": e["nodes"], "edges": e["edges"], "build ms": e["build_ms"], "ours ms": e["ours_ms"],
                             "iters": e["ours_iterations"], "networkx ms": e["networkx_ms"], "vs nx": f"{e['ratio']}x",
                             "|diff| nx": e["max_abs_diff"], "igraph ms": e.get("igraph_ms", e.get("igraph")),
                             "vs igraph": f"{e['igraph_ratio']}x" if "igraph_ratio" in e else "-",
                             "|diff| igraph": e.get("max_abs_diff_igraph", "-")}
                            for e in payload["ppr"]],
                           ["nodes", "edges", "build ms", "ours ms", "iters", "networkx ms", "vs nx", "|diff| nx",
                            "igraph ms", "vs igraph", "|diff| igraph"]))
    else:
        lines.append(str(payload["ppr"]))
    ing = payload["ingest"]
    lines.append("\nIngest (fresh workspace)")
    if "passages" in ing:
        lines.append(f"{ing['passages']} passages, {ing['chunks']} chunks in {ing['seconds']} s = {ing['passages_per_second']} passages/s; "
                     f"peak RSS {ing['peak_rss_mb']} MB (target < 2048)")
        lines.append(f"chunk+extract+canonicalize+graph: {ing['extract_canon_graph_passages_per_second']} passages/s (target >= 2000)")
        lines.append(table([{"stage": k, "seconds": v} for k, v in ing["per_stage_s"].items()], ["stage", "seconds"]))
        lines.append(f"chunk vectors: {ing['chunk_vectors']}")
        lines.append(f"second run (unchanged): {ing['second_run_seconds']} s, {ing['second_run_speedup']}x faster (target >= 20x)")
        first = ing.get("first_ingest")
        if first:
            lines.append(f"first ingest, everything embedded by {first['embedder']}: {first['seconds']} s = "
                         f"{first['passages_per_second']} passages/s, peak RSS {first['peak_rss_mb']} MB (target < 80 s); "
                         + ", ".join(f"{k} {v} s" for k, v in first["per_stage_s"].items()))
        st = ing["static_embedder_ingest"]
        lines.append(f"fresh ingest with the static embedder (everything embedded): {st['seconds']} s = {st['passages_per_second']} passages/s")
        emb = ing.get("embedding", {})
        if emb:
            lines.append(f"embedding {emb['texts']} chunks: ours {emb['ours_s']} s vs model.encode {emb['model_encode_s']} s = "
                         f"{emb['overhead_pct']}% overhead (target <= 10%); MiniLM {emb['minilm_texts_per_second']} chunks/s "
                         f"(whole corpus ~{emb['minilm_full_corpus_s_estimate']} s); static {emb['static_texts_per_second']} "
                         f"chunks/s = {emb['static_speedup']}x faster")
        rec = ing.get("static_embedder_recall")
        if rec:
            lines.append(f"static embedder recall cost on {rec['dataset']} (dense, {rec['questions']} questions): "
                         f"R@2 {rec['minilm_recall@2']} -> {rec['static_recall@2']}, R@5 {rec['minilm_recall@5']} -> {rec['static_recall@5']}")
    else:
        lines.append(str(ing))
    lines.append(_render_embedding_backends(payload.get("embedding", {"not measured": "section not selected (--sections)"})))
    lines.append("\nQuery latency, query embedding included (targets: hybrid p50 < 50 ms, graphrag p50 < 150 ms)")
    q = payload["query"]
    if "not measured" in q:
        lines.append(str(q))
    else:
        lines.append(table([{"mode": m, "p50 ms": r["p50_ms"], "p95 ms": r["p95_ms"], "first ms": r["first_query_ms"],
                             "queries": r["queries"], "used": ",".join(f"{k}:{v}" for k, v in r["mode_used"].items())}
                            for m, r in q.items()], ["mode", "p50 ms", "p95 ms", "first ms", "queries", "used"]))
    lines.append("\nA fresh process, as a user meets it (targets on 2Wiki: stats < 1 s, first graphrag query < 2 s "
                 "with the model load included)")
    fresh = payload.get("fresh", {"not measured": "section not selected (--sections)"})
    if "not measured" in fresh:
        lines.append(str(fresh))
    else:
        lines.append(_fresh_line(fresh))
    lines.append("\nCommunities (Louvain + extractive reports from scratch, report embedding excluded; target < 30 s)")
    com = payload.get("communities", {"not measured": "section not selected (--sections)"})
    if "not measured" in com:
        lines.append(str(com))
    else:
        lines.append(f"{com['communities']} communities (largest {com['largest']}, median {com['median_size']} entities) "
                     f"on {com['entities']} entities / {com['edges']} edges: detect {com['detect_s']} s + reports "
                     f"{com['reports_s']} s = {com['seconds']} s; again with nothing changed {com['unchanged_rebuild_s']} s "
                     f"({com['unchanged_kept']} kept, {com['unchanged_built']} rebuilt)")
        if "follow" in com:
            lines.append(_follow_lines(com["follow"]))
    lines.append("\nApp render (AppTest; target < 3 s)")
    app = payload["app"]
    if "not measured" in app:
        lines.append(str(app))
    else:
        lines.append(table([{"page": k, "first s": v["first_render_s"], "again s": v["rerender_s"],
                             "exceptions": len(v["exceptions"])} for k, v in app.items() if isinstance(v, dict)],
                           ["page", "first s", "again s", "exceptions"]) + f"\n(app start {app['start_s']} s)")
    lines.append("\nThe app on the sample corpus (AppTest, fresh process; targets: first load < 20 s, "
                 "each page switch < 3 s, evaluation in the app within 1.5x of `workbench eval`)")
    tour = payload.get("app_sample", {})
    if "first_load_s" not in tour:
        lines.append(str(tour))
    else:
        lines.append(f"first load, model warm-up included: {tour['first_load_s']} s")
        lines.append(table([{"page": k, "switch s": v} for k, v in tour["page_switch_s"].items()], ["page", "switch s"]))
        lines.append(f"evaluation of the sample tasks: in the app {tour['evaluation_in_app_s']} s, `workbench eval` "
                     f"{tour['evaluation_cli_s']} s (its run alone {tour['evaluation_cli_run_s']} s) = "
                     f"{tour['app_vs_cli']}x; exceptions: {len(tour['exceptions'])}")
    return "\n".join(lines)


def _follow_lines(follow: dict) -> str:
    """The communities following writes (:mod:`workbench.bench.community_follow`) as a table."""
    from .render import table

    head = (f"\nCommunities following writes ({follow['passages']} passages, {follow['reports']} reports; target: "
            f"< 5 s after one note changes): from scratch {follow['scratch_s']} s to the first answer (model loaded; "
            f"embedding {follow['scratch_seconds'].get('embed', 0):.1f} s of it), modularity {follow['modularity_scratch']}")
    rows = [{"step": r["step"], "write s": r["write_s"], "communities s": r["seconds"],
             "vs scratch": f"{r['vs_scratch']:.3f}", "fresh process s": r.get("fresh_process_s", "-"),
             "built": r["built"], "kept": r["kept"], "embedded": r["embedded"], "changed nodes": r["changed_nodes"],
             "modularity": f"{r['modularity_followed']} (scratch {r['modularity_scratch']})",
             "themes kept": f"{r['themes_kept']} (scratch {r['scratch_themes_kept']})"} for r in follow["steps"]]
    return head + "\n" + table(rows, ["step", "write s", "communities s", "vs scratch", "fresh process s", "built",
                                      "kept", "embedded", "changed nodes", "modularity", "themes kept"])


def _render_embedding_backends(section: dict) -> str:
    """The embedding backends' table: chunks/s, ratio to torch, agreement with torch, recall."""
    from .render import table

    head = "\nEmbedding backends (same chunks, best of rounds; target: default >= 2x torch, R@5 within 1 point)"
    if "not measured" in section:
        return f"{head}\n{section}"
    rows = []
    for name, r in section["backends"].items():
        rows.append({"backend": name, "chunks/s": r["chunks_per_second"], "vs torch": f"{r['ratio']}x",
                     "cos to torch min": r["cosine_to_torch_min"], "R@2 %": r.get("recall@2", "-"),
                     "R@5 %": r.get("recall@5", "-"), "load s": r["load_s"],
                     "exported now": {None: "-", True: f"yes ({r['export_s']} s)", False: "no (cached)"}[r["exported_now"]]})
    lines = [head + f": {section['texts']} chunks x {section['rounds']} rounds"
             + (f"; recall on {section['recall_dataset']} ({section['recall_questions']} questions)"
                if "recall_dataset" in section else ""),
             table(rows, ["backend", "chunks/s", "vs torch", "cos to torch min", "R@2 %", "R@5 %", "load s", "exported now"])]
    if "recommended_backend" in section:
        lines.append(f"fastest within {section['recall_tolerance_points']} point of torch's R@5: "
                     f"{section['recommended_backend']} (settings: embedding.backend {section['configured_backend']})")
    return "\n".join(lines)


def cmd_perf(args):
    from ..bench.perf import PerfError, parse_sizes, run_perf
    from ..settings import load_settings

    sections = [s.strip() for s in args.sections.split(",") if s.strip()]
    try:
        payload = run_perf(parse_sizes(args.ppr_sizes), args.ingest_data,
                           None if args.musique_data == Path("none") else args.musique_data, args.queries,
                           args.cache_dir, sections, load_settings(args.settings))
    except PerfError as exc:
        raise CommandError(str(exc), code=2) from None
    emit(args, payload, _render_perf)


def register(subparsers, common) -> None:
    bench = subparsers.add_parser("bench", parents=[common], help="benchmarks: multihop, perf and scale")
    sub = bench.add_subparsers(dest="bench_command", metavar="BENCHMARK", required=True)

    p = sub.add_parser("multihop", parents=[common],
                       help="Recall@2/@5 of every retrieval mode on a multi-hop QA set (corpus.jsonl + queries.jsonl)")
    p.add_argument("--data", type=Path, required=True, help="benchmark folder, e.g. ../shared/bench/musique")
    p.add_argument("--modes", help="comma-separated modes besides the baselines keyword,vector,hybrid "
                                   "(default: every registered mode)")
    p.add_argument("--limit", type=between(1, 10_000_000), default=None, help="use only the first N questions")
    p.add_argument("--ablation", action="store_true",
                   help="run graphrag under each variant of workbench.bench.ablation instead of every mode")
    # --workspace (from the common options) names the corpus workspace; default: a cache under
    # ~/.cache/workbench/bench/<set>-<corpus hash>.
    p.set_defaults(handler=cmd_multihop)

    _register_perf(sub, common)
    _register_scale(sub, common)


def _register_perf(sub, common) -> None:
    from ..bench.perf import DEFAULT_CACHE, DEFAULT_INGEST_DATA, DEFAULT_MUSIQUE, DEFAULT_PPR_SIZES, SECTIONS

    p = sub.add_parser("perf", parents=[common], help="performance: PPR, ingest, embedding, query latency, communities, app render")
    p.add_argument("--ppr-sizes", default=",".join(f"{n}:{m}" for n, m in DEFAULT_PPR_SIZES),
                   help="random graphs as NODES:EDGES,... (default 10000:40000,200000:1000000)")
    p.add_argument("--ingest-data", type=Path, default=DEFAULT_INGEST_DATA,
                   help="benchmark folder with corpus.jsonl to ingest (default ../shared/bench/2wikimultihopqa)")
    p.add_argument("--musique-data", type=Path, default=DEFAULT_MUSIQUE,
                   help="multi-hop set for the static embedder's and every embedding backend's recall ('none' to skip)")
    p.add_argument("--queries", type=between(1, 100_000), default=100, help="queries per retrieval mode (default 100)")
    p.add_argument("--cache-dir", type=Path, default=DEFAULT_CACHE,
                   help="where the benchmark workspace is kept between runs (default ~/.cache/workbench/bench)")
    p.add_argument("--sections", default=",".join(SECTIONS), help=f"sections to run (default {','.join(SECTIONS)})")
    p.set_defaults(handler=cmd_perf)


def _render_sizes(payload: dict) -> list[str]:
    lines = []
    notes = payload.get("notes")
    if notes:
        first, added = notes["first_ingest"], notes["add_one_note"]
        lines.append(f"{notes['notes']} notes (written in {notes['write_s']} s): first ingest {first['seconds']} s, "
                     f"peak RSS {first['peak_rss_mb']} MB (target < 3072), workspace {first['workspace_mb']} MB; "
                     f"adding one note {added['seconds']} s in a fresh process (target < 15 s), "
                     f"peak RSS {added['peak_rss_mb']} MB; stages " + ", ".join(f"{k} {v}" for k, v in added["per_stage_s"].items()))
        writes = notes.get("note_writes") or {}
        for how, target in (("watch", "target < 1 s"), ("fresh_ingest", "target < 3 s")):
            for change, done in (("add", "added"), ("edit", "edited"), ("remove", "removed")):
                run = (writes.get(how) or {}).get(change)
                if run:
                    saved = f", saved {run['saved_s']} s" if "saved_s" in run else ""
                    lines.append(f"  one note {done}, {how.replace('_', ' ')}: {run['seconds']} s ({target}){saved}; stages "
                                 + ", ".join(f"{k} {v}" for k, v in run["per_stage_s"].items() if v >= 0.005))
    big = payload.get("big_file")
    if big:
        run = big["ingest"]
        lines.append(f"one {big['file_mb']} MB Markdown file: {run['seconds']} s, {run['chunks']} chunks, peak RSS "
                     f"{run['peak_rss_mb']} MB (target < 2048), workspace {run['workspace_mb']} MB (target < 300); "
                     f"{big['co_mentioned_rows']} co-mention pairs of {big['triples']} triples, {big['mentions']} mentions")
    chat = payload.get("chat_log")
    if chat:
        run = chat["ingest"]
        lines.append(f"one {chat['file_mb']} MB chat log of {chat['messages']} messages: {run['seconds']} s, "
                     f"{run['chunks']} chunks, peak RSS {run['peak_rss_mb']} MB, workspace {run['workspace_mb']} MB")
    distinct = payload.get("distinct_text")
    if distinct:
        run = distinct["ingest"]
        lines.append(f"a {distinct['file_mb']} MB handbook of distinct text ({distinct['embedder']} embedder): "
                     f"{run['seconds']} s, {run['chunks']} chunks, {distinct['distinct_texts']} distinct, "
                     f"{run['embedded']} embedded in {run['embed_s']} s = {run['chunks_per_s']} chunks/s "
                     f"({run['chunks_per_cpu_s']} per CPU second), peak RSS {run['peak_rss_mb']} MB (target < 2048), "
                     f"workspace {run['workspace_mb']} MB; load {run['load'][0]} -> {run['load'][1]}")
        alone = distinct.get("model_alone")
        if alone:
            lines.append(f"  the model alone on {alone['chunks']} chunks: the handbook {alone['handbook_chunks_per_s']} "
                         f"chunks/s ({alone['handbook_chunks_per_cpu_s']} per CPU second), the notebook "
                         f"{alone['notebook_chunks_per_s']} ({alone['notebook_chunks_per_cpu_s']}); per CPU second, "
                         f"handbook / notebook {alone['handbook_over_notebook']}, the ingest "
                         f"{run.get('times_model_alone')}x the model alone")
    return lines


def _render_scale(payload: dict) -> str:
    from .render import table

    if "passages" not in payload:
        return "\n".join(_render_sizes(payload))
    lines = _render_sizes(payload) + [f"Scale run: {payload['passages']} passages ({payload['copies']} perturbed copies), "
             f"{payload.get('entities', '?')} entities, {payload.get('graph_edges', '?')} graph edges; "
             f"embedder {payload['embedder']}"]
    runs = [("first ingest, embedding included", payload.get("first_ingest")),
            ("fresh ingest, vectors served (embedded Chroma)", payload.get("fresh_ingest")),
            ("fresh ingest, vectors served (chroma run server)", payload.get("server"))]
    lines.append(table([{"run": name, "seconds": r["seconds"], "passages/s": r["passages_per_second"],
                         "graph build s": r["graph_build_s"], "peak RSS MB": r["peak_rss_mb"]}
                        for name, r in runs if r], ["run", "seconds", "passages/s", "graph build s", "peak RSS MB"]))
    rows = []
    for where, figures in (("embedded", payload.get("query")), ("server", (payload.get("server") or {}).get("query"))):
        for mode, r in (figures or {}).items():
            rows.append({"store": where, "mode": mode, "p50 ms": r["p50_ms"], "p95 ms": r["p95_ms"],
                         "queries": r["queries"], "used": ",".join(f"{k}:{v}" for k, v in r["mode_used"].items())})
    lines.append(table(rows, ["store", "mode", "p50 ms", "p95 ms", "queries", "used"]))
    walk = payload.get("walk")
    if walk and "power" in walk:
        lines.append(f"the PageRank walk alone, {walk['restarts']} restarts: "
                     + "; ".join(f"{name} p50 {walk[name]['p50_ms']} ms, {walk[name]['iterations_p50']} iterations, "
                                 f"largest error {walk[name]['largest_error']}"
                                 for name in ("power", "chebyshev_double", "chebyshev") if name in walk)
                     + f"; power / chebyshev in float64 {walk['power_over_chebyshev_p50']}x"
                     + (f"; float64 / float32 {walk['double_over_single_p50']}x" if "double_over_single_p50" in walk
                        else ""))
    elif walk:
        lines.append(f"the PageRank walk: {walk}")
    app = payload.get("app", {})
    graph = app.get("graph") if isinstance(app, dict) else None
    lines.append(f"Graph page: first render {graph['first_render_s']} s, again {graph['rerender_s']} s"
                 if graph else f"Graph page: {app}")
    communities = payload.get("communities")
    if communities:
        page = app.get("communities") if isinstance(app, dict) else None
        lines.append(f"communities: first build {communities['first_build_s']} s in a fresh process "
                     f"({communities['themes']} themes, {communities['sub_themes']} sub-themes; stored: "
                     f"{communities['stored']}), the next process {communities['next_process_s']} s (built "
                     f"{communities['next_process_built']}); Communities page "
                     + (f"{page['first_render_s']} s, again {page['rerender_s']} s" if page else "not measured"))
    fresh = payload.get("fresh")
    if fresh:
        lines.append("a fresh process: " + _fresh_line(fresh))
    lines.append("targets: peak RSS < 3072 MB, graph build < 60 s, graphrag p50 < 150 ms, hybrid p50 < 100 ms, "
                 "Graph page < 5 s, a fresh process's first query < 5 s")
    return "\n".join(lines)


def cmd_scale(args):
    from ..bench.perf import PerfError
    from ..bench.runs import scale_run
    from ..settings import load_settings

    try:
        run = scale_run(args.data, args.cache_dir, load_settings(args.settings), copies=args.copies, queries=args.queries,
                        server=not args.no_server, embedder=args.embedder, notes=args.notes, file_mb=args.file_mb,
                        chat_mb=args.chat_mb, distinct_mb=args.distinct_mb)
    except PerfError as exc:
        raise CommandError(str(exc), code=2) from None
    emit(args, run.to_json(), _render_scale)


def _register_scale(sub, common) -> None:
    from ..bench.perf import DEFAULT_CACHE, DEFAULT_INGEST_DATA

    p = sub.add_parser("scale", parents=[common],
                       help="the scale run: a corpus repeated with perturbed names, ingested and queried")
    p.add_argument("--data", type=Path, default=DEFAULT_INGEST_DATA,
                   help="benchmark folder with corpus.jsonl (default ../shared/bench/2wikimultihopqa)")
    p.add_argument("--copies", type=int, default=10,
                   help="copies of the corpus (default 10: about 60k passages; 33: about 200k; at most 241; 0 skips this run)")
    p.add_argument("--notes", type=between(0, 10_000_000), default=0,
                   help="also ingest this many generated one-paragraph notes, then add one (20000: a note vault)")
    p.add_argument("--file-mb", type=finite_between(0, 10_000), default=0,
                   help="also ingest one generated Markdown file of this many MB (30: a wiki export)")
    p.add_argument("--chat-mb", type=finite_between(0, 10_000), default=0,
                   help="also ingest one generated .jsonl chat log of this many MB (30: a channel's history)")
    p.add_argument("--distinct-mb", type=finite_between(0, 10_000), default=0,
                   help="also ingest one generated Markdown handbook of this many MB of short, all-different "
                        "sections (30: every chunk embedded, none served by the cache), by --embedder")
    p.add_argument("--queries", type=between(1, 100_000), default=50, help="queries per mode (default 50)")
    p.add_argument("--no-server", action="store_true", help="skip the chroma run server half")
    p.add_argument("--embedder", choices=("model", "static"), default="model",
                   help="embed the corpus and the --distinct-mb handbook with the settings' model (default) or "
                        "the static embedder, the model kept loaded beside it")
    p.add_argument("--cache-dir", type=Path, default=DEFAULT_CACHE,
                   help="where the scale workspace is kept between runs (default ~/.cache/workbench/bench)")
    p.set_defaults(handler=cmd_scale)
