"""Time windows for every retrieval mode: explicit bounds or phrases found in the question.

A window is an inclusive range of days. :func:`resolve_window` reads it from ``since`` /
``until`` arguments and from relative phrases in the question ("last month", "in February",
"this year", "in 2023", "since March", "last 30 days", "since the outage"), resolved against a
reference day (``as_of``, default today). A "since the X" anchor is the date of the earliest
document whose title names X. The phrase is taken out of the text the retriever searches, so
"last month" does not pull in chunks that say "month".

:func:`workbench.retrieve.retrieve` applies the window once for every mode: it asks the
retriever for more hits than wanted, keeps those whose chunk time (the chunk's timestamp,
else its document's date) falls in the window, and says which window it used.

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

import calendar
import re
from collections.abc import Callable, Iterable
from datetime import date, timedelta

from ..model import TimeWindow

__all__ = ["resolve_window", "in_window", "parse_day", "anchor_from_documents", "TimeWindowError"]

_MONTHS = {name.lower(): i for i, name in enumerate(calendar.month_name) if name}
_MONTHS.update({name.lower(): i for i, name in enumerate(calendar.month_abbr) if name})
_MONTH = "|".join(sorted(_MONTHS, key=len, reverse=True))
_UNIT_DAYS = {"day": 1, "week": 7, "month": 30, "year": 365}


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


def _month_span(year: int, month: int) -> tuple[date, date]:
    return date(year, month, 1), date(year, month, calendar.monthrange(year, month)[1])


def _month_before(day: date) -> tuple[int, int]:
    return (day.year - 1, 12) if day.month == 1 else (day.year, day.month - 1)


def _last_in_past(month: int, as_of: date) -> int:
    """The year of the most recent ``month`` not after ``as_of``'s month."""
    return as_of.year if month <= as_of.month else as_of.year - 1


def _phrases(as_of: date, anchor: Callable[[str], date | None] | None):
    """``(regex, function of the match -> (since, until) or None)``, most specific first."""
    def last_n(m):
        n, unit = int(m.group(1)), m.group(2).lower().rstrip("s")
        return as_of - timedelta(days=n * _UNIT_DAYS[unit]), as_of

    def named_month(m):
        month = _MONTHS[m.group(1).lower()]
        year = int(m.group(2)) if m.group(2) else _last_in_past(month, as_of)
        return _month_span(year, month)

    def since_month(m):
        month = _MONTHS[m.group(1).lower()]
        year = int(m.group(2)) if m.group(2) else _last_in_past(month, as_of)
        return date(year, month, 1), None

    def before_day(m):
        day = parse_day(m.group(1))
        return (None, day - timedelta(days=1)) if day else None

    def since_anchor(m):
        day = anchor(m.group(1)) if anchor else None
        return (day, None) if day else None

    week_start = as_of - timedelta(days=as_of.weekday())
    return [
        (r"\b(?:in|during|over) the (?:last|past) (\d+) (days?|weeks?|months?|years?)\b", last_n),
        (r"\b(?:the )?(?:last|past) (\d+) (days?|weeks?|months?|years?)\b", last_n),
        (r"\blast week\b", lambda m: (week_start - timedelta(days=7), week_start - timedelta(days=1))),
        (r"\bthis week\b", lambda m: (week_start, as_of)),
        (r"\blast month\b", lambda m: _month_span(*_month_before(as_of))),
        (r"\bthis month\b", lambda m: (date(as_of.year, as_of.month, 1), as_of)),
        (r"\blast year\b", lambda m: (date(as_of.year - 1, 1, 1), date(as_of.year - 1, 12, 31))),
        (r"\bthis year\b", lambda m: (date(as_of.year, 1, 1), as_of)),
        (r"\byesterday\b", lambda m: (as_of - timedelta(days=1),) * 2),
        (r"\btoday\b", lambda m: (as_of, as_of)),
        (r"\bsince (\d{4}-\d{2}-\d{2})\b", lambda m: (parse_day(m.group(1)), None)),
        (r"\bbefore (\d{4}-\d{2}-\d{2})\b", before_day),
        (rf"\bsince ({_MONTH})(?:\s+(\d{{4}}))?\b", since_month),
        (r"\bsince (\d{4})\b", lambda m: (date(int(m.group(1)), 1, 1), None)),
        (rf"\b(?:in|during) ({_MONTH})(?:\s+(\d{{4}}))?\b", named_month),
        (r"\b(?:in|during) (\d{4})\b", lambda m: (date(int(m.group(1)), 1, 1), date(int(m.group(1)), 12, 31))),
        (r"\bsince the ([\w][\w\s-]{1,40}?)(?=\s*[?.,;!]|$)", since_anchor),
    ]


def _strip(query: str, start: int, end: int) -> str:
    text = (query[:start].rstrip() + " " + query[end:].lstrip()).strip()
    return re.sub(r"\s+([?.,;!])", r"\1", text)


def resolve_window(query: str, since: str | date | None = None, until: str | date | None = None,
                   as_of: str | date | None = None,
                   anchor: Callable[[str], date | None] | None = None) -> tuple[TimeWindow | None, str]:
    """The window a question asks for, and the question without the phrase that set it.

    Explicit ``since`` / ``until`` win over a phrase for their bound. Returns ``(None, query)``
    when neither arguments nor a phrase set a window.

    Raises
    ------
    TimeWindowError
        A bound that is not a day, or ``since`` after ``until``.
    """
    reference = parse_day(as_of, "as_of") or date.today()
    lo, hi = parse_day(since, "since"), parse_day(until, "until")
    phrase, text = "", query
    for pattern, span in _phrases(reference, anchor):
        match = re.search(pattern, query, re.IGNORECASE)
        if match is None:
            continue
        found = span(match)
        if found is None:
            continue
        phrase, text = match.group(0), _strip(query, match.start(), match.end())
        lo = lo if since is not None else found[0]
        hi = hi if until is not None else found[1]
        break
    if lo is None and hi is None:
        return None, query
    if lo is not None and hi is not None and lo > hi:
        raise TimeWindowError(f"the time window starts ({lo}) after it ends ({hi})")
    window = TimeWindow(lo.isoformat() if lo else None, hi.isoformat() if hi else None, phrase,
                        reference.isoformat())
    return window, text or query


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
