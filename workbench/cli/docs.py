"""The ``docs`` command: write the documentation's generated parts from the code and the results
data, or check them: the reference pages, and the benchmark tables of the README and the docs."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from pathlib import Path

from .render import CommandError

__all__ = ["register", "reference_pages", "CHECKOUT", "REFERENCE_DIR"]

#: The checkout of the project this package sits in.
CHECKOUT = Path(__file__).resolve().parents[2]
#: Where the reference pages live in a checkout of the project.
REFERENCE_DIR = CHECKOUT / "docs" / "reference"


def reference_pages(build_parser: Callable[..., argparse.ArgumentParser]) -> dict[str, str]:
    """File name under ``docs/reference/`` -> its text, as the code gives it now; ``build_parser``
    is :func:`workbench.cli.build_parser`."""
    from ..views.reference_pages import cli_reference, settings_reference

    return {"cli.md": cli_reference(build_parser(prog="python -m workbench")), "settings.md": settings_reference()}


def _results_pages() -> dict[Path, str]:
    """The pages with benchmark tables (README.md, docs/benchmarks.md) -> their text with every
    table written from docs/results/."""
    from ..views.results_tables import ResultsError, refreshed_files

    try:
        return refreshed_files(CHECKOUT)
    except ResultsError as exc:
        raise CommandError(f"the benchmark tables cannot be written: {exc}") from exc


def cmd_docs(args) -> int:
    folder = args.out if args.out is not None else REFERENCE_DIR
    if args.out is None and not folder.parent.is_dir():
        raise CommandError(f"no docs/ folder at {folder.parent}: run this from a checkout of the project, or give --out DIR")
    pages = {folder / name: text for name, text in reference_pages(args.build_parser).items()}
    # The tables live in the checkout's own pages; --out is for the reference pages alone.
    tables = _results_pages() if args.out is None else {}
    stale = [path for path, text in {**pages, **tables}.items()
             if not path.is_file() or path.read_text(encoding="utf-8") != text]
    if args.check:
        for path in stale:
            print(f"{path} is stale: run python -m workbench docs")
        return 1 if stale else 0
    folder.mkdir(parents=True, exist_ok=True)
    for path in stale:
        path.write_text({**pages, **tables}[path], encoding="utf-8")
    written = sum(path in pages for path in stale)
    print(f"{written} of {len(pages)} reference pages written under {folder}" if written
          else f"the {len(pages)} reference pages under {folder} are current")
    if tables:
        refreshed = [path.name for path in stale if path in tables]
        print(f"benchmark tables written from docs/results/ into {', '.join(refreshed)}" if refreshed
              else f"the benchmark tables in {', '.join(path.name for path in tables)} are current")
    return 0


def register(subparsers, common) -> None:
    p = subparsers.add_parser("docs", parents=[common],
                              help="write the documentation's reference pages (commands, settings) from the code, "
                                   "and the benchmark tables of README.md and docs/benchmarks.md from docs/results/")
    p.add_argument("--check", action="store_true", help="write nothing; exit 1 naming each page that is stale")
    p.add_argument("--out", type=Path, default=None,
                   help="folder of the reference pages (default: docs/reference/ of the checkout); "
                        "with it, the benchmark tables are left alone")
    p.set_defaults(handler=cmd_docs)
