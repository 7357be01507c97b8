"""A derived index kept on disk: one ``.npz`` of arrays with a manifest, checked before use.

Text is JSON held in a byte array and every member is read as plain numbers (a member holding
Python objects is refused, as ``allow_pickle=False`` would), so a file in a shared workspace
folder cannot run code. The manifest names the file's kind and
format, the key it was made for (what it was derived from), a SHA-256 of the arrays and their
shapes. :func:`read_array_file` raises :class:`ArrayFileUnusable` with the reason whenever any
of these does not match, so a stale or damaged file is rebuilt, never used. Writes are atomic:
the file is written beside its place, in a temporary created new (never through a link planted at
its name), and renamed over it; a file that is itself a link is refused, so it is rebuilt.

Examples
--------
>>> import tempfile
>>> path = Path(tempfile.mkdtemp()) / "index.npz"
>>> write_array_file(path, "example", 1, "v7", {"counts": np.arange(3)}, extra={"rows": 3})
>>> manifest, arrays = read_array_file(path, "example", 1, "v7")
>>> arrays["counts"].tolist(), manifest["rows"]
([0, 1, 2], 3)
>>> read_array_file(path, "example", 1, "v8")
Traceback (most recent call last):
...
workbench.runtime.array_file.ArrayFileUnusable: index.npz was made for another version of what it indexes
"""

from __future__ import annotations

import errno
import hashlib
import itertools
import os
import secrets
import stat
import struct
import zipfile
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from tokenize import TokenError
from typing import Literal

import numpy as np
import orjson
import regex

__all__ = ["ArrayFileUnusable", "TextColumn", "from_text", "new_temporary", "open_for_reading", "ragged", "read_array_file",
           "read_manifest", "to_text", "write_array_file"]


class ArrayFileUnusable(Exception):
    """The file cannot be used (missing, stale or damaged); the message says which."""


def to_text(value) -> np.ndarray:
    """``value`` as JSON in a byte array (what :func:`from_text` reads back)."""
    return np.frombuffer(orjson.dumps(value), dtype=np.uint8)


def from_text(array: np.ndarray):
    """The value :func:`to_text` wrote (orjson: a large snapshot's text parses much faster than
    with the standard library)."""
    return orjson.loads(array.tobytes())


#: Rows of one length compared at a time by :meth:`TextColumn.positions`.
_POSITION_BLOCK = 1 << 16


class TextColumn(Sequence[str]):
    """Strings as one UTF-8 buffer and the offsets of each; a string is decoded when read.

    >>> column = TextColumn(*TextColumn.arrays(["Zürich", "", "Redis"]))
    >>> column[0], column[1], list(column)
    ('Zürich', '', ['Zürich', '', 'Redis'])
    >>> column.tolist(), TextColumn(*TextColumn.arrays(["Redis", "", "Kafka"])).tolist()
    (['Zürich', '', 'Redis'], ['Redis', '', 'Kafka'])
    """

    def __init__(self, data: np.ndarray, offsets: np.ndarray) -> None:
        if offsets.ndim != 1 or len(offsets) == 0 or offsets[0] != 0 or offsets[-1] != len(data) \
                or np.any(np.diff(offsets) < 0):
            raise ValueError("the text column's offsets do not divide its buffer")
        self._data, self._offsets = data.tobytes(), offsets.tolist()
        self._spans: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None  # see positions

    @staticmethod
    def arrays(values: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
        """``values`` as the buffer (uint8) and offsets (int64) a column is made from."""
        encoded = [v.encode() for v in values]
        offsets = np.zeros(len(encoded) + 1, dtype=np.int64)
        offsets[1:] = np.cumsum([len(e) for e in encoded])
        return np.frombuffer(b"".join(encoded), dtype=np.uint8), offsets

    def __getitem__(self, i):  # type: ignore[override]  # an int position; slices are not needed
        return self._data[self._offsets[i]:self._offsets[i + 1]].decode()

    def encoded(self, i: int) -> bytes:
        """The string at ``i`` as its UTF-8 bytes, not decoded (which sort as the strings do)."""
        return self._data[self._offsets[i]:self._offsets[i + 1]]

    def __len__(self) -> int:
        return len(self._offsets) - 1

    def positions(self, values: Iterable[str]) -> dict[str, int]:
        """The first position of each of ``values`` the column holds (the others are left out),
        found among the strings of the same encoded length, compared as bytes in numpy blocks:
        nothing decoded, no dictionary of the whole column made (a write looks up a few names in
        hundreds of thousands).

        >>> TextColumn(*TextColumn.arrays(["Redis", "Kafka", "Redis", ""])).positions(["Redis", "", "Solr"])
        {'Redis': 0, '': 3}
        """
        by_length: dict[int, dict[bytes, str]] = {}
        for value in values:
            encoded = value.encode()
            by_length.setdefault(len(encoded), {})[encoded] = value
        if not by_length:
            return {}
        if self._spans is None:
            offsets = np.asarray(self._offsets, dtype=np.int64)
            self._spans = np.frombuffer(self._data, dtype=np.uint8), offsets[:-1], np.diff(offsets)
        data, starts, lengths = self._spans
        found: dict[str, int] = {}
        for length, pending in by_length.items():
            rows = np.flatnonzero(lengths == length)
            for lo in range(0, len(rows), _POSITION_BLOCK):
                if not pending:
                    break
                block = rows[lo:lo + _POSITION_BLOCK]
                # One fixed-width bytes value a row: equal lengths, so the comparison is exact.
                held = data[starts[block][:, None] + np.arange(length)].view(f"S{length}").ravel() if length \
                    else np.zeros(len(block), dtype="S1")
                for encoded in list(pending):
                    hits = np.flatnonzero(held == encoded)
                    if len(hits):
                        found[pending.pop(encoded)] = int(block[hits[0]])
        return found

    def __iter__(self) -> Iterator[str]:
        data, offsets = self._data, self._offsets
        return (data[a:b].decode() for a, b in zip(offsets, offsets[1:]))

    def tolist(self) -> list[str]:
        """Every string, as a list: an ASCII buffer is decoded whole and sliced (its byte offsets
        are character offsets) instead of decoding a string at a time."""
        data, offsets = self._data, self._offsets
        if data.isascii():
            text = data.decode("ascii")
            return [text[a:b] for a, b in zip(offsets, offsets[1:])]
        return [data[a:b].decode() for a, b in zip(offsets, offsets[1:])]


def ragged(rows: Sequence[Sequence[int]]) -> tuple[np.ndarray, np.ndarray]:
    """Lists of integers as one flat int32 array and int64 offsets (CSR style).

    >>> flat, offsets = ragged([[3, 1], [], [2]])
    >>> flat.tolist(), offsets.tolist()
    ([3, 1, 2], [0, 2, 2, 3])
    """
    offsets = np.zeros(len(rows) + 1, dtype=np.int64)
    offsets[1:] = np.cumsum([len(r) for r in rows])
    flat = np.fromiter(itertools.chain.from_iterable(rows), dtype=np.int32, count=int(offsets[-1]))
    return flat, offsets


def _digest(arrays: dict[str, np.ndarray]):
    """The running SHA-256 of ``arrays`` in name order: each one's name, dtype and shape, then its bytes."""
    digest = hashlib.sha256()
    for name in sorted(arrays):
        array = np.ascontiguousarray(arrays[name])
        digest.update(f"{name}:{array.dtype.str}:{array.shape}".encode())
        digest.update(array.data)
    return digest


def _checksum(arrays: dict[str, np.ndarray]) -> str:
    return _digest(arrays).hexdigest()


Streamed = tuple[str, int, Iterable[np.ndarray]]
"""``(name, rows, blocks)``: an array written block by block (see :func:`write_array_file`)."""


def write_array_file(path: Path, kind: str, format: int, key: str, arrays: dict[str, np.ndarray],
                     extra: dict | None = None, streamed: Streamed | None = None) -> None:
    """Write ``arrays`` to ``path`` atomically, with a manifest of ``kind``, ``format`` and ``key``
    (and the JSON-ready ``extra`` entries, readable alone by :func:`read_manifest`).

    ``streamed`` adds one more array of ``rows`` rows, written as ``blocks`` yields its row blocks
    (2-D, one width and dtype, in order), so it is never whole in memory (a large
    index's name vectors). Its name must sort after the others' (the checksum reads the arrays
    in name order). The file is what ``np.savez`` writes: every member an uncompressed ``.npy``.
    """
    digest = _digest(arrays)
    shapes = {name: list(a.shape) for name, a in arrays.items()}
    if streamed is not None and any(name > streamed[0] for name in arrays):
        raise ValueError(f"the streamed array {streamed[0]!r} must sort after the others")
    path = Path(path)
    temporary, handle = new_temporary(path)
    try:
        with os.fdopen(handle, "wb") as raw:
            with zipfile.ZipFile(raw, "w", zipfile.ZIP_STORED, allowZip64=True) as archive:
                for name, array in arrays.items():
                    with _member(archive, name) as out:
                        np.lib.format.write_array(out, np.ascontiguousarray(array), allow_pickle=False)
                if streamed is not None:
                    shapes[streamed[0]] = _write_streamed(archive, streamed, digest)
                manifest = {**(extra or {}), "kind": kind, "format": format, "key": key,
                            "checksum": digest.hexdigest(), "shapes": shapes}
                with _member(archive, "manifest") as out:
                    np.lib.format.write_array(out, to_text(manifest), allow_pickle=False)
            raw.flush()
            os.fsync(raw.fileno())
        os.replace(temporary, path)
    finally:
        temporary.unlink(missing_ok=True)


#: Flags of a derived file's temporary: created new (a name taken fails), never through a link.
_CREATE_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_BINARY", 0)
#: Flags of a read: never through a link, nor blocking on a FIFO planted at the name.
_READ_FLAGS = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0)


def new_temporary(path: Path) -> tuple[Path, int]:
    """A new file ``.<name>.<random>.<pid>.tmp`` beside ``path`` and its open descriptor.

    Created with ``O_EXCL | O_NOFOLLOW``: in a workspace folder others can write to, a link
    planted at the name would otherwise make the write land on the link's target. A random part
    makes the name unguessable; the pid stays last, where ``remove_stale_temporaries`` reads it.
    """
    for _ in range(100):
        temporary = path.with_name(f".{path.name}.{secrets.token_hex(6)}.{os.getpid()}.tmp")
        try:
            return temporary, os.open(temporary, _CREATE_FLAGS, 0o666)
        except FileExistsError:
            continue
    raise FileExistsError(f"no free temporary name beside {path}")


def open_for_reading(path: Path):
    """``path`` opened for binary reading, refused (``ValueError``) unless it is a regular file
    itself: a derived file that is a link is rebuilt (the write replaces the link), never read
    through."""
    try:
        handle = os.open(path, _READ_FLAGS)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise ValueError("it is a symbolic link, not a file written here") from None
        raise
    raw = os.fdopen(handle, "rb")
    if not stat.S_ISREG(os.fstat(raw.fileno()).st_mode):
        raw.close()
        raise ValueError("it is not a regular file")
    return raw


#: Where a member's data starts in the file: on a multiple of this, so that a mapped array is
#: aligned (``.npy`` headers end on a multiple of 64 themselves). Unaligned, numpy copies a
#: mapped matrix at each product.
ALIGNMENT = 64
_PADDING_FIELD = 0x7061  # an extra field no zip reader knows, so every reader skips it


def _member(archive: zipfile.ZipFile, name: str):
    """``archive.open`` for writing member ``name.npy``, its local header padded with an extra field
    so that its data starts on a multiple of :data:`ALIGNMENT` in the file."""
    info = zipfile.ZipInfo(f"{name}.npy", date_time=(1980, 1, 1, 0, 0, 0))
    info.compress_type = zipfile.ZIP_STORED
    offset = archive.fp.tell()  # type: ignore[union-attr]
    # local header: 30 bytes, the name, our field (4 + padding), the zip64 field (20, forced)
    fixed = offset + 30 + len(info.filename.encode("utf-8")) + 4 + 20
    info.extra = struct.pack("<HH", _PADDING_FIELD, -fixed % ALIGNMENT) + bytes(-fixed % ALIGNMENT)
    return archive.open(info, "w", force_zip64=True)


def _write_streamed(archive: zipfile.ZipFile, streamed: Streamed, digest) -> list[int]:
    """Write the streamed array's member, block by block, into ``archive`` and ``digest``; its shape."""
    name, rows, blocks = streamed
    iterator = iter(blocks)
    first = next(iterator, None)
    dtype = np.dtype(np.float32) if first is None else first.dtype
    shape = (rows, 0 if first is None else first.shape[1])
    digest.update(f"{name}:{dtype.str}:{shape}".encode())
    written = 0
    with _member(archive, name) as out:
        np.lib.format.write_array_header_1_0(out, {"descr": np.lib.format.dtype_to_descr(dtype),
                                                   "fortran_order": False, "shape": shape})
        for block in itertools.chain([] if first is None else [first], iterator):
            block = np.ascontiguousarray(block, dtype=dtype)
            if block.ndim != 2 or block.shape[1] != shape[1]:
                raise ValueError(f"a block of {name!r} is {block.shape}, not rows of width {shape[1]}")
            out.write(block.data)
            digest.update(block.data)
            written += len(block)
    if written != rows:
        raise ValueError(f"{name!r} was given {written} rows, not {rows}")
    return list(shape)


def read_manifest(path: Path, kind: str, format: int | tuple[int, ...]) -> dict:
    """The manifest alone, without reading the arrays; ``format`` may list every format a reader reads.

    Raises
    ------
    ArrayFileUnusable
        No file, one whose manifest cannot be read, or one of another kind or format.
    """
    path = Path(path)
    try:
        manifest = from_text(_members(path, mapped=False, only="manifest")["manifest"])
    except FileNotFoundError:
        raise ArrayFileUnusable(f"no {path.name} yet") from None
    except (OSError, ValueError, KeyError, EOFError, zipfile.BadZipFile, UnicodeDecodeError, orjson.JSONDecodeError) as exc:
        raise ArrayFileUnusable(f"{path} is damaged ({exc})") from None
    formats = (format,) if isinstance(format, int) else format
    if not isinstance(manifest, dict) or manifest.get("kind") != kind or manifest.get("format") not in formats:
        raise ArrayFileUnusable(f"{path.name} is of another format")
    return manifest


#: The header numpy writes for a plain array, read without ``ast``: numpy parses it with
#: ``ast.literal_eval``, and CPython 3.11.7 (ours) raised "AST constructor recursion depth
#: mismatch" when two threads built syntax trees at once (the depth it checks is kept per
#: interpreter), as the app's warm-up thread reading these files did beside Streamlit compiling a page.
_NPY_HEADER = regex.compile(r"\{'descr': '([<>|=]?[a-zA-Z]\d*)', 'fortran_order': (True|False), "
                            r"'shape': \(((?:\d+, )*\d*,?)\), \}\s*")


def _npy_header(raw) -> tuple[tuple[int, ...], bool, np.dtype]:
    """``(shape, fortran order, dtype)`` of the ``.npy`` whose header starts at ``raw``'s position,
    which is left where the data starts. Headers of any other shape go to numpy's reader."""
    start = raw.tell()
    version = np.lib.format.read_magic(raw)
    size_format = "<H" if version == (1, 0) else "<I"
    length_bytes = raw.read(struct.calcsize(size_format))
    if len(length_bytes) != struct.calcsize(size_format):
        raise ValueError("the .npy header is cut short")
    (length,) = struct.unpack(size_format, length_bytes)
    text = raw.read(length).decode("utf-8" if version >= (3, 0) else "latin1")
    match = _NPY_HEADER.fullmatch(text)
    if match is None:
        raw.seek(start)
        np.lib.format.read_magic(raw)
        try:
            return (np.lib.format.read_array_header_1_0(raw) if version == (1, 0)
                    else np.lib.format.read_array_header_2_0(raw))
        except (SyntaxError, TokenError) as exc:  # numpy tokenizes the header: damaged bytes fail there
            raise ValueError(f"the .npy header is damaged ({exc})") from None
    shape = tuple(int(n) for n in match.group(3).replace(",", " ").split())
    return shape, match.group(2) == "True", np.dtype(match.group(1))


#: Most a compressed member may inflate to: this many times its compressed size, plus
#: :data:`INFLATE_SLACK`. The files written here are never compressed (a plain read copes with
#: one), and deflate reaches about 1,000 to 1, so a small file could otherwise ask for gigabytes.
MAX_INFLATE_RATIO = 20
INFLATE_SLACK = 1024 * 1024


def _compressed_member(archive: zipfile.ZipFile, info: zipfile.ZipInfo) -> np.ndarray:
    """A compressed member, decompressed and read whole, its size bounded before it is inflated."""
    bound = MAX_INFLATE_RATIO * info.compress_size + INFLATE_SLACK
    if info.file_size > bound:
        raise ValueError(f"member {info.filename} would inflate to {info.file_size:,} bytes, past the "
                         f"{bound:,} its {info.compress_size:,} compressed bytes allow")
    with archive.open(info) as member:
        shape, fortran, dtype = _npy_header(member)
        if dtype.hasobject:
            raise ValueError(f"member {info.filename} holds Python objects")
        count = int(np.prod(shape))
        if member.tell() + dtype.itemsize * count != info.file_size:
            raise ValueError(f"member {info.filename} is not the size its header gives")
        data = bytearray(member.read(dtype.itemsize * count))  # never past the size checked above
    if len(data) != dtype.itemsize * count:
        raise ValueError(f"member {info.filename} is not the size its header gives")
    return np.frombuffer(data, dtype=dtype, count=count).reshape(shape, order="F" if fortran else "C")


def _members(path: Path, mapped: bool, only: str | None = None) -> dict[str, np.ndarray]:
    """Every member of an ``.npz`` written by :func:`write_array_file` (or only the one named
    ``only``), as read-only memory maps of the file when ``mapped``, else read. ``np.savez`` stores
    members uncompressed, so each one's data is one run of bytes after its zip and ``.npy``
    headers; mapped, nothing is copied and pages are read as they are touched. ``ValueError`` when
    a member is not a ``.npy`` (or, mapped, is compressed), holds objects, is not the size its
    header says or has another name in its local header."""
    arrays = {}
    with open_for_reading(path) as raw, zipfile.ZipFile(raw) as archive:
        size = os.fstat(raw.fileno()).st_size
        for info in archive.infolist():
            if (mapped and info.compress_type != zipfile.ZIP_STORED) or not info.filename.endswith(".npy"):
                raise ValueError(f"member {info.filename} is not a stored .npy")
            name = info.filename[:-len(".npy")]
            if only is not None and name != only:
                continue
            if info.compress_type != zipfile.ZIP_STORED:  # not as written here, but a plain read copes
                arrays[name] = _compressed_member(archive, info)
                continue
            raw.seek(info.header_offset)
            local = raw.read(30)
            if len(local) != 30 or local[:4] != b"PK\x03\x04":
                raise ValueError(f"member {info.filename} has no local header")
            name_length, extra_length = struct.unpack("<HH", local[26:30])
            if raw.read(name_length) != info.filename.encode("utf-8" if info.flag_bits & 0x800 else "cp437"):
                raise ValueError(f"member {info.filename} has another name in its local header")
            start = info.header_offset + 30 + name_length + extra_length
            raw.seek(start)
            shape, fortran, dtype = _npy_header(raw)
            if dtype.hasobject:
                raise ValueError(f"member {info.filename} holds Python objects")
            header = raw.tell() - start
            count = int(np.prod(shape))
            if header + dtype.itemsize * count != info.file_size:
                raise ValueError(f"member {info.filename} is not the size its header gives")
            if start + info.file_size > size:
                raise ValueError(f"member {info.filename} runs past the end of the file")
            order: Literal["C", "F"] = "F" if fortran else "C"
            if not count:
                arrays[name] = np.zeros(shape, dtype=dtype)
            elif not mapped or (start + header) % dtype.alignment:  # unaligned (before ALIGNMENT): read
                arrays[name] = np.fromfile(raw, dtype=dtype, count=count).reshape(shape, order=order)
            else:
                arrays[name] = np.memmap(raw, dtype=dtype, mode="r", offset=start + header, shape=shape, order=order)
    if only is not None and only not in arrays:
        raise KeyError(f"{only} is not a member of {Path(path).name}")
    return arrays


def read_array_file(path: Path, kind: str, format: int | tuple[int, ...], key: str, mapped: bool = False
                    ) -> tuple[dict, dict[str, np.ndarray]]:
    """The manifest and arrays of the file made for ``key``, checked.

    ``mapped`` maps the arrays from the file read-only instead of reading them (on POSIX systems,
    where a file mapped by a reader can still be replaced by a writer): a large entity-name
    index loads in a fraction of the time, the checksum still read over every byte.

    Raises
    ------
    ArrayFileUnusable
        Missing, of another kind, format or key, or damaged (checksum, shapes, unreadable).
    """
    path = Path(path)
    manifest = read_manifest(path, kind, format)
    if manifest.get("key") != key:
        raise ArrayFileUnusable(f"{path.name} was made for another version of what it indexes")
    try:
        arrays = {name: a for name, a in _members(path, mapped and os.name == "posix").items() if name != "manifest"}
    except (OSError, ValueError, KeyError, EOFError, zipfile.BadZipFile) as exc:
        raise ArrayFileUnusable(f"{path} is damaged ({exc})") from None
    if {name: list(a.shape) for name, a in arrays.items()} != manifest.get("shapes"):
        raise ArrayFileUnusable(f"{path} is damaged (its arrays are not the shapes it lists)")
    if _checksum(arrays) != manifest.get("checksum"):
        raise ArrayFileUnusable(f"{path} is damaged (checksum mismatch)")
    return manifest, arrays
