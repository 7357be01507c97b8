"""An evaluation run for people: its tables with each paired difference written with its
confidence interval, the saved runs, and a run's progress and estimated time.

The numbers are :mod:`workbench.evaluate.report`'s; these only shape them for reading (the app's
Evaluate page and the notebooks).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pandas as pd

from ..evaluate.report import compare_runs, summary_frame
from ..evaluate.runner import EvalRun

__all__ = ["SUMMARY_HEADERS", "ci_text", "comparison_table", "deltas_table", "estimate_seconds", "progress_text", "runs_frame",
           "summary_table"]


def ci_text(mean: float, low: float, high: float, digits: int = 2) -> str:
    """A paired difference with its confidence interval, signed: ``+0.04 [-0.02, 0.10]``.

    Examples
    --------
    >>> ci_text(0.04, -0.02, 0.1)
    '+0.04 [-0.02, 0.10]'
    >>> ci_text(0.0, -0.0001, 0.0), ci_text(float("nan"), 0, 0)
    ('+0.00 [0.00, 0.00]', 'n/a')
    """
    values = [float(v) for v in (mean, low, high)]
    if any(v != v for v in values):  # NaN: no shared tasks
        return "n/a"
    mean, low, high = (0.0 if abs(v) < 0.5 * 10 ** -digits else v for v in values)  # never "-0.00"
    return f"{mean:+.{digits}f} [{low:.{digits}f}, {high:.{digits}f}]"


def _readable(frame: pd.DataFrame, metrics: Sequence[str], label: str) -> pd.DataFrame:
    out = frame.copy()
    for m in metrics:
        if f"d_{m}" in out:
            at = list(out.columns).index(f"d_{m}")
            texts = [ci_text(a, b, c) for a, b, c in zip(out[f"d_{m}"], out[f"d_{m}_low"], out[f"d_{m}_high"])]
            out = out.drop(columns=[f"d_{m}", f"d_{m}_low", f"d_{m}_high"])
            out.insert(at, f"{label} {m} [95% CI]", texts)  # where the raw columns were
    return out


#: The summary's columns as the page heads them, short enough that the table fits a laptop's
#: page (a column's header is as wide as its longest word allows): raw name -> header.
SUMMARY_HEADERS = {"found_beyond_direct": "beyond direct", "added_irrelevant": "not gold", "tokens": "tokens",
                   "latency_ms": "ms"}


def summary_table(run: EvalRun, metrics: Sequence[str] = ("recall", "ndcg", "mrr"), headline: str = "recall") -> pd.DataFrame:
    """:func:`summary_frame` for reading, narrow enough not to scroll sideways: each strategy's
    mean ``metrics``, the paired delta of the ``headline`` metric against direct as one column
    ``Δ recall [95% CI]`` holding ``+0.04 [-0.02, 0.10]`` and its ``recall W/T/L``, the documents
    found beyond direct and added that are not gold, tokens and milliseconds. The deltas of every
    metric are :func:`deltas_table`'s."""
    frame = summary_frame(run, [headline])
    keep = ["strategy", *metrics, f"d_{headline}", f"d_{headline}_low", f"d_{headline}_high", f"{headline}_w/t/l",
            "found_beyond_direct", "added_irrelevant", "tokens", "latency_ms"]
    frame = frame[[c for c in keep if c in frame]].copy()
    for column in (*metrics, "tokens", "latency_ms"):
        if column in frame:
            frame[column] = frame[column].astype(float).round(3 if column in metrics else 0)
    frame = _readable(frame, [headline], "Δ")
    return frame.rename(columns={f"{headline}_w/t/l": f"{headline} W/T/L", **SUMMARY_HEADERS})


def deltas_table(run: EvalRun, metrics: Sequence[str] = ("recall", "ndcg", "mrr")) -> pd.DataFrame:
    """Each strategy's paired delta against direct of each of ``metrics``, a row a strategy and
    metric (``Δ [95% CI]``, ``W/T/L``), so the table stays narrow whatever the metrics."""
    frame = summary_frame(run, metrics)
    rows = [{"strategy": row["strategy"], "metric": m, "mean": round(float(row[m]), 3),
             "Δ [95% CI]": ci_text(row[f"d_{m}"], row[f"d_{m}_low"], row[f"d_{m}_high"]), "W/T/L": row[f"{m}_w/t/l"]}
            for _, row in frame.iterrows() for m in metrics]
    return pd.DataFrame(rows, columns=["strategy", "metric", "mean", "Δ [95% CI]", "W/T/L"])


def comparison_table(a: EvalRun, b: EvalRun, metrics: Sequence[str] = ("recall", "ndcg", "mrr")) -> pd.DataFrame:
    """:func:`compare_runs` for reading: each metric in A and B, and ``Δ <m> (B − A) [95% CI]``."""
    frame = compare_runs(a, b, metrics)
    if frame.empty:
        return frame
    for m in metrics:
        for side in ("a", "b"):
            frame[f"{m}_{side}"] = frame[f"{m}_{side}"].astype(float).round(3)
    frame = _readable(frame, metrics, "Δ")
    return frame.rename(columns=lambda c: c.replace(" [95% CI]", " (B − A) [95% CI]") if c.startswith("Δ") else c)


def _local(created: str | None) -> str:
    from datetime import datetime

    try:
        return datetime.fromisoformat(str(created)).astimezone().strftime("%Y-%m-%d %H:%M:%S")
    except (TypeError, ValueError):
        return str(created or "")


def runs_frame(runs: Sequence[dict]) -> pd.DataFrame:
    """The saved runs (:func:`list_runs`), newest first, with local times and readable lists."""
    rows = [{"run": r["run_id"], "when": _local(r.get("created")), "tasks file": Path(str(r.get("task_file") or "")).name,
             "tasks": r.get("tasks"), "k": r.get("k"), "strategies": ", ".join(r.get("strategies") or []),
             "seconds": r.get("seconds") or None} for r in runs]
    return pd.DataFrame(rows[::-1], columns=["run", "when", "tasks file", "tasks", "k", "strategies", "seconds"])


def progress_text(done: int, total: int, elapsed: float, warm_up: float = 0.0) -> str:
    """What a progress bar says: cases done, time spent, and an estimate of the time left from
    the pace so far (warm-up excluded); no estimate before the first case.

    Examples
    --------
    >>> progress_text(0, 12, 3.0)
    '0 of 12 cases · 3 s so far · estimating the time left after the first case'
    >>> progress_text(3, 12, 13.0, warm_up=4.0)
    '3 of 12 cases · 13 s so far · about 27 s left'
    """
    if total and done >= total:
        return f"{done} of {total} cases · done in {elapsed:.0f} s"
    if done <= 0:
        return f"0 of {total} cases · {elapsed:.0f} s so far · estimating the time left after the first case"
    per_case = max(elapsed - warm_up, 0.0) / done
    return f"{done} of {total} cases · {elapsed:.0f} s so far · about {per_case * (total - done):.0f} s left"


def estimate_seconds(runs: Sequence[dict], cases: int) -> float | None:
    """Seconds a run of ``cases`` cases may take, from the pace of the saved runs that recorded
    their time (their median seconds per case); ``None`` when none did."""
    paces = sorted(r["seconds"] / r["cases"] for r in runs if r.get("seconds") and r.get("cases"))
    if not paces:
        return None
    return paces[len(paces) // 2] * cases
