"""Issue 57, item 10: UTF-16 and UTF-32. A note saved with a byte-order mark lost its front
matter (the ``---`` block became chunk text: no title, no date, no warning) when its editor
wrote a second mark or it was UTF-32 (whose little-endian mark starts with UTF-16's); a UTF-16
note without a mark was skipped as binary."""

from __future__ import annotations

import codecs

import pytest

from workbench.ingest.loaders import load_paths

NOTE = "---\ntitle: Token cache\ndate: 2024-01-02\n---\nThe token cache runs on Redis.\n"


MARKED = {
    "utf16-le.md": NOTE.encode("utf-16"),
    "utf16-be.md": codecs.BOM_UTF16_BE + NOTE.encode("utf-16-be"),
    "utf16-two-marks.md": ("\ufeff" + NOTE).encode("utf-16"),
    "utf16-crlf.md": NOTE.replace("\n", "\r\n").encode("utf-16"),
    "utf32-le.md": NOTE.encode("utf-32"),
    "utf32-be.md": codecs.BOM_UTF32_BE + NOTE.encode("utf-32-be"),
}


@pytest.mark.parametrize("name", list(MARKED))
def test_a_note_with_a_byte_order_mark_keeps_its_front_matter(tmp_path, name):
    (tmp_path / "notes").mkdir()
    (tmp_path / "notes" / name).write_bytes(MARKED[name])
    loaded = load_paths([tmp_path / "notes"])
    assert loaded.problems == []
    [document] = loaded.documents
    assert (document.title, document.date, document.text) == ("Token cache", "2024-01-02", "The token cache runs on Redis.\n")


@pytest.mark.parametrize("codec", ["utf-16-le", "utf-16-be"])
def test_plain_utf16_without_a_mark_is_read_with_a_warning(tmp_path, codec):
    (tmp_path / "notes").mkdir()
    (tmp_path / "notes" / "nomark.md").write_bytes(NOTE.replace("Token", "Tökén").encode(codec))
    loaded = load_paths([tmp_path / "notes"])
    [document] = loaded.documents
    assert (document.title, document.text) == ("Tökén cache", "The token cache runs on Redis.\n")
    assert [str(p) for p in loaded.problems] == [f"notes/nomark.md: no byte-order mark; decoded as {codec.upper()}"]


def test_numbers_that_look_like_utf16_are_still_binary(tmp_path):
    (tmp_path / "notes").mkdir()
    (tmp_path / "notes" / "counts.txt").write_bytes(bytes(b for i in range(2000) for b in (i % 31 + 1, 0)))
    loaded = load_paths([tmp_path / "notes"])
    assert loaded.documents == [] and "binary file, skipped" in str(loaded.problems[0])
