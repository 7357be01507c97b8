"""File digests read again only when a file changed: what tells an ingest which files are new.

An ingest of a folder asks, for every file under it, whether the file is stored as it is now.
Reading and hashing every file answered it, at a cost that grows with the folder for an
ingest that changed one file. Like git's index, each file's size and modification time are kept beside its
SHA-256; a file whose ``stat`` still shows them is not read again.

A file written in the same instant it was hashed could change again without its modification
time moving (a coarse file-system clock). So, as git does for its "racily clean" entries, a
digest is trusted from the ``stat`` alone only when the file's modification time is at least
:data:`RACY_WINDOW_NS` older than the moment it was hashed; a file modified closer to that is
read again.

Examples
--------
>>> import os, tempfile
>>> from pathlib import Path
>>> path = Path(tempfile.mkdtemp()) / "note.md"
>>> _ = path.write_text("hello")
>>> os.utime(path, ns=(10**18, 10**18))           # an old modification time
>>> hashes = FileHashes({})
>>> first = hashes.digest(path, "note.md")
>>> later = FileHashes(hashes.read_now())
>>> _ = path.write_text("HELLO")                 # same size; the time put back: a stat cannot tell
>>> os.utime(path, ns=(10**18, 10**18))
>>> later.digest(path, "note.md") == first, later.reads
(True, 0)
>>> os.utime(path, ns=(2 * 10**18, 2 * 10**18))  # any change of the time: read again
>>> later.digest(path, "note.md") == first, later.reads
(False, 1)
"""

from __future__ import annotations

import hashlib
import os
import stat
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import NamedTuple

from .loaders import MAX_FILE_BYTES, SUPPORTED_EXTENSIONS

__all__ = ["FileHashes", "HashedFile", "RACY_WINDOW_NS", "loadable_stat"]

#: A digest is trusted from ``stat`` alone only for files last modified this long before it was taken.
RACY_WINDOW_NS = 2_000_000_000


class HashedFile(NamedTuple):
    """What a file's ``stat`` showed when it was hashed, and the digest."""

    size: int
    mtime_ns: int
    hashed_ns: int
    """Wall-clock time of the ``stat`` taken before the file was read."""
    digest: str


def loadable_stat(path: str | Path, info: os.stat_result | None = None) -> os.stat_result | None:
    """The ``stat`` of a file an ingest can load (``info``: one taken already); None for anything
    else (missing, unreadable, not a regular file, such as a FIFO that would block, an unsupported
    extension, too large)."""
    if info is None:
        try:
            info = os.stat(path)
        except OSError:
            return None
    if not stat.S_ISREG(info.st_mode) or _extension(os.fspath(path)) not in SUPPORTED_EXTENSIONS \
            or info.st_size > MAX_FILE_BYTES:
        return None
    return info


def _extension(path: str) -> str:
    """``Path(path).suffix.lower()``, without making a path object for each of many files.

    >>> [_extension(p) for p in ("a/b.MD", "a/.md", "a/b.", "a/b.tar.gz")]
    ['.md', '', '', '.gz']
    """
    name = path.rpartition("/")[2]
    dot = name.rfind(".")
    return name[dot:].lower() if 0 < dot < len(name) - 1 else ""


class FileHashes:
    """SHA-256 of files by source path, from ``known`` (what an earlier ingest hashed) where a
    file's ``stat`` is unchanged and safely old, else read now (:attr:`reads` counts them)."""

    def __init__(self, known: Mapping[str, tuple[int, int, int, str]], clock: Callable[[], int] = time.time_ns) -> None:
        self._known = known  # the rows as given, unpacked where read: a HashedFile made per row cost more than the lookups
        self._clock = clock
        self._hashed: dict[str, HashedFile] = {}
        self.reads = 0

    def digest(self, path: str | Path, source: str, info: os.stat_result | None = None) -> str | None:
        """The SHA-256 of the file at ``path`` (stored under ``source``, its resolved path), or
        None when it is not a loadable file (:func:`loadable_stat`) or cannot be read; ``info``:
        its ``stat`` when the caller took one (the walk of an ingest did), else it is taken here."""
        info = loadable_stat(path, info)
        if info is None:
            return None
        before = self._known.get(source)
        if before is not None:
            size, mtime_ns, hashed_ns, kept = before
            if size == info.st_size and mtime_ns == info.st_mtime_ns and info.st_mtime_ns <= hashed_ns - RACY_WINDOW_NS:
                return kept
        hashed_ns = self._clock()
        try:
            with open(path, "rb") as handle:
                digest = hashlib.file_digest(handle, "sha256").hexdigest()
        except OSError:
            return None
        self.reads += 1
        # The stat taken before reading: a file changed while read shows another one next time.
        self._hashed[source] = HashedFile(info.st_size, info.st_mtime_ns, hashed_ns, digest)
        return digest

    def known_digest(self, source: str) -> str | None:
        """The digest an earlier ingest kept for ``source``, or None."""
        before = self._known.get(source)
        return HashedFile(*before).digest if before is not None else None

    def read_now(self) -> dict[str, HashedFile]:
        """The files this object read, to keep for the next ingest."""
        return dict(self._hashed)
