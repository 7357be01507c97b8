"""Tokens for keyword search, chosen by script: jieba for Chinese, literal words for the rest.

Chinese runs are segmented with jieba (imported on first use, so English-only work never
loads it). Everything else is split into lower-cased words with English stopwords removed.
Identifiers and paths match literally: ``ECONNREFUSED``, ``snake_case_names``,
``src/auth/token_cache.py`` and ``7.2`` are each one token. A compound token also yields its
path segments and its alphanumeric sub-words, so the query "token cache" still finds
``token_cache.py`` and ``TokenCache``.

Examples
--------
>>> tokenize("The service failed with ECONNREFUSED")
['service', 'failed', 'econnrefused']
>>> tokenize("See src/auth/token_cache.py")
['see', 'src/auth/token_cache.py', 'src', 'auth', 'token_cache.py', 'token', 'cache', 'py']
>>> tokenize("Redis 7.2")
['redis', '7.2']
>>> script_of("Redis 缓存"), script_of("Redis cache")
('cjk', 'latin')
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Literal

__all__ = [
    "TOKENIZER_VERSION",
    "tokenize",
    "script_of",
    "ENGLISH_STOPWORDS",
    "CHINESE_STOPWORDS",
]

#: Raised whenever :func:`tokenize` gives other tokens for a text: a keyword index kept on disk by
#: another version is built again.
TOKENIZER_VERSION = 1

#: Common English function words; they carry no topic, so neither queries nor chunks keep them.
ENGLISH_STOPWORDS: frozenset[str] = frozenset(
    """
    a about above after again against all am an and any are as at be because been before being
    below between both but by can could did do does doing down during each few for from further
    had has have having he her here hers herself him himself his how i if in into is it its itself
    just me more most my myself no nor not now of off on once only or other our ours ourselves out
    over own same she should so some such than that the their theirs them themselves then there
    these they this those through to too under until up very was we were what when where which
    while who whom why will with would you your yours yourself yourselves
    s t d ll m re ve don doesn didn isn aren wasn weren hasn haven hadn won wouldn shouldn couldn
    """.split()
)

#: Chinese particles and conjunctions that jieba returns as words of their own.
CHINESE_STOPWORDS: frozenset[str] = frozenset("的 了 是 在 和 与 及 或 也 就 都 而 被 把 这 那 之 等".split())

# Han ideographs (basic, extension A, compatibility) are written without spaces between
# words, so their runs go to jieba. Kana and Hangul count as CJK for `script_of`, but jieba
# would cut them into single characters: they keep the word rule (Korean has spaces).
_HAN_CHARS = "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
_HAN_RUN = re.compile(f"[{_HAN_CHARS}]+")
_HAS_CJK = re.compile(f"[{_HAN_CHARS}\u3040-\u30ff\uac00-\ud7af]")

# A word, or words joined without spaces by path, dot, dash, colon or @ characters:
# "redis.conf", "/etc/redis/redis.conf", "auth-service", "redis:6379", "7.2". A joiner at the
# end ("Redis." closing a sentence) is punctuation and is not part of the token.
_LATIN_TOKEN = re.compile(r"\w+(?:[./\\:@-]\w+)*")
_PATH_SEPARATOR = re.compile(r"[/\\]")
_NOT_ALNUM = re.compile(r"[\W_]+")
# Where a camelCase word splits: "getUserToken" -> get|User|Token, "parseHTTPRequest" ->
# parse|HTTP|Request. Only words with a lower-to-upper step count as camelCase, so "OAuth"
# and "HTTPServer" stay whole.
_CAMEL_BOUNDARY = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")
_IS_CAMEL = re.compile(r"[a-z][A-Z]")
_HAS_LETTER = re.compile(r"[^\W\d_]")

_jieba = None


def _segmenter():
    """The jieba module, imported and silenced on first use (it builds a cache at its first call)."""
    global _jieba
    if _jieba is None:
        import jieba

        jieba.setLogLevel(60)
        _jieba = jieba
    return _jieba


def script_of(text: str) -> Literal["cjk", "latin"]:
    """``"cjk"`` when the text holds any Chinese, Japanese or Korean character, else ``"latin"``.

    Examples
    --------
    >>> script_of("缓存雪崩"), script_of("cache stampede")
    ('cjk', 'latin')
    """
    return "cjk" if _HAS_CJK.search(text) else "latin"


def tokenize(text: str) -> list[str]:
    """Split text into search tokens: Chinese runs by jieba, the rest by the literal word rule.

    Parameters
    ----------
    text : str
        Any text; Chinese and English may be mixed.

    Returns
    -------
    list of str
        Tokens in text order, repeated as often as they occur (BM25 counts them). Whitespace,
        punctuation and stopwords are dropped.

    Examples
    --------
    >>> tokenize("Redis 缓存雪崩的原因")
    ['redis', '缓存', '雪崩', '原因']
    >>> tokenize("snake_case_names and getUserToken")
    ['snake_case_names', 'snake', 'case', 'names', 'getusertoken', 'get', 'user', 'token']
    """
    tokens: list[str] = []
    position = 0
    for run in _HAN_RUN.finditer(text):
        tokens.extend(_latin_tokens(text[position : run.start()]))
        tokens.extend(_cjk_tokens(run.group()))
        position = run.end()
    tokens.extend(_latin_tokens(text[position:]))
    return tokens


def _cjk_tokens(run: str) -> list[str]:
    """Segment a run of Han characters, dropping Chinese stopwords."""
    return [w for w in _segmenter().lcut(run) if w.strip() and w not in CHINESE_STOPWORDS]


def _latin_tokens(text: str) -> list[str]:
    """Lower-cased words and literal identifiers, each compound followed by its parts."""
    tokens: list[str] = []
    for raw in _LATIN_TOKEN.findall(text):
        tokens.extend(_word_tokens(raw))
    return tokens


@lru_cache(maxsize=1 << 16)
def _word_tokens(raw: str) -> tuple[str, ...]:
    """Tokens of one word (cached: word frequencies are skewed, most words repeat)."""
    whole = raw.lower()
    parts = _parts_of(raw)
    if not parts:
        return () if whole in ENGLISH_STOPWORDS else (whole,)
    return tuple(dict.fromkeys([whole, *parts]))


def _parts_of(raw: str) -> list[str]:
    """Path segments and sub-words of a compound token; empty for a plain word or a number.

    Numbers and versions ("7.2", "2024-01-05") stay whole: their digit parts would match
    unrelated numbers. One-character parts and stopwords are dropped.
    """
    is_compound = _NOT_ALNUM.search(raw) is not None
    is_camel = _IS_CAMEL.search(raw) is not None
    if not (is_compound or is_camel) or not _HAS_LETTER.search(raw):
        return []
    candidates: list[str] = []
    if _PATH_SEPARATOR.search(raw):
        candidates.extend(segment.lower() for segment in _PATH_SEPARATOR.split(raw))
    for piece in _NOT_ALNUM.split(raw):
        candidates.extend(word.lower() for word in _CAMEL_BOUNDARY.split(piece))
    # One rule for path segments and sub-words alike ("0\\A" gives no "a").
    return [part for part in candidates if len(part) > 1 and part not in ENGLISH_STOPWORDS]
