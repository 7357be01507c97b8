"""Reports: summary with bootstrap columns, highlights, exports and saved runs round trip, charts."""

from __future__ import annotations

import pandas as pd
import pytest

from workbench.views.eval_charts import case_deltas, cost_vs_recall, metric_bars, run_charts
from workbench.evaluate.report import (RunNotFound, cases_frame, compare_runs, export_csv, export_json, export_markdown,
                                       highlights, list_runs, load_run, markdown_table, save_run, summary_frame)
from workbench.evaluate.runner import CaseResult, EvalRun


def case(task, strategy, recall, tags=(), found=(), added=(), outdated=(), tokens=10):
    return CaseResult(task_id=task, strategy=strategy, mode_used=strategy, k=5, level="document", recall=recall,
                      precision=recall / 5, mrr=recall, ndcg=recall, all_found=recall == 1.0, ranked=["d"], gold=["g"],
                      missed=[], found_beyond_direct=list(found), added_irrelevant=list(added), reading_chars=tokens * 4,
                      reading_tokens=tokens, surfaced_outdated=list(outdated), latency_ms=1.5, tags=list(tags))


def make_run(run_id="r1", expand_recalls=(1.0, 0.5, 0.5)):
    direct = [case("a", "vector", 0.5), case("b", "vector", 0.5), case("c", "vector", 1.0)]
    ea, eb, ec = expand_recalls
    expand = [case("a", "expand", ea, tags=["helps"], found=["g2"]),
              case("b", "expand", eb, tags=["irrelevant"], added=["noise.md"], tokens=30),
              case("c", "expand", ec, tags=["contradicts"], outdated=["old.md"])]
    return EvalRun(run_id, "2024-01-01T00:00:00+00:00", "tasks.yaml", ["vector", "expand"], "vector", 5,
                   {"retrieval": {"k": 5}}, direct + expand)


def test_cases_frame_has_one_row_per_task_and_strategy():
    frame = cases_frame(make_run())
    assert len(frame) == 6 and set(frame["strategy"]) == {"vector", "expand"}
    assert frame.set_index(["task", "strategy"]).loc[("b", "expand"), "added_irrelevant"] == 1


def test_summary_has_paired_delta_ci_and_win_tie_loss_columns():
    summary = summary_frame(make_run()).set_index("strategy")
    for m in ("recall", "ndcg", "mrr"):
        assert {f"d_{m}", f"d_{m}_low", f"d_{m}_high", f"{m}_w/t/l"} <= set(summary.columns)
    # expand - vector per task: +0.5, 0, -0.5
    assert summary.loc["expand", "d_recall"] == pytest.approx(0.0)
    assert summary.loc["expand", "recall_w/t/l"] == "1/1/1"
    assert summary.loc["expand", "d_recall_low"] < 0 < summary.loc["expand", "d_recall_high"]
    assert summary.loc["vector", "d_recall"] == 0 and summary.loc["vector", "recall_w/t/l"] == "0/3/0"
    assert summary.loc["expand", "recall"] == pytest.approx(2 / 3)
    assert summary.loc["expand", "outdated_cases"] == 1


def test_highlights_name_one_case_of_each_kind():
    lines = highlights(make_run())[1:]  # after the wins and losses
    assert lines[0].startswith("Expansion found a prerequisite: a (expand found g2")
    assert lines[1].startswith("Expansion only added irrelevant material: b (expand added noise.md; +20 tokens")
    assert lines[2].startswith("Expansion surfaced a contradicted note: c (expand returned old.md")


def test_highlights_name_each_strategys_wins_and_losses_against_direct():
    run = make_run()
    run.strategies.append("graphrag")
    run.cases += [case("a", "graphrag", 0.5), case("b", "graphrag", 0.0), case("c", "graphrag", 0.0)]
    lines = highlights(run)
    assert lines[:2] == ["expand against vector (recall): wins 1 (a), loses 1 (c), ties 1.",
                         "graphrag against vector (recall): wins no task, loses 2 (b, c), ties 1."]


def test_the_summary_table_is_narrow_and_every_delta_is_kept_apart():
    from workbench.views.eval_tables import deltas_table, summary_table

    table = summary_table(make_run())
    assert list(table.columns) == ["strategy", "recall", "ndcg", "mrr", "Δ recall [95% CI]", "recall W/T/L",
                                   "beyond direct", "not gold", "tokens", "ms"]
    assert table.set_index("strategy").loc["expand", "Δ recall [95% CI]"] == "+0.00 [-0.50, 0.50]"
    deltas = deltas_table(make_run()).set_index(["strategy", "metric"])
    assert len(deltas) == 6 and deltas.loc[("expand", "mrr"), "W/T/L"] == "1/1/1"


def test_markdown_table_escapes_pipes_and_formats_floats():
    text = markdown_table(pd.DataFrame({"a": ["x|y"], "b": [0.12345]}))
    assert text.splitlines() == ["| a | b |", "| --- | --- |", "| x\\|y | 0.123 |"]


def test_json_export_round_trips(tmp_path):
    run = make_run()
    assert load_run(export_json(run, tmp_path / "run.json")) == run


def test_csv_export_round_trips_the_case_table(tmp_path):
    run = make_run()
    back = pd.read_csv(export_csv(run, tmp_path / "cases.csv"))
    pd.testing.assert_frame_equal(back[["task", "strategy", "recall"]], cases_frame(run)[["task", "strategy", "recall"]])


def test_markdown_export_holds_summary_highlights_and_cases(tmp_path):
    text = export_markdown(make_run(), tmp_path / "run.md").read_text(encoding="utf-8")
    assert "## Summary" in text and "## Highlights" in text and "## Cases" in text
    assert "| expand |" in text


def test_saved_runs_are_listed_and_loaded_by_id(tmp_path):
    save_run(make_run("r1"), tmp_path)
    save_run(make_run("r2"), tmp_path)
    assert [r["run_id"] for r in list_runs(tmp_path)] == ["r1", "r2"]
    assert list_runs(tmp_path)[0]["tasks"] == 3
    assert load_run("r2", tmp_path).run_id == "r2"
    with pytest.raises(RunNotFound, match="no saved run 'r3'"):
        load_run("r3", tmp_path)


def test_compare_runs_gives_paired_deltas_between_runs():
    frame = compare_runs(make_run("a"), make_run("b", expand_recalls=(1.0, 1.0, 1.0))).set_index("strategy")
    assert frame.loc["vector", "d_recall"] == 0
    assert frame.loc["expand", "d_recall"] == pytest.approx(1 / 3)
    assert frame.loc["expand", "recall_w/t/l"] == "2/1/0"


def test_charts_have_one_trace_per_strategy_or_point():
    run = make_run()
    summary = summary_frame(run)
    bars = metric_bars(summary)
    assert list(bars.data[0].x) == ["vector", "expand"] and bars.data[0].error_y.array is not None
    assert [t.name for t in case_deltas(run).data] == ["expand"]
    assert list(case_deltas(run).data[0].y) == [0.5, 0.0, -0.5]
    assert list(cost_vs_recall(summary).data[0].text) == ["vector", "expand"]
    assert set(run_charts(run)) == {"bars", "deltas", "cost"}
