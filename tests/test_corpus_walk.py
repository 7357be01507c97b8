"""One walk per ingest (workbench.ingest.loaders.CorpusWalk): each file found once, with its real
path and its stat, which the size limit, the load and the removals read instead of asking the
system about every file again."""

from __future__ import annotations

import os
import stat
import tempfile
from pathlib import Path

from hypothesis import given, strategies as st

from tests.conftest import make_corpus
from workbench.ingest.file_hashes import loadable_stat
from workbench.ingest.loaders import SUPPORTED_EXTENSIONS, CorpusWalk, iter_files


def test_each_file_comes_with_its_real_path_and_stat_even_through_a_linked_root(tmp_path):
    notes = tmp_path / "notes"
    (notes / "sub").mkdir(parents=True)
    (notes / "a.md").write_text("# A\n")
    (notes / "sub" / "b.txt").write_text("bee\n")
    (notes / ".hidden.md").write_text("never\n")
    (tmp_path / "outside.md").write_text("out\n")
    os.symlink(notes / "sub" / "b.txt", notes / "also-b.txt")  # a link to a file inside: that file
    os.symlink(tmp_path / "outside.md", notes / "out.md")  # out of the folder: left out, in one line
    os.symlink(notes / "sub", notes / "sub-link")  # a folder link: not entered
    alias = tmp_path / "alias"
    os.symlink(notes, alias)  # the folder given by a linked name

    walk = CorpusWalk([alias])
    files = walk.files
    assert [Path(f.path).relative_to(alias).as_posix() for f in files] == ["a.md", "sub/b.txt", "sub/b.txt"]
    for f in files:
        info = os.stat(f.path)
        assert f.root == str(alias)
        assert f.source == os.path.realpath(f.path) and f.source.startswith(str(notes))
        assert f.stat is not None and (f.stat.st_size, f.stat.st_mtime_ns, f.stat.st_ino) == \
            (info.st_size, info.st_mtime_ns, info.st_ino)
    problems = [e for e in walk.entries if e not in files]
    assert [p.path for p in problems] == ["alias/out.md", "alias/sub-link"]
    assert [(str(f), str(r)) for f, r in iter_files([alias])] == [(f.path, f.root) for f in files]


def test_a_file_given_directly_or_within_a_watch_batch_has_its_real_path(tmp_path):
    notes = make_corpus(tmp_path / "notes", 3)
    os.symlink(notes / "svc0001.txt", tmp_path / "named.txt")
    (direct,) = CorpusWalk([tmp_path / "named.txt"]).files
    assert (direct.path, direct.source) == (str(tmp_path / "named.txt"), str(notes / "svc0001.txt"))
    (changed,) = CorpusWalk([notes], within=[notes / "svc0002.txt", notes / "gone.txt"]).files
    assert changed.source == str(notes / "svc0002.txt") and changed.stat.st_size == (notes / "svc0002.txt").stat().st_size


def test_an_unchanged_folder_is_ingested_without_asking_the_system_about_each_file(make_workspace, tmp_path,
                                                                                    monkeypatch):
    """Past the walk's one stat per file, nothing per file: no size, link or existence check."""
    notes = make_corpus(tmp_path / "notes", 150)
    ws = make_workspace()
    assert ws.ingest([notes]).documents_added == 150
    asked: list[str] = []
    for name in ("stat", "lstat"):
        real = getattr(os, name)
        monkeypatch.setattr(os, name, lambda path, *a, real=real, **k: (asked.append(os.fspath(path)), real(path, *a, **k))[1])
    report = ws.ingest([notes])
    monkeypatch.undo()
    assert report.documents_unchanged == 150 and report.documents_added == report.documents_removed == 0
    about_notes = [p for p in asked if p.startswith(str(notes / "svc"))]
    assert len(about_notes) < 10, about_notes[:20]


@given(st.lists(st.sampled_from([".", "md", "MD", "txt", "json", "jsonl", "markdown", "x"]), min_size=1,
                max_size=5).map("".join))
def test_a_file_is_loadable_by_its_extension_as_pathlib_reads_it(name):
    regular = os.stat(tempfile.gettempdir())  # any stat, made a regular file's below
    info = os.stat_result((stat.S_IFREG | 0o644, *regular[1:6], 10, *regular[7:10]))
    path = "/notes/" + name
    assert (loadable_stat(path, info) is not None) == (Path(path).suffix.lower() in SUPPORTED_EXTENSIONS)
