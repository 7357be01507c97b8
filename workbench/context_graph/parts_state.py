"""One derivation's parts kept with the streams they were aggregated from, so that the next
derivation aggregates only what a write changed.

:meth:`DerivationRows.sync <workbench.context_graph.derivation_rows.DerivationRows.sync>` drops
the rows of the documents a write replaced or removed and reads the new ones. From the rows, a
derivation makes two streams: every valid mention (and, after them, the end of a triple that no
mention names) and every valid triple. Each entry has an *identity* that outlives syncs (its
table, its rowid and its place in a packed row), and the streams are in identity order, so the
streams of two derivations compared by identity give exactly the entries that left, came, or
changed (re-keyed by an alias or a split, or resolved through another note title). Only these
are aggregated again:

- the entity, the display forms and the merge entry of each key such an entry names, before or after;
- each edge whose (subject, relation, object) group holds such a triple;
- the mentioned entities and the title of each chunk such an entry is in.

Everything else is the previous derivation's: a write's cost follows the keys and chunks it
touched, not the corpus. A state made from no previous one aggregates every key: the full
derivation (:func:`~workbench.context_graph.assemble.graph_parts`'s, tested equal after random writes).

Examples
--------
>>> from workbench.context_graph.canon import Canonicalizer
>>> state = PartsState.derive(DerivationRows(), {}, Canonicalizer(), {})
>>> state.parts().entities, state.touched
({}, None)
"""

from __future__ import annotations

import bisect
from collections.abc import Iterator, Mapping
from dataclasses import dataclass

import numpy as np

from ..model import COMENTION_ORIGIN, COMENTION_RELATION, Edge, Entity, Merge
from ..runtime.gc_paused import gc_paused
from ..text.name_keys import display_form, name_key
from .array_sets import distinct, distinct_sorted, first_order
from .assemble import GraphParts, type_rank
from .canon import Canonicalizer, FormTally
from .derivation_rows import DerivationRows

__all__ = ["PartsState", "Touched", "derive_parts"]

# An entry's identity: its table (2 bits), the rowid of its row (41 bits) and its place in the row (20 bits:
# a packed row holds fewer mentions than its chunk has characters, and at most 100,000 co-mention pairs).
_TABLE_SHIFT, _ROW_SHIFT = 61, 20
_MENTIONS, _PACKED, _TRIPLES, _PAIRS = 0, 1, 2, 3
_STREAM = ("ident", "key", "form", "type", "chunk")
_TRIPLE_STREAM = ("ident", "subject", "relation", "object", "chunk", "origin", "confidence")
_TALLY = ("ident", "key", "form", "chunk")


@dataclass(frozen=True)
class Touched:
    """What a derivation aggregated again: the keys, edge groups and chunks whose entries changed."""

    keys: frozenset[str]
    """Keys whose entity, forms or merge entry was aggregated again (gone ones included)."""
    chunks: frozenset[str]
    """Chunks whose mentioned entities or title were aggregated again (gone ones included)."""
    edges: int
    """Edge groups aggregated again."""


def _identities(table: int, rowids: np.ndarray, places: np.ndarray | None = None) -> np.ndarray:
    ident = (np.int64(table) << _TABLE_SHIFT) | (rowids.astype(np.int64) << _ROW_SHIFT)
    return ident if places is None else ident | places


def _places(rowids: np.ndarray) -> np.ndarray:
    """Each entry's place among the entries of its row (rows of one rowid are consecutive)."""
    n = len(rowids)
    if not n:
        return np.zeros(0, dtype=np.int64)
    starts = np.flatnonzero(np.r_[True, rowids[1:] != rowids[:-1]])
    return np.arange(n, dtype=np.int64) - np.repeat(starts, np.diff(np.r_[starts, n]))


def _ids(values) -> np.ndarray:
    return np.fromiter(values, dtype=np.int64)


def _ranks(strings: list[str]) -> np.ndarray:
    """Each string's place in sorted order."""
    ranks = np.empty(len(strings), dtype=np.int64)
    ranks[np.argsort(np.array(strings, dtype=object), kind="stable")] = np.arange(len(strings))
    return ranks


def _select(stream: dict[str, np.ndarray], where: np.ndarray) -> dict[str, np.ndarray]:
    return {name: column[where] for name, column in stream.items()}


def _changed(old: dict[str, np.ndarray], new: dict[str, np.ndarray], fields: tuple[str, ...]
             ) -> tuple[dict[str, np.ndarray], dict[str, np.ndarray]]:
    """The entries of two streams (each in identity order) that differ: ``(old ones, new ones)`` —
    those only in one, and those in both whose ``fields`` differ (taken from both sides)."""
    at = np.searchsorted(old["ident"], new["ident"])
    inside = at < len(old["ident"])
    both = np.zeros(len(new["ident"]), dtype=bool)
    both[inside] = old["ident"][at[inside]] == new["ident"][inside]
    kept_old = np.zeros(len(old["ident"]), dtype=bool)
    kept_old[at[both]] = True
    differs = np.zeros(len(new["ident"]), dtype=bool)
    pair = at[both]
    for name in fields:
        differs[both] |= old[name][pair] != new[name][both]
    old_side = ~kept_old
    old_side[at[both & differs]] = True
    return _select(old, old_side), _select(new, ~both | differs)


class _Context:
    """Per derivation: the chunks' documents, times and sort order, the key and form tables."""

    def __init__(self, rows: DerivationRows, chunk_context: Mapping[str, tuple[str, str | None]],
                 canonicalizer: Canonicalizer, notes: Mapping[str, str]) -> None:
        self.rows, self.canonicalizer, self.notes = rows, canonicalizer, notes
        self.keys, self.forms = rows.tables["keys"], rows.tables["forms"]
        # The key of a name with no letters or digits, which makes no entity: given an id now, since a
        # note's title resolved later may be the first name to have it.
        self.empty = self.keys.id("")
        chunks = rows.tables["chunks"].values
        context = [chunk_context.get(c, (None, None)) for c in chunks]
        self.times = sorted({ts for _, ts in context if ts is not None})
        at = {ts: i for i, ts in enumerate(self.times)}
        self.chunk_time = _ids(at[ts] if ts is not None else -1 for _, ts in context)
        self.documents = sorted({doc for doc, _ in context if doc})
        doc_at = {doc: i for i, doc in enumerate(self.documents)}
        self.chunk_doc = _ids(doc_at[doc] if doc else -1 for doc, _ in context)
        self.chunk_ids = chunks
        self.chunk_rank = _ranks(chunks)
        self.resolved: dict[tuple[str, bool], tuple[int, int]] = {}
        types = rows.tables["types"]
        self.note_type, self.title_type = types.get("note"), types.get("title")

    def lookup(self, surface: str, note: bool) -> tuple[int, int]:
        """(key id, form id) of a surface as :func:`~workbench.context_graph.assemble.graph_parts` resolves it."""
        found = self.resolved.get((surface, note))
        if found is None:
            written_as = self.notes.get(name_key(surface), surface) if note else surface
            found = self.resolved[(surface, note)] = (self.keys.id(self.canonicalizer.key(written_as)),
                                                      self.forms.id(display_form(written_as)))
        return found

    def time(self, index: int) -> str | None:
        return self.times[index] if 0 <= index < len(self.times) else None

    # -- the streams ----------------------------------------------------------------------------
    def mention_stream(self) -> tuple[dict[str, np.ndarray], dict[str, np.ndarray]]:
        """Every valid mention in identity order (key, form, type, chunk) and the merge tally's
        view of the same mentions (the surface's own key and tally form: no note titles)."""
        rows = self.rows
        plain, packed = rows.mentions, rows.packed_mentions
        m = {name: np.concatenate([plain[name], packed[name]]) for name in ("chunk", "surface", "type")}
        ident = np.concatenate([_identities(_MENTIONS, plain["rowid"]),
                                _identities(_PACKED, packed["rowid"], _places(packed["rowid"]))])
        own_key = rows.surface["key"][m["surface"]]
        key, form = own_key.copy(), rows.surface["form"][m["surface"]]
        if self.note_type >= 0:  # note-typed surfaces go through the notes' titles, which change with them
            noted = np.flatnonzero(m["type"] == self.note_type)
            noted_surfaces, which = np.unique(m["surface"][noted], return_inverse=True)
            surfaces = rows.tables["surfaces"].values
            resolved = np.array([self.lookup(surfaces[s], True) for s in noted_surfaces.tolist()],
                                dtype=np.int64).reshape(-1, 2)
            key[noted], form[noted] = resolved[which, 0], resolved[which, 1]
        valid = key != self.empty
        stream = {"ident": ident[valid], "key": key[valid], "form": form[valid], "type": m["type"][valid],
                  "chunk": m["chunk"][valid]}
        counted = own_key != self.empty
        tally = {"ident": ident[counted], "key": own_key[counted],
                 "form": rows.surface["tally_form"][m["surface"][counted]], "chunk": m["chunk"][counted]}
        return stream, tally

    def _triple_keys(self, surfaces: np.ndarray, via_notes: np.ndarray) -> tuple[np.ndarray, list[str | None]]:
        """Keys of triple ends, and the written form of those resolved through the notes."""
        rows = self.rows
        keys = rows.surface["key"][surfaces]
        written: list[str | None] = [None] * len(surfaces)
        names = rows.tables["surfaces"].values
        via = np.flatnonzero(via_notes)
        via_surfaces, which = np.unique(surfaces[via], return_inverse=True)
        titles = [self.notes.get(name_key(names[s]), names[s]) for s in via_surfaces.tolist()]
        title_keys = _ids(self.keys.id(self.canonicalizer.key(title)) for title in titles)
        keys[via] = title_keys[which] if len(via) else keys[via]
        for i, w in zip(via.tolist(), which.tolist()):
            written[i] = titles[w]
        return keys, written

    def triple_stream(self, mentioned: np.ndarray) -> tuple[dict[str, np.ndarray], dict[str, np.ndarray]]:
        """Every valid triple in identity order, and the mentions of triple ends whose key no mention
        has (what ``graph_parts`` adds for them), in identity order after every mention."""
        rows = self.rows
        t, c = rows.triples, rows.comentions
        pairs = len(c["rowid"])
        columns = {name: np.concatenate([t[name], c[name]]) for name in
                   ("chunk", "subject", "object", "subject_type", "object_type")}
        columns["relation"] = np.concatenate([t["relation"], np.full(pairs, rows.tables["relations"].id(COMENTION_RELATION))])
        columns["origin"] = np.concatenate([t["origin"], np.full(pairs, rows.tables["origins"].id(COMENTION_ORIGIN))])
        columns["confidence"] = np.concatenate([t["confidence"], np.ones(pairs)])
        ident = np.concatenate([_identities(_TRIPLES, t["rowid"]),
                                _identities(_PAIRS, c["rowid"], 2 * _places(c["rowid"]))])
        via_notes = (columns["origin"] == rows.tables["origins"].get("declared")) \
            | (columns["subject_type"] == self.note_type)
        subject, subject_written = self._triple_keys(columns["subject"], via_notes)
        obj, object_written = self._triple_keys(columns["object"], via_notes)
        empty = self.empty
        valid = np.flatnonzero((subject != empty) & (obj != empty) & (subject != obj))
        known = np.zeros(len(self.keys.values), dtype=bool)
        known[mentioned] = True
        # Only ends whose key nobody mentioned can add a mention: a Python pass over those alone.
        ends = np.concatenate([valid[~known[subject[valid]]] * 2, valid[~known[obj[valid]]] * 2 + 1])
        extra: dict[str, list[int]] = {name: [] for name in _STREAM}
        added: set[int] = set()
        names = rows.tables["surfaces"].values
        for end in np.sort(ends).tolist():
            i, is_object = divmod(end, 2)
            k = int(obj[i] if is_object else subject[i])
            if k in added:
                continue
            surface = int(columns["object"][i] if is_object else columns["subject"][i])
            written = object_written[i] if is_object else subject_written[i]
            etype = int(columns["object_type"][i] if is_object else columns["subject_type"][i])
            note = etype == self.note_type
            if written is None and not note:
                k2, f2 = int(rows.surface["key"][surface]), int(rows.surface["form"][surface])
            else:
                k2, f2 = self.lookup(written if written is not None else names[surface], note)
            if k2 == empty:
                continue
            for name, value in (("ident", int(ident[i]) | is_object), ("key", k2), ("form", f2), ("type", etype),
                                ("chunk", int(columns["chunk"][i]))):
                extra[name].append(value)
            added.add(k2)
        triples = {"ident": ident[valid], "subject": subject[valid], "relation": columns["relation"][valid],
                   "object": obj[valid], "chunk": columns["chunk"][valid], "origin": columns["origin"][valid],
                   "confidence": columns["confidence"][valid]}
        return triples, {name: _ids(values) for name, values in extra.items()}

    # -- aggregation of a part ------------------------------------------------------------------
    def entities(self, stream: dict[str, np.ndarray]) -> tuple[dict[str, tuple[int, Entity]], dict[str, dict[str, int]]]:
        """Each key of ``stream`` (a whole key's entries, in identity order): its first identity and
        entity, and its forms with counts in order of first use."""
        keys, form_names, types = self.keys.values, self.forms.values, self.rows.tables["types"].values
        if not len(stream["key"]):
            return {}, {}
        width = max(len(form_names), len(types), 1)
        order, first_at, mentions = first_order(stream["key"])
        pairs, _, counts = first_order(stream["key"] * width + stream["form"])
        forms: dict[str, dict[str, int]] = {}
        for pair, count in zip(pairs.tolist(), counts.tolist()):
            forms.setdefault(keys[pair // width], {})[form_names[pair % width]] = count
        written_rows = stream["type"] != self.title_type
        written_pairs, _, written_counts = first_order(stream["key"][written_rows] * width + stream["form"][written_rows])
        written: dict[int, list[tuple[str, int]]] = {}
        for pair, count in zip(written_pairs.tolist(), written_counts.tolist()):
            written.setdefault(pair // width, []).append((form_names[pair % width], count))
        type_pairs, _, type_counts = first_order(stream["key"] * width + stream["type"])
        typed: dict[int, list[tuple[str, int]]] = {}
        for pair, count in zip(type_pairs.tolist(), type_counts.tolist()):
            typed.setdefault(pair // width, []).append((types[pair % width], count))
        times = self.chunk_time[stream["chunk"]]
        big = len(self.times)
        first = np.full(len(keys), big)
        np.minimum.at(first, stream["key"], np.where(times >= 0, times, big))
        last = np.full(len(keys), -1)
        np.maximum.at(last, stream["key"], times)
        seen = [None, *self.times]  # a time index + 1 -> the time (0: none)
        lows = np.where(first[order] < big, first[order] + 1, 0).tolist()
        highs = (last[order] + 1).tolist()
        idents = stream["ident"][first_at].tolist()
        made: dict[str, tuple[int, Entity]] = {}
        for k, count, ident, low, high in zip(order.tolist(), mentions.tolist(), idents, lows, highs):
            key = keys[k]
            shown = written.get(k) or list(forms[key].items())
            name = min(shown, key=lambda kv: (-kv[1], -len(kv[0]), kv[0]))[0]
            etype = min(typed[k], key=lambda kv: (type_rank(kv[0]), -kv[1], kv[0]))[0]
            made[key] = (ident, Entity(key=key, name=name, type=etype, mentions=count, first_seen=seen[low],
                                       last_seen=seen[high]))
        return made, forms

    def edges(self, triples: dict[str, np.ndarray], in_order: bool = False) -> dict[tuple[str, str, str], Edge]:
        """One edge per (subject, relation, object) group of ``triples`` (whole groups, identity order):
        its distinct chunks and documents sorted, highest confidence (at least 0), first and last
        time, and the origin of its first triple; ``in_order``: sorted by (subject, relation, object)."""
        if not len(triples["ident"]):
            return {}
        keys, relations = self.keys.values, self.rows.tables["relations"].values
        if in_order:  # grouped by the names' ranks: the edges come sorted by (subject, relation, object)
            key_rank, relation_rank = _ranks(keys), _ranks(relations)
            code = ((key_rank[triples["subject"]] * len(relations) + relation_rank[triples["relation"]]) * len(keys)
                    + key_rank[triples["object"]])
        else:
            code = (triples["subject"] * len(relations) + triples["relation"]) * len(keys) + triples["object"]
        groups, inverse = np.unique(code, return_inverse=True)
        order = np.argsort(inverse, kind="stable")  # entries by group, each group in identity order
        group = inverse[order]
        starts = np.flatnonzero(np.r_[True, group[1:] != group[:-1]])
        confidence = np.maximum(np.maximum.reduceat(triples["confidence"][order], starts), 0.0)
        chunk = triples["chunk"][order]
        times = self.chunk_time[chunk]
        big = len(self.times)
        first = np.minimum.reduceat(np.where(times >= 0, times, big), starts)
        last = np.maximum.reduceat(times, starts)
        chunk_ranks, chunk_bounds = distinct_sorted(group, self.chunk_rank[chunk], len(groups))
        by_rank = np.argsort(self.chunk_rank)
        chunk_names = [self.chunk_ids[c] for c in by_rank[chunk_ranks].tolist()]
        docs = self.chunk_doc[chunk]
        has_doc = docs >= 0
        doc_values, doc_bounds = distinct_sorted(group[has_doc], docs[has_doc], len(groups))
        doc_names = [self.documents[d] for d in doc_values.tolist()]
        chunk_at, doc_at = chunk_bounds.tolist(), doc_bounds.tolist()
        origins = self.rows.tables["origins"].values
        made = {}
        for g, start in enumerate(starts.tolist()):
            i = int(order[start])
            source, relation, target = (keys[triples["subject"][i]], relations[triples["relation"][i]],
                                        keys[triples["object"][i]])
            made[(source, relation, target)] = Edge(
                source=source, relation=relation, target=target,
                chunk_ids=tuple(chunk_names[chunk_at[g]:chunk_at[g + 1]]),
                documents=tuple(doc_names[doc_at[g]:doc_at[g + 1]]),
                confidence=float(confidence[g]), first_seen=self.time(int(first[g])),
                last_seen=self.time(int(last[g])), origin=origins[triples["origin"][i]])
        return made

    def chunk_entities(self, stream: dict[str, np.ndarray]) -> dict[str, set[str]]:
        """Chunk id -> the keys its entries in ``stream`` name."""
        found: dict[str, set[str]] = {}
        width = max(len(self.keys.values), 1)
        pairs = distinct(stream["chunk"] * width + stream["key"])
        for chunk, k in zip((pairs // width).tolist(), (pairs % width).tolist()):
            found.setdefault(self.chunk_ids[chunk], set()).add(self.keys.values[k])
        return found

    def titles(self, stream: dict[str, np.ndarray]) -> dict[str, tuple[int, str]]:
        """Chunk id -> (identity of its first title mention, key of its last) of ``stream``'s title rows."""
        rows = stream["type"] == self.title_type
        chunks, keys, idents = stream["chunk"][rows], stream["key"][rows], stream["ident"][rows]
        order, first_at, _ = first_order(chunks)
        last = {c: k for c, k in zip(chunks.tolist(), keys.tolist())}
        return {self.chunk_ids[c]: (ident, self.keys.values[last[c]])
                for c, ident in zip(order.tolist(), idents[first_at].tolist())}

    def merges(self, tally: dict[str, np.ndarray]) -> dict[str, Merge]:
        """The merge entry of each key of ``tally`` (whole keys, identity order) written in two or more forms."""
        width = max(len(self.forms.values), 1)
        key, form, chunk = tally["key"], tally["form"], tally["chunk"]
        pairs = distinct(key * width + form)
        pair_keys, per_key = np.unique(pairs // width, return_counts=True)
        merged = pair_keys[per_key >= 2]
        counter = FormTally(self.canonicalizer)
        if not len(merged):
            return {}
        inside = np.isin(key, merged)
        key, form, chunk = key[inside], form[inside], chunk[inside]
        chunks = max(len(self.chunk_ids), 1)
        uses, first_at, use_of = np.unique(key * width + form, return_index=True, return_inverse=True)
        entries: list[list] = [[0, {}] for _ in range(len(uses))]
        # each key's forms in the order they are first met, as the tally of the mentions meets them
        # (the form ids' order is that of the rows ever read: a note written again moves its forms)
        for u in np.argsort(first_at, kind="stable").tolist():
            pair = int(uses[u])
            counter.groups[self.keys.values[pair // width]][self.forms.values[pair % width]] = entries[u]
        for u, count in zip(*np.unique(use_of, return_counts=True)):
            entries[u][0] = int(count)
        seen, _, _ = first_order(use_of.astype(np.int64) * chunks + chunk)
        for code in seen.tolist():
            u, c = divmod(code, chunks)
            entries[u][1][self.chunk_ids[c]] = None
        return {merge.key: merge for merge in counter.merges()}


def _of_keys(stream: dict[str, np.ndarray], field: str, wanted: np.ndarray, size: int) -> dict[str, np.ndarray]:
    """The entries of ``stream`` whose ``field`` is one of the ids ``wanted`` (ids below ``size``)."""
    mask = np.zeros(size, dtype=bool)
    mask[wanted] = True
    return _select(stream, mask[stream[field]])


class PartsState:
    """The parts of one derivation and the streams they came from (see the module docstring). A
    state is followed once: the next derivation takes its containers over and changes them."""

    def __init__(self, rows: DerivationRows) -> None:
        self.rows = rows
        self.stream: dict[str, np.ndarray] = {name: np.zeros(0, dtype=np.int64) for name in _STREAM}
        self.tally: dict[str, np.ndarray] = {name: np.zeros(0, dtype=np.int64) for name in _TALLY}
        self.triples: dict[str, np.ndarray] = {name: np.zeros(0, dtype=np.int64) for name in _TRIPLE_STREAM}
        self.entities: dict[str, tuple[int, Entity]] = {}  # key -> (first identity, entity)
        self.entity_order: list[tuple[int, str]] = []  # (first identity, key), sorted
        self.in_order: dict[str, Entity] = {}  # key -> entity, in entity_order
        self.forms: dict[str, dict[str, int]] = {}
        self.edges: dict[tuple[str, str, str], Edge] = {}
        self.edge_order: list[tuple[str, str, str]] = []  # the edges' keys, sorted
        self.chunk_entities: dict[str, set[str]] = {}
        self.titles: dict[str, tuple[int, str]] = {}  # chunk -> (first title identity, title key)
        self.title_order: list[tuple[int, str]] = []  # (first title identity, chunk), sorted
        self.merges: dict[str, Merge] = {}
        self.aliases: dict[str, str] = dict(rows.aliases)  # the user aliases and splits it was derived with
        self.splits: list[str] = list(rows.splits)
        #: What the last derivation aggregated again (None: everything, a state made afresh).
        self.touched: Touched | None = None

    @classmethod
    @gc_paused()
    def derive(cls, rows: DerivationRows, chunk_context: Mapping[str, tuple[str, str | None]],
               canonicalizer: Canonicalizer, notes: Mapping[str, str], previous: PartsState | None = None) -> PartsState:
        """The parts of ``rows`` as they are now; with ``previous`` (the state of the same rows
        object before its last sync), only the keys, edges and chunks whose entries changed are
        aggregated again."""
        context = _Context(rows, chunk_context, canonicalizer, notes)
        stream, tally = context.mention_stream()
        triples, extra = context.triple_stream(distinct(stream["key"], below=len(context.keys.values)))
        stream = {name: np.concatenate([stream[name], extra[name]]) for name in _STREAM}
        state = cls(rows)
        state.stream, state.tally, state.triples = stream, tally, triples
        if previous is None or previous.rows is not rows:
            state._aggregate_all(context)
        else:
            state._aggregate_changes(context, previous)
        return state

    def _aggregate_all(self, context: _Context) -> None:
        mentions_only = self.stream["ident"] < (np.int64(_TRIPLES) << _TABLE_SHIFT)
        self.entities, self.forms = context.entities(self.stream)
        self.entity_order = sorted((ident, key) for key, (ident, _) in self.entities.items())
        self.in_order = {key: self.entities[key][1] for _, key in self.entity_order}
        self.edges = context.edges(self.triples, in_order=True)
        self.edge_order = list(self.edges)
        self.chunk_entities = context.chunk_entities(self.stream)
        self.titles = context.titles(_select(self.stream, mentions_only))
        self.title_order = sorted((ident, chunk) for chunk, (ident, _) in self.titles.items())
        self.merges = context.merges(self.tally)

    def _aggregate_changes(self, context: _Context, previous: PartsState) -> None:
        keys, size = context.keys.values, len(context.keys.values)
        gone, came = _changed(previous.stream, self.stream, ("key", "form", "type", "chunk"))
        touched_keys = distinct(np.concatenate([gone["key"], came["key"]]))
        touched_chunks = distinct(np.concatenate([gone["chunk"], came["chunk"]]))
        gone_tally, came_tally = _changed(previous.tally, self.tally, ("key", "form", "chunk"))
        tally_keys = distinct(np.concatenate([gone_tally["key"], came_tally["key"]]))
        if (previous.aliases, previous.splits) != (self.aliases, self.splits):
            tally_keys = distinct(np.concatenate([tally_keys, self.tally["key"]]))  # a form's reasons may have changed
        gone_t, came_t = _changed(previous.triples, self.triples,
                                  ("subject", "relation", "object", "chunk", "origin", "confidence"))
        relations = len(context.rows.tables["relations"].values)
        old_codes = (gone_t["subject"] * relations + gone_t["relation"]) * size + gone_t["object"]
        new_codes = (came_t["subject"] * relations + came_t["relation"]) * size + came_t["object"]
        touched_groups = distinct(np.concatenate([old_codes, new_codes]))

        # entities and forms of the touched keys, from every entry they have now
        # a state is followed once: the next one takes its containers over (no copy of every entity)
        entities, forms, entity_order = previous.entities, previous.forms, previous.entity_order
        first_before: dict[str, int] = {}  # touched key -> its first identity before
        for k in touched_keys.tolist():
            forms.pop(keys[k], None)
            was = entities.pop(keys[k], None)
            if was is not None:
                first_before[keys[k]] = was[0]
                del entity_order[bisect.bisect_left(entity_order, (was[0], keys[k]))]
        made, made_forms = context.entities(_of_keys(self.stream, "key", touched_keys, size))
        for key, (ident, entity) in made.items():
            entities[key] = (ident, entity)
            bisect.insort(entity_order, (ident, key))
        forms.update(made_forms)
        self.entities, self.forms, self.entity_order = entities, forms, entity_order
        self.in_order = self._in_order(previous.in_order, first_before, made)

        # edges of the touched groups
        codes = (self.triples["subject"] * relations + self.triples["relation"]) * size + self.triples["object"]
        regrouped = _select(self.triples, np.isin(codes, touched_groups))
        edges, order = previous.edges, previous.edge_order
        for code in touched_groups.tolist():
            rest, o = divmod(code, size)
            s, r = divmod(rest, relations)
            name = (keys[s], context.rows.tables["relations"].values[r], keys[o])
            if edges.pop(name, None) is not None:
                del order[bisect.bisect_left(order, name)]
        for name, edge in context.edges(regrouped).items():
            edges[name] = edge
            bisect.insort(order, name)
        self.edges, self.edge_order = edges, order

        # the touched chunks' entities and titles
        chunk_ids = context.chunk_ids
        chunk_entities, titles, title_order = previous.chunk_entities.copy(), previous.titles.copy(), \
            list(previous.title_order)
        for c in touched_chunks.tolist():
            chunk_entities.pop(chunk_ids[c], None)
            was_title = titles.pop(chunk_ids[c], None)
            if was_title is not None:
                del title_order[bisect.bisect_left(title_order, (was_title[0], chunk_ids[c]))]
        in_chunks = _of_keys(self.stream, "chunk", touched_chunks, len(chunk_ids))
        chunk_entities.update(context.chunk_entities(in_chunks))
        mentions_only = in_chunks["ident"] < (np.int64(_TRIPLES) << _TABLE_SHIFT)
        for chunk, (ident, key) in context.titles(_select(in_chunks, mentions_only)).items():
            titles[chunk] = (ident, key)
            bisect.insort(title_order, (ident, chunk))
        self.chunk_entities, self.titles, self.title_order = chunk_entities, titles, title_order

        # merge entries of the touched keys (every key when an alias or split changed: a form's reasons may)
        merges = previous.merges
        for k in tally_keys.tolist():
            merges.pop(keys[k], None)
        merges.update(context.merges(_of_keys(self.tally, "key", tally_keys, size)))
        self.merges = merges
        self.touched = Touched(frozenset(keys[k] for k in touched_keys.tolist()),
                               frozenset(chunk_ids[c] for c in touched_chunks.tolist()), len(touched_groups))

    def _in_order(self, in_order: dict[str, Entity], first_before: Mapping[str, int],
                  made: Mapping[str, tuple[int, Entity]]) -> dict[str, Entity]:
        """The entities in :attr:`entity_order`, from the dict held before the write (taken over):
        a touched key whose first identity stands keeps its place; keys that came or moved go to
        the end when they end the order (a new note's: their first mention is the newest), else
        the dict of every entity is made again."""
        moved = {key for key, (ident, _) in made.items() if first_before.get(key) != ident}
        tail = self.entity_order[len(self.entity_order) - len(moved):] if moved else []
        if len(tail) != len(moved) or any(key not in moved for _, key in tail):
            return {key: self.entities[key][1] for _, key in self.entity_order}
        for key in [key for key in first_before if key not in made or key in moved]:
            del in_order[key]
        for key, (_, entity) in made.items():
            if key not in moved:
                in_order[key] = entity  # an existing key: its place in the dict is kept
        in_order.update((key, made[key][1]) for _, key in tail)
        return in_order

    # -- what it makes ----------------------------------------------------------------------------
    def parts(self) -> GraphParts:
        """The graph's parts, as :func:`derive_parts` gives them."""
        return GraphParts(self.in_order.copy(), [self.edges[name] for name in self.edge_order], self.chunk_entities,
                          self.forms,
                          {chunk: self.titles[chunk][1] for _, chunk in self.title_order})

    def names(self) -> Mapping[str, str]:
        """Each entity's key -> its name, read from the entities when asked (not a dict of every one)."""
        return _EntityNames(self.entities)

    def merge_record(self) -> list[Merge]:
        """The merge record, as :meth:`FormTally.merges` orders it."""
        return sorted(self.merges.values(), key=lambda m: (-sum(f.count for f in m.surface_forms), m.key))


class _EntityNames(Mapping[str, str]):
    def __init__(self, entities: Mapping[str, tuple[int, Entity]]) -> None:
        self._entities = entities

    def __getitem__(self, key: str) -> str:
        return self._entities[key][1].name

    def __contains__(self, key: object) -> bool:
        return key in self._entities

    def __iter__(self) -> Iterator[str]:
        return iter(self._entities)

    def __len__(self) -> int:
        return len(self._entities)


def derive_parts(rows: DerivationRows, chunk_context: Mapping[str, tuple[str, str | None]],
                 canonicalizer: Canonicalizer, notes: Mapping[str, str]) -> tuple[GraphParts, list[Merge]]:
    """The graph's parts and the merge record from ``rows`` as they are, aggregated whole: what
    :func:`~workbench.context_graph.assemble.graph_parts` and :class:`FormTally` make of the record."""
    state = PartsState.derive(rows, chunk_context, canonicalizer, notes)
    return state.parts(), state.merge_record()
