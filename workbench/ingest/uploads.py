"""Files uploaded from a browser, saved where an ingest reads them as documents like any other.

Every upload goes to one folder (``<workspace>/uploads``) under the path it was uploaded with,
its folders kept: a folder ``notes`` uploaded holds ``uploads/notes/a.md`` and is ingested as
that folder (ids ``notes/a.md``, as ``ingest notes`` gives), a loose file as itself (id
``a.md``). The same file uploaded again lands on the same path, so the ingest reports it
unchanged; a file whose bytes a stored file already holds under another name is not saved at
all and is reported as identical to that document.

Examples
--------
>>> upload_parts("../notes\\\\2024/<a>.md")
['notes', '2024', '_a_.md']
>>> upload_parts("..")
['upload']
"""

from __future__ import annotations

import hashlib
import re
import unicodedata
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

__all__ = ["SavedUploads", "save_uploads", "upload_parts"]

_UNSAFE = re.compile(r"[^\w.\- ]+", re.UNICODE)
#: Folders deeper than this in an upload's name are dropped (the file keeps its innermost ones).
MAX_DEPTH = 8


@dataclass
class SavedUploads:
    """What :func:`save_uploads` did with a batch of uploaded files."""

    paths: list[Path] = field(default_factory=list)
    """What to ingest: each uploaded top-level folder and loose file, once, in upload order."""
    saved: int = 0
    """Files written (new, or with bytes other than the ones saved before under that path)."""
    same_path: int = 0
    """Files whose path already held these very bytes (not written again: the ingest finds them unchanged)."""
    identical: list[tuple[str, str]] = field(default_factory=list)
    """``(uploaded name, stored document)`` for files not saved: their bytes are a stored file's."""


def upload_parts(name: str) -> list[str]:
    """The safe path parts an uploaded file called ``name`` is saved under: ``\\`` and ``/``
    separate folders, ``.``/``..`` and empty parts are dropped, unsafe characters become ``_``,
    and a name of nothing becomes ``upload``."""
    parts = unicodedata.normalize("NFC", name).replace("\\", "/").split("/")
    safe = [_UNSAFE.sub("_", part).strip(" .")[:120] for part in parts]
    safe = [part for part in safe if part]
    return safe[-MAX_DEPTH:] or ["upload"]


def save_uploads(folder: Path, files: Iterable[tuple[str, bytes]],
                 stored: Mapping[str, str] | None = None) -> SavedUploads:
    """Save ``(name, bytes)`` uploads under ``folder``, their folders kept (see the module).

    ``stored`` maps the SHA-256 of each stored file to one of its document ids: an upload with
    those bytes, saved under another path, is reported in :attr:`SavedUploads.identical` and not
    saved.

    Raises
    ------
    ValueError
        If a name would still lead outside ``folder`` (never, after :func:`upload_parts`).
    """
    stored = stored or {}
    result = SavedUploads()
    root = folder.resolve()
    tops: dict[Path, None] = {}
    for name, data in files:
        parts = upload_parts(name)
        target = folder.joinpath(*parts)
        if root not in target.resolve().parents:  # belt and braces: never outside the folder
            raise ValueError(f"refusing to save upload {name!r} outside {folder}")
        digest = hashlib.sha256(data).hexdigest()
        if target.is_file() and target.read_bytes() == data:
            result.same_path += 1  # untouched: its stat still tells the ingest it is unchanged
        elif digest in stored:
            result.identical.append((name, stored[digest]))
            continue
        else:
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(data)
            result.saved += 1
        tops[folder / parts[0]] = None
    result.paths = list(tops)
    return result
