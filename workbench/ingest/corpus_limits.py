"""A corpus too large for this machine is refused before any work starts, with a clear message.

An ingest holds the graph it derives from the whole record, so its peak memory grows with the
text the workspace will hold. A fixed 500 MB and 150 bytes of memory per byte of text covers
every corpus measured with the model resident (docs/scaling.md; short notes cost the most per
byte: a chunk costs about the same however short it is).
``ingest.max_corpus_mb`` caps the text a workspace may hold after an ingest; left empty it is
what 80% of this machine's memory holds at that rate.

>>> limit_bytes(max_corpus_mb=1.5)
1500000
>>> check_corpus_size(["notes/"], 2_500_000, 0, 1_500_000)
Traceback (most recent call last):
...
workbench.ingest.corpus_limits.CorpusTooLarge: notes/: the workspace would hold 2.5 MB of text, over the limit of 1.5 MB (ingest.max_corpus_mb); nothing was ingested. Ingest a part of it, or raise ingest.max_corpus_mb in settings.yaml if this machine has the memory (about 150 bytes of memory per byte of text: docs/scaling.md)
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping, Sequence

from .loaders import CorpusWalk, LoadError

__all__ = ["CorpusTooLarge", "MEMORY_FIXED_BYTES", "MEMORY_PER_TEXT_BYTE", "check_corpus_size", "file_sizes", "limit_bytes",
           "projected_text_bytes"]

#: Bytes of peak ingest memory per byte of text the workspace holds, past a fixed part (see above).
MEMORY_PER_TEXT_BYTE = 150
#: The fixed part of an ingest's peak memory: the interpreter, the model, Chroma.
MEMORY_FIXED_BYTES = 500_000_000
#: The share of the machine's memory an ingest may plan to use.
MEMORY_SHARE = 0.8


class CorpusTooLarge(LoadError):
    """The text a workspace would hold after an ingest is over ``ingest.max_corpus_mb``
    (shown, as every :class:`~workbench.ingest.loaders.LoadError`, as one line)."""


def machine_memory_bytes() -> int:
    """This machine's physical memory (0 when the system does not tell)."""
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        return 0


def limit_bytes(max_corpus_mb: float | None) -> int | None:
    """The text limit in bytes: the setting, or what this machine's memory holds (None: unknown)."""
    if max_corpus_mb is not None:
        return int(max_corpus_mb * 1_000_000)
    memory = machine_memory_bytes()
    return max(0, int((memory * MEMORY_SHARE - MEMORY_FIXED_BYTES) / MEMORY_PER_TEXT_BYTE)) if memory else None


def file_sizes(walk: CorpusWalk) -> dict[str, int]:
    """``real path -> size`` of every file the load walks (the same
    :class:`~workbench.ingest.loaders.CorpusWalk`, so hidden names, a workspace folder inside the
    notes and links out of them are left out as the load leaves them out): a bound, unsupported
    files counting too, from the walk's stats. A file that cannot be read counts nothing; the load
    reports it.

    >>> import pathlib, tempfile
    >>> folder = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (folder / "a.md").write_text("hello")
    >>> list(file_sizes(CorpusWalk([folder])).values())
    [5]
    """
    return {file.source: file.stat.st_size for file in walk.files if file.stat is not None}


def projected_text_bytes(sizes: Mapping[str, int], stored: Iterable[tuple[str, int]]) -> int:
    """Bytes of text after an ingest: the files given (``real path -> size``), and the stored
    documents' text whose source is not among them (``(source path, text bytes)``)."""
    kept = sum(size for source, size in stored if source not in sizes)
    return kept + sum(sizes.values())


def check_corpus_size(paths: Sequence[str], projected: int, stored: int, limit: int | None) -> None:
    """Raise :class:`CorpusTooLarge` when ``projected`` bytes of text exceed ``limit``."""
    if limit is None or projected <= limit:
        return
    given = ", ".join(str(p) for p in paths)
    held = f" (it holds {stored / 1e6:.1f} MB now)" if stored else ""
    raise CorpusTooLarge(
        f"{given}: the workspace would hold {projected / 1e6:.1f} MB of text{held}, over the limit of "
        f"{limit / 1e6:.1f} MB (ingest.max_corpus_mb); nothing was ingested. Ingest a part of it, or raise "
        f"ingest.max_corpus_mb in settings.yaml if this machine has the memory (about {MEMORY_PER_TEXT_BYTE} "
        "bytes of memory per byte of text: docs/scaling.md)")
