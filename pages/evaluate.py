"""Evaluate: run the expansion-evaluation protocol on a task set and read the results."""

import tempfile
from pathlib import Path

import streamlit as st

import ui
from workbench.evaluate.charts import run_charts
from workbench.evaluate.report import cases_frame, export_csv, export_markdown, highlights, save_run, summary_frame
from workbench.evaluate.runner import DEFAULT_DIRECT, DEFAULT_STRATEGIES, StrategyFailed, run_evaluation
from workbench.evaluate.tasks import TaskError, load_resolved_tasks
from workbench.retrieve import MODES

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

if st.button("Run the evaluation", type="primary", key="eval.run"):
    try:
        tasks = load_resolved_tasks(ws, Path(task_file))
        bar = st.progress(0.0, text="Running...")
        run = run_evaluation(ws, tasks, strategies or [DEFAULT_DIRECT], k=k, task_file=task_file,
                             progress=lambda done, total: bar.progress(done / total, text=f"{done} of {total} cases"))
        save_run(run, ws.path)
        st.session_state["eval.last_run"] = run
    except (TaskError, StrategyFailed, ValueError, OSError) as exc:
        st.error(f"The evaluation could not run: {exc}")

run = st.session_state.get("eval.last_run")
if run is None:
    st.info("Choose a task file and strategies, then press Run. The bundled sample task set takes a few seconds.")
    st.stop()

st.subheader(f"Summary (run {run.run_id}, k = {run.k})")
st.dataframe(summary_frame(run), hide_index=True, width="stretch")
for line in highlights(run):
    st.text("• " + line)

metric = st.selectbox("Chart metric", ["recall", "ndcg", "mrr"], key=ui.kept("eval", "metric", "recall"))
for name, figure in run_charts(run, metric).items():
    st.plotly_chart(figure, key=f"eval.chart.{name}")

st.subheader("Cases")
st.dataframe(cases_frame(run), hide_index=True, width="stretch")

st.subheader("One case")
task_id = st.selectbox("Task", run.task_ids, key="eval.case")
for strategy in run.strategies:
    case = run.case(task_id, strategy)
    with st.expander(f"{strategy}: recall {case.recall:.2f}, {len(case.missed)} missed", expanded=strategy != run.direct):
        st.text(f"Question: {case.question}\nGold: {', '.join(case.gold)}\nMissed: {', '.join(case.missed) or 'none'}\n"
                f"Found beyond direct: {', '.join(case.found_beyond_direct) or 'none'}\n"
                f"Added irrelevant: {', '.join(case.added_irrelevant) or 'none'}\nRanked: {', '.join(case.ranked)}")

with tempfile.TemporaryDirectory() as folder:
    csv_data = export_csv(run, Path(folder) / "cases.csv").read_bytes()
    markdown_data = export_markdown(run, Path(folder) / "report.md").read_bytes()
left, right = st.columns(2)
left.download_button("Download cases (CSV)", csv_data, file_name=f"{run.run_id}.csv", mime="text/csv")
right.download_button("Download report (Markdown)", markdown_data, file_name=f"{run.run_id}.md", mime="text/markdown")
