"""An evaluation run as one self-contained HTML file a reviewer opens without the app: the
summary, highlights and cases tables the Evaluate page shows, its three charts drawn by plotly.js
inlined in the file (no network), and the settings and code version the run was made with.

Examples
--------
>>> offline_check("<script src='https://cdn.plot.ly/x.js'></script><script>var a = 1;</script>")
["<script src='https://cdn.plot.ly/x.js'>"]
"""

from __future__ import annotations

import html
import json
import subprocess
from pathlib import Path

import pandas as pd

from ..evaluate.report import answer_summary_frame, cases_frame, highlights
from ..evaluate.runner import EvalRun
from .eval_charts import run_charts
from .eval_tables import deltas_table, summary_table

__all__ = ["run_html", "export_html", "code_version", "offline_check"]

_STYLE = """
body { font: 14px/1.45 system-ui, sans-serif; margin: 24px 32px; color: #222; }
h1 { font-size: 22px; } h2 { font-size: 17px; margin-top: 28px; }
table { border-collapse: collapse; margin: 8px 0; font-size: 13px; }
th, td { border: 1px solid #ddd; padding: 3px 8px; text-align: left; vertical-align: top; }
th { background: #f4f4f4; } td.n { text-align: right; font-variant-numeric: tabular-nums; }
.wrap { overflow-x: auto; } pre { background: #f7f7f7; padding: 8px; overflow-x: auto; font-size: 12px; }
"""


def code_version(root: Path | None = None) -> str:
    """The commit the code was checked out at (``git rev-parse``), or ``unknown`` outside a
    checkout; a working tree with changes is marked ``+changes``."""
    root = root or Path(__file__).resolve().parents[2]
    try:
        commit = subprocess.run(["git", "rev-parse", "HEAD"], cwd=root, capture_output=True, text=True,
                                timeout=10, check=True).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=root,
                               capture_output=True, text=True, timeout=10).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return "unknown"
    return commit + (" +changes" if dirty else "") if commit else "unknown"


def _table(frame: pd.DataFrame) -> str:
    """A data frame as an HTML table, every cell escaped, numbers with two decimals."""
    head = "".join(f"<th>{html.escape(str(c))}</th>" for c in frame.columns)
    rows = []
    for record in frame.itertuples(index=False):
        cells = []
        for value in record:
            if isinstance(value, float):
                cells.append(f'<td class="n">{value:.2f}</td>' if value == value else '<td class="n">n/a</td>')
            elif isinstance(value, int) and not isinstance(value, bool):
                cells.append(f'<td class="n">{value}</td>')
            elif isinstance(value, (list, tuple)):
                cells.append(f"<td>{html.escape(', '.join(map(str, value)))}</td>")
            else:
                cells.append(f"<td>{html.escape(str(value))}</td>")
        rows.append("<tr>" + "".join(cells) + "</tr>")
    return f'<div class="wrap"><table><thead><tr>{head}</tr></thead><tbody>{"".join(rows)}</tbody></table></div>'


def run_html(run: EvalRun, metric: str = "recall", version: str | None = None) -> str:
    """The whole report of ``run`` as one HTML page (see the module); ``version`` defaults to
    :func:`code_version`."""
    charts = run_charts(run, metric)
    drawn = [figure.to_html(full_html=False, include_plotlyjs=(i == 0), div_id=f"chart-{name}",
                            config={"displaylogo": False})
             for i, (name, figure) in enumerate(charts.items())]
    answers = answer_summary_frame(run)
    version = code_version() if version is None else version
    parts = [
        f"<h1>Evaluation run {html.escape(run.run_id)}</h1>",
        "<p>" + html.escape(f"Created {run.created} · task file {run.task_file} · k = {run.k} · direct strategy "
                            f"{run.direct} · {len(run.task_ids)} tasks × {len(run.strategies)} strategies"
                            + (f" · took {run.seconds:.0f} s" if run.seconds else "")) + "</p>",
        f"<p>Code: <code>{html.escape(version)}</code></p>",
        "<h2>Summary</h2>", _table(summary_table(run)), "<h3>Δ of every metric</h3>", _table(deltas_table(run)),
        "<ul>" + "".join(f"<li>{html.escape(line)}</li>" for line in highlights(run)) + "</ul>",
        f"<h2>Charts ({html.escape(metric)})</h2>", *drawn,
        "<h2>Cases</h2>", _table(cases_frame(run)),
    ]
    if not answers.empty:
        parts += [f"<h2>Answer stage ({html.escape(run.answer_model)})</h2>", _table(answers)]
    parts += ["<h2>Settings</h2>",
              f"<pre>{html.escape(json.dumps(run.settings, indent=1, sort_keys=True, default=str))}</pre>"]
    title = html.escape(f"Evaluation run {run.run_id}")
    return (f'<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8"><title>{title}</title>'
            f"<style>{_STYLE}</style></head><body>\n" + "\n".join(parts) + "\n</body></html>\n")


def export_html(run: EvalRun, path: str | Path, metric: str = "recall") -> Path:
    """Write :func:`run_html` to ``path``; returns the path."""
    path = Path(path)
    path.write_text(run_html(run, metric), encoding="utf-8")
    return path


def offline_check(page: str) -> list[str]:
    """The tags of ``page`` that would fetch from the network (empty for a self-contained page)."""
    import re

    return re.findall(r"<(?:script|link|img|iframe)\b[^>]*(?:src|href)\s*=\s*[\"']?(?:https?:)?//[^>]*>", page,
                      flags=re.IGNORECASE)
