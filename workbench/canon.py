"""Canonical names: name keys, aliases, splits, the merge record and merge suggestions.

Every merge is derived from the mentions and the alias table, so it can be inspected and
undone: two surface forms are one entity when their :func:`name_key` is equal, or when an
alias (settings or user) maps one key onto the other. A *split* gives one written form a key
of its own, ``"<name key>~<form>"`` (``<form>`` is the display form in lower case), so it
leaves the entity it would otherwise join and no alias applies to it.

Examples
--------
>>> name_key("The Auth Service")
'authservice'
>>> canon = Canonicalizer(aliases={"authsvc": "Auth Service"}, splits={"auth-service"})
>>> canon.key("AuthSvc"), canon.key("auth service"), canon.key("auth-service")
('authservice', 'authservice', 'authservice~auth-service')
"""

from __future__ import annotations

import bisect
import difflib
import functools
import re
import unicodedata
from collections import defaultdict
from collections.abc import Collection, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from workbench.model import Merge, Mention, SurfaceForm
from workbench.model.jsonable import to_json
from workbench.safe_text import mixed_scripts
from workbench.settings import setting_default

__all__ = [
    "DEFAULT_ARTICLES",
    "MergeSuggestion",
    "Canonicalizer",
    "FormTally",
    "name_key",
    "display_form",
    "build_merges",
    "display_names",
    "suggest_merges",
    "ZH_EN_TERMS",
    "form_reasons",
    "gloss",
    "cross_language_suggestions",
    "declared_alias_suggestions",
    "combine_suggestions",
    "EVIDENCE_RANKS",
    "evidence_rank",
    "is_number_or_date",
    "rank_suggestions",
    "SuggestionPage",
    "page_of",
    "NAME_KEY_VERSION",
    "skeleton",
    "lookalike_suggestions",
]

#: Bumped when :func:`name_key` folds differently (2: NFKC), so graphs derived before are rebuilt.
NAME_KEY_VERSION = 2

#: Cyrillic and Greek letters drawn like Latin ones (after NFKC), and the Latin letter they pass for.
_CONFUSABLE = str.maketrans({
    **dict(zip("аеорсухіјѕԁԛԝһӏвкмнтгп", "aeopcyxijsdqwhlbkmhtrn")),
    **dict(zip("АВЕКМНОРСТХУІЈЅԌ", "ABEKMHOPCTXYIJSG")),
    **dict(zip("αοιυνρτκχεγ", "aoiuvptkxey")),
    **dict(zip("ΑΒΕΖΗΙΚΜΝΟΡΤΥΧ", "ABEZHIKMNOPTYX")),
})

DEFAULT_ARTICLES: tuple[str, ...] = tuple(setting_default("canonicalization.articles"))

# Trailing/leading punctuation that is never part of a name. Explicit sets rather than
# "anything not alphanumeric" so that "C++", "C#" and "F#" keep their marks.
_TRAILING = ".,;:!?\"'`)]}>»”’…。，；：！？、）】》」』"
_LEADING = "\"'`([{<«“‘（【《「『"
# Separators that do not distinguish names: "auth-service", "auth_service", "auth service".
# A closing bracket is a name's own when it closes an opening one in the name:
# "<script>alert(1)</script>" keeps its ">", "Redis)" loses its ")".
_CLOSERS = {")": "(", "]": "[", "}": "{", ">": "<", "»": "«", "）": "（", "】": "【", "》": "《", "」": "「", "』": "『"}
_OPENERS = {v: k for k, v in _CLOSERS.items()}
_SEPARATORS_RE = re.compile(r"[\s\-_.\u2010-\u2015\u00b7]+")
_POSSESSIVE_RE = re.compile(r"(?<=[^\W_])['’]s$")
_WHITESPACE_RE = re.compile(r"\s+")


def _closes_own_bracket(text: str) -> bool:
    """Whether the last character closes a bracket opened inside ``text``."""
    opener = _CLOSERS.get(text[-1]) if text else None
    return opener is not None and text.count(opener) >= text.count(text[-1])


def _opens_own_bracket(text: str) -> bool:
    """Whether the first character opens a bracket closed inside ``text`` (not at its very end)."""
    closer = _OPENERS.get(text[0]) if text else None
    if closer is None or text.count(closer) < text.count(text[0]):
        return False
    depth = 0
    for i, ch in enumerate(text):
        depth += (ch == text[0]) - (ch == closer)
        if depth == 0:
            return i != len(text) - 1  # closed at the end: the brackets wrap the name, drop both
    return False


def _strip_marks(text: str, leading: bool = True) -> str:
    """Drop trailing (and leading) marks that are not part of the name, keeping own brackets."""
    previous = None
    while text != previous:
        previous = text
        if leading and text and text[0] in _OPENERS and not _opens_own_bracket(text) and text[-1] == _OPENERS[text[0]]:
            text = text[1:-1]  # "(redis)" -> "redis"
            continue
        while text and text[-1] in _TRAILING and not _closes_own_bracket(text):
            text = text[:-1]
        while leading and text and text[0] in _LEADING and not _opens_own_bracket(text):
            text = text[1:]
        if leading:
            text = _POSSESSIVE_RE.sub("", text)
    return text


def _has_alnum(text: str) -> bool:
    return any(ch.isalnum() for ch in text)


@functools.lru_cache(maxsize=64)
def _folded_articles(articles: tuple[str, ...]) -> frozenset[str]:
    return frozenset(a.lower() for a in articles)


def _drop_leading_articles(words: list[str], articles: Iterable[str]) -> list[str]:
    """Drop leading article words while a word with letters or digits remains after them."""
    folded = _folded_articles(tuple(articles))
    while len(words) > 1 and words[0].lower() in folded and _has_alnum(" ".join(words[1:])):
        words = words[1:]
    return words


def name_key(name: str, articles: Iterable[str] = DEFAULT_ARTICLES) -> str:
    """The key that folds the ways one name is written.

    Folds case, camelCase, spaces, hyphens, underscores and dots, drops leading articles
    (whole words only) and trailing punctuation and a possessive ``'s``. The key is
    idempotent (``name_key(name_key(x)) == name_key(x)``), never raises, and is empty exactly
    for names with no letter or digit. Because separators are removed, a camelCase split
    never changes the key: "AuthService" and "Auth Service" both give ``authservice``.
    Articles are dropped only when written as separate words ("TheAuth" keeps its "the").
    Names are NFKC-normalized first, so fullwidth and compatibility forms fold into the plain
    ones; letters of other alphabets that only look Latin are kept apart (see :func:`skeleton`).

    Examples
    --------
    >>> [name_key(n) for n in ["The Auth Service", "auth-service", "auth_service",
    ...                        "AuthService", "auth service."]]
    ['authservice', 'authservice', 'authservice', 'authservice', 'authservice']
    >>> name_key("theater"), name_key("Redis's"), name_key("Node.js"), name_key("认证 服务")
    ('theater', 'redis', 'nodejs', '认证服务')
    >>> name_key("Ｒｅｄｉｓ"), name_key("R\u0435dis") == "redis"
    ('redis', False)
    """
    if not isinstance(name, str):
        name = str(name)
    # NFKC first: fullwidth "Ｒｅｄｉｓ", ligatures and compatibility forms key as what they show.
    words = _drop_leading_articles(unicodedata.normalize("NFKC", name).split(), articles)
    key = unicodedata.normalize("NFKC", _SEPARATORS_RE.sub("", " ".join(words).lower()))
    key = _strip_marks(key)
    # Marks alone ("--", "@", "+") name nothing.
    return key if _has_alnum(key) else ""


def skeleton(name: str) -> str:
    """``name`` with Cyrillic and Greek letters that look Latin written as those Latin letters
    (after NFKC): what a reader sees, so "Rеdis" (Cyrillic е) gives "Redis".

    >>> skeleton("R\u0435dis"), skeleton("Ｒｅｄｉｓ"), skeleton("Redis")
    ('Redis', 'Redis', 'Redis')
    """
    return unicodedata.normalize("NFKC", name).translate(_CONFUSABLE)


def lookalike_suggestions(names: Sequence[str], articles: Iterable[str] = DEFAULT_ARTICLES) -> list[MergeSuggestion]:
    """Pairs of names that print alike but key apart: one mixes look-alike alphabets (or is
    written in one that passes for Latin) and reads as the other. Each a merge suggestion, so a
    person decides: accept it if the two are one thing, reject it to keep the impostor apart.

    >>> [(s.a, s.b, s.reason) for s in lookalike_suggestions(["Redis", "R\u0435dis", "Kafka"])]
    [('Rеdis', 'Redis', 'look-alike: Rеdis mixes Latin+Cyrillic letters and reads as Redis')]
    """
    articles = tuple(articles)
    by_key: dict[str, str] = {}
    for name in names:
        by_key.setdefault(name_key(name, articles), name)
    found = []
    for name in names:
        key = name_key(name, articles)
        seen_as = name_key(skeleton(name), articles)
        other = by_key.get(seen_as)
        if seen_as == key or other is None or name_key(other, articles) == key:
            continue
        scripts = sorted({s for word in name.split() for s in mixed_scripts(word)}, key=("Latin", "Cyrillic", "Greek").index)
        how = f"mixes {'+'.join(scripts)} letters" if scripts else "is written in letters that pass for Latin"
        found.append(MergeSuggestion(name, other, 0.99, f"look-alike: {name} {how} and reads as {other}"))
    return found


def display_form(surface: str, articles: Iterable[str] = DEFAULT_ARTICLES) -> str:
    """A surface form tidied for display: case kept, article and trailing marks dropped.

    Examples
    --------
    >>> display_form("  the   Auth  Service. ")
    'Auth Service'
    >>> display_form("The")
    'The'
    >>> display_form("Redis)"), display_form("<b>Auth</b>")
    ('Redis', '<b>Auth</b>')
    """
    words = _drop_leading_articles(surface.split(), articles)
    text = " ".join(words)
    stripped = _strip_marks(text, leading=False).strip()
    return stripped if _has_alnum(stripped) or not _has_alnum(text) else text


@dataclass(frozen=True)
class MergeSuggestion:
    """Two names that look like one entity; a suggestion for a person to accept, never applied."""

    a: str
    """First name (as given)."""
    b: str
    """Second name."""
    score: float
    """Similarity in [0, 1]: the higher of string and embedding similarity."""
    reason: str
    """``name similarity``, ``embedding similarity`` or both, joined by ``" + "``."""


class Canonicalizer:
    """Maps a surface form to its canonical key: name key, then split, then aliases.

    Parameters
    ----------
    aliases : mapping of str to str
        Alias name -> canonical name from the settings. Both sides go through
        :func:`name_key`.
    user_aliases : mapping of str to str
        The same, set by the user; these override settings aliases for the same alias key.
    splits : set of str
        Surface forms that keep a key of their own, compared by lower-cased
        :func:`display_form`. Their key is ``"<name key>~<lower display form>"``.
    articles : iterable of str
        Leading words dropped from names.

    Notes
    -----
    Aliases are applied transitively (``a -> b -> c`` gives ``c``). A cycle does not hang:
    every key on the cycle resolves to the smallest key of the cycle, so the names on it
    still become one entity.

    Examples
    --------
    >>> c = Canonicalizer(aliases={"pg": "Postgres"}, user_aliases={"postgres": "PostgreSQL"})
    >>> c.key("PG"), c.explain("PG")
    ('postgresql', ('alias (settings)', 'alias (user)'))
    >>> Canonicalizer(aliases={"a1": "b1", "b1": "a1"}).key("b1")
    'a1'
    """

    def __init__(
        self,
        aliases: Mapping[str, str] | None = None,
        user_aliases: Mapping[str, str] | None = None,
        splits: Iterable[str] | None = None,
        articles: Iterable[str] = DEFAULT_ARTICLES,
    ) -> None:
        self.articles = tuple(articles)
        # alias key -> (target key, origin); user entries replace settings entries.
        edges: dict[str, tuple[str, str]] = {}
        for mapping, origin in ((aliases or {}, "alias (settings)"), (user_aliases or {}, "alias (user)")):
            for alias, canonical in mapping.items():
                source, target = self._name_key(alias), self._name_key(canonical)
                if source and target and source != target:
                    edges[source] = (target, origin)
        self._alias_edges = edges
        self._resolved: dict[str, tuple[str, tuple[str, ...]]] = {
            source: self._follow(source) for source in edges
        }
        self.splits = frozenset(display_form(s, self.articles).lower() for s in (splits or ()))
        self._cache: dict[str, tuple[str, tuple[str, ...]]] = {}

    def _name_key(self, name: str) -> str:
        return name_key(name, self.articles)

    def _follow(self, start: str) -> tuple[str, tuple[str, ...]]:
        """Resolve an alias chain; on a cycle, the smallest key on the cycle wins."""
        path = [start]
        reasons: list[str] = []
        seen = {start: 0}
        current = start
        while current in self._alias_edges:
            target, origin = self._alias_edges[current]
            if origin not in reasons:
                reasons.append(origin)
            if target in seen:
                return min(path[seen[target]:]), tuple(reasons)
            seen[target] = len(path)
            path.append(target)
            current = target
        return current, tuple(reasons)

    def explain(self, surface: str) -> tuple[str, ...]:
        """Which alias tables were used to reach the key of ``surface`` (empty if none)."""
        return self._lookup(surface)[1]

    def key(self, surface: str) -> str:
        """The canonical key of a surface form."""
        return self._lookup(surface)[0]

    def is_split(self, surface: str) -> bool:
        """Whether ``surface`` is one of the split forms."""
        return display_form(surface, self.articles).lower() in self.splits

    def _lookup(self, surface: str) -> tuple[str, tuple[str, ...]]:
        cached = self._cache.get(surface)
        if cached is not None:
            return cached
        if self.splits and self.is_split(surface):
            result: tuple[str, tuple[str, ...]] = (f"{self._name_key(surface)}~{display_form(surface, self.articles).lower()}", ())
        else:
            base = self._name_key(surface)
            result = self._resolved.get(base, (base, ()))
        if len(self._cache) > 200_000:  # bound memory on huge corpora
            self._cache.clear()
        self._cache[surface] = result
        return result


def _form_order(item: tuple[str, int]) -> tuple[int, int, str]:
    """Most frequent first; ties: the longest, then alphabetical."""
    form, count = item
    return (-count, -len(form), form)


class FormTally:
    """Counts the surface forms of each canonical key, a mention at a time: what the merge record
    is made of (:meth:`merges`). :meth:`tap` counts the mentions a derivation streams past, so
    the record is not read twice for the merges."""

    def __init__(self, canonicalizer: Canonicalizer) -> None:
        self.canonicalizer = canonicalizer
        #: key -> display form -> [count, chunk ids in first-seen order]
        self.groups: dict[str, dict[str, list]] = defaultdict(dict)
        # Each surface is resolved once: a corpus repeats its names (61k passages: 420k entities
        # among millions of mentions), more of them than the canonicalizer's own bounded memo keeps.
        self._resolved: dict[str, tuple[str, str]] = {}

    def add(self, mention: Mention) -> None:
        known = self._resolved.get(mention.surface)
        if known is None:
            known = self._resolved[mention.surface] = (self.canonicalizer.key(mention.surface),
                                                       display_form(mention.surface, self.canonicalizer.articles))
        key, form = known
        if not key:
            return
        entry = self.groups[key].setdefault(form, [0, {}])
        entry[0] += 1
        entry[1].setdefault(mention.chunk_id, None)

    def count(self, mentions: Iterable[Mention]) -> FormTally:
        """Count every one of ``mentions``; returns the tally."""
        for mention in mentions:
            self.add(mention)
        return self

    def tap(self, mentions: Iterable[Mention]) -> Iterator[Mention]:
        """``mentions``, each counted as it passes."""
        for mention in mentions:
            self.add(mention)
            yield mention

    def merges(self) -> list[Merge]:
        """The merge record of the mentions counted (see :func:`build_merges`)."""
        canonicalizer = self.canonicalizer
        merges = []
        for key, forms in self.groups.items():
            if len(forms) < 2:
                continue
            ordered = sorted(((f, e[0]) for f, e in forms.items()), key=_form_order)
            surface_forms = [SurfaceForm(f, c, tuple(forms[f][1])) for f, c in ordered]
            reasons: list[str] = []
            base_keys = {name_key(f, canonicalizer.articles) for f in forms}
            if len(forms) > len(base_keys):  # two forms share a name key
                reasons.append("name key")
            for form in forms:
                for reason in canonicalizer.explain(form):
                    if reason not in reasons:
                        reasons.append(reason)
            merges.append(Merge(canonical=ordered[0][0], key=key, surface_forms=surface_forms, reasons=reasons))
        merges.sort(key=lambda m: (-sum(f.count for f in m.surface_forms), m.key))
        return merges


def build_merges(mentions: Iterable[Mention], canonicalizer: Canonicalizer) -> list[Merge]:
    """The merge record: every canonical key written in two or more distinct forms.

    Surface forms are compared by :func:`display_form` and listed most frequent first with
    their counts and chunk ids. ``Merge.canonical`` is the first of them.

    Examples
    --------
    >>> ms = [Mention("Auth Service", "c1"), Mention("auth-service", "c2"),
    ...       Mention("Auth Service", "c3"), Mention("Redis", "c1")]
    >>> [(m.canonical, m.key, [(f.form, f.count) for f in m.surface_forms], m.reasons)
    ...  for m in build_merges(ms, Canonicalizer())]
    [('Auth Service', 'authservice', [('Auth Service', 2), ('auth-service', 1)], ['name key'])]
    """
    return FormTally(canonicalizer).count(mentions).merges()


def display_names(mentions: Iterable[Mention], canonicalizer: Canonicalizer) -> dict[str, str]:
    """Display name of every canonical key: its most frequent surface form.

    Examples
    --------
    >>> display_names([Mention("redis", "c1"), Mention("Redis", "c2"), Mention("Redis", "c3")],
    ...               Canonicalizer())
    {'redis': 'Redis'}
    """
    names = {}
    for key, forms in FormTally(canonicalizer).count(mentions).groups.items():
        names[key] = min(((f, e[0]) for f, e in forms.items()), key=_form_order)[0]
    return names


def _pieces(length: int, count: int) -> list[tuple[int, int]]:
    """``(start, length)`` of ``count`` consecutive pieces covering a key of ``length`` characters,
    the longer ones last."""
    short, longer = divmod(length, count)
    out, start = [], 0
    for i in range(count):
        size = short + (1 if i >= count - longer else 0)
        out.append((start, size))
        start += size
    return out


def _string_pairs(keys: Sequence[str], threshold: float) -> dict[tuple[int, int], float]:
    """``(i, j) -> ratio`` for every pair ``i < j`` of ``keys`` whose
    :class:`difflib.SequenceMatcher` ratio (``keys[j]`` against ``keys[i]``) is at least
    ``threshold``: those of :func:`_string_pairs_reference`, without comparing every pair.

    A pigeonhole filter finds the candidates (as PassJoin does for edit distance). Two keys of
    ``T`` characters in all with a ratio of at least ``t`` have at most ``D = (1 - t) T``
    characters outside the matcher's blocks. Cut the longer key into ``D + 1`` pieces and give
    each unmatched character to the piece it falls in (or starts): some piece ``i`` gets none,
    with exactly ``i`` before it, so it lies whole in a matching block and stands in the
    shorter key within ``i`` places of its own start, and within ``D - i`` of where the ends
    put it. Each key's pieces are indexed by its length, their number and their text; each key
    looks up the substrings it has at those places, for every longer length the length bound
    allows. Only keys sharing a placed piece are compared, so the work follows the near pairs,
    not the square of the names.
    """
    if threshold <= 0:
        return _string_pairs_reference(keys, threshold)
    slack = 1.0 - threshold
    lengths = sorted({len(k) for k in keys})
    plans: dict[int, list[tuple[int, int]]] = {}
    unfiltered: list[int] = []  # keys too short to cut into enough non-empty pieces
    index: dict[tuple[int, int, str], list[int]] = defaultdict(list)
    for i, key in enumerate(keys):
        count = int(slack * 2 * len(key) + 1e-9) + 1  # enough pieces for any partner no longer
        if count > len(key):
            unfiltered.append(i)
            continue
        plan = plans.setdefault(len(key), _pieces(len(key), count))
        for number, (start, size) in enumerate(plan):
            index[(len(key), number, key[start:start + size])].append(i)
    unfiltered_set = set(unfiltered)
    scores: dict[tuple[int, int], float] = {}
    # SequenceMatcher indexes its second sequence: keep one matcher per key as the second.
    fixed, other = difflib.SequenceMatcher(None, autojunk=False), difflib.SequenceMatcher(None, autojunk=False)

    def verify(i: int, j: int, matcher: difflib.SequenceMatcher) -> None:  # i < j, as the reference compares them
        len_i, len_j = len(keys[i]), len(keys[j])
        if 2.0 * min(len_i, len_j) / (len_i + len_j) < threshold:
            return
        if matcher is other:
            other.set_seq2(keys[i])
        matcher.set_seq1(keys[j])
        if matcher.quick_ratio() >= threshold:
            ratio = matcher.ratio()
            if ratio >= threshold:
                scores[(i, j)] = ratio

    for b, key in enumerate(keys):
        short = len(key)
        fixed.set_seq2(key)
        found: set[int] = set()
        for longer in lengths[bisect.bisect_left(lengths, short):]:
            if 2.0 * short / (short + longer) < threshold:
                break
            if longer not in plans:
                continue
            most = int(slack * (short + longer) + 1e-9)  # differing characters allowed
            shift = short - longer
            for number, (start, size) in enumerate(plans[longer][:most + 1]):
                # The first whole piece has ``number`` differing characters before it, the
                # rest after it: it starts within both reaches in the shorter key.
                lo = max(0, start - number, start + shift - (most - number))
                hi = min(short - size, start + number, start + shift + (most - number))
                for at in range(lo, hi + 1):
                    found.update(index.get((longer, number, key[at:at + size]), ()))
        for a in sorted(found):  # each pair once: from its shorter key, or the later of two as long
            if a != b and (a > b or len(keys[a]) > short) and (a not in unfiltered_set):
                verify(min(a, b), max(a, b), fixed if b < a else other)
    for a in unfiltered:  # few, and short: compared with every key
        for b in range(len(keys)):
            if b != a and (b not in unfiltered_set or b > a):
                verify(min(a, b), max(a, b), other)
    return dict(sorted(scores.items()))


def _string_pairs_reference(keys: Sequence[str], threshold: float) -> dict[tuple[int, int], float]:
    """Every pair compared: the simple version :func:`_string_pairs` is tested against."""
    scores = {}
    for i in range(len(keys)):
        for j in range(i + 1, len(keys)):
            len_i, len_j = len(keys[i]), len(keys[j])
            if 2.0 * min(len_i, len_j) / (len_i + len_j) < threshold:
                continue
            matcher = difflib.SequenceMatcher(None, keys[j], keys[i], autojunk=False)
            if matcher.quick_ratio() >= threshold and matcher.ratio() >= threshold:
                scores[(i, j)] = matcher.ratio()
    return scores


#: Similarities held at once by :func:`_embedding_pairs`: a block of rows times the names (16 MB).
_BLOCK_ELEMENTS = 1 << 21


def _embedding_pairs(vectors: np.ndarray, covered: np.ndarray, threshold: float,
                     block_rows: int | None = None) -> dict[tuple[int, int], float]:
    """``(i, j) -> cosine`` for every pair ``i < j`` of rows, both ``covered``, at least
    ``threshold`` similar, a block of rows at a time against the rows after it: memory of a
    block and of the pairs found, never the n x n matrix (200 MB at the 5,000 names the workspace allows)."""
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    unit = vectors / np.where(norms == 0, 1.0, norms)
    n = len(unit)
    rows_per_block = block_rows or max(1, min(1024, _BLOCK_ELEMENTS // max(n, 1)))
    found: dict[tuple[int, int], float] = {}
    for lo in range(0, n, rows_per_block):
        hi = min(n, lo + rows_per_block)
        block = unit[lo:hi] @ unit[lo:].T  # rows lo..hi against columns lo..n
        near = (block >= threshold) & covered[lo:hi, None] & covered[None, lo:]
        near &= np.arange(lo, n)[None, :] > np.arange(lo, hi)[:, None]  # i < j only
        for r, c in zip(*np.nonzero(near)):
            found[(lo + int(r), lo + int(c))] = float(block[r, c])
    return found


def suggest_merges(
    names: Sequence[str],
    embedder=None,
    threshold: float = setting_default("canonicalization.suggest_threshold"),
    articles: Iterable[str] = DEFAULT_ARTICLES,
) -> list[MergeSuggestion]:
    """Pairs of names that look like one entity, best first.

    String similarity is the :class:`difflib.SequenceMatcher` ratio of the name keys. With an
    ``embedder`` (``.embed(list[str]) -> ndarray`` of normalised rows) the cosine similarity
    of the names' embeddings counts too, for names the embedder ``represents`` (when it can
    tell). Names that already share a key are not suggested.

    Examples
    --------
    >>> [(s.a, s.b, s.reason) for s in suggest_merges(["Auth Service", "Auth Services", "Redis"])]
    [('Auth Service', 'Auth Services', 'name similarity')]
    """
    unique: dict[str, str] = {}
    for name in names:
        key = name_key(name, articles)
        if key and key not in unique:
            unique[key] = name
    keys = list(unique)
    shown = [unique[k] for k in keys]
    found: dict[tuple[int, int], dict[str, float]] = defaultdict(dict)
    for pair, score in _string_pairs(keys, threshold).items():
        found[pair]["name similarity"] = score
    if embedder is not None and len(shown) > 1:
        vectors = np.asarray(embedder.embed(shown), dtype=float)
        # Names the model cannot represent (all unknown tokens) embed alike: no evidence at all.
        covered = np.asarray(embedder.represents(shown) if hasattr(embedder, "represents") else [True] * len(shown))
        for pair, score in _embedding_pairs(vectors, covered, threshold).items():
            found[pair]["embedding similarity"] = score
    suggestions = [
        MergeSuggestion(shown[i], shown[j], round(min(1.0, max(reasons.values())), 6), " + ".join(reasons))
        for (i, j), reasons in found.items()
    ]
    suggestions.sort(key=lambda s: (-s.score, s.a, s.b))
    return suggestions


# -- why each form is in its entity -------------------------------------------------------------

def form_reasons(merge: Merge, canonicalizer: Canonicalizer) -> dict[str, str]:
    """Surface form -> why it belongs to the merge: the canonical form, a shared name key, or
    the alias that maps it (each form its own reason, not the merge's).

    Examples
    --------
    >>> c = Canonicalizer(user_aliases={"login service": "Auth Service"})
    >>> merge = build_merges([Mention("Auth Service", "c1"), Mention("Auth Service", "c2"),
    ...                       Mention("auth-service", "c3"), Mention("login service", "c4")], c)[0]
    >>> for form, why in form_reasons(merge, c).items():
    ...     print(form, "|", why)
    Auth Service | canonical: the most frequent form
    login service | alias (user): login service → Auth Service
    auth-service | same name key as Auth Service (authservice)
    """
    canonical_key = name_key(merge.canonical, canonicalizer.articles)
    reasons = {}
    for form in merge.surface_forms:
        explained = canonicalizer.explain(form.form)
        if form.form == merge.canonical:
            reasons[form.form] = "canonical: the most frequent form"
        elif canonicalizer.is_split(form.form):
            reasons[form.form] = "split out by the user"
        elif explained:
            reasons[form.form] = f"{' then '.join(explained)}: {form.form} → {merge.canonical}"
        elif name_key(form.form, canonicalizer.articles) == canonical_key:
            reasons[form.form] = f"same name key as {merge.canonical} ({canonical_key})"
        else:
            reasons[form.form] = f"same name key ({name_key(form.form, canonicalizer.articles)})"
    return reasons


# -- suggestions from evidence beyond spelling ---------------------------------------------------

#: A small Chinese -> English lexicon of technical words, for glossing names written in Chinese
#: so that 认证服务 can be suggested as Auth Service (the embedding model has no Chinese words).
ZH_EN_TERMS: dict[str, str] = {
    "认证": "auth", "鉴权": "auth", "身份": "identity", "服务": "service", "令牌": "token", "缓存": "cache",
    "登录": "login", "流程": "flow", "会话": "sessions", "存储": "store", "数据库": "database", "数据": "data",
    "搜索": "search", "计费": "billing", "账单": "billing", "通知": "notification", "报表": "reporting",
    "报告": "report", "管道": "pipeline", "流水线": "pipeline", "网关": "gateway", "边缘": "edge", "队列": "queue",
    "消息": "messaging", "事件": "event", "工作者": "worker", "任务": "job", "集群": "cluster", "节点": "node",
    "主节点": "primary", "团队": "team", "平台": "platform", "支付": "payments", "账户": "accounts",
    "用户": "user", "接口": "API", "负载均衡": "load balancer", "监控": "monitoring", "日志": "log",
    "配置": "config", "发现": "discovery", "熔断器": "circuit breaker", "断路器": "circuit breaker",
}

_CJK_RE = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]")


def gloss(name: str, lexicon: Mapping[str, str] = ZH_EN_TERMS) -> tuple[str, list[tuple[str, str]]] | None:
    """An English reading of a name written in Chinese, word by word (longest match first);
    ``None`` unless every Chinese character is covered by ``lexicon``.

    Examples
    --------
    >>> gloss("认证服务")
    ('auth service', [('认证', 'auth'), ('服务', 'service')])
    >>> gloss("Redis 主节点"), gloss("Auth Service"), gloss("雪崩")
    (('Redis primary', [('主节点', 'primary')]), None, None)
    """
    if not _CJK_RE.search(name):
        return None
    longest = max(map(len, lexicon), default=1)
    words: list[str] = []
    used: list[tuple[str, str]] = []
    i = 0
    while i < len(name):
        if not _CJK_RE.match(name[i]):
            j = i
            while j < len(name) and not _CJK_RE.match(name[j]):
                j += 1
            if name[i:j].strip():
                words.append(name[i:j].strip())
            i = j
            continue
        for size in range(min(longest, len(name) - i), 0, -1):
            if name[i:i + size] in lexicon:
                used.append((name[i:i + size], lexicon[name[i:i + size]]))
                words.append(lexicon[name[i:i + size]])
                i += size
                break
        else:
            return None
    return " ".join(words), used


def cross_language_suggestions(names: Sequence[str], neighbours: Mapping[str, Collection[str]] | None = None,
                               lexicon: Mapping[str, str] = ZH_EN_TERMS,
                               articles: Iterable[str] = DEFAULT_ARTICLES) -> list[MergeSuggestion]:
    """Chinese names whose English gloss (:func:`gloss`) is another name's key, best first.

    ``neighbours`` (name -> names it is linked to in the graph) adds evidence: each linked name
    the two share, or whose own glosses match, raises the score and is named in the reason.

    Examples
    --------
    >>> [(s.a, s.b, s.reason) for s in cross_language_suggestions(["Auth Service", "认证服务", "Redis"])]
    [('Auth Service', '认证服务', 'translation: 认证 = auth, 服务 = service')]
    """
    articles = tuple(articles)
    by_key: dict[str, str] = {}
    for name in names:
        by_key.setdefault(name_key(name, articles), name)
    neighbours = neighbours or {}

    def reading(name: str) -> str:
        glossed = gloss(name, lexicon)
        return name_key(glossed[0] if glossed else name, articles)

    found = []
    for name in names:
        glossed = gloss(name, lexicon)
        if glossed is None:
            continue
        twin = by_key.get(name_key(glossed[0], articles))
        if twin is None or twin == name:
            continue
        mine = {reading(n) for n in neighbours.get(name, ())}
        shared = sorted(n for n in neighbours.get(twin, ()) if reading(n) in mine)
        reason = "translation: " + ", ".join(f"{zh} = {en}" for zh, en in glossed[1])
        if shared:
            reason += "; both linked to " + ", ".join(shared[:3])
        found.append(MergeSuggestion(twin, name, round(min(0.97, 0.8 + 0.05 * len(shared)), 6), reason))
    found.sort(key=lambda s: (-s.score, s.a, s.b))
    return found


# "A (B)", "A（B）", "A, also called B", "A aka B", "A 又称 B": a note or a glossary record says
# that two names are one.
_PAREN_RE = re.compile(r"([^()（）\n]{1,80}?)\s*[（(]\s*([^()（）\n]{1,60}?)\s*[)）]")
_AKA_RE = re.compile(r"([^,;.\n]{1,80}?)[,，]?\s+(?:also (?:called|known as)|aka|a\.k\.a\.)\s+([^,;.\n)]{1,60})"
                     r"|([^，。；\n]{1,40}?)(?:又称|也叫|简称)([^，。；\n]{1,40})", re.IGNORECASE)


def _known_suffix(text: str, known: Mapping[str, str], articles: tuple[str, ...]) -> str | None:
    """The longest known name that ``text`` ends with (by name key)."""
    text = text.strip()
    for start in range(0, len(text)):
        if start and text[start - 1].isalnum() and text[start].isalnum() and not _CJK_RE.match(text[start]):
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
        pairs = [(m.group(1), m.group(2), m.group(0)) for m in _PAREN_RE.finditer(text)]
        pairs += [(m.group(1) or m.group(3), m.group(2) or m.group(4), m.group(0)) for m in _AKA_RE.finditer(text)]
        for left, right, quote in pairs:
            b = known.get(name_key(right, articles))
            a = _known_suffix(left, known, articles)
            if not a or not b or name_key(a, articles) == name_key(b, articles):
                continue
            pair = _key_pair(a, b, articles)
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


def _key_pair(a: str, b: str, articles: tuple[str, ...]) -> tuple[str, str]:
    """The name keys of two names, smaller first: one pair however the two are ordered."""
    x, y = name_key(a, articles), name_key(b, articles)
    return (x, y) if x <= y else (y, x)


def combine_suggestions(*groups: Iterable[MergeSuggestion], articles: Iterable[str] = DEFAULT_ARTICLES
                        ) -> list[MergeSuggestion]:
    """One suggestion per pair of names (by name key): the highest score, every reason, best first.

    Examples
    --------
    >>> a = [MergeSuggestion("A b", "Ab c", 0.86, "name similarity")]
    >>> b = [MergeSuggestion("Ab c", "A b", 0.9, "translation: x = y")]
    >>> [(s.a, s.b, s.score, s.reason) for s in combine_suggestions(a, b)]
    [('A b', 'Ab c', 0.9, 'name similarity + translation: x = y')]
    """
    articles = tuple(articles)
    merged: dict[tuple[str, str], MergeSuggestion] = {}
    for group in groups:
        for s in group:
            pair = _key_pair(s.a, s.b, articles)
            old = merged.get(pair)
            if old is None:
                merged[pair] = s
            else:
                merged[pair] = MergeSuggestion(old.a, old.b, max(old.score, s.score), f"{old.reason} + {s.reason}")
    return sorted(merged.values(), key=lambda s: (-s.score, s.a, s.b))


# -- ranking and paging ------------------------------------------------------------------------

#: Evidence ranks, strongest first: a text declares the two one; one translates the other; they
#: mean alike (embeddings) or are one name written two ways (the same letters, a plural); only
#: their spelling is near ("Sign-in", "Signing").
EVIDENCE_RANKS = ("declared", "look-alike", "translation", "similar", "spelling")
_CALENDAR_WORDS = frozenset(
    [m.lower() for m in ("January February March April May June July August September October November December "
                         "Jan Feb Mar Apr Jun Jul Aug Sep Sept Oct Nov Dec Monday Tuesday Wednesday Thursday "
                         "Friday Saturday Sunday").split()])


def is_number_or_date(name: str) -> bool:
    """Whether a name is only a number, a year or a date ("2024", "1.5", "14 February 2024",
    "2024-05-02", "Q3 2024"): such names are never merge suggestions.

    >>> [is_number_or_date(n) for n in ("2024", "14 February 2024", "2024-05-02", "Q3 2024", "BREATHE-2", "8 GB")]
    [True, True, True, True, False, False]
    """
    words = re.findall(r"[^\W\d_]+", re.sub(r"\b[qh][1-4]\b", "", name.casefold()))
    return any(ch.isdigit() for ch in name) and all(w in _CALENDAR_WORDS or w in ("st", "nd", "rd", "th", "of")
                                                    for w in words)


def _differ_in_numbers(a: str, b: str) -> bool:
    """Whether two names are the same words with different numbers ("BREATHE-2", "BREATHE-3";
    "2023 review", "2024 review"): numbered things are different things."""
    ka, kb = name_key(a), name_key(b)
    return ka != kb and re.sub(r"\d+", "#", ka) == re.sub(r"\d+", "#", kb)


def evidence_rank(suggestion: MergeSuggestion) -> int:
    """The index in :data:`EVIDENCE_RANKS` of a suggestion's strongest evidence, read from its reason.

    >>> evidence_rank(MergeSuggestion("Sign-in", "Signing", 0.86, "name similarity"))
    4
    >>> evidence_rank(MergeSuggestion("Auth Service", "Auth Services", 0.96, "name similarity"))
    3
    >>> evidence_rank(MergeSuggestion("@mara.chen", "Mara Chen", 0.94, "name similarity"))
    3
    >>> EVIDENCE_RANKS[evidence_rank(MergeSuggestion("R\u0435dis", "Redis", 0.99, "look-alike: ..."))]
    'look-alike'
    """
    reason = suggestion.reason
    if "declared in " in reason:
        return 0
    if "look-alike:" in reason:
        return 1
    if "translation:" in reason:
        return 2
    if "embedding similarity" in reason:
        return 3
    ka, kb = sorted((re.sub(r"[\W_]+", "", name_key(suggestion.a)), re.sub(r"[\W_]+", "", name_key(suggestion.b))),
                    key=len)
    if kb in (ka, ka + "s", ka + "es"):  # the same letters ("@mara.chen", "Mara Chen") or a plural
        return 3
    spelling = ("name similarity", "near-identical names")
    return 4 if any(part.startswith(spelling) for part in reason.split(" + ")) else 3


def rank_suggestions(suggestions: Iterable[MergeSuggestion]) -> list[MergeSuggestion]:
    """Suggestions ranked by evidence (:func:`evidence_rank`), then score; numbers, years, dates and
    names that differ only in their numbers are left out.

    >>> found = [MergeSuggestion("2024", "2023", 0.9, "name similarity"),
    ...          MergeSuggestion("Sign-in", "Signing", 0.86, "name similarity"),
    ...          MergeSuggestion("token cache", "令牌缓存", 0.8, "translation: 令牌 = token, 缓存 = cache")]
    >>> [(s.a, s.b) for s in rank_suggestions(found)]
    [('token cache', '令牌缓存'), ('Sign-in', 'Signing')]
    """
    kept = [s for s in suggestions
            if not is_number_or_date(s.a) and not is_number_or_date(s.b) and not _differ_in_numbers(s.a, s.b)]
    return sorted(kept, key=lambda s: (evidence_rank(s), -s.score, s.a, s.b))


@dataclass(frozen=True)
class SuggestionPage:
    """One page of the ranked merge suggestions, and how many there are in all."""

    total: int
    """Suggestions in all."""
    page: int
    """This page's number, from 1."""
    per_page: int
    """Suggestions per page."""
    suggestions: tuple[MergeSuggestion, ...]
    """This page's suggestions, best first."""

    @property
    def pages(self) -> int:
        """Pages in all (at least 1)."""
        return max(1, -(-self.total // self.per_page))

    @property
    def first(self) -> int:
        """The rank of this page's first suggestion, from 1."""
        return (self.page - 1) * self.per_page + 1

    def to_json(self) -> dict:
        return to_json(self, order=("total", "page", "pages", "per_page"), pages=self.pages,
                       suggestions=[{"rank": self.first + i, "a": s.a, "b": s.b, "score": s.score, "reason": s.reason,
                                     "evidence": EVIDENCE_RANKS[evidence_rank(s)]}
                                    for i, s in enumerate(self.suggestions)])


def page_of(suggestions: Sequence[MergeSuggestion], page: int = 1, per_page: int = 12) -> SuggestionPage:
    """Page ``page`` (from 1) of ``per_page`` suggestions.

    >>> found = [MergeSuggestion(f"n{i}", f"m{i}", 0.9, "name similarity") for i in range(5)]
    >>> p = page_of(found, page=2, per_page=2)
    >>> p.total, p.pages, [s.a for s in p.suggestions]
    (5, 3, ['n2', 'n3'])
    >>> page_of(found, page=4, per_page=2)
    Traceback (most recent call last):
    ...
    ValueError: page 4 does not exist: 5 suggestions make 3 pages of 2
    """
    if per_page < 1:
        raise ValueError(f"per_page must be at least 1, got {per_page}")
    pages = max(1, -(-len(suggestions) // per_page))
    if not 1 <= page <= pages:
        raise ValueError(f"page {page} does not exist: {len(suggestions)} suggestions make {pages} "
                         f"page{'s' if pages != 1 else ''} of {per_page}")
    start = (page - 1) * per_page
    return SuggestionPage(len(suggestions), page, per_page, tuple(suggestions[start:start + per_page]))
