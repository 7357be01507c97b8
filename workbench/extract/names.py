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

from .base import Extraction
from ..model import Chunk, Document, Mention

__all__ = ["NameExtractor", "GENERIC_TYPES", "STOP_NAMES", "capitalised_inside", "extract_names", "joined_words", "name_words",
           "names_at", "title_surface"]

#: Types given by this extractor, weakest last: an entity that a typed pattern also finds
#: (``technology``, ``service``, ``person``...) keeps that pattern's type.
GENERIC_TYPES = ("title", "name", "date")

# A word of a name: letters/digits with inner apostrophes, dots, hyphens or ampersands ("O'Neil", "U.S.").
_WORD = re.compile(r"[^\W_]+(?:['\u2019.\-&][^\W_]+)*", re.UNICODE)
# Lower-case words allowed inside a proper-noun phrase ("Bank of England", "Leonardo da Vinci").
# "and" is left out: "Norway and Sweden" is two names more often than "Procter and Gamble" is one.
_CONNECTORS = frozenset({"of", "the", "de", "da", "del", "der", "di", "du", "la", "le", "von", "van", "&",
                         "for", "on", "y"})
# Closed word classes, not a list tuned to a corpus: the words English capitalises only because
# a sentence starts with them (or a chat line says them), which never name anything alone.
_FUNCTION_WORDS = frozenset("""
a an the this that these those it its he she him his her hers they them their theirs we us our ours i me my mine
you your yours who whom whose what which where when why how whoever whatever whichever wherever whenever however
in on at by for from with without within into onto upon over under above below across along among amongst around
through throughout between beyond after before during since until till toward towards against about of to off out
up down via per than as like unlike despite except near besides
and but or nor so yet if unless although though because while whereas whether once either neither both
is was are were be been being am do does did done has have had having can could may might must shall should will
would not no none nobody nothing nowhere noone neither any anyone anybody anything anywhere some someone somebody
something somewhere every everyone everybody everything everywhere each all most many much more few fewer less
least several other others another such same own only also even just still already almost again ever never always
often sometimes usually perhaps maybe then there here thus hence therefore meanwhile nevertheless nonetheless
moreover furthermore otherwise instead indeed anyway besides finally firstly secondly lastly
now today tonight tomorrow yesterday sadly luckily fortunately unfortunately hopefully clearly obviously
""".split())
_INTERJECTIONS = frozenset("""
ok okay oh ah aha hey hi hello bye goodbye yes yeah yep no nope thanks thank thx please sorry sure great cool
nice good fine right well wow oops ugh hmm lol welcome morning afternoon evening cheers congrats agreed done
""".split())
_CALENDAR = frozenset("""
january february march april may june july august september october november december
monday tuesday wednesday thursday friday saturday sunday
""".split())
# Titles before a name ("Dr. Sarah Chen"): the name is what follows.
_TITLES = frozenset({"dr", "prof", "professor", "mr", "mrs", "ms", "mx", "sir", "dame"})
# Roles written before a name ("Coach Danny Reid"): dropped when a name of two words or more follows.
_ROLES = frozenset("""
mayor chair chairman chairwoman chairperson coach captain conductor curator director president senator governor
minister councillor reverend father sister brother bishop judge officer inspector detective sergeant
""".split())
#: Unit symbols, as written after a number ("25 C", "3.5 GHz", "16 GB"): a measure, not a name. After a
#: degree sign ("25°C", "100 °F") any single letter is one.
_UNITS = frozenset("""
C F K Hz kHz MHz GHz THz KB kB MB GB TB PB KiB MiB GiB TiB Kbps Mbps Gbps W kW MW GW kWh MWh V mV kV mA Pa kPa MPa
hPa J kJ MJ N L mL
""".split())
_NUMBER_THEN_DEGREE = re.compile(r"\d[ \u00a0]*(\u00b0)?[ \u00a0]*\Z")
#: Capitalised words that start sentences without naming anything: function words,
#: interjections, month and weekday words, and the titles written before a name.
STOP_NAMES = _FUNCTION_WORDS | _INTERJECTIONS | _CALENDAR | _TITLES
_POSSESSIVE_ENDINGS = ("'s", "\u2019s")
_QUOTED = re.compile(r"[\"\u201c`]{1,2}\s*([^\"\u201c\u201d`']{2,80}?)\s*(?:[\"\u201d]|'')")
_MONTHS = "January|February|March|April|May|June|July|August|September|October|November|December"
# The lookahead (a digit or a month's capital) is implied by every branch: it rejects most
# positions in one step where the branches would be tried one by one at every position.
# A bare number is a date only as a year of four digits from 1000 to 2199: "53050" in "Review
# 53050" or "100000" rows are counts and labels, and a corpus of numbered notes made one entity of each.
_DATE = re.compile(rf"(?=[\dJFMASOND])(?:(?<![\w-])(?:1\d|2[01])\d\d(?![\w-])|\b\d{{1,2}} (?:{_MONTHS}) \d{{4}}\b"
                   rf"|\b(?:{_MONTHS}) \d{{1,2}}, \d{{4}}\b)")


def name_words(text: str) -> list[tuple[str, int, int]]:
    """The words of ``text`` as ``(casefolded word, start, end)``: what names are matched on.

    >>> [w for w, _, _ in name_words("The Wiley-Blackwell, in Chen's 2001.")]
    ['the', 'wiley-blackwell', 'in', 'chen', '2001']
    """
    folded = text.casefold()
    # Case folding is per character and never shortens one, so a text that keeps its length
    # folds each word to the same slice of the folded text.
    aligned = len(folded) == len(text)
    words = []
    for m in _WORD.finditer(text):
        start, end = m.span()
        words.append((_unpossessive(folded[start:end] if aligned else m.group().casefold()), start, end))
    return words


#: ASCII letters and digits in words joined by single spaces: most names. Their words are the name
#: lowercased (ASCII's lower() is its casefold(); no word holds an apostrophe to drop).
_PLAIN_NAME = re.compile(r"[A-Za-z0-9]+(?: [A-Za-z0-9]+)*")


def joined_words(text: str) -> str:
    """The casefolded words of ``text`` (:func:`name_words`) joined by one space; a plain ASCII
    name is lowercased without being split (most names are, and splitting is the costly part).

    >>> joined_words("The  Wiley-Blackwell, Chen's"), joined_words("Ann Lee 2")
    ('the wiley-blackwell chen', 'ann lee 2')
    """
    if _PLAIN_NAME.fullmatch(text):
        return text.lower()
    return " ".join(word for word, _, _ in name_words(text))


def _unpossessive(folded: str) -> str:
    """A casefolded word without its possessive ending: "chen's" -> "chen" (a word holds no
    line break, so this is the regex ``['\u2019]s$`` without a regex call)."""
    return folded[:-2] if folded.endswith(_POSSESSIVE_ENDINGS) else folded


def _stop_form(word: str) -> str:
    """The form a word is checked against :data:`STOP_NAMES` in: "Monday's" and "Tuesdays" as the day."""
    folded = _unpossessive(word.casefold()).rstrip("'\u2019")
    if folded.endswith("s") and folded[:-1] in _CALENDAR:
        return folded[:-1]
    return folded


def _marked(word: str) -> bool:
    """Whether a word's shape marks it as a name wherever it stands: capitals after its first
    letter ("ARIEL", "PostgreSQL") or a digit ("S3")."""
    return any(ch.isupper() for ch in word[1:]) or any(ch.isdigit() for ch in word)


def _is_unit(text: str, word) -> bool:
    """Whether ``word`` is a unit written after a number: "C" in "25°C" and "25 C", "GHz" in "3.5 GHz"."""
    written = word.group()
    if len(written) > 4:
        return False
    after_number = _NUMBER_THEN_DEGREE.search(text, max(0, word.start() - 6), word.start())
    return after_number is not None and (written in _UNITS or (after_number.group(1) is not None and len(written) == 1))


def _opens_sentence(text: str, words: list, i: int) -> bool:
    """Whether word ``i`` opens a sentence, a line, a heading or a label ("Decision: ..."), where
    English capitalises any word."""
    if i == 0:
        return not text[:words[0].start()].strip(" \t#>*-\"'\u201c([")
    gap = text[words[i - 1].end():words[i].start()]
    if any(mark in gap for mark in "!?:;\u2014") or ("\n" in gap and not _joins(text, words[i - 1], gap)):
        return True  # a line break opens a line, unless it only wraps prose
    if "." in gap:  # not after a title or an initial: "Dr. Chen", "J. Smith"
        before = words[i - 1].group()
        return not before[:1].isupper() or (before.casefold() not in _TITLES and len(before) > 1)
    return False


#: A line at least this long that breaks inside a sentence is wrapped prose.
_WRAPPED_LINE = 60


def _after(text: str, word) -> str:
    return text[word.end():word.end() + 1]


def _joins(text: str, before, gap: str) -> bool:
    """Whether a name may run on over ``gap``: spaces or a hyphen; the line break of wrapped
    prose (not after a heading or a list line); the apostrophe of a plural possessive
    ("the Patients' Forum")."""
    bare = gap.strip(" \t")
    if not bare or bare == "-":
        return True
    if bare in ("'", "\u2019") and gap[0] in "'\u2019" and before.group().endswith("s"):
        return True
    if bare == "\n":  # wrapped prose runs to about the wrap width; a title or a list line does not
        line = text[text.rfind("\n", 0, before.start()) + 1:before.end()].lstrip()
        return (len(line) >= _WRAPPED_LINE and not line.startswith(("#", "-", "*", "|", ">"))
                and not re.match(r"\d+[.)]\s", line))
    return False


def capitalised_inside(texts: Sequence[str]) -> set[str]:
    """Casefolded words that ``texts`` capitalise where no sentence starts and never write in
    lower case: the evidence that a capitalised word opening a sentence is a name.

    >>> sorted(capitalised_inside(["Chen wrote it. Then Sarah Chen left the Patients' Forum to patients."]))
    ['chen', 'forum', 'sarah']
    """
    found: set[str] = set()
    lower: set[str] = set()
    for text in texts:
        words = list(_WORD.finditer(text))
        for i, word in enumerate(words):
            written = word.group()
            if written[0].islower():
                lower.add(_unpossessive(written.casefold()))
            elif written[0].isupper() and not _opens_sentence(text, words, i):
                found.add(_unpossessive(written.casefold()))
    return found - lower


def _proper_nouns(text: str, evidence: set[str] | None = None) -> list[tuple[int, str]]:
    words = list(_WORD.finditer(text))
    evidence = capitalised_inside([text]) if evidence is None else evidence
    found: list[tuple[int, str]] = []
    i = 0
    while i < len(words):
        if not words[i].group()[:1].isupper():
            i += 1
            continue
        j = i + 1
        while j < len(words):
            gap = text[words[j - 1].end():words[j].start()]
            if not _joins(text, words[j - 1], gap):  # punctuation or a paragraph ends a name
                break
            following = words[j].group()
            if following[:1].isupper() or (following.casefold() in _CONNECTORS and j + 1 < len(words)
                                           and words[j + 1].group()[:1].isupper()):
                j += 1
                continue
            break
        first, last = i, j
        initial = _opens_sentence(text, words, i)
        if _is_unit(text, words[first]):
            first += 1  # "25°C on Monday": a measure, then what follows it
        while first < last and _stop_form(words[first].group()) in STOP_NAMES:
            first += 1
        if last - first >= 3 and words[first].group().casefold() in _ROLES:
            first += 1
        while first < last and words[last - 1].group().casefold() in _CONNECTORS:
            last -= 1
        while last - first == 1 and _stop_form(words[first].group()) in STOP_NAMES:
            first += 1  # "Every Monday": the day alone is no name
        # A single word that opens a sentence is capitalised by English, not by its meaning: a
        # name only if the text also capitalises it mid-sentence or its shape marks it.
        if (initial and first == i and last - first == 1 and not _marked(words[first].group())
                and _unpossessive(words[first].group().casefold()) not in evidence):
            first = last
        if first < last:
            found.append((words[first].start(), " ".join(
                w.group() + ("'" if _after(text, w).startswith(("'", "\u2019")) and k + 1 < last else "")
                for k, w in enumerate(words[first:last], first))))
        i = j
    return found


def names_at(text: str, evidence: set[str] | None = None) -> list[tuple[int, str, str]]:
    """``(offset, name as written, type)`` for the proper nouns, quoted names and dates of ``text``, in order.

    ``evidence`` (:func:`capitalised_inside` of the whole document, by default of ``text``) lets
    a single capitalised word that opens a sentence count as a name.
    """
    found = [(start, name, "name") for start, name in _proper_nouns(text, evidence)]
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
        return self.for_document(document, chunks).extract(document, chunks)

    def for_document(self, document: Document, chunks: Sequence[Chunk]) -> _NamesOfDocument:
        """The extractor for windows of ``chunks``, with the evidence read from all of them."""
        title = title_surface(document.id, document.title)
        return _NamesOfDocument(title, capitalised_inside([title] + [chunk.text for chunk in chunks]))


class _NamesOfDocument:
    """:class:`NameExtractor` for some chunks of one document, its evidence read from all of them."""

    name = "names"

    def __init__(self, title: str, evidence: set[str]):
        self.title, self.evidence = title, evidence

    def extract(self, document: Document, chunks: Sequence[Chunk]) -> Extraction:
        result = Extraction()
        title, evidence = self.title, self.evidence
        for chunk in chunks:
            if any(ch.isalnum() for ch in title):
                result.mentions.append(Mention(title, chunk.id, "title", -1))
            for start, surface, kind in names_at(chunk.text, evidence):
                result.mentions.append(Mention(surface, chunk.id, kind, start))
        return result
