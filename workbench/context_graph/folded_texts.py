"""Every passage's casefolded text, kept by a process that follows its writes, so that a write finds
the passages that may write a changed name by searching one string, not by reading every passage
from the record and folding it again.

The texts are kept joined by a character no word holds (NUL), with each passage's start (one copy of
the corpus's text), and the search of a name is :meth:`str.find` of its longest word over the joined
text (a scan in C), then the test of :class:`~workbench.context_graph.passages.NamesWritten` on the
passages it lands in.
A chunk's id is made from its text (:func:`~workbench.ingest.chunking.chunk_id`), so a passage kept
here never changes: a write adds passages and removes some.

Examples
--------
>>> from workbench.context_graph.passages import NamesWritten
>>> kept = FoldedTexts([("c1", "In Canada."), ("c2", "Ana's notes on Billing.")])
>>> sorted(kept.holding(NamesWritten({"ana"})))
['c2']
>>> kept.follow({"c3": "ANA again"}, {"c2"})
>>> sorted(kept.holding(NamesWritten({"ana"}))), len(kept)
(['c3'], 2)
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Collection, Iterable, Mapping
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .passages import NamesWritten

__all__ = ["FoldedTexts"]

_SEPARATOR = "\x00"


class FoldedTexts:
    """The casefolded text of each passage (see the module docstring)."""

    def __init__(self, texts: Iterable[tuple[str, str]]) -> None:
        self._ids: list[str] = []
        folded: list[str] = []
        for chunk_id, text in texts:
            self._ids.append(chunk_id)
            folded.append(text.casefold())
        self._join(folded)

    def _join(self, folded: list[str]) -> None:
        self._starts = [0] * (len(folded) + 1)  # each passage's start, then the end
        at = 0
        for i, text in enumerate(folded):
            self._starts[i] = at
            at += len(text) + 1
        self._starts[-1] = at
        self._at = {chunk_id: i for i, chunk_id in enumerate(self._ids)}
        self._joined = _SEPARATOR.join(folded) + _SEPARATOR

    def __len__(self) -> int:
        return len(self._ids)

    def _text(self, i: int) -> str:
        return self._joined[self._starts[i]:self._starts[i + 1] - 1]

    def follow(self, added: Mapping[str, str], removed: Collection[str]) -> None:
        """Keep the passages ``added`` (chunk id -> text) and drop those ``removed``."""
        gone = {self._at[chunk_id] for chunk_id in removed if chunk_id in self._at}
        new = {chunk_id: text for chunk_id, text in added.items() if chunk_id not in self._at}
        if not gone and not new:
            return
        kept = [i for i in range(len(self._ids)) if i not in gone]
        folded = [self._text(i) for i in kept] + [text.casefold() for text in new.values()]
        self._ids = [self._ids[i] for i in kept] + list(new)
        self._join(folded)

    def holding(self, names: NamesWritten) -> set[str]:
        """The passages that may write one of ``names`` (:meth:`NamesWritten.holds` of each
        passage holding the longest word of a name)."""
        found: set[int] = set()
        joined, starts = self._joined, self._starts
        for words in names.needs:
            longest, at, seen = words[0], 0, set()
            while (at := joined.find(longest, at)) >= 0:
                seen.add(bisect_right(starts, at) - 1)
                at += len(longest)
            found.update(i for i in seen - found if names.holds(self._text(i)))
        return {self._ids[i] for i in found}
