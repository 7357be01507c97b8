"""The MCP server: the workbench's search, graph walks and impact, served to AI assistants.

Eight read-only tools over one workspace opened once at start (with its embedding model):
``graphrag_search``, ``search_chunks``, ``impact``, ``neighbors``, ``get_chunk``, ``path``, ``communities``, ``timeline``.
Every answer carries its citations (chunk ids and documents). Expected failures (an unknown
entity, an unknown chunk id, an argument out of range) come back as tool errors with a message
saying what was wrong and what to do; the schema bounds are checked by the SDK before a tool
runs. The server speaks over stdio, so it logs to stderr only.

Built on the official ``mcp`` SDK (2.x, where ``FastMCP`` became
:class:`mcp.server.mcpserver.MCPServer`).

Examples
--------
>>> document_matches("architecture/login-flow.md", ["architecture"])
True
>>> document_matches("architecture-old/x.md", ["architecture"])
False
>>> document_matches("glossary.json#redis", ["glossary.json"])
True
"""

from __future__ import annotations

import json
import logging
import re
import sys
import threading
from pathlib import Path
from typing import Annotated, Any, Literal, Sequence

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import ToolAnnotations
from pydantic import Field

from ..context_graph import graph_questions as ask
from ..context_graph.graph import EntityNotFound
from ..retrieve import MODES
from ..workspace.scoped_view import Scopes, document_matches
from ..settings import Settings, setting_default
from ..vectors.index import NeedsRepair
from ..workspace.workspace import ChunkNotFound, Workspace, WorkspaceMissing

__all__ = [
    "SERVER_NAME",
    "TOOL_NAMES",
    "WorkspaceMissing",
    "build_server",
    "document_matches",
    "open_read_only",
    "repaired_line",
    "serve",
]

SERVER_NAME = "context-graph-workbench"

#: The tools the server offers, in the order they are registered.
TOOL_NAMES = ("graphrag_search", "search_chunks", "impact", "neighbors", "get_chunk", "path", "communities", "timeline")

#: Most hits a search tool returns.
MAX_LIMIT = 100
#: Hits a search tool returns when not told: the default of ``retrieval.k``.
DEFAULT_LIMIT: int = setting_default("retrieval.k")
#: Most hops a neighbourhood walk takes.
MAX_HOPS = 5

log = logging.getLogger("workbench.mcp")

Limit = Annotated[int, Field(ge=1, le=MAX_LIMIT, description=f"Hits wanted, 1 to {MAX_LIMIT}.")]
EntityName = Annotated[str, Field(min_length=1, description="An entity name as written anywhere in the corpus "
                                                            "('Redis', 'auth service', 'AuthService').")]
Query = Annotated[str, Field(min_length=1, description="The question or keywords to search for.")]
Mode = Literal[MODES]  # type: ignore[valid-type]  # the registry's names, so the schema lists them

_READ_ONLY = ToolAnnotations(read_only_hint=True, destructive_hint=False, idempotent_hint=True,
                             open_world_hint=False)


def open_read_only(path: str | Path, settings: Settings | None = None, **backends) -> Workspace:
    """Open an existing workspace for reading; never create one, nor write any file in it.

    An assistant searching an empty workspace made by mistake would find nothing, silently. A
    store that is missing or damaged is not rebuilt here: the search fails with a tool error
    that names ``repair``.

    Raises
    ------
    WorkspaceMissing
        If ``path/workspace.sqlite`` does not exist.
    WorkspaceError
        If ``path`` is a file or its database is damaged, foreign or newer.
    """
    from ..corpus.summaries import rebuild_in_background

    ws = Workspace(path, settings=settings, create=False, read_only=True, **backends)
    # A server lives on: community reports that must be made from nothing are built on a thread
    # while its tools answer with the last ones, saying which record version they describe.
    rebuild_in_background(ws)
    return ws


def _search(scopes: Scopes, query: str, mode: str, limit: int, documents: Sequence[str] | None) -> dict[str, Any]:
    """One retrieval, scoped to ``documents`` when given: seeds, walk, context and stats included."""
    from ..retrieve.scoped_search import scoped_search

    try:
        return scoped_search(scopes, query, mode=mode, k=limit, documents=documents).to_json()
    except (ValueError, NeedsRepair) as exc:  # a filter matching nothing; a store missing or damaged: names `repair`
        raise ToolError(str(exc)) from None


def _entity_error(exc: EntityNotFound) -> ToolError:
    return ToolError(str(exc))


def build_server(ws: Workspace) -> MCPServer:
    """An :class:`MCPServer` whose six tools read ``ws``.

    Tool calls run on worker threads; one lock makes them take turns, since the graph and
    the retrieval indexes are built lazily on first use.
    """
    server = MCPServer(
        SERVER_NAME,
        instructions=(
            "Search a corpus and walk its context graph. Entities are nodes; every relation edge cites the "
            "chunks that state it. Use graphrag_search or search_chunks to find passages, impact to ask what "
            "breaks if something fails, neighbors and path to walk the graph, get_chunk to read a cited chunk, communities for the corpus's "
            "themes, timeline for what happened to an entity over time."
        ),
    )
    turn = threading.Lock()
    scopes = Scopes(ws)  # the last few scoped views kept while the record is unchanged

    def graphrag_search(
        query: Query,
        limit: Limit = DEFAULT_LIMIT,
        documents: Annotated[list[str] | None, Field(
            description="Only hits from these documents: document ids ('architecture/login-flow.md') or "
                        "folder prefixes ('incidents/'). Omit for the whole corpus.")] = None,
    ) -> dict[str, Any]:
        """Graph-aware search: ranked chunks with citations (chunk id, document, score, why), the
        retrieval stats, the mode used (graphrag falls back to vector search when it must, and says
        why) and the graph context (entities and cited triples)."""
        with turn:
            return _search(scopes, query, "graphrag", limit, documents)

    def search_chunks(
        query: Query,
        mode: Annotated[Mode, Field(description="Retrieval strategy: " + ", ".join(MODES) + ".")] = "hybrid",
        limit: Limit = DEFAULT_LIMIT,
    ) -> dict[str, Any]:
        """Ranked chunks for a query with one retrieval strategy, each with its citation and why it
        came back, plus the retrieval stats and the mode used."""
        with turn:
            return _search(scopes, query, mode, limit, None)

    def impact(
        entity: EntityName,
        relations: Annotated[Literal["all", "dependencies"], Field(
            description="'all' spreads the failure along every relation to the entity, 'dependencies' along the "
                        "dependency relations only (depends_on, uses, runs_on...).")] = "all",
    ) -> dict[str, Any]:
        """What breaks if an entity fails: every entity with a relation to it (or, with
        ``relations='dependencies'``, that depends on it), directly or not, with the cited path of
        hops (relation, chunk ids, documents) from the failed entity, and the survivors."""
        with turn:
            try:
                return ask.impact(ws, entity, relations).to_json()
            except EntityNotFound as exc:
                raise _entity_error(exc) from None

    def neighbors(
        entity: EntityName,
        hops: Annotated[int, Field(ge=1, le=MAX_HOPS, description=f"Edges to walk, 1 to {MAX_HOPS}.")] = 1,
        direction: Annotated[Literal["out", "in", "both"], Field(
            description="'out' follows edges from the entity, 'in' towards it, 'both' either way.")] = "out",
        comention: Annotated[bool, Field(
            description="Instead, the entities named beside it in the same chunks, with weight and first/last seen.")]
        = False,
    ) -> dict[str, Any]:
        """The entities within a number of hops of an entity, and the cited edges walked (or, with
        ``comention``, the entities co-mentioned with it and when)."""
        with turn:
            try:
                found = ask.comentions(ws, entity) if comention else ask.neighborhood(ws, entity, hops, direction)
            except EntityNotFound as exc:
                raise _entity_error(exc) from None
            return found.to_json()

    def get_chunk(id: Annotated[str, Field(min_length=1, description="A chunk id, as cited by the other tools.")]
                  ) -> dict[str, Any]:
        """The full text of one chunk, with its document, position and offsets."""
        with turn:
            try:
                return ws.chunk(id).to_json()
            except ChunkNotFound as exc:
                raise ToolError(f"{exc}; use chunk ids cited by graphrag_search, search_chunks, impact, "
                                f"neighbors or path") from None

    def path(
        a: Annotated[str, Field(min_length=1, description="The entity to start from.")],
        b: Annotated[str, Field(min_length=1, description="The entity to reach.")],
    ) -> dict[str, Any]:
        """Cited paths from entity a to entity b, best corroborated first (each hop cites its chunks)."""
        with turn:
            try:
                return ask.paths_between(ws, a, b).to_json()
            except EntityNotFound as exc:
                raise _entity_error(exc) from None

    def communities(
        id: Annotated[str | None, Field(description="One community's id for its full report; omit for all.")] = None,
    ) -> dict[str, Any]:
        """The communities of the context graph (themes of the corpus), each with an extractive
        report: title, key entities with types, strongest cited relations, representative
        sentences with their chunk ids, and time span."""
        from ..corpus.community_listing import community_listing

        with turn:
            try:
                return community_listing(ws, id).to_json()
            except KeyError as exc:
                raise ToolError(str(exc.args[0])) from None

    def timeline(entity: EntityName) -> dict[str, Any]:
        """An entity's dated mentions, relations and decisions, oldest first, each with its chunk id."""
        from ..corpus.timeline import timeline as entity_timeline

        with turn:
            try:
                return entity_timeline(ws, entity).to_json()
            except EntityNotFound as exc:
                raise _entity_error(exc) from None

    for tool in (graphrag_search, search_chunks, impact, neighbors, get_chunk, path, communities, timeline):
        server.add_tool(tool, annotations=_READ_ONLY, structured_output=True)
    return server


#: The method a malformed request with an id is renamed to, so the SDK answers it with a
#: JSON-RPC error ("method not found") instead of dropping it without a word.
MALFORMED_METHOD = "workbench/malformed-request"


#: Longest request line read, in bytes (a tool's arguments are a question and a few names). The
#: rest of a longer line is skipped unread; the request is answered as :data:`TOO_LARGE_METHOD`.
MAX_LINE_BYTES = 1024 * 1024
#: Deepest nesting of arrays and objects in a request (a tool call's nests four deep); a
#: deeper one is answered as :data:`TOO_DEEP_METHOD` before it is parsed.
MAX_DEPTH = 32
TOO_LARGE_METHOD = "workbench/request-too-large"
TOO_DEEP_METHOD = "workbench/request-nested-too-deeply"
#: The JSON strings and brackets of a line (a string's brackets are no nesting).
_JSON_TOKENS = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"|[\[\]{}]')
_ID_VALUE = re.compile(r'\s*:\s*(-?\d{1,18}(?![\d.eE])|"[^"\\]*(?:\\.[^"\\]*)*")')


def _depth_and_id(line: str) -> tuple[int, int | str | None]:
    """The deepest nesting of ``line``'s arrays and objects, and the id of the request it holds
    (its top-level ``"id"``, a number or a string) if one is seen, without parsing it: it may be
    too deep or cut short."""
    depth = deepest = 0
    request_id: int | str | None = None
    for match in _JSON_TOKENS.finditer(line):
        token = match.group()
        if token in ("[", "{"):
            depth += 1
            deepest = max(deepest, depth)
        elif token in ("]", "}"):
            depth -= 1
        elif depth == 1 and token == '"id"' and request_id is None:
            value = _ID_VALUE.match(line, match.end())
            try:
                request_id = json.loads(value.group(1)) if value is not None else None
            except ValueError:  # a string id with a bad escape: no id to answer
                pass
    return deepest, request_id


def refused_line(line: str, method: str) -> str:
    """The line the SDK is given for a request refused unparsed (too large, too deep): the request
    renamed to ``method``, which the SDK answers with a JSON-RPC error for its id, or, when no id
    is found, an empty object, which it drops (a notification gets no reply).

    >>> refused_line('{"jsonrpc": "2.0", "id": 4, "params": [[[[', TOO_DEEP_METHOD)
    '{"jsonrpc": "2.0", "id": 4, "method": "workbench/request-nested-too-deeply"}'
    """
    request_id = _depth_and_id(line)[1]
    if request_id is None:
        return "{}"
    return json.dumps({"jsonrpc": "2.0", "id": request_id, "method": method})


def _is_surrogate(ch: str) -> bool:
    return 0xD800 <= ord(ch) <= 0xDFFF


def _without_surrogates(value):
    """``value`` (parsed JSON) with each lone UTF-16 surrogate in its text made U+FFFD."""
    if isinstance(value, str):
        return "".join("\ufffd" if _is_surrogate(ch) else ch for ch in value) if any(map(_is_surrogate, value)) \
            else value
    if isinstance(value, list):
        return [_without_surrogates(v) for v in value]
    if isinstance(value, dict):
        return {_without_surrogates(k): _without_surrogates(v) for k, v in value.items()}
    return value


def repaired_line(line: str) -> str:
    r"""One line of the stdio protocol, made one the SDK answers.

    The SDK (mcp 2.3) drops, without a reply, a line its JSON-RPC model refuses: a lone
    surrogate escape (``"\ud800"``) in any string, or a request of the wrong shape. Lone
    surrogates become U+FFFD, so the request is answered; a malformed request that has an id
    is renamed to :data:`MALFORMED_METHOD`, which the SDK answers with a JSON-RPC error for that
    id. A line that is not JSON at all has no id to answer: it is left to the SDK, which drops it.

    >>> repaired_line('{"jsonrpc": "2.0", "id": 7, "method": "ping", "params": {"q": "\\ud800"}}')
    '{"jsonrpc": "2.0", "id": 7, "method": "ping", "params": {"q": "\\ufffd"}}'
    >>> repaired_line('{"jsonrpc": "2.0", "id": 8, "method": 5}')
    '{"jsonrpc": "2.0", "id": 8, "method": "workbench/malformed-request"}'
    """
    import mcp_types

    if len(line) > MAX_LINE_BYTES:
        return refused_line(line, TOO_LARGE_METHOD)
    if _depth_and_id(line)[0] > MAX_DEPTH:  # json.loads and the walk below recurse: refused unparsed
        return refused_line(line, TOO_DEEP_METHOD)
    try:
        message = json.loads(line)
    except (ValueError, RecursionError):
        return line
    cleaned = _without_surrogates(message)
    if cleaned != message:
        line = json.dumps(cleaned)
    try:
        mcp_types.jsonrpc_message_adapter.validate_json(line, by_name=False)
        return line
    except Exception:  # noqa: BLE001 - pydantic's ValidationError, or any refusal of the model
        request_id = cleaned.get("id") if isinstance(cleaned, dict) else None
        if isinstance(request_id, (int, str)) and not isinstance(request_id, bool):
            return json.dumps({"jsonrpc": "2.0", "id": request_id, "method": MALFORMED_METHOD})
        return line


class _RepairedLines:
    """The lines of a binary stream (stdin), each passed through :func:`repaired_line`.

    A line is never held past :data:`MAX_LINE_BYTES`: the rest of a longer one is read and
    dropped, and the request answered by :func:`refused_line`.
    """

    def __init__(self, raw) -> None:
        self._raw = raw

    def __aiter__(self):
        return self._repaired()

    async def _repaired(self):
        async for line, cut in self._bounded():
            if cut:
                yield refused_line(line, TOO_LARGE_METHOD)
            else:
                yield repaired_line(line) if line.strip() else line

    async def _bounded(self):
        """``(line, cut)`` for each line, decoded as UTF-8 (bad bytes replaced); a cut line is its
        first :data:`MAX_LINE_BYTES` bytes."""
        import anyio

        kept, cut = bytearray(), False
        while True:
            block = await anyio.to_thread.run_sync(self._raw.read1, 1 << 16)
            if not block:
                if kept:
                    yield kept.decode("utf-8", errors="replace"), cut
                return
            start = 0
            while start < len(block):
                end = block.find(b"\n", start)
                stop = len(block) if end < 0 else end + 1
                room = MAX_LINE_BYTES - len(kept)
                if stop - start > room:
                    cut = True
                kept += block[start:start + max(room, 0)] if stop - start > room else block[start:stop]
                start = stop
                if end >= 0:
                    yield kept.decode("utf-8", errors="replace"), cut
                    kept, cut = bytearray(), False


async def _run_stdio(server: MCPServer) -> None:
    """Serve ``server`` on stdio as ``server.run("stdio")`` does, every line repaired first."""
    from mcp.server.stdio import stdio_server

    async with stdio_server(stdin=_RepairedLines(sys.stdin.buffer)) as (read_stream, write_stream):  # type: ignore[arg-type]
        lowlevel = server._lowlevel_server  # what MCPServer.run_stdio_async runs (mcp 2.3)
        await lowlevel.run(read_stream, write_stream, lowlevel.create_initialization_options())


def serve(workspace: str | Path, settings: Settings | None = None) -> None:
    """Open the workspace and its model once, then answer MCP requests on stdio until EOF."""
    logging.basicConfig(level=logging.INFO, stream=sys.stderr, format="%(asctime)s %(name)s %(message)s")
    ws = open_read_only(workspace, settings)
    log.info("opening %s", ws.path)
    graph = ws.graph
    ws.embedder.embed(["warm up"])  # load the model now, not on the first question
    log.info("serving %d entities from %s on stdio", len(graph), ws.path)
    try:
        import anyio

        anyio.run(_run_stdio, build_server(ws))
    finally:
        ws.close()
