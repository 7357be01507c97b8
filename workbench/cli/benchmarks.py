"""The ``bench`` command group: ``bench multihop`` here; ``bench perf`` registers itself from
:mod:`workbench.bench.perf` (a ``register_perf(sub)`` function) when that module exists."""

from __future__ import annotations

import importlib
import inspect
from pathlib import Path

from . import CommandError, emit

__all__ = ["register"]


def _render_multihop(payload: dict) -> str:
    from .render import table

    rows = [{"mode": mode, "R@2 %": f"{r['recall@2']:.1f}", "R@5 %": f"{r['recall@5']:.1f}",
             "seconds": f"{r['seconds']:.1f}"} for mode, r in payload["results"].items()]
    head = f"{payload['dataset']}: {payload['questions']} questions over {payload['passages']} passages"
    return head + "\n" + table(rows, ["mode", "R@2 %", "R@5 %", "seconds"])


def cmd_multihop(args):
    from ..bench.multihop import BenchError, bench_workspace, load_bench, run_multihop
    from ..retrieve import MODES
    from ..settings import load_settings
    from ..progress import tqdm_progress

    try:
        bench = load_bench(args.data, limit=args.limit)
    except BenchError as exc:
        raise CommandError(str(exc), code=2) from None
    modes = [m.strip() for m in (args.modes or "").split(",") if m.strip()]
    unknown = [m for m in modes if m not in MODES]
    if unknown:
        raise CommandError(f"unknown mode(s) {', '.join(unknown)}; modes: {', '.join(MODES)}", code=2)
    # The default workspace is the user's own: the benchmark gets a cache folder instead.
    workspace = None if Path(args.workspace) == Path("workspace") else args.workspace
    ws = bench_workspace(bench, workspace, settings=load_settings(args.settings), progress=tqdm_progress())
    try:
        report = run_multihop(ws, bench, modes or None)
    finally:
        ws.close()
    emit(args, report.to_json(), _render_multihop)


def register(subparsers, common) -> None:
    bench = subparsers.add_parser("bench", parents=[common], help="benchmarks: multihop (and perf, when present)")
    sub = bench.add_subparsers(dest="bench_command", metavar="BENCHMARK", required=True)

    p = sub.add_parser("multihop", parents=[common],
                       help="Recall@2/@5 of every retrieval mode on a multi-hop QA set (corpus.jsonl + queries.jsonl)")
    p.add_argument("--data", type=Path, required=True, help="benchmark folder, e.g. ../shared/bench/musique")
    p.add_argument("--modes", help="comma-separated modes besides the baselines keyword,vector,hybrid "
                                   "(default: every registered mode)")
    p.add_argument("--limit", type=int, default=None, help="use only the first N questions")
    # --workspace (from the common options) names the corpus workspace; default: a cache under
    # ~/.cache/workbench/bench/<set>-<corpus hash>.
    p.set_defaults(handler=cmd_multihop)

    # `bench perf` lives in workbench/bench/perf.py and adds itself here when present.
    try:
        perf = importlib.import_module("workbench.bench.perf")
    except ModuleNotFoundError as exc:
        if exc.name != "workbench.bench.perf":
            raise
        perf = None
    if perf is not None and hasattr(perf, "register_perf"):
        takes_common = len(inspect.signature(perf.register_perf).parameters) >= 2
        perf.register_perf(sub, common) if takes_common else perf.register_perf(sub)
