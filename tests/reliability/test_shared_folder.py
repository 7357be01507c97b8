"""Issue 57, items 1 and 7: a workspace folder others can write to. Links planted at the names of
derived files' temporaries made ``stats`` and ``ingest`` overwrite the links' targets; a derived
file that is a link was read through; a small compressed member inflated to gigabytes."""

from __future__ import annotations

import io
import os
import zipfile

import numpy as np
import pytest

from workbench.runtime.array_file import ArrayFileUnusable, read_array_file, read_manifest, write_array_file
from workbench.context_graph import derivation_rows, graph_snapshot, name_scan
from workbench.vectors import entity_vectors

from tests.conftest import reopened

DERIVED = (graph_snapshot.FILE_NAME, name_scan.FILE_NAME, derivation_rows.FILE_NAME, entity_vectors.FILE_NAME,
           entity_vectors.DELTA_FILE_NAME)


@pytest.fixture
def small(tmp_path, make_workspace, write_corpus):
    ws = make_workspace()
    ws.ingest([write_corpus(tmp_path / "corpus", 6)])
    return ws


def _plant(folder, name, target):
    """A link at the name an old writer of this process gave its temporary for ``name``."""
    link = folder / f".{name}.{os.getpid()}.tmp"
    link.symlink_to(target)
    return link


def test_a_link_at_a_temporary_name_is_not_written_through(tmp_path):
    outside = tmp_path / "outside.txt"
    outside.write_bytes(b"not yours")
    folder = tmp_path / "ws"
    folder.mkdir()
    _plant(folder, "index.npz", outside)
    write_array_file(folder / "index.npz", "example", 1, "v1", {"counts": np.arange(3)})
    assert outside.read_bytes() == b"not yours"
    assert read_array_file(folder / "index.npz", "example", 1, "v1")[1]["counts"].tolist() == [0, 1, 2]
    assert not (folder / "index.npz").is_symlink()


def test_an_ingest_writes_no_derived_file_through_planted_links(small, tmp_path, write_corpus):
    outside = tmp_path / "outside"
    outside.mkdir()
    targets = {}
    for name in DERIVED:
        targets[name] = outside / name
        targets[name].write_bytes(b"not yours")
        _plant(small.path, name, targets[name])
    small.ingest([write_corpus(tmp_path / "corpus", 9)])  # three more documents: every derived file again
    small.corrections.add_alias("queue number 5", "queue number 6")
    assert len(small.graph) > 0 and small.entity_vectors.damage() is None
    assert {name: target.read_bytes() for name, target in targets.items()} == dict.fromkeys(DERIVED, b"not yours")


def test_a_derived_file_that_is_a_link_is_rebuilt_not_read_through(small, tmp_path):
    snapshot = small.path / graph_snapshot.FILE_NAME
    assert small.graph is not None and snapshot.is_file()
    elsewhere = tmp_path / "elsewhere.npz"
    os.replace(snapshot, elsewhere)  # a good snapshot, but not a file of this folder
    snapshot.symlink_to(elsewhere)
    before = elsewhere.read_bytes()
    with pytest.raises(ArrayFileUnusable, match="symbolic link"):
        read_manifest(snapshot, graph_snapshot.KIND, graph_snapshot.FORMAT)
    ws = reopened(small)
    try:
        assert len(ws.graph) == len(small.graph)
        assert ws.derivation.snapshot_status.startswith("rebuilt") and "symbolic link" in ws.derivation.snapshot_status
    finally:
        ws.close()
    assert not snapshot.is_symlink() and snapshot.is_file()  # replaced by the rebuilt file
    assert elsewhere.read_bytes() == before


def _with_compressed_manifest(path, padding: int) -> None:
    """Rewrite ``path`` with its manifest member deflated and ``padding`` spaces after its JSON:
    still a valid manifest, a few kilobytes on disk, ``padding`` bytes inflated."""
    with zipfile.ZipFile(path) as archive:
        members = {info.filename: archive.read(info) for info in archive.infolist()}
    manifest = np.lib.format.read_array(io.BytesIO(members["manifest.npy"]), allow_pickle=False)
    padded = io.BytesIO()
    np.lib.format.write_array(padded, np.frombuffer(manifest.tobytes() + b" " * padding, dtype=np.uint8))
    with zipfile.ZipFile(path, "w", allowZip64=True) as archive:
        for name, data in members.items():
            if name == "manifest.npy":
                archive.writestr(name, padded.getvalue(), compress_type=zipfile.ZIP_DEFLATED)
            else:
                archive.writestr(name, data, compress_type=zipfile.ZIP_STORED)


def test_a_compressed_member_that_inflates_past_its_bound_is_refused_before_inflating(small):
    snapshot = small.path / graph_snapshot.FILE_NAME
    assert small.graph is not None
    _with_compressed_manifest(snapshot, 0)  # compressed but small: read as before
    assert read_manifest(snapshot, graph_snapshot.KIND, graph_snapshot.FORMAT)["kind"] == graph_snapshot.KIND
    _with_compressed_manifest(snapshot, 64 * 1024 * 1024)
    assert snapshot.stat().st_size < 2 * 1024 * 1024
    with pytest.raises(ArrayFileUnusable, match="would inflate to 67,1"):
        read_manifest(snapshot, graph_snapshot.KIND, graph_snapshot.FORMAT)
    ws = reopened(small)
    try:
        assert len(ws.graph) == len(small.graph)
        assert ws.derivation.snapshot_status.startswith("rebuilt") and "inflate" in ws.derivation.snapshot_status
    finally:
        ws.close()


def test_a_saved_evaluation_run_never_lands_where_a_planted_link_points(tmp_path):
    from workbench.evaluate.report import load_run, save_run
    from workbench.evaluate.runner import EvalRun

    outside = tmp_path / "outside"
    outside.mkdir()
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (workspace / "runs").symlink_to(outside)
    run = EvalRun(run_id="20261206-120000-abcdef", created="2026-12-06T12:00:00+00:00", task_file="tasks.yaml",
                  k=5, direct="direct", strategies=["direct"], cases=[], settings={})
    path = save_run(run, workspace)
    assert list(outside.iterdir()) == [] and not (workspace / "runs").is_symlink()
    (workspace / "runs" / "second.json").symlink_to(outside / "target.json")
    save_run(EvalRun(**{**run.__dict__, "run_id": "second"}), workspace)  # replaces the link, never follows it
    assert list(outside.iterdir()) == [] and not (workspace / "runs" / "second.json").is_symlink()
    assert load_run(path).run_id == run.run_id
