"""Task sets: loading YAML and JSONL, resolving gold names to stored ids, clear errors."""

from __future__ import annotations

import json

import pytest

from workbench.evaluate.tasks import EvalTask, TaskError, load_resolved_tasks, load_tasks, parse_tasks, resolve_tasks

from tests.conftest import SAMPLE

DOC_IDS = ["corpus/teams/ownership.md", "corpus/teams/leads.md", "corpus/notes/leads.md",
           "corpus/glossary.json#redis", "corpus/architecture/auth-service.md"]


def write_yaml(tmp_path, body: str):
    path = tmp_path / "tasks.yaml"
    path.write_text(body, encoding="utf-8")
    return path


def test_yaml_task_file_loads_every_field(tmp_path):
    path = write_yaml(tmp_path, """
tasks:
  - id: t1
    question: "Who owns billing?"
    gold_documents: [teams/ownership.md]
    gold_entities: [billing service]
    gold_path: [billing service, payments team]
    tags: [single-hop, irrelevant]
    note: one fact
""")
    [task] = load_tasks(path)
    assert task == EvalTask("t1", "Who owns billing?", ("teams/ownership.md",), (), ("billing service",),
                            ("billing service", "payments team"), ("single-hop", "irrelevant"), "one fact")
    assert task.level == "document"


def test_jsonl_task_file_loads_with_gold_chunks(tmp_path):
    path = tmp_path / "tasks.jsonl"
    path.write_text(json.dumps({"id": "c", "question": "q?", "gold_chunks": ["abc"]}) + "\n\n", encoding="utf-8")
    [task] = load_tasks(path)
    assert task.gold_chunks == ("abc",) and task.level == "chunk" and task.gold == ("abc",)


@pytest.mark.parametrize("item, message", [
    ({"question": "q"}, "missing 'id'"),
    ({"id": "a", "gold_documents": ["x"]}, "missing 'question'"),
    ({"id": "a", "question": "q"}, "no gold_documents or gold_chunks"),
    ({"id": "a", "question": "q", "gold_documents": ["x"], "answer": "y"}, "unknown field(s) answer"),
])
def test_malformed_task_names_the_problem(item, message):
    with pytest.raises(TaskError, match="tasks.yaml") as err:
        parse_tasks([item], "tasks.yaml")
    assert message in str(err.value)


def test_duplicate_task_id_is_an_error():
    item = {"id": "a", "question": "q", "gold_documents": ["x"]}
    with pytest.raises(TaskError, match="'a': duplicate task id"):
        parse_tasks([item, item])


def test_missing_task_file_is_a_task_error(tmp_path):
    with pytest.raises(TaskError, match="task file not found"):
        load_tasks(tmp_path / "nope.yaml")


def test_gold_documents_resolve_by_id_relative_path_file_name_and_record():
    tasks = parse_tasks([{"id": "a", "question": "q", "gold_documents": [
        "corpus/teams/ownership.md", "architecture/auth-service.md", "auth-service.md", "glossary.json#redis"]}])
    [task] = resolve_tasks(tasks, DOC_IDS)
    assert task.gold_documents == ("corpus/teams/ownership.md", "corpus/architecture/auth-service.md",
                                   "corpus/glossary.json#redis")


def test_gold_path_relative_to_task_file_folder_resolves(tmp_path):
    corpus = tmp_path / "corpus"
    (corpus / "teams").mkdir(parents=True)
    tasks = parse_tasks([{"id": "a", "question": "q", "gold_documents": ["teams/leads.md"]}])
    [task] = resolve_tasks(tasks, DOC_IDS, task_file=corpus / "tasks.yaml")
    assert task.gold_documents == ("corpus/teams/leads.md",)


def test_ambiguous_file_name_is_an_unknown_document():
    tasks = parse_tasks([{"id": "amb", "question": "q", "gold_documents": ["leads.md"]}])
    with pytest.raises(TaskError, match=r"task 'amb': unknown gold document 'leads.md'"):
        resolve_tasks(tasks, DOC_IDS)


def test_unknown_document_error_names_file_task_and_document(tmp_path):
    path = write_yaml(tmp_path, "tasks:\n  - {id: t9, question: q, gold_documents: [missing/note.md]}\n")
    tasks = load_tasks(path)
    with pytest.raises(TaskError) as err:
        resolve_tasks(tasks, DOC_IDS, task_file=path)
    text = str(err.value)
    assert str(path) in text and "'t9'" in text and "'missing/note.md'" in text


def test_unknown_chunk_error_names_the_chunk():
    tasks = parse_tasks([{"id": "c1", "question": "q", "gold_chunks": ["nochunk"]}])
    with pytest.raises(TaskError, match=r"task 'c1': unknown gold chunk 'nochunk'"):
        resolve_tasks(tasks, DOC_IDS, chunk_ids={"other"})


def test_sample_tasks_resolve_against_the_sample_workspace(sample_workspace):
    tasks = load_resolved_tasks(sample_workspace, SAMPLE / "tasks.yaml")
    stored = {d.id for d in sample_workspace.store.documents()}
    assert len(tasks) >= 20
    assert all(set(t.gold_documents) <= stored for t in tasks)
    kinds = {tag for t in tasks for tag in t.tags}
    assert {"helps", "irrelevant", "contradicts", "single-hop", "multi-hop"} <= kinds
