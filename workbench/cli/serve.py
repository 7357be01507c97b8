"""Serving commands: ``mcp`` (the MCP server on stdio) and ``chroma-check`` (is the vector store reachable?)."""

from __future__ import annotations

from . import CommandError, emit

__all__ = ["register"]


def cmd_mcp(args):
    from ..mcp_server import WorkspaceMissing, serve
    from ..settings import load_settings

    try:
        serve(args.workspace, settings=load_settings(args.settings))
    except WorkspaceMissing as exc:
        raise CommandError(str(exc), code=2) from None


def cmd_chroma_check(args):
    from ..mcp_server import WorkspaceMissing, open_read_only
    from ..settings import load_settings

    settings = load_settings(args.settings)
    vs = settings.vector_store
    where = f"server {vs.host}:{vs.port}" if vs.backend == "server" else f"{args.workspace / 'chroma'} (embedded)"
    try:
        ws = open_read_only(args.workspace, settings)
    except WorkspaceMissing as exc:
        raise CommandError(str(exc), code=2) from None
    try:
        counts = ws.vector_counts()  # VectorStoreUnavailable propagates: main prints it as one line
        payload = {"backend": vs.backend, "where": where, **counts,
                   "chunks_in_sqlite": ws.store.count("chunks"), "entities_in_graph": len(ws.graph)}
    finally:
        ws.close()
    in_step = payload["chunks"] == payload["chunks_in_sqlite"] and payload["entities"] == payload["entities_in_graph"]
    payload["in_step"] = in_step
    emit(args, payload, lambda p: (
        f"Chroma {p['where']}: {p['chunks']} chunk vectors ({p['chunks_in_sqlite']} chunks stored), "
        f"{p['entities']} entity vectors ({p['entities_in_graph']} entities)"
        + ("" if p["in_step"] else "; out of step: run `python -m workbench repair`")))
    return 0 if in_step else 1


def register(subparsers, common) -> None:
    p = subparsers.add_parser("mcp", parents=[common],
                              help="serve the workspace to AI assistants over MCP (stdio, read-only)")
    p.set_defaults(handler=cmd_mcp)

    p = subparsers.add_parser("chroma-check", parents=[common],
                              help="check the configured Chroma store is reachable and agrees with SQLite")
    p.set_defaults(handler=cmd_chroma_check)
