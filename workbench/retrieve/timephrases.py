"""The time phrases people write, read into spans of days against a reference day.

Families, tried in this order (the first that matches and resolves wins):

- days and weeks: "yesterday", "the day before yesterday", "today", "this week", "last week",
  "last weekend", "earlier this week / month / quarter / year";
- "N days / weeks / months / years ago", numbers as digits or words ("two weeks ago");
- rolling spans: "(in) the past / last N days / weeks / months / years", "the past week",
  "the last two months" (numbers as words, "a couple of", "a few" = 3);
- calendar periods: "last / this month", "last / this quarter", "last / this year";
- quarters and halves: "Q4 2024", "Q4", "the fourth quarter of 2024", "H1", "H2 2024",
  "the first half of 2024" (without a year: the latest one begun by the reference day);
- ranges: "between March and May", "from March 2023 to May 2024", "between 2022 and 2023";
- bounds: "since / after / before / until <day, month, year or event>" ("after the login
  outage": the date of the earliest document whose title names the event);
- "in / during <month> [year]", "in / during <year>".

:func:`read_phrase` returns the first phrase it understands. :func:`unread_phrases` names the
phrases that look like time ("in the past few sprints", "next spring", "since the migration"
when no document names a migration) but were not understood, so a caller can say so rather
than ignore them.

Examples
--------
>>> from datetime import date
>>> read_phrase("what changed in the past two weeks?", date(2024, 7, 15))[:2]
(datetime.date(2024, 7, 1), datetime.date(2024, 7, 15))
>>> read_phrase("decisions from Q4 2024", date(2025, 3, 1))[:3]
(datetime.date(2024, 10, 1), datetime.date(2024, 12, 31), 'Q4 2024')
>>> unread_phrases("what shipped over the last few sprints?")
['last few sprints']
"""

from __future__ import annotations

import calendar
import re
from collections.abc import Callable
from datetime import date, timedelta

__all__ = ["read_phrase", "unread_phrases", "NUMBER_WORDS", "number_of", "quarter_span", "Anchor"]

#: A function from an event phrase ("login outage") to the day it happened, or None.
Anchor = Callable[[str], "date | None"]

_MONTHS = {name.lower(): i for i, name in enumerate(calendar.month_name) if name}
_MONTHS.update({name.lower(): i for i, name in enumerate(calendar.month_abbr) if name})
_MONTHS["sept"] = 9
_MONTH = "|".join(sorted(_MONTHS, key=len, reverse=True))
_WEEKDAYS = "|".join(name.lower() for name in calendar.day_name)

#: Numbers written as words, as people write them in time phrases.
NUMBER_WORDS = {"a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7,
                "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "fifteen": 15, "twenty": 20,
                "thirty": 30, "a couple of": 2, "couple of": 2, "a few": 3, "few": 3}
_NUMBER = r"(\d{1,4}|" + "|".join(sorted(NUMBER_WORDS, key=len, reverse=True)) + r")"
_UNIT = r"(days?|weeks?|fortnights?|months?|quarters?|years?)"
_UNIT_DAYS = {"day": 1, "week": 7, "fortnight": 14}
_ORDINAL = {"first": 1, "1st": 1, "second": 2, "2nd": 2, "third": 3, "3rd": 3, "fourth": 4, "4th": 4, "last": 4}
_END = r"(?=\s*[?.,;!)]|\s+(?:and|or|but|for|with|in|on|at|about|to)\b|$)"

Span = tuple["date | None", "date | None"]


def number_of(word: str) -> int:
    """The number a word or digits stand for: ``number_of("two") == 2``, ``number_of("30") == 30``."""
    word = re.sub(r"\s+", " ", word.strip().lower())
    return int(word) if word.isdigit() else NUMBER_WORDS[word]


def _month_span(year: int, month: int) -> tuple[date, date]:
    return date(year, month, 1), date(year, month, calendar.monthrange(year, month)[1])


def _months_back(day: date, n: int) -> tuple[int, int]:
    index = day.year * 12 + day.month - 1 - n
    return index // 12, index % 12 + 1


def quarter_span(year: int, quarter: int) -> tuple[date, date]:
    """The first and last day of a quarter: ``quarter_span(2024, 4)`` is 1 October to 31 December."""
    return date(year, 3 * quarter - 2, 1), _month_span(year, 3 * quarter)[1]


def _half_span(year: int, half: int) -> tuple[date, date]:
    return (date(year, 1, 1), date(year, 6, 30)) if half == 1 else (date(year, 7, 1), date(year, 12, 31))


def _latest_begun(span: Callable[[int], tuple[date, date]], as_of: date) -> tuple[date, date]:
    """``span(year)`` for the latest year whose span has begun by ``as_of``."""
    return span(as_of.year) if span(as_of.year)[0] <= as_of else span(as_of.year - 1)


def _point(text: str, as_of: date, year_hint: int | None = None) -> tuple[date, date] | None:
    """The span a month ("March", "March 2024"), a year or an ISO day names."""
    text = text.strip().lower()
    if re.fullmatch(r"\d{4}-\d{2}-\d{2}", text):
        try:
            day = date.fromisoformat(text)
        except ValueError:
            return None
        return day, day
    if re.fullmatch(r"\d{4}", text):
        return date(int(text), 1, 1), date(int(text), 12, 31)
    m = re.fullmatch(rf"({_MONTH})(?:\s+(\d{{4}}))?", text)
    if m is None:
        return None
    month = _MONTHS[m.group(1)]
    year = int(m.group(2)) if m.group(2) else year_hint
    if year is None:
        year = as_of.year if month <= as_of.month else as_of.year - 1
    return _month_span(year, month)


_POINT = rf"(\d{{4}}-\d{{2}}-\d{{2}}|(?:{_MONTH})(?:\s+\d{{4}})?|\d{{4}})"


def _phrases(as_of: date, anchor: Anchor | None) -> list[tuple[str, Callable[[re.Match], Span | None]]]:
    """``(regex, match -> (since, until) or None)``, most specific first."""
    week_start = as_of - timedelta(days=as_of.weekday())
    quarter = (as_of.month - 1) // 3 + 1
    this_quarter = quarter_span(as_of.year, quarter)
    last_quarter = quarter_span(as_of.year, quarter - 1) if quarter > 1 else quarter_span(as_of.year - 1, 4)
    periods = {"week": week_start, "month": date(as_of.year, as_of.month, 1), "quarter": this_quarter[0],
               "year": date(as_of.year, 1, 1)}

    def ago(m):
        n, unit = number_of(m.group(1)), m.group(2).lower().rstrip("s")
        if unit == "day":
            return (as_of - timedelta(days=n),) * 2
        if unit in ("week", "fortnight"):
            start = week_start - timedelta(days=7 * n * (2 if unit == "fortnight" else 1))
            return start, start + timedelta(days=6 if unit == "week" else 13)
        if unit == "month":
            return _month_span(*_months_back(as_of, n))
        if unit == "quarter":
            index = as_of.year * 4 + quarter - 1 - n
            return quarter_span(index // 4, index % 4 + 1)
        return date(as_of.year - n, 1, 1), date(as_of.year - n, 12, 31)

    def rolling(m):
        n = number_of(m.group(1)) if m.group(1) else 1
        unit = m.group(2).lower().rstrip("s")
        if unit in ("month", "quarter", "year"):  # the same day n calendar months back
            year, month = _months_back(as_of, n * {"month": 1, "quarter": 3, "year": 12}[unit])
            return date(year, month, min(as_of.day, calendar.monthrange(year, month)[1])), as_of
        return as_of - timedelta(days=n * _UNIT_DAYS[unit]), as_of

    def earlier(m):
        start = periods[m.group(1).lower()]
        return start, max(start, as_of - timedelta(days=1))

    def quarter_of(m):
        q = _ORDINAL.get(m.group(1).lower()) if not m.group(1).isdigit() else int(m.group(1))
        year = m.group(2) or m.group(3)
        if q is None or not 1 <= q <= 4:
            return None
        return quarter_span(int(year), q) if year else _latest_begun(lambda y: quarter_span(y, q), as_of)

    def half_of(m):
        h = {"1": 1, "2": 2, "first": 1, "second": 2, "1st": 1, "2nd": 2}[m.group(1).lower()]
        year = m.group(2) or m.group(3)
        return _half_span(int(year), h) if year else _latest_begun(lambda y: _half_span(y, h), as_of)

    def between(m):
        right = _point(m.group(2), as_of)
        if right is None:
            return None
        left = _point(m.group(1), as_of, right[1].year)
        if left is None:
            return None
        if left[0] > right[0] and not re.search(r"\d{4}", m.group(1)):  # "between November and February"
            left = _point(m.group(1), as_of, right[1].year - 1)
        return (left[0], right[1]) if left and left[0] <= right[1] else None

    def bound(m):
        word, span = m.group(1).lower(), _point(m.group(2), as_of)
        if span is None:
            return None
        if word == "since":
            return span[0], None
        if word == "after":
            return span[1] + timedelta(days=1), None
        if word in ("until", "till", "through"):
            return None, span[1]
        return None, span[0] - timedelta(days=1)  # before, prior to

    def event(m):
        word = m.group(1).lower()
        day = _event_day(m.group(2), anchor)
        if day is None:
            return None
        if word in ("before", "prior to"):
            return None, day - timedelta(days=1)
        if word in ("until", "till"):
            return None, day
        return day, None  # since, after: from the day of the event, which its own report is dated

    def named_month(m):
        return _point(m.group(1) + (" " + m.group(2) if m.group(2) else ""), as_of)

    return [
        (r"\bthe day before yesterday\b", lambda m: (as_of - timedelta(days=2),) * 2),
        (r"\byesterday\b", lambda m: (as_of - timedelta(days=1),) * 2),
        (r"\btoday\b", lambda m: (as_of, as_of)),
        (r"\bearlier this (week|month|quarter|year)\b", earlier),
        (rf"\b{_NUMBER} {_UNIT} ago\b", ago),
        (rf"\b(?:(?:in|during|over|within) )?(?:the )?(?:last|past|previous) {_NUMBER} {_UNIT}\b", rolling),
        (rf"\b(?:(?:in|during|over|within) )?(?:the )?past {_UNIT}\b", lambda m: rolling(_Fixed(None, m.group(1)))),
        (r"\blast weekend\b", lambda m: (week_start - timedelta(days=2), week_start - timedelta(days=1))),
        (r"\blast week\b", lambda m: (week_start - timedelta(days=7), week_start - timedelta(days=1))),
        (r"\bthis week\b", lambda m: (week_start, as_of)),
        (r"\b(?:last|previous) month\b", lambda m: _month_span(*_months_back(as_of, 1))),
        (r"\bthis month\b", lambda m: (date(as_of.year, as_of.month, 1), as_of)),
        (r"\b(?:last|previous) quarter\b", lambda m: last_quarter),
        (r"\b(?:this|the current) quarter\b", lambda m: (this_quarter[0], as_of)),
        (r"\b(?:last|previous) year\b", lambda m: (date(as_of.year - 1, 1, 1), date(as_of.year - 1, 12, 31))),
        (r"\bthis year\b", lambda m: (date(as_of.year, 1, 1), as_of)),
        (r"\b(?:(?:in|during) )?(?:(\d{4})[\s-])?Q([1-4])(?:\s+(?:of\s+)?(\d{4}))?\b",
         lambda m: quarter_of(_Fixed(m.group(2), m.group(1), m.group(3)))),
        (r"\b(?:(?:in|during) )?(?:the )?(first|1st|second|2nd|third|3rd|fourth|4th) quarter(?: of (?:(\d{4})|the year))?(?:\s+(\d{4}))?\b",
         quarter_of),
        (r"\b(?:(?:in|during) )?(?:(\d{4})[\s-])?H([12])(?:\s+(?:of\s+)?(\d{4}))?\b",
         lambda m: half_of(_Fixed(m.group(2), m.group(1), m.group(3)))),
        (r"\b(?:(?:in|during) )?(?:the )?(first|1st|second|2nd) half(?: of (?:(\d{4})|the year))?(?:\s+(\d{4}))?\b", half_of),
        (rf"\b(?:between|from) {_POINT} (?:and|to|until|till|through) {_POINT}\b", between),
        (rf"\b(since|after|before|prior to|until|till|through) {_POINT}\b", bound),
        (rf"\b(since|after|before|prior to|until|till) the ([\w][\w\s-]{{1,60}}?){_END}", event),
        (rf"\b(?:in|during) ({_MONTH})(?:\s+(\d{{4}}))?\b", named_month),
        (r"\b(?:in|during) (\d{4})\b", lambda m: (date(int(m.group(1)), 1, 1), date(int(m.group(1)), 12, 31))),
    ]


class _Fixed:
    """A stand-in match whose groups are given, for a pattern whose groups are in another order."""

    def __init__(self, *groups: str | None) -> None:
        self._groups = groups

    def group(self, i: int) -> str | None:
        return self._groups[i - 1]


_EVENT_STOP = {"the", "a", "an", "of", "in", "on", "big", "last", "our", "we", "did", "was", "were", "is"}


def _event_day(phrase: str, anchor: Anchor | None) -> date | None:
    """The day of the event a phrase names ("login outage"), by the anchor; None without one."""
    words = phrase.split()
    while words and words[-1].lower() in _EVENT_STOP:
        words.pop()
    return anchor(" ".join(words)) if anchor is not None and words else None


def read_phrase(query: str, as_of: date, anchor: Anchor | None = None
                ) -> tuple[date | None, date | None, str, int, int] | None:
    """``(since, until, phrase, start, end)`` for the first time phrase of ``query`` understood, or
    ``None``. For an event, the phrase ends where the event's name does."""
    for pattern, span in _phrases(as_of, anchor):
        for match in re.finditer(pattern, query, re.IGNORECASE):
            found = span(match)
            if found is not None:
                return found[0], found[1], match.group(0).strip(), match.start(), match.end()
    return None


# Words that make a phrase look like time, though no pattern above may read it.
_TIME_WORDS = (rf"(?:{_MONTH}|{_WEEKDAYS}|days?|weeks?|weekends?|fortnights?|months?|quarters?|years?|decades?|"
               r"seasons?|sprints?|spring|summer|autumn|fall|winter|mornings?|evenings?|nights?|tonight|tomorrow|"
               r"q[1-4]|h[12])")  # a bare year after a preposition is read, or names a thing ("the 1999 season")
_LOOKS_LIKE_TIME = re.compile(
    rf"\b(?:(?:last|past|previous|next|coming|this|recent|earlier|later|few|several|couple|many)\s+(?:[\w-]+\s+){{0,2}}?"
    rf"{_TIME_WORDS}\b|[\w-]+\s+{_TIME_WORDS}\s+ago\b|"
    rf"(?:since|until|till|after|before|prior to|between|during|on|in)\s+(?:the\s+)?"
    rf"(?:(?:{_MONTH}|{_WEEKDAYS}|spring|summer|autumn|fall|winter|next|last|coming|previous)\b[\w\s-]{{0,20}}?"
    rf"(?=\s*[?.,;!]|$|\s+(?:and|or|but|for|with|about)\b)|{_TIME_WORDS}\b)|"
    r"(?:since|until|till) the [\w][\w\s-]{1,40}?(?=\s*[?.,;!]|$)|"
    r"(?:after|before|prior to) the [\w-]+(?:\s+[\w-]+){0,2}(?=\s*[?.,;!]|$))", re.IGNORECASE)


def unread_phrases(text: str) -> list[str]:
    """Phrases of ``text`` that look like time but that :func:`read_phrase` would not read there:
    call it on the text left after the phrase that was read.

    >>> unread_phrases("What broke next spring?"), unread_phrases("How does Redis work?")
    (['next spring'], [])
    """
    # A phrase read on its own is understood (a second time phrase of the question): not reported.
    return [m.group(0).strip() for m in _LOOKS_LIKE_TIME.finditer(text)
            if read_phrase(m.group(0), date(2000, 1, 1)) is None]
