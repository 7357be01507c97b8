"""How many CPU cores this process may run on: the inference threads and the PageRank row blocks
are sized by it.

>>> usable_cores() >= 1
True
"""

from __future__ import annotations

import os

__all__ = ["usable_cores"]


def usable_cores() -> int:
    """The cores of this process's CPU affinity (a container's share on Linux), else all of them."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not on Linux
        return max(1, os.cpu_count() or 1)
