"""General names, with no engineering phrasing needed: titles, proper nouns, quotes, dates.

Most prose names its entities the same few ways, whatever the field: a document is titled
("Carl Rogers"), people, places, studies and organisations are runs of capitalised words
("University of Copenhagen", "Dr. Sarah Chen"), works are quoted ("On Becoming a Person"), and
events carry dates ("12 March 1963", "1961"). :class:`NameExtractor` turns each into a mention
typed ``title``, ``name`` or ``date``, so a corpus of papers, trials or films gets a graph as
rich as one of service notes. The typed patterns of :mod:`workbench.extract.entities` still
decide an entity's type where they match (see :data:`GENERIC_TYPES`).

Examples
--------
>>> extract_names('Carl Rogers wrote "On Becoming a Person" in 1961 at the University of Chicago.')
[('Carl Rogers', 'name'), ('On Becoming a Person', 'name'), ('Becoming', 'name'), ('Person', 'name'), \
('1961', 'date'), ('University of Chicago', 'name')]
>>> title_surface("notes/auth-service.md", "auth-service.md")
'auth service'
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import PurePosixPath

from workbench.extract.base import Extraction
from workbench.model import Chunk, Document, Mention

__all__ = ["NameExtractor", "GENERIC_TYPES", "STOP_NAMES", "extract_names", "name_words", "names_at", "title_surface"]

#: Types given by this extractor, weakest last: an entity that a typed pattern also finds
#: (``technology``, ``service``, ``person``...) keeps that pattern's type.
GENERIC_TYPES = ("title", "name", "date")

# A word of a name: letters/digits with inner apostrophes, dots, hyphens or ampersands ("O'Neil", "U.S.").
_WORD = re.compile(r"[^\W_]+(?:['\u2019.\-&][^\W_]+)*", re.UNICODE)
# Lower-case words allowed inside a proper-noun phrase ("Bank of England", "Leonardo da Vinci").
# "and" is left out: "Norway and Sweden" is two names more often than "Procter and Gamble" is one.
_CONNECTORS = frozenset({"of", "the", "de", "da", "del", "der", "di", "du", "la", "le", "von", "van", "&",
                         "for", "on", "y"})
#: Capitalised words that start sentences without naming anything.
STOP_NAMES = frozenset({
    "the", "a", "an", "it", "its", "he", "she", "his", "her", "they", "their", "this", "that", "these", "those",
    "in", "on", "at", "by", "for", "from", "with", "as", "after", "before", "during", "when", "while", "since",
    "there", "here", "who", "what", "which", "where", "why", "how", "whose", "is", "was", "are", "were", "and",
    "but", "or", "if", "also", "however", "although", "both", "some", "many", "most", "one", "two", "of", "to",
    "we", "i", "you", "our", "my", "not", "no", "all", "other", "each", "did", "does", "do", "has", "have",
    # Titles before a name ("Dr. Sarah Chen"): the name is what follows.
    "dr", "prof", "professor", "mr", "mrs", "ms", "sir",
    # Months and weekdays alone are dates without a day or year, not names.
    "january", "february", "march", "april", "may", "june", "july", "august", "september", "october",
    "november", "december", "monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday",
})
_POSSESSIVE = re.compile(r"['\u2019]s$")
_QUOTED = re.compile(r"[\"\u201c`]{1,2}\s*([^\"\u201c\u201d`']{2,80}?)\s*(?:[\"\u201d]|'')")
_MONTHS = "January|February|March|April|May|June|July|August|September|October|November|December"
_DATE = re.compile(rf"(?<![\w-])\d{{4,}}(?![\w-])|\b\d{{1,2}} (?:{_MONTHS}) \d{{4}}\b|\b(?:{_MONTHS}) \d{{1,2}}, \d{{4}}\b")


def name_words(text: str) -> list[tuple[str, int, int]]:
    """The words of ``text`` as ``(casefolded word, start, end)``: what names are matched on.

    >>> [w for w, _, _ in name_words("The Wiley-Blackwell, in Chen's 2001.")]
    ['the', 'wiley-blackwell', 'in', 'chen', '2001']
    """
    return [(_POSSESSIVE.sub("", m.group().casefold()), m.start(), m.end()) for m in _WORD.finditer(text)]


def _proper_nouns(text: str) -> list[tuple[int, str]]:
    words = list(_WORD.finditer(text))
    found: list[tuple[int, str]] = []
    i = 0
    while i < len(words):
        if not words[i].group()[:1].isupper():
            i += 1
            continue
        j = i + 1
        while j < len(words):
            gap = text[words[j - 1].end():words[j].start()]
            if gap.strip(" -") or "\n" in gap:  # punctuation or a line break ends a name
                break
            following = words[j].group()
            if following[:1].isupper() or (following.casefold() in _CONNECTORS and j + 1 < len(words)
                                           and words[j + 1].group()[:1].isupper()):
                j += 1
                continue
            break
        first, last = i, j
        while first < last and words[first].group().casefold() in STOP_NAMES:
            first += 1
        while first < last and words[last - 1].group().casefold() in _CONNECTORS:
            last -= 1
        if first < last:
            found.append((words[first].start(), " ".join(w.group() for w in words[first:last])))
        i = j
    return found


def names_at(text: str) -> list[tuple[int, str, str]]:
    """``(offset, name as written, type)`` for the proper nouns, quoted names and dates of ``text``, in order."""
    found = [(start, name, "name") for start, name in _proper_nouns(text)]
    for m in _QUOTED.finditer(text):
        name = m.group(1).strip()
        found.append((text.find(name, m.start(1)), name, "name"))
    found.extend((m.start(), m.group(), "date") for m in _DATE.finditer(text))
    found.sort(key=lambda item: item[0])
    return [item for item in found if any(ch.isalnum() for ch in item[1])]


def extract_names(text: str) -> list[tuple[str, str]]:
    """``(name as written, type)`` for the proper nouns, quoted names and dates of ``text``, in order."""
    return [(name, kind) for _, name, kind in names_at(text)]


def title_surface(document_id: str, title: str) -> str:
    """The name a document's title gives: the title, or the file stem in words for an untitled file."""
    path = PurePosixPath(document_id.split("#", 1)[0])
    if title in (path.name, document_id):
        return re.sub(r"[-_]+", " ", PurePosixPath(title).stem).strip()
    return title.strip()


class NameExtractor:
    """Mentions of every chunk's document title, proper nouns, quoted names and dates."""

    name = "names"

    def extract(self, document: Document, chunks: Sequence[Chunk]) -> Extraction:
        result = Extraction()
        title = title_surface(document.id, document.title)
        for chunk in chunks:
            if any(ch.isalnum() for ch in title):
                result.mentions.append(Mention(title, chunk.id, "title", -1))
            for start, surface, kind in names_at(chunk.text):
                result.mentions.append(Mention(surface, chunk.id, kind, start))
        return result
