"""The ``eval`` command: run strategies over a task set, export, save and compare runs."""

from __future__ import annotations

import argparse
import sys

from .render import CommandError, emit, invoked_as
from .bounds import like_setting
from .core import open_workspace

__all__ = ["register"]


def _modes(text: str | None) -> list[str]:
    return [m.strip() for m in (text or "").split(",") if m.strip()]


def _print_run(run) -> str:
    from ..evaluate.report import cases_frame, highlights, summary_frame
    from .render import table

    cases = cases_frame(run)
    case_cols = ["task", "strategy", "recall", "precision", "mrr", "ndcg", "all_found", "found_beyond_direct",
                 "added_irrelevant", "outdated", "tokens", "latency_ms"]
    summary = summary_frame(run)
    summary_rows = []
    for row in summary.to_dict("records"):
        out = {"strategy": row["strategy"], "tasks": row["tasks"]}
        for m in ("recall", "precision", "mrr", "ndcg", "all_found"):
            out[m] = f"{row[m]:.3f}"
        for m in ("recall", "ndcg", "mrr"):
            out[f"Δ {m} [95% CI]"] = f"{row[f'd_{m}']:+.3f} [{row[f'd_{m}_low']:+.3f}, {row[f'd_{m}_high']:+.3f}]"
            out[f"{m} w/t/l"] = row[f"{m}_w/t/l"]
        out["irrelevant added"] = int(row["added_irrelevant"])
        out["outdated cases"] = int(row["outdated_cases"])
        out["tokens"] = f"{row['tokens']:.0f}"
        out["ms"] = f"{row['latency_ms']:.0f}"
        summary_rows.append(out)
    case_rows = [{c: (f"{v:.2f}" if isinstance(v, float) and c not in ("latency_ms",) else
                      f"{v:.0f}" if isinstance(v, float) else v) for c, v in r.items()}
                 for r in cases[case_cols].to_dict("records")]
    lines = [f"run {run.run_id}: {len(run.task_ids)} tasks x {len(run.strategies)} strategies, k = {run.k}, "
             f"every strategy scored to depth {run.depth or run.k}, direct = {run.direct} (tokens ~ chars / 4)", "", "Per case:", table(case_rows, case_cols), "",
             f"Summary (Δ = strategy - {run.direct}, paired, 95% bootstrap CI over tasks):",
             table(summary_rows, list(summary_rows[0])), ""]
    lines += highlights(run) or ["(no highlight cases in this run)"]
    lines += _answer_lines(run)
    return "\n".join(lines)


def _answer_lines(run) -> list[str]:
    """The answer stage, printed apart from the retrieval metrics."""
    from ..evaluate.report import answer_summary_frame, answers_frame
    from .render import table

    summary = answer_summary_frame(run)
    if summary.empty:
        return []
    cols = ["task", "strategy", "coverage", "supported", "cited", "unknown_citations", "hypotheses_as_fact",
            "unanswerable", "says_insufficient", "passed"]
    rows = [{c: (f"{v:.2f}" if isinstance(v, float) else v) for c, v in r.items()}
            for r in answers_frame(run)[cols].to_dict("records")]
    return ["", f"Answer stage ({run.answer_model}): the model answers from each case's cited context; "
            "the checks, apart from retrieval:", table(rows, cols), "", "Answer summary per strategy:",
            table(summary.to_dict("records"), list(summary.columns))]


def cmd_eval(args):
    from ..evaluate import report
    from ..evaluate.outcomes import compare_saved_runs, write_run
    from ..evaluate.runner import DEFAULT_STRATEGIES, StrategyFailed, run_evaluation
    from ..evaluate.tasks import TaskError, load_resolved_tasks

    if args.compare:
        try:
            compared = compare_saved_runs(*args.compare, args.workspace)
        except report.RunNotFound as exc:
            raise CommandError(str(exc), code=2) from None
        emit(args, compared.to_json(), lambda p: f"B = {p['b']} minus A = {p['a']}, paired over shared tasks:\n"
             + report.markdown_table(compared.frame))
        return
    if not args.tasks:
        raise CommandError("usage: eval TASKS [--modes ...] or eval --compare RUN_A RUN_B", code=2)
    ws = open_workspace(args)
    try:
        tasks = load_resolved_tasks(ws, args.tasks)
    except TaskError as exc:
        raise CommandError(str(exc), code=2) from None
    from ..retrieve import MODES

    modes = _modes(args.modes) or list(DEFAULT_STRATEGIES)
    unknown = [m for m in modes + [args.direct] if m not in MODES]
    if unknown:
        raise CommandError(f"unknown mode(s) {', '.join(unknown)}; modes: {', '.join(MODES)}", code=2)
    client = None
    if args.answers:
        from ..extract.llm import client_from_settings

        client = client_from_settings(ws.settings.llm)
        if client is None:
            llm = ws.settings.llm
            raise CommandError(f"--answers needs a chat model: set {llm.base_url_env} and {llm.model_env} "
                               f"({invoked_as()} llm-serve starts the bundled local one and prints them)", code=2)
    try:
        run = run_evaluation(ws, tasks, strategies=modes, direct=args.direct, k=args.k, task_file=str(args.tasks),
                             answer_client=client)
    except StrategyFailed as exc:
        raise CommandError(str(exc)) from None
    outcome = write_run(run, ws.path, save=args.save, csv=args.csv, md=args.md, html=args.html)
    written = outcome.written
    emit(args, outcome.to_json(), lambda p: _print_run(run) + "".join(f"\nwrote {w}" for w in written))
    if written and getattr(args, "json", False):
        print("\n".join(f"wrote {w}" for w in written), file=sys.stderr)


def register(subparsers, common) -> None:
    from ..evaluate.runner import DEFAULT_DIRECT, DEFAULT_STRATEGIES

    p = subparsers.add_parser("eval", parents=[common],
                              help="compare retrieval strategies on a task set (or compare two saved runs)")
    p.add_argument("tasks", nargs="?", help="task file (.yaml or .jsonl)")
    p.add_argument("--modes", help=f"comma-separated strategies (default: {','.join(DEFAULT_STRATEGIES)}, "
                   "as the Evaluate page's)")
    p.add_argument("--direct", default=DEFAULT_DIRECT,
                   help=f"the strategy the others are compared with (default: {DEFAULT_DIRECT}, expand's direct stage)")
    p.add_argument("--k", type=like_setting("retrieval.k"), default=None, help="hits per query (default: retrieval.k of the settings)")
    p.add_argument("--csv", metavar="FILE", help="write the per-case table as CSV")
    p.add_argument("--md", metavar="FILE", help="write summary, highlights and cases as Markdown")
    p.add_argument("--html", metavar="FILE", help="write the report as one self-contained HTML file (tables, charts drawn "
                   "offline, settings, code version), as the Evaluate page's HTML download")
    p.add_argument("--save", action=argparse.BooleanOptionalAction, default=True,
                   help="save the run under <workspace>/runs/ (default: on)")
    p.add_argument("--answers", action="store_true",
                   help="also answer every case with the configured chat model and check the answers (answer stage)")
    p.add_argument("--compare", nargs=2, metavar=("RUN_A", "RUN_B"), help="compare two saved runs (ids or files)")
    p.set_defaults(handler=cmd_eval)
