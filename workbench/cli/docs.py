"""The documentation's generated parts: ``docs`` writes the reference pages from the code and the
benchmark tables of the README and the docs from the results data (or checks them); ``notebooks``
executes the notebooks and writes them with their outputs."""

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


def cmd_notebooks(args) -> int:
    try:
        import kaleido  # noqa: F401  (draws each plotly figure's PNG)
        import nbclient  # noqa: F401
    except ImportError as exc:
        raise CommandError(f"{exc.name} is missing: it comes with requirements-dev.txt "
                           "(.venv/bin/pip install -r requirements-dev.txt)") from exc
    from ..views.notebook_run import NOTEBOOKS_DIR, NotebookFailed, NotebookUnfit, notebook_names, regenerate

    known = notebook_names()
    unknown = [name for name in args.names if name not in known]
    if unknown:
        raise CommandError(f"no notebook {', '.join(unknown)} in {NOTEBOOKS_DIR}; there are: {', '.join(known)}")
    try:
        for written in regenerate(args.names or None):
            print(written.describe(), flush=True)
    except NotebookFailed as exc:
        raise CommandError(f"{exc}; it is left as it was (open it in Jupyter to see the traceback)") from exc
    except NotebookUnfit as exc:
        raise CommandError(f"{exc}; it is left as it was") from exc
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

    p = subparsers.add_parser("notebooks", parents=[common],
                              help="execute the notebooks in place, with fresh workspaces and the benchmark slices of "
                                   "tests/data/bench, and write them with their outputs (plotly figures with a PNG)")
    p.add_argument("names", nargs="*", metavar="NAME",
                   help="the notebooks to run, e.g. 01_quickstart (default: all, in order; 02 and 03 reopen 01's workspace)")
    p.set_defaults(handler=cmd_notebooks)
