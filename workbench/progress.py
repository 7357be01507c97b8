"""A terminal progress bar for long ingests (tqdm on stderr, off when stderr is not a terminal)."""

from __future__ import annotations

import sys

__all__ = ["COUNTED_STAGES", "DOCUMENTS", "ENTITY_NAMES", "GRAPH", "SUMMARIES", "tqdm_progress"]

#: The stages of an ingest's ``progress(stage, done, total)``: its documents, then what it derives.
DOCUMENTS, GRAPH, ENTITY_NAMES, SUMMARIES = "ingest", "context graph", "entity names", "summaries"
#: What the counted stages count (a bar's unit, the word for many); the others are one step each.
COUNTED_STAGES = {DOCUMENTS: ("doc", "documents"), ENTITY_NAMES: ("name", "names")}


def tqdm_progress(desc: str | None = None):
    """A ``progress(stage, done, total)`` callback that draws a tqdm bar with an ETA, one bar per
    stage (documents, then the context graph, the entity names and the summaries an ingest
    derives after them), each labelled ``desc: stage`` (``stage`` without ``desc``).

    >>> progress = tqdm_progress("ingest")
    >>> progress("ingest", 0, 2); progress("ingest", 2, 2); progress("context graph", 0, 1)
    """
    from tqdm import tqdm

    bar = None
    current = None

    def progress(stage: str, done: int, total: int) -> None:
        nonlocal bar, current
        if stage == current and bar is None:
            return  # this stage's bar is finished already
        if bar is None or stage != current:
            if bar is not None:
                bar.close()
            current = stage
            label = stage if desc is None or desc == stage else f"{desc}: {stage}"
            counted = stage in COUNTED_STAGES  # a stage of one step shows its time alone, no rate
            unit = COUNTED_STAGES[stage][0] if counted else "step"
            bar = tqdm(total=total, unit=unit, desc=label, file=sys.stderr, disable=None,
                       bar_format=None if counted else "{l_bar}{bar}| {elapsed}")
        bar.total = total
        bar.n = done
        bar.refresh()
        if done >= total:
            bar.close()
            bar = None

    return progress
