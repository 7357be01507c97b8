"""Issue 27, item 7: the MCP server writes nothing. With its vector files missing it wrote
``chroma/``, ``entity_vectors.npz`` and SQLite meta; requests holding lone surrogates got no
reply at all."""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
import sys

import anyio

from workbench.vectors.entity_vectors import FILE_NAME
from workbench.mcp_server.server import MALFORMED_METHOD

from tests.conftest import ROOT
from tests.test_mcp_server import TIMEOUT, error_text, mcp_session, payload

QUERY = "which queue does service number 3 depend on"



def _disk(path) -> tuple:
    """What is on disk in a workspace folder: its files (name, size, mtime) and SQLite's meta rows."""
    files = sorted((str(p.relative_to(path)), p.stat().st_size, p.stat().st_mtime_ns) for p in path.rglob("*")
                   if p.is_file() and not p.name.startswith("workspace.sqlite") and p.name != "workspace.lock")
    with sqlite3.connect(path / "workspace.sqlite") as db:
        meta = sorted(db.execute("SELECT key, value FROM meta"))
    return files, meta


def test_with_its_stores_missing_the_server_names_repair_and_writes_nothing(small, tmp_path):
    shutil.rmtree(small.path / "chroma")
    (small.path / FILE_NAME).unlink()
    before = _disk(small.path)
    errlog = open(tmp_path / "server.log", "w+")
    results = {}

    async def drive():
        async with mcp_session(small.path, errlog) as session:
            with anyio.fail_after(TIMEOUT):
                for label, mode in (("vector", "vector"), ("hybrid", "hybrid"), ("keyword", "keyword")):
                    results[label] = await session.call_tool("search_chunks", {"query": QUERY, "mode": mode})
                results["graphrag"] = await session.call_tool("graphrag_search", {"query": QUERY})
                results["impact"] = await session.call_tool("impact", {"entity": "queue number 3"})

    anyio.run(drive)
    for label in ("vector", "hybrid", "graphrag"):
        message = error_text(results[label])
        assert "is missing" in message and "repair" in message, (label, message)
    assert payload(results["keyword"])["hits"] and payload(results["impact"])["failed"]
    assert _disk(small.path) == before
    assert not (small.path / "chroma").exists() and not (small.path / FILE_NAME).exists()


def _exchange(workspace, lines: list[str], replies: int) -> list[dict]:
    """Start the server, send raw protocol lines after the handshake, read ``replies`` replies."""
    server = subprocess.Popen(
        [sys.executable, "-m", "workbench", "--workspace", str(workspace), "mcp"], cwd=ROOT,
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
        env={**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"})
    try:
        hello = {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "raw", "version": "1"}}}
        ready = {"jsonrpc": "2.0", "method": "notifications/initialized"}
        for line in [json.dumps(hello), json.dumps(ready), *lines]:
            server.stdin.write((line + "\n").encode("utf-8"))
        server.stdin.flush()
        got = [json.loads(server.stdout.readline()) for _ in range(replies + 1)]
        return got[1:]
    finally:
        server.stdin.close()
        server.wait(timeout=60)


def test_lone_surrogates_and_malformed_requests_get_a_reply(small):
    search = '{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "search_chunks", ' \
             '"arguments": {"query": "queue \\ud800 number", "mode": "keyword", "limit": 2}}}'
    malformed = '{"jsonrpc": "2.0", "id": 2, "method": 5}'
    after = json.dumps({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {
        "name": "get_chunk", "arguments": {"id": "no-such-chunk"}}})
    replies = {reply["id"]: reply for reply in _exchange(small.path, [search, malformed, after], replies=3)}
    assert set(replies) == {1, 2, 3}
    assert not replies[1]["result"]["isError"]
    assert replies[1]["result"]["structuredContent"]["query"] == "queue \ufffd number"
    assert replies[2]["error"]["code"] == -32601 and replies[2]["error"]["data"] == MALFORMED_METHOD
    assert replies[3]["result"]["isError"]  # the server still answers after both
