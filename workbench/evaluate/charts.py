"""Plotly figures of an evaluation run, for the app and the notebooks.

Examples
--------
>>> import pandas as pd
>>> summary = pd.DataFrame({"strategy": ["vector", "expand"], "recall": [0.5, 0.7],
...                         "d_recall": [0.0, 0.2], "d_recall_low": [0.0, 0.1], "d_recall_high": [0.0, 0.3],
...                         "tokens": [300.0, 500.0]})
>>> fig = metric_bars(summary, "recall")
>>> [bar.x[1] for bar in fig.data]
['expand']
"""

from __future__ import annotations

import plotly.graph_objects as go

from .report import paired_deltas, summary_frame
from .runner import EvalRun

__all__ = ["metric_bars", "case_deltas", "cost_vs_recall", "run_charts"]


def metric_bars(summary, metric: str = "recall") -> go.Figure:
    """Mean ``metric`` per strategy; error bars show the bootstrap CI of its delta against direct,
    placed around the strategy's mean."""
    mean = summary[metric].to_numpy(dtype=float)
    delta = summary.get(f"d_{metric}")
    error = None
    if delta is not None:
        up = (summary[f"d_{metric}_high"] - delta).to_numpy(dtype=float)
        down = (delta - summary[f"d_{metric}_low"]).to_numpy(dtype=float)
        error = dict(type="data", array=up, arrayminus=down, visible=True)
    fig = go.Figure(go.Bar(x=list(summary["strategy"]), y=mean, error_y=error, name=metric))
    fig.update_layout(title=f"Mean {metric} per strategy (error bars: 95% CI of the paired delta vs direct)",
                      xaxis_title="strategy", yaxis_title=metric, yaxis_range=[0, 1.05])
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
    return {"bars": metric_bars(summary, metric), "deltas": case_deltas(run, metric),
            "cost": cost_vs_recall(summary, metric)}
