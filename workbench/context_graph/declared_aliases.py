"""Merge suggestions a text declares: a name with another in brackets (``Auth Service (AuthN)``),
or written "also called" / "aka" / 又称 beside it (:func:`declared_alias_suggestions`)."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence

from ..text.name_keys import DEFAULT_ARTICLES, name_key
from .merge_suggestions import CJK_RE, MergeSuggestion, key_pair

__all__ = ["declared_alias_suggestions"]


# "A (B)", "A（B）", "A, also called B", "A aka B", "A 又称 B": a note or a glossary record says
# that two names are one.
_PAREN_RE = re.compile(r"([^()（）\n]{1,80}?)\s*[（(]\s*([^()（）\n]{1,60}?)\s*[)）]")


_AKA_RE = re.compile(r"([^,;.\n]{1,80}?)[,，]?\s+(?:also (?:called|known as)|aka|a\.k\.a\.)\s+([^,;.\n)]{1,60})"
                     r"|([^，。；\n]{1,40}?)(?:又称|也叫|简称)([^，。；\n]{1,40})", re.IGNORECASE)
#: What every match of ``_AKA_RE`` holds: texts without it are not searched.
_AKA_MARK_RE = re.compile(r"\s(?:also (?:called|known as)|aka|a\.k\.a\.)\s|又称|也叫|简称", re.IGNORECASE)
#: The right side of ``_PAREN_RE``: a parenthesis, found before its left side is read.
_PAREN_TAIL_RE = re.compile(r"[（(]\s*([^()（）\n]{1,60}?)\s*[)）]")


def _declarations(text: str) -> list[tuple[str, str, str]]:
    """``(left, right, quote)`` of every ``A (B)`` and ``A, also called B`` in ``text``: the
    matches of ``_PAREN_RE``, then of ``_AKA_RE``. Searched as they are, both patterns try 80
    lengths of a left side at every character; here each parenthesis
    is found first and its left side read back from it (the same matches, tested), and only a
    text holding an alias word is searched for the other kind.
    """
    found = []
    for m in _PAREN_TAIL_RE.finditer(text):
        paren = end = m.start()
        while end and text[end - 1].isspace():  # spaces (line breaks too) may stand before a parenthesis
            end -= 1
        run = max(text.rfind(stop, 0, end) for stop in "()（）\n") + 1  # the left side holds none of these
        if end > run:
            start = max(run, end - 80)
        else:  # spaces alone: the pattern takes the first that is not a line break as the left side
            start = next((i for i in range(end, paren) if text[i] != "\n"), paren)
            if start == paren:
                continue
            end = start + 1
        found.append((text[start:end], m.group(1), text[start:m.end()]))
    if _AKA_MARK_RE.search(text):
        found += [(m.group(1) or m.group(3), m.group(2) or m.group(4), m.group(0)) for m in _AKA_RE.finditer(text)]
    return found


def _known_suffix(text: str, known: Mapping[str, str], articles: tuple[str, ...]) -> str | None:
    """The longest known name that ``text`` ends with (by name key)."""
    text = text.strip()
    for start in range(0, len(text)):
        if start and text[start - 1].isalnum() and text[start].isalnum() and not CJK_RE.match(text[start]):
            continue  # never start inside a Latin word
        found = known.get(name_key(text[start:], articles))
        if found:
            return found
    return None


def declared_alias_suggestions(names: Sequence[str], texts: Iterable[tuple[str, str]],
                               articles: Iterable[str] = DEFAULT_ARTICLES) -> list[MergeSuggestion]:
    """Pairs of known names that a text declares to be one (``A (B)``, ``A, also called B``,
    ``A 又称 B``); ``texts`` are ``(where, text)`` pairs, such as (document id, chunk text).
    Best first; the reason quotes where it was declared.

    Examples
    --------
    >>> found = declared_alias_suggestions(["Auth Service", "认证服务"], [("zh.md", "认证服务（Auth Service）负责登录。")])
    >>> [(s.a, s.b, s.reason) for s in found]
    [('认证服务', 'Auth Service', 'declared in zh.md: “认证服务（Auth Service）”')]
    """
    articles = tuple(articles)
    known: dict[str, str] = {}
    for name in names:
        key = name_key(name, articles)
        if key:
            known.setdefault(key, name)
    found: dict[tuple[str, str], tuple[MergeSuggestion, int]] = {}
    for where, text in texts:
        for left, right, quote in _declarations(text):
            b = known.get(name_key(right, articles))
            a = _known_suffix(left, known, articles)
            if not a or not b or name_key(a, articles) == name_key(b, articles):
                continue
            pair = key_pair(a, b, articles)
            previous = found.get(pair)
            count = previous[1] + 1 if previous else 1
            if previous is None:
                shown = quote.strip()
                shown = shown[shown.find(a):] if a in shown else shown
                reason = f"declared in {where}: “{shown[:80]}”"
            else:
                reason = previous[0].reason.split(" (+")[0] + f" (+{count - 1} more)"
            found[pair] = (MergeSuggestion(a, b, round(min(0.99, 0.9 + 0.03 * (count - 1)), 6), reason), count)
    suggestions = [s for s, _ in found.values()]
    suggestions.sort(key=lambda s: (-s.score, s.a, s.b))
    return suggestions
