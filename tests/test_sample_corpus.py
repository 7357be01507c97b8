"""The bundled sample corpus parses in every format the loaders accept, and its task set is sound.

These tests read the files directly (not through the loaders), so a broken corpus file is
reported here by name rather than as a loader failure somewhere else.
"""

from __future__ import annotations

import json
import re
from datetime import date
from pathlib import Path

import pytest
import yaml

from workbench.model import DECLARED_RELATION_TYPES

from tests.conftest import SAMPLE as CORPUS
DOCUMENT_SUFFIXES = {".md", ".txt", ".jsonl", ".json"}
DATE_PATTERN = re.compile(r"^\d{4}-\d{2}-\d{2}$")
TIMESTAMP_PATTERN = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$")
TASK_FIELDS = {"id", "question", "gold_documents", "gold_entities", "tags", "note"}
OLDER_SESSION_NOTE = "decisions/2023-11-session-store.md"


def _documents(suffix: str) -> list[Path]:
    return sorted(CORPUS.rglob(f"*{suffix}"))


def _front_matter(path: Path) -> dict:
    """The YAML between the leading ``---`` lines, or an empty dict when there is none."""
    text = path.read_text(encoding="utf-8")
    if not text.startswith("---\n"):
        return {}
    head, sep, _ = text[4:].partition("\n---\n")
    assert sep, f"{path}: front matter opened with '---' but never closed"
    meta = yaml.safe_load(head) or {}
    assert isinstance(meta, dict), f"{path}: front matter must be a mapping"
    return meta


def _body(path: Path) -> str:
    text = path.read_text(encoding="utf-8")
    if text.startswith("---\n"):
        text = text[4:].partition("\n---\n")[2]
    return text


def _paragraphs(path: Path) -> list[str]:
    return [p.strip() for p in re.split(r"\n\s*\n", _body(path)) if p.strip()]


def _rel(path: Path) -> str:
    return path.relative_to(CORPUS).as_posix()


def _tasks() -> list[dict]:
    return yaml.safe_load((CORPUS / "tasks.yaml").read_text(encoding="utf-8"))["tasks"]


def test_corpus_is_small_and_holds_only_loadable_files():
    files = [p for p in CORPUS.rglob("*") if p.is_file()]
    documents = [p for p in files if p.suffix in DOCUMENT_SUFFIXES]
    others = {_rel(p) for p in files if p.suffix not in DOCUMENT_SUFFIXES}
    assert 20 <= len(documents) <= 35
    assert others == {"tasks.yaml"}, "only tasks.yaml may sit beside the documents"


def test_file_names_are_unique_so_relation_targets_resolve():
    names = [p.name for p in CORPUS.rglob("*") if p.is_file()]
    assert len(names) == len(set(names))


@pytest.mark.parametrize("path", _documents(".md"), ids=_rel)
def test_markdown_front_matter_has_valid_fields(path):
    meta = _front_matter(path)
    assert set(meta) <= {"title", "date", "tags", "relations"}, f"{path}: unknown keys {set(meta)}"
    assert isinstance(meta.get("title", ""), str)
    if "date" in meta:
        stated = meta["date"]
        text = stated.isoformat() if isinstance(stated, date) else str(stated)
        assert DATE_PATTERN.match(text), f"{path}: date {stated!r} is not YYYY-MM-DD"
        date.fromisoformat(text)
    tags = meta.get("tags", [])
    assert isinstance(tags, list) and all(isinstance(t, str) for t in tags)


@pytest.mark.parametrize("path", _documents(".md"), ids=_rel)
def test_declared_relations_name_a_known_type_and_an_existing_note(path):
    names = {p.name for p in CORPUS.rglob("*") if p.is_file()}
    for relation in _front_matter(path).get("relations", []):
        assert set(relation) == {"type", "target"}, f"{path}: relation {relation}"
        assert relation["type"] in DECLARED_RELATION_TYPES
        assert relation["target"] in names, f"{path}: target {relation['target']} does not exist"
        assert relation["target"] != path.name


def test_contradicting_note_is_dated_after_the_note_it_contradicts():
    pairs = []
    for path in _documents(".md"):
        meta = _front_matter(path)
        for relation in meta.get("relations", []):
            if relation["type"] == "CONTRADICTS":
                (target,) = [p for p in CORPUS.rglob(relation["target"])]
                pairs.append((str(meta["date"]), str(_front_matter(target)["date"])))
    assert pairs, "the corpus needs at least one CONTRADICTS relation"
    assert all(later > earlier for later, earlier in pairs)


@pytest.mark.parametrize("path", _documents(".jsonl"), ids=_rel)
def test_conversation_lines_are_messages_with_handles_and_timestamps(path):
    lines = path.read_text(encoding="utf-8").splitlines()
    assert lines
    stamps = []
    for number, line in enumerate(lines, start=1):
        message = json.loads(line)
        assert set(message) == {"speaker", "text", "timestamp"}, f"{path}:{number}"
        assert message["speaker"].startswith("@") and message["text"].strip()
        assert TIMESTAMP_PATTERN.match(message["timestamp"]), f"{path}:{number}"
        stamps.append(message["timestamp"])
    assert stamps == sorted(stamps), f"{path}: messages out of time order"


def test_incident_channel_is_a_realistic_length():
    lines = (CORPUS / "chat" / "incident-channel.jsonl").read_text(encoding="utf-8").splitlines()
    assert 15 <= len(lines) <= 30


@pytest.mark.parametrize("path", _documents(".json"), ids=_rel)
def test_records_file_is_a_list_of_id_title_text(path):
    records = json.loads(path.read_text(encoding="utf-8"))
    assert isinstance(records, list) and records
    assert all(set(r) == {"id", "title", "text"} for r in records)
    assert len({r["id"] for r in records}) == len(records)


@pytest.mark.parametrize(
    "relative, sentence",
    [
        ("architecture/login-flow.md", "The login flow depends on the auth service."),
        ("architecture/auth-service.md", "The Auth Service relies on the token cache."),
        ("incidents/2024-05-02-login-outage.md", "AuthService depends on the token cache."),
        ("infrastructure/redis.md", "The token cache is backed by Redis."),
        ("infrastructure/platform-changelog.md", "Redis 7.2 was rolled out to all regions in March."),
        ("teams/ownership.md", "The auth service is owned by the Identity team."),
        ("teams/ownership.md", "The Platform team owns Redis."),
    ],
)
def test_redis_chain_fact_opens_its_own_paragraph(relative, sentence):
    paragraphs = _paragraphs(CORPUS / relative)
    assert any(p.endswith(sentence) or p.startswith(sentence) for p in paragraphs)


def test_auth_to_token_cache_edge_is_stated_in_exactly_two_documents():
    statement = re.compile(r"\b(?:Auth Service|auth service|auth-service|AuthService) (?:relies|depends) on the token cache\.")
    stating = {_rel(p) for p in CORPUS.rglob("*") if p.is_file() and statement.search(p.read_text(encoding="utf-8"))}
    assert len(stating) == 2


def test_every_name_variant_of_the_auth_service_occurs():
    text = "\n".join(p.read_text(encoding="utf-8") for p in CORPUS.rglob("*") if p.suffix in DOCUMENT_SUFFIXES)
    for variant in ("The Auth Service", "auth service", "auth-service", "AuthService"):
        assert variant in text


def test_surviving_services_never_state_a_dependency_on_the_redis_chain():
    survivors = ("search service", "billing service", "reporting pipeline", "notification worker")
    chain = re.compile(r"\b(?:redis|token cache|auth service)\b", re.IGNORECASE)
    for path in CORPUS.rglob("*.md"):
        for sentence in re.split(r"(?<=\.)\s+", _body(path)):
            if any(s in sentence.lower() for s in survivors) and chain.search(sentence):
                pytest.fail(f"{_rel(path)}: a survivor is tied to the Redis chain: {sentence!r}")


def test_chinese_note_holds_the_distinctive_term():
    assert "缓存雪崩" in (CORPUS / "zh" / "缓存说明.md").read_text(encoding="utf-8")


def test_tasks_follow_the_schema_with_unique_ids():
    tasks = _tasks()
    assert len(tasks) >= 22
    assert len({t["id"] for t in tasks}) == len(tasks)
    for task in tasks:
        assert {"id", "question", "gold_documents", "tags"} <= set(task) <= TASK_FIELDS, task.get("id")
        assert task["question"].strip() and task["gold_documents"] and task["tags"]
        assert all(isinstance(e, str) for e in task.get("gold_entities", []))


def test_every_gold_document_exists():
    missing = [(t["id"], d) for t in _tasks() for d in t["gold_documents"] if not (CORPUS / d).is_file()]
    assert not missing


def test_task_set_covers_each_kind_of_question():
    tags = {tag for task in _tasks() for tag in task["tags"]}
    assert {"multi-hop", "single-hop", "helps", "irrelevant", "outdated", "contradicts"} <= tags


def test_outdated_and_contradicts_tasks_never_count_the_contradicted_note_as_gold():
    for task in _tasks():
        if {"outdated", "contradicts"} & set(task["tags"]):
            assert OLDER_SESSION_NOTE not in task["gold_documents"], task["id"]
