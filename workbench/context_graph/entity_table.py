"""A snapshot's entities as columns, each :class:`~workbench.model.Entity` made when it is read.

Making every entity object and a key -> entity dict at a snapshot's load would be a large part
of the load, where a question reads a few dozen of them. :class:`EntityTable` is the key -> Entity mapping a loaded
:class:`~workbench.context_graph.graph.ContextGraph` keeps instead, over the key positions the
passage links already hold; the display names are one UTF-8 buffer with offsets
(:class:`~workbench.runtime.array_file.TextColumn`), the types and time stamps codes into their distinct values
(:class:`CodedColumn`), so none of them is parsed at load.

Examples
--------
>>> from workbench.model import Entity
>>> given = [Entity("redis", "Redis", "technology", 3), Entity("auth", "auth service", first_seen="2024-05-01")]
>>> table = EntityTable.from_arrays([e.key for e in given], {"redis": 0, "auth": 1}, entity_columns(given))
>>> table["auth"]
Entity(key='auth', name='auth service', type='concept', mentions=0, first_seen='2024-05-01', last_seen=None)
>>> list(table.values()) == given, "nobody" in table, len(table)
(True, False, 2)
"""

from __future__ import annotations

from collections.abc import ItemsView, Iterator, Mapping, Sequence, ValuesView

import numpy as np

from ..runtime.array_file import TextColumn, from_text, to_text
from ..model import Entity

__all__ = ["CodedColumn", "EntityTable", "entity_columns"]


class CodedColumn(Sequence):
    """Values (str or None) as codes into their distinct values, -1 for None: few distinct
    values (types, time stamps) in a column of many.

    >>> column = CodedColumn(*CodedColumn.arrays(["person", None, "person"]))
    >>> list(column), column.codes.tolist()
    (['person', None, 'person'], [0, -1, 0])
    """

    def __init__(self, values: np.ndarray, codes: np.ndarray) -> None:
        self.values: list[str] = from_text(values)
        self.codes = codes
        if len(codes) and (codes.min() < -1 or codes.max() >= len(self.values)):
            raise ValueError("a coded column's code points past its values")

    @staticmethod
    def arrays(column: Sequence[str | None]) -> tuple[np.ndarray, np.ndarray]:
        """``column`` as the values (JSON text) and codes (int32) a column is made from."""
        values = sorted({v for v in column if v is not None})
        at = {v: i for i, v in enumerate(values)}
        codes = np.fromiter((-1 if v is None else at[v] for v in column), dtype=np.int32, count=len(column))
        return to_text(values), codes

    def __getitem__(self, i):  # type: ignore[override]  # an int position
        code = int(self.codes[i])
        return None if code < 0 else self.values[code]

    def __len__(self) -> int:
        return len(self.codes)

    def __iter__(self) -> Iterator[str | None]:
        values = [*self.values, None]  # code -1 reads the last
        return (values[c] for c in self.codes.tolist())


def entity_columns(entities: Sequence[Entity]) -> dict[str, np.ndarray]:
    """The arrays an :class:`EntityTable` of ``entities`` (in order) is made from."""
    names, name_offsets = TextColumn.arrays([e.name for e in entities])
    out = {"names": names, "name_offsets": name_offsets,
           "mentions": np.fromiter((e.mentions for e in entities), dtype=np.int64, count=len(entities))}
    for column in ("type", "first_seen", "last_seen"):
        out[f"{column}_values"], out[f"{column}_codes"] = CodedColumn.arrays([getattr(e, column) for e in entities])
    return out


class EntityTable(Mapping[str, Entity]):
    """Entity key -> :class:`~workbench.model.Entity`, in key order, made from columns on read.

    ``at`` maps each key to its position; it may hold more keys past ``keys`` (the snapshot's
    keys that link passages but are no entity), which are not in the table.
    """

    def __init__(self, keys: list[str], at: Mapping[str, int], names: TextColumn, types: CodedColumn,
                 mentions: np.ndarray, first_seen: CodedColumn, last_seen: CodedColumn) -> None:
        if len({len(keys), len(names), len(types), len(mentions), len(first_seen), len(last_seen)}) != 1:
            raise ValueError("the entity columns differ in length")
        if len(at) < len(keys) or any(at.get(keys[i]) != i for i in (0, len(keys) - 1) if keys):
            raise ValueError("the entity keys are not unique or not at their positions")
        self._keys, self._at, self._n = keys, at, len(keys)
        self._names, self._types, self._first, self._last = names, types, first_seen, last_seen
        self._mentions = mentions.tolist()

    @classmethod
    def from_arrays(cls, keys: list[str], at: Mapping[str, int], arrays: Mapping[str, np.ndarray]) -> EntityTable:
        """The table over the arrays :func:`entity_columns` made."""
        return cls(keys, at, TextColumn(arrays["names"], arrays["name_offsets"]),
                   CodedColumn(arrays["type_values"], arrays["type_codes"]), arrays["mentions"],
                   CodedColumn(arrays["first_seen_values"], arrays["first_seen_codes"]),
                   CodedColumn(arrays["last_seen_values"], arrays["last_seen_codes"]))

    def position(self, key: object) -> int | None:
        """The entity's position in key order, or None if no entity has this key."""
        at = self._at.get(key)  # type: ignore[call-overload]
        return at if at is not None and at < self._n else None

    def entity_at(self, i: int) -> Entity:
        """The entity at position ``i``."""
        return Entity(self._keys[i], self._names[i], self._types[i], self._mentions[i], self._first[i], self._last[i])

    def __getitem__(self, key: str) -> Entity:
        at = self.position(key)
        if at is None:
            raise KeyError(key)
        return self.entity_at(at)

    def __contains__(self, key: object) -> bool:
        return self.position(key) is not None

    def __iter__(self) -> Iterator[str]:
        return iter(self._keys)

    def __len__(self) -> int:
        return self._n

    def names(self) -> list[str]:
        """Every display name in key order, read from the name column (no entity made)."""
        return list(self._names)

    def types(self) -> list[str]:
        """Every entity type in key order, read from the type column (no entity made)."""
        return list(self._types)  # type: ignore[arg-type]  # an entity's type is never None

    def all(self) -> list[Entity]:
        """Every entity in key order, made column by column (one ``map`` over the columns, not a
        lookup per entity)."""
        return list(map(Entity, self._keys, self._names, self._types, self._mentions, self._first, self._last))

    def values(self) -> ValuesView[Entity]:
        return _Made(self)  # type: ignore[return-value]

    def items(self) -> ItemsView[str, Entity]:
        return _MadeItems(self)


class _Made(ValuesView):
    """The table's values, made together when iterated."""

    _mapping: EntityTable

    def __iter__(self) -> Iterator[Entity]:
        return iter(self._mapping.all())


class _MadeItems(ItemsView):
    """The table's items, the entities made together when iterated."""

    _mapping: EntityTable

    def __iter__(self) -> Iterator[tuple[str, Entity]]:
        return zip(self._mapping._keys, self._mapping.all())
