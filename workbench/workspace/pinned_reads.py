"""One graph per query: a view's reads of its graph and record version, pinned per thread.

A query reads the graph many times (its seeds, its walk, the edges it cites, the retrieval
indexes keyed by the record's version). A writer in another thread or process may commit
between two of those reads; without a pin the query would mix two graphs (an MCP session
answering during an ingest once cited an edge to an entity its graph did not hold).
:meth:`Pins.pinned` makes the thread inside the block read one derivation throughout.

Examples
--------
>>> record = [1]
>>> pins = Pins(lambda: (record[0], f"graph of {record[0]}"))
>>> with pins.pinned():
...     first = pins.read()
...     record[0] = 2  # a writer commits
...     pins.read() == first
True
>>> pins.read()
(2, 'graph of 2')
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, Callable

__all__ = ["Pins"]


class Pins:
    """A view's pinned reads: ``derivation()`` gives the record version and the graph derived
    for the record as it is now; :meth:`read` gives them, or inside a :meth:`pinned` block the
    ones this thread first read there."""

    def __init__(self, derivation: Callable[[], tuple[int, Any]]) -> None:
        self._derivation = derivation
        self._pins = threading.local()  # each thread's pinned derivation

    def read(self) -> tuple[int, Any]:
        """``(record version, graph)``: the pinned ones inside a :meth:`pinned` block (taken at the
        first read), else the current ones."""
        pin = getattr(self._pins, "pin", None)
        if pin is None:
            return self._derivation()
        if not pin:
            pin.append(self._derivation())
        return pin[0]

    def is_pinned(self) -> bool:
        return getattr(self._pins, "pin", None) is not None

    def version(self, current: Callable[[], int]) -> int:
        """The pinned record version inside a block, else ``current()`` (no graph derived)."""
        return self.read()[0] if self.is_pinned() else current()

    @contextmanager
    def pinned(self) -> Iterator[None]:
        """Within the block, this thread reads one derivation of the record: the first read of
        the graph or the version takes the graph derived now, and every later read returns that
        graph and the record version it was derived from, whatever another thread or process
        commits meanwhile. A query runs in one (:func:`workbench.retrieve.retrieve`), so its graph,
        its record version and the retrieval indexes keyed by that version agree. A block inside
        another keeps the outer pin."""
        if self.is_pinned():
            yield
            return
        self._pins.pin = []
        try:
            yield
        finally:
            self._pins.pin = None
