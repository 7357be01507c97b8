"""The shorter names a document's title is written by in prose.

Titles carry qualifiers that prose drops: "Tim McCann (director)" is written "Tim McCann", "Maurice,
Prince of Orange" is "Maurice", "Emperor Gaozong of Tang" is "Emperor Gaozong". A passage that names
the short form names the titled document, so the passage layer links it there as it links a
passage that writes the title whole (the bridge of a two-hop question is most often written so).

A short form shared by many titles ("William I" of a dozen kingdoms) names none of them: it links
to a title only while at most :data:`MAX_TITLES_PER_ALIAS` titles share it, and a one-word short form
only when it is one title's alone.

Examples
--------
>>> title_aliases("Tim McCann (director)")
['Tim McCann']
>>> title_aliases("Maurice, Prince of Orange")
['Maurice']
>>> title_aliases("Emperor Gaozong of Tang")
['Emperor Gaozong']
>>> title_aliases("Redis")
[]
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Callable, Container, Iterable, Mapping, Sequence

__all__ = ["MAX_TITLES_PER_ALIAS", "title_aliases", "aliased_titles", "usable_aliases"]

#: A short form shared by more titles than this is too ambiguous to link any of them.
MAX_TITLES_PER_ALIAS = 3

_QUALIFIER = re.compile(r"^(?P<name>.*\S)\s*\([^()]*\)$")  # "Name (qualifier)"
_APPOSITION = re.compile(r"^(?P<name>[^,]+),\s+\S.*$")  # "Name, Title of Place"
_OF_PLACE = re.compile(r"^(?P<name>\S+(?:\s+\S+)+?)\s+of\s+\S.*$")  # "Emperor Gaozong of Tang"


def title_aliases(title: str) -> list[str]:
    """The shorter forms of ``title`` that prose writes, most specific first, without the title."""
    found: list[str] = []
    rest = title.strip()
    for pattern in (_QUALIFIER, _APPOSITION, _OF_PLACE):
        match = pattern.match(rest)
        if match:
            rest = match.group("name").strip()
            if rest and rest != title and rest not in found:
                found.append(rest)
    return found


def aliased_titles(titles: Mapping[str, str], words_of: Callable[[str], str],
                   known: Iterable[str] = ()) -> dict[str, list[str]]:
    """Short-form words -> the title keys they stand for, for the titles of ``titles`` (key -> title).

    A short form is kept while at most :data:`MAX_TITLES_PER_ALIAS` titles share it (one, for a
    short form of one word); a short form that is itself a title (in ``known`` words) names that
    title, never the others.

    >>> aliased_titles({"a": "Tim McCann (director)", "b": "Tim McCann (actor)", "c": "Orhan (band)"},
    ...                str.casefold, known={"orhan"})
    {'tim mccann': ['a', 'b']}
    """
    by_alias: dict[str, list[str]] = defaultdict(list)
    for key in sorted(titles):
        for alias in title_aliases(titles[key]):
            words = words_of(alias)
            if words and key not in by_alias[words]:
                by_alias[words].append(key)
    return usable_aliases(by_alias, set(known))


def usable_aliases(by_alias: Mapping[str, Sequence[str]], known: Container[str]) -> dict[str, list[str]]:
    """Of short-form words -> the title keys (sorted) that have them, those that may name a title:
    none that is a title's own words (in ``known``), none shared by too many titles; sorted by words.

    >>> usable_aliases({"tim mccann": ["a", "b"], "orhan": ["c"], "ann": ["d", "e"]}, {"orhan"})
    {'tim mccann': ['a', 'b']}
    """
    return {words: list(keys) for words, keys in sorted(by_alias.items())
            if words not in known and len(keys) <= (MAX_TITLES_PER_ALIAS if " " in words else 1)}
