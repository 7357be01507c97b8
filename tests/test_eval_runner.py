"""The runner: hand-computed metrics per case, expansion bookkeeping, outdated notes, real modes."""

from __future__ import annotations

import pytest

from tests.conftest import SAMPLE
from workbench.evaluate.runner import StrategyFailed, reading_cost, run_evaluation
from workbench.corpus.outdated import outdated_documents
from workbench.evaluate.tasks import EvalTask, load_resolved_tasks
from workbench.model import DeclaredRelation, Hit, RetrievalResult
from workbench.record.store import DocumentRecord

OLD = "sample_corpus/decisions/2023-11-session-store.md"
NEW = "sample_corpus/decisions/2024-06-session-store-redis.md"


def fake_retrieve(answers: dict[str, list[tuple[str, str]]]):
    """A retriever returning fixed ``(document, text)`` hits per mode."""

    def retrieve(ws, query, mode, k):
        hits = [Hit(f"{mode}-{i}", doc, text, 1.0 / (i + 1), i + 1) for i, (doc, text) in enumerate(answers[mode])]
        return RetrievalResult(query, mode, mode, hits[:k])

    return retrieve


def record(doc_id, date=None, relations=()):
    return DocumentRecord(doc_id, "/" + doc_id, doc_id.rsplit("/", 1)[-1], "markdown", "h", date, (), tuple(relations))


def test_metrics_of_one_case_match_hand_computation(sample_workspace):
    task = EvalTask("t", "q", gold_documents=("g1", "g2"))
    answers = {"vector": [("x", "aaaa"), ("g1", "bb"), ("g1", "cc"), ("y", "d")],
               "expand": [("g1", "aaaa"), ("z", "bbbb"), ("g2", "cccc")]}
    run = run_evaluation(sample_workspace, [task], ["vector", "expand"], direct="vector", k=3,
                         retrieve=fake_retrieve(answers))
    direct, expand = run.case("t", "vector"), run.case("t", "expand")
    # vector's k=3 hits are x, g1, g1: the second g1 chunk counts once -> one of two gold at rank 2.
    assert direct.ranked == ["x", "g1"]
    # Every strategy is scored to the run's one depth: expand returns up to 2k, so 6 ranks for both.
    assert run.depth == direct.depth == expand.depth == 6
    assert (direct.recall, direct.precision, direct.mrr) == (0.5, 1 / 6, 0.5)
    assert direct.ndcg == pytest.approx((1 / 1.5849625) / (1 + 1 / 1.5849625), rel=1e-6)
    assert not direct.all_found and direct.missed == ["g2"]
    assert expand.recall == 1.0 and expand.all_found and expand.mrr == 1.0
    assert expand.found_beyond_direct == ["g2"]
    assert expand.added_irrelevant == ["z"]
    assert direct.found_beyond_direct == [] and direct.added_irrelevant == []
    assert (direct.reading_chars, direct.reading_tokens) == (8, 2)
    assert (expand.reading_chars, expand.reading_tokens) == (12, 3)


def test_direct_strategy_runs_first_even_when_listed_later(sample_workspace):
    task = EvalTask("t", "q", gold_documents=("g",))
    answers = {"vector": [("g", "t")], "keyword": [("g", "t")]}
    run = run_evaluation(sample_workspace, [task], ["keyword"], direct="vector", k=2, retrieve=fake_retrieve(answers))
    assert run.strategies == ["vector", "keyword"]
    assert [c.strategy for c in run.cases] == ["vector", "keyword"]


def test_chunk_level_task_is_scored_on_chunk_ids(sample_workspace):
    task = EvalTask("c", "q", gold_chunks=("vector-1",))
    run = run_evaluation(sample_workspace, [task], ["vector"], direct="vector", k=2,
                         retrieve=fake_retrieve({"vector": [("d", "a"), ("d", "b")]}))
    case = run.case("c", "vector")
    assert case.level == "chunk" and case.ranked == ["vector-0", "vector-1"] and case.mrr == 0.5


def test_later_contradicting_note_outdates_the_earlier_one():
    old = record("n/old.md", "2023-01-01")
    new = record("n/new.md", "2024-01-01", [DeclaredRelation("CONTRADICTS", "old.md")])
    assert outdated_documents([old, new]) == {"n/old.md": ("n/new.md",)}


def test_contradicts_declared_by_the_older_note_outdates_the_declaring_note():
    old = record("n/old.md", "2023-01-01", [DeclaredRelation("CONTRADICTS", "new")])
    new = record("n/new.md", "2024-01-01")
    assert outdated_documents([old, new]) == {"n/old.md": ("n/new.md",)}


def test_references_do_not_outdate_anything():
    a = record("n/a.md", "2023-01-01")
    b = record("n/b.md", "2024-01-01", [DeclaredRelation("REFERENCES", "a.md")])
    assert outdated_documents([a, b]) == {}


def test_sample_session_note_is_outdated_and_surfaced(sample_workspace):
    assert outdated_documents(sample_workspace.store.documents()) == {OLD: (NEW,)}
    task = EvalTask("s", "q", gold_documents=(NEW,))
    run = run_evaluation(sample_workspace, [task], ["expand"], k=5,
                         retrieve=fake_retrieve({"direct": [(NEW, "a")], "expand": [(NEW, "a"), (OLD, "b")]}))
    assert run.case("s", "direct").surfaced_outdated == []
    assert run.case("s", "expand").surfaced_outdated == [OLD]


def test_strategy_failure_names_strategy_and_task(sample_workspace):
    def broken(ws, query, mode, k):
        raise RuntimeError("boom")

    with pytest.raises(StrategyFailed, match="strategy 'direct' failed on task 't1': boom"):
        run_evaluation(sample_workspace, [EvalTask("t1", "q", ("g",))], ["vector"], retrieve=broken)


def test_reading_cost_estimates_four_characters_per_token():
    assert reading_cost(["x" * 9]) == (9, 3)


def test_real_modes_score_every_sample_task(sample_workspace):
    tasks = load_resolved_tasks(sample_workspace, SAMPLE / "tasks.yaml")
    run = run_evaluation(sample_workspace, tasks, ["vector", "expand", "keyword"], k=5)
    assert run.strategies[0] == "direct" and len(run.cases) == 4 * len(tasks)
    assert run.settings["retrieval"]["k"] == sample_workspace.settings.retrieval.k
    for case in run.cases:
        assert 0 <= case.recall <= 1 and 0 <= case.ndcg <= 1 + 1e-9
        # Expansion is scored on its direct hits and the notes it adds after them.
        assert len(case.ranked) <= (10 if case.strategy == "expand" else 5) and case.latency_ms >= 0
        assert case.depth == 10  # one depth for every strategy: expand's k direct plus k expanded
        assert case.reading_tokens * 4 >= case.reading_chars
    # Direct results plus linked notes: more to read than direct retrieval, over the task set.
    def tokens(strategy):
        return sum(run.case(task.id, strategy).reading_tokens for task in tasks)
    assert tokens("expand") > tokens("vector")
    # The single-hop billing lookup is in reach of direct vector retrieval.
    assert run.case("billing-database", "vector").recall == 1.0


def test_eval_command_prints_cases_summary_and_highlights(sample_workspace, tmp_path, capsys):
    from workbench.cli import main

    code = main(["--workspace", str(sample_workspace.path), "eval", str(SAMPLE / "tasks.yaml"),
                 "--modes", "vector,expand", "--k", "5", "--md", str(tmp_path / "run.md")])
    out = capsys.readouterr().out
    assert code == 0
    assert "Per case:" in out and "Summary (Δ = strategy - direct, paired, 95% bootstrap CI over tasks)" in out
    assert "redis-impact-login" in out and "Δ recall [95% CI]" in out
    assert "mixed scripts" not in out  # "Δrecall" read as a word mixing Greek and Latin, as a spoofed name would be
    assert "Expansion found a prerequisite:" in out
    assert (tmp_path / "run.md").read_text(encoding="utf-8").startswith("# Evaluation run ")
    saved = sorted((sample_workspace.path / "runs").glob("*.json"), key=lambda p: p.stat().st_mtime)
    assert saved and saved[-1].stem in out
    saved = saved[-1:]
    code = main(["--workspace", str(sample_workspace.path), "eval", "--compare", saved[0].stem, saved[0].stem, "--json"])
    assert code == 0 and '"d_recall": 0.0' in capsys.readouterr().out


def test_eval_command_reports_an_unknown_gold_document(sample_workspace, tmp_path, capsys):
    from workbench.cli import main

    tasks = tmp_path / "tasks.yaml"
    tasks.write_text("tasks:\n  - {id: lost, question: q, gold_documents: [nowhere.md]}\n", encoding="utf-8")
    code = main(["--workspace", str(sample_workspace.path), "eval", str(tasks), "--no-save"])
    err = capsys.readouterr().err
    assert code == 2 and "task 'lost': unknown gold document 'nowhere.md'" in err


def test_the_eval_command_compares_the_evaluate_pages_strategies_by_default(sample_workspace, tmp_path, capsys):
    """One default for both surfaces, co-mention expansion in its own row beside expand."""
    import json

    from workbench.cli import main
    from workbench.evaluate.runner import DEFAULT_STRATEGIES

    assert DEFAULT_STRATEGIES == ("direct", "expand", "expand-comention", "graphrag")
    assert "DEFAULT_STRATEGIES" in (SAMPLE.parent / "pages" / "evaluate.py").read_text(encoding="utf-8")
    tasks = tmp_path / "one.yaml"
    tasks.write_text("tasks:\n  - id: billing\n    question: Which database does the billing service use?\n"
                     "    gold_documents: [architecture/billing-service.md]\n", encoding="utf-8")
    code = main(["--workspace", str(sample_workspace.path), "eval", str(tasks), "--no-save", "--json", "--k", "3"])
    assert code == 0
    assert json.loads(capsys.readouterr().out)["strategies"] == list(DEFAULT_STRATEGIES)
