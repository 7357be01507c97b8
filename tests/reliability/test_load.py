"""Load: 8 MCP sessions over stdio query one workspace for a fixed time while an ingest writes to it.

Every request must be answered without an error; the latencies are printed (run with ``-s``)
and quoted in docs/guarantees.md.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time

import anyio

from tests.conftest import ROOT, make_corpus
from tests.test_mcp_server import mcp_session

CLIENTS = 8
#: Clients query for at least this long, and on until the ingest has finished (at most MAX_SECONDS).
QUERY_SECONDS = 15.0
MAX_SECONDS = 60.0
CALLS = (
    ("search_chunks", {"query": "which service depends on the queue number 3", "mode": "hybrid", "limit": 5}),
    ("graphrag_search", {"query": "what breaks if queue number 2 fails", "limit": 5}),
    ("search_chunks", {"query": "service number 12", "mode": "keyword", "limit": 5}),
)


def _percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))]


async def _client(index: int, workspace, errlog, start: anyio.Event, latencies: list[float], errors: list[str],
                  ready: list[int], outcome: dict) -> None:
    async with mcp_session(workspace, errlog) as session:
        ready.append(index)
        await start.wait()
        began_at = time.monotonic()
        n = index
        while True:
            elapsed = time.monotonic() - began_at
            if elapsed > MAX_SECONDS or (elapsed > QUERY_SECONDS and outcome["writer"].poll() is not None):
                break
            name, arguments = CALLS[n % len(CALLS)]
            n += 1
            began = time.perf_counter()
            with anyio.fail_after(60):
                result = await session.call_tool(name, arguments)
            latencies.append(time.perf_counter() - began)
            if result.is_error or not result.structured_content.get("hits"):
                errors.append(f"client {index} {name}: {result.content}")


def test_eight_mcp_sessions_are_all_answered_while_an_ingest_runs(tmp_path, make_workspace):
    ws = make_workspace()
    ws.ingest([make_corpus(tmp_path / "corpus", 40)])
    ws.close()
    incoming = make_corpus(tmp_path / "incoming", 120, offset=1000)
    latencies: list[float] = []
    errors: list[str] = []
    ready: list[int] = []
    outcome: dict = {}

    async def main() -> None:
        start = anyio.Event()
        with open(tmp_path / "servers.log", "w") as errlog:
            async with anyio.create_task_group() as group:
                for i in range(CLIENTS):
                    group.start_soon(_client, i, ws.path, errlog, start, latencies, errors, ready, outcome)
                with anyio.fail_after(240):
                    while len(ready) < CLIENTS:
                        await anyio.sleep(0.2)
                writer = subprocess.Popen(
                    [sys.executable, "-m", "workbench", "--workspace", str(ws.path), "ingest", str(incoming)],
                    cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                    env={**os.environ, "TQDM_DISABLE": "1"})
                outcome["writer"], started = writer, time.monotonic()
                start.set()
        outcome["seconds"] = time.monotonic() - started
        outcome["ingest_ended_in_window"] = writer.poll() is not None
        outcome["ingest"] = writer.communicate(timeout=240)
        outcome["ingest_code"] = writer.returncode

    anyio.run(main)
    assert errors == []
    assert outcome["ingest_code"] == 0, outcome["ingest"][1]
    assert outcome["seconds"] >= QUERY_SECONDS  # the ingest started with the window: its writes met the queries
    assert "120 added" in outcome["ingest"][0]
    assert len(latencies) >= CLIENTS * 3
    p50, p95 = _percentile(latencies, 0.5), _percentile(latencies, 0.95)
    print(f"\nload: {CLIENTS} MCP sessions for {outcome['seconds']:.0f} s, during an ingest of 120 documents "
          f"({'which ended' if outcome['ingest_ended_in_window'] else 'still running'} within the window): "
          f"{len(latencies)} requests, all answered, none failed; p50 {p50 * 1000:.0f} ms, "
          f"p95 {p95 * 1000:.0f} ms, max {max(latencies) * 1000:.0f} ms")
    assert p95 < 30.0
