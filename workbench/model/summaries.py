"""Community reports, conversation episodes and entity timelines, and the typed answers built of them."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .jsonable import NOT_IN_JSON, to_json

__all__ = ["ReportPoint", "CommunityReport", "Decision", "Episode", "TimelineEntry", "Timeline", "CommunityListing",
           "EpisodeSearch", "ThemesFrom"]


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

    def to_json(self) -> dict[str, Any]:
        return to_json(self)


@dataclass
class CommunityReport:
    """An extractive report on one community of the context graph (no language model)."""

    id: str
    """Stable id derived from the member keys."""
    title: str
    """Its most distinctive key phrases (c-TF-IDF among the communities of its level)."""
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
    """Documents of its passages, points and relations."""
    level: int = 0
    """0 for a theme, 1 for a sub-theme (a part of the theme ``parent``), and so on."""
    parent: str | None = None
    """Id of the community it is a part of (None for a theme)."""
    chunks: tuple[str, ...] = ()
    """Chunk ids of its passages, sorted."""
    key_phrases: tuple[tuple[str, float], ...] = ()
    """``(phrase, c-TF-IDF weight)`` of its most distinctive phrases, best first."""
    terms: dict[str, int] = field(default_factory=dict)
    """Its most frequent words and two-word phrases with their counts (what its key phrases are
    weighed from, so a kept report is titled again without its text)."""

    def text(self) -> str:
        """What is embedded for search: title, key phrases, key entities and points."""
        names = ", ".join(name for name, _, _ in self.key_entities)
        phrases = ", ".join(p for p, _ in self.key_phrases)
        return "\n".join([self.title, phrases, names, *(p.text for p in self.points)])

    def to_json(self, terms: bool = False) -> dict[str, Any]:
        """The report as JSON; ``terms`` (what the store keeps to title it again) only when asked."""
        out = to_json(self, key_entities=[{"name": n, "type": t, "centrality": c} for n, t, c in self.key_entities])
        if not terms:
            del out["terms"]
        return out

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> "CommunityReport":
        return cls(id=d["id"], title=d["title"], size=d["size"], members=tuple(d["members"]),
                   key_entities=[(e["name"], e["type"], e["centrality"]) for e in d["key_entities"]],
                   relations=d["relations"], points=[ReportPoint(**{**p, "entities": tuple(p["entities"])})
                                                     for p in d["points"]],
                   first_seen=d["first_seen"], last_seen=d["last_seen"], signature=d["signature"],
                   documents=tuple(d.get("documents", ())), level=d.get("level", 0), parent=d.get("parent"),
                   chunks=tuple(d.get("chunks", ())),
                   key_phrases=tuple((p, w) for p, w in d.get("key_phrases", ())), terms=dict(d.get("terms", {})))


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

    def to_json(self) -> dict[str, Any]:
        return to_json(self)


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
        return to_json(self, participants=[{"speaker": s, "messages": n} for s, n in self.participants],
                       summary=self.summary())

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
        return to_json(self)


@dataclass
class Timeline:
    """An entity's dated mentions, relations and decisions, oldest first, the undated after."""

    entity: str
    """The entity's display name."""
    entries: list[TimelineEntry]
    """Its entries in time order."""

    def to_json(self) -> dict[str, Any]:
        return to_json(self)


@dataclass(frozen=True)
class ThemesFrom:
    """The record version the community reports shown describe: the record's own, or, while
    reports that must be made again from nothing are built in the background, an older one.

    >>> ThemesFrom(14, 17, rebuilding=True).statement()
    'themes from record version 14 (the record is at version 17; rebuilding them in the background)'
    >>> ThemesFrom(17, 17).behind
    False
    """

    version: int
    """The record version the reports were built for."""
    record_version: int
    """The record's version when they were asked for."""
    rebuilding: bool = False
    """Whether reports of ``record_version`` are being built in the background."""

    @property
    def behind(self) -> bool:
        """True when the reports describe an older record than the current one."""
        return self.version != self.record_version

    def statement(self) -> str:
        """What a surface says of them."""
        if not self.behind:
            return f"themes of record version {self.version}"
        doing = "; rebuilding them in the background" if self.rebuilding else ""
        return f"themes from record version {self.version} (the record is at version {self.record_version}{doing})"

    def to_json(self) -> dict[str, Any]:
        return to_json(self)


@dataclass
class CommunityListing:
    """The community reports asked for (every one, each theme followed by its sub-themes; or one),
    and how the summaries were come by."""

    communities: list[CommunityReport]
    """The reports asked for."""
    stored: bool
    """Whether the summaries were read from the workspace (else built in memory now)."""
    built: int
    """Reports built anew by the build that made them (0 when read from the store)."""
    kept: int
    """Reports that build kept unchanged."""
    themes_from: ThemesFrom | None = None
    """The record version the reports describe (older than the record's while they are rebuilt)."""
    every_report: list[CommunityReport] = field(default_factory=list, metadata=NOT_IN_JSON)
    """Every report of the workspace, each theme followed by its sub-themes (what a reader of one
    report lists its sub-themes from)."""

    def sub_themes(self, community_id: str) -> list[CommunityReport]:
        """The reports that are parts of the community ``community_id``."""
        return [r for r in self.every_report if r.parent == community_id]

    def to_json(self) -> dict[str, Any]:
        return to_json(self)


@dataclass
class EpisodeSearch:
    """The sessions of the conversation logs that hold a text (every session for none)."""

    episodes: list[Episode]
    """The sessions found, in their order."""
    text: str = field(default="", metadata=NOT_IN_JSON)
    """The text looked for ("" for every session)."""
    searched: int = field(default=0, metadata=NOT_IN_JSON)
    """Sessions looked through: every session of the workspace."""

    def to_json(self) -> dict[str, Any]:
        return to_json(self)
