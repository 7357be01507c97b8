"""Which notes a later note outdates: read from the relations the notes declare.

The answer material marks such sources OUTDATED (:mod:`workbench.answer.material`), the evaluation
counts a strategy that surfaces one (:mod:`workbench.evaluate.runner`), and the Compare page
shows them; all three ask :func:`outdated_documents`.

Examples
--------
>>> from workbench.record.store import DocumentRecord
>>> from workbench.model import DeclaredRelation
>>> old = DocumentRecord("d/old.md", "/d/old.md", "Old", "markdown", "h", "2023-01-01", (), ())
>>> new = DocumentRecord("d/new.md", "/d/new.md", "New", "markdown", "h", "2024-01-01", (),
...                      (DeclaredRelation("CONTRADICTS", "old.md"),))
>>> outdated_documents([old, new])
{'d/old.md': ('d/new.md',)}
"""

from __future__ import annotations

from pathlib import PurePosixPath
from typing import Any, Iterable, Sequence

from ..text.name_keys import name_key

__all__ = ["OUTDATING_RELATIONS", "outdated_documents"]

#: Declared relations by which the declaring note makes its target outdated.
OUTDATING_RELATIONS = frozenset({"CONTRADICTS", "SUPERSEDES", "REPLACES", "OVERRIDES"})


def _later(a_date: str | None, b_date: str | None) -> bool | None:
    """True if a is later than b, False if earlier, None if unknown or equal."""
    if not a_date or not b_date or a_date == b_date:
        return None
    return a_date > b_date


def outdated_documents(documents: Sequence[Any],
                       stated: Iterable[tuple[str, str, str]] = ()) -> dict[str, tuple[str, ...]]:
    """Document id -> ids of the notes that make it outdated.

    A note that SUPERSEDES / REPLACES / OVERRIDES another outdates it. With CONTRADICTS, the
    earlier of the two notes (by front-matter date) is the outdated one; without dates the
    declaring note counts as the later one. Targets are matched by id, file name, stem or title.
    Besides the front matter's relations, ``stated`` gives ``(note, relation, note)`` relations
    of the graph, such as a ``SUPERSEDES`` candidate a person accepted, by the notes' names.

    >>> from workbench.record.store import DocumentRecord
    >>> old = DocumentRecord("d/old.md", "/d/old.md", "Old plan", "markdown", "h", "2023-01-01", (), ())
    >>> new = DocumentRecord("d/new.md", "/d/new.md", "New plan", "markdown", "h", "2024-01-01", (), ())
    >>> outdated_documents([old, new], [("New plan", "SUPERSEDES", "Old plan")])
    {'d/old.md': ('d/new.md',)}
    """
    stated = [(subject, relation, target) for subject, relation, target in stated
              if relation.upper() in OUTDATING_RELATIONS]
    if not stated and not any(rel.relation.upper() in OUTDATING_RELATIONS for doc in documents for rel in doc.relations):
        return {}  # no note outdates another: the name table of every document is not needed
    names: dict[str, str] = {}
    for doc in documents:
        path = PurePosixPath(doc.id.split("#", 1)[0])
        for alias in (doc.id, path.name, path.stem, doc.title):
            key = name_key(alias or "")
            if key:
                names.setdefault(key, doc.id)
    by_id = {d.id: d for d in documents}
    declared = [(doc.id, rel.relation, rel.target) for doc in documents for rel in doc.relations]
    declared += [(source_id, relation, target) for subject, relation, target in stated
                 if (source_id := names.get(name_key(subject))) is not None]
    outdated: dict[str, set[str]] = {}
    for source_id, relation, target in declared:
        kind = relation.upper()
        if kind not in OUTDATING_RELATIONS:
            continue
        target_id = names.get(name_key(target))
        if target_id is None or target_id == source_id:
            continue
        old, new = target_id, source_id
        if kind == "CONTRADICTS" and _later(by_id[source_id].date, by_id[target_id].date) is False:
            old, new = source_id, target_id
        outdated.setdefault(old, set()).add(new)
    return {k: tuple(sorted(v)) for k, v in sorted(outdated.items())}
