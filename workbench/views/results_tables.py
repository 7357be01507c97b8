"""The benchmark tables of the README and the docs, written from the runs' JSON.

``docs/results/`` keeps the JSON each published ``bench multihop`` run printed, a folder per run;
``docs/results/index.yaml`` says which run feeds which table (with the run's commit, time and
CPU, which the JSON does not carry) and how its rows are labelled; ``docs/results/published.yaml``
holds the papers' figures shown beside ours, marked as published. :func:`results_tables` renders
each table as Markdown, and :func:`fill_regions` puts it between ``<!-- results:NAME -->`` and
``<!-- /results:NAME -->`` in a page, so no figure is typed by hand. ``python -m workbench docs``
writes them, and ``tests/test_docs.py`` fails when a page's table is not what the JSON gives.

Examples
--------
>>> page = "Intro\\n<!-- results:demo -->\\nold\\n<!-- /results:demo -->\\nEnd\\n"
>>> print(fill_regions(page, {"demo": "| a |\\n|---|\\n| 1 |"}), end="")
Intro
<!-- results:demo -->
<BLANKLINE>
| a |
|---|
| 1 |
<BLANKLINE>
<!-- /results:demo -->
End
"""

from __future__ import annotations

import json
import re
import textwrap
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..text.safe_yaml import load as load_yaml

__all__ = ["RESULTS_DIR", "TABLE_FILES", "ResultsError", "Run", "results_tables", "fill_regions", "refreshed_files"]

#: The results folder of a checkout of the project.
RESULTS_DIR = Path(__file__).resolve().parents[2] / "docs" / "results"
#: The pages of a checkout that show results tables, relative to its root.
TABLE_FILES = ("README.md", "docs/benchmarks.md")
#: A cell with no figure (a set the run or the paper did not score).
MISSING = "–"

_REGION = re.compile(r"<!-- results:(?P<name>[\w-]+) -->\n.*?<!-- /results:(?P=name) -->", re.DOTALL)
_OPENING = re.compile(r"<!-- results:([\w-]+) -->")


class ResultsError(ValueError):
    """An index, a run's JSON or a marked region that cannot give a table; the message names
    the file and what to change."""


@dataclass(frozen=True)
class Run:
    """One published run, as ``index.yaml`` states it."""

    name: str
    """Its folder under ``docs/results/``."""
    commit: str
    """The commit it ran on."""
    time: str
    """When it ran (UTC)."""
    cpu: str
    """The machine it ran on."""
    embedder: str
    """The embedding model and backend, in words."""
    note: str = ""
    """What a reader must know to compare it with another run (empty when nothing)."""

    def caption(self) -> str:
        note = f", {self.note}" if self.note else ""
        return (f"One run per set on {self.commit} ({self.time}, {self.cpu}), {self.embedder}{note}; "
                f"the runs' JSON is in `docs/results/{self.name}/`.")


def _read_yaml(path: Path) -> dict[str, Any]:
    try:
        data = load_yaml(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ResultsError(f"{path}: {exc}") from exc
    if not isinstance(data, dict):
        raise ResultsError(f"{path}: expected a mapping at the top")
    return data


def _field(mapping: Mapping[str, Any], key: str, where: str) -> Any:
    if key not in mapping:
        raise ResultsError(f"{where} has no {key!r}")
    return mapping[key]


def _run(index: Mapping[str, Any], name: str, where: Path) -> Run:
    runs = _field(index, "runs", str(where))
    spec = _field(runs, name, f"{where}, runs")
    return Run(name=name, note=str(spec.get("note") or ""),
               **{key: str(_field(spec, key, f"{where}, run {name}")) for key in ("commit", "time", "cpu", "embedder")})


def _scores(path: Path, set_name: str, rows_from: str) -> dict[str, tuple[float, float]]:
    """Row name -> (R@2, R@5) of one set's JSON."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ResultsError(f"{path}: {exc}") from exc
    if data.get("dataset") != set_name:
        raise ResultsError(f"{path} is the JSON of set {data.get('dataset')!r}, not {set_name!r}")
    rows = _field(data, rows_from, str(path))
    return {name: (float(_field(row, "recall@2", f"{path}, {name}")), float(_field(row, "recall@5", f"{path}, {name}")))
            for name, row in rows.items()}


def _figure(value: float, bold: bool = False) -> str:
    text = f"{value:.1f}"
    return f"**{text}**" if bold else text


def _table(name: str, spec: Mapping[str, Any], index: Mapping[str, Any], published: Mapping[str, Any],
           folder: Path) -> str:
    where = f"{folder / 'index.yaml'}, table {name}"
    sets = _field(index, "sets", str(folder / "index.yaml"))
    run = _run(index, str(_field(spec, "run", where)), folder / "index.yaml")
    labels: Mapping[str, str] = _field(spec, "rows", where)
    bold = spec.get("bold")
    scores = {}
    for one in sets:
        path = folder / run.name / str(_field(spec, "file", where)).format(set=one["name"])
        scores[one["name"]] = _scores(path, one["name"], str(_field(spec, "rows_from", where)))
        unlabelled = sorted(set(scores[one["name"]]) - set(labels))
        if unlabelled:
            raise ResultsError(f"{path} has rows {unlabelled} that {where} does not label: add them under its rows")

    lines = [f"| {_field(spec, 'first_column', where)} | "
             + " | ".join(f"{one['title']} R@2 | R@5" for one in sets) + " |",
             "|---|" + "---|---|" * len(sets)]
    for row, label in labels.items():
        strong = row == bold
        cells = []
        for one in sets:
            pair = scores[one["name"]].get(row)
            cells += [_figure(v, strong) for v in pair] if pair else [MISSING, MISSING]
        lines.append(f"| {f'**{label}**' if strong else label} | " + " | ".join(cells) + " |")
    for row in spec.get("published") or []:
        systems = [_field(published, s, f"{folder / 'published.yaml'}, systems") for s in row["systems"]]
        cells = []
        for one in sets:
            for at in (0, 1):
                figures = [_figure(s[one["name"]][at]) if one["name"] in s else MISSING for s in systems]
                cells.append(MISSING if all(f == MISSING for f in figures) else " / ".join(figures))
        lines.append(f"| *{row.get('prefix', 'published')}:* {' / '.join(row['systems'])} | " + " | ".join(cells) + " |")

    caption = run.caption()
    if spec.get("published"):
        caption += (" Rows marked *published* are the papers' figures (`docs/results/published.yaml`), "
                    "not runs of ours.")
    # Wrapped like the prose around it, so a diff of a new run shows the words that changed.
    return textwrap.fill(caption, width=100, break_on_hyphens=False, break_long_words=False) + "\n\n" + "\n".join(lines)


def results_tables(folder: Path = RESULTS_DIR) -> dict[str, str]:
    """Table name -> its Markdown (a caption naming the run, then the table), from
    ``folder/index.yaml``, the run folders it names and ``folder/published.yaml``.

    Raises
    ------
    ResultsError
        A file missing or malformed, a JSON row the index does not label, a system the index
        names that ``published.yaml`` lacks.
    """
    index = _read_yaml(folder / "index.yaml")
    published = _field(_read_yaml(folder / "published.yaml"), "systems", str(folder / "published.yaml"))
    tables = _field(index, "tables", str(folder / "index.yaml"))
    return {name: _table(name, spec, index, published, folder) for name, spec in tables.items()}


def fill_regions(text: str, tables: Mapping[str, str], where: str = "the page") -> str:
    """``text`` with each region ``<!-- results:NAME -->`` ... ``<!-- /results:NAME -->`` holding
    ``tables[NAME]`` (a blank line on each side, so Markdown reads it as a table).

    Raises
    ------
    ResultsError
        A region names a table that ``tables`` lacks, or is not closed.
    """
    opened = _OPENING.findall(text)
    filled = _REGION.findall(text)
    if len(opened) != len(filled):
        raise ResultsError(f"{where}: a <!-- results:NAME --> region is not closed by <!-- /results:NAME -->")
    unknown = sorted(set(filled) - set(tables))
    if unknown:
        raise ResultsError(f"{where} has regions for tables {unknown}; docs/results/index.yaml names {sorted(tables)}")
    return _REGION.sub(lambda m: f"<!-- results:{m['name']} -->\n\n{tables[m['name']]}\n\n<!-- /results:{m['name']} -->",
                       text)


def refreshed_files(root: Path, folder: Path | None = None) -> dict[Path, str]:
    """Each page of :data:`TABLE_FILES` under the checkout ``root`` -> its text with every results
    region filled from ``folder`` (default ``root/docs/results``)."""
    tables = results_tables(folder if folder is not None else root / "docs" / "results")
    pages = {}
    for name in TABLE_FILES:
        path = root / name
        try:
            text = path.read_text(encoding="utf-8")
        except OSError as exc:
            raise ResultsError(f"{path}: {exc}") from exc
        pages[path] = fill_regions(text, tables, where=str(path))
    return pages
