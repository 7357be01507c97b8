"""Bulk builds with Python's cyclic garbage collector paused.

Loading a graph snapshot or deriving the graph creates millions of small objects (entities,
edges, tuples, frozensets), none of them in a reference cycle. The cyclic collector still runs
each time enough objects have been allocated, and each full collection walks every live object:
on a large graph that was about half of a snapshot's load.
Pausing it for such a build frees nothing less (these objects are freed by reference counting);
it is restored afterwards, as it was.

A process that holds such a graph pays for it once more at exit, where the interpreter runs full
collections over every live object before it ends. :func:`skip_exit_collection` moves what is alive then out of the collector's sight at
exit (``gc.freeze`` in an exit hook); the process ends all the same, and nothing it wrote is
affected: files are closed and flushed by their own exit hooks and by the system.

>>> import gc
>>> with gc_paused():
...     gc.isenabled()
False
>>> gc.isenabled()
True
"""

from __future__ import annotations

import atexit
import gc
import threading
from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["gc_paused", "skip_exit_collection"]

_exit_hook_lock = threading.Lock()
_exit_hook_registered = False


def skip_exit_collection() -> None:
    """Have this process's exit leave its live objects to the system instead of walking them with
    the cyclic collector (registered once)."""
    global _exit_hook_registered
    with _exit_hook_lock:
        if not _exit_hook_registered:
            atexit.register(gc.freeze)
            _exit_hook_registered = True


@contextmanager
def gc_paused() -> Iterator[None]:
    """Pause the cyclic garbage collector inside the block (nested blocks: the outermost restores it).

    What the block made and is still alive when it ends goes straight to the oldest generation
    (``gc.freeze`` then ``gc.unfreeze``, which moves objects without examining them; anything
    frozen before, by any code, is unfrozen with them): it is what a build keeps, a graph held
    for long. Left in the youngest generation, the first allocation after the block would walk
    all of it, and later the middle generation's
    collection again."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.freeze()
            gc.unfreeze()
            gc.enable()
