"""Name keys: the one folding of a written name that decides which names are one entity.

:func:`name_key` folds case, spaces, hyphens, underscores, camelCase, leading articles and
trailing punctuation, after NFKC; :func:`display_form` is a surface form as shown;
:func:`skeleton` maps letters that only look Latin to the Latin ones (for look-alike
suggestions, never for keys).

Examples
--------
>>> name_key("The Auth Service"), name_key("auth-service"), name_key("AuthService")
('authservice', 'authservice', 'authservice')
"""

from __future__ import annotations

import functools
import re
import unicodedata
from collections.abc import Iterable


__all__ = ["NAME_KEY_VERSION", "DEFAULT_ARTICLES", "name_key", "display_form", "skeleton"]


#: Bumped when :func:`name_key` folds differently (2: NFKC), so graphs derived before are rebuilt.
NAME_KEY_VERSION = 2


#: Cyrillic and Greek letters drawn like Latin ones (after NFKC), and the Latin letter they pass for.
_CONFUSABLE = str.maketrans({
    **dict(zip("аеорсухіјѕԁԛԝһӏвкмнтгп", "aeopcyxijsdqwhlbkmhtrn")),
    **dict(zip("АВЕКМНОРСТХУІЈЅԌ", "ABEKMHOPCTXYIJSG")),
    **dict(zip("αοιυνρτκχεγ", "aoiuvptkxey")),
    **dict(zip("ΑΒΕΖΗΙΚΜΝΟΡΤΥΧ", "ABEZHIKMNOPTYX")),
})


#: The leading words a name key drops unless told otherwise; the default of the setting
#: ``canonicalization.articles``, which takes it from here (this floor imports no settings).
DEFAULT_ARTICLES: tuple[str, ...] = ("the", "a", "an")


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


#: One character for which ``str.isalnum`` holds (``\w`` is exactly those and "_"; checked over
#: every code point): one regex search instead of a generator over the characters.
_ALNUM_RE = re.compile(r"[^\W_]")


def _has_alnum(text: str) -> bool:
    return _ALNUM_RE.search(text) is not None


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
    return _name_key(name, articles if isinstance(articles, tuple) else tuple(articles))


#: Surfaces whose keys are remembered: an ingest keys each mention three times (the extractor,
#: the record, the derivation) and a corpus writes the same names again and again.
KEYS_REMEMBERED = 1 << 16


@functools.lru_cache(maxsize=KEYS_REMEMBERED)
def _name_key(name: str, articles: tuple[str, ...]) -> str:
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
    return _display_form(surface, articles if isinstance(articles, tuple) else tuple(articles))


@functools.lru_cache(maxsize=KEYS_REMEMBERED)
def _display_form(surface: str, articles: tuple[str, ...]) -> str:
    words = _drop_leading_articles(surface.split(), articles)
    text = " ".join(words)
    stripped = _strip_marks(text, leading=False).strip()
    return stripped if _has_alnum(stripped) or not _has_alnum(text) else text
