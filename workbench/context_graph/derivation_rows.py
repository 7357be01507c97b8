"""The canonicalized mention and triple rows of the record, kept beside it, so a write step
canonicalizes only the rows added since the last derivation and aggregates the graph from arrays.

:func:`~workbench.context_graph.assemble.assemble_graph` passes over every mention and triple in
Python, canonicalizing each surface (20,000 notes: 300,000 mentions and 264,000 triples, most of
a write's graph step). ``rows.npz`` keeps, per row in record order, its rowid, chunk and string
ids (surface, type; subject, object, relation, origin), a chunk's packed mentions and co-mention
pairs (:mod:`workbench.record.packed_rows`) as an entry each with the rowid of their packed row, and per
distinct surface its canonical key, name key and display forms. A write step (:meth:`DerivationRows.sync`):

- drops the rows of documents written again or removed (a document's mark is its content hash and
  write time: its chunks, mentions and triples are replaced only with it);
- reads the rows whose rowid it does not hold (a rowid that vanished while its document stood
  is a record it cannot follow: :class:`RowsStale`, and the rows are read again whole);
- canonicalizes only the surfaces it has not seen, and on an alias or split change re-keys only
  the surfaces whose name key an alias maps (before or after) or whose form is (or was) split.

:class:`~workbench.context_graph.parts_state.PartsState` then aggregates entities, edges, the
passage layer's inputs and the merge record from these rows with numpy (a writing process keeps it
to aggregate only what its next write changes; :func:`~workbench.context_graph.parts_state.derive_parts`
aggregates them whole), to the same graph
:func:`assemble_graph` makes (the reference; tested against it after random sequences of writes).
Note-typed surfaces and declared links depend on the documents' titles, so they are resolved again
on every derivation (there are few).

The file is an :mod:`~workbench.runtime.array_file` (no pickle, checksummed, atomic), keyed by the
workspace, the name-key version and the canonicalization settings: any other file is not used,
and the rows are read again whole.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Collection, Iterable, Mapping
from pathlib import Path

import numpy as np

from ..runtime.array_file import ArrayFileUnusable, from_text, read_array_file, to_text, write_array_file
from ..record.packed_rows import unpack_mention_fields, unpack_pairs
from ..record.store import Store
from .canon import Canonicalizer
from ..text.name_keys import DEFAULT_ARTICLES, NAME_KEY_VERSION, display_form, name_key

__all__ = ["FILE_NAME", "DerivationRows", "RowsStale", "Strings", "followed_rows", "rows_key"]

FILE_NAME = "rows.npz"
KIND = "derivation rows"
FORMAT = 3  # 2: mentions and co-mention pairs also read from their packed rows (schema 2); 3: marks made by SQLite

#: Chunk ids the tables may hold past twice the record's before the rows are read whole to compact them.
TABLE_SLACK = 1000

_MENTION_COLUMNS = ("chunk", "surface", "type")
_TRIPLE_COLUMNS = ("chunk", "subject", "object", "relation", "origin", "subject_type", "object_type")
_COMENTION_COLUMNS = ("chunk", "subject", "object", "subject_type", "object_type")
_SURFACE_COLUMNS = ("key", "name_key", "form", "tally_form")
_TABLES = ("documents", "chunks", "surfaces", "types", "relations", "origins", "keys", "forms")


class RowsStale(Exception):
    """The kept rows cannot be brought up to date with the record; the message says why."""


class Strings:
    """Distinct strings, each with the index it was first given.

    >>> s = Strings(["a"])
    >>> s.id("b"), s.id("a"), s.values
    (1, 0, ['a', 'b'])
    """

    def __init__(self, values: Iterable[str] = ()) -> None:
        self.values: list[str] = list(values)
        self.index: dict[str, int] = {value: i for i, value in enumerate(self.values)}

    def id(self, value: str) -> int:
        found = self.index.get(value)
        if found is None:
            found = self.index[value] = len(self.values)
            self.values.append(value)
        return found

    def get(self, value: str) -> int:
        """The index of ``value``, -1 when it has none."""
        return self.index.get(value, -1)


def rows_key(workspace_id: str, canonicalization: Mapping) -> str:
    """What the kept rows are valid for: the workspace, the name keys and the canonicalization
    settings (user aliases and splits are followed, not keyed)."""
    shaping = {"workspace": workspace_id, "name_key": NAME_KEY_VERSION, "format": FORMAT,
               "canonicalization": canonicalization}
    return hashlib.sha256(json.dumps(shaping, sort_keys=True).encode()).hexdigest()


def followed_rows(folder: Path, key: str, store: Store, canonicalizer: Canonicalizer, held: DerivationRows | None = None
                  ) -> tuple[DerivationRows, dict[str, tuple[str, str | None]], str]:
    """The rows kept in ``folder`` for ``key`` (or ``held``, those kept in memory for it) brought up
    to the record, the chunk context they were brought up with, and how: followed, or read whole
    when the kept ones are missing, stale or damaged, or cannot follow the record (then the whole
    record is read and canonicalized)."""
    chunk_context = store.chunk_context()
    aliases, splits = store.aliases(), store.splits()
    try:
        rows = held if held is not None else DerivationRows.load(folder, key)
        read, dropped = rows.sync(store, canonicalizer, aliases, splits, chunk_context)
        return rows, chunk_context, f"followed: {read} rows read, {dropped} dropped"
    except (ArrayFileUnusable, RowsStale) as exc:
        rows = DerivationRows()
        rows.sync(store, canonicalizer, aliases, splits, chunk_context)
        return rows, chunk_context, f"read whole: {exc}"


def _ids(values: Iterable[int]) -> np.ndarray:
    return np.fromiter(values, dtype=np.int64)


def _once(rowids: np.ndarray) -> np.ndarray:
    """Sorted ``rowids`` with each repeat dropped (a packed co-mention row gives an entry a pair)."""
    return rowids[np.r_[True, rowids[1:] != rowids[:-1]]] if len(rowids) else rowids


def _narrowest(values: np.ndarray) -> np.ndarray:
    """Integer ``values`` in the smallest integer type that holds them, as they are written (int64
    would make the file several times larger); :meth:`DerivationRows.load` reads them
    back as int64. Other arrays as they are.

    >>> _narrowest(np.array([0, 300, 7])).dtype, _narrowest(np.array([-1, 100])).dtype
    (dtype('uint16'), dtype('int16'))
    """
    if values.dtype.kind not in "iu" or not len(values):
        return values
    low, high = np.min_scalar_type(int(values.min())), np.min_scalar_type(int(values.max()))
    return values.astype(np.result_type(low, high), copy=False)


class DerivationRows:
    """The canonicalized rows of one workspace's record (see the module docstring).

    Examples
    --------
    >>> rows = DerivationRows()
    >>> rows.mentions["rowid"].tolist(), rows.tables["keys"].values
    ([], [])
    """

    def __init__(self) -> None:
        self.tables = {name: Strings() for name in _TABLES}
        self.marks: list[str] = []  # per document: the mark it had when its rows were read
        self.chunk_document = np.zeros(0, dtype=np.int64)
        self.surface = {name: np.zeros(0, dtype=np.int64) for name in _SURFACE_COLUMNS}
        self.mentions = {name: np.zeros(0, dtype=np.int64) for name in ("rowid", *_MENTION_COLUMNS)}
        self.triples = {name: np.zeros(0, dtype=np.int64) for name in ("rowid", *_TRIPLE_COLUMNS)}
        self.triples["confidence"] = np.zeros(0, dtype=np.float64)
        # One entry per mention or pair, each with the rowid of the chunk's packed row it came from.
        self.packed_mentions = {name: np.zeros(0, dtype=np.int64) for name in ("rowid", *_MENTION_COLUMNS)}
        self.comentions = {name: np.zeros(0, dtype=np.int64) for name in ("rowid", *_COMENTION_COLUMNS)}
        self.aliases: dict[str, str] = {}  # the user aliases and splits the keys were made with
        self.splits: list[str] = []

    # -- on disk ------------------------------------------------------------------------------
    def save(self, folder: Path, key: str) -> Path:
        """Write the rows into ``folder`` atomically, for ``key``; returns the file's path."""
        arrays = {"tables": to_text({name: self.tables[name].values for name in _TABLES}),
                  "marks": to_text(self.marks), "chunk_document": _narrowest(self.chunk_document),
                  **{f"surface_{name}": _narrowest(a) for name, a in self.surface.items()},
                  **{f"mention_{name}": _narrowest(a) for name, a in self.mentions.items()},
                  **{f"triple_{name}": _narrowest(a) for name, a in self.triples.items()},
                  **{f"packed_mention_{name}": _narrowest(a) for name, a in self.packed_mentions.items()},
                  **{f"comention_{name}": _narrowest(a) for name, a in self.comentions.items()}}
        path = Path(folder) / FILE_NAME
        write_array_file(path, KIND, FORMAT, key, arrays, extra={"aliases": self.aliases, "splits": self.splits})
        return path

    @classmethod
    def load(cls, folder: Path, key: str) -> DerivationRows:
        """The rows kept in ``folder`` for ``key``.

        Raises
        ------
        ArrayFileUnusable
            No file, one made for another key, or a damaged one (checksum, shapes, references).
        """
        path = Path(folder) / FILE_NAME
        manifest, arrays = read_array_file(path, KIND, FORMAT, key)
        rows = cls()
        try:
            tables = from_text(arrays["tables"])
            rows.tables = {name: Strings(tables[name]) for name in _TABLES}
            rows.marks = list(from_text(arrays["marks"]))
            rows.chunk_document = arrays["chunk_document"].astype(np.int64)
            rows.surface = {name: arrays[f"surface_{name}"].astype(np.int64) for name in _SURFACE_COLUMNS}
            rows.mentions = {name: arrays[f"mention_{name}"].astype(np.int64) for name in ("rowid", *_MENTION_COLUMNS)}
            rows.triples = {name: arrays[f"triple_{name}"].astype(np.int64) for name in ("rowid", *_TRIPLE_COLUMNS)}
            rows.triples["confidence"] = arrays["triple_confidence"].astype(np.float64)
            rows.packed_mentions = {name: arrays[f"packed_mention_{name}"].astype(np.int64)
                                    for name in ("rowid", *_MENTION_COLUMNS)}
            rows.comentions = {name: arrays[f"comention_{name}"].astype(np.int64)
                               for name in ("rowid", *_COMENTION_COLUMNS)}
            rows.aliases, rows.splits = dict(manifest["aliases"]), list(manifest["splits"])
        except (KeyError, TypeError, ValueError) as exc:
            raise ArrayFileUnusable(f"{path} is damaged ({exc})") from None
        rows._check(path)
        return rows

    def _check(self, path: Path) -> None:
        """Every reference inside its table, one length per column: else the file is damaged."""
        sizes = {name: len(t.values) for name, t in self.tables.items()}
        within = [(self.chunk_document, "documents"), *((self.surface[n], "keys") for n in ("key", "name_key")),
                  *((self.surface[n], "forms") for n in ("form", "tally_form")),
                  (self.mentions["chunk"], "chunks"), (self.mentions["surface"], "surfaces"),
                  (self.mentions["type"], "types"), (self.triples["chunk"], "chunks"),
                  (self.triples["subject"], "surfaces"), (self.triples["object"], "surfaces"),
                  (self.triples["relation"], "relations"), (self.triples["origin"], "origins"),
                  (self.triples["subject_type"], "types"), (self.triples["object_type"], "types"),
                  (self.packed_mentions["chunk"], "chunks"), (self.packed_mentions["surface"], "surfaces"),
                  (self.packed_mentions["type"], "types"),
                  (self.comentions["chunk"], "chunks"), (self.comentions["subject"], "surfaces"),
                  (self.comentions["object"], "surfaces"), (self.comentions["subject_type"], "types"),
                  (self.comentions["object_type"], "types")]
        lengths_ok = (len(self.marks) == sizes["documents"] and len(self.chunk_document) == sizes["chunks"]
                      and all(len(a) == sizes["surfaces"] for a in self.surface.values())
                      and len({len(a) for a in self.mentions.values()}) == 1
                      and len({len(a) for a in self.triples.values()}) == 1
                      and len({len(a) for a in self.packed_mentions.values()}) == 1
                      and len({len(a) for a in self.comentions.values()}) == 1)
        if not lengths_ok or any(len(a) and (a.min() < 0 or a.max() >= sizes[t]) for a, t in within):
            raise ArrayFileUnusable(f"{path} is damaged (a row refers outside its tables)")

    # -- following the record -----------------------------------------------------------------
    def sync(self, store: Store, canonicalizer: Canonicalizer, aliases: Mapping[str, str],
             splits: Collection[str], chunk_context: Mapping[str, tuple[str, str | None]]) -> tuple[int, int]:
        """Bring the rows up to the record in ``store``: re-key the surfaces an alias or split
        change can move, drop the rows of documents written again or removed, read the rows not
        held (``chunk_context`` gives the document of each new chunk). Returns ``(rows read, rows dropped)``.

        Raises
        ------
        RowsStale
            A row the record no longer holds whose document was not written again, or tables
            grown past twice the record's chunks by documents written again (read whole to compact).
        """
        if len(self.tables["chunks"].values) > 2 * len(chunk_context) + TABLE_SLACK:
            # Chunks written again leave their old ids (and surfaces) in the tables: start afresh.
            raise RowsStale("the rows' tables hold more than twice the record's chunks")
        self._rekey(canonicalizer, dict(aliases), sorted(splits))
        marks = store.rows.document_marks()
        documents = self.tables["documents"]
        changed = [i for i, (doc, mark) in enumerate(zip(documents.values, self.marks)) if marks.get(doc, "") != mark]
        for doc, mark in marks.items():
            if documents.get(doc) < 0:
                documents.id(doc)
                self.marks.append(mark)
        for i in changed:
            self.marks[i] = marks.get(documents.values[i], "")
        stale_chunk = np.isin(self.chunk_document, changed)
        read = dropped = 0
        for table, rows in (("mentions", self.mentions), ("triples", self.triples),
                            ("chunk_mentions", self.packed_mentions), ("comentions", self.comentions)):
            kept = ~stale_chunk[rows["chunk"]]
            dropped += int(len(kept) - kept.sum())
            for name in rows:
                rows[name] = rows[name][kept]
            new, count = self._new_rowids(store, table, _once(rows["rowid"]))
            if len(new):
                for fetched in store.rows.row_batches(table, None if len(new) == count else new.tolist()):
                    self._add(rows, table, fetched)
                    read += len(fetched)
            if len(_once(rows["rowid"])) != count:  # written meanwhile: a derivation of this record cannot be made
                raise RowsStale(f"{table}: {len(_once(rows['rowid']))} rows kept for {count} in the record")
        self._canonicalize_new(canonicalizer)
        self._note_chunk_documents(chunk_context)
        return read, dropped

    @staticmethod
    def _new_rowids(store: Store, table: str, held: np.ndarray) -> tuple[np.ndarray, int]:
        """The rowids of ``table`` not ``held``: those above the highest held when the record's
        count and sum of rowids say the held ones all stand (a write adds rows at the end); else
        from every rowid of the record. And the number of rows in the record."""
        count, total = store.rows.row_totals(table)
        above = store.rows.row_ids(table, int(held[-1]) if len(held) else -1)
        if count == len(held) + len(above) and total == int(held.sum()) + int(above.sum()):
            return above, count
        now = store.rows.row_ids(table)  # rows came back below the highest (an accepted candidate)
        if not np.isin(held, now).all():
            raise RowsStale(f"{table} rows left the record while their documents stayed")
        return np.setdiff1d(now, held, assume_unique=True), len(now)

    def _add(self, rows: dict[str, np.ndarray], table: str, fetched: list[tuple]) -> None:
        chunks, surfaces, types = self.tables["chunks"], self.tables["surfaces"], self.tables["types"]
        new_chunks = len(chunks.values)
        if table == "comentions":  # a row a chunk: an entry a pair
            fetched = [(rowid, chunk, *pair) for rowid, chunk, body in fetched for pair in unpack_pairs(body, chunk)]
        elif table == "chunk_mentions":  # a row a chunk: an entry a mention (surface, type)
            fetched = [(rowid, chunk, surface, kind) for rowid, chunk, body in fetched
                       for surface, kind, _ in unpack_mention_fields(body, chunk)]
        added: dict[str, np.ndarray] = {"rowid": _ids(r[0] for r in fetched),
                                        "chunk": _ids(chunks.id(r[1]) for r in fetched)}
        if table == "comentions":
            added["subject"] = _ids(surfaces.id(r[2]) for r in fetched)
            added["object"] = _ids(surfaces.id(r[3]) for r in fetched)
            added["subject_type"] = _ids(types.id(r[4]) for r in fetched)
            added["object_type"] = _ids(types.id(r[5]) for r in fetched)
        elif table in ("mentions", "chunk_mentions"):
            added["surface"] = _ids(surfaces.id(r[2]) for r in fetched)
            added["type"] = _ids(types.id(r[3]) for r in fetched)
        else:
            relations, origins = self.tables["relations"], self.tables["origins"]
            added["subject"] = _ids(surfaces.id(r[2]) for r in fetched)
            added["object"] = _ids(surfaces.id(r[3]) for r in fetched)
            added["relation"] = _ids(relations.id(r[4]) for r in fetched)
            added["origin"] = _ids(origins.id(r[5]) for r in fetched)
            added["subject_type"] = _ids(types.id(r[6]) for r in fetched)
            added["object_type"] = _ids(types.id(r[7]) for r in fetched)
            added["confidence"] = np.fromiter((r[8] for r in fetched), dtype=np.float64, count=len(fetched))
        if len(chunks.values) > new_chunks:
            self.chunk_document = np.concatenate([self.chunk_document, np.full(len(chunks.values) - new_chunks, -1)])
        self.chunk_document[added["chunk"]] = -1  # each chunk read is given its document as the record has it now
        order = np.argsort(np.concatenate([rows["rowid"], added["rowid"]]), kind="stable")
        for name in rows:
            rows[name] = np.concatenate([rows[name], added[name]])[order]

    def _note_chunk_documents(self, chunk_context: Mapping[str, tuple[str, str | None]]) -> None:
        """Record the document of every chunk the last sync read rows of."""
        unknown = np.flatnonzero(self.chunk_document < 0)
        documents, chunks = self.tables["documents"], self.tables["chunks"].values
        for i in unknown:
            self.chunk_document[i] = documents.id(chunk_context.get(chunks[i], ("", None))[0] or "")
        while len(self.marks) < len(documents.values):
            self.marks.append("")

    def _canonicalize_new(self, canonicalizer: Canonicalizer) -> None:
        """Key and display forms of the surfaces first seen by this sync."""
        surfaces, keys, forms = self.tables["surfaces"], self.tables["keys"], self.tables["forms"]
        start = len(self.surface["key"])
        new = surfaces.values[start:]
        if not new:
            return
        articles = canonicalizer.articles
        same_articles = articles == DEFAULT_ARTICLES  # then the two display forms are one
        columns = {name: np.empty(len(new), dtype=np.int64) for name in ("key", "name_key", "form", "tally_form")}
        key_column, name_key_column = columns["key"], columns["name_key"]
        form_column, tally_column = columns["form"], columns["tally_form"]
        key_id, form_id, canonical = keys.id, forms.id, canonicalizer.key
        for i, surface in enumerate(new):  # one pass over the surfaces not keyed yet
            key_column[i] = key_id(canonical(surface))
            name_key_column[i] = key_id(name_key(surface, articles))
            form_column[i] = form_id(display_form(surface))
            tally_column[i] = form_column[i] if same_articles else form_id(display_form(surface, articles))
        for name, column in columns.items():
            self.surface[name] = np.concatenate([self.surface[name], column])

    def _rekey(self, canonicalizer: Canonicalizer, aliases: dict[str, str], splits: list[str]) -> None:
        """Key again the surfaces a change of user aliases or splits can move: those whose name
        key is an alias source before or after it, or whose form is split before or after."""
        if aliases == self.aliases and splits == self.splits:
            return
        keys, forms, surfaces = self.tables["keys"], self.tables["forms"], self.tables["surfaces"].values
        articles = canonicalizer.articles
        sources = set(canonicalizer.alias_sources) | {name_key(a, articles) for a in self.aliases}
        split_forms = set(canonicalizer.splits) | {display_form(s, articles).lower() for s in self.splits}
        source_ids = [keys.index[k] for k in sources if k in keys.index]
        split_ids = [i for i, form in enumerate(forms.values) if form.lower() in split_forms]
        moved = np.flatnonzero(np.isin(self.surface["name_key"], source_ids)
                               | np.isin(self.surface["tally_form"], split_ids))
        for i in moved:
            self.surface["key"][i] = keys.id(canonicalizer.key(surfaces[i]))
        self.aliases, self.splits = aliases, splits
