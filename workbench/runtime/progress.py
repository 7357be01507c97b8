"""Progress of long ingests on stderr: a tqdm bar with the time left on a terminal, else (a log
file, a pipe) a plain line now and then with the time left from the measured rate. Both are off
with ``TQDM_DISABLE=1``."""

from __future__ import annotations

import os
import sys
import time

__all__ = ["COUNTED_STAGES", "DOCUMENTS", "ENTITY_NAMES", "GRAPH", "KEYWORDS", "SUMMARIES", "line_progress", "time_left",
           "tqdm_progress"]

#: The stages of an ingest's ``progress(stage, done, total)``: its documents, then what it derives.
DOCUMENTS, GRAPH, ENTITY_NAMES, SUMMARIES, KEYWORDS = "ingest", "context graph", "entity names", "summaries", "keyword index"
#: What the counted stages count (a bar's unit, the word for many); the others are one step each.
#: An ingest counts the characters of text whose vectors are stored, so a single large file moves the bar.
COUNTED_STAGES = {DOCUMENTS: ("char", "characters of text"), ENTITY_NAMES: ("name", "names")}


def time_left(done: int, total: int, seconds: float) -> str | None:
    """The time left at the rate measured so far (``done`` in ``seconds``), for people; None
    before anything is done.

    >>> time_left(250, 1000, 30.0), time_left(10, 1000, 1.0), time_left(0, 10, 5.0)
    ('1 min 30 s left', '1 min 39 s left', None)
    """
    if done <= 0 or seconds <= 0:
        return None
    left = round((total - done) * seconds / done)
    minutes, secs = divmod(left, 60)
    hours, minutes = divmod(minutes, 60)
    if hours:
        return f"{hours} h {minutes} min left"
    return f"{minutes} min {secs} s left" if minutes else f"{secs} s left"


def line_progress(desc: str | None = None, stream=None, every: float = 30.0):
    """A ``progress(stage, done, total)`` callback that writes one line when a stage starts, each
    tenth of it done, at most ``every`` seconds apart between, and when it ends: done, of total,
    and the time left.

    >>> import io
    >>> out = io.StringIO(); progress = line_progress(stream=out)
    >>> progress("ingest", 0, 2000); progress("ingest", 2000, 2000)
    >>> print(out.getvalue().strip())
    ingest: 0 of 2,000 characters of text
    ingest: 2,000 of 2,000 characters of text (100%), done
    """
    started: dict[str, float] = {}
    said: dict[str, tuple[float, int]] = {}  # stage -> when its last line was written, and its tenth

    def progress(stage: str, done: int, total: int) -> None:
        out = stream if stream is not None else sys.stderr
        now = time.monotonic()
        first = stage not in started
        started.setdefault(stage, now)
        finished = done >= total
        tenth = 10 * done // total if total else 0
        when, last_tenth = said.get(stage, (0.0, -1))
        if last_tenth > 10:
            return  # this stage has said it finished
        if not (first or finished or tenth > last_tenth or now - when >= every):
            return
        said[stage] = (now, 11 if finished else tenth)
        label = stage if desc is None or desc == stage else f"{desc}: {stage}"
        if stage not in COUNTED_STAGES:
            line = f"{label}: done" if finished else f"{label}..."
        else:
            line = f"{label}: {done:,} of {total:,} {COUNTED_STAGES[stage][1]}"
            if done and total:
                line += f" ({100 * done // total}%)"
                left = None if finished else time_left(done, total, now - started[stage])
                line += ", done" if finished else (f", {left}" if left else "")
        print(line, file=out, flush=True)

    return progress


def _disabled() -> bool:
    return os.environ.get("TQDM_DISABLE", "").strip().lower() in ("1", "true", "yes")


def tqdm_progress(desc: str | None = None):
    """A ``progress(stage, done, total)`` callback that draws a tqdm bar with the time left, one
    bar per stage (documents, then the context graph, the entity names and the summaries an
    ingest derives after them), each labelled ``desc: stage`` (``stage`` without ``desc``). When
    stderr is not a terminal, :func:`line_progress` writes lines instead.

    >>> progress = tqdm_progress("ingest")
    >>> progress("ingest", 0, 2); progress("ingest", 2, 2); progress("context graph", 0, 1)
    """
    from tqdm import tqdm

    if _disabled():
        return lambda stage, done, total: None
    if not sys.stderr.isatty():
        return line_progress(desc)
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
                       unit_scale=stage == DOCUMENTS, bar_format=None if counted else "{l_bar}{bar}| {elapsed}")
        bar.total = total
        bar.n = done
        bar.refresh()
        if done >= total:
            bar.close()
            bar = None

    return progress
