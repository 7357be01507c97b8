"""Array files read mapped: the same arrays as a read, damage still found, never a traceback."""

from __future__ import annotations

import zipfile

import numpy as np
import pytest

from workbench.runtime.array_file import ArrayFileUnusable, read_array_file, to_text, write_array_file


@pytest.fixture
def written(tmp_path):
    path = tmp_path / "index.npz"
    arrays = {"vectors": np.arange(12, dtype=np.float32).reshape(4, 3), "names": to_text(["a", "b"]),
              "empty": np.zeros((0, 3), dtype=np.float32), "columns": np.asfortranarray(np.eye(3))}
    write_array_file(path, "example", 1, "v1", arrays)
    return path, arrays


def test_mapped_arrays_equal_the_read_ones_and_come_from_the_file(written):
    path, arrays = written
    _, read = read_array_file(path, "example", 1, "v1")
    _, mapped = read_array_file(path, "example", 1, "v1", mapped=True)
    assert set(mapped) == set(read) == set(arrays)
    for name, array in arrays.items():
        assert np.array_equal(mapped[name], array) and mapped[name].dtype == array.dtype
    assert isinstance(mapped["vectors"], np.memmap) and not mapped["vectors"].flags.writeable


def test_a_flipped_byte_in_a_mapped_array_is_found_by_the_checksum(written):
    path, arrays = written
    data = bytearray(path.read_bytes())
    at = data.find(arrays["vectors"].tobytes())
    assert at > 0
    data[at + 5] ^= 0xFF
    path.write_bytes(bytes(data))
    with pytest.raises(ArrayFileUnusable, match="checksum mismatch"):
        read_array_file(path, "example", 1, "v1", mapped=True)


def test_a_compressed_or_cut_file_is_damaged_not_a_traceback(written):
    path, arrays = written
    with zipfile.ZipFile(path) as archive:
        members = {info.filename: archive.read(info) for info in archive.infolist()}
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for name, data in members.items():
            archive.writestr(name, data)
    assert read_array_file(path, "example", 1, "v1")[1]["vectors"].shape == (4, 3)  # a plain read copes
    with pytest.raises(ArrayFileUnusable, match="is damaged .*not a stored .npy"):
        read_array_file(path, "example", 1, "v1", mapped=True)
    path.write_bytes(path.read_bytes()[:200])
    with pytest.raises(ArrayFileUnusable, match="is damaged"):
        read_array_file(path, "example", 1, "v1", mapped=True)


@pytest.mark.parametrize("mapped", [False, True])
def test_zeroed_bytes_inside_an_npy_header_are_damage_not_a_traceback(written, mapped):
    # numpy tokenizes a header it cannot match; zeros in the middle of it raised tokenize.TokenError
    path, _ = written
    data = bytearray(path.read_bytes())
    at = data.find(b"'fortran_order': ") + len(b"'fortran_order': ")
    data[at:at + 40] = bytes(40)
    path.write_bytes(bytes(data))
    with pytest.raises(ArrayFileUnusable, match="is damaged"):
        read_array_file(path, "example", 1, "v1", mapped=mapped)


def test_a_streamed_array_is_written_block_by_block_and_read_back_whole(tmp_path):
    path = tmp_path / "index.npz"
    blocks = [np.full((3, 4), i, dtype=np.float32) for i in range(3)] + [np.ones((1, 4), dtype=np.float32)]
    made = []

    def produce():
        for block in blocks:
            made.append(len(block))
            yield block

    write_array_file(path, "example", 1, "v1", {"keys": to_text(list("abcdefghij"))},
                     streamed=("vectors", 10, produce()))
    assert made == [3, 3, 3, 1]
    for mapped in (False, True):
        manifest, arrays = read_array_file(path, "example", 1, "v1", mapped=mapped)
        assert np.array_equal(arrays["vectors"], np.concatenate(blocks)) and manifest["shapes"]["vectors"] == [10, 4]
    write_array_file(path, "example", 1, "v2", {}, streamed=("vectors", 0, iter(())))
    assert read_array_file(path, "example", 1, "v2")[1]["vectors"].shape == (0, 0)


@pytest.mark.parametrize("streamed, problem", [
    (("vectors", 5, [np.zeros((3, 2)), np.zeros((3, 2))]), "given 6 rows, not 5"),
    (("vectors", 4, [np.zeros((2, 2)), np.zeros((2, 3))]), "not rows of width 2"),
    (("aaa", 1, [np.zeros((1, 2))]), "must sort after the others"),
])
def test_a_stream_that_breaks_its_promise_leaves_the_old_file_and_no_temporary(written, streamed, problem):
    path, arrays = written
    before = path.read_bytes()
    with pytest.raises(ValueError, match=problem):
        write_array_file(path, "example", 1, "v2", {"names": to_text(["a"])}, streamed=streamed)
    assert path.read_bytes() == before and sorted(p.name for p in path.parent.iterdir()) == [path.name]


def test_mapped_arrays_are_aligned_and_an_unaligned_file_is_read_instead(tmp_path):
    path = tmp_path / "index.npz"
    vectors = np.arange(24, dtype=np.float32).reshape(6, 4)
    write_array_file(path, "example", 1, "v1", {"keys": to_text(["a"])}, streamed=("vectors", 6, [vectors]))
    _, mapped = read_array_file(path, "example", 1, "v1", mapped=True)
    assert isinstance(mapped["vectors"], np.memmap) and mapped["vectors"].ctypes.data % 64 == 0
    # np.savez, as files were written before, puts the data wherever the zip headers end
    from workbench.runtime.array_file import _checksum

    read_not_mapped = []
    for length in range(8):
        arrays = {"keys": to_text(["a" * length]), "vectors": vectors}
        manifest = {"kind": "example", "format": 1, "key": "v1", "checksum": _checksum(arrays),
                    "shapes": {name: list(a.shape) for name, a in arrays.items()}}
        np.savez(path, manifest=to_text(manifest), **arrays)
        _, read = read_array_file(path, "example", 1, "v1", mapped=True)
        assert read["vectors"].flags.aligned and np.array_equal(read["vectors"], vectors)
        if not isinstance(read["vectors"], np.memmap):
            read_not_mapped.append(length)
    assert read_not_mapped  # some of those files start the vectors off a multiple of 4: they are read


@pytest.mark.parametrize("array", [np.arange(12, dtype=np.float32).reshape(3, 4), np.zeros((5,), dtype=np.uint8),
                                   np.arange(7, dtype=np.int64)[::-1], np.asfortranarray(np.ones((2, 3))),
                                   np.array([True, False]), np.array(["ab", "c"]), np.zeros((0, 384), np.float32)])
def test_npy_headers_are_read_as_numpy_reads_them_without_building_a_syntax_tree(monkeypatch, tmp_path, array):
    # numpy parses the header with ast.literal_eval; CPython 3.11.7 can fail ("AST constructor
    # recursion depth mismatch") when another thread builds a syntax tree at the same moment.
    import ast
    import io

    from workbench.runtime.array_file import _npy_header

    buffer = io.BytesIO()
    np.save(buffer, array)
    buffer.seek(0)
    np.lib.format.read_magic(buffer)
    expected = np.lib.format.read_array_header_1_0(buffer)
    path = tmp_path / "one.npz"
    write_array_file(path, "example", 1, "v1", {"a": array})
    trees, parse = [], ast.parse

    def watched(source, *args, **kwargs):
        if isinstance(source, str) and "'descr'" in source:  # a .npy header
            trees.append(source)
        return parse(source, *args, **kwargs)

    monkeypatch.setattr(ast, "parse", watched)
    buffer.seek(0)
    header = _npy_header(buffer)
    reads = [read_array_file(path, "example", 1, "v1", mapped=mapped)[1]["a"] for mapped in (False, True)]
    monkeypatch.undo()
    assert trees == []
    assert header == expected
    for read in reads:
        assert read.dtype == array.dtype and read.shape == array.shape and np.array_equal(read, array)
