"""Reports over an :class:`~workbench.evaluate.runner.EvalRun`: tables, exports, saved runs.

One row per case (:func:`cases_frame`), one per strategy (:func:`summary_frame`) with the
paired difference of each strategy against the direct one, its bootstrap confidence interval
over tasks and a win/tie/loss count. Runs are saved as JSON under ``<workspace>/runs/`` with
their settings and timestamp, so two runs can be compared later (:func:`compare_runs`).

Examples
--------
>>> import pandas as pd
>>> print(markdown_table(pd.DataFrame({"strategy": ["vector"], "recall": [0.5]})))
| strategy | recall |
| --- | --- |
| vector | 0.500 |
"""

from __future__ import annotations

import json
import os
import uuid
from pathlib import Path
from typing import Sequence

import pandas as pd

from .bootstrap import paired_bootstrap_ci, win_tie_loss
from .runner import EvalRun

__all__ = [
    "answers_frame",
    "answer_summary_frame",
    "METRICS",
    "RunNotFound",
    "wins_and_losses",
    "cases_frame",
    "summary_frame",
    "paired_deltas",
    "highlights",
    "markdown_table",
    "export_csv",
    "export_markdown",
    "export_json",
    "save_run",
    "load_run",
    "list_runs",
    "compare_runs",
]

#: Ranking metrics summarised per strategy and compared against direct.
METRICS = ("recall", "precision", "mrr", "ndcg", "all_found")


class RunNotFound(FileNotFoundError):
    """No saved run has that id or path."""


def cases_frame(run: EvalRun) -> pd.DataFrame:
    """One row per task x strategy with every metric and the expansion bookkeeping."""
    rows = []
    for c in run.cases:
        rows.append({
            "task": c.task_id, "strategy": c.strategy, "mode_used": c.mode_used,
            "recall": c.recall, "precision": c.precision, "mrr": c.mrr, "ndcg": c.ndcg,
            "all_found": float(c.all_found), "found_beyond_direct": len(c.found_beyond_direct),
            "added_irrelevant": len(c.added_irrelevant), "outdated": len(c.surfaced_outdated),
            "chars": c.reading_chars, "tokens": c.reading_tokens, "latency_ms": c.latency_ms,
            "tags": ",".join(c.tags),
        })
    return pd.DataFrame(rows)


def answers_frame(run: EvalRun) -> pd.DataFrame:
    """The answer stage, one row per task x strategy that has one (empty when the run has none)."""
    rows = []
    for c in run.cases:
        a = c.answer
        if a is None:
            continue
        rows.append({
            "task": c.task_id, "strategy": c.strategy, "coverage": a.coverage, "supported": a.supported_share,
            "factual": a.factual_sentences, "cited": len(a.citations), "unknown_citations": a.unknown_citations,
            "unsupported_citations": a.unsupported_citations, "hypotheses_as_fact": a.hypotheses_as_fact,
            "unanswerable": a.expected_insufficient, "says_insufficient": a.says_insufficient,
            "passed": a.passed, "seconds": a.seconds, "answer": a.text, "problems": " | ".join(a.problems),
        })
    return pd.DataFrame(rows)


def answer_summary_frame(run: EvalRun) -> pd.DataFrame:
    """One row per strategy: how its answers kept their sources, apart from its retrieval metrics.

    ``coverage`` and ``supported`` are means over the answers; ``hypotheses as fact`` counts
    answers stating a candidate or a contradicted note as fact; ``unanswerable ok`` is
    answers to unanswerable tasks that said the evidence is insufficient / such tasks;
    ``abstained`` counts answerable tasks answered with "insufficient"."""
    frame = answers_frame(run)
    if frame.empty:
        return frame
    rows = []
    for strategy in run.strategies:
        part = frame[frame["strategy"] == strategy]
        if part.empty:
            continue
        trap = part[part["unanswerable"]]
        rows.append({
            "strategy": strategy, "answers": len(part), "coverage": round(part["coverage"].mean(), 3),
            "supported": round(part["supported"].mean(), 3),
            "no citation": int((part["cited"] == 0).sum()),
            "unknown citations": int(part["unknown_citations"].sum()),
            "hypotheses as fact": int((part["hypotheses_as_fact"] > 0).sum()),
            "unanswerable ok": f"{int(trap['says_insufficient'].sum())}/{len(trap)}",
            "abstained": int((part["says_insufficient"] & ~part["unanswerable"]).sum()),
            "passed": f"{int(part['passed'].sum())}/{len(part)}", "seconds": round(part["seconds"].mean(), 2),
        })
    return pd.DataFrame(rows)


def paired_deltas(run: EvalRun, strategy: str, metric: str = "recall") -> pd.Series:
    """``metric(strategy) - metric(direct)`` per task, indexed by task id."""
    frame = cases_frame(run).pivot(index="task", columns="strategy", values=metric)
    return (frame[strategy] - frame[run.direct]).loc[run.task_ids]


def summary_frame(run: EvalRun, metrics: Sequence[str] = ("recall", "ndcg", "mrr"), confidence: float = 0.95,
                  seed: int = 0) -> pd.DataFrame:
    """One row per strategy: means, reading cost, and for each of ``metrics`` the paired
    delta against direct with its bootstrap CI (``d_<m>``, ``d_<m>_low``, ``d_<m>_high``) and
    ``<m>_w/t/l``."""
    cases = cases_frame(run)
    rows = []
    for strategy in run.strategies:
        part = cases[cases["strategy"] == strategy]
        row: dict = {"strategy": strategy, "tasks": len(part)}
        for m in METRICS:
            row[m] = part[m].mean()
        row.update({
            "added_irrelevant": part["added_irrelevant"].sum(), "found_beyond_direct": part["found_beyond_direct"].sum(),
            "outdated_cases": int((part["outdated"] > 0).sum()), "tokens": part["tokens"].mean(),
            "latency_ms": part["latency_ms"].mean(),
        })
        for m in metrics:
            deltas = paired_deltas(run, strategy, m).to_numpy()
            mean, low, high = paired_bootstrap_ci(deltas, confidence=confidence, seed=seed)
            wins, ties, losses = win_tie_loss(deltas)
            row.update({f"d_{m}": mean, f"d_{m}_low": low, f"d_{m}_high": high, f"{m}_w/t/l": f"{wins}/{ties}/{losses}"})
        rows.append(row)
    return pd.DataFrame(rows)


def wins_and_losses(run: EvalRun, metric: str = "recall", shown: int = 5) -> list[str]:
    """For each strategy but direct, a sentence naming the tasks it won and lost against direct on
    ``metric`` (at most ``shown`` of each, then how many more), wins and losses alike:
    ``graphrag against direct (recall): wins no task, loses 2 (t3, t7), ties 10.``
    """
    def named(tasks: list[str]) -> str:
        more = f" and {len(tasks) - shown} more" if len(tasks) > shown else ""
        return f"{len(tasks)} ({', '.join(tasks[:shown])}{more})" if tasks else "no task"

    lines = []
    for strategy in run.strategies:
        if strategy == run.direct:
            continue
        deltas = paired_deltas(run, strategy, metric)
        wins = [str(t) for t, d in deltas.items() if d > 1e-9]
        losses = [str(t) for t, d in deltas.items() if d < -1e-9]
        ties = len(deltas) - len(wins) - len(losses)
        lines.append(f"{strategy} against {run.direct} ({metric}): wins {named(wins)}, loses {named(losses)}, "
                     f"ties {ties}.")
    return lines


def highlights(run: EvalRun) -> list[str]:
    """Each strategy's wins and losses against direct (:func:`wins_and_losses`), then sentences
    naming one case of each kind the protocol looks for, where the run has one: expansion found a
    prerequisite, only added irrelevant material, surfaced an outdated note."""
    others = [c for c in run.cases if c.strategy != run.direct]
    direct = {c.task_id: c for c in run.cases if c.strategy == run.direct}

    def first(condition, preferred_tags):
        # A case tagged for the kind (helps, irrelevant, contradicts...) is the clearest example.
        matching = [c for c in others if condition(c)]
        tagged = [c for c in matching if set(c.tags) & set(preferred_tags)]
        return (tagged or matching or [None])[0]

    lines = wins_and_losses(run)
    found = first(lambda c: c.found_beyond_direct, ("helps", "multi-hop"))
    if found:
        lines.append(f"Expansion found a prerequisite: {found.task_id} ({found.strategy} found "
                     f"{', '.join(found.found_beyond_direct)} that {run.direct} missed)")
    noise = first(lambda c: c.added_irrelevant and not c.found_beyond_direct and c.recall <= direct[c.task_id].recall,
                  ("irrelevant", "single-hop"))
    if noise:
        lines.append(f"Expansion only added irrelevant material: {noise.task_id} ({noise.strategy} added "
                     f"{', '.join(noise.added_irrelevant)}; {noise.reading_tokens - direct[noise.task_id].reading_tokens:+d} "
                     "tokens to read)")
    stale = (first(lambda c: c.surfaced_outdated and not direct[c.task_id].surfaced_outdated, ("outdated", "contradicts"))
             or first(lambda c: c.surfaced_outdated, ("outdated", "contradicts")))
    if stale:
        lines.append(f"Expansion surfaced a contradicted note: {stale.task_id} ({stale.strategy} returned "
                     f"{', '.join(stale.surfaced_outdated)}, which a later note contradicts or supersedes)")
    return lines


def _cell(value) -> str:
    if isinstance(value, float):
        return f"{value:.3f}"
    return str(value).replace("|", "\\|").replace("\n", " ")


def markdown_table(frame: pd.DataFrame) -> str:
    """A GitHub Markdown table of ``frame`` (floats with 3 decimals); no tabulate needed."""
    columns = [str(c) for c in frame.columns]
    lines = ["| " + " | ".join(columns) + " |", "| " + " | ".join("---" for _ in columns) + " |"]
    for row in frame.itertuples(index=False):
        lines.append("| " + " | ".join(_cell(v) for v in row) + " |")
    return "\n".join(lines)


def export_csv(run: EvalRun, path: str | Path) -> Path:
    """Write the per-case table as CSV."""
    path = Path(path)
    cases_frame(run).to_csv(path, index=False)
    return path


def export_markdown(run: EvalRun, path: str | Path) -> Path:
    """Write the summary, the highlights and the per-case table as Markdown."""
    path = Path(path)
    parts = [f"# Evaluation run {run.run_id}", "",
             f"{run.created}; tasks: {run.task_file}; k = {run.k}; direct = {run.direct}", "",
             "## Summary (deltas against direct, 95% bootstrap CI over tasks)", "", markdown_table(summary_frame(run)), ""]
    if highlights(run):
        parts += ["## Highlights", ""] + [f"- {h}" for h in highlights(run)] + [""]
    parts += ["## Cases", "", markdown_table(cases_frame(run)), ""]
    answers = answer_summary_frame(run)
    if not answers.empty:
        parts += [f"## Answer stage ({run.answer_model}), apart from retrieval", "", markdown_table(answers), ""]
    path.write_text("\n".join(parts), encoding="utf-8")
    return path


def export_json(run: EvalRun, path: str | Path) -> Path:
    """Write the whole run (cases, settings, timestamp) as JSON; :func:`load_run` reads it back."""
    path = Path(path)
    path.write_text(json.dumps(run.to_json(), indent=2, ensure_ascii=False), encoding="utf-8")
    return path


def _runs_dir(workspace: str | Path) -> Path:
    return Path(workspace) / "runs"


def save_run(run: EvalRun, workspace: str | Path) -> Path:
    """Save ``run`` as ``<workspace>/runs/<run id>.json``.

    In a workspace folder others can write to, a link planted at ``runs`` is replaced by a
    folder, and the file is written to a temporary created new (``O_EXCL | O_NOFOLLOW``) and
    renamed over its place: the run never lands where a link points."""
    folder = _runs_dir(workspace)
    if folder.is_symlink():
        folder.unlink()
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{run.run_id}.json"
    temporary = folder / f".{path.name}.{uuid.uuid4().hex}.tmp"
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
    try:
        with os.fdopen(os.open(temporary, flags, 0o666), "w", encoding="utf-8") as out:
            out.write(json.dumps(run.to_json(), indent=2, ensure_ascii=False))
        os.replace(temporary, path)
    finally:
        temporary.unlink(missing_ok=True)
    return path


def load_run(run: str | Path, workspace: str | Path | None = None) -> EvalRun:
    """Load a run by file path, or by id from ``<workspace>/runs/``.

    Raises
    ------
    RunNotFound
        Naming what was looked for and where.
    """
    candidates = [Path(run)]
    if workspace is not None:
        candidates.append(_runs_dir(workspace) / f"{run}.json")
    for path in candidates:
        if path.is_file():
            try:
                return EvalRun.from_json(json.loads(path.read_text(encoding="utf-8")))
            except (json.JSONDecodeError, TypeError) as exc:
                raise RunNotFound(f"{path}: not a saved evaluation run ({exc})") from None
    where = f" or in {_runs_dir(workspace)}" if workspace is not None else ""
    raise RunNotFound(f"no saved run {str(run)!r} as a file{where}; list them with list_runs()")


def list_runs(workspace: str | Path) -> list[dict]:
    """Saved runs, oldest first: id, timestamp, task file, strategies, k, tasks."""
    out = []
    for path in sorted(_runs_dir(workspace).glob("*.json")):
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, json.JSONDecodeError):
            continue
        out.append({"run_id": data.get("run_id"), "created": data.get("created"), "task_file": data.get("task_file"),
                    "strategies": data.get("strategies"), "k": data.get("k"),
                    "tasks": len({c["task_id"] for c in data.get("cases", [])}), "cases": len(data.get("cases", [])),
                    "seconds": data.get("seconds", 0.0), "path": str(path)})
    return sorted(out, key=lambda r: (r["created"] or "", r["run_id"] or ""))


def compare_runs(a: EvalRun, b: EvalRun, metrics: Sequence[str] = ("recall", "ndcg", "mrr"), seed: int = 0) -> pd.DataFrame:
    """Per strategy present in both runs: each metric in A and B and the paired delta B - A
    over the tasks both runs share, with bootstrap CI and win/tie/loss."""
    ca, cb = cases_frame(a), cases_frame(b)
    rows = []
    for strategy in [s for s in a.strategies if s in b.strategies]:
        pa = ca[ca["strategy"] == strategy].set_index("task")
        pb = cb[cb["strategy"] == strategy].set_index("task")
        shared = [t for t in pa.index if t in pb.index]
        if not shared:
            continue
        row: dict = {"strategy": strategy, "tasks": len(shared)}
        for m in metrics:
            deltas = (pb.loc[shared, m] - pa.loc[shared, m]).to_numpy(dtype=float)
            mean, low, high = paired_bootstrap_ci(deltas, seed=seed)
            wins, ties, losses = win_tie_loss(deltas)
            row.update({f"{m}_a": pa.loc[shared, m].mean(), f"{m}_b": pb.loc[shared, m].mean(), f"d_{m}": mean,
                        f"d_{m}_low": low, f"d_{m}_high": high, f"{m}_w/t/l": f"{wins}/{ties}/{losses}"})
        rows.append(row)
    return pd.DataFrame(rows)
