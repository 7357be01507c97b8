"""The command line: ``workbench [--workspace DIR] COMMAND [--json]`` (or ``python -m workbench ...``).

Each module of this package registers its commands on the shared parser; every command
prints a table for people and, with ``--json``, one JSON document for scripts. Expected
failures (unknown entity, busy workspace, bad settings or input, an unreachable language
model, a step that ran out of memory or disk) print one clear line and exit non-zero; they
never show a traceback.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from types import ModuleType
from typing import Iterator, Sequence

from ..text.safe_text import printable
from .render import CommandError, emit, for_people, invoked_as

__all__ = ["main", "build_parser", "command_named", "invoked_as", "CommandError", "emit", "for_people"]


def _common(exit_on_error: bool = True) -> argparse.ArgumentParser:
    common = argparse.ArgumentParser(add_help=False, exit_on_error=exit_on_error)
    # SUPPRESS keeps a value given before the command from being reset by the subparser.
    common.add_argument("--workspace", type=Path, default=argparse.SUPPRESS,
                        help="workspace folder (default: ./workspace)")
    common.add_argument("--settings", type=Path, default=argparse.SUPPRESS,
                        help="settings YAML (default: the project's settings.yaml)")
    common.add_argument("--json", action="store_true", default=argparse.SUPPRESS, help="print JSON")
    return common


def _command_modules() -> Iterator[ModuleType]:
    """The modules that add commands, in help order, each imported only when reached: a command
    module imports its libraries (the retrievers, the benchmarks...), which takes time."""
    from . import core
    yield core
    from . import watch
    yield watch
    from . import retrieval
    yield retrieval
    from . import temporal
    yield temporal
    from . import evaluation
    yield evaluation
    from . import benchmarks
    yield benchmarks
    from . import serve
    yield serve
    from . import models
    yield models
    from . import docs
    yield docs


def build_parser(prog: str | None = None, command: str | None = None) -> argparse.ArgumentParser:
    """The parser of every command; ``prog`` (default: :func:`invoked_as`) starts its usage lines.

    Given ``command`` (:func:`command_named`), the modules stop adding commands once one has added
    it: that parser reads a line of this command as the whole one does, and ``ingest`` starts
    without importing the retrievers or the benchmarks."""
    common = _common()
    parser = argparse.ArgumentParser(prog=prog or invoked_as(), parents=[common],
                                     description="Context Graph Workbench: a cited context graph beside a vector store.")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for module in _command_modules():
        module.register(subparsers, common)
        if command in subparsers.choices:
            break
    # `docs` writes the reference of this very parser; handed the builder here, cli.docs need not import this package.
    parser.set_defaults(build_parser=build_parser)
    return parser


def command_named(argv: Sequence[str]) -> str | None:
    """The word that names the command in ``argv``, past the options every command shares; None
    when anything else comes first (``-h``, a mistake): the whole parser answers those.

    >>> command_named(["--workspace", "stats", "ingest", "notes", "--json"]), command_named(["-h", "ingest"])
    ('ingest', None)
    """
    try:
        _, rest = _common(exit_on_error=False).parse_known_args(argv)
    except argparse.ArgumentError:  # a shared option without its value: the whole parser says so
        return None
    return rest[0] if rest and not rest[0].startswith("-") else None


def _say_error(message: object) -> None:
    print(f"error: {printable(message)}", file=sys.stderr)


def _quiet_stdout() -> None:
    """After a broken pipe: send what is still buffered to /dev/null, so exit says nothing."""
    import os

    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())


#: Exit status after the reader of stdout went away (``stats | head -1``): the shell's 128 + SIGPIPE.
BROKEN_PIPE_EXIT = 141


def main(argv: Sequence[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    args = build_parser(command=command_named(argv)).parse_args(argv)
    for attr, default in (("workspace", Path("workspace")), ("settings", None), ("json", False)):
        if not hasattr(args, attr):
            setattr(args, attr, default)
    args.opened_workspaces = []  # closed on the way out (see _close)
    try:
        return _run(args)
    finally:
        _close(args.opened_workspaces)


def _close(workspaces) -> None:
    """Close what the command opened, so SQLite folds its write-ahead log into the record and
    deletes it (a process that exits with the connection open leaves the log at its largest)."""
    import sqlite3

    for ws in workspaces:
        try:
            ws.close()
        except (sqlite3.Error, OSError):  # a full disk: the next opener checkpoints the log
            pass


def _run(args) -> int:
    import sqlite3

    from ..context_graph.graph import EntityNotFound
    from ..ingest.failures import StepFailed
    from ..ingest.loaders import LoadError
    from ..settings import SettingsError
    from ..extract.llm import LLMError
    from ..record.store import RECORD_FILE, database_error_message
    from ..vectors.index import NeedsRepair, VectorStoreUnavailable
    from ..workspace.workspace import ChunkNotFound, WorkspaceBusy, WorkspaceError

    try:
        code = args.handler(args) or 0
        sys.stdout.flush()  # a closed pipe shows here, where it can be handled
        return code
    except BrokenPipeError:
        _quiet_stdout()
        return BROKEN_PIPE_EXIT
    except EntityNotFound as exc:
        hint = f"; did you mean: {', '.join(exc.suggestions)}?" if exc.suggestions else ""
        _say_error(f"unknown entity {exc.name!r}{hint}")
        return 2
    except (ChunkNotFound, WorkspaceError) as exc:
        _say_error(exc)
        return 2
    except sqlite3.DatabaseError as exc:  # a full disk, or damage found after the workspace opened
        message, damaged = database_error_message(Path(args.workspace) / RECORD_FILE, exc)
        if damaged:
            message += "; it fails its integrity check: restore it from a backup or ingest again into a new --workspace"
        _say_error(f"workspace {args.workspace}: {message}")
        return 2
    except NeedsRepair as exc:
        _say_error(exc)
        return 1
    except CommandError as exc:
        _say_error(exc)
        return exc.code
    except (SettingsError, WorkspaceBusy, LoadError, VectorStoreUnavailable, LLMError, StepFailed) as exc:
        _say_error(exc)
        return 1
    except KeyboardInterrupt:
        print("interrupted; the workspace keeps every document written before the interrupt, and the next ingest "
              "reuses the vectors computed so far", file=sys.stderr)
        return 130
