"""The ``any_of`` guard of a pattern: whether a text holds one of some strings, case-insensitively.

A slow regular expression is run only on chunks its guard admits, so it stays off text it
cannot match. The test is the regex ``word|word|...`` with ``re.IGNORECASE``, made cheaper
where that gives the same answer: ASCII words are looked for in the lower-cased text (a plain
substring search, several times faster than the case-insensitive alternation), unless the text
holds one of the three characters that regex matches to an ASCII letter but ``str.lower`` does
not lower to that one letter (dotless "ı", long "ſ", "İ"); such a text is searched by the regex.

>>> guard = Guard(["service", "API"])
>>> guard.admits("The Auth Service"), guard.admits("a rapid fix"), guard.admits("no match")
(True, True, False)
>>> Guard(["is"]).admits("THIS"), Guard(["is"]).admits("thıs")
(True, True)
"""

from __future__ import annotations

import re
from collections.abc import Iterable

__all__ = ["Guard"]

#: Characters ``re.IGNORECASE`` matches to an ASCII letter that ``str.lower`` does not turn into
#: that one letter (found by trying every code point against every printable ASCII character;
#: no other character lowers to an ASCII one that the regex would not match to it).
_LOWER_DIFFERS = re.compile("[\u0130\u0131\u017f]")


class Guard:
    """Whether a text holds one of ``words`` (case-insensitive substrings); empty words are ignored."""

    def __init__(self, words: Iterable[str]) -> None:
        self.words = [word for word in words if word]
        self._regex = re.compile("|".join(map(re.escape, self.words)), re.IGNORECASE)
        self._lowered = tuple(w.lower() for w in self.words) if all(w.isascii() for w in self.words) else None

    @classmethod
    def of(cls, words: Iterable[str]) -> Guard | None:
        """The guard of a pattern's ``any_of`` words; None when there is none (the pattern runs everywhere).

        >>> Guard.of(["", ""]) is None, Guard.of(["team:"]).words
        (True, ['team:'])
        """
        guard = cls(words)
        return guard if guard.words else None

    def admits(self, text: str) -> bool:
        """Whether ``text`` holds one of the words, exactly as the case-insensitive regex finds."""
        if self._lowered is not None and _LOWER_DIFFERS.search(text) is None:
            lowered = text.lower()
            return any(word in lowered for word in self._lowered)
        return self._regex.search(text) is not None
