"""A document filter scopes the whole retrieval: seeds, walk, graph context and stats."""

from __future__ import annotations

import pytest

from workbench.retrieve import retrieve
from workbench.workspace.scoped_view import scoped

from tests.conftest import REDIS_QUESTION

SCOPE = ["sample_corpus/architecture/", "sample_corpus/infrastructure/redis.md"]


def test_a_scoped_graphrag_walks_only_the_scoped_documents(sample_workspace):
    ws = sample_workspace
    view = scoped(ws, SCOPE)
    inside = {d.id for d in view.documents()}
    assert inside and all(d.startswith("sample_corpus/architecture/") or d.endswith("redis.md") for d in inside)
    result = retrieve(view, REDIS_QUESTION, mode="graphrag", k=10)
    assert result.mode_used == "full_graphrag"
    assert result.hits and {h.document for h in result.hits} <= inside
    # The graph walked is the scope's: its passages are the scope's chunks, its entities theirs.
    assert result.stats.graph["passages"] == view.store.count("chunks") < ws.store.count("chunks")
    scoped_entities = set(view.graph.nx)
    assert result.graph_context.nodes and {n.key for n in result.graph_context.nodes} <= scoped_entities
    assert result.graph_context.triples
    for triple in result.graph_context.triples:
        assert triple.chunks and all(view.chunk(c) for c in triple.chunks)
    # Unscoped, the same question reaches documents outside.
    everywhere = retrieve(ws, REDIS_QUESTION, mode="graphrag", k=10)
    assert {h.document for h in everywhere.hits} - inside


def test_a_scoped_view_is_read_only_and_names_a_filter_that_matches_nothing(sample_workspace):
    view = scoped(sample_workspace, SCOPE)
    with pytest.raises(AttributeError, match="read-only"):
        view.store.record("alias", {})
    with pytest.raises(ValueError, match="no stored document matches 'nowhere/'"):
        scoped(sample_workspace, ["nowhere/"])


def test_the_command_line_and_the_mcp_server_refuse_a_filter_that_matches_nothing_in_one_message(sample_workspace,
                                                                                                capsys):
    from mcp.server.mcpserver.exceptions import ToolError

    from workbench.cli import main
    from workbench.mcp_server.server import _search
    from workbench.workspace.scoped_view import Scopes, ScopeUnmatched, resolve_filters

    filters = ["sample_corpus/architecture/", "nowhere/"]  # one matches, one names nothing
    with pytest.raises(ScopeUnmatched) as said:
        resolve_filters(sample_workspace, filters)
    assert str(said.value).startswith("no stored document matches 'nowhere/'; give document ids or folder prefixes")
    code = main(["--workspace", str(sample_workspace.path), "query", "Redis", "--documents", ",".join(filters)])
    assert code == 2 and str(said.value) in capsys.readouterr().err
    with pytest.raises(ToolError) as refused:
        _search(Scopes(sample_workspace), "Redis", "keyword", 5, filters)
    assert str(refused.value) == str(said.value)
    assert resolve_filters(sample_workspace, filters[:1]) == ("sample_corpus/architecture/",)


def test_the_scope_resolver_keeps_a_view_while_the_record_is_unchanged(sample_workspace):
    from workbench.workspace.scoped_view import Scopes, ScopedWorkspace, ScopeUnmatched

    scopes = Scopes(sample_workspace, kept=1)
    assert scopes(None) is sample_workspace and scopes([]) is sample_workspace
    view = scopes(["sample_corpus/architecture/"])
    assert isinstance(view, ScopedWorkspace) and view.store.count("documents") >= 1
    assert scopes(["sample_corpus/architecture/"]) is view  # the same view, not one built again
    other = scopes(["sample_corpus/incidents/"])
    assert other is not view and scopes(["sample_corpus/architecture/"]) is not view  # one kept: the first was let go
    with pytest.raises(ScopeUnmatched, match="'nowhere/'"):
        scopes(["nowhere/"])
