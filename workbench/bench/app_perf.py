"""The benchmarks that run the workbench in fresh processes: a cold query and the app.

- :func:`bench_fresh_process`: ``stats`` and a graphrag query, each in a new process (what a
  user of the CLI or the MCP server waits for), against the same steps in this process.
- :func:`bench_app`: page render times through ``streamlit.testing`` in a child process (the
  core never imports streamlit).
- :func:`bench_app_sample`: the app on the bundled sample corpus as an analyst meets it.

Part of ``bench perf`` (:func:`workbench.bench.perf.run_perf`); the scale run uses them too.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Sequence

import numpy as np

from .common import ROOT, PerfError, graph_seconds

__all__ = ["bench_fresh_process", "bench_stored_communities", "bench_app", "bench_app_sample", "timed"]


_APP_SCRIPT = r"""
import json, sys, time
from streamlit.testing.v1 import AppTest
out = {}
at = AppTest.from_file(sys.argv[1], default_timeout=120)
started = time.perf_counter(); at.run(); out["start_s"] = time.perf_counter() - started
for name in sys.argv[2:]:
    for attempt in ("first", "again"):
        started = time.perf_counter()
        at.switch_page(name).run()
        out[f"{name}:{attempt}"] = time.perf_counter() - started
    out[f"{name}:exceptions"] = [str(e.value) for e in at.exception]
print(json.dumps(out))
"""


def _app_test(script: str, app_file: Path, pages: Sequence[str], workspace: Path, timeout: float) -> dict:
    """Run an AppTest ``script`` in a child process on ``workspace``; its last stdout line as JSON."""
    import os

    env = {**os.environ, "WORKBENCH_WORKSPACE": str(workspace)}
    done = subprocess.run([sys.executable, "-c", script, str(app_file), *pages], cwd=app_file.parent,
                          env=env, capture_output=True, text=True, timeout=timeout)
    if done.returncode != 0 or not done.stdout.strip():
        return {"not measured": f"AppTest failed: {(done.stderr or done.stdout).strip().splitlines()[-1:]}"}
    return json.loads(done.stdout.strip().splitlines()[-1])


_FRESH_QUERY = """
import json, sys, time
started = time.perf_counter()
from workbench.retrieve import retrieve
from workbench.settings import load_settings
from workbench.workspace import Workspace
embedder = None
if sys.argv[3] == "static":
    from workbench.embedding.static import StaticEmbedder
    embedder = StaticEmbedder()
ws = Workspace(sys.argv[1], settings=load_settings(), embedder=embedder, create=False)
result = retrieve(ws, sys.argv[2], mode="graphrag")
seconds = time.perf_counter() - started
import psutil
print(json.dumps({"in_process_s": seconds, "mode_used": result.mode_used, "hits": len(result.hits),
                  "graph": ws.derivation.snapshot_status, "rss_mb": psutil.Process().memory_info().rss / 2**20,
                  "entities": len(ws.graph), "passages": len(ws.graph.passages.entities_of)}))
"""


def timed(argv: list[str], timeout: float = 900) -> tuple[float, str]:
    """Run ``argv`` in a child process from the project folder: its wall time and its output
    (:class:`subprocess.TimeoutExpired` past ``timeout`` seconds)."""
    started = time.perf_counter()
    done = subprocess.run(argv, cwd=ROOT, capture_output=True, text=True, timeout=timeout,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})
    if done.returncode:
        raise PerfError(f"{' '.join(argv[:4])}... failed: {done.stderr.strip()[-400:]}")
    return time.perf_counter() - started, done.stdout


def bench_stored_communities(workspace_path: Path) -> dict:
    """The community reports as a user past ``communities.sync_max_passages`` meets them, where no
    write step stores them: the stored ones dropped, ``communities --json`` in a fresh process
    (it detects the communities, reports on them, embeds the reports and stores them), then in
    another (it reads them)."""
    from ..settings import load_settings
    from ..workspace.workspace import Workspace

    ws = Workspace(workspace_path, settings=load_settings(), create=False)
    try:
        ws.drop_summaries()
    finally:
        ws.close()
    argv = [sys.executable, "-m", "workbench", "--workspace", str(workspace_path), "communities", "--json"]
    first_s, first = timed(argv, timeout=1800)  # builds every community report: minutes on a large corpus
    again_s, again = timed(argv)
    built, read = json.loads(first), json.loads(again)
    return {"first_build_s": round(first_s, 2), "built": built["built"], "stored": built["stored"],
            "themes": sum(1 for c in built["communities"] if c["level"] == 0),
            "sub_themes": sum(1 for c in built["communities"] if c["level"] > 0),
            "next_process_s": round(again_s, 2), "next_process_built": read["built"], "next_process_stored": read["stored"]}


def bench_fresh_process(workspace_path: Path, question: str, embedder: str = "model", runs: int = 3) -> dict:
    """What a fresh process pays before its first answer, as a user meets it: ``stats`` on the
    command line, and a first graphrag query (interpreter start, imports, the model, the graph
    snapshot, the vector store), each timed from the child's start, ``runs`` times (median kept).
    Beside them, in this process: loading the graph snapshot against deriving the graph from
    the record, the cost a fresh process paid before snapshots."""
    from ..context_graph.graph_snapshot import load_snapshot
    from ..settings import load_settings
    from ..workspace.workspace import Workspace

    stats = [timed([sys.executable, "-m", "workbench", "--workspace", str(workspace_path), "stats", "--json"])[0]
             for _ in range(runs)]
    queries = []
    for _ in range(runs):
        seconds, out = timed([sys.executable, "-c", _FRESH_QUERY, str(workspace_path), question, embedder])
        queries.append((seconds, json.loads(out.strip().splitlines()[-1])))
    ws = Workspace(workspace_path, settings=load_settings(), create=False)
    try:
        started = time.perf_counter()
        load_snapshot(ws.path, ws.derivation.snapshot_key(), key_of=ws.canonicalizer().key)
        load_s = time.perf_counter() - started
        derive_s = graph_seconds(ws)
    finally:
        ws.close()
    middle = sorted(queries, key=lambda q: q[0])[len(queries) // 2]
    return {"stats_s": round(float(np.median(stats)), 2), "stats_runs_s": [round(x, 2) for x in stats],
            "first_graphrag_s": round(middle[0], 2), "first_graphrag_runs_s": [round(q[0], 2) for q in queries],
            "first_graphrag_in_process_s": round(middle[1]["in_process_s"], 2),
            "mode_used": middle[1]["mode_used"], "graph": middle[1]["graph"],
            "rss_after_first_query_mb": round(middle[1]["rss_mb"]), "entities": middle[1]["entities"],
            "passages": middle[1]["passages"],
            "snapshot_load_s": round(load_s, 3), "derive_from_record_s": round(derive_s, 3),
            "snapshot_speedup": round(derive_s / load_s, 1) if load_s else None,
            "snapshot_mb": round((Path(workspace_path) / "graph.npz").stat().st_size / 2**20, 1),
            "question": question}


def bench_app(workspace_path: Path, app_file: Path = ROOT / "app.py",
              pages: Sequence[str] = ("pages/graph.py", "pages/compare.py")) -> dict:
    """Render times of the app's pages on the workspace, in a child process (AppTest)."""

    missing = [p for p in (app_file, *(app_file.parent / p for p in pages)) if not Path(p).exists()]
    if missing:
        return {"not measured": f"app not there: {', '.join(map(str, missing))}"}
    raw = _app_test(_APP_SCRIPT, app_file, pages, workspace_path, timeout=900)
    if "not measured" in raw:
        return raw
    out = {"start_s": round(raw["start_s"], 2)}
    for page in pages:
        label = Path(page).stem
        out[label] = {"first_render_s": round(raw[f"{page}:first"], 2), "rerender_s": round(raw[f"{page}:again"], 2),
                      "exceptions": raw[f"{page}:exceptions"]}
    return out


_TOUR_SCRIPT = r"""
import json, sys, time
from streamlit.testing.v1 import AppTest
app_file, pages = sys.argv[1], sys.argv[2:]
out = {"pages": {}}
at = AppTest.from_file(app_file, default_timeout=600)
started = time.perf_counter(); at.run(); out["first_load_s"] = time.perf_counter() - started
out["first_load_exceptions"] = [str(e.value) for e in at.exception]
for name in pages:
    started = time.perf_counter()
    at.switch_page(name).run()
    out["pages"][name] = {"switch_s": time.perf_counter() - started, "exceptions": [str(e.value) for e in at.exception]}
at.switch_page("pages/evaluate.py").run()
started = time.perf_counter()
at.button(key="eval.run").click().run()
out["evaluation_s"] = time.perf_counter() - started
out["evaluation_exceptions"] = [str(e.value) for e in at.exception] + [e.value for e in at.error]
print(json.dumps(out))
"""


def bench_app_sample(cache_dir: Path, settings, app_file: Path = ROOT / "app.py") -> dict:
    """The app as an analyst meets it, on the bundled sample corpus, in a fresh child process:
    the first page load (the model warmed up behind it), a switch to every page, and the
    evaluation of the sample tasks run from the Evaluate page against ``workbench eval`` on the
    same workspace (targets: first load < 20 s, each switch < 3 s, the app's evaluation within
    1.5x of the CLI's)."""
    import os

    from ..workspace.workspace import Workspace

    sample, tasks = ROOT / "sample_corpus", ROOT / "sample_corpus" / "tasks.yaml"
    pages = sorted(str(p.relative_to(app_file.parent)) for p in (app_file.parent / "pages").glob("*.py"))
    if not app_file.exists() or not sample.is_dir() or not pages:
        return {"not measured": f"no app or sample corpus beside {app_file}"}
    folder = Path(cache_dir) / "perf-sample" / "ws"
    ws = Workspace(folder, settings=settings)
    try:
        ws.ingest([sample])
    finally:
        ws.close()
    raw = _app_test(_TOUR_SCRIPT, app_file, pages, folder, timeout=1800)
    if "not measured" in raw:
        return raw
    env = {**os.environ, "WORKBENCH_WORKSPACE": str(folder)}
    started = time.perf_counter()
    cli = subprocess.run([sys.executable, "-m", "workbench", "--workspace", str(folder), "eval", str(tasks), "--json"],
                         cwd=ROOT, env=env, capture_output=True, text=True, timeout=1800)
    cli_s = time.perf_counter() - started
    if cli.returncode != 0:
        return {"not measured": f"workbench eval failed: {cli.stderr.strip().splitlines()[-1:]}"}
    cli_run_s = json.loads(cli.stdout)["seconds"]
    switches = {Path(name).stem: round(v["switch_s"], 2) for name, v in raw["pages"].items()}
    return {"first_load_s": round(raw["first_load_s"], 2), "page_switch_s": switches,
            "slowest_switch_s": max(switches.values()), "evaluation_in_app_s": round(raw["evaluation_s"], 2),
            "evaluation_cli_s": round(cli_s, 2), "evaluation_cli_run_s": round(cli_run_s, 2),
            "app_vs_cli": round(raw["evaluation_s"] / cli_s, 2),
            "exceptions": raw["first_load_exceptions"] + [e for v in raw["pages"].values() for e in v["exceptions"]]
            + raw["evaluation_exceptions"],
            "note": "the CLI's time is the whole command (start, model load, run); its run alone is evaluation_cli_run_s"}
