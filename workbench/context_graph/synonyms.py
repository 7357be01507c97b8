"""Synonym pairs: entity names so alike by character trigrams that they likely name one thing.

Names are compared only within a group that shares a first word ("Wiley-Blackwell" and "Wiley
Blackwel" are; "Oslo" and "Bergen" never are). Every derivation of the graph compared every name
again, and splitting 340,000 names into words and trigrams took most of the time, not the
comparisons. A :class:`SynonymScan` keeps what a derivation compared (each name's words and the
pairs found), so the next one splits only the names that are new or renamed and compares again
only the groups a name joined, left or changed in; every other group keeps its pairs, which is
exact (tested against comparing every name).

Examples
--------
>>> first = synonym_scan({"wileyblackwell": "Wiley-Blackwell", "oslo": "Oslo"}, 0.8)
>>> first.pairs
()
>>> synonym_scan({"wileyblackwell": "Wiley-Blackwell", "wileyblackwel": "Wiley Blackwel", "oslo": "Oslo"},
...              0.8, previous=first).pairs
(('wileyblackwel', 'wileyblackwell', 0.824),)
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from ..extract.names import joined_words
from ..settings import setting_default

__all__ = ["GROUP_LIMIT", "SynonymScan", "first_word_groups", "synonym_scan", "synonyms_changed"]

#: A group of more names than this shares a common word ("The ..."), not a name: not compared.
GROUP_LIMIT = 300


@dataclass(frozen=True)
class SynonymScan:
    """What one comparison of names found, for the next to reuse."""

    threshold: float
    """The trigram similarity a pair had to reach."""
    names: dict[str, str]
    """Entity key -> the name it was compared by."""
    words: dict[str, str]
    """Entity key -> its name's casefolded words, hyphens as spaces ("" for a name of no words)."""
    pairs: tuple[tuple[str, str, float], ...] = field(default=())
    """``(key, key, similarity)`` of every pair at or above the threshold, sorted."""


def _words(name: str) -> str:
    return joined_words(name.replace("-", " "))


def _trigrams(words: str) -> set[str]:
    padded = f"  {words} "
    return {padded[i:i + 3] for i in range(len(padded) - 2)}


def _group_pairs(group: Iterable[tuple[str, str]], threshold: float) -> list[tuple[str, str, float]]:
    """The pairs of one first-word group of ``(key, words)`` at or above ``threshold``."""
    # By size: Jaccard is at most |smaller| / |larger|, so once a name has that many more
    # trigrams than the threshold allows, no longer name can reach it.
    grams = sorted(((key, _trigrams(words)) for key, words in group), key=lambda item: (len(item[1]), item[0]))
    pairs = []
    for i, (a, ga) in enumerate(grams):
        size = len(ga)
        for b, gb in grams[i + 1:]:
            if size < threshold * len(gb):
                break
            shared = len(ga & gb)
            similarity = shared / (size + len(gb) - shared)  # the union's size, not built
            if similarity >= threshold:
                pairs.append((min(a, b), max(a, b), round(similarity, 3)))
    return pairs


def _first(words: str) -> str:
    return words.split(" ", 1)[0]


def synonym_scan(names: Mapping[str, str], threshold: float = setting_default("graph.synonym_threshold"),
                 previous: SynonymScan | None = None) -> SynonymScan:
    """Compare ``names`` (entity key -> name) within first-word groups of at most
    :data:`GROUP_LIMIT` names; reuse ``previous`` (made at the same threshold) for every name
    whose text and group did not change.

    >>> scan = synonym_scan({"a": "Ann Lee", "b": "Ann Lees", "c": "Bob"}, 0.6)
    >>> scan.pairs, scan.words["b"]
    ((('a', 'b', 0.7),), 'ann lees')
    """
    if previous is not None and previous.threshold != threshold:
        previous = None
    old_names = previous.names if previous is not None else {}
    old_words = previous.words if previous is not None else {}
    words: dict[str, str] = {}
    touched: set[str] = set()  # first words of the groups a name joined, left or changed in
    for key, name in names.items():
        if old_names.get(key) == name:
            words[key] = old_words[key]
            continue
        words[key] = text = _words(name)
        if text:
            touched.add(_first(text))
        if old_words.get(key):
            touched.add(_first(old_words[key]))
    touched.update(_first(text) for key, text in old_words.items() if text and key not in names)
    by_first: dict[str, list[tuple[str, str]]] = defaultdict(list)
    for key, text in words.items():
        if text and (previous is None or _first(text) in touched):
            by_first[_first(text)].append((key, text))
    pairs = []
    if previous is not None:  # a pair's key left or renamed has its old group touched: judged by its old words
        pairs = [pair for pair in previous.pairs if _first(old_words[pair[0]]) not in touched]
    for group in by_first.values():
        if 2 <= len(group) <= GROUP_LIMIT:
            pairs.extend(_group_pairs(group, threshold))
    return SynonymScan(threshold, dict(names), words, tuple(sorted(pairs)))



def first_word_groups(words: Mapping[str, str]) -> dict[str, frozenset[str]]:
    """First word -> the keys whose words (:attr:`SynonymScan.words`) start with it: the groups
    names are compared within.

    >>> {first: sorted(keys) for first, keys in first_word_groups({"a": "ann lee", "b": "ann lees", "c": ""}).items()}
    {'ann': ['a', 'b']}
    """
    groups: dict[str, set[str]] = defaultdict(set)
    for key, text in words.items():
        if text:
            groups[_first(text)].add(key)
    return {first: frozenset(keys) for first, keys in groups.items()}


def synonyms_changed(previous: SynonymScan, changes: Mapping[str, str | None],
                     groups: dict[str, frozenset[str]]) -> SynonymScan:
    """What :func:`synonym_scan` gives for ``previous.names`` with ``changes`` made (key -> its
    name now; None: no longer compared), at ``previous``'s threshold, comparing again only the
    names that changed, with the others of the group they are in now (the pairs of two unchanged
    names stand; a group that grew past :data:`GROUP_LIMIT` and came back under it is compared
    whole). ``groups`` (:func:`first_word_groups` of ``previous.words``) is brought up to date in place.

    >>> first = synonym_scan({"a": "Ann Lee", "c": "Bob"}, 0.6)
    >>> groups = first_word_groups(first.words)
    >>> synonyms_changed(first, {"b": "Ann Lees", "c": None}, groups).pairs, sorted(groups)
    ((('a', 'b', 0.7),), ['ann'])
    """
    # dict.copy(), not dict(): it copies a dict that lost keys whole, where dict() inserts each key
    # again (0.17 s for these two at 412,000 names after a removal, 0.03 s copied)
    names, words = previous.names.copy(), previous.words.copy()
    size_before: dict[str, int] = {}  # first word of a touched group -> its size before
    changed: set[str] = set()
    for key, name in changes.items():
        if previous.names.get(key) == name:
            continue
        changed.add(key)
        old = previous.words.get(key)
        if old:
            first = _first(old)
            size_before.setdefault(first, len(groups[first]))
            left = groups[first] - {key}
            if left:
                groups[first] = left
            else:
                del groups[first]
        if name is None:
            names.pop(key, None)
            words.pop(key, None)
            continue
        names[key] = name
        words[key] = text = _words(name)
        if text:
            first = _first(text)
            size_before.setdefault(first, len(groups.get(first, ())))
            groups[first] = groups.get(first, frozenset()) | {key}
    compared = {first for first in size_before if 2 <= len(groups.get(first, ())) <= GROUP_LIMIT}

    def stands(pair: tuple[str, str, float]) -> bool:
        """An untouched group's pair, or one of two unchanged names in a group still compared."""
        first = _first(previous.words[pair[0]])
        return first not in size_before or (first in compared and pair[0] not in changed and pair[1] not in changed)

    pairs = [pair for pair in previous.pairs if stands(pair)]
    for first in compared:
        group = groups[first]
        if size_before[first] > GROUP_LIMIT:  # it had no pairs: compared whole
            pairs.extend(_group_pairs(((key, words[key]) for key in group), previous.threshold))
        else:
            pairs.extend(_pairs_with(sorted(changed & group), group, words, previous.threshold))
    return SynonymScan(previous.threshold, names, words, tuple(sorted(pairs)))


def _pairs_with(keys: list[str], group: frozenset[str], words: Mapping[str, str],
                threshold: float) -> list[tuple[str, str, float]]:
    """The pairs at or above ``threshold`` of each of ``keys`` with every other name of its ``group``."""
    grams = {key: _trigrams(words[key]) for key in group}
    pairs, done = [], set()
    for a in keys:
        ga = grams[a]
        done.add(a)  # a pair of two of ``keys`` is made once, by the first of them
        for b in group:
            if b in done:
                continue
            gb = grams[b]
            shared = len(ga & gb)
            similarity = shared / (len(ga) + len(gb) - shared)
            if similarity >= threshold:
                pairs.append((min(a, b), max(a, b), round(similarity, 3)))
    return pairs
