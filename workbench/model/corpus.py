"""Documents and what is read from them: chunks, mentions, triples."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .jsonable import to_json

__all__ = ["DECLARED_RELATION_TYPES", "Segment", "DeclaredRelation", "Document", "Chunk", "Mention", "Triple"]

DECLARED_RELATION_TYPES = (
    "CAUSED_BY",
    "LEADS_TO",
    "RESOLVED_BY",
    "SIMILAR_TO",
    "CONTRADICTS",
    "DEPENDS_ON",
    "EXTENDS",
    "REFERENCES",
)


@dataclass(frozen=True)
class Segment:
    """A span of a document's text that carries its own metadata (a chat message, say)."""

    start: int
    """Character offset where the segment starts in :attr:`Document.text`."""
    end: int
    """Character offset one past the segment's end in :attr:`Document.text`."""
    speaker: str | None = None
    """Who wrote it, for conversation logs."""
    timestamp: str | None = None
    """When it was written, ISO 8601, if known."""


@dataclass(frozen=True)
class DeclaredRelation:
    """A relation a note states about itself in front matter: ``this RESOLVED_BY target``."""

    relation: str
    """One of :data:`DECLARED_RELATION_TYPES`."""
    target: str
    """The other note, as written: a document id, a file name or a title."""


@dataclass
class Document:
    """One loaded source document (a file, or one record of a records file)."""

    id: str
    """Stable id: POSIX path relative to the ingest root's parent, plus ``#record`` for records."""
    source_path: str
    """Absolute path of the file it came from."""
    title: str
    """Front-matter or record title, else the file name."""
    kind: str
    """``text``, ``markdown``, ``conversation`` or ``record``."""
    text: str
    """The full text that chunks point into."""
    content_hash: str
    """SHA-256 of the text and metadata; an unchanged hash means nothing to re-ingest."""
    date: str | None = None
    """Front-matter date (ISO 8601), if any."""
    tags: tuple[str, ...] = ()
    """Front-matter tags."""
    relations: tuple[DeclaredRelation, ...] = ()
    """Relations declared in front matter."""
    segments: tuple[Segment, ...] = ()
    """Message spans for conversation logs; empty for plain documents."""


@dataclass(frozen=True)
class Chunk:
    """A passage of a document, the unit of retrieval and of provenance."""

    id: str
    """Stable id derived from the document id, ordinal and text."""
    document_id: str
    """The :attr:`Document.id` it belongs to."""
    ordinal: int
    """Position of the chunk within its document, from 0."""
    text: str
    """The chunk's text, equal to ``document.text[start:end]``."""
    start: int
    """Character offset of the chunk in the document text."""
    end: int
    """Character offset one past the chunk's end."""
    timestamp: str | None = None
    """Time of the message or document date, if known."""
    speaker: str | None = None
    """Speaker of the message, for conversation logs."""

    def to_json(self) -> dict[str, Any]:
        return to_json(self)


@dataclass(frozen=True)
class Mention:
    """An entity named in a chunk, before canonicalization."""

    surface: str
    """The text as written ("The Auth Service")."""
    chunk_id: str
    """The chunk that names it."""
    entity_type: str = "concept"
    """Type from the entity patterns: technology, person, service, concept..."""
    start: int = -1
    """Offset of the mention in the chunk text, -1 if unknown."""


@dataclass(frozen=True)
class Triple:
    """A relation stated by one chunk, with names as written."""

    subject: str
    """Subject surface form."""
    relation: str
    """Relation label, e.g. ``depends_on`` or ``RESOLVED_BY``."""
    object: str
    """Object surface form."""
    chunk_id: str
    """The chunk that states it (its provenance)."""
    confidence: float = 1.0
    """1.0 for deterministic patterns and declared relations; lower for candidates."""
    origin: str = "pattern"
    """Which extractor produced it: ``pattern``, ``declared``, ``comention``, ``llm``, ``candidate``."""
    subject_type: str = "concept"
    """Entity type of the subject."""
    object_type: str = "concept"
    """Entity type of the object."""
