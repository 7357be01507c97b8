"""The command line: ``python -m workbench [--workspace DIR] COMMAND [--json]``.

Each module of this package registers its commands on the shared parser; every command
prints a table for people and, with ``--json``, one JSON document for scripts. Expected
failures (unknown entity, busy workspace, bad settings or input, an unreachable language
model) print one clear line and exit non-zero; they never show a traceback.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Callable, Sequence

__all__ = ["main", "build_parser", "CommandError", "emit"]



class CommandError(Exception):
    """An expected failure: printed as one line, exits with ``code``."""

    def __init__(self, message: str, code: int = 1):
        super().__init__(message)
        self.code = code


def emit(args, payload, render: Callable[[object], str]) -> None:
    """Print ``payload`` as JSON with ``--json``, else as ``render(payload)``."""
    if getattr(args, "json", False):
        print(json.dumps(payload, indent=2, ensure_ascii=False, default=str))
    else:
        print(render(payload))


def _common() -> argparse.ArgumentParser:
    common = argparse.ArgumentParser(add_help=False)
    # SUPPRESS keeps a value given before the command from being reset by the subparser.
    common.add_argument("--workspace", type=Path, default=argparse.SUPPRESS,
                        help="workspace folder (default: ./workspace)")
    common.add_argument("--settings", type=Path, default=argparse.SUPPRESS,
                        help="settings YAML (default: the project's settings.yaml)")
    common.add_argument("--json", action="store_true", default=argparse.SUPPRESS, help="print JSON")
    return common


def build_parser() -> argparse.ArgumentParser:
    # Imported here: each command module imports CommandError and emit from this one.
    from . import benchmarks, core, evaluation, retrieval, serve

    common = _common()
    parser = argparse.ArgumentParser(prog="python -m workbench", parents=[common],
                                     description="Context Graph Workbench: a cited context graph beside a vector store.")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for module in (core, retrieval, evaluation, benchmarks, serve):  # each adds its commands, in help order
        module.register(subparsers, common)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    from ..graph import EntityNotFound
    from ..loaders import LoadError
    from ..settings import SettingsError
    from ..extract.llm import LLMError
    from ..vectors import VectorStoreUnavailable
    from ..workspace import ChunkNotFound, WorkspaceBusy

    parser = build_parser()
    args = parser.parse_args(argv)
    for attr, default in (("workspace", Path("workspace")), ("settings", None), ("json", False)):
        if not hasattr(args, attr):
            setattr(args, attr, default)
    try:
        return args.handler(args) or 0
    except EntityNotFound as exc:
        hint = f"; did you mean: {', '.join(exc.suggestions)}?" if exc.suggestions else ""
        print(f"error: unknown entity {exc.name!r}{hint}", file=sys.stderr)
        return 2
    except ChunkNotFound as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except CommandError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return exc.code
    except (SettingsError, WorkspaceBusy, LoadError, VectorStoreUnavailable, LLMError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("interrupted; the workspace keeps every document written before the interrupt", file=sys.stderr)
        return 130
