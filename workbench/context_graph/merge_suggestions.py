"""Merge suggestions: names that look like one entity, each with why, ranked and paged.

Suggestions come from spelling (:func:`suggest_merges`: name similarity, and embedding
similarity when an embedder is given), from letters that only look Latin
(:func:`lookalike_suggestions`), from translation (:func:`cross_language_suggestions`) and from
texts that declare two names one (:mod:`workbench.context_graph.declared_aliases`); :func:`combine_suggestions`
joins the reasons of a pair, :func:`rank_suggestions` orders them by evidence and
:func:`page_of` pages them. A suggestion is never applied: a person accepts it as an alias.
"""

from __future__ import annotations

import bisect
import difflib
import re
from collections import defaultdict
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from ..model.jsonable import to_json
from ..text.name_keys import DEFAULT_ARTICLES, name_key, skeleton
from ..text.safe_text import mixed_scripts
from ..settings import setting_default

__all__ = [
    "MergeSuggestion",
    "suggest_merges",
    "lookalike_suggestions",
    "ZH_EN_TERMS",
    "gloss",
    "cross_language_suggestions",
    "key_pair",
    "combine_suggestions",
    "EVIDENCE_RANKS",
    "evidence_rank",
    "is_number_or_date",
    "rank_suggestions",
    "SuggestionPage",
    "page_of",
]


def _first_name_by_key(names: Sequence[str], articles: tuple[str, ...]) -> dict[str, str]:
    """Name key -> the first of ``names`` with that key: what a name that reads as another is looked up in."""
    by_key: dict[str, str] = {}
    for name in names:
        by_key.setdefault(name_key(name, articles), name)
    return by_key


def lookalike_suggestions(names: Sequence[str], articles: Iterable[str] = DEFAULT_ARTICLES) -> list[MergeSuggestion]:
    """Pairs of names that print alike but key apart: one mixes look-alike alphabets (or is
    written in one that passes for Latin) and reads as the other. Each a merge suggestion, so a
    person decides: accept it if the two are one thing, reject it to keep the impostor apart.

    >>> [(s.a, s.b, s.reason) for s in lookalike_suggestions(["Redis", "R\u0435dis", "Kafka"])]
    [('Rеdis', 'Redis', 'look-alike: Rеdis mixes Latin+Cyrillic letters and reads as Redis')]
    """
    articles = tuple(articles)
    by_key = _first_name_by_key(names, articles)
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


#: Chinese characters (CJK ideographs): a name holding one is glossed, and a declaration may start inside a word of them.
CJK_RE = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]")


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
    if not CJK_RE.search(name):
        return None
    longest = max(map(len, lexicon), default=1)
    words: list[str] = []
    used: list[tuple[str, str]] = []
    i = 0
    while i < len(name):
        if not CJK_RE.match(name[i]):
            j = i
            while j < len(name) and not CJK_RE.match(name[j]):
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
    by_key = _first_name_by_key(names, articles)
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


def key_pair(a: str, b: str, articles: tuple[str, ...]) -> tuple[str, str]:
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
            pair = key_pair(s.a, s.b, articles)
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
