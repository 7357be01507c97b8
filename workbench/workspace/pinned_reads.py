"""One graph per query: a view's reads of its graph and record version, pinned per thread.

A query reads the graph many times (its seeds, its walk, the edges it cites, the retrieval
indexes keyed by the record's version). A writer in another thread or process may commit
between two of those reads; without a pin the query would mix two graphs (an MCP session
answering during an ingest once cited an edge to an entity its graph did not hold).
:meth:`PinnedReads.pinned` makes the thread inside the block read one derivation throughout.

Examples
--------
>>> class View(PinnedReads):
...     def __init__(self):
...         self._pins, self.record = threading.local(), 1
...     def _derivation(self):
...         return self.record, f"graph of {self.record}"
>>> view = View()
>>> with view.pinned():
...     first = view._pinned_or_current()
...     view.record = 2  # a writer commits
...     view._pinned_or_current() == first
True
>>> view._pinned_or_current()
(2, 'graph of 2')
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

__all__ = ["PinnedReads"]


class PinnedReads:
    """What a view with a derived graph mixes in: it gives :meth:`_derivation` (the record version
    and the graph derived for the record as it is now) and a ``_pins`` ``threading.local``."""

    _pins: threading.local

    def _derivation(self) -> tuple[int, Any]:
        raise NotImplementedError

    def _pinned_or_current(self) -> tuple[int, Any]:
        """``(record version, graph)``: the pinned ones inside a :meth:`pinned` block (taken at the
        first read), else the current ones."""
        pin = getattr(self._pins, "pin", None)
        if pin is None:
            return self._derivation()
        if not pin:
            pin.append(self._derivation())
        return pin[0]

    def _is_pinned(self) -> bool:
        return getattr(self._pins, "pin", None) is not None

    @contextmanager
    def pinned(self) -> Iterator[None]:
        """Within the block, this thread reads one derivation of the record: the first read of
        the graph or the version takes the graph derived now, and every later read returns that
        graph and the record version it was derived from, whatever another thread or process
        commits meanwhile. A query runs in one (:func:`workbench.retrieve.retrieve`), so its graph,
        its record version and the retrieval indexes keyed by that version agree. A block inside
        another keeps the outer pin."""
        if self._is_pinned():
            yield
            return
        self._pins.pin = []
        try:
            yield
        finally:
            self._pins.pin = None
