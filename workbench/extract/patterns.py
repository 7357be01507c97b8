"""Relation triples from verb phrases held as data: "X depends on Y, Z and W".

All phrases of all relations are compiled into one regex (whole words, case-insensitive),
run once over each chunk. For each phrase found, the subject is the text before it back to
the clause boundary and the objects are the list after it up to the clause end; one triple
per subject and object. Raw user regexes with ``subject`` and ``object`` groups run with a
time budget per chunk, so a catastrophic pattern is stopped and reported, never hangs.

Examples
--------
>>> from workbench.model import Chunk, Document
>>> from workbench.settings import RelationPattern
>>> ex = RelationPatternExtractor([RelationPattern(relation="depends_on", phrases=["depends on"]),
...                                RelationPattern(relation="owned_by", phrases=["owns"], reverse=True)])
>>> text = "In production, the auth service depends on Redis, Kafka and the token cache. The Platform team owns Redis."
>>> doc = Document("d", "/d", "d", "text", text, "h")
>>> [(t.subject, t.relation, t.object) for t in ex.extract(doc, [Chunk("c1", "d", 0, text, 0, len(text))]).triples]
[('auth service', 'depends_on', 'Redis'), ('auth service', 'depends_on', 'Kafka'), ('auth service', 'depends_on', 'token cache'), ('Redis', 'owned_by', 'Platform team')]
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from typing import Protocol

from ..text.name_keys import DEFAULT_ARTICLES
from .base import Extraction, GuardedPattern
from .guard import Guard
from ..model import Chunk, Document, Triple
from ..settings import RelationPattern, setting_default

__all__ = ["RelationPatternExtractor", "DEFAULT_CHINESE_PHRASES", "MAX_NAME_WORDS", "MAX_CJK_NAME_CHARS"]

#: Chinese relation phrases found besides the settings' phrases: (phrase, relation, reverse).
DEFAULT_CHINESE_PHRASES: tuple[tuple[str, str, bool], ...] = (
    ("依赖于", "depends_on", False),
    ("依赖", "depends_on", False),
    ("使用", "uses", False),
)

#: Longest subject or object kept, in words (subjects keep their last words, objects their first).
MAX_NAME_WORDS = 6
#: Longest Chinese subject or object kept, in characters.
MAX_CJK_NAME_CHARS = 20

# Characters looked at on each side of a phrase: subjects and objects are a few words long,
# so clause boundaries further away do not matter, and long chunks stay linear.
_WINDOW = 240

_CJK_RE = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")

_LEFT_WORDS = (
    "because", "when", "whenever", "if", "so", "and then", "then", "whom", "whose", "where", "while",
    "since", "although", "though", "but", "whereas", "unless", "until", "once", "like", "such as", "including",
)
_RIGHT_WORDS = (
    "because", "when", "whenever", "which", "who", "whom", "whose", "where", "while", "for", "since",
    "so that", "so", "via", "through", "in order", "if", "unless", "until", "after", "before", "during",
    "with", "within", "without", "by", "from", "to", "in", "into", "on", "onto", "at", "over", "under", "across",
    "against", "between", "behind", "that", "than", "but", "as", "then", "instead",
    "except", "although", "though", "whereas", "whether", "such as", "like",
)
# Where a subject starts: a sentence or clause boundary, or a subordinating word.
_CJK_BOUNDARY_RE = re.compile(r"[。，；！？、,;：:\n（(]")
# One lower-case word in -ed or -en, as a passive clause opens after a list ("..., fixed by Ana").
_PARTICIPLE_RE = re.compile(r"[a-z]+(?:ed|en)")
_LIST_SPLIT_RE = re.compile(r"\s*(?:,\s*(?:and|or)\s+|,|&|\b(?:and|or|as\s+well\s+as|plus)\b)\s*", re.IGNORECASE)
_CJK_LIST_SPLIT_RE = re.compile(r"[、和与及,，]")
_WORD_RE = re.compile(r"\S+")

_LEADING_FILLERS = {
    "and", "also", "now", "currently", "still", "then", "but", "or", "so", "both", "either", "all",
    "including", "its", "their", "our", "his", "her", "my", "your", "like",
}
_TRAILING_FILLERS = {
    "also", "still", "now", "currently", "only", "directly", "heavily", "always", "usually", "often",
    "typically", "actually", "mainly", "primarily", "largely", "already", "further", "really", "then",
    "will", "would", "should", "must", "can", "could", "may", "might", "does", "do", "did", "to",
    "shall", "generally", "mostly", "indirectly", "just", "partly", "fully",
}
_NEGATIONS = {"not", "never", "no", "cannot", "longer", "neither", "nor"}
_STOPWORDS = {
    "i", "you", "he", "she", "it", "we", "they", "me", "him", "her", "us", "them", "this", "that",
    "these", "those", "which", "who", "what", "its", "their", "our", "my", "your", "his", "there",
    "here", "one", "ones", "something", "anything", "everything", "nothing", "someone", "everyone",
    "some", "any", "each", "every", "other", "others", "more", "less", "much", "many", "few",
    "also", "now", "still", "then", "and", "or", "but", "so", "not", "to", "of", "in", "on", "at",
    "it's", "is", "are", "was", "were", "be", "been", "being", "have", "has", "had", "both", "all",
    "own", "same", "such", "only", "well",
}
_TRIM = " \t\n\r\"'`.,;:!?()[]{}<>«»“”‘’…-–—*_"


class RelationPatternExtractor:
    """Finds relation triples stated by phrases and regexes.

    Parameters
    ----------
    relations : list of RelationPattern
        Phrases (and/or a raw regex with ``subject`` and ``object`` groups) per relation;
        ``reverse=True`` swaps subject and object ("the team owns Redis" -> Redis owned_by team).
    timeout_seconds : float
        Budget of one raw regex on one chunk; a slower run is stopped and reported.
    type_of : callable, optional
        ``name -> entity type`` (:meth:`EntityExtractor.type_of`); ``concept`` for all if omitted.
    chinese_phrases : iterable of (phrase, relation, reverse)
        Chinese phrases matched without word boundaries, with Chinese clause rules.
    articles : iterable of str
        Leading words dropped from subjects and objects.

    Raises
    ------
    ValueError
        If a raw regex does not compile or lacks the ``subject``/``object`` groups, or a
        relation has neither phrases nor a regex; the message names the pattern.
    """

    name = "patterns"

    def __init__(
        self,
        relations: Sequence[RelationPattern],
        timeout_seconds: float = setting_default("extraction.pattern_timeout_seconds"),
        type_of: Callable[[str], str] | None = None,
        chinese_phrases: Iterable[tuple[str, str, bool]] = DEFAULT_CHINESE_PHRASES,
        articles: Iterable[str] = DEFAULT_ARTICLES,
    ) -> None:
        self.type_of = type_of or (lambda name: "concept")
        self.articles = {a.lower() for a in articles}
        self._phrases: dict[str, tuple[str, bool]] = {}  # normalised phrase -> (relation, reverse)
        self._regexes: list[tuple[GuardedPattern, str, bool, Guard | None]] = []
        for index, pattern in enumerate(relations):
            if not pattern.phrases and not pattern.regex:
                raise ValueError(f"relations[{index}] ({pattern.relation}) has neither phrases nor a regex; give one")
            for phrase in pattern.phrases:
                normal = _normalise(phrase)
                if normal:
                    self._phrases.setdefault(normal, (pattern.relation, pattern.reverse))
            if pattern.regex:
                label = pattern.relation
                guarded = GuardedPattern(pattern.regex, label, timeout_seconds)
                missing = {"subject", "object"} - set(guarded.compiled.groupindex)
                if missing:
                    raise ValueError(
                        f"regex of relation {label} '{pattern.regex}' lacks the named group(s) "
                        f"{', '.join(sorted(missing))}; write (?P<subject>...) and (?P<object>...)"
                    )
                self._regexes.append((guarded, pattern.relation, pattern.reverse, Guard.of(pattern.any_of)))
        for phrase, relation, reverse in chinese_phrases:
            self._phrases.setdefault(_normalise(phrase), (relation, reverse))
        self._phrase_regex = _PhraseMatcher(self._phrases) if self._phrases else None

    def extract(self, document: Document, chunks: Sequence[Chunk]) -> Extraction:
        """Triples stated by every chunk; timed-out regexes are reported in ``problems``."""
        result = Extraction()
        for chunk in chunks:
            seen: set[tuple[str, str, str]] = set()
            for subject, relation, obj in self._statements(chunk, result.problems):
                if (subject, relation, obj) in seen or subject.lower() == obj.lower():
                    continue
                if _refers_back(subject) or _refers_back(obj) or _ends_referring(subject):
                    continue  # "@mara.chen leads the team": which team is said elsewhere
                seen.add((subject, relation, obj))
                result.triples.append(
                    Triple(subject, relation, obj, chunk.id, 1.0, "pattern", self.type_of(subject), self.type_of(obj))
                )
        return result

    def _statements(self, chunk: Chunk, problems: list[str]):
        yield from self._phrase_statements(chunk.text)
        for guarded, relation, reverse, guard in self._regexes:
            if guard is not None and not guard.admits(chunk.text):
                continue  # the pattern cannot match here: skip its (slower) scan
            for match in guarded.finditer(chunk.text, chunk.id, problems):
                subject = self._clean(match.group("subject") or "", keep_last=True)
                obj = self._clean(match.group("object") or "", keep_last=False)
                if subject and obj:
                    yield (obj, relation, subject) if reverse else (subject, relation, obj)

    def _phrase_statements(self, text: str):
        if self._phrase_regex is None:
            return
        matches = self._phrase_regex.find_all(text)
        previous_subjects: list[str] = []
        for i, match in enumerate(matches):
            relation, reverse = self._phrases[_normalise(match.group())]
            previous_end = matches[i - 1].end() if i else 0
            next_start = matches[i + 1].start() if i + 1 < len(matches) else len(text)
            if _CJK_RE.search(match.group()):
                if not _is_cjk_word(text, match.start(), match.end()):
                    continue  # "使用率" (usage rate) holds "使用" (uses) but is not that verb
                subjects, objects = self._cjk_sides(text, match, previous_end, next_start)
            else:
                subjects = self._subjects(text, match.start(), previous_end)
                if not subjects and i and _continues_predicate(text[previous_end:match.start()]):
                    # "X reads from A, writes to B and calls C": the verbs share X as subject.
                    subjects = previous_subjects
                objects = self._objects(text, match.end(), next_start, bounded_by_next=i + 1 < len(matches))
            previous_subjects = subjects
            for subject in subjects:
                for obj in objects:
                    yield (obj, relation, subject) if reverse else (subject, relation, obj)

    def _subjects(self, text: str, start: int, previous_end: int) -> list[str]:
        boundary = _last_left_boundary(text, max(previous_end, start - _WINDOW), start)
        if boundary is None and previous_end and start - previous_end <= _WINDOW:
            # The previous phrase's object list runs into this phrase: its last item is our subject.
            region = text[previous_end:start]
            return [] if _negated(region) else _nonempty([self._subject(_LIST_SPLIT_RE.split(region)[-1])])
        region_start = boundary[0] if boundary else max(previous_end, start - _WINDOW)
        region = text[region_start:start]
        if _negated(region):
            return []
        if boundary and boundary[2] and not _has_word(region):
            # "the cache, which depends on Redis": the subject is the noun phrase before "which".
            antecedent_end = boundary[1]
            while True:
                lo = max(previous_end, antecedent_end - _WINDOW)
                before = _last_left_boundary(text, lo, antecedent_end)
                if before is None or _has_word(text[before[0]:antecedent_end]):
                    antecedent_start = before[0] if before else lo
                    # "goes to the auth service, which": the noun phrase starts after a preposition.
                    for cut in _RIGHT_BOUNDARY_RE.finditer(text, antecedent_start, antecedent_end):
                        if _has_word(text[cut.end():antecedent_end]):
                            antecedent_start = cut.end()
                    region = text[antecedent_start:antecedent_end]
                    break
                antecedent_end = before[1]
        return _nonempty(self._subject(item) for item in _LIST_SPLIT_RE.split(region))

    def _objects(self, text: str, end: int, next_start: int, bounded_by_next: bool) -> list[str]:
        limit = min(next_start, end + _WINDOW)
        boundary = _RIGHT_BOUNDARY_RE.search(text, end, limit)
        stop = boundary.start() if boundary else limit
        items = _LIST_SPLIT_RE.split(text[end:stop])
        if bounded_by_next and stop == next_start and len(items) > 1:
            items = items[:-1]  # the last item is the next phrase's subject
        elif len(items) > 1 and boundary is not None and boundary.group(0).lower() == "by" \
                and _PARTICIPLE_RE.fullmatch(items[-1].strip()):
            items = items[:-1]  # "caused the outage, fixed by Ana": a clause of its own, no object
        return _nonempty(self._clean(item, keep_last=False) for item in items)

    def _cjk_sides(self, text, match, previous_end, next_start) -> tuple[list[str], list[str]]:
        lo = max(previous_end, match.start() - _WINDOW)
        left = max([m.end() for m in _CJK_BOUNDARY_RE.finditer(text, lo, match.start())] or [lo])
        limit = min(next_start, match.end() + _WINDOW)
        right_match = _CJK_BOUNDARY_RE.search(text, match.end(), limit)
        right = right_match.start() if right_match else limit
        subject = text[left:match.start()].strip(_TRIM)[-MAX_CJK_NAME_CHARS:]
        objects = [item.strip(_TRIM)[:MAX_CJK_NAME_CHARS] for item in _CJK_LIST_SPLIT_RE.split(text[match.end():right])]
        return _nonempty([subject]), _nonempty(objects)

    def _subject(self, item: str) -> str:
        words = item.split()
        while words and words[-1].lower().strip(_TRIM) in _TRAILING_FILLERS:
            words.pop()
        return self._clean(" ".join(words[-MAX_NAME_WORDS:]), keep_last=True)

    def _clean(self, item: str, keep_last: bool) -> str:
        """Strip fillers and articles at the front and marks at the ends; keep at most MAX_NAME_WORDS."""
        words = [w for w in (w.strip(_TRIM) if i == 0 else w for i, w in enumerate(item.split())) if w]
        while words and (words[0].lower() in self.articles or words[0].lower() in _LEADING_FILLERS):
            words.pop(0)
        words = words[-MAX_NAME_WORDS:] if keep_last else words[:MAX_NAME_WORDS]
        name = " ".join(words).strip(_TRIM)
        if not name or all(w.lower().strip(_TRIM) in _STOPWORDS for w in name.split()):
            return ""
        if _CJK_RE.search(name):
            name = name[-MAX_CJK_NAME_CHARS:] if keep_last else name[:MAX_CJK_NAME_CHARS]
        return name


#: Words that point back to something named elsewhere; a triple ending in one names nothing.
_REFERRING = frozenset({"it", "its", "them", "they", "this", "that", "these", "those", "team", "the team",
                        "the service", "the system", "the trial", "the study", "the project", "the company",
                        "the grant", "he", "she", "him", "her",
                        # an honorific cut from its name at its dot ("led by Dr. Tomas Berg")
                        "dr", "mr", "mrs", "ms", "prof", "st"})


def _refers_back(name: str) -> bool:
    """``True`` for "the team", "it", "them": words standing for a name given elsewhere."""
    return " ".join(name.lower().split()) in _REFERRING


#: Prepositions after which a subject's last words are its own noun phrase.
_PREPOSITIONS = frozenset({"on", "of", "in", "at", "for", "to", "with", "by", "from"})


def _ends_referring(subject: str) -> bool:
    """Whether a subject ends in a preposition and a word standing for a name given elsewhere: the
    verb's subject is that word, so the subject names nothing ("the team lead listed on the team
    leads page", where "leads" is a noun).

    >>> _ends_referring("team lead listed on the team"), _ends_referring("Head of Platform")
    (True, False)
    """
    words = subject.lower().split()
    after = max((i for i, w in enumerate(words) if w in _PREPOSITIONS), default=-1)
    return after >= 0 and _refers_back(" ".join(words[after + 1:]))


def _continues_predicate(between: str) -> bool:
    """Whether the text between two phrases ends in a bare list separator ("A, " or "A and ").

    >>> _continues_predicate(" Kafka, "), _continues_predicate(" B and C ")
    (True, False)
    """
    items = _LIST_SPLIT_RE.split(between)
    return len(items) > 1 and not items[-1].strip(_TRIM + " ")


def _is_cjk_word(text: str, start: int, end: int) -> bool:
    """Whether ``text[start:end]`` starts and ends on jieba word boundaries of its clause."""
    lo = max([m.end() for m in _CJK_BOUNDARY_RE.finditer(text, max(0, start - _WINDOW), start)] or [max(0, start - _WINDOW)])
    hi_match = _CJK_BOUNDARY_RE.search(text, end, min(len(text), end + _WINDOW))
    hi = hi_match.start() if hi_match else min(len(text), end + _WINDOW)
    import jieba  # only Chinese text pays for loading the segmenter

    jieba.setLogLevel(60)
    boundaries, pos = {lo}, lo
    for token in jieba.lcut(text[lo:hi]):
        pos += len(token)
        boundaries.add(pos)
    return start in boundaries and end in boundaries


def _normalise(phrase: str) -> str:
    return " ".join(phrase.lower().split())


class _PhraseMatcher:
    """Every phrase in one trie-shaped regex; matches lower-cased text when offsets allow."""

    def __init__(self, phrases: Iterable[str]) -> None:
        ordered = sorted(phrases)
        latin = [p for p in ordered if not _CJK_RE.search(p)]
        cjk = [p for p in ordered if _CJK_RE.search(p)]
        parts = []
        if latin:
            parts.append(rf"(?<![\w'’-])(?:{_trie_regex(latin)})(?![\w'’-])")
        if cjk:
            parts.append(f"(?:{_trie_regex(cjk)})")
        pattern = "|".join(parts)
        self.lower_case = re.compile(pattern)
        self.any_case = re.compile(pattern, re.IGNORECASE)

    def find_all(self, text: str) -> list[_Found]:
        lowered = text.lower()
        if len(lowered) == len(text):  # offsets line up: the cheaper case-sensitive search
            return [_Offset(m, text) for m in self.lower_case.finditer(lowered)]
        return list(self.any_case.finditer(text))


class _Found(Protocol):
    """Where a phrase was found: a match, or an :class:`_Offset`."""

    def start(self) -> int: ...

    def end(self) -> int: ...

    def group(self) -> str: ...


class _Offset:
    """A match found in lower-cased text, reporting the original text."""

    __slots__ = ("_match", "_text")

    def __init__(self, match: re.Match, text: str) -> None:
        self._match, self._text = match, text

    def start(self) -> int:
        return self._match.start()

    def end(self) -> int:
        return self._match.end()

    def group(self) -> str:
        return self._text[self._match.start():self._match.end()]


def _trie_regex(phrases: Sequence[str]) -> str:
    """A regex for a set of phrases, shaped as a trie so each position is rejected in a step.

    Spaces inside phrases match any run of whitespace; optional tails are greedy, so the
    longest phrase wins when several start at one place.

    Examples
    --------
    >>> print(_trie_regex(["use", "uses", "used by"]))
    use(?:(?:d\\s+by|s))?
    """
    root: dict = {}
    for phrase in phrases:
        node = root
        for char in phrase:
            node = node.setdefault(char, {})
        node[""] = {}

    def emit(node: dict) -> str:
        branches = [
            (r"\s+" if char == " " else re.escape(char)) + emit(child) for char, child in sorted(node.items()) if char
        ]
        if not branches:
            return ""
        body = branches[0] if len(branches) == 1 else "(?:" + "|".join(branches) + ")"
        return f"(?:{body})?" if "" in node else body

    return emit(root)


def _boundary_regex(words: Sequence[str], marks: str, relative: bool) -> re.Pattern:
    """Clause-boundary marks or words (trie-shaped, case-insensitive via IGNORECASE)."""
    parts = [r"[.!?](?=\s|$)", marks, r"\s-\s"]
    if relative:
        parts.append(r"(?<![\w'’-])(?P<relative>which|that|who)(?![\w'’-])")
    parts.append(rf"(?<![\w'’-])(?:{_trie_regex(sorted(words))})(?![\w'’-])")
    return re.compile("|".join(parts), re.IGNORECASE)


# Where a subject starts: a sentence or clause boundary, or a subordinating word.
_LEFT_BOUNDARY_RE = _boundary_regex(_LEFT_WORDS, r"[\n,;:(\[\u2014\u2013。，；：！？（]", relative=True)
# Where an object list ends.
_RIGHT_BOUNDARY_RE = _boundary_regex(_RIGHT_WORDS, r"[\n;:(\[\u2014\u2013。；：！？（]", relative=False)


def _last_left_boundary(text: str, lo: int, hi: int) -> tuple[int, int, bool] | None:
    """The last subject boundary in ``text[lo:hi]``: (end, start, is a relative pronoun)."""
    last = None
    for last in _LEFT_BOUNDARY_RE.finditer(text, lo, hi):
        pass
    if last is None:
        return None
    return last.end(), last.start(), last.group("relative") is not None


def _negated(region: str) -> bool:
    """Whether the words just before a phrase negate it ("does not", "doesn't", "no longer")."""
    tail = region.lower().split()[-3:]
    return any(w in _NEGATIONS or w.endswith("n't") for w in tail)


def _has_word(text: str) -> bool:
    return any(ch.isalnum() for ch in text)


def _nonempty(items: Iterable[str]) -> list[str]:
    return [item for item in items if item]
