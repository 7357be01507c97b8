"""Evaluate: run the expansion-evaluation protocol on a task set, read the results, compare saved runs."""

import tempfile
import time
from functools import partial
from pathlib import Path

import streamlit as st

import ui
import ui_widgets
from workbench.evaluate.report import (RunNotFound, answer_summary_frame, answers_frame, cases_frame, export_csv,
                                       export_markdown, highlights, list_runs, load_run, save_run)
from workbench.views.eval_charts import run_charts
from workbench.views.eval_html import run_html
from workbench.views.eval_tables import (comparison_table, deltas_table, estimate_seconds, progress_text, runs_frame,
                                         summary_table)
from workbench.evaluate.runner import DEFAULT_DIRECT, DEFAULT_STRATEGIES, StrategyFailed, run_evaluation
from workbench.evaluate.tasks import TaskError, load_resolved_tasks
from workbench.extract.llm import client_from_settings
from workbench.retrieve import MODES
from workbench.text.safe_text import printable

ui.keep_widget_state()
st.title("Evaluate")
st.caption(f"Every strategy answers every task of a task set; each is scored against the gold documents and "
           f"compared with the direct strategy ({DEFAULT_DIRECT}) task by task, with bootstrap confidence intervals.")
ws = ui.workspace()
if not ui.require_documents(ws):
    st.stop()

task_file = st.text_input("Task file (YAML or JSONL)", key=ui.kept("eval", "tasks", str(ui.SAMPLE_TASKS)))
strategies = st.multiselect("Strategies", MODES, key=ui.kept("eval", "modes", [m for m in DEFAULT_STRATEGIES
                                                                             if m in MODES]))
k = st.slider("k (hits per question)", 1, 20, key=ui.kept("eval", "k", ws.settings.retrieval.k))
client = client_from_settings(ws.settings.llm)
with_answers = st.checkbox("Answer stage: the chat model answers every case from its cited context, and the answers "
                           "are checked", key=ui.kept("eval", "answers", False), disabled=client is None,
                           help=None if client else f"Set {ws.settings.llm.base_url_env} and {ws.settings.llm.model_env} "
                                                    "(python -m workbench llm-serve starts the bundled local model).")
saved = list_runs(ws.path)
task_path = ui.typed_path(ws, task_file)
tasks = None
try:
    tasks = load_resolved_tasks(ws, task_path) if task_path is not None else None
except (TaskError, ValueError, OSError) as exc:
    st.error(f"The task file cannot be used: {ui.md_text(exc)}")
if tasks is not None:
    cases = len(tasks) * len({DEFAULT_DIRECT, *strategies})
    estimate = estimate_seconds(saved, cases)
    st.caption(f"{len(tasks)} tasks × {len({DEFAULT_DIRECT, *strategies})} strategies = {cases} cases, after one "
               "untimed warm-up query per strategy. "
               + (f"At the pace of the runs saved here, about {estimate:.0f} s; more when the machine is busy."
                  if estimate is not None else
                  "No saved run to estimate the time from: the progress bar estimates it after the first cases."))

if st.button("Run the evaluation", type="primary", key="eval.run", disabled=tasks is None):
    started = time.perf_counter()
    bar = st.progress(0.0, text="Warming up every strategy (not timed)...")
    warmed = {}

    def progress(done: int, total: int) -> None:
        warmed.setdefault("at", time.perf_counter() - started)
        bar.progress(done / total, text=progress_text(done, total, time.perf_counter() - started, warmed["at"]))

    try:
        run = run_evaluation(ws, tasks, strategies or [DEFAULT_DIRECT], k=k, task_file=task_file, progress=progress,
                             answer_client=client if with_answers else None)
        save_run(run, ws.path)
        st.session_state["eval.last_run"] = run
        st.session_state["eval.open_run"] = run.run_id  # the box below (not drawn yet) shows it, and the link keeps it
        saved = list_runs(ws.path)
    except (StrategyFailed, ValueError, OSError) as exc:
        st.error(f"The evaluation could not run: {exc}")

# A saved run opens as it was shown; its id in the address opens it again after a reload or from a link.
run_ids = [r["run_id"] for r in saved][::-1]  # newest first
URL = [ui.UrlField("run", "eval.open_run", choices=run_ids)]
ui.view_from_url("evaluate", URL)
if st.session_state.get("eval.open_run") not in (None, *run_ids):
    st.session_state["eval.open_run"] = None  # its file is gone
opened = st.selectbox("Open a saved run", run_ids, index=None, key="eval.open_run", placeholder="Choose a saved run",
                      format_func=lambda i: next(f"{i} · {r['created']} · k = {r['k']} · {', '.join(r['strategies'] or [])}"
                                                 for r in saved if r["run_id"] == i)) if run_ids else None
ui.view_to_url(URL)
shown = st.session_state.get("eval.last_run")
if opened is not None and (shown is None or shown.run_id != opened):
    try:
        st.session_state["eval.last_run"] = load_run(opened, ws.path)
    except RunNotFound as exc:
        st.error(ui.md_text(exc))

run = st.session_state.get("eval.last_run")
if run is None:
    st.info("Choose a task file and strategies, then press Run. Saved runs are listed at the bottom of the page.")
else:
    st.subheader(f"Summary (run {run.run_id}, k = {run.k})")
    if run.seconds:
        st.caption(f"Took {run.seconds:.0f} s, of which {run.warm_up_seconds:.0f} s warm-up (not in the latencies).")
    ui_widgets.table(summary_table(run))
    st.caption(f"{len(run.task_ids)} tasks. Δ: the strategy's recall minus {ui.md_text(run.direct)}'s on the same "
               "tasks, with its 95% bootstrap interval; W/T/L: tasks won, tied and lost against it.")
    with st.expander("Δ of every metric"):
        ui_widgets.table(deltas_table(run))
    for line in highlights(run):
        st.text("• " + line)

    metric = st.selectbox("Chart metric", ["recall", "ndcg", "mrr"], key=ui.kept("eval", "metric", "recall"))
    for name, figure in run_charts(run, metric).items():
        st.plotly_chart(figure, key=f"eval.chart.{name}")

    st.subheader("Cases")
    ui_widgets.table(cases_frame(run))

    answers = answer_summary_frame(run)
    st.subheader("Answer stage")
    if answers.empty:
        st.caption("This run has no answer stage: retrieval only.")
    else:
        st.caption(f"{run.answer_model} answered every case from its cited context; these checks are about the "
                   "answers (citations kept, sources supporting them, hypotheses, insufficient evidence), "
                   "apart from the retrieval metrics above.")
        ui_widgets.table(answers)
        ui_widgets.table(answers_frame(run))

    st.subheader("One case")
    task_id = st.selectbox("Task", run.task_ids, key="eval.case")
    for strategy in run.strategies:
        case = run.case(task_id, strategy)
        with st.expander(f"{strategy}: recall {case.recall:.2f}, {len(case.missed)} missed",
                         expanded=strategy != run.direct):
            st.text("\n".join(f"{label}: {printable(value)}" for label, value in (
                ("Question", case.question), ("Gold", ", ".join(case.gold)), ("Missed", ", ".join(case.missed) or "none"),
                ("Found beyond direct", ", ".join(case.found_beyond_direct) or "none"),
                ("Added irrelevant", ", ".join(case.added_irrelevant) or "none"), ("Ranked", ", ".join(case.ranked)))))

    with tempfile.TemporaryDirectory() as folder:
        csv_data = export_csv(run, Path(folder) / "cases.csv").read_bytes()
        markdown_data = export_markdown(run, Path(folder) / "report.md").read_bytes()
    left, middle, right = st.columns(3)
    left.download_button("Download cases (CSV)", csv_data, file_name=f"{run.run_id}.csv", mime="text/csv")
    middle.download_button("Download report (Markdown)", markdown_data, file_name=f"{run.run_id}.md",
                           mime="text/markdown")
    # Written when pressed (a callable): with plotly.js inlined the file is a few megabytes.
    right.download_button("Download report (HTML, opens offline)", partial(run_html, run, metric),
                          file_name=f"{run.run_id}.html", mime="text/html", key="eval.download_html",
                          help="One file: the tables, the charts (drawn without the internet), the settings and the "
                               "code version. A reviewer opens it in a browser, without the app.")

st.subheader("Saved runs")
if not saved:
    st.write(f"No run saved yet in {ws.path / 'runs'}.")
    st.stop()
ui_widgets.table(runs_frame(saved))
ids = run_ids
if len(ids) < 2:
    st.write("Run the evaluation again (other strategies, k or settings) to compare two runs.")
    st.stop()
left, right = st.columns(2)
run_a = left.selectbox("Run A (before)", ids, index=1, key="eval.compare.a")
run_b = right.selectbox("Run B (after)", ids, index=0, key="eval.compare.b")
try:
    a, b = load_run(run_a, ws.path), load_run(run_b, ws.path)
except RunNotFound as exc:
    st.error(str(exc))
    st.stop()
comparison = comparison_table(a, b)
st.caption(f"B − A per strategy both runs share, over the tasks both answered; 95% bootstrap CI. A: {a.created} "
           f"(k = {a.k}), B: {b.created} (k = {b.k}).")
if comparison.empty:
    st.write("These two runs share no strategy on the same tasks.")
else:
    ui_widgets.table(comparison)
    st.download_button("Download the comparison (CSV)", comparison.to_csv(index=False).encode("utf-8"),
                       file_name=f"{run_a}-vs-{run_b}.csv", mime="text/csv", key="eval.compare.download")
