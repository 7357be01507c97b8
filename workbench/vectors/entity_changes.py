"""What a sync of the entity-name index writes over its base (see
:mod:`workbench.vectors.entity_vectors`): the rows the base does not hold as they are wanted, and
the base rows they supersede. Found two ways with one answer: from every name wanted
(:func:`changes_from`, a diff of the whole base), or, for an index made for the record a write
followed, from the keys that write changed alone (:func:`follow_keys`, which looks up only those
keys and their names: a note added to a large workspace changes a handful of its hundreds of
thousands of names).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable, Iterator, Mapping, Protocol, Sequence

import numpy as np

from ..runtime.array_file import TextColumn

__all__ = ["KeysFollowed", "changes_from", "follow_keys", "strings"]


class _Delta(Protocol):
    """What is read of the delta over the base: its rows and the base rows it supersedes."""

    @property
    def keys(self) -> Sequence[str]: ...

    @property
    def names(self) -> Sequence[str]: ...

    @property
    def superseded(self) -> np.ndarray: ...


class _Loaded(Protocol):
    """What is read of the index as loaded (``entity_vectors._Loaded``): the base's rows, its delta."""

    @property
    def keys(self) -> Sequence[str]: ...

    @property
    def names(self) -> Sequence[str]: ...

    @property
    def delta(self) -> _Delta | None: ...

    def rows(self) -> Iterator[tuple[str, str]]: ...

    def row_of_name(self, base_names: list[str] | None = None) -> dict[str, int]: ...


def strings(column: Sequence[str]) -> list[str]:
    """A column's strings as a list, decoded at once where it is a text column."""
    return column.tolist() if isinstance(column, TextColumn) else list(column)


def positions(column: Sequence[str], values: Iterable[str]) -> dict[str, int]:
    """The first position of each of ``values`` in ``column`` (those it holds)."""
    if isinstance(column, TextColumn):
        return column.positions(values)
    wanted = set(values)  # a format-1 file's list of strings, no text column
    found: dict[str, int] = {}
    for row, value in enumerate(column):
        if value in wanted:
            found.setdefault(value, row)
    return found


def changes_from(loaded: _Loaded, names: Mapping[str, str], keys: list[str]
                 ) -> tuple[list[str], list[int], list[str]]:
    """What makes the base of ``loaded`` hold ``names``: the keys (in ``keys``' order) it does not
    hold with that name and its rows whose key is gone or renamed (the delta to write); and the
    keys it holds with that name in a row its current delta supersedes (not held now).

    Set operations on the decoded columns, one membership test per row."""
    base_keys, base_names = strings(loaded.keys), strings(loaded.names)
    loaded.row_of_name(base_names)  # made from the names decoded here, for the vectors copied next
    wanted = set(names.items())
    base_pairs = list(zip(base_keys, base_names))
    superseded = [row for row, pair in enumerate(base_pairs) if pair not in wanted]
    gone = {base_keys[row] for row in superseded}
    kept = set(base_keys).difference(gone)
    kept_superseded = [] if loaded.delta is None else \
        [base_keys[row] for row in loaded.delta.superseded.tolist() if base_keys[row] in kept]
    return [key for key in keys if key not in kept], superseded, kept_superseded


@dataclass(eq=False)
class KeysFollowed:
    """The delta over the base of an index once some keys changed: what :func:`changes_from`
    gives for every name wanted, and the entries changed as a sync counts them."""

    keys: list[str]
    """The delta's keys, sorted: every key the base does not hold with the name wanted."""
    names: list[str]
    """Each key's name."""
    superseded: list[int]
    """The base rows whose key is gone or renamed, ascending."""
    row_of_name: dict[str, int]
    """Name -> the position whose vector it takes, for the delta's names the index holds."""
    changed: int
    """Keys whose name is new or other than the one held."""
    gone: int
    """Keys held that are gone or renamed."""

    def every_name(self, loaded: _Loaded, changes: Mapping[str, str | None]) -> dict[str, str]:
        """Key -> name of every entity wanted: the rows held with ``changes`` applied (a base
        written whole needs every row)."""
        names = dict(loaded.rows())
        for key, name in changes.items():
            if name is None:
                names.pop(key, None)
            else:
                names[key] = name
        return names


def follow_keys(loaded: _Loaded, changes: Mapping[str, str | None]) -> KeysFollowed:
    """The delta that makes ``loaded`` hold the names it holds with ``changes`` applied (key ->
    its name now, None: gone), found from the changed keys alone.

    The current delta is the whole difference between the base and the names held (each sync
    writes it so), so a key not in ``changes`` keeps its place: its delta row, or its base row
    superseded or not. A changed key is superseded in the base unless the base holds it with its
    name now, and has a delta row unless it is gone or the base holds it so.

    A name's vector is taken where :meth:`~workbench.vectors.entity_vectors._Loaded.row_of_name`
    finds it (the base's first row holding it, else the delta's), looked up in the base for the
    changed keys' names only. A delta row kept takes the vector of its name's first delta row:
    each delta row was given its name's base vector, when the base holds the name, by the sync
    that wrote it, so this is the vector the lookup over every name would copy.
    """
    delta = loaded.delta
    base_size = len(loaded.keys)
    delta_keys = strings(delta.keys) if delta is not None else []
    delta_names = strings(delta.names) if delta is not None else []
    superseded = set(delta.superseded.tolist()) if delta is not None else set()
    in_delta = dict(zip(delta_keys, delta_names))
    rows = {key: name for key, name in in_delta.items() if key not in changes}
    base_row = positions(loaded.keys, changes)
    changed = gone = 0
    for key, name in changes.items():
        row = base_row.get(key)
        base_name = loaded.names[row] if row is not None else None
        held = in_delta[key] if key in in_delta else base_name if row not in superseded else None
        if name != held:
            changed += name is not None
            gone += held is not None
        if row is not None:
            if name == base_name:
                superseded.discard(row)
            else:
                superseded.add(row)
        if name is not None and name != base_name:
            rows[key] = name
    row_of_name: dict[str, int] = {}
    for row, name in enumerate(delta_names, start=base_size):
        row_of_name.setdefault(name, row)
    row_of_name.update(positions(loaded.names, {name for name in changes.values() if name is not None}))
    keys = sorted(rows)
    return KeysFollowed(keys, [rows[key] for key in keys], sorted(superseded), row_of_name, changed, gone)
