"""The dataclasses passed between the layers of the workbench.

Data flows one way: files -> :class:`Document` -> :class:`Chunk` -> :class:`Mention` and
:class:`Triple` -> :class:`Entity` and :class:`Edge` (the context graph) and vectors ->
:class:`Hit` in a :class:`RetrievalResult` -> views.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

__all__ = [
    "DECLARED_RELATION_TYPES",
    "Segment",
    "DeclaredRelation",
    "Document",
    "Chunk",
    "Mention",
    "Triple",
    "Entity",
    "Edge",
    "SurfaceForm",
    "Merge",
    "Hop",
    "GraphPath",
    "Impact",
    "Hit",
    "RetrievalResult",
]

#: Relation types a note may declare in its front matter (directed: ``A RESOLVED_BY B``).
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


@dataclass
class Entity:
    """A node of the context graph: one canonical name."""

    key: str
    """The canonical name key (see :func:`workbench.canon.name_key`)."""
    name: str
    """Display name: the most frequent surface form."""
    type: str = "concept"
    """The most frequent entity type among its mentions."""
    mentions: int = 0
    """Number of mentions across all chunks."""
    first_seen: str | None = None
    """Earliest timestamp of a chunk that mentions it."""
    last_seen: str | None = None
    """Latest timestamp of a chunk that mentions it."""


@dataclass
class Edge:
    """A directed relation between two entities, with its provenance."""

    source: str
    """Canonical key of the subject."""
    relation: str
    """Relation label."""
    target: str
    """Canonical key of the object."""
    chunk_ids: tuple[str, ...] = ()
    """Distinct chunks that state it, sorted."""
    documents: tuple[str, ...] = ()
    """Distinct documents of those chunks, sorted."""
    confidence: float = 1.0
    """Highest confidence among the statements."""
    first_seen: str | None = None
    """Earliest timestamp among the stating chunks."""
    last_seen: str | None = None
    """Latest timestamp among the stating chunks."""
    origin: str = "pattern"
    """Extractor of the statements (see :attr:`Triple.origin`)."""

    @property
    def weight(self) -> int:
        """Corroboration: the number of distinct chunks that state the edge."""
        return len(self.chunk_ids)


@dataclass(frozen=True)
class SurfaceForm:
    """One way a canonical entity is written, and where."""

    form: str
    """The text as written."""
    count: int
    """How many mentions use this form."""
    chunk_ids: tuple[str, ...] = ()
    """Chunks where the form occurs."""


@dataclass
class Merge:
    """The record of names merged into one canonical entity."""

    canonical: str
    """Display name of the canonical entity."""
    key: str
    """Its canonical key."""
    surface_forms: list[SurfaceForm] = field(default_factory=list)
    """Every surface form with its count, most frequent first."""
    reasons: list[str] = field(default_factory=list)
    """Why the forms are one: ``name key``, ``alias (settings)``, ``alias (user)``."""


@dataclass(frozen=True)
class Hop:
    """One cited step of a path, in stored direction ``source -relation-> target``."""

    source: str
    relation: str
    target: str
    weight: int
    chunks: tuple[str, ...]
    documents: tuple[str, ...]


@dataclass
class GraphPath:
    """A path between entities with a citation per hop."""

    nodes: list[str]
    """Display names along the path, first to last."""
    hops: list[Hop]
    """The edges walked, each cited."""

    @property
    def corroboration(self) -> int:
        """The weakest hop's weight: a chain is as well attested as its weakest link."""
        return min((h.weight for h in self.hops), default=0)


@dataclass
class Impact:
    """What breaks when an entity fails: reverse reachability with paths, and the survivors."""

    failed: str
    """Display name of the failed entity."""
    impacted: list[tuple[str, GraphPath]]
    """``(entity, path)`` for every entity that depends on it, by hop count. The path runs
    from the failed entity to the impacted one; its hops keep the stored direction."""
    survivors: list[str]
    """Entities not impacted."""


@dataclass
class Hit:
    """One ranked chunk returned by a retriever."""

    chunk_id: str
    document: str
    text: str
    score: float
    rank: int = 0
    """1-based rank in the result."""
    why: dict[str, Any] = field(default_factory=dict)
    """Why it came back: matched terms, similarity, the edge it was reached by, entities..."""


@dataclass
class RetrievalResult:
    """What every retrieval strategy returns."""

    query: str
    mode_requested: str
    mode_used: str
    hits: list[Hit] = field(default_factory=list)
    stats: dict[str, Any] = field(default_factory=dict)
    """Seeds and similarities, entities explored, hit counts, seconds per stage..."""
    graph_context: dict[str, Any] = field(default_factory=dict)
    """Nodes, triples and their chunk ids used as graph context, when the mode has one."""
    reason: str = ""
    """Why the mode used differs from the one requested, or how it was chosen."""
