"""A fork server for the crash tests: imports the workbench once, forks one child per step.

Starting a fresh interpreter per step costs seconds of imports; forking a process that has
already imported everything (and has never run the model, so no thread pool is forked) costs
milliseconds, so many kill -9 runs fit in the suite's time budget.

Protocol (one JSON object per line on stdin; one line per event on stdout):

- ``{"step": "ingest", "workspace": W, "arg": CORPUS, "batch_chunks": 16}`` forks a child
  that opens ``W``, prints ``ready <pid>``, runs the step, prints ``done <pid> <seconds>``
  and exits; the server then prints ``exit <pid> <status>`` (a negative status is the signal
  that killed it). Steps: ``ingest``, ``alias`` (``arg`` = [alias, canonical]),
  ``unalias`` (``arg`` = alias), ``remove`` (``arg`` = path), ``snapshot`` (nothing but
  the snapshot). With ``"snapshot": true`` the child prints ``snapshot <pid> <json>`` after
  the step.
- A child that fails prints ``error <pid> <json message>``.
"""

from __future__ import annotations

import json
import os
import sys
import time
import traceback

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("ANONYMIZED_TELEMETRY", "False")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

import workbench.workspace.ingest_pipeline as ingest_module  # noqa: E402
from workbench.settings import load_settings  # noqa: E402
from workbench.vectors.index import CHUNKS  # noqa: E402
from workbench.workspace import Workspace  # noqa: E402


def _say(line: str) -> None:
    os.write(1, (line + "\n").encode("utf-8"))


def snapshot(ws: Workspace) -> dict:
    """What must be equal between two workspaces that hold the same record."""
    stats = ws.stats()
    stats.pop("workspace")
    graph = ws.graph
    return {
        "stats": stats,
        "chunks": sorted(c.id for c in ws.chunks()),
        "chunk_vectors": sorted(ws.vectors.ids(CHUNKS)),
        "entities": sorted(graph.nx.nodes),
        "entity_vectors": sorted(ws.entity_vectors.ids()),
        "edges": sorted([e.source, e.relation, e.target, list(e.chunk_ids)]
                        for e in graph.edges(include_comention=True)),
        "aliases": ws.store.aliases(),
        "integrity_ok": ws.store.integrity_ok(),
    }


def _run(command: dict) -> None:
    ingest_module.BATCH_CHUNKS = int(command.get("batch_chunks", ingest_module.BATCH_CHUNKS))
    ingest_module.VECTOR_BATCH = int(command.get("batch_chunks", ingest_module.VECTOR_BATCH))  # commits as often
    ws = Workspace(command["workspace"], settings=load_settings())
    _say(f"ready {os.getpid()}")
    started = time.perf_counter()
    step, arg = command["step"], command.get("arg")
    if step == "ingest":
        ws.ingest([arg])
    elif step == "alias":
        ws.corrections.add_alias(*arg)
    elif step == "unalias":
        ws.corrections.remove_alias(arg)
    elif step == "remove":
        ws.remove(arg)
    elif step != "snapshot":
        raise ValueError(f"unknown step {step!r}")
    if step == "snapshot" or command.get("snapshot"):
        _say(f"snapshot {os.getpid()} {json.dumps(snapshot(ws))}")
    _say(f"done {os.getpid()} {time.perf_counter() - started:.3f}")
    ws.close()


def serve() -> None:
    for line in sys.stdin:
        if not line.strip():
            continue
        command = json.loads(line)
        pid = os.fork()
        if pid == 0:
            code = 0
            try:
                _run(command)
            except BaseException:  # report everything: the parent test decides
                _say(f"error {os.getpid()} {json.dumps(traceback.format_exc())}")
                code = 1
            os._exit(code)
        _, status = os.waitpid(pid, 0)
        code = -os.WTERMSIG(status) if os.WIFSIGNALED(status) else os.WEXITSTATUS(status)
        _say(f"exit {pid} {code}")


if __name__ == "__main__":
    serve()
