"""What one community detection leaves for the next: every node of the community graph in its
part at each level, and a fingerprint of its neighbours.

A write changes a handful of nodes: the passages of the documents it added, edited or removed,
the entities and words they link, and the nodes whose links to them came or went. The next
detection (:func:`workbench.corpus.communities.detect`) finds them by their fingerprints (a
node whose set of neighbours is unchanged keeps its fingerprint; a new node has none) and starts
Louvain from the previous parts that hold none of them (:meth:`Partition.blocks`): a part of the
previous detection that no changed node falls in is one node of the graph Louvain runs on, a
part that one falls in is opened into its own parts one level down, and the changed nodes are
placed again one by one. Edge weights are left out of the fingerprint: a passage added to a
word's passages moves that word's weight a little everywhere, which would mark half the graph.

Examples
--------
>>> from scipy import sparse
>>> ring = sparse.csr_matrix(([1.0] * 4, ([0, 1, 1, 2], [1, 0, 2, 1])), shape=(3, 3))
>>> before = node_fingerprints(ring, ["a", "b", "c"])
>>> after = node_fingerprints(sparse.csr_matrix(([1.0] * 2, ([0, 1], [1, 0])), shape=(3, 3)), ["a", "b", "c"])
>>> [bool(x != y) for x, y in zip(before, after)]
[False, True, True]
"""

from __future__ import annotations

import base64
import hashlib
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from scipy import sparse

__all__ = ["Block", "Partition", "Changes", "node_fingerprints", "name_json", "name_of_json"]


def name_json(name: Any) -> Any:
    """A node name as JSON: an entity key as it is, a passage or word node as a two-item list."""
    return list(name) if isinstance(name, tuple) else name


def name_of_json(value: Any) -> Any:
    """The node name :func:`name_json` wrote."""
    return tuple(value) if isinstance(value, list) else value


#: The hashes of the last community graph's node names, in this process (a write changes a few).
_hash_memo: dict[Any, int] = {}


def _name_hashes(names: list) -> np.ndarray:
    """A 64-bit hash of each node name, the same in every process (no ``PYTHONHASHSEED``)."""
    global _hash_memo
    memo, kept = _hash_memo, {}
    out = np.empty(len(names), dtype=np.uint64)
    for i, name in enumerate(names):
        found = memo.get(name)
        if found is None:
            text = f"{name[0]}\x00{name[1]}" if isinstance(name, tuple) else f"e\x00{name}"
            found = int.from_bytes(hashlib.blake2b(text.encode(), digest_size=8).digest(), "little")
        kept[name] = out[i] = found
    _hash_memo = kept
    return out


def node_fingerprints(adjacency: sparse.csr_matrix, names: list) -> np.ndarray:
    """Each node's fingerprint: the sum (mod 2**64) of its neighbours' name hashes, so it changes
    when a neighbour comes or goes and not with the order of the nodes or the edges' weights."""
    hashes = _name_hashes(names)
    indptr = adjacency.indptr
    out = np.zeros(len(names), dtype=np.uint64)
    filled = np.diff(indptr) > 0
    if filled.any():
        out[filled] = np.add.reduceat(hashes[adjacency.indices], indptr[:-1][filled])
    return out


def _encode(array: np.ndarray, dtype: str) -> str:
    return base64.b64encode(np.ascontiguousarray(array, dtype=dtype).tobytes()).decode("ascii")


def _decode(text: str, dtype: str) -> np.ndarray:
    return np.frombuffer(base64.b64decode(text), dtype=dtype).astype(np.int64 if dtype == "<i4" else np.uint64)


@dataclass(frozen=True)
class Block:
    """Nodes that start a detection as one: a part of the previous detection no changed node falls in."""

    nodes: np.ndarray
    """Their indices in the current community graph, sorted."""
    level: int
    """The level of the part they were."""
    part: int
    """Its index at that level in the previous partition."""


@dataclass(frozen=True)
class Changes:
    """How the current community graph differs from the one a partition was made on."""

    previous_of: np.ndarray
    """Each current node's index in the previous partition (-1 for a new node)."""
    changed: np.ndarray
    """Per current node: new, or its neighbours changed."""
    opened: list[set[int]]
    """Per level, the previous parts that hold a changed node or a node now gone."""
    members: list[dict[int, np.ndarray]]
    """Per level, each previous part's current nodes (sorted)."""

    @property
    def count(self) -> int:
        """Nodes new or with other neighbours."""
        return int(self.changed.sum())


@dataclass
class Partition:
    """Every node of a community graph in its part at each level."""

    names: list
    """Node names in the community graph's order (entity key, ``("p", chunk id)``, ``("w", word)``)."""
    fingerprints: np.ndarray
    """Per node, :func:`node_fingerprints`."""
    labels: list[np.ndarray] = field(default_factory=list)
    """Per level, each node's part at that level (-1 outside every part split at that level)."""
    parents: list[np.ndarray] = field(default_factory=list)
    """Per level, each part's part one level up (-1 at level 0)."""
    digest: str = ""
    """The options and rules the detection ran under; a partition of others is not started from."""

    def changes(self, names: list, fingerprints: np.ndarray) -> Changes:
        """What differs in the community graph of ``names`` and ``fingerprints`` from this one's."""
        index = {name: i for i, name in enumerate(self.names)}
        previous_of = np.fromiter((index.get(n, -1) for n in names), dtype=np.int64, count=len(names))
        known = previous_of >= 0
        changed = ~known
        changed[known] = fingerprints[known] != self.fingerprints[previous_of[known]]
        gone = np.ones(len(self.names), dtype=bool)
        gone[previous_of[known]] = False
        stale = np.concatenate([previous_of[changed & known], np.flatnonzero(gone)])
        opened, members = [], []
        for labels in self.labels:
            opened.append({int(x) for x in labels[stale] if x >= 0})
            of_current = np.full(len(names), -1, dtype=np.int64)
            of_current[known] = labels[previous_of[known]]
            inside = np.flatnonzero(of_current >= 0)
            order = inside[np.argsort(of_current[inside], kind="stable")]
            parts, starts = np.unique(of_current[order], return_index=True)
            members.append({int(p): np.sort(nodes) for p, nodes in zip(parts, np.split(order, starts[1:]))})
        return Changes(previous_of, changed, opened, members)

    def children(self, level: int, part: int) -> list[int]:
        """The parts one level below ``part`` of ``level`` (its split), in index order."""
        if level + 1 >= len(self.parents):
            return []
        return np.flatnonzero(self.parents[level + 1] == part).tolist()

    def _parts_in(self, changes: Changes, level: int, nodes: np.ndarray) -> tuple[np.ndarray, list[int]]:
        """A mask of ``nodes``, and the previous parts of ``level`` that any of them was in."""
        inside = np.zeros(len(changes.previous_of), dtype=bool)
        inside[nodes] = True
        if level >= len(self.labels):
            return inside, []
        known = changes.previous_of[nodes]
        parts = np.unique(self.labels[level][known[known >= 0]])
        return inside, parts[parts >= 0].tolist()

    def kept(self, changes: Changes, level: int, nodes: np.ndarray) -> list[Block]:
        """The previous parts of ``level`` lying inside the current ``nodes`` that no change opened."""
        inside, parts = self._parts_in(changes, level, nodes)
        found = []
        for part in parts:
            members = changes.members[level].get(part)
            if members is not None and part not in changes.opened[level] and inside[members].all():
                found.append(Block(members, level, part))
        return found

    def blocks(self, changes: Changes, level: int, nodes: np.ndarray) -> list[Block]:
        """What a detection at ``level`` among the current ``nodes`` starts from, beside the parts
        :meth:`kept` whole: the parts one level down of every part opened or reaching outside
        ``nodes``, the kept ones whole, the others opened in turn (and so on down). A node no
        block holds starts alone."""
        inside, parts = self._parts_in(changes, level, nodes)
        found: list[Block] = []

        def take(at: int, part: int) -> None:
            members = changes.members[at].get(part)
            if members is None:
                return
            if at > level and part not in changes.opened[at] and inside[members].all():
                found.append(Block(members, at, part))
                return
            for child in self.children(at, part):
                take(at + 1, child)

        for part in parts:
            members = changes.members[level].get(part)
            if members is not None and (part in changes.opened[level] or not inside[members].all()):
                take(level, part)
        return found

    def to_json(self) -> dict[str, Any]:
        return {"names": [name_json(n) for n in self.names], "fingerprints": _encode(self.fingerprints, "<u8"),
                "labels": [_encode(labels, "<i4") for labels in self.labels],
                "parents": [parents.tolist() for parents in self.parents], "digest": self.digest}

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> Partition:
        return cls([name_of_json(n) for n in d["names"]], _decode(d["fingerprints"], "<u8"),
                   [_decode(labels, "<i4") for labels in d["labels"]],
                   [np.asarray(parents, dtype=np.int64) for parents in d["parents"]], d["digest"])
