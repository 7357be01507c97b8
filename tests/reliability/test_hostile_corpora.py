"""Hostile corpora (issue 19): each attack reproduced exactly, each answered by one clear line.

Symlinks out of the ingest folder, /proc, a YAML alias bomb, terminal escapes in file names
and text, a newline in a file name, and workspaces that are a file, random bytes, another
program's database, a newer schema or a typo; nothing is written where nothing should be.
"""

from __future__ import annotations

import json
import os
import sqlite3
import string
import subprocess
import sys
import time
from pathlib import Path

import pytest

import workbench.ingest.loaders as loaders
from workbench.ingest.loaders import LoadError, load_paths
from workbench.settings import SettingsError, load_settings

from tests.conftest import ROOT

ESC_NAME = "evil\x1b[2J\x1b]0;pwned\x07\u202etxt.md"  # clears the screen, sets the title, reverses text
FORGED_NAME = "two\nerror: forged line.txt"
ESC_TEXT = "The cache service depends on Redis.\x1b[2J\x1b]0;owned\x07 \u202eReversed words here.\n"


def alias_bomb(levels: int = 9) -> str:
    """Front matter whose ``tags`` expand to 9**levels strings through nested aliases."""
    names = string.ascii_lowercase
    lines = ["---", "a: &a [x, x, x, x, x, x, x, x, x]"]
    lines += [f"{names[i]}: &{names[i]} [" + ", ".join([f"*{names[i - 1]}"] * 9) + "]" for i in range(1, levels)]
    lines += [f"tags: *{names[levels - 1]}", "---", "The bomb note depends on Redis.", ""]
    return "\n".join(lines)


def files_under(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


# ------------------------------------------------------------------------ symlinks


@pytest.fixture
def linked(tmp_path) -> Path:
    """``ln -s /etc/passwd d/leak.txt; ln -s /etc d/etc`` beside real notes and in-tree links."""
    d = tmp_path / "d"
    (d / "sub").mkdir(parents=True)
    (d / "sub" / "real.txt").write_text("The auth service depends on Redis.\n", encoding="utf-8")
    os.symlink("/etc/passwd", d / "leak.txt")
    os.symlink("/etc", d / "etc")
    os.symlink(tmp_path / "outside.md", d / "out.md")
    (tmp_path / "outside.md").write_text("Outside the tree.\n", encoding="utf-8")
    os.symlink(d / "sub" / "real.txt", d / "again.txt")  # inside the tree: read once, as sub/real.txt
    os.symlink(d / "sub", d / "sublink")
    return d


def test_symlinks_out_of_the_ingest_folder_are_not_followed_and_each_gets_one_line(linked):
    result = load_paths([linked])
    assert [d.id for d in result.documents] == ["d/sub/real.txt"]
    assert not any("root:" in d.text for d in result.documents)
    lines = {p.path: p.message for p in result.problems}
    assert set(lines) == {"d/leak.txt", "d/etc", "d/out.md", "d/sublink"}
    assert "symbolic link to /etc/passwd, outside the folders being ingested" in lines["d/leak.txt"]
    assert "symbolic link to /etc, outside" in lines["d/etc"]
    assert "not followed" in lines["d/sublink"]


def test_ingest_through_the_cli_stores_nothing_from_etc(linked, tmp_path, run_cli):
    done = run_cli("--workspace", tmp_path / "ws", "ingest", linked)
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr
    assert "d/leak.txt: symbolic link to /etc/passwd" in done.stdout
    assert "workspace: 1 document," in done.stdout
    with sqlite3.connect(tmp_path / "ws" / "workspace.sqlite") as db:
        assert db.execute("SELECT COUNT(*) FROM chunks WHERE text LIKE '%root:%'").fetchone()[0] == 0
        assert [r[0] for r in db.execute("SELECT id FROM documents")] == ["d/sub/real.txt"]


def test_ingest_of_proc_self_is_refused_by_name_at_once_and_creates_nothing(tmp_path, run_cli):
    started = time.monotonic()
    done = run_cli("--workspace", tmp_path / "ws", "ingest", "/proc/self")
    assert done.returncode == 1 and "Traceback" not in done.stderr
    assert done.stderr.strip().splitlines() == [
        "error: /proc/self: lies in /proc (a special filesystem of the kernel: processes, devices), "
        "not a folder of documents; refused"]
    assert time.monotonic() - started < 60 and not (tmp_path / "ws").exists()
    for special in ("/sys", "/dev/null"):
        with pytest.raises(LoadError, match="special filesystem"):
            load_paths([special])


class _Vanishing:
    """``os.scandir`` whose entries named ``gone.txt`` vanish between the listing and their use."""

    def __init__(self, real):
        self.real = real

    def __call__(self, folder):
        listing = self.real(folder)

        class Listing:
            def __enter__(self):
                return [_Gone(e) if e.name == "gone.txt" else e for e in listing.__enter__()]

            def __exit__(self, *exc):
                return listing.__exit__(*exc)

        return Listing()


class _Gone:
    def __init__(self, entry):
        self.name = entry.name

    def is_symlink(self):
        raise FileNotFoundError(2, "No such file or directory", self.name)


def test_a_link_vanishing_mid_walk_is_one_line_not_a_traceback(tmp_path, monkeypatch):
    (tmp_path / "c").mkdir()
    (tmp_path / "c" / "kept.txt").write_text("kept\n")
    os.symlink(tmp_path / "c" / "kept.txt", tmp_path / "c" / "gone.txt")
    monkeypatch.setattr(loaders.os, "scandir", _Vanishing(os.scandir))
    result = load_paths([tmp_path / "c"])
    assert [d.id for d in result.documents] == ["c/kept.txt"]
    (problem,) = result.problems
    assert problem.path == "c/gone.txt" and "it changed while the folder was read" in problem.message


# ------------------------------------------------------------------------ YAML


def test_a_yaml_alias_bomb_of_9_levels_is_refused_at_once_naming_the_file(tmp_path, make_workspace):
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    (corpus / "bomb.md").write_text(alias_bomb(9), encoding="utf-8")
    assert len(alias_bomb(9).encode()) < 500
    ws = make_workspace()
    started = time.monotonic()
    report = ws.ingest([corpus])
    assert time.monotonic() - started < 30
    (problem,) = [str(p) for p in report.problems]
    assert problem.startswith("corpus/bomb.md: front matter uses the YAML alias *a (line 3); aliases are refused")
    (doc,) = ws.documents()
    assert doc.tags == ()
    assert (ws.path / "workspace.sqlite").stat().st_size < 5_000_000


def test_front_matter_over_the_size_cap_is_not_parsed(tmp_path):
    path = tmp_path / "huge.md"
    path.write_text("---\ntags: [" + ", ".join(["t"] * 40_000) + "]\n---\nBody.\n", encoding="utf-8")
    result = load_paths([path])
    (problem,) = result.problems
    assert problem.path == "huge.md" and "larger than the 65536-byte limit" in problem.message
    assert result.documents[0].tags == ()


def test_settings_with_an_alias_are_refused_naming_the_file(tmp_path):
    path = tmp_path / "settings.yaml"
    path.write_text("retrieval: &r {k: 5}\ngraph: *r\n", encoding="utf-8")
    with pytest.raises(SettingsError, match=r"settings.yaml: settings file uses the YAML alias \*r"):
        load_settings(path)


# -------------------------------------------------------------- terminal escapes


@pytest.fixture(scope="module")
def escaped(tmp_path_factory, embedder, settings):
    """A workspace holding a chunk full of escapes, and the ingest's CLI output for hostile names."""
    base = tmp_path_factory.mktemp("escapes")
    corpus = base / "corpus"
    corpus.mkdir()
    (corpus / ESC_NAME).write_text("")  # empty: its name shows up in a warning
    (corpus / FORGED_NAME).write_text("")
    (corpus / "esc.txt").write_text(ESC_TEXT, encoding="utf-8")
    done = subprocess.run([sys.executable, "-m", "workbench", "--workspace", str(base / "ws"), "ingest", str(corpus)],
                          cwd=ROOT, capture_output=True, text=True, timeout=300, env={**os.environ, "TQDM_DISABLE": "1"})
    return base / "ws", done


def _is_safe(output: str) -> bool:
    return not any(ch in output for ch in "\x1b\x07\u202e")


def test_file_names_in_ingest_warnings_show_escapes_and_cannot_forge_lines(escaped):
    _, done = escaped
    assert done.returncode == 0, done.stderr
    assert _is_safe(done.stdout + done.stderr)
    assert "corpus/evil\\x1b[2J\\x1b]0;pwned\\x07\\u202etxt.md: empty file, skipped" in done.stdout
    assert "corpus/two\\nerror: forged line.txt: empty file, skipped" in done.stdout
    assert not any(line.startswith("error: forged") for line in done.stdout.splitlines())


def test_chunk_query_and_context_print_escapes_while_json_stays_exact(escaped, run_cli):
    workspace, _ = escaped
    with sqlite3.connect(workspace / "workspace.sqlite") as db:
        (chunk_id,) = db.execute("SELECT id FROM chunks").fetchone()
    for args in (["chunk", chunk_id], ["query", "cache service Redis", "--mode", "keyword"],
                 ["context", "cache service Redis", "--mode", "keyword"]):
        done = run_cli("--workspace", workspace, *args)
        assert done.returncode == 0, done.stderr
        assert _is_safe(done.stdout), args
        assert "\\x1b[2J" in done.stdout, args  # shown, not obeyed (query's table cuts the rest off)
        assert args[0] == "query" or "\\u202eReversed" in done.stdout, args
    exact = json.loads(run_cli("--workspace", workspace, "chunk", chunk_id, "--json").stdout)
    assert exact["text"] == ESC_TEXT.rstrip("\n") or exact["text"] == ESC_TEXT


# ------------------------------------------------------------- workspace opening


def _one_clear_line(done, *words: str) -> None:
    assert done.returncode == 2, (done.returncode, done.stderr)
    assert "Traceback" not in done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), lines
    for word in words:
        assert word in lines[0], (word, lines[0])


def test_workspace_that_is_a_file_is_one_line_and_nothing_is_created(tmp_path, run_cli):
    target = tmp_path / "notes.txt"
    target.write_text("mine\n")
    (tmp_path / "c").mkdir()
    (tmp_path / "c" / "a.txt").write_text("a\n")
    for args in (["ingest", tmp_path / "c"], ["stats"]):
        _one_clear_line(run_cli("--workspace", target, *args), str(target), "is a file, not a folder")
    assert target.read_text() == "mine\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["c", "notes.txt"]


def test_random_bytes_in_workspace_sqlite_are_refused_and_left_as_they_were(tmp_path, run_cli):
    ws = tmp_path / "ws"
    ws.mkdir()
    garbage = os.urandom(8192)
    (ws / "workspace.sqlite").write_bytes(garbage)
    (tmp_path / "c").mkdir()
    (tmp_path / "c" / "a.txt").write_text("a\n")
    for args in (["stats"], ["ingest", tmp_path / "c"]):
        _one_clear_line(run_cli("--workspace", ws, *args), "workspace.sqlite is not a workbench database")
    assert files_under(ws) == {"workspace.sqlite": garbage}


def test_another_programs_database_and_a_newer_schema_are_refused_unchanged(tmp_path, make_workspace, run_cli):
    foreign = tmp_path / "foreign"
    foreign.mkdir()
    with sqlite3.connect(foreign / "workspace.sqlite") as db:
        db.execute("CREATE TABLE invoices (id INTEGER)")
    before = files_under(foreign)
    _one_clear_line(run_cli("--workspace", foreign, "stats"), "another program", "invoices")
    assert files_under(foreign) == before

    ws = make_workspace("newer")
    ws.store.set_meta("schema_version", "99")
    ws.close()
    _one_clear_line(run_cli("--workspace", ws.path, "stats"), "newer workbench (schema 99")


def test_a_mistyped_workspace_for_a_reader_is_one_line_and_creates_nothing(tmp_path, run_cli):
    for args in (["stats"], ["query", "redis"], ["entities"], ["remove", "x"]):
        _one_clear_line(run_cli("--workspace", tmp_path / "wokspace", *args), "no workspace at", "wokspace")
    assert list(tmp_path.iterdir()) == []


def test_a_closed_pipe_ends_quietly(escaped):
    # The reader goes away before the command writes (`stats --json | head -1`, made certain).
    proc = subprocess.Popen([sys.executable, "-m", "workbench", "--workspace", str(escaped[0]),
                             "entities", "--json", "--limit", "1000"], cwd=ROOT, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    proc.stdout.close()
    stderr = proc.stderr.read()
    assert proc.wait(timeout=120) == 141
    assert stderr == ""
