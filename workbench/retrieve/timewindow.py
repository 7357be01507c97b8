"""Time windows for every retrieval mode: explicit bounds or phrases found in the question.

A window is an inclusive range of days. :func:`read_time` reads it from ``since`` / ``until``
arguments and from the phrases people write (:mod:`~workbench.retrieve.timephrases`: "last
month", "last quarter", "Q4 2024", "H1", "in the past two weeks", "two weeks ago",
"yesterday", "earlier this month", "between March and May", "before / after / since the
outage"...), resolved against a reference day (``as_of``, default today). An event's day is the
date of the earliest document whose title names it. The phrase is taken out of the text the
retriever searches, so "last month" does not pull in chunks that say "month"; a phrase that
looks like time but is not understood ("next spring") is returned as such, for the caller to
name.

:func:`workbench.retrieve.retrieve` applies the window once for every mode: it asks the
retriever for more hits than wanted, keeps those whose chunk time (the chunk's timestamp,
else its document's date) falls in the window, and undated ones by
:func:`workbench.retrieve.undated_policy`, and says which window it used.

Examples
--------
>>> from datetime import date
>>> w, text = resolve_window("What did we decide about the session store last month?", as_of=date(2024, 7, 15))
>>> (w.since, w.until, w.phrase, text)
('2024-06-01', '2024-06-30', 'last month', 'What did we decide about the session store?')
>>> resolve_window("in February", as_of=date(2024, 7, 1))[0].since
'2024-02-01'
>>> resolve_window("in November", as_of=date(2024, 7, 1))[0].until
'2023-11-30'
>>> resolve_window("no time here", as_of=date(2024, 7, 1))[0] is None
True
>>> in_window("2024-06-10T09:00:00Z", TimeWindow("2024-06-01", "2024-06-30"))
True
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import date

from ..model import TimeWindow
from .timephrases import read_phrase, unread_phrases

__all__ = ["read_time", "TimeReading", "resolve_window", "in_window", "parse_day", "anchor_from_documents", "TimeWindowError"]

class TimeWindowError(ValueError):
    """A ``since``/``until``/``as_of`` value that is not a day (``YYYY-MM-DD``)."""


def parse_day(value: str | date | None, name: str = "date") -> date | None:
    """A day from ``YYYY-MM-DD`` (a longer ISO time is cut to its day), a year ``YYYY`` or a
    month ``YYYY-MM`` (their first day); :class:`TimeWindowError` otherwise."""
    if value is None or isinstance(value, date):
        return value
    text = str(value).strip()
    try:
        if re.fullmatch(r"\d{4}", text):
            return date(int(text), 1, 1)
        if re.fullmatch(r"\d{4}-\d{2}", text):
            return date(int(text[:4]), int(text[5:7]), 1)
        return date.fromisoformat(text[:10])
    except ValueError:
        raise TimeWindowError(f"{name} {value!r} is not a day: write it as YYYY-MM-DD (or YYYY-MM, YYYY)") from None


def _strip(query: str, start: int, end: int) -> str:
    text = (query[:start].rstrip() + " " + query[end:].lstrip()).strip()
    return re.sub(r"\s+([?.,;!])", r"\1", text)


@dataclass(frozen=True)
class TimeReading:
    """What a question says about time: the window it sets, the text left to search, and the
    phrases that look like time but were not understood."""

    window: TimeWindow | None
    """The window, or None when neither arguments nor a phrase set one."""
    text: str
    """The question without the phrase that set the window."""
    not_understood: tuple[str, ...] = ()
    """Phrases that look like time ("next spring", "since the migration" when no document
    names one) and set no window: a caller names them rather than ignore them."""


def read_time(query: str, since: str | date | None = None, until: str | date | None = None,
              as_of: str | date | None = None, anchor: Callable[[str], date | None] | None = None) -> TimeReading:
    """The window a question asks for (:mod:`~workbench.retrieve.timephrases` reads the phrase),
    the question without that phrase, and the time-like phrases left unread.

    Explicit ``since`` / ``until`` win over a phrase for their bound.

    >>> reading = read_time("What broke two weeks ago, and next spring?", as_of=date(2024, 7, 17))
    >>> reading.window.since, reading.window.until, reading.not_understood
    ('2024-07-01', '2024-07-07', ('next spring',))

    Raises
    ------
    TimeWindowError
        A bound that is not a day, or ``since`` after ``until``.
    """
    reference = parse_day(as_of, "as_of") or date.today()
    lo, hi = parse_day(since, "since"), parse_day(until, "until")
    phrase, text = "", query
    found = read_phrase(query, reference, anchor)
    if found is not None:
        start, end = found[3], found[4]
        phrase, text = found[2], _strip(query, start, end)
        lo = lo if since is not None else found[0]
        hi = hi if until is not None else found[1]
    unread = tuple(unread_phrases(text))
    if lo is None and hi is None:
        return TimeReading(None, query, unread)
    if lo is not None and hi is not None and lo > hi:
        raise TimeWindowError(f"the time window starts ({lo}) after it ends ({hi})")
    window = TimeWindow(lo.isoformat() if lo else None, hi.isoformat() if hi else None, phrase,
                        reference.isoformat())
    return TimeReading(window, text or query, unread)


def resolve_window(query: str, since: str | date | None = None, until: str | date | None = None,
                   as_of: str | date | None = None,
                   anchor: Callable[[str], date | None] | None = None) -> tuple[TimeWindow | None, str]:
    """The window a question asks for, and the question without the phrase that set it
    (:func:`read_time` without the unread phrases). Returns ``(None, query)`` when neither
    arguments nor a phrase set a window."""
    reading = read_time(query, since, until, as_of, anchor)
    return reading.window, reading.text


def in_window(stamp: str | None, window: TimeWindow) -> bool:
    """Whether a time's day lies in the window; an undated or unreadable time never does."""
    if not stamp:
        return False
    try:
        day = date.fromisoformat(str(stamp)[:10]).isoformat()
    except ValueError:
        return False
    return (window.since is None or day >= window.since) and (window.until is None or day <= window.until)


_STOP = {"the", "a", "an", "of", "in", "on", "big", "last", "our", "we", "did"}


def anchor_from_documents(documents: Iterable) -> Callable[[str], date | None]:
    """An anchor finder: the date of the earliest dated document whose title holds every word of
    the phrase ("since the login outage" -> the login outage's incident report)."""
    dated = [(d.date, d.title.casefold()) for d in documents if getattr(d, "date", None)]

    def anchor(phrase: str) -> date | None:
        words = [w for w in re.findall(r"\w+", phrase.casefold()) if w not in _STOP]
        if not words:
            return None
        days = sorted(day for day, title in dated if all(w in title for w in words))
        try:
            return parse_day(days[0]) if days else None
        except TimeWindowError:
            return None

    return anchor
