"""Which entities a question names, and whether it asks what breaks when something fails.

The entities a question names are found in its text: word n-grams folded like entity names
(so "auth-service", "AuthService" and aliases match), then display names as substrings (names
inside Chinese text, which has no spaces), longest first.

Examples
--------
>>> bool(is_failure_question("If Redis goes down, what breaks?"))
True
>>> bool(is_failure_question("How is the login flow related to Redis?"))
False
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from .cache import indexes_for
from ..text.tokenize import ENGLISH_STOPWORDS

if TYPE_CHECKING:
    from ..corpus.workspace_view import WorkspaceView

__all__ = ["FAILURE_WORDS", "find_entities", "is_failure_question"]

#: Words that make a question a failure question; they never name an entity in one.
FAILURE_WORDS = re.compile(
    r"\b(?:fail\w*|go(?:es)?\s+down|went\s+down|down|outage\w*|break\w*|broke\w*|impact\w*|affect\w*|"
    r"unavailable|crash\w*|dies|died|dead|offline|stops?|stopped)\b|故障|宕机|挂了|不可用|影响|中断",
    re.IGNORECASE,
)
_WORD = re.compile(r"\w[\w.'/-]*\w|\w")
_MAX_NGRAM = 6


def is_failure_question(query: str) -> bool:
    """Whether the query asks what breaks when something fails."""
    return FAILURE_WORDS.search(query) is not None


def _overlaps(span: tuple[int, int], taken: list[tuple[int, int]]) -> bool:
    return any(span[0] < end and start < span[1] for start, end in taken)


def find_entities(ws: WorkspaceView, query: str) -> list[str]:
    """Keys of the graph entities named in ``query``, in the order they appear.

    Longer names win over the names inside them ("auth service" over "service"); failure
    words ("outage") and stopwords never count as names.
    """
    from ..text.name_keys import name_key

    graph = ws.graph
    indexes = indexes_for(ws)
    words = [(m.start(), m.end()) for m in _WORD.finditer(query)]
    found: list[tuple[int, str]] = []
    taken: list[tuple[int, int]] = []

    def accept(span: tuple[int, int], key: str) -> None:
        text = query[span[0]:span[1]]
        if FAILURE_WORDS.fullmatch(text.strip()) or key in {f[1] for f in found}:
            return
        found.append((span[0], key))
        taken.append(span)

    # Word n-grams folded like names catch "auth-service", "AuthService" and aliases.
    for n in range(min(_MAX_NGRAM, len(words)), 0, -1):
        for i in range(len(words) - n + 1):
            span = (words[i][0], words[i + n - 1][1])
            if _overlaps(span, taken):
                continue
            grams = [query[s:e].casefold() for s, e in words[i:i + n]]
            if all(g in ENGLISH_STOPWORDS for g in grams):
                continue
            text = query[span[0]:span[1]]
            for key in (indexes.key_of(text), name_key(text)):
                if key and key in graph:
                    accept(span, key)
                    break
    # Display names as substrings catch names inside Chinese text, which has no spaces; a query
    # written in ASCII alone is covered by the n-grams, and a scan of every name costs milliseconds.
    folded = query.casefold()
    for name in (_names_within(folded, indexes.entity_names, indexes.name_lengths) if not query.isascii() else ()):
        if len(name) < 2 or name in ENGLISH_STOPWORDS:
            continue
        for key in indexes.entity_names[name]:
            start = folded.find(name)
            while start != -1:
                span = (start, start + len(name))
                bounded = ((start == 0 or not folded[start - 1].isascii() or not folded[start - 1].isalnum())
                           and (span[1] == len(folded) or not folded[span[1]].isascii()
                                or not folded[span[1]].isalnum()))
                if bounded and not _overlaps(span, taken):
                    accept(span, key)
                    break
                start = folded.find(name, start + 1)
    return [key for _, key in sorted(found)]


def _names_within(text: str, names: Mapping[str, object], lengths: Sequence[int]) -> list[str]:
    """The ``names`` written somewhere in ``text``, longest first, then alphabetical: each of its
    substrings of a length some name has, looked up.

    >>> _names_within("at the auth service", {"auth service": 1, "auth": 1, "redis": 1}, (12, 5, 4))
    ['auth service', 'auth']
    """
    present = {text[start:start + length] for length in lengths if length <= len(text)
               for start in range(len(text) - length + 1)} & names.keys()
    return sorted(present, key=lambda name: (-len(name), name))
