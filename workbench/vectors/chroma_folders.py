"""What an embedded Chroma store leaves behind when a collection is deleted.

Chroma 1.5 keeps each collection's vector index in a folder named by its segment's id beside
``chroma.sqlite3``, and deleting a collection leaves that folder on disk
(chroma-core/chroma#5259). :func:`remove_orphan_folders` deletes the folders no segment of the
store's catalogue names. The catalogue itself keeps the pages of the rows deleted with the
collection; :func:`compact_catalogue` gives them back (``VACUUM``, as Chroma's own
``chroma utils vacuum`` does). Both are called by a writer, after it deleted a collection,
holding the workspace's lock.
"""

from __future__ import annotations

import re
import shutil
import sqlite3
from pathlib import Path

__all__ = ["compact_catalogue", "folder_mib", "remove_orphan_folders"]

#: Seconds to wait for a reader's lock on the catalogue before leaving it as it is.
CATALOGUE_BUSY_S = 5

_SEGMENT_ID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")


def folder_mib(folder: Path) -> float:
    """The size of every file under ``folder``, in MiB to one decimal (0.0 when there is none)."""
    return round(sum(p.stat().st_size for p in Path(folder).rglob("*") if p.is_file()) / 2**20, 1)


def remove_orphan_folders(chroma_dir: Path) -> int:
    """Delete the segment folders of the store in ``chroma_dir`` that its catalogue no longer
    names. Returns how many; nothing is deleted when the catalogue cannot be read."""
    catalogue = Path(chroma_dir) / "chroma.sqlite3"
    if not catalogue.is_file():
        return 0
    try:
        db = sqlite3.connect(f"{catalogue.resolve().as_uri()}?mode=ro", uri=True, timeout=30)
        try:
            live = {row[0] for row in db.execute("SELECT id FROM segments")}
        finally:
            db.close()
    except sqlite3.Error:  # another catalogue layout, or a locked file: leave every folder
        return 0
    orphans = [folder for folder in Path(chroma_dir).iterdir()
               if folder.is_dir() and _SEGMENT_ID.fullmatch(folder.name) and folder.name not in live]
    for folder in orphans:
        shutil.rmtree(folder, ignore_errors=True)
    return len(orphans)


def compact_catalogue(chroma_dir: Path) -> None:
    """Give back the free pages of the store's catalogue in ``chroma_dir`` (``VACUUM``). Nothing
    is done when there is no catalogue or a reader holds it longer than :data:`CATALOGUE_BUSY_S`
    (its pages are then given back by the next rebuild)."""
    catalogue = Path(chroma_dir) / "chroma.sqlite3"
    if not catalogue.is_file():
        return
    try:
        db = sqlite3.connect(catalogue, timeout=CATALOGUE_BUSY_S, isolation_level=None)
        try:
            db.execute("VACUUM")
        finally:
            db.close()
    except sqlite3.Error:
        pass
