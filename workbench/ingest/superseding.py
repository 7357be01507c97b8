"""SUPERSEDES candidates read from a note's own words: "This replaces the November 2024
schedule", "supersedes “Partner export schedule review”", "overrides the decision of 12 Nov".

A note's front matter may declare ``SUPERSEDES`` (a fact); a note that only *says* so in its text
gets a candidate relation, as the ``SIMILAR_TO`` candidates are: shown for a person to accept,
never an edge until accepted (``candidates --accept`` on the command line, the Corpus page in the
app). The earlier note is found by what the sentence names after the verb:

- its title (or its file's name), written out: the strongest reading;
- a date (``November 2024``, ``12 Nov 2024``, ``2024-11-12``) that matches an earlier note's date,
  the words around it deciding between two notes of that month (``schedule``, ``partner export``
  against each title).

A verb in the passive ("is superseded by") names the other direction and is left alone, as is a
sentence about things rather than notes ("Redis replaces PostgreSQL": no title, no date).

Examples
--------
>>> old = NoteRecord("d/2024-11-export.md", "Decision: nightly partner export at 04:30", "2024-11-12")
>>> other = NoteRecord("d/2024-11-billing.md", "Decision: billing batch at 01:00", "2024-11-20")
>>> new = NoteRecord("d/2025-02-export.md", "Decision: partner export at 02:00", "2025-02-03")
>>> text = "The nightly partner export starts at 02:00 UTC. This replaces the November 2024 schedule."
>>> [(t.subject, t.relation, t.object) for t in superseding_candidates([old, other, new], [("c1", new.id, text)])]
[('Decision: partner export at 02:00', 'SUPERSEDES', 'Decision: nightly partner export at 04:30')]
>>> superseding_candidates([old, new], [("c2", new.id, "For sessions, Redis replaces PostgreSQL.")])
[]
"""

from __future__ import annotations

import re
from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass
from pathlib import PurePosixPath

from ..model import Triple
from ..record.schema import rows_in
from ..text.sentences import split_sentences

__all__ = ["CUES_KEY", "NoteRecord", "SUPERSEDES", "chunk_texts", "cue_chunks", "notes_for_superseding",
           "superseding_candidates"]

#: The relation a candidate proposes.
SUPERSEDES = "SUPERSEDES"
#: Candidates' confidence by what named the earlier note.
BY_TITLE, BY_DATE_AND_WORDS, BY_DATE_ALONE = 0.9, 0.8, 0.6

_CUE = re.compile(r"\b(?:replaces|replaced|replacing|supersedes|superseded|superseding|overrides|overrode|"
                  r"overridden|overriding)\b", re.IGNORECASE)
_PASSIVE = re.compile(r"\b(?:is|are|was|were|been|be|being)\s+$", re.IGNORECASE)
_MONTHS = {name: number for number, names in enumerate(
    (("jan", "january"), ("feb", "february"), ("mar", "march"), ("apr", "april"), ("may",), ("jun", "june"),
     ("jul", "july"), ("aug", "august"), ("sep", "sept", "september"), ("oct", "october"), ("nov", "november"),
     ("dec", "december")), 1) for name in names}
_NAMED_DATE = re.compile(r"\b(?:(\d{1,2})(?:st|nd|rd|th)?\s+)?(" + "|".join(sorted(_MONTHS, key=len, reverse=True))
                         + r")\.?\s+(?:(\d{1,2})(?:st|nd|rd|th)?,?\s+)?(\d{4})\b", re.IGNORECASE)
_ISO_DATE = re.compile(r"\b(\d{4})-(\d{2})(?:-(\d{2}))?\b")
_WORD = re.compile(r"[^\W\d_]{3,}", re.UNICODE)
_STOP = frozenset({"the", "and", "for", "this", "that", "with", "from", "which", "our", "its", "their", "note",
                   "decision", "earlier", "previous", "old", "older", "one", "was", "were", "has", "have", "now",
                   "will", "into", "all", "any", *_MONTHS})
#: The kinds of document that are notes (chat logs and records say other things).
NOTE_KINDS = ("markdown", "text")
#: Meta key: the notes' chunks that use a superseding verb, for the state of the notes they were
#: read in, and how many candidates they made (kept by :mod:`workbench.workspace.note_links`).
CUES_KEY = "superseding_cues"


@dataclass(frozen=True)
class NoteRecord:
    """What the reading needs of a note."""

    id: str
    """The document id."""
    title: str
    """Its title: the note entity's name."""
    date: str | None
    """Its date (ISO 8601), when it has one."""


def _words(text: str) -> set[str]:
    return {w for w in (m.group(0).casefold() for m in _WORD.finditer(text)) if w not in _STOP}


def _dates(phrase: str) -> list[str]:
    """``YYYY-MM`` or ``YYYY-MM-DD`` prefixes of the dates ``phrase`` names."""
    found = []
    for day, month, day_after, year in _NAMED_DATE.findall(phrase):
        number = _MONTHS[month.casefold()]
        day = day or day_after
        found.append(f"{year}-{number:02d}" + (f"-{int(day):02d}" if day else ""))
    for year, month, day in _ISO_DATE.findall(phrase):
        found.append(f"{year}-{month}" + (f"-{day}" if day else ""))
    return found


def _named_note(phrase: str, context: str, note: NoteRecord, notes: Sequence[NoteRecord]
                ) -> tuple[NoteRecord, float] | None:
    """The earlier note ``phrase`` (the words after the verb) names, and how sure the reading is."""
    earlier = [n for n in notes if n.id != note.id and (not note.date or not n.date or n.date[:10] < note.date[:10])]
    folded = phrase.casefold()
    titled = [n for n in earlier if len(n.title) >= 6 and n.title.casefold() in folded]
    titled += [n for n in earlier if n not in titled
               and len(stem := PurePosixPath(n.id.split("#", 1)[0]).stem) >= 6
               and (stem.casefold() in folded or stem.replace("-", " ").replace("_", " ").casefold() in folded)]
    if titled:
        return max(titled, key=lambda n: len(n.title)), BY_TITLE
    days = _dates(phrase)
    if not days:
        return None
    dated = [n for n in earlier if n.date and any(n.date[:len(day)] == day for day in days)]
    if not dated:
        return None
    said, around = _words(phrase), _words(context)
    scored = sorted(((2 * len(said & _words(n.title)) + len(around & _words(n.title)), n.id, n) for n in dated),
                    key=lambda item: (-item[0], item[1]))
    best_score, _, best = scored[0]
    if len(scored) == 1:
        return best, BY_DATE_AND_WORDS if best_score else BY_DATE_ALONE
    if best_score and best_score > scored[1][0]:
        return best, BY_DATE_AND_WORDS
    return None  # two notes of that day or month, and nothing to choose between them


def superseding_candidates(notes: Sequence[NoteRecord], chunks: Iterable[tuple[str, str, str]]) -> list[Triple]:
    """SUPERSEDES candidates from ``(chunk id, document id, text)`` of notes in ``notes``: one per
    (note, earlier note), from the first chunk that says so, most confident first."""
    by_id = {n.id: n for n in notes}
    found: dict[tuple[str, str], Triple] = {}
    for chunk_id, document, text in chunks:
        note = by_id.get(document)
        if note is None:
            continue
        for sentence in split_sentences(text):
            for cue in _CUE.finditer(sentence):
                if _PASSIVE.search(sentence[:cue.start()]):
                    continue  # "is superseded by ...": the other direction
                named = _named_note(sentence[cue.end():], text, note, notes)
                if named is None:
                    continue
                target, confidence = named
                key = (note.id, target.id)
                if key not in found or found[key].confidence < confidence:
                    found[key] = Triple(note.title or note.id, SUPERSEDES, target.title or target.id, chunk_id,
                                        confidence, "candidate", "note", "note")
    return sorted(found.values(), key=lambda t: (-t.confidence, t.subject, t.object))


def cue_chunks(db, documents: Collection[str] | None = None) -> list[tuple[str, int, str]]:
    """``(document id, ordinal, chunk id)`` of the notes' chunks that use a superseding verb, in
    that order (SQLite's ``LIKE`` narrows them before any sentence is read): of every note, or of
    ``documents`` only."""
    marks = " OR ".join("c.text LIKE ?" for _ in range(4))
    query = ("SELECT c.document_id, c.ordinal, c.id FROM chunks c JOIN documents d ON d.id = c.document_id "
             f"WHERE d.kind IN ({', '.join('?' for _ in NOTE_KINDS)}) AND ({marks})")
    cues = ("%replac%", "%supersed%", "%overrid%", "%overrode%")
    if documents is None:
        return list(db.execute(f"{query} ORDER BY c.document_id, c.ordinal", (*NOTE_KINDS, *cues)))
    return list(rows_in(db, query + " AND c.document_id IN ({marks}) ORDER BY c.document_id, c.ordinal",
                        sorted(documents), *NOTE_KINDS, *cues))


def chunk_texts(db, cues: Sequence[tuple[str, int, str]]) -> list[tuple[str, str, str]]:
    """``(chunk id, document id, text)`` of ``cues`` (as :func:`cue_chunks` gives them), in their order."""
    texts = dict(rows_in(db, "SELECT id, text FROM chunks WHERE id IN ({marks})", [chunk for _, _, chunk in cues]))
    return [(chunk, document, texts[chunk]) for document, _, chunk in cues if chunk in texts]


def notes_for_superseding(db) -> list[NoteRecord]:
    """Every note's id, title and date (nothing else is read)."""
    return [NoteRecord(i, t or "", d) for i, t, d in db.execute(
        f"SELECT id, title, date FROM documents WHERE kind IN ({', '.join('?' for _ in NOTE_KINDS)}) ORDER BY id",
        NOTE_KINDS)]
