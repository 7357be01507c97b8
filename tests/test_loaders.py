"""Tests for workbench.ingest.loaders: files -> Documents, and every problem as a LoadProblem."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from workbench.ingest.loaders import (
    LoadError,
    LoadProblem,
    content_hash,
    iter_files,
    load_file,
    load_paths,
    normalize_timestamp,
)

from tests.conftest import BENCH

HOTPOTQA = BENCH / "hotpotqa" / "corpus.jsonl"


def write(path: Path, content: str | bytes) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content, encoding="utf-8")
    return path


def load_one(path: Path):
    """Load a single file given directly; returns (documents, problems)."""
    result = load_paths([path])
    return result.documents, result.problems


# ----------------------------------------------------------------- ids and walking


def test_folder_ids_are_relative_to_the_roots_parent(tmp_path):
    write(tmp_path / "corpus" / "architecture" / "auth-service.md", "Auth uses Redis.")
    write(tmp_path / "corpus" / "readme.txt", "Hello there.")
    result = load_paths([tmp_path / "corpus"])
    assert [d.id for d in result.documents] == ["corpus/readme.txt", "corpus/architecture/auth-service.md"]
    assert result.documents[1].source_path == str((tmp_path / "corpus/architecture/auth-service.md").resolve())


def test_single_file_id_is_its_name(tmp_path):
    path = write(tmp_path / "deep" / "notes.txt", "Some text.")
    docs, problems = load_one(path)
    assert [d.id for d in docs] == ["notes.txt"] and problems == []


def test_missing_path_raises_load_error(tmp_path):
    with pytest.raises(LoadError, match="no such file"):
        load_paths([tmp_path / "nope"])


def test_hidden_files_and_folders_are_ignored(tmp_path):
    write(tmp_path / "c" / "visible.txt", "seen")
    write(tmp_path / "c" / ".hidden.txt", "unseen")
    write(tmp_path / "c" / ".git" / "config.txt", "unseen")
    assert [f.name for f, _ in iter_files([tmp_path / "c"])] == ["visible.txt"]


def test_iter_files_is_sorted_and_yields_the_root(tmp_path):
    for name in ["b.txt", "a.txt", "sub/c.txt"]:
        write(tmp_path / "c" / name, "x")
    found = list(iter_files([tmp_path / "c"]))
    assert [f.relative_to(tmp_path / "c").as_posix() for f, _ in found] == ["a.txt", "b.txt", "sub/c.txt"]
    assert {root for _, root in found} == {tmp_path / "c"}


def test_symlink_loop_ends(tmp_path):
    write(tmp_path / "c" / "sub" / "a.txt", "x")
    os.symlink(tmp_path / "c", tmp_path / "c" / "sub" / "loop")
    result = load_paths([tmp_path / "c"])
    assert [d.id for d in result.documents] == ["c/sub/a.txt"]


def test_within_reads_only_the_changed_files_and_folders_with_their_roots_ids(tmp_path):
    """What a watch's batch reads: the files and folders it changed, each with the id the whole
    walk gives it; a gone, hidden or outside path, and what lies beside them, are not read."""
    root = tmp_path / "c"
    for name in ["a.txt", "b.txt", "sub/c.txt", "sub/d.txt", "new/e.txt", ".hidden/f.txt"]:
        write(root / name, "x")
    os.symlink(root / "sub", root / "linked")
    changed = [root / "b.txt", root / "new", root / "gone.txt", root / ".hidden" / "f.txt", tmp_path / "elsewhere.txt",
               root / "linked" / "c.txt"]
    result = load_paths([root], within=changed)
    assert [d.id for d in result.documents] == ["c/b.txt", "c/new/e.txt"]
    whole = {d.id for d in load_paths([root]).documents}
    assert {d.id for d in result.documents} <= whole
    assert [d.id for d in load_paths([root / "a.txt"], within=[root / "a.txt"]).documents] == ["a.txt"]
    assert load_paths([root / "a.txt"], within=[root / "b.txt"]).documents == []


# ---------------------------------------------------------------------- text files


def test_txt_title_is_the_stem(tmp_path):
    docs, _ = load_one(write(tmp_path / "release-notes.txt", "Version 2 ships today."))
    assert docs[0].title == "release-notes" and docs[0].kind == "text"
    assert docs[0].text == "Version 2 ships today."


def test_crlf_becomes_newline(tmp_path):
    docs, _ = load_one(write(tmp_path / "a.txt", b"one\r\n\r\ntwo\r\n"))
    assert docs[0].text == "one\n\ntwo\n"


def test_utf8_bom_is_stripped(tmp_path):
    docs, problems = load_one(write(tmp_path / "a.txt", b"\xef\xbb\xbfhello"))
    assert docs[0].text == "hello" and problems == []


def test_empty_and_whitespace_files_are_skipped(tmp_path):
    write(tmp_path / "c" / "empty.txt", "")
    write(tmp_path / "c" / "blank.md", "  \n\n\t")
    result = load_paths([tmp_path / "c"])
    assert result.documents == []
    assert sorted(str(p) for p in result.problems) == ["c/blank.md: empty file, skipped", "c/empty.txt: empty file, skipped"]


def test_binary_with_txt_extension_is_skipped(tmp_path):
    docs, problems = load_one(write(tmp_path / "photo.txt", b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" * 10))
    assert docs == [] and "binary file" in problems[0].message and problems[0].skipped


def test_invalid_utf8_is_decoded_as_latin1_with_a_warning(tmp_path):
    docs, problems = load_one(write(tmp_path / "old.txt", "Café naïve ".encode("utf-8") + "résumé".encode("cp1252")))
    assert docs[0].text == "Café naïve résumé"
    assert len(problems) == 1 and "latin-1" in problems[0].message and not problems[0].skipped


def test_unknown_extension_is_reported(tmp_path):
    write(tmp_path / "img" / "logo.png", b"\x89PNG")
    result = load_paths([tmp_path / "img"])
    assert [str(p) for p in result.problems] == ["img/logo.png: skipped: unsupported extension .png"]


def test_unreadable_file_is_a_problem(tmp_path):
    path = write(tmp_path / "c" / "secret.txt", "classified")
    path.chmod(0)
    try:
        if os.access(path, os.R_OK):  # root reads anything: emulate with a dangling symlink
            path.chmod(0o644)
            path.unlink()
            os.symlink(tmp_path / "gone.txt", path)
        result = load_paths([tmp_path / "c"])
    finally:
        if path.exists():
            path.chmod(0o644)
    assert result.documents == []
    assert result.problems[0].path == "c/secret.txt" and "cannot read" in result.problems[0].message


def test_file_over_the_size_cap_is_skipped(tmp_path, monkeypatch):
    import workbench.ingest.loaders as loaders

    monkeypatch.setattr(loaders, "MAX_FILE_BYTES", 10)
    docs, problems = load_one(write(tmp_path / "big.txt", "x" * 11))
    assert docs == [] and "limit" in problems[0].message


def test_fifty_megabyte_file_loads(tmp_path):
    line = "The auth service depends on Redis and runs on Kubernetes.\n\n"
    path = write(tmp_path / "big.txt", line * (50_000_000 // len(line)))
    docs, problems = load_one(path)
    assert problems == [] and len(docs[0].text) >= 49_000_000


# ------------------------------------------------------------------------ markdown


def test_front_matter_fields_are_read(tmp_path):
    note = """---
title: Login outage
date: 2024-03-01
tags: [incident, auth]
relations:
  - {type: caused_by, target: redis-eviction.md}
  - {type: RESOLVED_BY, target: pool-fix.md}
---
# Heading ignored for the title

The login failed.
"""
    docs, problems = load_one(write(tmp_path / "outage.md", note))
    doc = docs[0]
    assert problems == []
    assert (doc.title, doc.date, doc.tags, doc.kind) == ("Login outage", "2024-03-01", ("incident", "auth"), "markdown")
    assert [(r.relation, r.target) for r in doc.relations] == [("CAUSED_BY", "redis-eviction.md"), ("RESOLVED_BY", "pool-fix.md")]
    assert doc.text.startswith("# Heading") and "---" not in doc.text


def test_relations_as_a_mapping_with_lists(tmp_path):
    note = "---\nrelations:\n  depends_on: [a.md, b.md]\n  references: c.md\n---\nBody text.\n"
    docs, _ = load_one(write(tmp_path / "n.md", note))
    assert [(r.relation, r.target) for r in docs[0].relations] == [
        ("DEPENDS_ON", "a.md"), ("DEPENDS_ON", "b.md"), ("REFERENCES", "c.md")]


def test_unknown_relation_type_is_reported_but_the_note_loads(tmp_path):
    note = "---\nrelations:\n  - {type: LIKES, target: x.md}\n  - {type: extends, target: y.md}\n---\nBody.\n"
    docs, problems = load_one(write(tmp_path / "n.md", note))
    assert [r.relation for r in docs[0].relations] == ["EXTENDS"]
    assert len(problems) == 1 and "LIKES" in problems[0].message and not problems[0].skipped


def test_comma_string_tags_and_string_date(tmp_path):
    note = "---\ntags: 'ops, db ,  '\ndate: 'March 2024'\n---\nBody.\n"
    docs, _ = load_one(write(tmp_path / "n.md", note))
    assert docs[0].tags == ("ops", "db") and docs[0].date == "March 2024"


def test_datetime_date_becomes_iso(tmp_path):
    docs, _ = load_one(write(tmp_path / "n.md", "---\ndate: 2024-03-01 10:30:00\n---\nBody.\n"))
    assert docs[0].date == "2024-03-01T10:30:00"


def test_title_defaults_to_first_heading_then_stem(tmp_path):
    with_heading, _ = load_one(write(tmp_path / "a.md", "Intro line\n\n# Real Title\n\nText."))
    without, _ = load_one(write(tmp_path / "plain-note.md", "Just text."))
    assert with_heading[0].title == "Real Title" and without[0].title == "plain-note"


def test_bad_front_matter_loads_whole_file_as_text(tmp_path):
    note = "---\ntitle: [unclosed\ntags: : :\n---\nBody.\n"
    docs, problems = load_one(write(tmp_path / "bad.md", note))
    assert docs[0].text == note and docs[0].title == "bad"
    assert problems[0].path == "bad.md" and "front matter" in problems[0].message and not problems[0].skipped


def test_unclosed_front_matter_is_reported(tmp_path):
    docs, problems = load_one(write(tmp_path / "open.md", "---\ntitle: x\nBody without a closing line.\n"))
    assert docs[0].text.startswith("---") and "closing" in problems[0].message


def test_horizontal_rule_in_body_is_kept(tmp_path):
    docs, _ = load_one(write(tmp_path / "n.md", "---\ntitle: T\n---\nAbove.\n\n---\n\nBelow.\n"))
    assert docs[0].text == "Above.\n\n---\n\nBelow.\n"


# ----------------------------------------------------------------- conversations


@pytest.mark.parametrize("speaker_key,text_key,time_key", [
    ("speaker", "text", "timestamp"),
    ("role", "content", "time"),
    ("author", "message", "ts"),
    ("user", "body", "created_at"),
    ("from", "text", "date"),
])
def test_conversation_field_name_variants(tmp_path, speaker_key, text_key, time_key):
    lines = [
        {speaker_key: "alice", text_key: "The deploy failed.", time_key: "2024-03-01T09:00:00Z"},
        {speaker_key: "bob", text_key: "Redis was full.", time_key: "2024-03-01T09:05:00Z"},
    ]
    docs, problems = load_one(write(tmp_path / "chat.jsonl", "\n".join(json.dumps(x) for x in lines)))
    doc = docs[0]
    assert problems == [] and doc.kind == "conversation" and doc.id == "chat.jsonl"
    assert doc.text == "alice: The deploy failed.\n\nbob: Redis was full."
    assert [doc.text[s.start:s.end] for s in doc.segments] == ["alice: The deploy failed.", "bob: Redis was full."]
    assert [(s.speaker, s.timestamp) for s in doc.segments] == [
        ("alice", "2024-03-01T09:00:00+00:00"), ("bob", "2024-03-01T09:05:00+00:00")]


def test_epoch_timestamps_are_normalised():
    assert normalize_timestamp(1709283600) == "2024-03-01T09:00:00+00:00"
    assert normalize_timestamp(1709283600000) == "2024-03-01T09:00:00+00:00"
    assert normalize_timestamp("1709283600") == "2024-03-01T09:00:00+00:00"
    assert normalize_timestamp("sometime") == "sometime"


def test_json_list_of_messages_is_a_conversation(tmp_path):
    data = {"messages": [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}]}
    docs, _ = load_one(write(tmp_path / "chat.json", json.dumps(data)))
    assert docs[0].kind == "conversation" and [s.speaker for s in docs[0].segments] == ["user", "assistant"]


# ------------------------------------------------------------------------ records


def test_records_jsonl_gives_one_document_per_record(tmp_path):
    rows = [{"id": f"r{i}", "title": f"Title {i}", "text": f"Text number {i}."} for i in range(5)]
    docs, problems = load_one(write(tmp_path / "corpus.jsonl", "\n".join(json.dumps(r) for r in rows) + "\n"))
    assert problems == []
    assert [(d.id, d.title, d.text, d.kind) for d in docs] == [
        (f"corpus.jsonl#r{i}", f"Title {i}", f"Text number {i}.", "record") for i in range(5)]


def test_records_in_a_folder_get_the_folder_prefix(tmp_path):
    write(tmp_path / "bench" / "corpus.jsonl", json.dumps({"id": "x1", "title": "X", "text": "Body."}))
    assert [d.id for d in load_paths([tmp_path / "bench"]).documents] == ["bench/corpus.jsonl#x1"]


def test_json_records_list_and_records_key(tmp_path):
    rows = [{"id": "a", "title": "A", "text": "Alpha."}, {"id": "b", "title": "B", "text": "Beta."}]
    as_list, _ = load_one(write(tmp_path / "l.json", json.dumps(rows)))
    as_key, _ = load_one(write(tmp_path / "k.json", json.dumps({"records": rows})))
    assert [d.id for d in as_list] == ["l.json#a", "l.json#b"]
    assert [d.id for d in as_key] == ["k.json#a", "k.json#b"]


def test_malformed_jsonl_lines_are_reported_with_numbers_and_good_lines_kept(tmp_path):
    lines = [
        json.dumps({"id": "1", "title": "One", "text": "First."}),
        '{"id": "2", "title": "Two" "text": "broken"}',
        json.dumps({"id": "3", "title": "Three", "text": "Third."}),
        json.dumps({"unrelated": True}),
        "",
        json.dumps([1, 2]),
    ]
    docs, problems = load_one(write(tmp_path / "bad.jsonl", "\n".join(lines)))
    assert [d.id for d in docs] == ["bad.jsonl#1", "bad.jsonl#3"]
    assert [p.line for p in problems] == [2, 4, 6]
    assert str(problems[0]) == "bad.jsonl: line 2: invalid JSON (Expecting ',' delimiter)"
    assert "neither a message" in problems[1].message


def test_duplicate_record_ids_are_reported(tmp_path):
    rows = [{"id": "a", "title": "A", "text": "One."}, {"id": "a", "title": "A2", "text": "Two."}]
    docs, problems = load_one(write(tmp_path / "d.jsonl", "\n".join(json.dumps(r) for r in rows)))
    assert [d.text for d in docs] == ["One."] and problems[0].line == 2 and "duplicate" in problems[0].message


def test_deeply_nested_json_is_a_problem_not_a_crash(tmp_path):
    docs, problems = load_one(write(tmp_path / "deep.json", "[" * 100000))
    jsonl_docs, jsonl_problems = load_one(write(tmp_path / "deep.jsonl", "[" * 100000 + "]" * 100000))
    assert docs == [] and problems and problems[0].skipped
    assert jsonl_docs == [] and jsonl_problems[0].line == 1


def test_hotpotqa_slice_loads_one_document_per_passage():
    result = load_paths([HOTPOTQA])
    assert len(result.documents) == 300 and result.problems == []
    assert all(d.id.startswith("corpus.jsonl#hotpotqa-") and d.kind == "record" for d in result.documents)


# ---------------------------------------------------------------------- hashing


def test_content_hash_changes_with_each_field(tmp_path):
    from workbench.model import DeclaredRelation, Segment

    base = content_hash("text", "title")
    variants = [
        content_hash("text2", "title"),
        content_hash("text", "title2"),
        content_hash("text", "title", date="2024-01-01"),
        content_hash("text", "title", tags=("a",)),
        content_hash("text", "title", relations=(DeclaredRelation("EXTENDS", "x"),)),
        content_hash("text", "title", segments=(Segment(0, 4, "al"),)),
    ]
    assert len({base, *variants}) == 7


def test_editing_front_matter_changes_the_documents_hash(tmp_path):
    path = write(tmp_path / "n.md", "---\ntags: [a]\n---\nBody.\n")
    before = load_one(path)[0][0].content_hash
    write(path, "---\ntags: [b]\n---\nBody.\n")
    assert load_one(path)[0][0].content_hash != before


def test_load_file_never_raises_for_a_folder_given_as_file(tmp_path):
    (tmp_path / "odd.txt").mkdir()
    docs, problems = load_file(tmp_path / "odd.txt", tmp_path / "odd.txt")
    assert docs == [] and problems and isinstance(problems[0], LoadProblem)


def test_a_workspace_inside_the_folder_read_is_left_out_in_one_line(tmp_path, make_workspace):
    """``./workspace`` (the default) inside the notes being ingested: its record, vector store and
    saved runs are the workbench's own files, never documents, and are named once."""
    notes = tmp_path / "notes"
    write(notes / "a.md", "# A\n\nAnn Lee met Bob Stone in Oslo.\n")
    ws = make_workspace("notes/workspace")
    report = ws.ingest([notes])
    write(ws.path / "eval_runs" / "run.json", json.dumps([{"id": "r1", "title": "A run", "text": "not a note"}]))
    again = load_paths([notes])
    assert [d.id for d in again.documents] == ["notes/a.md"]
    assert [str(p) for p in again.problems] == [
        "notes/workspace: a workbench workspace (its record, vector store and index files): not read, skipped"]
    assert report.documents_added == 1 and ws.stats()["documents"] == 1
    named = load_paths([ws.path])  # the workspace itself, named directly
    assert not named.documents and len(named.problems) == 1 and "not read, skipped" in str(named.problems[0])
