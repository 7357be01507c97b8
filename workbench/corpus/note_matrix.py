"""The notes' unit vectors in a file beside the record (``workspace.note_vectors.bin`` beside
``workspace.sqlite``), so that a write compares its notes with every note by reading one array
rather than a row of the record per note.

The record's ``note_vectors`` stay the truth; the file is a copy made for one state of them,
named by a random token that the same write records in the record (the meta key
:data:`~workbench.record.note_rows.NOTE_MATRIX_KEY`). A write of a few notes writes only them,
to ``workspace.note_vectors.delta.bin``: every row made again since the base file was written
and every note removed since; once those reach :data:`DELTA_SHARE` of the base's rows, the base
is written whole again. A file of another token (a write that failed after writing it), of
another number of notes than the record holds (a row deleted by hand), damaged (the CRC-32 of its
rows) or missing is not used: the vectors are read from the record and the base written again.
Each file is a JSON header (its length first, 8 bytes little-endian) then float32 rows: numbers
and text only, read without pickle.

Examples
--------
>>> import tempfile
>>> record, ids, rows = Path(tempfile.mkdtemp()) / "r.sqlite", [f"n{i:02d}.md" for i in range(40)], np.ones((40, 2))
>>> held = read_note_matrix(record, write_note_matrix(record, NoteMatrix(ids, ["h"] * 40, rows)), 40)
>>> now = held.after({"n00.md"}, {"n40.md": ("h", np.ones(2))})  # one note in, one out
>>> token = write_note_matrix(record, now, held, {"n00.md", "n40.md"})
>>> sorted(path.name for path in record.parent.iterdir()), read_note_matrix(record, token, 40).after(set(), {}).ids[-2:]
(['r.note_vectors.bin', 'r.note_vectors.delta.bin'], ['n39.md', 'n40.md'])
>>> read_note_matrix(record, "another", 40) is None
True
"""

from __future__ import annotations

import os
import secrets
from bisect import bisect_left
import zlib
from collections.abc import Collection, Mapping
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import orjson

from ..runtime.array_file import new_temporary, open_for_reading

__all__ = ["DELTA_SHARE", "HeldMatrix", "NoteMatrix", "matrix_files", "read_note_matrix", "write_note_matrix"]

#: The notes written over the base (rows made again, notes removed) may reach this share of its rows.
DELTA_SHARE = 0.05
_FORMAT = 1
#: Where the rows start: a multiple of this (the header padded with spaces).
_ALIGNMENT = 64


@dataclass
class NoteMatrix:
    """Notes' unit vectors."""

    ids: list[str]
    """The notes, sorted."""
    hashes: list[str]
    """The content hash each note's vector was made from."""
    unit32: np.ndarray
    """Each note's mean chunk vector as a unit vector (made in float64, kept in float32), in
    ``ids``' order."""

    def row(self, note: str) -> int | None:
        """The row of ``note``, None when it is not held (found by bisection in the sorted ids)."""
        n = bisect_left(self.ids, note)
        return n if n < len(self.ids) and self.ids[n] == note else None


@dataclass
class HeldMatrix:
    """The matrix as read: the base file's rows, and the delta's over them."""

    base: NoteMatrix
    token: str = ""
    """The base file's token ("" when the rows were read from the record)."""
    delta: NoteMatrix | None = None
    removed: list[str] = field(default_factory=list)
    """Notes of the base removed since."""

    @property
    def over_base(self) -> set[str]:
        """The notes the delta writes over the base: rows made again, notes removed."""
        return {*(self.delta.ids if self.delta is not None else ()), *self.removed}

    def hashes(self) -> dict[str, str]:
        """``note -> content hash`` of every note held."""
        held = dict(zip(self.base.ids, self.base.hashes))
        for note in self.removed:
            held.pop(note, None)
        if self.delta is not None:
            held.update(zip(self.delta.ids, self.delta.hashes))
        return held

    def after(self, leaving: Collection[str], made: Mapping[str, tuple[str, np.ndarray]]) -> NoteMatrix:
        """The notes held less ``leaving``, with the ``made`` ones (``note -> (content hash, unit
        row)``): the base's rows copied once, a run at a time between the notes that leave or come."""
        extra = {} if self.delta is None else {note: (digest, self.delta.unit32[n]) for n, (note, digest) in
                                                enumerate(zip(self.delta.ids, self.delta.hashes)) if note not in leaving}
        extra.update(made)
        base = self.base
        drops = {n for note in {*self.over_base, *leaving, *made} if (n := base.row(note)) is not None}
        # At one position of the base, a note coming goes before the base's note leaving there.
        events = sorted([*((bisect_left(base.ids, note), 0, note) for note in extra), *((n, 1, "") for n in drops)])
        if not events:
            return base
        ids: list[str] = []
        hashes: list[str] = []
        runs: list[np.ndarray] = []
        at = 0
        for n, leaves, note in events:
            ids += base.ids[at:n]
            hashes += base.hashes[at:n]
            runs.append(base.unit32[at:n])
            at = n
            if leaves:
                at = n + 1
            else:
                ids.append(note)
                hashes.append(extra[note][0])
                runs.append(np.asarray(extra[note][1], dtype=np.float32)[None, :])
        ids += base.ids[at:]
        hashes += base.hashes[at:]
        runs.append(base.unit32[at:])
        # runs of no rows left out: an empty base's rows have no width of the vectors' (no note yet)
        rows = [run for run in runs if len(run)]
        return NoteMatrix(ids, hashes, np.concatenate(rows) if rows else base.unit32[:0])


def matrix_files(record: Path) -> tuple[Path, Path]:
    """The base file and the delta over it, beside the ``record`` file and named after it."""
    record = Path(record)
    return record.with_name(f"{record.stem}.note_vectors.bin"), record.with_name(f"{record.stem}.note_vectors.delta.bin")


def read_note_matrix(record: Path, token: str | None, count: int) -> HeldMatrix | None:
    """The matrix of the files beside ``record`` when written as ``token`` for ``count`` notes, else None."""
    base_token, _, delta_token = (token or "").partition(".")
    base = _read(matrix_files(record)[0], base_token)
    if base is None:
        return None
    held, replaced = HeldMatrix(base[1], base_token), 0
    if delta_token:
        delta = _read(matrix_files(record)[1], delta_token)
        if delta is None or delta[0].get("base") != base_token or delta[1].unit32.shape[1] != base[1].unit32.shape[1]:
            return None
        held.delta, held.removed, replaced = delta[1], delta[0]["removed"], delta[0]["replaced"]
    if len(held.base.ids) - replaced + len(held.delta.ids if held.delta is not None else ()) != count:
        return None
    return held


def write_note_matrix(record: Path, matrix: NoteMatrix, held: HeldMatrix | None = None,
                      changed: Collection[str] = ()) -> str:
    """Write ``matrix`` beside ``record``; the token that names it. When ``held`` was read from a
    base file and ``changed`` names the notes made again or removed since, only the rows over that
    base are written (unless they are many): those of ``changed`` and of ``held``'s delta."""
    if held is not None and held.token:
        over = sorted(held.over_base | set(changed))
        if len(over) <= DELTA_SHARE * len(held.base.ids):
            at = {note: n for note in over if (n := matrix.row(note)) is not None}
            rows = list(at.values())
            base = held.base.ids
            delta = _write(matrix_files(record)[1], {
                "base": held.token, "ids": [matrix.ids[n] for n in rows], "hashes": [matrix.hashes[n] for n in rows],
                "removed": [note for note in over if note not in at],
                "replaced": sum(1 for note in over if (n := bisect_left(base, note)) < len(base) and base[n] == note)},
                matrix.unit32[rows])
            return f"{held.token}.{delta}"
    return _write(matrix_files(record)[0], {"ids": matrix.ids, "hashes": matrix.hashes}, matrix.unit32)


def _read(path: Path, token: str) -> tuple[dict, NoteMatrix] | None:
    """The header and rows of the file at ``path`` when written as ``token``, else None."""
    if not token:
        return None
    try:
        with open_for_reading(path) as raw:
            about = orjson.loads(raw.read(int.from_bytes(raw.read(8), "little")))
            if about.get("format") != _FORMAT or about.get("token") != token:
                return None
            rows, width = len(about["ids"]), about["width"]
            unit = np.fromfile(raw, dtype="<f4", count=rows * width)
    except (OSError, ValueError, KeyError, TypeError):
        return None  # missing or damaged: made again from the record
    if unit.size != rows * width or len(about["hashes"]) != rows or zlib.crc32(unit.data) != about["crc32"]:
        return None
    return about, NoteMatrix(about["ids"], about["hashes"], unit.reshape(rows, width))


def _write(path: Path, about: dict, unit32: np.ndarray) -> str:
    """Write ``about`` and the rows ``unit32`` to ``path`` (atomically, replacing the file there); the token."""
    token = secrets.token_hex(8)
    unit = np.ascontiguousarray(unit32, dtype="<f4")
    header = orjson.dumps({**about, "format": _FORMAT, "token": token, "width": unit.shape[1] if unit.ndim == 2 else 0,
                           "crc32": zlib.crc32(unit.data)})
    header += b" " * (-(8 + len(header)) % _ALIGNMENT)
    temporary, handle = new_temporary(path)
    try:
        # Not synced to disk: a file lost or damaged in a crash is only made again from the record.
        with os.fdopen(handle, "wb") as raw:
            raw.write(len(header).to_bytes(8, "little"))
            raw.write(header)
            raw.write(unit.data)
        os.replace(temporary, path)
    finally:
        temporary.unlink(missing_ok=True)
    return token
