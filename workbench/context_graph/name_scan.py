"""The names found in each passage's text, kept beside the graph snapshot for the next derivation.

Every write step derives the graph again, and reading each passage's text for the names the
graph knows was the largest part of it after one note was added. ``names.npz`` keeps the
:class:`~workbench.context_graph.passages.NameScan` of the last derivation: the name table and, per passage,
the names found in it. The next derivation reads only the passages that are new or whose text
holds the first word of a name that was added, removed or re-keyed since; the others keep their
names, which is exact (tested against reading every passage). It also keeps the last comparison
of names for synonym edges (:class:`~workbench.context_graph.synonyms.SynonymScan`), so only the
name groups that changed are compared again.

Like the graph snapshot it is replaced atomically, read with ``allow_pickle=False`` and checked
(format, checksum, shapes). It holds no record version: a passage's id is a hash of its text, so
a stale scan is still right about every passage it names. Anything unusable and it is ignored:
every passage is read, as without it.

>>> import tempfile
>>> from workbench.context_graph.passages import NameScan
>>> folder = Path(tempfile.mkdtemp())
>>> _ = save_name_scan(folder, NameScan({"oslo": "oslo"}, {"c1": ("oslo",), "c2": ()}))
>>> load_name_scan(folder)
NameScan(table={'oslo': 'oslo'}, found={'c1': ('oslo',), 'c2': ()}, synonyms=None)
>>> (folder / FILE_NAME).write_bytes(b"not a scan") and load_name_scan(folder) is None
True
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from ..runtime.array_file import ArrayFileUnusable, from_text, ragged, read_array_file, to_text, write_array_file
from .passages import NameScan
from .synonyms import SynonymScan

__all__ = ["FILE_NAME", "load_name_scan", "save_name_scan"]

FILE_NAME = "names.npz"
KIND = "name scan"
#: 2: the synonym comparison kept too.
FORMAT = 2
#: Changed whenever what a name matches changes (how text is split into words, the stop names) or how
#: names are grouped for synonyms (synonyms.GROUP_LIMIT).
MATCHING = "names-1"


def save_name_scan(folder: Path, scan: NameScan) -> Path:
    """Write ``scan`` into ``folder`` atomically; returns the file's path."""
    keys = sorted({key for found in scan.found.values() for key in found})
    at = {key: i for i, key in enumerate(keys)}
    chunk_ids = sorted(scan.found)
    flat, offsets = ragged([[at[key] for key in scan.found[chunk_id]] for chunk_id in chunk_ids])
    path = Path(folder) / FILE_NAME
    write_array_file(path, KIND, FORMAT, MATCHING, {
        "table": to_text(scan.table), "keys": to_text(keys), "chunk_ids": to_text(chunk_ids),
        "found": flat, "found_offsets": offsets, "synonyms": to_text(_synonym_columns(scan.synonyms))})
    return path


def _synonym_columns(synonyms: SynonymScan | None) -> dict | None:
    if synonyms is None:
        return None
    keys = list(synonyms.names)
    return {"threshold": synonyms.threshold, "keys": keys, "names": list(synonyms.names.values()),
            "words": [synonyms.words[key] for key in keys], "pairs": synonyms.pairs}


def _synonym_scan(columns: dict | None) -> SynonymScan | None:
    """The comparison :func:`_synonym_columns` wrote; ValueError or TypeError when damaged."""
    if columns is None:
        return None
    keys, names, words = columns["keys"], columns["names"], columns["words"]
    if not (len(keys) == len(names) == len(words)) or not isinstance(columns["threshold"], float):
        raise ValueError("the synonym columns differ in length")
    words_of = dict(zip(keys, words))
    pairs = tuple((str(a), str(b), float(s)) for a, b, s in columns["pairs"])
    if any(a not in words_of or b not in words_of for a, b, _ in pairs):
        raise ValueError("a synonym pair names a key that was not compared")
    return SynonymScan(columns["threshold"], dict(zip(keys, names)), words_of, pairs)


def load_name_scan(folder: Path) -> NameScan | None:
    """The scan kept in ``folder``, or None when there is none or it cannot be used."""
    try:
        _, arrays = read_array_file(Path(folder) / FILE_NAME, KIND, FORMAT, MATCHING)
        table, keys, chunk_ids = (from_text(arrays[name]) for name in ("table", "keys", "chunk_ids"))
        flat, offsets = arrays["found"], arrays["found_offsets"]
        if not (isinstance(table, dict) and len(offsets) == len(chunk_ids) + 1 and offsets[-1] == len(flat)
                and (not len(flat) or 0 <= flat.min() <= flat.max() < len(keys))):
            return None
        key_array = np.array(keys, dtype=object)
        rows = np.split(key_array[flat], offsets[1:-1]) if chunk_ids else []
        return NameScan(table, {chunk_id: tuple(row.tolist()) for chunk_id, row in zip(chunk_ids, rows)},
                        _synonym_scan(from_text(arrays["synonyms"])))
    except (ArrayFileUnusable, KeyError, ValueError, TypeError, IndexError, UnicodeDecodeError):
        return None
