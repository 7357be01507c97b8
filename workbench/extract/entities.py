"""Typed entity mentions from term lists and regexes, and co-mention edges.

Terms of every pattern are compiled into one case-insensitive regex of whole words; regex
patterns run with a time budget per chunk. Where matches overlap, the longest wins. With
co-mention on, each chunk gives one ``co_mentioned`` triple per unordered pair of distinct
entities it names (by :func:`~workbench.canon.name_key`), subject before object by key.

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
>>> ex.type_of("the Redis"), ex.type_of("token cache")
('technology', 'concept')
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from workbench.canon import DEFAULT_ARTICLES, display_form, name_key
from workbench.extract.base import Extraction, GuardedPattern
from workbench.model import Chunk, Document, Mention, Triple
from workbench.settings import EntityPattern

__all__ = ["EntityExtractor", "COMMON_WORD_TERMS", "MAX_COMENTION_ENTITIES"]

#: Technology names that are also everyday English words: written all in lower case they
#: are the word ("we go live", "a spark"), so they match only when capitalised.
COMMON_WORD_TERMS = frozenset(
    {"go", "rust", "spark", "vault", "react", "consul", "sentry", "celery", "envoy", "chroma", "snowflake", "airflow"}
)

#: Co-mention pairs are formed among the first this many distinct entities of a chunk, so a
#: huge chunk cannot explode into hundreds of thousands of pairs.
MAX_COMENTION_ENTITIES = 30


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
        timeout_seconds: float = 1.0,
        comention: bool = True,
        articles: Iterable[str] = DEFAULT_ARTICLES,
    ) -> None:
        self.comention = comention
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
        self._guards: list[re.Pattern | None] = []
        for index, pattern in enumerate(patterns):
            if pattern.regex:
                label = f"entity_patterns[{index}] ({pattern.type})"
                self._regexes.append((GuardedPattern(pattern.regex, label, timeout_seconds), pattern.type))
                words = [w for w in pattern.any_of if w]
                self._guards.append(re.compile("|".join(map(re.escape, words)), re.IGNORECASE) if words else None)
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
            if guard is not None and guard.search(text) is None:
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

    def comention_triples(self, mentions: Sequence[Mention]) -> list[Triple]:
        """One ``co_mentioned`` triple per unordered pair of distinct entities, per chunk."""
        by_chunk: dict[str, dict[str, Mention]] = {}
        for mention in mentions:
            key = name_key(mention.surface, self.articles)
            if key:
                by_chunk.setdefault(mention.chunk_id, {}).setdefault(key, mention)
        triples = []
        for chunk_id, entities in by_chunk.items():
            ranked = sorted(list(entities.items())[:MAX_COMENTION_ENTITIES])
            for i, (_, first) in enumerate(ranked):
                for _, second in ranked[i + 1:]:
                    triples.append(
                        Triple(
                            subject=first.surface,
                            relation="co_mentioned",
                            object=second.surface,
                            chunk_id=chunk_id,
                            confidence=1.0,
                            origin="comention",
                            subject_type=first.entity_type,
                            object_type=second.entity_type,
                        )
                    )
        return triples

    def extract(self, document: Document, chunks: Sequence[Chunk]) -> Extraction:
        """Typed mentions in every chunk and, if enabled, their co-mention triples."""
        result = Extraction()
        for chunk in chunks:
            result.mentions.extend(self.mentions_in(chunk.text, chunk.id, result.problems))
        if self.comention:
            result.triples.extend(self.comention_triples(result.mentions))
        return result


def _longest_non_overlapping(candidates: list[tuple[int, int, int, str]]) -> list[tuple[int, int, str]]:
    """Greedy: longest spans first (then leftmost, then pattern order); sorted by start."""
    kept: list[tuple[int, int, str]] = []
    for start, end, _, entity_type in sorted(candidates, key=lambda c: (c[0] - c[1], c[0], c[2])):
        if all(end <= s or start >= e for s, e, _ in kept):
            kept.append((start, end, entity_type))
    kept.sort()
    return kept
