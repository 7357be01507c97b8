"""The MCP server, driven as an assistant would: a subprocess over stdio, the SDK's own client."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from contextlib import asynccontextmanager
from pathlib import Path

import anyio
import pytest
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

from workbench.mcp_server.server import TOOL_NAMES, document_matches
from workbench.retrieve import MODES

from tests.conftest import ROOT
TIMEOUT = 60


@asynccontextmanager
async def mcp_session(workspace: Path, errlog):
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "workbench", "--workspace", str(workspace), "mcp"],
        cwd=str(ROOT),
        env={**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "ANONYMIZED_TELEMETRY": "False"},
    )
    async with stdio_client(params, errlog=errlog) as (read, write):
        async with ClientSession(read, write, read_timeout_seconds=TIMEOUT) as session:
            with anyio.fail_after(TIMEOUT):
                await session.initialize()
            yield session


def payload(result) -> dict:
    assert not result.is_error, result.content
    return result.structured_content


def error_text(result) -> str:
    assert result.is_error, result
    return " ".join(block.text for block in result.content)


@pytest.fixture(scope="module")
def session_results(sample_workspace, tmp_path_factory):
    """Run one server session, make every call the tests look at, and keep the results.

    One subprocess for the module: the server loads the model once, as it does in use.
    """
    calls = {
        "graphrag": ("graphrag_search", {"query": "If Redis goes down, does the login flow break?", "limit": 10}),
        "graphrag_filtered": ("graphrag_search", {"query": "If Redis goes down, does the login flow break?",
                                                  "documents": ["sample_corpus/architecture/"], "limit": 5}),
        "graphrag_bad_filter": ("graphrag_search", {"query": "Redis", "documents": ["no/such/folder"]}),
        "search_keyword": ("search_chunks", {"query": "Redis maxmemory", "mode": "keyword", "limit": 3}),
        "search_bad_mode": ("search_chunks", {"query": "Redis", "mode": "bm42"}),
        "search_limit_zero": ("search_chunks", {"query": "Redis", "limit": 0}),
        "search_limit_huge": ("graphrag_search", {"query": "Redis", "limit": 101}),
        "impact": ("impact", {"entity": "redis"}),
        "impact_unknown": ("impact", {"entity": "Rediss"}),
        "impact_platform": ("impact", {"entity": "Platform team"}),
        "impact_platform_dependencies": ("impact", {"entity": "Platform team", "relations": "dependencies"}),
        "neighbors": ("neighbors", {"entity": "auth service", "hops": 1, "direction": "out"}),
        "neighbors_default": ("neighbors", {"entity": "auth service"}),
        "neighbors_bad_direction": ("neighbors", {"entity": "auth service", "direction": "up"}),
        "neighbors_bad_hops": ("neighbors", {"entity": "auth service", "hops": 6}),
        "path": ("path", {"a": "login flow", "b": "redis"}),
        "path_unknown": ("path", {"a": "login flow", "b": "Rediss"}),
        "chunk_unknown": ("get_chunk", {"id": "no-such-chunk"}),
    }
    sample_chunk = sample_workspace.chunks()[0]
    calls["chunk"] = ("get_chunk", {"id": sample_chunk.id})
    errlog = open(tmp_path_factory.mktemp("mcp") / "server.log", "w+")
    before = (sample_workspace.version, sample_workspace.stats())

    async def drive():
        async with mcp_session(sample_workspace.path, errlog) as session:
            with anyio.fail_after(TIMEOUT):
                listed = await session.list_tools()
            results = {}
            for label, (name, arguments) in calls.items():
                with anyio.fail_after(TIMEOUT):
                    results[label] = await session.call_tool(name, arguments)
            return listed, results

    try:
        listed, results = anyio.run(drive)
    finally:
        errlog.seek(0)
        log = errlog.read()
        errlog.close()
    return {"tools": {t.name: t for t in listed.tools}, "results": results, "chunk": sample_chunk, "log": log,
            "before": before}


def test_lists_all_its_tools_with_input_schemas(session_results):
    import workbench.mcp_server.server

    tools = session_results["tools"]
    assert set(tools) == set(TOOL_NAMES)
    # The module's docstring counts them and names each.
    counted = {6: "Six", 7: "Seven", 8: "Eight", 9: "Nine", 10: "Ten"}[len(TOOL_NAMES)]
    doc = workbench.mcp_server.server.__doc__ or ""
    assert f"\n{counted} read-only tools" in doc and all(f"``{name}``" in doc for name in TOOL_NAMES)
    for tool in tools.values():
        assert tool.input_schema["type"] == "object"
        assert tool.description
        assert tool.annotations.read_only_hint is True


def test_input_schemas_state_bounds_and_choices(session_results):
    tools = session_results["tools"]
    limit = tools["search_chunks"].input_schema["properties"]["limit"]
    assert (limit["minimum"], limit["maximum"]) == (1, 100)
    assert tools["search_chunks"].input_schema["properties"]["mode"]["enum"] == list(MODES)
    hops = tools["neighbors"].input_schema["properties"]["hops"]
    assert (hops["minimum"], hops["maximum"]) == (1, 5)
    assert tools["neighbors"].input_schema["properties"]["direction"]["enum"] == ["out", "in", "both"]
    assert tools["graphrag_search"].input_schema["required"] == ["query"]
    assert "description" in tools["graphrag_search"].input_schema["properties"]["documents"]


def test_impact_of_redis_reaches_login_flow_with_cited_hops_and_survivors(session_results):
    impact = payload(session_results["results"]["impact"])
    assert impact["failed"] == "Redis"
    login = next(item for item in impact["impacted"] if item["entity"].lower() == "login flow")
    assert login["path"][0] == "Redis" and len(login["hops"]) >= 3
    for hop in login["hops"]:
        assert hop["chunks"] and hop["documents"]
    survivors = {s.lower() for s in impact["survivors"]}
    assert "search service" in survivors
    assert not survivors & {item["entity"].lower() for item in impact["impacted"]}


CHAIN = [("login flow", "auth service"), ("auth service", "token cache"), ("token cache", "redis")]


def test_graphrag_search_for_the_redis_question_returns_the_chain_chunks(session_results):
    found = payload(session_results["results"]["graphrag"])
    documents = {hit["document"] for hit in found["hits"]}
    for gold in ("architecture/login-flow.md", "infrastructure/redis.md"):
        assert any(d.endswith(gold) for d in documents), (gold, documents)
    # Every link of login flow -> auth service -> token cache -> Redis comes back cited.
    cited = {(t["source"].lower(), t["target"].lower()): t for t in found["graph_context"]["triples"]}
    for link in CHAIN:
        assert link in cited and cited[link]["chunks"], (link, sorted(cited))
    assert any(d.endswith("architecture/auth-service.md") for d in cited[CHAIN[1]]["documents"])
    assert found["mode_requested"] == "graphrag" and found["mode_used"] and found["stats"]
    assert found["hits"] and [hit["rank"] for hit in found["hits"]] == list(range(1, len(found["hits"]) + 1))
    for hit in found["hits"]:
        assert hit["chunk_id"] and hit["text"] and isinstance(hit["score"], float) and isinstance(hit["why"], dict)
    # The CLI's --json document (RetrievalResult.to_json), plus the filter applied.
    assert set(found) == {"query", "mode_requested", "mode_used", "reason", "hits", "stats", "graph_context",
                          "document_filter"}
    assert found["graph_context"]["seeds"] and found["graph_context"]["reading"] == "impact"


def test_graphrag_search_document_filter_keeps_only_those_documents(session_results):
    found = payload(session_results["results"]["graphrag_filtered"])
    assert found["hits"] and len(found["hits"]) <= 5
    assert all(document_matches(hit["document"], ["sample_corpus/architecture"]) for hit in found["hits"])
    assert found["document_filter"] == ["sample_corpus/architecture/"]


def test_document_filter_matching_nothing_is_an_error_naming_it(session_results):
    assert "no/such/folder" in error_text(session_results["results"]["graphrag_bad_filter"])


def test_search_chunks_uses_the_requested_mode(session_results):
    found = payload(session_results["results"]["search_keyword"])
    assert found["mode_requested"] == "keyword"
    assert 1 <= len(found["hits"]) <= 3
    assert "maxmemory" in found["hits"][0]["text"].lower()


def test_get_chunk_returns_its_text(session_results):
    chunk = session_results["chunk"]
    got = payload(session_results["results"]["chunk"])
    assert got["id"] == chunk.id and got["text"] == chunk.text and got["document_id"] == chunk.document_id


def test_path_from_login_flow_to_redis_cites_each_hop(session_results):
    found = payload(session_results["results"]["path"])
    assert found["from"].lower() == "login flow" and found["to"] == "Redis"
    best = found["paths"][0]
    assert best["nodes"][0].lower() == "login flow" and best["nodes"][-1] == "Redis"
    assert all(hop["chunks"] for hop in best["hops"])


def test_neighbors_walks_out_from_the_entity(session_results):
    hood = payload(session_results["results"]["neighbors"])
    assert hood["center"].lower() == "auth service"
    assert "token cache" in {e["entity"].lower() for e in hood["entities"]}
    assert all(e["distance"] == 1 for e in hood["entities"])
    assert all(edge["source"].lower() == "auth service" for edge in hood["edges"])


def test_impact_spreads_along_every_relation_unless_asked_for_the_dependencies(session_results, sample_workspace):
    from workbench.context_graph.graph_questions import impact

    every = payload(session_results["results"]["impact_platform"])
    dependencies = payload(session_results["results"]["impact_platform_dependencies"])
    assert every == json.loads(json.dumps(impact(sample_workspace, "Platform team").to_json()))
    assert every["relations"] == "all" and every["impacted"]
    assert dependencies["relations"] == "dependencies" and dependencies["impacted"] == []
    assert session_results["tools"]["impact"].input_schema["properties"]["relations"]["enum"] == ["all", "dependencies"]


def test_neighbors_walks_forward_by_default(session_results):
    assert payload(session_results["results"]["neighbors_default"]) == payload(session_results["results"]["neighbors"])


def test_unknown_entity_is_an_error_with_suggestions(session_results):
    for label in ("impact_unknown", "path_unknown"):
        text = error_text(session_results["results"][label])
        assert "Rediss" in text and "did you mean" in text and "Redis" in text.split("did you mean")[1]


def test_unknown_chunk_is_an_error_naming_it(session_results):
    assert "no-such-chunk" in error_text(session_results["results"]["chunk_unknown"])


@pytest.mark.parametrize("label, field", [("search_bad_mode", "mode"), ("search_limit_zero", "limit"),
                                          ("search_limit_huge", "limit"), ("neighbors_bad_direction", "direction"),
                                          ("neighbors_bad_hops", "hops")])
def test_bad_arguments_are_errors_naming_the_argument(session_results, label, field):
    assert field in error_text(session_results["results"][label])


def test_server_logs_to_stderr_and_writes_nothing_to_the_workspace(session_results, sample_workspace):
    assert "serving" in session_results["log"]
    assert (sample_workspace.version, sample_workspace.stats()) == session_results["before"]


def test_server_refuses_a_folder_without_a_workspace(tmp_path):
    missing = tmp_path / "nothing-here"
    done = subprocess.run([sys.executable, "-m", "workbench", "--workspace", str(missing), "mcp"],
                          cwd=ROOT, capture_output=True, text=True, timeout=TIMEOUT, stdin=subprocess.DEVNULL)
    assert done.returncode == 2
    assert "no workspace at" in done.stderr and "ingest" in done.stderr
    assert "Traceback" not in done.stderr and done.stdout == ""
    assert not missing.exists()


def test_structured_content_matches_the_text_content(session_results):
    result = session_results["results"]["impact"]
    assert json.loads(result.content[0].text) == result.structured_content
