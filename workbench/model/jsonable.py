"""The one serialization of the workbench's dataclasses: :func:`to_json`, with one rule for None.

Every ``to_json()`` of a result is this function, called with what the class says differently:
a key order, a value computed from the fields (``corroboration``, ``summary``...), or a field
written in a shape of its own. Values are turned into JSON in one way (:func:`json_value`):
an object with a ``to_json()`` by it, another dataclass field by field, tuples and lists as
lists, dicts value by value.

**The rule for None.** A field that is None is written as ``null``, so a reader finds every
key, unless its class sets ``JSON_DROPS_NONE = True``: there None means "does not apply to
this mode" (:class:`~workbench.model.Why`, :class:`~workbench.model.RetrievalStats`...), and
such a field is left out. Nothing turns None into anything else.

A field is written under another name with ``field(metadata=json_name("from"))``, and kept out
of the JSON with ``field(metadata=NOT_IN_JSON)`` (a setting of the question, not its answer).

Examples
--------
>>> from dataclasses import dataclass
>>> @dataclass
... class Pair:
...     left: str
...     right: tuple[int, ...] = ()
...     note: str | None = None
>>> to_json(Pair("a", (1, 2)))
{'left': 'a', 'right': [1, 2], 'note': None}
>>> to_json(Pair("a"), order=("note",), size=0)
{'note': None, 'left': 'a', 'right': [], 'size': 0}
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import fields, is_dataclass
from typing import Any

__all__ = ["to_json", "json_value", "json_name", "NOT_IN_JSON"]

#: Field metadata: the field is not written (it says how the question was asked, not the answer).
NOT_IN_JSON = {"json": False}


def json_name(name: str) -> dict[str, str]:
    """Field metadata: write the field under ``name`` (``from`` cannot be a field's name)."""
    return {"json_name": name}


def json_value(value: Any) -> Any:
    """``value`` as JSON-ready data: by its ``to_json()``, a dataclass by :func:`to_json`,
    tuples and lists as lists, dicts value by value, anything else as it is.

    >>> json_value({"a": (1, None)})
    {'a': [1, None]}
    """
    if hasattr(value, "to_json"):
        return value.to_json()
    if is_dataclass(value) and not isinstance(value, type):
        return to_json(value)
    if isinstance(value, (list, tuple)):
        return [json_value(v) for v in value]
    if isinstance(value, dict):
        return {k: json_value(v) for k, v in value.items()}
    return value


def to_json(obj: Any, *, order: Iterable[str] = (), **computed: Any) -> dict[str, Any]:
    """The dataclass ``obj`` as a JSON-ready dict.

    Its fields in declaration order (each through :func:`json_value`), then the ``computed``
    values; a computed value named like a field takes that field's place. The keys named in
    ``order`` come first, in that order. None follows the module's one rule.
    """
    drops_none = getattr(obj, "JSON_DROPS_NONE", False)
    out: dict[str, Any] = {}
    for f in fields(obj):
        if f.metadata.get("json", True) is False:
            continue
        value = computed.pop(f.name) if f.name in computed else getattr(obj, f.name)
        out[f.metadata.get("json_name", f.name)] = json_value(value)
    out.update({name: json_value(value) for name, value in computed.items()})
    if drops_none:
        out = {name: value for name, value in out.items() if value is not None}
    first = [name for name in order if name in out]
    return {**{name: out[name] for name in first}, **{n: v for n, v in out.items() if n not in first}}
