"""The derived graph, persisted beside the record, so a fresh process loads it instead of deriving it.

Deriving the context graph from SQLite (canonicalizing every mention, scanning every passage for
known names, building the PageRank matrix) grows with the corpus, and every CLI call, notebook kernel
and MCP start would pay it. The snapshot keeps what
that derivation made: the entities, the edges, the passage layer with its name lookup, the
PageRank index and the merge record.

One file, ``graph.npz``, replaced atomically. Numbers are arrays, each edge's chunks and documents
positions among ids kept once, and the rest of the text JSON held in byte arrays; a member
holding Python objects is refused (``allow_pickle=False``), so a workspace folder shared with
others cannot run code. It names its format, the derivation key it was made for (the record
version and the settings that shape the graph) and a SHA-256 of its contents. A file of another format or key,
whose checksum or array shapes do not match, raises :class:`SnapshotUnusable` with the reason, and
is never used: the workspace derives the graph again and writes a new one.

Examples
--------
>>> import tempfile
>>> from workbench.model import Edge, Entity
>>> graph = ContextGraph([Entity("a", "A"), Entity("b", "B")], [Edge("a", "uses", "b", chunk_ids=("c1",))])
>>> folder = Path(tempfile.mkdtemp())
>>> _ = save_snapshot(folder, "key-1", graph, [])
>>> loaded = load_snapshot(folder, "key-1")
>>> [(e.source, e.relation, e.target, e.chunk_ids) for e in loaded.graph.edges()]
[('a', 'uses', 'b', ('c1',))]
>>> load_snapshot(folder, "key-2")
Traceback (most recent call last):
...
workbench.context_graph.graph_snapshot.SnapshotUnusable: the graph snapshot was made for another record version or graph settings
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterator, Mapping, Sequence
from itertools import chain
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..runtime import array_file
from ..runtime.array_file import (ArrayFileUnusable, TextColumn, from_text, read_array_file, to_text,
                          write_array_file)
from ..runtime.gc_paused import gc_paused
from ..model import Edge, Merge, SurfaceForm
from .entity_table import EntityTable, entity_columns
from .graph import ContextGraph
from .passage_links import PassageLinks
from .passages import NameMatcher, NameTable, PassageLayer

__all__ = ["FILE_NAME", "FORMAT", "GraphSnapshot", "SnapshotUnusable", "load_snapshot", "read_manifest", "save_snapshot",
           "snapshot_counts"]

FILE_NAME = "graph.npz"
KIND = "graph snapshot"
#: Raised whenever what the file holds, or how, changes: a file of another format is rebuilt.
#: 2: the name table as two columns. 3: whether the PageRank walk is reversible. 4: the entities as
#: columns read on demand (:mod:`~workbench.context_graph.entity_table`), the name table as
#: sorted words in one buffer and key positions, found by binary search. 5: the chunks and
#: documents of each edge as positions among ids kept once (as JSON lists they were most of the file).
FORMAT = 5


class SnapshotUnusable(Exception):
    """The snapshot cannot be used (missing, stale or damaged); the message says which."""


@dataclass
class GraphSnapshot:
    """What the derivation made, as loaded from (or saved to) the snapshot."""

    graph: ContextGraph
    merges: list[Merge]


def _graph_arrays(graph: ContextGraph, merges: Sequence[Merge]) -> dict[str, np.ndarray]:
    entities = graph.entities()
    keys = [e.key for e in entities]
    layer = graph.passages
    name_words, name_keys = layer.matcher.sorted_names()
    # keys that link passages or name a form but are no entity: none, in practice
    extra = sorted(({k for ks in layer.entities_of.values() for k in ks} | set(name_keys)) - set(keys))
    every_key = keys + extra
    at = {key: i for i, key in enumerate(every_key)}
    edges = graph.edges_as_given()  # the assembled order, so the graph is rebuilt edge for edge as it was
    chunk_ids = sorted(layer.entities_of)
    position = at.__getitem__
    links, link_offsets = _sorted_rows([layer.entities_of[cid] for cid in chunk_ids], position)
    index = graph.pagerank_index()
    transition = index.transition_t
    tables = {
        "entities": {"key": keys, "extra_keys": extra},
        # tuples as they are: orjson writes them as lists, and a list made for each edge would raise the write's peak
        "edges": {"relation": [e.relation for e in edges], "first_seen": [e.first_seen for e in edges],
                  "last_seen": [e.last_seen for e in edges], "origin": [e.origin for e in edges]},
        "graph": {"impact_relations": list(graph.impact_relations),
                  "passages_document": graph.passages_document, "passages_time": graph.passages_time},
        "passages": {"chunk_ids": chunk_ids, "title_of": layer.title_of, "common": sorted(layer.common),
                     "title_links": [list(p) for p in layer.title_links],
                     "synonyms": [list(s) for s in layer.synonyms],
                     "title_link_weight": layer.title_link_weight, "relation_weight": layer.relation_weight,
                     "matcher": {"max_words": layer.matcher.max_words}},
        "merges": [{"canonical": m.canonical, "key": m.key, "reasons": m.reasons,
                    "forms": [(f.form, f.count, f.chunk_ids) for f in m.surface_forms]} for m in merges],
    }
    arrays = {f"table_{name}": to_text(value) for name, value in tables.items()}
    arrays.update({f"entity_{name}": column for name, column in entity_columns(entities).items()})
    arrays["matcher_words"], arrays["matcher_word_offsets"] = TextColumn.arrays(name_words)
    arrays.update(_id_lists([e.chunk_ids for e in edges], "edge_chunks"))
    arrays.update(_id_lists([e.documents for e in edges], "edge_documents"))
    arrays.update({
        "edge_ends": np.fromiter((at[end] for e in edges for end in (e.source, e.target)), dtype=np.int32,
                                 count=2 * len(edges)).reshape(-1, 2),
        "edge_confidence": np.fromiter((e.confidence for e in edges), dtype=np.float64, count=len(edges)),
        "passage_links": links, "passage_link_offsets": link_offsets,
        # the name table: its sorted words as one buffer, each key as its position among the keys
        "matcher_keys": np.fromiter(map(position, name_keys), dtype=np.int32, count=len(name_keys)),
        "ppr_data": transition.data, "ppr_indices": transition.indices, "ppr_indptr": transition.indptr,
        "ppr_order": index.order, "ppr_dangling": index._dangling, "ppr_reversible": np.array([index.reversible]),
    })
    return arrays


def _sorted_rows(rows: Sequence[Collection[str]], position: Callable[[str], int]) -> tuple[np.ndarray, np.ndarray]:
    """Each row's positions, sorted, as :func:`~workbench.runtime.array_file.ragged` keeps them: one sort of every row's
    positions at once, not a sort a row.

    >>> flat, offsets = _sorted_rows([{"b", "a"}, set(), {"c"}], {"a": 0, "b": 1, "c": 2}.__getitem__)
    >>> flat.tolist(), offsets.tolist()
    ([0, 1, 2], [0, 2, 2, 3])
    """
    offsets = np.zeros(len(rows) + 1, dtype=np.int64)
    offsets[1:] = np.cumsum([len(row) for row in rows])
    flat = np.fromiter(map(position, chain.from_iterable(rows)), dtype=np.int32, count=int(offsets[-1]))
    row_of = np.repeat(np.arange(len(rows), dtype=np.int64), np.diff(offsets))
    return flat[np.lexsort((flat, row_of))], offsets


def _id_lists(lists: Sequence[Sequence[str]], name: str) -> dict[str, np.ndarray]:
    """Lists of ids as arrays: each id once (a text column), each list as positions among them."""
    every = list(chain.from_iterable(lists))
    ids = sorted(set(every))
    at = dict(zip(ids, range(len(ids))))
    arrays = dict(zip((f"{name}_ids", f"{name}_id_offsets"), TextColumn.arrays(ids)))
    offsets = np.zeros(len(lists) + 1, dtype=np.int64)
    offsets[1:] = np.cumsum([len(listed) for listed in lists])
    arrays[name] = np.fromiter(map(at.__getitem__, every), dtype=np.int32, count=len(every))
    arrays[f"{name}_offsets"] = offsets
    return arrays


def _id_lists_read(arrays: Mapping[str, np.ndarray], name: str) -> list[tuple[str, ...]]:
    """The lists :func:`_id_lists` wrote as ``name``, each id string made once."""
    ids = TextColumn(arrays[f"{name}_ids"], arrays[f"{name}_id_offsets"]).tolist()
    positions, offsets = arrays[name].tolist(), arrays[f"{name}_offsets"].tolist()
    return [tuple(map(ids.__getitem__, positions[start:end])) for start, end in zip(offsets, offsets[1:])]


def snapshot_counts(graph: ContextGraph, merges: Sequence[Merge]) -> dict[str, int]:
    """The counts a snapshot's manifest keeps, so ``stats`` need not load the graph."""
    relation_edges = len(graph.edges())
    return {"entities": len(graph), "edges": relation_edges,
            "comention_edges": graph.number_of_edges() - relation_edges, "merges": len(merges)}


@gc_paused()  # the PageRank index and the tables: millions of acyclic objects
def save_snapshot(folder: Path, key: str, graph: ContextGraph, merges: Sequence[Merge]) -> Path:
    """Write the snapshot of ``graph`` for derivation ``key`` into ``folder``, atomically.

    The PageRank index is built first if the graph has none yet. Returns the file's path.
    """
    path = Path(folder) / FILE_NAME
    write_array_file(path, KIND, FORMAT, key, _graph_arrays(graph, merges),
                     extra={"counts": snapshot_counts(graph, merges)})
    return path


def read_manifest(folder: Path) -> dict:
    """The snapshot's manifest alone (key, checksum, shapes, counts), without its arrays.

    Raises
    ------
    SnapshotUnusable
        No snapshot, or one whose manifest cannot be read or is of another format.
    """
    try:
        return array_file.read_manifest(Path(folder) / FILE_NAME, KIND, FORMAT)
    except ArrayFileUnusable as exc:
        raise SnapshotUnusable(_reason(exc)) from None


def _reason(exc: ArrayFileUnusable) -> str:
    return str(exc).replace(f"no {FILE_NAME} yet", "no graph snapshot yet").replace(
        f"{FILE_NAME} was made for another version of what it indexes",
        "the graph snapshot was made for another record version or graph settings").replace(
        f"{FILE_NAME} is of another format", "the graph snapshot is of another format")


def load_snapshot(folder: Path, key: str, key_of: Callable[[str], str] | None = None) -> GraphSnapshot:
    """The snapshot in ``folder`` made for derivation ``key``, checked before use.

    Raises
    ------
    SnapshotUnusable
        Missing, of another format or key, or damaged (checksum, shapes, contents).
    """
    path = Path(folder) / FILE_NAME
    try:
        _, arrays = read_array_file(path, KIND, FORMAT, key)
    except ArrayFileUnusable as exc:
        raise SnapshotUnusable(_reason(exc)) from None
    try:
        with gc_paused():
            return _rebuild(arrays, key_of)
    except (ValueError, KeyError, IndexError, TypeError, UnicodeDecodeError) as exc:
        raise SnapshotUnusable(f"the graph snapshot {path} is damaged ({type(exc).__name__}: {exc})") from None


class _NodePositions(Mapping):
    """The PageRank index's node -> position over the positions the passage links already hold:
    entity keys first, then ``("p", chunk id)`` (no third dict of every node is made)."""

    def __init__(self, key_at: Mapping[str, int], entities: int, chunk_at: Mapping[str, int]) -> None:
        self._key_at, self._entities, self._chunk_at = key_at, entities, chunk_at

    def __getitem__(self, node):
        if isinstance(node, tuple):
            if len(node) == 2 and node[0] == "p" and node[1] in self._chunk_at:
                return self._entities + self._chunk_at[node[1]]
        else:
            at = self._key_at.get(node)
            if at is not None and at < self._entities:  # the keys past them link passages but are no node
                return at
        raise KeyError(node)

    def __iter__(self) -> Iterator:
        for key, at in self._key_at.items():
            if at < self._entities:
                yield key
        yield from (("p", cid) for cid in self._chunk_at)

    def __len__(self) -> int:
        return self._entities + len(self._chunk_at)


def _rebuild(arrays: dict[str, np.ndarray], key_of: Callable[[str], str] | None) -> GraphSnapshot:
    ents, eds = from_text(arrays["table_entities"]), from_text(arrays["table_edges"])
    meta, pas = from_text(arrays["table_graph"]), from_text(arrays["table_passages"])
    keys = ents["key"]
    every_key = keys + ents["extra_keys"]
    key_at = dict(zip(every_key, range(len(every_key))))
    if len(key_at) != len(every_key):
        raise ValueError("an entity key is given twice")
    entities = EntityTable.from_arrays(keys, key_at, {name.removeprefix("entity_"): array
                                                      for name, array in arrays.items() if name.startswith("entity_")})
    ends = arrays["edge_ends"].tolist()
    edges = [Edge(source=every_key[s], relation=r, target=every_key[t], chunk_ids=c, documents=d,
                  confidence=conf, first_seen=f, last_seen=last, origin=o)
             for (s, t), r, c, d, conf, f, last, o in zip(
                 ends, eds["relation"], _id_lists_read(arrays, "edge_chunks"), _id_lists_read(arrays, "edge_documents"),
                 arrays["edge_confidence"].tolist(), eds["first_seen"], eds["last_seen"], eds["origin"], strict=True)]
    chunk_ids = pas["chunk_ids"]
    chunk_at = dict(zip(chunk_ids, range(len(chunk_ids))))
    links = PassageLinks(chunk_ids, every_key, arrays["passage_links"], arrays["passage_link_offsets"],
                         key_at=key_at, chunk_at=chunk_at)
    layer = PassageLayer(
        entities_of=links.entities_of, chunks_of=links.chunks_of,
        title_of=pas["title_of"], common=frozenset(pas["common"]),
        title_links=tuple(tuple(p) for p in pas["title_links"]),
        synonyms=tuple((a, b, s) for a, b, s in pas["synonyms"]),
        matcher=NameMatcher.over_table(NameTable(TextColumn(arrays["matcher_words"], arrays["matcher_word_offsets"]),
                                                 every_key, arrays["matcher_keys"]), pas["matcher"]["max_words"]),
        title_link_weight=pas["title_link_weight"], relation_weight=pas["relation_weight"])
    import scipy.sparse as sp  # here: `stats` reads the manifest alone

    from .ppr import PageRankIndex

    nodelist = keys + [("p", cid) for cid in chunk_ids]
    n = len(nodelist)
    transition = sp.csr_array((arrays["ppr_data"], arrays["ppr_indices"], arrays["ppr_indptr"]), shape=(n, n))
    reversible, = arrays["ppr_reversible"].tolist()  # one flag, or the file is damaged
    index = PageRankIndex.from_transition(nodelist, transition, arrays["ppr_order"], arrays["ppr_dangling"],
                                          positions=_NodePositions(key_at, len(keys), chunk_at),
                                          reversible=bool(reversible))
    graph = ContextGraph(entities, edges, meta["impact_relations"], key_of=key_of, passages=layer,
                         passage_documents=meta["passages_document"], passage_times=meta["passages_time"],
                         pagerank_index=index)
    merges = [Merge(canonical=m["canonical"], key=m["key"], reasons=list(m["reasons"]),
                    surface_forms=[SurfaceForm(f, c, tuple(ids)) for f, c, ids in m["forms"]])
              for m in from_text(arrays["table_merges"])]
    return GraphSnapshot(graph, merges)
