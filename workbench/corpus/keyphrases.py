"""Key phrases of groups of texts by class-based TF-IDF, and the sentences that say most.

A community's report is titled by the phrases that are frequent in its passages and rare in
the other communities' (c-TF-IDF, as BERTopic weighs topic words), not by the names of its
members. The same weights choose its points: a sentence is worth the distinctive words it
states, so an acknowledgement ("OK, go for the rollback.") is worth nothing.

Phrases are lower-cased words of three or more characters (or with a digit, such as ``s3``),
stopwords and numbers left out, and the two-word phrases they form without a stopword or
punctuation between them. A run of Chinese characters is one word.

Examples
--------
>>> counts = [phrase_counts("The partner export runs nightly. The partner export failed."),
...           phrase_counts("The warehouse migration moves the warehouse to Snowflake.")]
>>> weights = class_tfidf(counts)
>>> key_phrases(weights[0], 1), key_phrases(weights[1], 1)
(['partner export'], ['warehouse migration'])
>>> content_words("OK, go for the rollback.")
['rollback']
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from functools import lru_cache

__all__ = ["STOPWORDS", "phrase_counts", "content_words", "class_tfidf", "key_phrases", "sentence_information",
           "top_terms"]

#: Function words and the words of conversation that carry no topic.
STOPWORDS: frozenset[str] = frozenset("""
    a about above after again against all also am an and any are as at be because been before being below
    between both but by can could did do does doing down during each either every few for from further get
    got had has have having he her here hers herself him himself his how i if in into is it its itself just
    let lets like me more most much my myself no nor not now of off ok okay on once one only or other our
    ours ourselves out over own per same she should so some such than thank thanks that the their theirs
    them themselves then there these they this those through to too two under until up upon very via was we
    well were what when where which while who whom why will with within without would yes yet you your yours
    yourself yourselves sure great good done cool nice please may might must shall also still already
    three four five six seven eight nine ten first second last next new each every many several since
    sounds agreed lgtm hey hello yeah yep nope gonna across
    """.split())

#: A two-word phrase replaces its word in a title when it weighs this share of the word's weight.
BIGRAM_SHARE = 0.35

_WORD = re.compile(r"[^\W_][\w'’.-]*[^\W_]|[^\W_]")
_HAN = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]+")
_HANDLE = re.compile(r"@[\w.-]+")
_BREAK = re.compile(r"[,;:!?()\[\]{}\"“”]|\.(?:\s|$)|\n")


@lru_cache(maxsize=1 << 17)  # a corpus repeats its words: read each once
def _word(token: str) -> str | None:
    """The token as a phrase word, or None when it carries no topic."""
    w = token.casefold().strip(".'’-")
    if _HAN.fullmatch(w):
        return w
    if w in STOPWORDS or not any(c.isalpha() for c in w):
        return None
    if len(w) < 3 and not any(c.isdigit() for c in w):
        return None
    return w


def _segments(text: str) -> Iterable[list[str | None]]:
    """Each clause of ``text`` as its words (None for a stopword: a phrase never spans one)."""
    for part in _BREAK.split(_HANDLE.sub(",", text)):  # a chat handle (@ann.lee) is a speaker, not a topic
        yield [_word(t) for t in _WORD.findall(part)]


def content_words(text: str) -> list[str]:
    """The topic words of ``text``, in order (stopwords, numbers and short words left out)."""
    return [w for seg in _segments(text) for w in seg if w]


def phrase_counts(text: str) -> Counter[str]:
    """How often ``text`` writes each word and each two-word phrase."""
    counts: Counter[str] = Counter()
    for seg in _segments(text):
        for i, w in enumerate(seg):
            if w is None:
                continue
            counts[w] += 1
            nxt = seg[i + 1] if i + 1 < len(seg) else None
            if nxt is not None and nxt != w:
                counts[f"{w} {nxt}"] += 1
    return counts


def top_terms(counts: Mapping[str, int], n: int) -> dict[str, int]:
    """The ``n`` most frequent phrases (ties by phrase), what a report keeps of its texts."""
    return dict(sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))[:n])


def class_tfidf(counts: Sequence[Mapping[str, int]], only: Iterable[int] | None = None) -> list[dict[str, float]]:
    """c-TF-IDF of each class: ``tf(t, c) / |c| * log(1 + A / f(t))``.

    ``|c|`` is the number of words of class ``c``, ``A`` the mean number of words per class and
    ``f(t)`` the frequency of ``t`` over every class (BERTopic's weighting). With ``only`` (class
    indices), the weights of the other classes are left empty (every class still counts in ``A``
    and ``f``).

    Examples
    --------
    >>> w = class_tfidf([{"export": 4, "team": 2}, {"budget": 4, "team": 2}])
    >>> w[0]["export"] > w[0]["team"]
    True
    >>> class_tfidf([{"export": 4, "team": 2}, {"budget": 4, "team": 2}], only=[1])[0]
    {}
    """
    sizes = [sum(v for k, v in c.items() if " " not in k) or 1 for c in counts]
    mean = sum(sizes) / max(len(sizes), 1)
    total: Counter[str] = Counter()
    for c in counts:
        total.update(c)
    wanted = set(range(len(counts))) if only is None else set(only)
    return [{t: (v / size) * math.log(1.0 + mean / total[t]) for t, v in c.items()} if i in wanted else {}
            for i, (c, size) in enumerate(zip(counts, sizes))]


def key_phrases(weights: Mapping[str, float], n: int, min_count: Mapping[str, int] | None = None) -> list[str]:
    """The ``n`` best phrases, none sharing a word with a better one; a two-word phrase is taken
    in place of its word when it weighs at least :data:`BIGRAM_SHARE` of it (``partner export``
    over ``export``: a phrase says more than its word).

    ``min_count`` (phrase -> count) drops phrases written only once when given.
    """
    ranked = sorted(((w, t) for t, w in weights.items()
                     if w > 0 and (min_count is None or min_count.get(t, 0) >= 2)), key=lambda x: (-x[0], x[1]))
    chosen: list[str] = []
    used: set[str] = set()
    bigrams = [(w, t) for w, t in ranked if " " in t]
    for w, t in ranked:
        if len(chosen) >= n:
            break
        if " " not in t:
            better = next((b for bw, b in bigrams if bw >= BIGRAM_SHARE * w and t in b.split(" ")
                           and not used & set(b.split(" "))), None)
            t = better or t
        words = set(t.split(" "))
        if words & used or t in chosen:
            continue
        chosen.append(t)
        used |= words
    return chosen


def sentence_information(sentence: str, weights: Mapping[str, float], covered: Iterable[str] = (),
                         min_words: int = 4) -> tuple[float, set[str]]:
    """What a sentence says: the summed weight of its distinct topic words not yet ``covered``,
    and those words; 0 for a sentence of fewer than ``min_words`` topic words.

    Examples
    --------
    >>> sentence_information("OK, go for the rollback.", {"rollback": 1.0})
    (0.0, set())
    """
    words = set(content_words(sentence))
    if len(words) < min_words and not (_HAN.search(sentence) and len(sentence) >= 8):
        return 0.0, set()
    new = words - set(covered)
    return sum(weights.get(w, 0.0) for w in new), new
