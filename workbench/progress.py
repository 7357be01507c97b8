"""A terminal progress bar for long ingests (tqdm on stderr, off when stderr is not a terminal)."""

from __future__ import annotations

import sys

__all__ = ["tqdm_progress"]


def tqdm_progress(desc: str | None = None):
    """A ``progress(stage, done, total)`` callback that draws a tqdm bar with an ETA.

    >>> progress = tqdm_progress("ingest")
    >>> progress("ingest", 0, 2); progress("ingest", 2, 2)
    """
    from tqdm import tqdm

    bar = None

    def progress(stage: str, done: int, total: int) -> None:
        nonlocal bar
        if bar is None:
            bar = tqdm(total=total, unit="doc", desc=desc or stage, file=sys.stderr, disable=None)
        bar.n = done
        bar.refresh()
        if done >= total:
            bar.close()

    return progress
