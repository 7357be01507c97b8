"""How many CPU cores this process may run on (the inference threads and the PageRank row blocks
are sized by it), and a shared thread pool of that many threads for numpy work that releases the GIL.

>>> usable_cores() >= 1
True
>>> thread_map(abs, [-1, 2, -3])
[1, 2, 3]
"""

from __future__ import annotations

import os
import threading
from concurrent.futures import ThreadPoolExecutor
from typing import Callable, TypeVar

__all__ = ["usable_cores", "thread_map"]

_Item = TypeVar("_Item")
_Result = TypeVar("_Result")
_POOL: ThreadPoolExecutor | None = None
_POOL_LOCK = threading.Lock()


def _forget_pool() -> None:
    """In a forked child: the pool object came along, its threads did not (nor a held lock)."""
    global _POOL, _POOL_LOCK
    _POOL, _POOL_LOCK = None, threading.Lock()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_pool)


def thread_map(function: Callable[[_Item], _Result], items: list[_Item]) -> list[_Result]:
    """``[function(item) for item in items]``, on a shared pool of :func:`usable_cores` threads when
    there are several items (here, not in the caller's thread, when there is one)."""
    global _POOL
    if len(items) < 2:
        return [function(item) for item in items]
    with _POOL_LOCK:
        if _POOL is None:
            _POOL = ThreadPoolExecutor(max_workers=usable_cores(), thread_name_prefix="workbench-numpy")
    return list(_POOL.map(function, items))


def usable_cores() -> int:
    """The cores of this process's CPU affinity (a container's share on Linux), else all of them."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not on Linux
        return max(1, os.cpu_count() or 1)
