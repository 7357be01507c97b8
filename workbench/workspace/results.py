"""The workspace's steps and reads as a surface calls them: each does its work and returns a typed
result (:mod:`workbench.model.outcomes`, :mod:`workbench.model.listings`) whose ``to_json()`` the
command line, the MCP server and the app emit, so no surface builds a payload of its own.

Expected failures are named: :class:`NothingStored` (a removal that finds nothing), and those of
the steps themselves (``KeyError`` and ``ValueError`` for an alias or a candidate that is not one).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from ..model import (AcceptedCandidate, AliasChange, CandidateList, EntityList, IngestOutcome, MergeList, NewIdentity,
                     Removal, Repair, VectorCheck, WorkspaceStats)
from ..vectors.chroma_folders import folder_mib
from ..vectors.index import CHUNKS
from .ingest_pipeline import Progress
from .workspace import WorkspaceError

if TYPE_CHECKING:
    from .workspace import Workspace

__all__ = ["ALIAS_ACTIONS", "NothingStored", "accept_candidate", "candidate_list", "change_alias", "entity_list",
           "ingest", "merge_list", "remove", "repair", "vector_check", "workspace_stats"]

#: What ``change_alias`` does: add or remove an alias, split a form out of its entity or merge it back.
ALIAS_ACTIONS = ("add", "remove", "split", "unsplit")


class NothingStored(WorkspaceError):
    """A removal named a file, a folder or a document id the workspace holds nothing of."""


def workspace_stats(ws: Workspace) -> WorkspaceStats:
    """The workspace's counts: its record's and its graph's."""
    return WorkspaceStats.from_counts(ws.stats())


def ingest(ws: Workspace, paths: Sequence[str | Path], progress: Progress | None = None,
           detach_saves: bool = False) -> IngestOutcome:
    """Bring the workspace up to date with the files under ``paths``; what it did and the counts
    after. ``detach_saves``: see :meth:`Workspace.ingest <workbench.workspace.workspace.Workspace.ingest>`."""
    report = ws.ingest(paths, progress=progress, detach_saves=detach_saves)
    wrote = report.chunks_written or report.documents_removed or report.vectors_repaired
    # read only after a write: an ingest that changed nothing never opens Chroma
    return IngestOutcome(report, workspace_stats(ws), ws.vectors.deleted(CHUNKS) if wrote else None)


def remove(ws: Workspace, path: str | Path, confirm_emptying: Callable[[int], None] | None = None) -> Removal:
    """Remove the documents of a file, a folder or a document id.

    ``confirm_emptying(count)`` is asked first when the removal would take every one of the
    workspace's ``count`` documents (a folder holding them all, or ``/``); it raises to refuse.
    A write interrupted before is completed even when nothing is left to remove.

    Raises
    ------
    NothingStored
        When nothing is stored under ``path`` and no write waits to be completed.
    """
    interrupted = ws.unfinished() is not None
    ids = ws.documents_under(path)
    if not ids and not interrupted:
        raise NothingStored(f"nothing stored under {path}")
    total = ws.store.count("documents")
    if confirm_emptying is not None and ids and len(ids) == total and (total > 1 or str(path).rstrip("/") == ""):
        confirm_emptying(total)
    removed = ws.remove(path)
    return Removal(removed, completed_interrupted_write=interrupted and not removed, stats=workspace_stats(ws))


def repair(ws: Workspace, new_identity: bool = False) -> Repair:
    """Make the vector store agree with the record (after ``new_identity``, for a copied
    workspace, when asked), with the sizes before and after."""
    identity = NewIdentity(*ws.new_identity()) if new_identity else None
    damage = ws.entity_index_damage()
    chroma = ws.path / "chroma"
    record_mib, chroma_mib, deleted = ws.store.size_bytes() / 2**20, folder_mib(chroma), ws.vectors.deleted(CHUNKS)
    changed = ws.repair()
    counts = ws.vector_counts()
    return Repair(new_identity=identity, vectors_changed=changed, entity_index_rebuilt=damage is not None,
                  integrity_ok=ws.store.integrity_ok(), record_mib_before=round(record_mib, 1),
                  record_mib=round(ws.store.size_bytes() / 2**20, 1), deleted_vectors_freed=deleted,
                  chroma_mib_before=chroma_mib, chroma_mib=folder_mib(chroma), chunks=counts["chunks"],
                  entities=counts["entities"], entity_index_damage=damage)


def change_alias(ws: Workspace, action: str, name: str, canonical: str | None = None) -> AliasChange:
    """One of :data:`ALIAS_ACTIONS` on ``name`` (``add`` makes it an alias of ``canonical``).

    Raises ``ValueError`` for an action it does not know, an ``add`` without ``canonical``, or
    a change the corrections refuse; ``KeyError`` for an alias or a form that is not one.
    """
    corrections = ws.corrections
    if action == "add":
        if not canonical:
            raise ValueError("an alias needs its canonical name: alias add ALIAS CANONICAL")
        corrections.add_alias(name, canonical)  # a rerun completes the first, logged once
        message = f"{name!r} is now an alias of {canonical!r}"
    elif action == "remove":
        corrections.remove_alias(name)
        message = f"alias {name!r} removed"
    elif action == "split":
        corrections.split(name)
        message = f"{name!r} split out into an entity of its own"
    elif action == "unsplit":
        corrections.unsplit(name)
        message = f"{name!r} merged back"
    else:
        raise ValueError(f"unknown alias action {action!r}; actions: {', '.join(ALIAS_ACTIONS)}")
    return AliasChange(message, workspace_stats(ws))


def accept_candidate(ws: Workspace, subject: str, relation: str, obj: str) -> AcceptedCandidate:
    """Make one candidate relation a graph fact (``ValueError`` when it is not a candidate)."""
    return AcceptedCandidate(subject, relation, obj, ws.corrections.accept_candidate(subject, relation, obj))


def candidate_list(ws: Workspace) -> CandidateList:
    """The candidate relations waiting to be checked."""
    return CandidateList(ws.candidates())


def entity_list(ws: Workspace, entity_type: str | None = None, limit: int | None = None) -> EntityList:
    """Entities, most mentioned first: of ``entity_type`` only when given, the first ``limit``."""
    found = [e for e in ws.entities() if entity_type is None or e.type == entity_type]
    return EntityList(found if limit is None else found[:limit])


def merge_list(ws: Workspace) -> MergeList:
    """Every entity that folds two or more ways of writing its name."""
    return MergeList(ws.merges())


def vector_check(ws: Workspace, where: str) -> VectorCheck:
    """Whether the vector store (at ``where``, as the user names it) agrees with the record, id by
    id: ids, not counts, since as many vectors as chunks can still be the wrong vectors.
    Raises :class:`~workbench.vectors.index.VectorStoreUnavailable` when the store cannot be read."""
    chunk_vectors, entity_vectors = ws.vectors.ids(CHUNKS), ws.entity_vectors.ids()
    chunks, entities = ws.store.chunk_ids(), set(ws.graph.keys())
    return VectorCheck(backend=ws.settings.vector_store.backend, where=where, chunks=len(chunk_vectors),
                       entities=len(entity_vectors), chunks_in_sqlite=len(chunks), entities_in_graph=len(entities),
                       chunk_vectors_missing=len(chunks - chunk_vectors),
                       chunk_vectors_extra=len(chunk_vectors - chunks),
                       entity_vectors_missing=len(entities - entity_vectors),
                       entity_vectors_extra=len(entity_vectors - entities),
                       entity_index_damaged=ws.entity_index_damage())
