"""Bad input never stops a batch: each bad file is named with its problem, the good ones load."""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path

import pytest

import workbench.ingest.loaders as loaders
from workbench.ingest.chunking import chunk_document
from workbench.ingest.loaders import load_paths


def _problems_of(result, name: str) -> list[str]:
    return [str(p) for p in result.problems if Path(p.path.split("#")[0]).name == name]


def _load_with_deadline(paths, seconds: float = 30):
    """``load_paths`` in a thread, so a loader that blocks (on a FIFO, say) fails instead of hanging."""
    out: dict = {}
    thread = threading.Thread(target=lambda: out.setdefault("result", load_paths(paths)), daemon=True)
    thread.start()
    thread.join(seconds)
    assert not thread.is_alive(), f"loading {paths} did not finish within {seconds} s"
    return out["result"]


@pytest.fixture
def messy(tmp_path) -> Path:
    """A folder with two good files beside every kind of small bad file."""
    folder = tmp_path / "messy"
    folder.mkdir()
    (folder / "good.md").write_text("# Search\n\nThe search service depends on Elasticsearch.\n", encoding="utf-8")
    (folder / "good.txt").write_text("The billing service is backed by PostgreSQL.\n", encoding="utf-8")
    (folder / "empty.txt").write_bytes(b"")
    (folder / "blank.md").write_text("  \n\n\t\n")
    (folder / "binary.txt").write_bytes(bytes(range(256)) * 8)
    (folder / "image.md").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + os.urandom(512))
    (folder / "latin1.txt").write_bytes("The café service uses Redis.\n".encode("cp1252"))
    (folder / "mixed.txt").write_bytes("Zoë’s queue ".encode("utf-8") + "and Zoë’s worker\n".encode("cp1252"))
    (folder / "chat.jsonl").write_text(
        '{"speaker": "@ana", "text": "the payments API depends on Kafka"}\n'
        '{broken json\n'
        '[1, 2]\n'
        '{"speaker": "@bo", "text": "ok"}\n'
        '{"nothing": "useful"}\n', encoding="utf-8")
    (folder / "deep.json").write_text("[" * 200_000 + "]" * 200_000)
    (folder / "deep.jsonl").write_text('{"a":' * 100_000 + "1" + "}" * 100_000 + "\n"
                                       + '{"id": "r1", "title": "Kept", "text": "The kept record uses Redis."}\n')
    (folder / "scalar.json").write_text("42")
    (folder / "unknown.xyz").write_text("The hidden service depends on nothing.\n")
    (folder / "noext").write_text("no extension\n")
    os.symlink(folder / "missing.md", folder / "dangling.md")
    os.symlink(folder / "loop_b.txt", folder / "loop_a.txt")
    os.symlink(folder / "loop_a.txt", folder / "loop_b.txt")
    (folder / "sub").mkdir()
    os.symlink(folder, folder / "sub" / "back_to_top")  # a folder loop
    os.mkfifo(folder / "pipe.txt")  # nobody ever writes to it: reading it would block for ever
    return folder


EXPECTED_PROBLEMS = {
    "empty.txt": "empty file",
    "blank.md": "empty file",
    "binary.txt": "binary file",
    "image.md": "binary file",
    "latin1.txt": "not valid UTF-8",
    "mixed.txt": "not valid UTF-8",
    "deep.json": "nested too deeply",
    "deep.jsonl": "line 1: JSON nested too deeply",
    "scalar.json": "expected a list",
    "unknown.xyz": "unsupported extension .xyz",
    "noext": "unsupported extension (none)",
    "dangling.md": "cannot read file",
    "loop_a.txt": "cannot read file",
    "pipe.txt": "not a regular file",
}


def test_every_bad_file_is_named_with_its_problem_and_good_files_load(messy):
    result = _load_with_deadline([messy])
    for name, problem in EXPECTED_PROBLEMS.items():
        found = _problems_of(result, name)
        assert any(problem in p for p in found), f"{name}: expected {problem!r}, got {found}"
    ids = {d.id for d in result.documents}
    assert {"messy/good.md", "messy/good.txt", "messy/latin1.txt", "messy/mixed.txt",
            "messy/chat.jsonl", "messy/deep.jsonl#r1"} <= ids
    assert not any("back_to_top" in i for i in ids)  # the folder loop was not entered twice


def test_invalid_and_mixed_encodings_keep_every_readable_character(messy):
    docs = {d.id: d for d in _load_with_deadline([messy]).documents}
    assert docs["messy/latin1.txt"].text == "The café service uses Redis.\n"
    assert docs["messy/mixed.txt"].text == "Zoë’s queue and Zoë’s worker\n"


def test_malformed_jsonl_lines_are_reported_by_number_and_good_lines_kept(messy):
    result = _load_with_deadline([messy / "chat.jsonl"])
    lines = sorted(p.line for p in result.problems)
    assert lines == [2, 3, 5]
    assert all(str(p).startswith("chat.jsonl: line ") for p in result.problems)
    (doc,) = result.documents
    assert doc.text == "@ana: the payments API depends on Kafka\n\n@bo: ok"


def test_huge_json_of_many_records_loads_every_record(tmp_path):
    records = [{"id": f"r{i}", "title": f"Record {i}", "text": f"Record {i} uses Redis."} for i in range(20_000)]
    path = tmp_path / "huge.json"
    path.write_text(json.dumps(records), encoding="utf-8")
    result = _load_with_deadline([path], seconds=60)
    assert len(result.documents) == 20_000 and not result.problems


def test_a_50_mb_file_loads_as_one_document(tmp_path):
    line = "The archive service depends on the cold storage tier. " * 18 + "\n"
    path = tmp_path / "big.txt"
    with open(path, "w", encoding="utf-8") as out:
        for _ in range(50 * 1024 * 1024 // len(line) + 1):
            out.write(line)
    assert path.stat().st_size >= 50 * 1024 * 1024
    result = _load_with_deadline([path], seconds=120)
    assert not result.problems
    (doc,) = result.documents
    assert len(doc.text) == path.stat().st_size


def test_a_file_over_the_size_limit_is_skipped_with_its_size(tmp_path, monkeypatch):
    monkeypatch.setattr(loaders, "MAX_FILE_BYTES", 1_000_000)
    (tmp_path / "big.txt").write_text("x" * 3_000_000)
    (tmp_path / "small.txt").write_text("small\n")
    result = load_paths([tmp_path])
    (problem,) = result.problems
    assert problem.path.endswith("big.txt") and "3 MB is larger than the 1 MB limit" in problem.message
    assert [d.id.rsplit("/", 1)[-1] for d in result.documents] == ["small.txt"]


def test_a_single_5_mb_line_is_chunked_into_bounded_chunks_covering_it(tmp_path):
    path = tmp_path / "oneline.txt"
    path.write_text("word" * (5 * 1024 * 1024 // 4), encoding="utf-8")
    (doc,) = _load_with_deadline([path], seconds=60).documents
    chunks = chunk_document(doc, max_chars=1000)
    assert max(len(c.text) for c in chunks) <= 1000
    assert "".join(c.text for c in chunks) == doc.text


def test_a_file_that_cannot_be_read_is_named_and_the_rest_load(tmp_path, monkeypatch):
    # Tests run as root, where chmod 000 does not stop reads: make the read itself fail.
    (tmp_path / "locked.txt").write_text("secret\n")
    (tmp_path / "open.txt").write_text("open\n")
    real_read = Path.read_bytes

    def read_bytes(self):
        if self.name == "locked.txt":
            raise PermissionError(13, "Permission denied", str(self))
        return real_read(self)

    monkeypatch.setattr(Path, "read_bytes", read_bytes)
    result = load_paths([tmp_path])
    assert [str(p).split("/")[-1] for p in result.problems] == ["locked.txt: cannot read file (Permission denied), skipped"]
    assert [d.text for d in result.documents] == ["open\n"]


def test_ingest_of_a_messy_folder_through_the_cli_names_each_bad_file_and_keeps_the_good(messy, tmp_path, run_cli):
    result = run_cli("--workspace", tmp_path / "ws", "ingest", messy)
    assert result.returncode == 0, result.stderr
    assert "Traceback" not in result.stderr
    for name, problem in EXPECTED_PROBLEMS.items():
        assert any(name in line and problem in line for line in result.stdout.splitlines()), (name, result.stdout)
    # good.md, good.txt, latin1.txt, mixed.txt, chat.jsonl and the good record of deep.jsonl
    assert "workspace: 6 documents" in result.stdout
    entities = run_cli("--workspace", tmp_path / "ws", "entities", "--json")
    names = {e["name"] for e in json.loads(entities.stdout)}
    assert {"Elasticsearch", "PostgreSQL", "Kafka"} <= names


def test_a_path_that_does_not_exist_stops_with_one_line_naming_it(tmp_path, run_cli):
    result = run_cli("--workspace", tmp_path / "ws", "ingest", tmp_path / "nowhere")
    assert result.returncode == 1
    assert "nowhere" in result.stderr and "no such file" in result.stderr
    assert "Traceback" not in result.stderr


def test_a_folder_with_nothing_readable_says_so_and_names_the_kinds_it_reads(tmp_path, run_cli):
    empty, odd = tmp_path / "empty", tmp_path / "odd"
    empty.mkdir()
    odd.mkdir()
    (odd / "notes.yaml").write_text("a: 1\n", encoding="utf-8")
    result = run_cli("--workspace", tmp_path / "ws", "ingest", empty)
    assert result.returncode == 0 and "Traceback" not in result.stderr, result.stderr
    assert f"nothing to ingest under {empty}: no file of a kind it reads (.txt .md" in result.stdout
    assert "ingested 0 documents" in result.stdout and "workspace: 0 documents, 0 chunks" in result.stdout
    odd_run = run_cli("--workspace", tmp_path / "ws", "ingest", odd)
    assert "notes.yaml: skipped" in odd_run.stdout and "nothing to ingest" not in odd_run.stdout
