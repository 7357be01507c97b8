"""The passage layer's two link maps over a snapshot's arrays, each entry made when first read.

A snapshot keeps which entities each passage links to as CSR arrays (entity positions per
chunk). Building both maps from them at load (chunk -> frozenset of keys, entity -> tuple of
chunks) would make millions of small objects on a large corpus, where a query reads a
few hundred entries. :class:`EntitiesOf` and :class:`ChunksOf` are read-only
mappings with the same contents as those dicts (they compare equal to them), made entry by
entry, each entry kept once made.

Examples
--------
>>> links = PassageLinks(["c1", "c2"], ["a", "b"], np.array([0, 1, 1], dtype=np.int32), np.array([0, 2, 3]))
>>> sorted(links.entities_of["c1"]), links.chunks_of["b"], links.entities_of.link_count
(['a', 'b'], ('c1', 'c2'), 3)
>>> dict(links.chunks_of) == {"a": ("c1",), "b": ("c1", "c2")}
True
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence

import numpy as np

__all__ = ["ChunksOf", "EntitiesOf", "PassageLinks"]


class EntitiesOf(Mapping[str, frozenset[str]]):
    """Chunk id -> the keys of the entities it links to."""

    def __init__(self, chunk_ids: Sequence[str], chunk_at: Mapping[str, int], keys: Sequence[str],
                 flat: np.ndarray, offsets: np.ndarray) -> None:
        self._chunk_ids, self._chunk_at, self._keys = chunk_ids, chunk_at, keys
        self._flat, self._offsets = flat, offsets
        self._made: dict[str, frozenset[str]] = {}
        #: Links in all, counted without making an entry.
        self.link_count = len(flat)

    def __getitem__(self, chunk_id: str) -> frozenset[str]:
        made = self._made.get(chunk_id)
        if made is None:
            row = self._chunk_at[chunk_id]
            keys = self._keys
            made = frozenset([keys[i] for i in self._flat[self._offsets[row]:self._offsets[row + 1]].tolist()])
            self._made[chunk_id] = made
        return made

    def __contains__(self, chunk_id: object) -> bool:
        return chunk_id in self._chunk_at

    def __iter__(self) -> Iterator[str]:
        return iter(self._chunk_ids)

    def __len__(self) -> int:
        return len(self._chunk_ids)


class ChunksOf(Mapping[str, tuple[str, ...]]):
    """Entity key -> the chunks that link to it, in chunk order; only entities with a chunk."""

    def __init__(self, chunk_ids: Sequence[str], keys: Sequence[str], key_at: Mapping[str, int],
                 flat: np.ndarray, offsets: np.ndarray) -> None:
        self._chunk_ids, self._keys, self._key_at = chunk_ids, keys, key_at
        rows = np.repeat(np.arange(len(chunk_ids)), np.diff(offsets))
        order = np.argsort(flat, kind="stable")  # stable: each entity's chunks stay in chunk (sorted) order
        self._rows = rows[order]
        self._bounds = np.searchsorted(flat[order], np.arange(len(keys) + 1))
        self._linked = np.flatnonzero(np.diff(self._bounds))
        self._made: dict[str, tuple[str, ...]] = {}

    def _span(self, key: object) -> tuple[int, int]:
        at = self._key_at.get(key) if isinstance(key, str) else None
        if at is None:
            return 0, 0
        return int(self._bounds[at]), int(self._bounds[at + 1])

    def __getitem__(self, key: str) -> tuple[str, ...]:
        made = self._made.get(key)
        if made is None:
            start, end = self._span(key)
            if start == end:
                raise KeyError(key)
            chunk_ids = self._chunk_ids
            made = tuple([chunk_ids[row] for row in self._rows[start:end].tolist()])
            self._made[key] = made
        return made

    def __contains__(self, key: object) -> bool:
        start, end = self._span(key)
        return end > start

    def summed(self, weights: Mapping[str, float]) -> tuple[np.ndarray, np.ndarray]:
        """``(positions, sums)``: the chunks linking to an entity of ``weights`` (their positions,
        ascending) and for each the weights of those entities summed, in the order of ``weights``.

        >>> links = PassageLinks(["c1", "c2"], ["a", "b"], np.array([0, 1, 1], dtype=np.int32), np.array([0, 2, 3]))
        >>> positions, sums = links.chunks_of.summed({"a": 0.5, "b": 0.25, "z": 1.0})
        >>> links.chunks_of.chunk_ids_at(positions), sums.tolist()
        (['c1', 'c2'], [0.75, 0.25])
        """
        spans = [self._span(key) for key in weights]
        rows = np.concatenate([self._rows[start:end] for start, end in spans] or [np.empty(0, np.int64)])
        each = np.repeat(np.fromiter(weights.values(), float, len(weights)), [end - start for start, end in spans])
        positions = np.flatnonzero(np.bincount(rows, minlength=len(self._chunk_ids)))
        return positions, np.bincount(rows, each, minlength=len(self._chunk_ids))[positions]

    def chunk_ids_at(self, positions: np.ndarray) -> list[str]:
        """The ids of the chunks at ``positions``."""
        chunk_ids = self._chunk_ids
        return [chunk_ids[row] for row in positions.tolist()]

    def __iter__(self) -> Iterator[str]:
        keys = self._keys
        return (keys[at] for at in self._linked.tolist())

    def __len__(self) -> int:
        return len(self._linked)


class PassageLinks:
    """Both maps of one set of links: ``flat[offsets[i]:offsets[i + 1]]`` are the positions in
    ``keys`` of the entities chunk ``chunk_ids[i]`` links to. ``key_at`` and ``chunk_at`` (key ->
    position, chunk id -> position) are made here unless given: the PageRank index shares them."""

    def __init__(self, chunk_ids: Sequence[str], keys: Sequence[str], flat: np.ndarray, offsets: np.ndarray,
                 key_at: Mapping[str, int] | None = None, chunk_at: Mapping[str, int] | None = None) -> None:
        if len(offsets) != len(chunk_ids) + 1 or (len(flat) and (flat.min() < 0 or flat.max() >= len(keys))) \
                or (len(offsets) and (offsets[0] != 0 or offsets[-1] != len(flat) or np.any(np.diff(offsets) < 0))):
            raise ValueError("the passage links do not fit the passages and entities")
        key_at = dict(zip(keys, range(len(keys)))) if key_at is None else key_at
        chunk_at = dict(zip(chunk_ids, range(len(chunk_ids)))) if chunk_at is None else chunk_at
        self.entities_of = EntitiesOf(chunk_ids, chunk_at, keys, flat, offsets)
        self.chunks_of = ChunksOf(chunk_ids, keys, key_at, flat, offsets)
