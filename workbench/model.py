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
    "TimeWindow",
    "ReportPoint",
    "CommunityReport",
    "Decision",
    "Episode",
    "TimelineEntry",
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
    time: str | None = None
    """When its chunk was written: the chunk's timestamp, else its document's date (ISO 8601)."""


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


@dataclass(frozen=True)
class TimeWindow:
    """An inclusive range of days that hits must fall in, and where it came from."""

    since: str | None = None
    """First day kept (ISO ``YYYY-MM-DD``), or None for no lower bound."""
    until: str | None = None
    """Last day kept (ISO ``YYYY-MM-DD``), or None for no upper bound."""
    phrase: str = ""
    """The words of the question that set it ("last month"), empty when given as arguments."""
    as_of: str = ""
    """The reference day relative phrases were resolved against."""

    def describe(self) -> str:
        """``2024-06-01..2024-06-30 ("last month" as of 2024-07-15)``."""
        span = f"{self.since or '...'}..{self.until or '...'}"
        return span + (f' ("{self.phrase}" as of {self.as_of})' if self.phrase else "")

    def to_json(self) -> dict[str, Any]:
        return {"since": self.since, "until": self.until, "phrase": self.phrase, "as_of": self.as_of}


@dataclass(frozen=True)
class ReportPoint:
    """One cited statement of a community report: a sentence copied from a chunk."""

    text: str
    """The sentence, exactly as it stands in the chunk."""
    chunk_id: str
    """The chunk that states it."""
    document: str
    """That chunk's document."""
    entities: tuple[str, ...] = ()
    """Display names of the community's entities the sentence names."""
    score: float = 0.0
    """Centrality of the entities it covers (higher: more central)."""
    kind: str = "sentence"
    """``relation`` for the sentence stating one of the strongest relations, else ``sentence``."""
    time: str | None = None
    """The chunk's time, if known."""


@dataclass
class CommunityReport:
    """An extractive report on one community of the context graph (no language model)."""

    id: str
    """Stable id derived from the member keys."""
    title: str
    """The names of its most central (typed) entities."""
    size: int
    """Number of member entities."""
    members: tuple[str, ...]
    """Keys of every member, sorted."""
    key_entities: list[tuple[str, str, float]]
    """``(display name, type, centrality)`` of its most central members, best first."""
    relations: list[dict[str, Any]]
    """Its strongest cited relations: source, relation, target, weight, chunks."""
    points: list[ReportPoint]
    """Representative sentences, chosen by centrality and coverage, each cited."""
    first_seen: str | None = None
    """Earliest time of a member."""
    last_seen: str | None = None
    """Latest time of a member."""
    signature: str = ""
    """Hash of the members and their chunks: an unchanged signature keeps the report."""
    documents: tuple[str, ...] = ()
    """Documents its points and relations cite."""

    def text(self) -> str:
        """What is embedded for search: title, key entities and points."""
        names = ", ".join(name for name, _, _ in self.key_entities)
        return "\n".join([self.title, names, *(p.text for p in self.points)])

    def to_json(self) -> dict[str, Any]:
        return {"id": self.id, "title": self.title, "size": self.size, "members": list(self.members),
                "key_entities": [{"name": n, "type": t, "centrality": c} for n, t, c in self.key_entities],
                "relations": self.relations,
                "points": [point_to_json(p) for p in self.points],
                "first_seen": self.first_seen, "last_seen": self.last_seen, "signature": self.signature,
                "documents": list(self.documents)}

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> "CommunityReport":
        return cls(id=d["id"], title=d["title"], size=d["size"], members=tuple(d["members"]),
                   key_entities=[(e["name"], e["type"], e["centrality"]) for e in d["key_entities"]],
                   relations=d["relations"], points=[ReportPoint(**{**p, "entities": tuple(p["entities"])})
                                                     for p in d["points"]],
                   first_seen=d["first_seen"], last_seen=d["last_seen"], signature=d["signature"],
                   documents=tuple(d.get("documents", ())))


def point_to_json(p: ReportPoint) -> dict[str, Any]:
    return {"text": p.text, "chunk_id": p.chunk_id, "document": p.document, "entities": list(p.entities),
            "score": p.score, "kind": p.kind, "time": p.time}


@dataclass(frozen=True)
class Decision:
    """A sentence of a conversation that states a decision."""

    text: str
    """The sentence as written."""
    chunk_id: str
    """The message's chunk."""
    time: str | None
    """When it was said."""
    speaker: str | None
    """Who said it."""


@dataclass
class Episode:
    """One session of a conversation log (messages with no long gap), summarised extractively."""

    id: str
    """Stable id: the document id and the session's first time."""
    document: str
    """The conversation document."""
    start: str | None
    """Time of its first message."""
    end: str | None
    """Time of its last message."""
    participants: list[tuple[str, int]]
    """``(speaker, messages)``, most active first."""
    entities: list[str]
    """Display names of the entities discussed, most mentioned first."""
    decisions: list[Decision]
    """Sentences that state a decision, in time order."""
    chunk_ids: tuple[str, ...] = ()
    """Its messages' chunks, in order."""

    def summary(self) -> str:
        """One paragraph: when, who, what about, what was decided."""
        who = ", ".join(name for name, _ in self.participants)
        about = ", ".join(self.entities[:8])
        decided = " ".join(f"[{d.time}] {d.text}" if d.speaker and d.text.startswith(d.speaker)
                           else f"[{d.time}] {d.speaker}: {d.text}" for d in self.decisions)
        return (f"{self.document} {self.start} to {self.end}. Participants: {who}. Discussed: {about}."
                + (f" Decisions: {decided}" if decided else ""))

    def to_json(self) -> dict[str, Any]:
        return {"id": self.id, "document": self.document, "start": self.start, "end": self.end,
                "participants": [{"speaker": s, "messages": n} for s, n in self.participants],
                "entities": list(self.entities),
                "decisions": [{"text": d.text, "chunk_id": d.chunk_id, "time": d.time, "speaker": d.speaker}
                              for d in self.decisions],
                "chunk_ids": list(self.chunk_ids), "summary": self.summary()}

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> "Episode":
        return cls(id=d["id"], document=d["document"], start=d["start"], end=d["end"],
                   participants=[(p["speaker"], p["messages"]) for p in d["participants"]],
                   entities=list(d["entities"]),
                   decisions=[Decision(x["text"], x["chunk_id"], x["time"], x["speaker"]) for x in d["decisions"]],
                   chunk_ids=tuple(d["chunk_ids"]))


@dataclass(frozen=True)
class TimelineEntry:
    """One dated fact about an entity: a mention, a relation or a decision."""

    time: str | None
    """When (the chunk's time); None sorts last."""
    kind: str
    """``mention``, ``relation`` or ``decision``."""
    text: str
    """The sentence, or ``A -relation-> B`` for a relation."""
    chunk_id: str
    """The chunk that states it."""
    document: str
    """That chunk's document."""

    def to_json(self) -> dict[str, Any]:
        return {"time": self.time, "kind": self.kind, "text": self.text, "chunk_id": self.chunk_id,
                "document": self.document}
