"""Bulk builds with Python's cyclic garbage collector paused.

Loading a graph snapshot or deriving the graph creates millions of small objects (entities,
edges, tuples, frozensets), none of them in a reference cycle. The cyclic collector still runs
each time enough objects have been allocated, and each full collection walks every live object:
at 200,000 passages (1.3 M entities) half of a snapshot's load, 7.8 of 15.5 s, was collection.
Pausing it for such a build frees nothing less (these objects are freed by reference counting);
it is restored afterwards, as it was.

>>> import gc
>>> with gc_paused():
...     gc.isenabled()
False
>>> gc.isenabled()
True
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["gc_paused"]


@contextmanager
def gc_paused() -> Iterator[None]:
    """Pause the cyclic garbage collector inside the block (nested blocks: the outermost restores it)."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()
