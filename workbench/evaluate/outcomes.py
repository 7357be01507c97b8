"""What ``eval`` reports, typed: a run with its summaries and the files written
(:class:`EvaluationOutcome`), and two saved runs compared (:class:`RunComparison`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from . import report
from .runner import EvalRun

__all__ = ["EvaluationOutcome", "RunComparison", "compare_saved_runs", "write_run"]


@dataclass
class EvaluationOutcome:
    """An evaluation run, its summaries and highlights, and the files it was written to."""

    run: EvalRun
    """The run: every case of every strategy."""
    written: list[str] = field(default_factory=list)
    """The files written (the saved run, CSV, Markdown, HTML)."""

    def to_json(self) -> dict[str, Any]:
        """The run without its settings, with its summary, answer summary, highlights and files."""
        out = {**self.run.to_json(), "summary": report.summary_frame(self.run).to_dict("records"),
               "answer_summary": report.answer_summary_frame(self.run).to_dict("records"),
               "highlights": report.highlights(self.run), "written": list(self.written)}
        out.pop("settings")
        return out


@dataclass
class RunComparison:
    """Run B against run A, paired over the tasks they share (:func:`~workbench.evaluate.report.compare_runs`)."""

    a: EvalRun
    b: EvalRun
    frame: pd.DataFrame
    """Per strategy, B minus A with confidence intervals."""

    def to_json(self) -> dict[str, Any]:
        return {"a": self.a.run_id, "b": self.b.run_id, "strategies": self.frame.to_dict("records")}


def compare_saved_runs(a: str | Path, b: str | Path, workspace: str | Path | None = None) -> RunComparison:
    """Two saved runs (ids under ``workspace`` or files) compared; :class:`~workbench.evaluate.report.RunNotFound` names a missing one."""
    run_a, run_b = report.load_run(a, workspace), report.load_run(b, workspace)
    return RunComparison(run_a, run_b, report.compare_runs(run_a, run_b))


def write_run(run: EvalRun, workspace: str | Path, save: bool = True, csv: str | Path | None = None,
              md: str | Path | None = None, html: str | Path | None = None) -> EvaluationOutcome:
    """The run saved under ``workspace``'s runs (``save``) and exported to the files given."""
    written = []
    if save:
        written.append(str(report.save_run(run, workspace)))
    if csv:
        written.append(str(report.export_csv(run, csv)))
    if md:
        written.append(str(report.export_markdown(run, md)))
    if html:
        from ..views.eval_html import export_html

        written.append(str(export_html(run, html)))
    return EvaluationOutcome(run, written)
