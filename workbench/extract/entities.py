"""Typed entity mentions from term lists and regexes, and co-mention edges.

Terms of every pattern are compiled into one case-insensitive regex of whole words; regex
patterns run with a time budget per chunk. Where matches overlap, the longest wins. With
co-mention on, each chunk gives one ``co_mentioned`` triple per unordered pair of distinct
entities it names (by :func:`~workbench.text.name_keys.name_key`) at most ``comention_window``
sentences apart, subject before object by key; in a conversation log, where a chunk is a
message, every pair of the message's entities, however far apart (seed 002: the entities of one
message are linked). Of those, the ``max_comention_pairs`` nearest are kept per chunk, and the
rest are counted in a problem line of the document (never stored).

Examples
--------
>>> from workbench.model import Chunk, Document
>>> from workbench.settings import EntityPattern
>>> ex = EntityExtractor([EntityPattern(type="technology", terms=["Redis", "Kafka"]),
...                       EntityPattern(type="person", regex=r"@[A-Za-z]\\w*")])
>>> doc = Document("d", "/d", "d", "text", "@ana moved redis behind Kafka.", "h")
>>> found = ex.extract(doc, [Chunk("c1", "d", 0, doc.text, 0, len(doc.text))])
>>> [(m.surface, m.entity_type, m.start) for m in found.mentions]
[('@ana', 'person', 0), ('redis', 'technology', 11), ('Kafka', 'technology', 24)]
>>> [(t.subject, t.object) for t in found.triples]
[('@ana', 'Kafka'), ('@ana', 'redis'), ('Kafka', 'redis')]
>>> far = "Redis is down. The team met. Kafka is fine."  # three sentences: Redis and Kafka 2 apart
>>> ex.extract(Document("e", "/e", "e", "text", far, "h"), [Chunk("c2", "e", 0, far, 0, len(far))]).triples
[]
>>> window_pairs({"kafka": [0], "redis": [0, 2], "vault": [1]}, window=1, cap=2)
([('kafka', 'redis'), ('kafka', 'vault')], 1)
>>> ex.type_of("the Redis"), ex.type_of("token cache")
('technology', 'concept')
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from itertools import combinations

from ..text.name_keys import DEFAULT_ARTICLES, display_form, name_key
from .base import Extraction, GuardedPattern
from .guard import Guard
from ..model import COMENTION_ORIGIN, COMENTION_RELATION, Chunk, Document, Mention, Triple
from ..text.sentences import sentence_starts
from ..settings import EntityPattern, setting_default

__all__ = ["EntityExtractor", "COMMON_WORD_TERMS", "window_pairs"]

#: Technology names that are also everyday English words: written all in lower case they
#: are the word ("we go live", "a spark"), so they match only when capitalised.
COMMON_WORD_TERMS = frozenset(
    {"go", "rust", "spark", "vault", "react", "consul", "sentry", "celery", "envoy", "chroma", "snowflake", "airflow"}
)



class EntityExtractor:
    """Finds typed entity mentions and, optionally, co-mention triples.

    Parameters
    ----------
    patterns : list of EntityPattern
        Term lists and regexes, each with the entity type it finds. Earlier patterns win
        ties between equally long overlapping matches.
    timeout_seconds : float
        Budget of one regex pattern on one chunk; a slower run is stopped and reported.
    comention : bool
        Whether to add ``co_mentioned`` triples between entities of the same chunk.
    comention_window : int
        Most sentences between two entities' mentions for a co-mention (0: the same sentence).
    max_comention_pairs : int
        Most co-mention triples of one chunk, the nearest pairs first; the rest are counted in
        the extraction's problems.
    articles : iterable of str
        Leading words ignored when comparing names.

    Raises
    ------
    ValueError
        If a pattern's regex does not compile; the message names the pattern.
    """

    name = "entities"

    def __init__(
        self,
        patterns: Sequence[EntityPattern],
        timeout_seconds: float = setting_default("extraction.pattern_timeout_seconds"),
        comention: bool = setting_default("extraction.comention"),
        articles: Iterable[str] = DEFAULT_ARTICLES,
        comention_window: int = setting_default("extraction.comention_window"),
        max_comention_pairs: int = setting_default("extraction.max_comention_pairs"),
    ) -> None:
        self.comention = comention
        self.comention_window = comention_window
        self.max_comention_pairs = max_comention_pairs
        self.articles = tuple(articles)
        self._term_types: dict[str, str] = {}
        for pattern in patterns:
            for term in pattern.terms:
                if term.strip():
                    self._term_types.setdefault(term.strip().lower(), pattern.type)
        self._term_regex = None
        if self._term_types:
            # Longest first so "Node.js" wins over "Node"; lookarounds rather than \b so
            # terms ending in a mark ("C++", "Node.js") still match whole.
            alternation = "|".join(re.escape(t) for t in sorted(self._term_types, key=lambda t: (-len(t), t)))
            self._term_regex = re.compile(rf"(?<![\w.])(?:{alternation})(?![\w])", re.IGNORECASE)
        self._regexes: list[tuple[GuardedPattern, str]] = []
        self._guards: list[Guard | None] = []
        for index, pattern in enumerate(patterns):
            if pattern.regex:
                label = f"entity_patterns[{index}] ({pattern.type})"
                self._regexes.append((GuardedPattern(pattern.regex, label, timeout_seconds), pattern.type))
                self._guards.append(Guard.of(pattern.any_of))
        self._type_cache: dict[str, str] = {}

    def type_of(self, name: str) -> str:
        """The entity type of a name: a term's type, else a regex that matches it whole, else ``concept``."""
        cached = self._type_cache.get(name)
        if cached is not None:
            return cached
        form = display_form(name, self.articles)
        found = self._term_types.get(form.lower())
        if found is None:
            found = next((t for g, t in self._regexes if g.fullmatch(form) is not None), "concept")
        if len(self._type_cache) > 100_000:  # bound memory over a long ingest
            self._type_cache.clear()
        self._type_cache[name] = found
        return found

    def mentions_in(self, text: str, chunk_id: str, problems: list[str]) -> list[Mention]:
        """Typed mentions in ``text``, longest match kept where matches overlap, by offset."""
        candidates: list[tuple[int, int, int, str]] = []  # (start, end, priority, type)
        if self._term_regex is not None:
            for match in self._term_regex.finditer(text):
                surface = match.group()
                lowered = surface.lower()
                if lowered in COMMON_WORD_TERMS and surface == lowered:
                    continue
                candidates.append((match.start(), match.end(), 0, self._term_types[lowered]))
        for priority, ((guarded, entity_type), guard) in enumerate(zip(self._regexes, self._guards), start=1):
            if guard is not None and not guard.admits(text):
                continue  # the pattern cannot match here: skip its (slower) scan
            for match in guarded.finditer(text, chunk_id, problems):
                start, end = match.span()
                # Trim surrounding spaces/hyphens a loose regex may have taken.
                while start < end and text[start] in " -\t\n":
                    start += 1
                while end > start and text[end - 1] in " -\t\n":
                    end -= 1
                if end > start:
                    candidates.append((start, end, priority, entity_type))
        return [Mention(text[s:e], chunk_id, t, s) for s, e, t in _longest_non_overlapping(candidates)]

    def comention_triples(self, mentions: Sequence[Mention], texts: Mapping[str, str],
                          whole_chunks: bool = False) -> tuple[list[Triple], int, int]:
        """``co_mentioned`` triples of each chunk's entity pairs at most ``comention_window``
        sentences apart (with ``whole_chunks``, a conversation's messages: any two of the chunk's
        entities), the ``max_comention_pairs`` nearest per chunk (see :func:`window_pairs`).

        ``texts`` gives each chunk's text (its sentences); a mention is placed by its offset.
        Returns ``(triples, pairs left out over the cap, chunks that had pairs left out)``.
        """
        by_chunk: dict[str, dict[str, tuple[Mention, list[int]]]] = {}
        starts: dict[str, list[int]] = {}
        for mention in mentions:
            key = name_key(mention.surface, self.articles)
            if not key:
                continue
            chunk_id = mention.chunk_id
            if chunk_id not in starts:
                starts[chunk_id] = sentence_starts(texts.get(chunk_id, ""))
            sentence = max(0, bisect_right(starts[chunk_id], mention.start) - 1)
            by_chunk.setdefault(chunk_id, {}).setdefault(key, (mention, []))[1].append(sentence)
        triples, dropped, capped = [], 0, 0
        for chunk_id, entities in by_chunk.items():
            # A message's sentences are all within its own count of each other.
            window = len(starts[chunk_id]) if whole_chunks else self.comention_window
            pairs, over = window_pairs({k: s for k, (_, s) in entities.items()}, window, self.max_comention_pairs)
            dropped += over
            capped += over > 0
            for a, b in pairs:
                first, second = entities[a][0], entities[b][0]
                triples.append(Triple(subject=first.surface, relation=COMENTION_RELATION, object=second.surface,
                                      chunk_id=chunk_id, confidence=1.0, origin=COMENTION_ORIGIN,
                                      subject_type=first.entity_type, object_type=second.entity_type))
        return triples, dropped, capped

    def extract(self, document: Document, chunks: Sequence[Chunk]) -> Extraction:
        """Typed mentions in every chunk and, if enabled, their co-mention triples."""
        view = self.for_document(document, chunks)
        result = view.extract(document, chunks)
        result.problems.extend(view.finish())
        return result

    def for_document(self, document: Document, chunks: Sequence[Chunk]) -> _EntitiesOfDocument:
        """The extractor for windows of one document's chunks: the co-mention cap is reported
        once, counted over every window (by ``finish``)."""
        return _EntitiesOfDocument(self)


class _EntitiesOfDocument:
    """:class:`EntityExtractor` for windows of one document's chunks, counting the pairs capped."""

    name = "entities"

    def __init__(self, base: EntityExtractor):
        self.base, self.dropped, self.capped = base, 0, 0

    def extract(self, document: Document, chunks: Sequence[Chunk]) -> Extraction:
        base, result = self.base, Extraction()
        for chunk in chunks:
            result.mentions.extend(base.mentions_in(chunk.text, chunk.id, result.problems))
        if base.comention:
            triples, dropped, capped = base.comention_triples(result.mentions, {c.id: c.text for c in chunks},
                                                              whole_chunks=document.kind == "conversation")
            result.triples.extend(triples)
            self.dropped += dropped
            self.capped += capped
        return result

    def finish(self) -> list[str]:
        """The problem line of the co-mention cap over every window extracted (none if not hit)."""
        if not self.dropped:
            return []
        return [f"co-mention capped in {self.capped} chunk(s): {self.dropped} farther pair(s) counted, not stored "
                f"(extraction.max_comention_pairs is {self.base.max_comention_pairs} per chunk)"]


def window_pairs(sentences_of: Mapping[str, Sequence[int]], window: int, cap: int) -> tuple[list[tuple[str, str]], int]:
    """The ``cap`` nearest pairs of keys whose sentences are at most ``window`` apart, and how
    many more pairs there are.

    ``sentences_of`` gives each key (an entity of one chunk) the indices of the sentences that
    mention it. Nearest first: by the fewest sentences between the two, then by the first
    sentence where they are that close, then by key. Each pair is ``(smaller key, larger key)``.
    Pairs past the cap are counted, not listed: keys named in one sentence by sentence, keys
    named in several by their sets of sentences. So the time grows with the chunk's sentences
    and mentions times ``cap`` (and with the square of the distinct sets of sentences of keys
    named more than once), not with the square of its entities.

    Examples
    --------
    >>> window_pairs({"a": [0], "b": [0], "c": [1], "d": [3]}, window=1, cap=10)
    ([('a', 'b'), ('a', 'c'), ('b', 'c')], 0)
    >>> window_pairs({"a": [0], "b": [0], "c": [1], "d": [3]}, window=1, cap=1)
    ([('a', 'b')], 2)
    """
    by_sentence: dict[int, list[str]] = {}
    for key in sorted(sentences_of):
        for sentence in sorted(set(sentences_of[key])):
            by_sentence.setdefault(sentence, []).append(key)
    if not by_sentence:
        return [], 0
    order = sorted(by_sentence)
    kept: list[tuple[str, str]] = []
    seen: set[tuple[str, str]] = set()
    for gap in range(min(window, order[-1] - order[0]) + 1):
        for sentence in order:
            here = by_sentence[sentence]
            there = here if gap == 0 else by_sentence.get(sentence + gap)
            if not there:
                continue
            for index, a in enumerate(here):
                for b in there[index + 1:] if gap == 0 else there:
                    pair = (a, b) if a < b else (b, a)
                    if a == b or pair in seen:
                        continue
                    if len(kept) == cap:  # one more than the cap: count the rest, list no more
                        return kept, _pairs_within(sentences_of, window) - cap
                    seen.add(pair)
                    kept.append(pair)
    return kept, 0


def _pairs_within(sentences_of: Mapping[str, Sequence[int]], window: int) -> int:
    """How many pairs of keys have sentences at most ``window`` apart, counted without listing
    them: keys of one sentence only are counted by sentence (prefix sums), keys of several by
    their sentence masks."""
    singles: Counter[int] = Counter()
    several: Counter[frozenset[int]] = Counter()
    for sentences in sentences_of.values():
        distinct = frozenset(sentences)
        if len(distinct) == 1:
            singles[next(iter(distinct))] += 1
        elif distinct:
            several[distinct] += 1
    size = max([*singles, *(max(g) for g in several), 0]) + 1
    prefix = [0] * (size + 1)  # prefix[s]: keys of one sentence before sentence s
    for s in range(size):
        prefix[s + 1] = prefix[s] + singles[s]

    def singles_in(lo: int, hi: int) -> int:  # keys of one sentence in sentences lo..hi
        lo, hi = max(lo, 0), min(hi, size - 1)
        return prefix[hi + 1] - prefix[lo] if lo <= hi else 0

    total = 0
    for s, count in singles.items():  # pairs of two one-sentence keys
        total += count * (count - 1) // 2 + count * singles_in(s + 1, s + window)
    masks = {}
    for group, count in several.items():
        total += count * (count - 1) // 2  # keys of the same sentences
        reach, covered = 0, -1  # the sentences within the window, as merged ranges
        for s in sorted(group):
            lo, hi = max(s - window, covered + 1, 0), s + window
            if hi >= lo:
                total += count * singles_in(lo, hi)
                reach |= ((1 << (hi - lo + 1)) - 1) << lo
                covered = hi
        masks[group] = (sum(1 << s for s in group), reach)
    for (g, (_, reach)), (h, (bits, _)) in combinations(masks.items(), 2):
        if reach & bits:
            total += several[g] * several[h]
    return total


def _window_pairs_reference(sentences_of: Mapping[str, Sequence[int]], window: int,
                            cap: int) -> tuple[list[tuple[str, str]], int]:
    """:func:`window_pairs` by comparing every two keys: the simple version it is tested against."""
    ranked = []
    for a, b in combinations(sorted(sentences_of), 2):
        ranks = [(abs(sa - sb), min(sa, sb), *((a, b) if sa <= sb else (b, a)))
                 for sa in set(sentences_of[a]) for sb in set(sentences_of[b]) if abs(sa - sb) <= window]
        if ranks:
            ranked.append(min(ranks))
    ranked.sort()
    pairs = [(min(r[2], r[3]), max(r[2], r[3])) for r in ranked]
    return pairs[:cap], max(0, len(pairs) - cap)


def _longest_non_overlapping(candidates: list[tuple[int, int, int, str]]) -> list[tuple[int, int, str]]:
    """Greedy: longest spans first (then leftmost, then pattern order); sorted by start."""
    kept: list[tuple[int, int, str]] = []
    for start, end, _, entity_type in sorted(candidates, key=lambda c: (c[0] - c[1], c[0], c[2])):
        if all(end <= s or start >= e for s, e, _ in kept):
            kept.append((start, end, entity_type))
    kept.sort()
    return kept
