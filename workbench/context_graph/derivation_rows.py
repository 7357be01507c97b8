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

:meth:`DerivationRows.derive` then aggregates entities, edges, the passage layer's inputs and the
merge record with numpy, to the same graph :func:`assemble_graph` makes (the reference; tested
against it after random sequences of writes). Note-typed surfaces and declared links depend on
the documents' titles, so they are resolved again on every derivation (there are few).

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
from ..runtime.gc_paused import gc_paused
from ..record.packed_rows import unpack_mention_fields, unpack_pairs
from ..model import COMENTION_ORIGIN, COMENTION_RELATION, Edge, Entity, Merge
from ..record.store import Store
from .assemble import GraphParts, type_rank
from .canon import Canonicalizer, FormTally
from ..text.name_keys import DEFAULT_ARTICLES, NAME_KEY_VERSION, display_form, name_key

__all__ = ["FILE_NAME", "DerivationRows", "RowsStale", "Strings", "followed_rows", "rows_key"]

FILE_NAME = "rows.npz"
KIND = "derivation rows"
FORMAT = 2  # 2: mentions and co-mention pairs also read from their packed rows (schema 2)

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


def followed_rows(folder: Path, key: str, store: Store, canonicalizer: Canonicalizer
                  ) -> tuple[DerivationRows, dict[str, tuple[str, str | None]], str]:
    """The rows kept in ``folder`` for ``key`` brought up to the record, the chunk context they were
    brought up with, and how: followed, or read whole when the kept ones are missing, stale or
    damaged, or cannot follow the record (then the whole record is read and canonicalized)."""
    chunk_context = store.chunk_context()
    aliases, splits = store.aliases(), store.splits()
    try:
        rows = DerivationRows.load(folder, key)
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


def _distinct(values: np.ndarray) -> np.ndarray:
    """The distinct ``values``, ascending (``np.unique`` by sorting: its hash path took 50 times as
    long on 300,000 integers with numpy 2.4).

    >>> _distinct(np.array([3, 1, 3])).tolist()
    [1, 3]
    """
    ordered = np.sort(values)
    return ordered[np.r_[True, ordered[1:] != ordered[:-1]]] if len(ordered) else ordered


def _first_order(codes: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Distinct ``codes`` in order of first appearance, each with its first index and count."""
    unique, first, counts = np.unique(codes, return_index=True, return_counts=True)
    order = np.argsort(first, kind="stable")
    return unique[order], first[order], counts[order]


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

    # -- the graph's parts ----------------------------------------------------------------------
    def mentioned(self) -> dict[str, np.ndarray]:
        """Every mention's columns: those kept a row apiece, then the packed ones, each in record
        order as :meth:`~workbench.record.store.Store.iter_mentions` gives them."""
        return {name: np.concatenate([self.mentions[name], self.packed_mentions[name]]) for name in _MENTION_COLUMNS}

    def stated(self) -> dict[str, np.ndarray]:
        """Every stated triple's columns: the triple rows, then the co-mention pairs (relation
        ``co_mentioned``, origin ``comention``, confidence 1), each in record order as
        :meth:`~workbench.record.store.Store.iter_triples` gives them."""
        c, pairs = self.comentions, len(self.comentions["rowid"])
        packed = {**{name: c[name] for name in _COMENTION_COLUMNS},
                  "relation": np.full(pairs, self.tables["relations"].id(COMENTION_RELATION), dtype=np.int64),
                  "origin": np.full(pairs, self.tables["origins"].id(COMENTION_ORIGIN), dtype=np.int64),
                  "confidence": np.ones(pairs, dtype=np.float64)}
        return {name: np.concatenate([self.triples[name], packed[name]]) for name in (*_TRIPLE_COLUMNS, "confidence")}

    @gc_paused()
    def derive(self, chunk_context: Mapping[str, tuple[str, str | None]], canonicalizer: Canonicalizer,
               notes: Mapping[str, str]) -> tuple[GraphParts, list[Merge]]:
        """The graph's parts and the merge record, from the rows as they are: what
        :func:`~workbench.context_graph.assemble.graph_parts` and :class:`FormTally` make of the record."""
        return _Aggregate(self, chunk_context, canonicalizer, notes).parts()


class _Aggregate:
    """One derivation from the rows: the state shared by its steps."""

    def __init__(self, rows: DerivationRows, chunk_context: Mapping[str, tuple[str, str | None]],
                 canonicalizer: Canonicalizer, notes: Mapping[str, str]) -> None:
        self.rows, self.canonicalizer, self.notes = rows, canonicalizer, notes
        self.mentions, self.triples = rows.mentioned(), rows.stated()
        self.keys, self.forms = rows.tables["keys"], rows.tables["forms"]
        # The key of a name with no letters or digits, which makes no entity: given an id now, since a
        # note's title resolved later may be the first name to have it.
        self.empty = self.keys.id("")
        chunks = rows.tables["chunks"].values
        context = [chunk_context.get(c, (None, None)) for c in chunks]
        times = sorted({ts for _, ts in context if ts is not None})
        self.times = times
        at = {ts: i for i, ts in enumerate(times)}
        self.chunk_time = _ids(at[ts] if ts is not None else -1 for _, ts in context)
        documents = sorted({doc for doc, _ in context if doc})
        self.documents = documents
        doc_at = {doc: i for i, doc in enumerate(documents)}
        self.chunk_doc = _ids(doc_at[doc] if doc else -1 for doc, _ in context)
        self.chunk_ids = chunks
        self.chunk_rank = _ranks(chunks)
        self.resolved: dict[tuple[str, bool], tuple[int, int]] = {}
        types = rows.tables["types"]
        self.note_type, self.title_type = types.get("note"), types.get("title")

    def lookup(self, surface: str, note: bool) -> tuple[int, int]:
        """(key id, form id) of a surface as :func:`assemble_graph`'s ``note`` resolves it."""
        found = self.resolved.get((surface, note))
        if found is None:
            written_as = self.notes.get(name_key(surface), surface) if note else surface
            found = self.resolved[(surface, note)] = (self.keys.id(self.canonicalizer.key(written_as)),
                                                      self.forms.id(display_form(written_as)))
        return found

    def parts(self) -> tuple[GraphParts, list[Merge]]:
        rows = self.rows
        m = self.mentions
        surface_key, surface_form = rows.surface["key"], rows.surface["form"]
        key = surface_key[m["surface"]]
        form = surface_form[m["surface"]]
        if self.note_type >= 0:  # note-typed surfaces go through the notes' titles, which change with them
            noted = np.flatnonzero(m["type"] == self.note_type)
            distinct, which = np.unique(m["surface"][noted], return_inverse=True)
            surfaces = rows.tables["surfaces"].values
            resolved = np.array([self.lookup(surfaces[s], True) for s in distinct.tolist()], dtype=np.int64).reshape(-1, 2)
            key[noted], form[noted] = resolved[which, 0], resolved[which, 1]
        valid = key != self.empty
        stream = {"key": key[valid], "form": form[valid], "type": m["type"][valid], "chunk": m["chunk"][valid]}
        title_rows = stream["type"] == self.title_type
        title_of = self._titles(stream["chunk"][title_rows], stream["key"][title_rows])
        edges, extra = self._edges(_distinct(stream["key"]))
        for name in stream:
            stream[name] = np.concatenate([stream[name], extra[name]])
        entities, forms = self._entities(stream)
        chunk_entities: dict[str, set[str]] = {}
        width = max(len(self.keys.values), 1)
        pairs = _distinct(stream["chunk"] * width + stream["key"])
        for chunk, k in zip((pairs // width).tolist(), (pairs % width).tolist()):
            chunk_entities.setdefault(self.chunk_ids[chunk], set()).add(self.keys.values[k])
        return GraphParts(entities, edges, chunk_entities, forms, title_of), self._merges()

    def _titles(self, chunks: np.ndarray, keys: np.ndarray) -> dict[str, str]:
        """chunk -> title key: each chunk in order of its first title mention, keyed by its last."""
        order, _, _ = _first_order(chunks)
        last = {c: k for c, k in zip(chunks.tolist(), keys.tolist())}
        return {self.chunk_ids[c]: self.keys.values[last[c]] for c in order.tolist()}

    def _triple_keys(self, surfaces: np.ndarray, via_notes: np.ndarray) -> tuple[np.ndarray, list[str | None]]:
        """Keys of triple ends, and the written form of those resolved through the notes."""
        rows = self.rows
        keys = rows.surface["key"][surfaces]
        written: list[str | None] = [None] * len(surfaces)
        names = rows.tables["surfaces"].values
        via = np.flatnonzero(via_notes)
        distinct, which = np.unique(surfaces[via], return_inverse=True)
        titles = [self.notes.get(name_key(names[s]), names[s]) for s in distinct.tolist()]
        title_keys = _ids(self.keys.id(self.canonicalizer.key(title)) for title in titles)
        keys[via] = title_keys[which] if len(via) else keys[via]
        for i, w in zip(via.tolist(), which.tolist()):
            written[i] = titles[w]
        return keys, written

    def _edges(self, mentioned: np.ndarray) -> tuple[list[Edge], dict[str, np.ndarray]]:
        """The edges, and the mentions of triple ends nobody mentioned (what ``note`` adds for them)."""
        rows, t = self.rows, self.triples
        via_notes = (t["origin"] == rows.tables["origins"].get("declared")) | (t["subject_type"] == self.note_type)
        subject, subject_written = self._triple_keys(t["subject"], via_notes)
        obj, object_written = self._triple_keys(t["object"], via_notes)
        empty = self.empty
        valid = np.flatnonzero((subject != empty) & (obj != empty) & (subject != obj))
        known = np.zeros(len(self.keys.values), dtype=bool)
        known[mentioned] = True
        # Only ends whose key nobody mentioned can add a mention: a Python pass over those alone.
        ends = np.concatenate([valid[~known[subject[valid]]] * 2, valid[~known[obj[valid]]] * 2 + 1])
        extra: dict[str, list[int]] = {"key": [], "form": [], "type": [], "chunk": []}
        added: set[int] = set()
        names = rows.tables["surfaces"].values
        for end in np.sort(ends).tolist():
            i, is_object = divmod(end, 2)
            k = int(obj[i] if is_object else subject[i])
            if k in added:
                continue
            surface = int(t["object"][i] if is_object else t["subject"][i])
            written = object_written[i] if is_object else subject_written[i]
            etype = int(t["object_type"][i] if is_object else t["subject_type"][i])
            note = etype == self.note_type
            if written is None and not note:
                k2, f2 = int(rows.surface["key"][surface]), int(rows.surface["form"][surface])
            else:
                k2, f2 = self.lookup(written if written is not None else names[surface], note)
            if k2 == empty:
                continue
            for name, value in (("key", k2), ("form", f2), ("type", etype), ("chunk", int(t["chunk"][i]))):
                extra[name].append(value)
            added.add(k2)
        return self._grouped(valid, subject, obj), {name: _ids(v) for name, v in extra.items()}

    def _grouped(self, valid: np.ndarray, subject: np.ndarray, obj: np.ndarray) -> list[Edge]:
        """One edge per (subject, relation, object), sorted by them: its distinct chunks and
        documents, highest confidence (at least 0), first and last time, and first origin."""
        t = self.triples
        if not len(valid):
            return []
        keys, relations = self.keys.values, self.rows.tables["relations"].values
        key_rank = _ranks(keys)
        relation_rank = _ranks(relations)
        code = ((key_rank[subject[valid]] * len(relations) + relation_rank[t["relation"][valid]]) * len(keys)
                + key_rank[obj[valid]])
        groups, inverse = np.unique(code, return_inverse=True)
        order = np.argsort(inverse, kind="stable")  # rows by group, each group in triple order
        rows = valid[order]
        group = inverse[order]
        starts = np.flatnonzero(np.r_[True, group[1:] != group[:-1]])
        confidence = np.maximum(np.maximum.reduceat(t["confidence"][rows], starts), 0.0)
        chunk = t["chunk"][rows]
        times = self.chunk_time[chunk]
        big = len(self.times)
        first = np.minimum.reduceat(np.where(times >= 0, times, big), starts)
        last = np.maximum.reduceat(times, starts)
        chunk_ranks, chunk_bounds = _distinct_sorted(group, self.chunk_rank[chunk], len(groups))
        chunk_names = [self.chunk_ids[c] for c in np.argsort(self.chunk_rank)[chunk_ranks].tolist()]
        docs = self.chunk_doc[chunk]
        has_doc = docs >= 0
        doc_values, doc_bounds = _distinct_sorted(group[has_doc], docs[has_doc], len(groups))
        doc_names = [self.documents[d] for d in doc_values.tolist()]
        chunk_at, doc_at = chunk_bounds.tolist(), doc_bounds.tolist()
        origins = self.rows.tables["origins"].values
        edges = []
        for g, start in enumerate(starts.tolist()):
            i = int(rows[start])
            edges.append(Edge(
                source=keys[subject[i]], relation=relations[t["relation"][i]], target=keys[obj[i]],
                chunk_ids=tuple(chunk_names[chunk_at[g]:chunk_at[g + 1]]),
                documents=tuple(doc_names[doc_at[g]:doc_at[g + 1]]),
                confidence=float(confidence[g]),
                first_seen=self.times[first[g]] if first[g] < big else None,
                last_seen=self.times[last[g]] if last[g] >= 0 else None,
                origin=origins[t["origin"][i]]))
        return edges

    def _entities(self, stream: dict[str, np.ndarray]) -> tuple[list[Entity], dict[str, dict[str, int]]]:
        """Entities in order of first mention, and each key's forms with counts in order of first use."""
        keys, form_names, types = self.keys.values, self.forms.values, self.rows.tables["types"].values
        width = max(len(form_names), len(types), 1)
        order, _, mentions = _first_order(stream["key"])
        pairs, _, counts = _first_order(stream["key"] * width + stream["form"])
        forms: dict[str, dict[str, int]] = {}
        for pair, count in zip(pairs.tolist(), counts.tolist()):
            forms.setdefault(keys[pair // width], {})[form_names[pair % width]] = count
        written_rows = stream["type"] != self.title_type
        written_pairs, _, written_counts = _first_order(stream["key"][written_rows] * width + stream["form"][written_rows])
        written: dict[int, list[tuple[str, int]]] = {}
        for pair, count in zip(written_pairs.tolist(), written_counts.tolist()):
            written.setdefault(pair // width, []).append((form_names[pair % width], count))
        type_pairs, _, type_counts = _first_order(stream["key"] * width + stream["type"])
        typed: dict[int, list[tuple[str, int]]] = {}
        for pair, count in zip(type_pairs.tolist(), type_counts.tolist()):
            typed.setdefault(pair // width, []).append((types[pair % width], count))
        times = self.chunk_time[stream["chunk"]]
        big = len(self.times)
        first = np.full(len(keys), big)
        np.minimum.at(first, stream["key"], np.where(times >= 0, times, big))
        last = np.full(len(keys), -1)
        np.maximum.at(last, stream["key"], times)
        entities = []
        for k, count in zip(order.tolist(), mentions.tolist()):
            key = keys[k]
            shown = written.get(k) or list(forms[key].items())
            name = min(shown, key=lambda kv: (-kv[1], -len(kv[0]), kv[0]))[0]
            etype = min(typed[k], key=lambda kv: (type_rank(kv[0]), -kv[1], kv[0]))[0]
            entities.append(Entity(key=key, name=name, type=etype, mentions=count,
                                   first_seen=self.times[first[k]] if first[k] < big else None,
                                   last_seen=self.times[last[k]] if last[k] >= 0 else None))
        return entities, forms

    def _merges(self) -> list[Merge]:
        """The merge record (:meth:`FormTally.merges`) of the mentions, counted from the arrays:
        a mention's key and form as the tally takes them (no note titles)."""
        rows, m = self.rows, self.mentions
        key = rows.surface["key"][m["surface"]]
        form = rows.surface["tally_form"][m["surface"]]
        valid = key != self.empty
        key, form, chunk = key[valid], form[valid], m["chunk"][valid]
        width = max(len(self.forms.values), 1)
        pairs = _distinct(key * width + form)
        pair_keys, per_key = np.unique(pairs // width, return_counts=True)
        merged = pair_keys[per_key >= 2]
        tally = FormTally(self.canonicalizer)
        if not len(merged):
            return tally.merges()
        inside = np.isin(key, merged)
        key, form, chunk = key[inside], form[inside], chunk[inside]
        chunks = max(len(self.chunk_ids), 1)
        uses, use_of = np.unique(key * width + form, return_inverse=True)
        entries = []
        for pair in uses.tolist():
            entry: list = [0, {}]
            tally.groups[self.keys.values[pair // width]][self.forms.values[pair % width]] = entry
            entries.append(entry)
        for u, count in zip(*np.unique(use_of, return_counts=True)):
            entries[u][0] = int(count)
        seen, _, _ = _first_order(use_of.astype(np.int64) * chunks + chunk)
        for code in seen.tolist():
            u, c = divmod(code, chunks)
            entries[u][1][self.chunk_ids[c]] = None
        return tally.merges()


def _ranks(strings: list[str]) -> np.ndarray:
    """Each string's place in sorted order."""
    ranks = np.empty(len(strings), dtype=np.int64)
    ranks[np.argsort(np.array(strings, dtype=object), kind="stable")] = np.arange(len(strings))
    return ranks


def _distinct_sorted(group: np.ndarray, values: np.ndarray, groups: int) -> tuple[np.ndarray, np.ndarray]:
    """Each group's distinct ``values`` in ascending order, one after another, and where each
    group's begin (``bounds[g]:bounds[g + 1]``).

    >>> values, bounds = _distinct_sorted(np.array([0, 1, 0, 0]), np.array([5, 2, 3, 5]), 2)
    >>> values.tolist(), bounds.tolist()
    ([3, 5, 2], [0, 2, 3])
    """
    width = int(values.max()) + 1 if len(values) else 1
    codes = _distinct(group * width + values)
    return codes % width, np.searchsorted(codes // width, np.arange(groups + 1))
