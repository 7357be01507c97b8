"""What the workspace's steps and checks report to a surface: its counts, an ingest, a removal,
a repair, an alias change, an accepted candidate, the vector store's agreement with the record.

Built by :mod:`workbench.workspace.results`; the command line, the MCP server and the app emit
their ``to_json()``, the one shape of each.

Examples
--------
>>> stats = WorkspaceStats(documents=2, chunks=5, mentions=9, triples=3, user_aliases=0, workspace="ws",
...                        entities=4, edges=2, comention_edges=3, merges=1)
>>> AliasChange("'RDS' is now an alias of 'redis'", stats).to_json()["ok"]
True
>>> AcceptedCandidate("auth", "uses", "redis", 2).to_json()
{'accepted': ['auth', 'uses', 'redis'], 'statements': 2}
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import Any, Protocol

from .jsonable import NOT_IN_JSON, to_json

__all__ = ["Reported", "WorkspaceStats", "IngestOutcome", "Removal", "NewIdentity", "Repair", "AliasChange",
           "AcceptedCandidate", "VectorCheck"]


class Reported(Protocol):
    """A report with its own JSON (the ingest pipeline's :class:`~workbench.workspace.ingest_pipeline.IngestReport`)."""

    def to_json(self) -> dict[str, Any]: ...


@dataclass(frozen=True)
class WorkspaceStats:
    """The counts of a workspace: its record's, then its graph's."""

    documents: int
    """Documents stored."""
    chunks: int
    """Chunks stored."""
    mentions: int
    """Entity mentions read from the chunks."""
    triples: int
    """Relations stated by the chunks."""
    user_aliases: int
    """Aliases a user added."""
    workspace: str
    """The workspace folder."""
    entities: int
    """Entities of the graph."""
    edges: int
    """Its relation edges."""
    comention_edges: int
    """Its co-mention edges."""
    merges: int
    """Entities that fold two or more ways of writing their name."""

    @classmethod
    def from_counts(cls, counts: dict[str, Any]) -> WorkspaceStats:
        """From :meth:`Workspace.stats <workbench.workspace.workspace.Workspace.stats>`'s dict."""
        return cls(**{f.name: counts[f.name] for f in fields(cls)})

    def to_json(self) -> dict[str, Any]:
        return to_json(self)


@dataclass
class IngestOutcome:
    """An ingest: what it did, the workspace's counts after it, and Chroma's deleted vectors."""

    report: Reported
    """What the ingest did (documents added, updated, removed; chunks embedded; problems)."""
    stats: WorkspaceStats
    """The workspace's counts after it."""
    deleted_vectors: int | None = None
    """Slots Chroma still keeps for deleted chunk vectors; None when the ingest changed nothing
    (Chroma is not opened then)."""

    def to_json(self) -> dict[str, Any]:
        return {**self.report.to_json(), "stats": self.stats.to_json(), "deleted_vectors": self.deleted_vectors}


@dataclass
class Removal:
    """The documents a removal took out of the workspace."""

    removed: list[str]
    """Ids of the documents removed."""
    completed_interrupted_write: bool
    """Whether nothing was left to remove and the removal completed a write killed before it."""
    stats: WorkspaceStats
    """The workspace's counts after it."""

    def to_json(self) -> dict[str, Any]:
        return to_json(self)


@dataclass(frozen=True)
class NewIdentity:
    """The id a copied workspace was given (``repair --new-identity``)."""

    was: str
    """The id it shared with the workspace it was copied from."""
    id: str
    """Its own id now."""
    vectors_copied: int
    """Vectors copied into its own collections."""

    def to_json(self) -> dict[str, Any]:
        return to_json(self)


@dataclass
class Repair:
    """What ``repair`` did: the vectors made to agree with the record, the sizes before and after."""

    new_identity: NewIdentity | None
    """The id it gave the workspace first, when asked to."""
    vectors_changed: int
    """Chunk vectors added or deleted so that Chroma holds exactly the chunks of the record."""
    entity_index_rebuilt: bool
    """Whether the entity-name index was damaged, and so built again."""
    integrity_ok: bool
    """SQLite's integrity check of the record, after the repair."""
    record_mib_before: float
    """The record's size before, in MiB."""
    record_mib: float
    """Its size after."""
    deleted_vectors_freed: int
    """Slots of deleted vectors Chroma kept before the repair rebuilt the chunk collection."""
    chroma_mib_before: float
    """The Chroma folder's size before, in MiB."""
    chroma_mib: float
    """Its size after."""
    chunks: int
    """Chunk vectors after."""
    entities: int
    """Entity-name vectors after."""
    entity_index_damage: str | None = field(default=None, metadata=NOT_IN_JSON)
    """What was wrong with the entity-name index, when it was damaged."""

    def to_json(self) -> dict[str, Any]:
        return to_json(self)


@dataclass
class AliasChange:
    """An alias added or removed, or a form split out of an entity or merged back."""

    message: str
    """What changed, in a sentence."""
    stats: WorkspaceStats
    """The workspace's counts after it."""

    def to_json(self) -> dict[str, Any]:
        return to_json(self, order=("ok",), ok=True)


@dataclass(frozen=True)
class AcceptedCandidate:
    """A candidate relation accepted as a graph fact."""

    subject: str
    relation: str
    object: str
    statements: int
    """Statements of it made facts."""

    def to_json(self) -> dict[str, Any]:
        return {"accepted": [self.subject, self.relation, self.object], "statements": self.statements}


@dataclass
class VectorCheck:
    """Whether the vector store agrees with the record, id by id (``chroma-check``)."""

    backend: str
    """``embedded`` or ``server``."""
    where: str
    """The store's folder or server."""
    chunks: int
    """Chunk vectors in the store."""
    entities: int
    """Entity-name vectors in the index."""
    chunks_in_sqlite: int
    """Chunks of the record."""
    entities_in_graph: int
    """Entities of the graph."""
    chunk_vectors_missing: int
    """Chunks with no vector."""
    chunk_vectors_extra: int
    """Vectors of no chunk."""
    entity_vectors_missing: int
    """Entities with no name vector."""
    entity_vectors_extra: int
    """Name vectors of no entity."""
    entity_index_damaged: str | None
    """What is wrong with the entity-name index, if anything."""

    @property
    def in_step(self) -> bool:
        """Every id matches and the entity-name index is whole."""
        return not (self.chunk_vectors_missing or self.chunk_vectors_extra or self.entity_vectors_missing
                    or self.entity_vectors_extra or self.entity_index_damaged)

    def to_json(self) -> dict[str, Any]:
        return to_json(self, in_step=self.in_step)
