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
        self._removed: set[int] = set()  # passages dropped but still in the string, until it is made again

    def __len__(self) -> int:
        return len(self._at)

    def _text(self, i: int) -> str:
        return self._joined[self._starts[i]:self._starts[i + 1] - 1]

    def follow(self, added: Mapping[str, str], removed: Collection[str]) -> None:
        """Keep the passages ``added`` (chunk id -> text) and drop those ``removed``: the added ones
        go at the end of the string, the removed ones are skipped until they are a quarter of it."""
        for chunk_id in removed:
            at = self._at.pop(chunk_id, None)
            if at is not None:
                self._removed.add(at)
        new = {chunk_id: text.casefold() for chunk_id, text in added.items() if chunk_id not in self._at}
        if 4 * len(self._removed) > len(self._ids):
            kept = [i for i in range(len(self._ids)) if i not in self._removed]
            self._ids = [self._ids[i] for i in kept] + list(new)
            self._join([self._text(i) for i in kept] + list(new.values()))
            return
        for chunk_id, text in new.items():
            self._at[chunk_id] = len(self._ids)
            self._ids.append(chunk_id)
            self._starts.append(self._starts[-1] + len(text) + 1)
        if new:
            self._joined += _SEPARATOR.join(new.values()) + _SEPARATOR

    def holding(self, names: NamesWritten) -> set[str]:
        """The passages that may write one of ``names``: :meth:`NamesWritten.holds` of each
        passage holding the longest word of a name as a whole word (no letter or digit beside it)."""
        found: set[int] = set()
        joined, starts = self._joined, self._starts
        for words in names.needs:
            longest = words[0]
            size, at, seen = len(longest), 0, set()
            while (at := joined.find(longest, at)) >= 0:
                after = at + size
                if (at == 0 or not joined[at - 1].isalnum()) and not joined[after:after + 1].isalnum():
                    i = bisect_right(starts, at) - 1
                    seen.add(i)
                    at = starts[i + 1]  # the rest of this passage need not be searched
                else:
                    at += 1
            found.update(i for i in seen - found - self._removed if names.holds(self._text(i)))
        return {self._ids[i] for i in found}
