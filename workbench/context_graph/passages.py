"""The passage layer of the context graph: which chunks mention which entities.

Passages (chunks) are nodes of the one context graph, next to the entities they mention, so
Personalized PageRank mass lands on passages (HippoRAG 2 lost 11 points of R@5 on MuSiQue
without them). A passage is linked to:

- every entity an extractor found in it (the stored mentions), its document's title included;
- every known name it writes with a capital or a digit, found by word n-gram lookup, so a
  passage that names another document's title is linked to it: the bridge of a two-hop
  question ("Ann Lee was born in Oslo" -> the passage titled "Oslo");
- each passage whose title it names, directly (a *title link*).

Names in more than ``max_entity_passages`` passages ("United States" in a large corpus, a year)
are too common to link anything and stay out of the walk. Near-identical names
("Wiley-Blackwell" / "Wiley Blackwell Publishing") get *synonym* edges by character-trigram
similarity (:mod:`workbench.context_graph.synonyms`); the same pairs are offered as merge
suggestions, so accepting or rejecting one changes what retrieval walks.

Examples
--------
>>> matcher = NameMatcher({"annlee": ["Ann Lee"], "oslo": ["Oslo"]})
>>> matcher.find("Where was Ann Lee born? In Oslo.")
['annlee', 'oslo']
"""

from __future__ import annotations

import re
from bisect import bisect_left
from collections import defaultdict
from collections.abc import Callable, ItemsView, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property

import numpy as np

from ..runtime.array_file import TextColumn

from ..extract.names import STOP_NAMES, joined_words, name_words
from ..settings import setting_default
from .passage_links import EntitiesOf
from .synonyms import SynonymScan, synonym_scan
from .title_aliases import aliased_titles

_ARTICLES = ("the ", "a ", "an ")
#: Texts of at most this many words (a question) are read without the matcher's prefix set.
_SHORT_TEXT_TOKENS = 64
#: Long texts a built matcher reads before it makes its prefix set: a write that reads a few
#: passages again (its own) does not pay for the set (about 1 s at 61k passages), a full scan does.
_PREFIXES_AFTER_TEXTS = 64
#: Past this many changed names, every passage's text is read again (cheaper than the tests).
_MOST_CHANGED_NAMES = 512

#: The rules that link passages (title aliases since 2): a snapshot made under other rules is derived again.
LINK_RULES_VERSION = 2

__all__ = ["LINK_RULES_VERSION", "NameMatcher", "NameScan", "NamesWritten", "NameTable", "PassageLayer", "link_passages", "words_of"]


def words_of(name: str) -> str:
    """A name as its casefolded words joined by one space: what text n-grams are compared on.

    >>> words_of("The  Wiley-Blackwell")
    'the wiley-blackwell'
    """
    return joined_words(name)


class NameTable(Mapping[str, str]):
    """Name words -> entity key over a snapshot's columns: the words sorted in one UTF-8 buffer and
    found by binary search (UTF-8 bytes sort as the strings do), the key of each a position into
    the entity keys. A matcher loaded with it neither parses nor hashes 414k names at load (0.3 s
    of a fresh process's first query at 61k passages); a question's lookups take microseconds.

    ``words`` must be sorted and distinct, as :meth:`NameMatcher.sorted_names` gives them.

    >>> table = NameTable(TextColumn(*TextColumn.arrays(["new york", "oslo"])), ["ny", "oslo"], np.array([0, 1]))
    >>> table["new york"], "new" in table, list(table.items())
    ('ny', False, [('new york', 'ny'), ('oslo', 'oslo')])
    """

    def __init__(self, words: TextColumn, keys: Sequence[str], rows: np.ndarray) -> None:
        if len(rows) != len(words) or (len(rows) and (int(rows.min()) < 0 or int(rows.max()) >= len(keys))):
            raise ValueError("the name table's key positions do not fit its keys")
        self._words, self._keys, self._rows = words, keys, rows

    def _row(self, words: object) -> int | None:
        if not isinstance(words, str):
            return None
        encoded, column = words.encode(), self._words
        at = bisect_left(range(len(column)), encoded, key=column.encoded)
        return at if at < len(column) and column.encoded(at) == encoded else None

    def __getitem__(self, words: str) -> str:
        at = self._row(words)
        if at is None:
            raise KeyError(words)
        return self._keys[int(self._rows[at])]

    def __contains__(self, words: object) -> bool:
        return self._row(words) is not None

    def __iter__(self) -> Iterator[str]:
        return iter(self._words)

    def __len__(self) -> int:
        return len(self._words)

    def items(self) -> ItemsView[str, str]:
        return _TableItems(self)


class _TableItems(ItemsView):
    """A name table's items, read column by column."""

    _mapping: NameTable

    def __iter__(self) -> Iterator[tuple[str, str]]:
        table = self._mapping
        return zip(table._words, [table._keys[r] for r in table._rows.tolist()])


class NameMatcher:
    """Finds the known names written in a text: longest match first, no overlaps.

    Parameters
    ----------
    forms : mapping of entity key to surface forms
        Every way each entity is written; each form's words lead to the key.
    """

    def __init__(self, forms: Mapping[str, Iterable[str]]) -> None:
        self._key_of: Mapping[str, str] = {}
        for key in sorted(forms):
            for form in forms[key]:
                words = words_of(form)
                for article in _ARTICLES:  # "The Beatles" is also written "the Beatles"
                    if words.startswith(article) and len(words) > len(article):
                        self._add(words[len(article):], key)
                self._add(words, key)
        self._prefixes: set[str] | None = None  # made once many long texts are read (find)
        self._long_texts_left = _PREFIXES_AFTER_TEXTS
        self._max_words = max((words.count(" ") + 1 for words in self._key_of), default=0)

    @property
    def key_of(self) -> Mapping[str, str]:
        """Name words -> entity key: every name it knows."""
        return self._key_of

    @property
    def max_words(self) -> int:
        """Words in the longest name."""
        return self._max_words

    def sorted_names(self) -> tuple[list[str], list[str]]:
        """Every name's words, sorted, and the key of each: what a snapshot keeps (a
        :class:`NameTable` is made from them)."""
        pairs = sorted(self._key_of.items())
        return [words for words, _ in pairs], [key for _, key in pairs]

    @classmethod
    def over_table(cls, table: NameTable, max_words: int) -> NameMatcher:
        """The matcher whose names are ``table``'s (no name is split into words again, none hashed).

        >>> built = NameMatcher({"oslo": ["Oslo"], "ny": ["New York"]})
        >>> words, keys = built.sorted_names()
        >>> table = NameTable(TextColumn(*TextColumn.arrays(words)), keys, np.arange(len(keys)))
        >>> NameMatcher.over_table(table, built.max_words).find("From Oslo to New York.")
        ['oslo', 'ny']
        """
        if not isinstance(max_words, int):
            raise ValueError("the name table's longest name is not a number of words")
        self = cls.__new__(cls)
        self._key_of = table
        self._max_words = max_words
        # The prefix set is made when a long text is first read (a question needs none): a table's
        # lookups are binary searches, too slow for many texts without the set.
        self._prefixes = None
        self._long_texts_left = 0
        return self

    @classmethod
    def over_names(cls, key_of: dict[str, str], max_words: int | None = None) -> NameMatcher:
        """The matcher whose table is ``key_of`` (name words -> key), as made already (a
        :class:`~workbench.context_graph.passage_state.PassageState` keeps it from write to write,
        and the words of its longest name: ``max_words``, counted here when not given).

        >>> NameMatcher.over_names({"oslo": "oslo", "new york": "ny"}).find("From Oslo to New York.")
        ['oslo', 'ny']
        """
        self = cls.__new__(cls)
        self._key_of = key_of
        self._prefixes = None
        self._long_texts_left = _PREFIXES_AFTER_TEXTS
        self._max_words = max((words.count(" ") + 1 for words in key_of), default=0) if max_words is None \
            else max_words
        return self

    @staticmethod
    def _prefixes_of(names: Iterable[str]) -> set[str]:
        return {" ".join(parts[:n]) for parts in (w.split(" ") for w in names) for n in range(1, len(parts) + 1)}

    def _add(self, words: str, key: str) -> None:
        if words and words not in STOP_NAMES:
            self._key_of.setdefault(words, key)  # type: ignore[attr-defined]  # the dict a build makes

    def add_alias(self, words: str, key: str) -> str | None:
        """Know ``words`` (as :func:`words_of` gives them) as a name of ``key`` unless they already
        name an entity; returns the key they name after the call (None for a stop name)."""
        self._add(words, key)
        return self._key_of.get(words)

    def __len__(self) -> int:
        return len(self._key_of)

    def find(self, text: str, capitalised_only: bool = True) -> list[str]:
        """Keys of the names ``text`` writes, in order of first appearance.

        ``capitalised_only`` accepts a match only where the text starts it with a capital or a
        digit, which keeps a common-word title ("Music") from matching ordinary prose.
        """
        return list(dict.fromkeys(key for key, _, _ in self.find_spans(text, capitalised_only)))

    def find_spans(self, text: str, capitalised_only: bool = True) -> list[tuple[str, int, int]]:
        """``(key, start, end)`` of each name ``text`` writes, in text order, as :meth:`find` reads them.

        >>> NameMatcher({"oslo": ["Oslo"]}).find_spans("From Oslo.")
        [('oslo', 5, 9)]
        """
        tokens = name_words(text)
        prefixes = self._prefixes
        if prefixes is None and len(tokens) > _SHORT_TEXT_TOKENS:
            if self._long_texts_left <= 0:
                prefixes = self._prefixes = self._prefixes_of(self._key_of)
            self._long_texts_left -= 1
        found: list[tuple[str, int, int]] = []
        i = 0
        while i < len(tokens):
            if capitalised_only:
                first = text[tokens[i][1]]
                if not (first.isupper() or first.isdigit()):
                    i += 1  # no match may start here: most words of prose, skipped unread
                    continue
            best, grown = 0, ""
            # Without the prefix set every length up to the longest name is tried: the same
            # matches (every prefix of a name is in the set), at a few lookups per word.
            for n in range(1, min(len(tokens) - i, self._max_words) + 1):
                grown = f"{grown} {tokens[i + n - 1][0]}" if n > 1 else tokens[i][0]
                if prefixes is not None and grown not in prefixes:
                    break
                if grown in self._key_of:
                    best = n
            if best:
                found.append((self._key_of[" ".join(t[0] for t in tokens[i:i + best])], tokens[i][1],
                              tokens[i + best - 1][2]))
                i += best
            else:
                i += 1
        return found


class NamesWritten:
    """Which texts may write one of some names (as :func:`words_of` gives them): a name matches a
    text only where the text holds each of its words as a whole word, so a text that does not is
    matched as before by a table that changed only those names. A superset of the texts that
    write them: a substring test first, then each word with no letter or digit on either side.

    >>> test = NamesWritten({"ana", "billing service"})
    >>> [test.may_write(t) for t in ("Ana's notes", "In Canada", "The Billing  service")]
    [True, False, True]
    """

    def __init__(self, names: Iterable[str]) -> None:
        self.needs = sorted({tuple(sorted(set(words.split(" ")), key=len, reverse=True)) for words in names})
        #: Past this many names a text is read again anyway: testing every one costs more.
        self.too_many = len(self.needs) > _MOST_CHANGED_NAMES
        self._whole = {word: re.compile(rf"(?<![^\W_]){re.escape(word)}(?![^\W_])")
                       for words in self.needs for word in words} if not self.too_many else {}

    def __bool__(self) -> bool:
        return bool(self.needs)

    def may_write(self, text: str) -> bool:
        return self.holds(text.casefold())

    def holds(self, folded: str) -> bool:
        """:meth:`may_write` of a text already casefolded."""
        whole = self._whole
        return any(all(word in folded for word in words) and all(whole[word].search(folded) for word in words)
                   for words in self.needs)


@dataclass(frozen=True)
class NameScan:
    """The names :meth:`NameMatcher.find` found in each passage, and the name table it found
    them with: a later derivation reuses a passage's names when its text holds none of the
    names that changed since (:func:`link_passages`)."""

    table: dict[str, str]
    """The matcher's name words -> entity key (:meth:`NameMatcher.table`)."""
    found: dict[str, tuple[str, ...]]
    """Chunk id -> keys of the names found in its text, in order of first appearance."""
    synonyms: SynonymScan | None = None
    """The names compared for synonym edges and the pairs found (None: not compared)."""

    def reusable(self, matcher: NameMatcher) -> Callable[[str, str], tuple[str, ...] | None]:
        """``reuse(chunk id, text)``: the names found before, when they stand under ``matcher``'s
        table; else None (the text must be read again).

        A name matches a text only where the text has each of the name's words, so a text that
        lacks a word of every name added, removed or given another key since is matched exactly
        as before (:class:`NamesWritten`).
        """
        new = matcher.key_of
        # The pairs in one table only, compared in C (a third of the time at 414k names).
        changed = NamesWritten({words for words, _ in self.table.items() ^ new.items()})
        found = self.found if not changed.too_many else {}

        def reuse(chunk_id: str, text: str) -> tuple[str, ...] | None:
            before = found.get(chunk_id)
            if before is None or not changed:
                return before
            return None if changed.may_write(text) else before

        return reuse


@dataclass(frozen=True)
class PassageLayer:
    """Passages and the entities they mention, as derived from the record."""

    entities_of: Mapping[str, frozenset[str]]
    """Chunk id -> keys of the entities it mentions or is titled by (a dict when derived, an
    :class:`~workbench.context_graph.passage_links.EntitiesOf` when loaded)."""
    chunks_of: Mapping[str, tuple[str, ...]]
    """Entity key -> the chunks that mention it, sorted."""
    title_of: dict[str, str]
    """Chunk id -> key of its document's title."""
    common: frozenset[str]
    """Keys named in more than ``max_entity_passages`` passages: left out of the walk."""
    title_links: tuple[tuple[str, str], ...]
    """``(chunk, chunk whose title it names)``, sorted."""
    synonyms: tuple[tuple[str, str, float], ...]
    """``(key, key, trigram similarity)`` of near-identical names, sorted."""
    matcher: NameMatcher = field(repr=False, compare=False)
    """Finds known names in a query."""
    title_link_weight: float = setting_default("graph.title_link_weight")
    relation_weight: float = setting_default("graph.relation_weight")
    """Weight in the walk of a cited relation edge per corroborating chunk, against 1 for a mention."""
    scan: NameScan | None = field(default=None, repr=False, compare=False)
    """The names found in each passage's text, for the next derivation (None when not kept)."""

    def specificity(self, key: str) -> float:
        """1 / the passages that mention ``key`` (0 for a name no passage mentions)."""
        n = len(self.chunks_of.get(key, ()))
        return 1.0 / n if n else 0.0

    def stats(self) -> dict[str, int]:
        """Counts of the layer (every graphrag answer reports them)."""
        return dict(self._stats)

    @cached_property
    def _stats(self) -> dict[str, int]:
        # Counted once: summing the links of 70k passages took 17 ms of every query at 61k passages.
        links = self.entities_of.link_count if isinstance(self.entities_of, EntitiesOf) \
            else sum(len(v) for v in self.entities_of.values())
        return {"passages": len(self.entities_of), "links": links,
                "title_links": len(self.title_links), "synonym_edges": len(self.synonyms),
                "common_names": len(self.common)}


def _titles_by_alias(matcher: NameMatcher, forms: Mapping[str, Iterable[str]],
                     title_of: Mapping[str, str]) -> dict[str, tuple[str, ...]]:
    """Entity key -> the title keys a passage naming it links to: its own, and those of the titles
    it is a short form of (:mod:`~workbench.context_graph.title_aliases`). Short forms no entity
    has yet become names of their title in ``matcher``; only keys with aliased titles are listed."""
    title_keys = set(title_of.values())
    titles = {key: max(forms.get(key) or (key,), key=len) for key in sorted(title_keys)}  # the title: the longest form
    known = {words_of(form) for key in title_keys for form in forms.get(key, ())}
    linked: dict[str, tuple[str, ...]] = {}
    for words, keys in aliased_titles(titles, words_of, known).items():
        key = matcher.add_alias(words, keys[0])
        if key is not None:
            linked[key] = tuple(dict.fromkeys(((key,) if key in title_keys else ()) + tuple(keys)))
    return linked


def link_passages(
    chunks: Iterable[tuple[str, str]],
    mentioned: Mapping[str, Iterable[str]],
    forms: Mapping[str, Iterable[str]],
    title_of: Mapping[str, str],
    max_entity_passages: int = setting_default("graph.max_entity_passages"),
    title_link_weight: float = setting_default("graph.title_link_weight"),
    synonym_threshold: float = setting_default("graph.synonym_threshold"),
    names: Mapping[str, str] | None = None,
    relation_weight: float = setting_default("graph.relation_weight"),
    previous: NameScan | None = None,
) -> PassageLayer:
    """Link every passage to the entities it mentions, names or is titled by.

    Parameters
    ----------
    chunks : iterable of ``(chunk id, text)``
    mentioned : chunk id -> keys of the entities extractors found in it
    forms : entity key -> its surface forms (for the name lookup)
    title_of : chunk id -> key of its document's title (an entity key)
    max_entity_passages : names in more passages than this stay out of the walk
    title_link_weight : weight of a title link against 1 for a mention (0: none)
    synonym_threshold : trigram similarity at or above which two names get a synonym edge
        (1.0 or more: none)
    names : entity key -> display name, compared for synonyms (defaults to the first form)
    previous : the scan of an earlier derivation; a passage whose text names nothing that
        changed keeps the names found then instead of being read again, and only the name
        groups that changed are compared for synonyms again (the same result: tested against
        a full scan)
    """
    matcher = NameMatcher(forms)
    titles_of_key = _titles_by_alias(matcher, forms, title_of) if title_link_weight > 0 else {}
    reuse = previous.reusable(matcher) if previous is not None else None
    entities_of: dict[str, frozenset[str]] = {}
    chunks_of: dict[str, list[str]] = defaultdict(list)
    found_of: dict[str, tuple[str, ...]] = {}
    for chunk_id, text in sorted(chunks):
        found = reuse(chunk_id, text) if reuse is not None else None
        if found is None:
            found = tuple(matcher.find(text))
        found_of[chunk_id] = found
        keys: set[str] = set(mentioned.get(chunk_id, ())) | set(found)
        if chunk_id in title_of:
            keys.add(title_of[chunk_id])
        entities_of[chunk_id] = frozenset(keys)
        for key in keys:
            chunks_of[key].append(chunk_id)
    common = frozenset(key for key, ids in chunks_of.items() if len(ids) > max_entity_passages)
    links: list[tuple[str, str]] = []
    if title_link_weight > 0:
        titled: dict[str, list[str]] = defaultdict(list)
        for chunk_id, key in sorted(title_of.items()):
            titled[key].append(chunk_id)
        for chunk_id, linked in entities_of.items():
            own = title_of.get(chunk_id)
            for key in sorted(linked - common):
                if key != own:
                    links.extend((chunk_id, target) for title in titles_of_key.get(key, (key,)) if title != own
                                 for target in titled.get(title, ()) if target != chunk_id)
    display = dict(names or {})
    for key, key_forms in forms.items():
        display.setdefault(key, next(iter(key_forms), key))
    walked = sorted(key for key in chunks_of if key not in common)
    compared = synonym_scan({key: display.get(key, key) for key in walked}, synonym_threshold,
                            previous.synonyms if previous is not None else None) if synonym_threshold < 1.0 else None
    return PassageLayer(
        entities_of=entities_of,
        chunks_of={key: tuple(ids) for key, ids in chunks_of.items()},
        title_of=dict(title_of),
        common=common,
        title_links=tuple(sorted(set(links))),
        synonyms=compared.pairs if compared is not None else (),
        matcher=matcher,
        title_link_weight=title_link_weight,
        relation_weight=relation_weight,
        scan=NameScan(dict(matcher.key_of), found_of, compared),
    )
