"""Small helpers the notebooks share: where their data lives, and a few displays.

The notebooks in ``notebooks/`` hold no logic of their own; what they need beyond the core's
public functions and the other views is here: the folder a notebook keeps its workspace in,
the benchmark data folder, a pyvis page shown inline, a small subset of a multi-hop
benchmark, and the benchmark's recall table and chart. (The side-by-side table of several
retrieval results is :func:`workbench.views.retrieval.side_by_side`.)
"""

from __future__ import annotations

import html
import os
import random
from dataclasses import replace
from pathlib import Path

import pandas as pd

__all__ = [
    "WORKSPACES_ENV",
    "BENCH_ENV",
    "REPO_ROOT",
    "notebook_workspace",
    "bench_data_dir",
    "inline_html",
    "bench_subset",
    "recall_frame",
    "recall_bars",
]

#: Environment variable naming the folder that holds the notebooks' workspaces (tests set it).
WORKSPACES_ENV = "WORKBENCH_NOTEBOOK_WORKSPACES"
#: Environment variable naming the multi-hop benchmark folder (default ``../shared/bench``).
BENCH_ENV = "WORKBENCH_BENCH_DATA"
REPO_ROOT = Path(__file__).resolve().parents[2]


def notebook_workspace(name: str) -> Path:
    """The folder for workspace ``name``: under ``$WORKBENCH_NOTEBOOK_WORKSPACES`` if set, else
    ``notebooks/.workspaces/``. Notebooks that use the same name share one workspace, so a
    corpus is embedded once.

    >>> notebook_workspace("sample").name
    'sample'
    """
    base = os.environ.get(WORKSPACES_ENV) or REPO_ROOT / "notebooks" / ".workspaces"
    return Path(base) / name


def bench_data_dir() -> Path:
    """The multi-hop benchmark folder: ``$WORKBENCH_BENCH_DATA``, else ``shared/bench`` beside the
    repository (``../shared/bench``)."""
    return Path(os.environ.get(BENCH_ENV) or REPO_ROOT.parent / "shared" / "bench")


def inline_html(page: str, height: int = 620):
    """Show a whole HTML page (a pyvis graph, say) inside a notebook, in a sandboxed iframe.

    The page goes into ``srcdoc`` so it keeps its own scripts and styles and needs no file or
    server; nothing is loaded from the network when the page is self-contained.
    """
    from IPython.display import HTML  # imported here: only notebooks have IPython

    # Wrapped in a div: IPython warns about a bare <iframe> and suggests IFrame, which needs a URL.
    return HTML(f'<div><iframe srcdoc="{html.escape(page, quote=True)}" width="100%" height="{height}" '
                'style="border:none" sandbox="allow-scripts"></iframe></div>')


def bench_subset(bench, distractors: int = 60, seed: int = 0):
    """A smaller benchmark: its questions' gold passages plus ``distractors`` other passages
    drawn at random (seeded), in corpus order. Keep the questions down first with
    ``load_bench(folder, limit=N)``.

    Recall on a subset is higher than on the whole corpus (fewer passages compete): compare the
    modes with each other, not with the reference figures.

    >>> from workbench.bench.multihop import BenchSet, Question
    >>> full = BenchSet("t", Path("corpus.jsonl"), [{"id": f"p{i}", "text": "x"} for i in range(10)],
    ...                 [Question("q1", "?", ("p3", "p7"))])
    >>> small = bench_subset(full, distractors=2, seed=1)
    >>> len(small.passages), {"p3", "p7"} <= {p["id"] for p in small.passages}
    (4, True)
    """
    gold = {g for q in bench.questions for g in q.gold_ids}
    others = [str(p["id"]) for p in bench.passages if str(p["id"]) not in gold]
    keep = gold | set(random.Random(seed).sample(others, min(distractors, len(others))))
    return replace(bench, passages=[p for p in bench.passages if str(p["id"]) in keep])


def recall_frame(report) -> pd.DataFrame:
    """One row per mode of a :class:`~workbench.bench.multihop.MultihopReport`: R@2, R@5 (percent),
    seconds and the modes actually used."""
    rows = [{"mode": s.mode, "R@2": round(s.recall_at_2, 1), "R@5": round(s.recall_at_5, 1),
             "seconds": round(s.seconds, 2), "used": ", ".join(f"{m} x{n}" for m, n in s.modes_used.items())}
            for s in report.results.values()]
    return pd.DataFrame(rows, columns=["mode", "R@2", "R@5", "seconds", "used"])


def recall_bars(report):
    """A plotly bar chart of R@2 and R@5 per mode (the ablation chart)."""
    import plotly.graph_objects as go

    frame = recall_frame(report)
    fig = go.Figure([go.Bar(x=frame["mode"], y=frame[col], name=col, text=frame[col], textposition="outside")
                     for col in ("R@2", "R@5")])
    fig.update_layout(title=f"{report.dataset}: recall per mode ({report.questions} questions, "
                            f"{report.passages} passages)", barmode="group", xaxis_title="mode",
                      yaxis_title="recall (%)", yaxis_range=[0, 105])
    return fig
