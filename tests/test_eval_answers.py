"""The answer stage of the evaluation, with canned answers of known defects (the live model is in
test_local_model.py): the stage is scored apart from retrieval and summarised per strategy."""

from __future__ import annotations

import re

from workbench.cli import main
from workbench.evaluate.report import answer_summary_frame, answers_frame, export_markdown
from workbench.evaluate.runner import EvalRun, run_evaluation
from workbench.evaluate.tasks import parse_tasks, resolve_tasks


class Canned:
    """Cites the first source it is shown for answerable questions; answers the cost question confidently."""

    model = "canned"

    def chat(self, messages):
        prompt = messages[-1]["content"]
        if "cost" in prompt:
            return "Redis costs 3,000 dollars a month."
        first = re.search(r"^<<<source c:([0-9a-f]+-\d+)", prompt, re.MULTILINE).group(1)
        return f"The token cache is backed by Redis [c:{first}]."


def _tasks(ws):
    tasks = parse_tasks([
        {"id": "chain", "question": "What is the token cache backed by?", "gold_documents": ["redis.md"]},
        {"id": "cost", "question": "How much does the Redis deployment cost per month?",
         "gold_documents": ["redis.md"], "tags": ["unanswerable"]},
    ])
    return resolve_tasks(tasks, [d.id for d in ws.store.documents()])


def test_the_answer_stage_is_scored_apart_and_summarised_per_strategy(sample_workspace, tmp_path):
    run = run_evaluation(sample_workspace, _tasks(sample_workspace), strategies=["keyword"], direct="keyword",
                         answer_client=Canned(), warm_up=False)
    assert run.answer_model == "canned" and len(run.cases) == 2
    cost = run.case("cost", "keyword")
    assert cost.recall == 1.0  # retrieval found the Redis note...
    assert cost.answer is not None and cost.answer.expected_insufficient and not cost.answer.insufficiency_ok
    assert not cost.answer.passed and cost.answer.coverage == 0.0  # ...the answer invented a cost, uncited
    chain = run.case("chain", "keyword").answer
    assert chain is not None and chain.citations and chain.coverage == 1.0
    [row] = answer_summary_frame(run).to_dict("records")
    assert (row["answers"], row["unanswerable ok"], row["no citation"]) == (2, "0/1", 1)
    assert len(answers_frame(run)) == 2
    again = EvalRun.from_json(run.to_json())  # a saved run keeps its answer stage
    assert again.case("cost", "keyword").answer == cost.answer
    assert "## Answer stage (canned), apart from retrieval" in export_markdown(run, tmp_path / "r.md").read_text()


def test_a_run_without_answers_has_no_answer_stage(sample_workspace):
    run = run_evaluation(sample_workspace, _tasks(sample_workspace), strategies=["keyword"], direct="keyword",
                         warm_up=False)
    assert all(c.answer is None for c in run.cases) and answer_summary_frame(run).empty


def test_eval_answers_without_a_model_says_how_to_get_one(sample_workspace, monkeypatch, tmp_path, capsys):
    for name in ("WORKBENCH_LLM_BASE_URL", "WORKBENCH_LLM_MODEL"):
        monkeypatch.delenv(name, raising=False)
    tasks = tmp_path / "t.yaml"
    tasks.write_text("- {id: a, question: 'What backs the token cache?', gold_documents: [redis.md]}\n", encoding="utf-8")
    code = main(["--workspace", str(sample_workspace.path), "eval", str(tasks), "--answers", "--no-save"])
    assert code == 2
    assert "--answers needs a chat model: set WORKBENCH_LLM_BASE_URL and WORKBENCH_LLM_MODEL" in capsys.readouterr().err
