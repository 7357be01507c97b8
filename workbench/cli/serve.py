"""Serving commands: ``mcp`` (the MCP server on stdio), ``chroma-check`` (is the vector store reachable?)
and ``llm-serve`` (a local chat model behind an OpenAI-compatible API: ``llm.local_model``, or ``--model``)."""

from __future__ import annotations

from ..vectors.entity_vectors import FILE_NAME as ENTITY_FILE
from .bounds import between, finite_between
from .render import emit, invoked_as

__all__ = ["register"]


def cmd_mcp(args):
    from ..mcp_server.server import serve
    from ..settings import load_settings

    serve(args.workspace, settings=load_settings(args.settings))  # a WorkspaceError: one line, exit 2


def cmd_chroma_check(args):
    from ..mcp_server.server import open_read_only
    from ..settings import load_settings
    from ..workspace.results import vector_check

    settings = load_settings(args.settings)
    vs = settings.vector_store
    where = f"server {vs.host}:{vs.port}" if vs.backend == "server" else f"{args.workspace / 'chroma'} (embedded)"
    ws = open_read_only(args.workspace, settings)
    try:
        check = vector_check(ws, where)  # an unreachable store: one line
    finally:
        ws.close()

    def render(p):
        line = (f"Chroma {p['where']}: {p['chunks']} chunk vectors ({p['chunks_in_sqlite']} chunks stored), "
                f"{p['entities']} entity-name vectors ({p['entities_in_graph']} entities, in {ENTITY_FILE})")
        if p["in_step"]:
            return line + "; every id matches"
        if p["entity_index_damaged"]:
            line += f"; {ENTITY_FILE} is damaged ({p['entity_index_damaged']})"
        return (line + f"; out of step: chunk vectors {p['chunk_vectors_missing']} missing, "
                f"{p['chunk_vectors_extra']} extra; entity vectors {p['entity_vectors_missing']} missing, "
                f"{p['entity_vectors_extra']} extra: run `{invoked_as()} repair`")

    emit(args, check.to_json(), render)
    return 0 if check.in_step else 1


def cmd_llm_serve(args):
    from ..embedding.local_model import LocalModelError, LocalModelServer
    from ..settings import load_settings
    from .render import CommandError

    from ..embedding.installable import MODELS

    llm = load_settings(args.settings).llm
    name = args.model or llm.local_model
    try:
        server = LocalModelServer(host=args.host, port=args.port, n_threads=args.threads, name=name)
        server.start(timeout=args.timeout)
    except LocalModelError as exc:
        raise CommandError(str(exc), code=2) from None
    print(f"{MODELS[name].title} (llama.cpp) is serving {server.base_url}; in another shell:")
    for name, value in server.environment(llm).items():
        print(f"  export {name}={value}")
    print(f"then: {invoked_as()} answer \"...\"  or  eval TASKS --answers.  Ctrl-C or kill stops the server.",
          flush=True)
    import signal

    def terminated(signum, frame):  # `kill` takes the path Ctrl-C takes, so the model's server stops too
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGTERM, terminated)
    try:
        assert server.process is not None
        server.process.wait()
    except KeyboardInterrupt:
        pass
    finally:
        server.stop()
        signal.signal(signal.SIGTERM, previous)


def register(subparsers, common) -> None:
    p = subparsers.add_parser("mcp", parents=[common],
                              help="serve the workspace to AI assistants over MCP (stdio, read-only)")
    p.set_defaults(handler=cmd_mcp)

    p = subparsers.add_parser("chroma-check", parents=[common],
                              help="check the configured Chroma store is reachable and agrees with SQLite")
    p.set_defaults(handler=cmd_chroma_check)

    p = subparsers.add_parser("llm-serve", parents=[common],
                              help="serve a local chat model with llama.cpp, OpenAI-compatible (default: llm.local_model)")
    p.add_argument("--model", default=None,
                   help="chat model to serve: smollm2-135m (bundled) or an installed one (`models list`)")
    p.add_argument("--host", default="127.0.0.1", help="address to bind (default 127.0.0.1)")
    p.add_argument("--port", type=between(1, 65535), default=8088, help="port (default 8088)")
    p.add_argument("--threads", type=between(1, 1024), default=2, help="CPU threads for the model (default 2)")
    p.add_argument("--timeout", type=finite_between(0.1, 3600), default=120,
                   help="seconds to wait for the server to answer")
    p.set_defaults(handler=cmd_llm_serve)
