"""Issue 27, item 2: two different files never share a document id. ``ingest a/notes`` then
``ingest b/notes`` used to replace a's ``notes/x.md`` with b's ("1 updated")."""

from __future__ import annotations

import shutil

import pytest

from workbench.workspace.ingest_pipeline import DocumentIdCollision


def _notes(folder, text):
    (folder / "notes").mkdir(parents=True)
    (folder / "notes" / "x.md").write_text(text, encoding="utf-8")
    return folder / "notes"


def test_a_second_folder_of_the_same_name_is_refused_naming_both_paths(tmp_path, make_workspace, run_cli):
    a = _notes(tmp_path / "a", "# X\n\nThe billing service depends on Kafka.\n")
    b = _notes(tmp_path / "b", "# X\n\nThe billing service depends on Redis.\n")
    ws = make_workspace()
    ws.ingest([a])
    with pytest.raises(DocumentIdCollision) as caught:
        ws.ingest([b])
    message = str(caught.value)
    assert str((a / "x.md").resolve()) in message and str((b / "x.md").resolve()) in message
    assert "nothing was written" in message
    [doc] = ws.documents()
    assert doc.id == "notes/x.md" and doc.source_path == str((a / "x.md").resolve())
    ws.ingest([a])  # re-ingesting the first folder is not a collision
    assert len(ws.documents()) == 1
    ws.close()
    done = run_cli("--workspace", ws.path, "ingest", b)
    assert done.returncode == 1 and "already held by other files" in done.stderr and "Traceback" not in done.stderr


def test_a_moved_folder_takes_its_ids_over(tmp_path, make_workspace):
    a = _notes(tmp_path / "a", "# X\n\nThe billing service depends on Kafka.\n")
    ws = make_workspace()
    ws.ingest([a])
    moved = tmp_path / "c" / "notes"
    moved.parent.mkdir()
    shutil.move(str(a), str(moved))
    ws.ingest([moved])
    [doc] = ws.documents()
    assert doc.source_path == str((moved / "x.md").resolve())
    ws.close()


def test_two_folders_of_one_name_in_one_ingest_keep_the_first_and_name_both(tmp_path, make_workspace):
    a = _notes(tmp_path / "a", "# X\n\nThe billing service depends on Kafka.\n")
    b = _notes(tmp_path / "b", "# X\n\nThe billing service depends on Redis.\n")
    ws = make_workspace()
    report = ws.ingest([a, b])
    [doc] = ws.documents()
    assert doc.source_path == str((a / "x.md").resolve())
    [problem] = [p for p in report.problems if "duplicate document id" in str(p)]
    assert str((a / "x.md").resolve()) in str(problem) and str((b / "x.md").resolve()) in str(problem)
    ws.close()
