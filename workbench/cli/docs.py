"""The ``docs`` command: write the documentation's reference pages from the code, or check them."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from pathlib import Path

from .render import CommandError

__all__ = ["register", "reference_pages", "REFERENCE_DIR"]

#: Where the reference pages live in a checkout of the project.
REFERENCE_DIR = Path(__file__).resolve().parents[2] / "docs" / "reference"


def reference_pages(build_parser: Callable[..., argparse.ArgumentParser]) -> dict[str, str]:
    """File name under ``docs/reference/`` -> its text, as the code gives it now; ``build_parser``
    is :func:`workbench.cli.build_parser`."""
    from ..views.reference_pages import cli_reference, settings_reference

    return {"cli.md": cli_reference(build_parser(prog="python -m workbench")), "settings.md": settings_reference()}


def cmd_docs(args) -> int:
    folder = args.out if args.out is not None else REFERENCE_DIR
    if args.out is None and not folder.parent.is_dir():
        raise CommandError(f"no docs/ folder at {folder.parent}: run this from a checkout of the project, or give --out DIR")
    pages = reference_pages(args.build_parser)
    stale = [name for name, text in pages.items()
             if not (folder / name).is_file() or (folder / name).read_text(encoding="utf-8") != text]
    if args.check:
        for name in stale:
            print(f"{folder / name} is stale: run python -m workbench docs")
        return 1 if stale else 0
    folder.mkdir(parents=True, exist_ok=True)
    for name in stale:
        (folder / name).write_text(pages[name], encoding="utf-8")
    print(f"{len(stale)} of {len(pages)} reference pages written under {folder}" if stale
          else f"the {len(pages)} reference pages under {folder} are current")
    return 0


def register(subparsers, common) -> None:
    p = subparsers.add_parser("docs", parents=[common],
                              help="write the documentation's reference pages (commands, settings) from the code")
    p.add_argument("--check", action="store_true", help="write nothing; exit 1 naming each page that is stale")
    p.add_argument("--out", type=Path, default=None, help="folder of the pages (default: docs/reference/ of the checkout)")
    p.set_defaults(handler=cmd_docs)
