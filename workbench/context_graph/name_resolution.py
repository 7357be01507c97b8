"""An entity no name resolves to: :class:`EntityNotFound`, with the near names and the names
holding the query as suggestions (:func:`near_names`)."""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Mapping

from ..model import Entity
from ..text.name_keys import name_key
from .graph_walks import _name_order

__all__ = ["EntityNotFound", "near_names"]


class EntityNotFound(KeyError):
    """No entity of the graph answers to a name; :attr:`suggestions` lists near names.

    Examples
    --------
    >>> str(EntityNotFound("redsi", ["Redis"]))
    "no entity named 'redsi' in the graph; did you mean: Redis?"
    """

    def __init__(self, name: str, suggestions: Iterable[str] = ()) -> None:
        super().__init__(name)
        self.name = name
        self.suggestions = list(suggestions)

    def __str__(self) -> str:
        message = f"no entity named {self.name!r} in the graph"
        if self.suggestions:
            return f"{message}; did you mean: {', '.join(self.suggestions)}?"
        return f"{message}; list the entities to see the names it knows"


def near_names(name: str, entities: Mapping[str, Entity]) -> list[str]:
    """Up to five near names (difflib on names and keys), then up to five containing it."""
    by_form: dict[str, str] = {}
    for key, entity in entities.items():
        by_form.setdefault(entity.name.casefold(), entity.name)
        by_form.setdefault(key, entity.name)
    close = difflib.get_close_matches(name.casefold(), list(by_form), n=10, cutoff=0.6)
    close += difflib.get_close_matches(name_key(name), list(by_form), n=10, cutoff=0.6)
    near = list(dict.fromkeys(by_form[form] for form in close))[:5]
    query, folded = name_key(name), name.casefold().strip()
    containing = sorted(
        (
            entity.name
            for key, entity in entities.items()
            if (query and query in key) or (folded and folded in entity.name.casefold())
        ),
        key=_name_order,
    )
    containing = [n for n in dict.fromkeys(containing) if n not in near][:5]
    return near + containing
