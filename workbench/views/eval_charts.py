"""Plotly figures of an evaluation run, for the app and the notebooks.

Examples
--------
>>> import pandas as pd
>>> summary = pd.DataFrame({"strategy": ["vector", "expand"], "recall": [0.5, 0.7],
...                         "d_recall": [0.0, 0.2], "d_recall_low": [0.0, 0.1], "d_recall_high": [0.0, 0.3],
...                         "tokens": [300.0, 500.0]})
>>> fig = metric_bars(summary, "recall")
>>> list(fig.data[0].x), [round(float(y), 2) for y in fig.data[0].y], [round(float(e), 2) for e in fig.data[0].error_y.array]
(['vector', 'expand'], [0.0, 0.2], [0.0, 0.1])
"""

from __future__ import annotations

import plotly.graph_objects as go

from ..evaluate.report import paired_deltas, summary_frame
from ..evaluate.runner import EvalRun

__all__ = ["metric_bars", "case_deltas", "cost_vs_recall", "run_charts"]


def metric_bars(summary, metric: str = "recall", direct: str | None = None) -> go.Figure:
    """Per strategy, the mean paired difference of ``metric`` against the direct strategy, with
    its 95% bootstrap CI as error bars (the interval is of the difference, so the bar is the
    difference too; the direct strategy sits at 0)."""
    delta = summary[f"d_{metric}"].to_numpy(dtype=float)
    up = (summary[f"d_{metric}_high"] - summary[f"d_{metric}"]).to_numpy(dtype=float)
    down = (summary[f"d_{metric}"] - summary[f"d_{metric}_low"]).to_numpy(dtype=float)
    error = dict(type="data", array=up, arrayminus=down, visible=True)
    fig = go.Figure(go.Bar(x=list(summary["strategy"]), y=delta, error_y=error, name=f"Δ {metric}",
                           marker_color=["#59a14f" if d > 0 else "#e15759" if d < 0 else "#bab0ac" for d in delta]))
    against = f" vs {direct}" if direct else " vs direct"
    fig.update_layout(title=f"Δ {metric}{against} per strategy (error bars: 95% CI of the paired difference)",
                      xaxis_title="strategy", yaxis_title=f"Δ {metric}", yaxis_zeroline=True)
    return fig


def case_deltas(run: EvalRun, metric: str = "recall") -> go.Figure:
    """Per task, ``metric(strategy) - metric(direct)`` for every non-direct strategy."""
    fig = go.Figure()
    for strategy in run.strategies:
        if strategy == run.direct:
            continue
        deltas = paired_deltas(run, strategy, metric)
        fig.add_trace(go.Bar(x=list(deltas.index), y=deltas.to_numpy(dtype=float), name=strategy))
    fig.update_layout(title=f"{metric} per task: strategy minus {run.direct}", barmode="group",
                      xaxis_title="task", yaxis_title=f"delta {metric}")
    return fig


def cost_vs_recall(summary, metric: str = "recall") -> go.Figure:
    """Mean reading cost (estimated tokens) against mean ``metric``, one point per strategy."""
    fig = go.Figure(go.Scatter(x=summary["tokens"].to_numpy(dtype=float), y=summary[metric].to_numpy(dtype=float),
                               mode="markers+text", text=list(summary["strategy"]), textposition="top center"))
    fig.update_layout(title=f"Reading cost vs {metric}", xaxis_title="tokens read per task (chars / 4)",
                      yaxis_title=metric)
    return fig


def run_charts(run: EvalRun, metric: str = "recall") -> dict[str, go.Figure]:
    """The three charts of a run, by name."""
    summary = summary_frame(run)
    return {"bars": metric_bars(summary, metric, run.direct), "deltas": case_deltas(run, metric),
            "cost": cost_vs_recall(summary, metric)}
