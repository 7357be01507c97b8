"""The links a write proposes between notes, never as facts: ``SIMILAR_TO`` candidates between
notes whose mean chunk vectors are near, relations of the eight declared types a language model
suggests, and the declared links whose target is no stored note.
"""

from __future__ import annotations

import json
import sqlite3
from collections import defaultdict
from collections.abc import Sequence

import numpy as np

from ..text.name_keys import name_key
from ..corpus import note_neighbours
from ..corpus.note_neighbours import NoteChanges, refresh_note_neighbours
from ..embedding import Embedder
from ..extract import similar_note_candidates
from ..extract.llm import LLMError
from ..extract.notes import NEAREST_NOTES
from ..extract.typed_relations import NoteCandidate, parse_typed_relations, typed_relation_messages
from ..model import Chunk, Document, Triple
from ..record.store import Store
from ..vectors.index import CHUNKS, VectorIndex
from ..vectors.embedding_cache import embed_cached
from ..ingest.failures import StepFailed, describe_os_error

__all__ = ["CANDIDATES_BEHIND", "MAX_CANDIDATES_PER_NOTE", "NOTE_KINDS", "best_per_note", "discover_typed_relations",
           "note_similarity_candidates", "refresh_candidates", "refresh_superseding", "unresolved_note_targets"]

#: Meta key: "1" while a write (a watch's batch) left the SIMILAR_TO candidates for a later step to bring up
#: to date (:meth:`~workbench.workspace.workspace.Workspace.follow_candidates`, or the next ingest).
CANDIDATES_BEHIND = "candidates_behind"

#: Document kinds compared for SIMILAR_TO candidates (chat logs and records are not notes).
NOTE_KINDS = ("markdown", "text")

#: Most SIMILAR_TO candidates one note takes part in.
MAX_CANDIDATES_PER_NOTE = 3

#: Chunks read (and their vectors held) at once while averaging each note's vector.
NOTE_PAGE_CHUNKS = 1000


def refresh_candidates(store: Store, vectors: VectorIndex, embedder: Embedder, threshold: float,
                       full: bool = False) -> None:
    """Bring the ``SIMILAR_TO`` candidates between notes up to date with the record (inside
    :func:`vector_writes`, so a step that dies here is redone by the next write). Only the notes
    a write added, changed or removed are compared again (:mod:`workbench.corpus.note_neighbours`);
    ``full`` compares every note again (what ``repair`` does).

    Raises
    ------
    StepFailed
        When the step runs out of memory or disk, or the system refuses it; the message says
        what failed and how to finish the step.
    """
    try:
        done = refresh_note_neighbours(store, lambda texts: embed_cached(texts, store, embedder, vectors)[0],
                                       embedder.name, threshold, NOTE_KINDS, MAX_CANDIDATES_PER_NOTE, full=full)
        refresh_superseding(store, done.changes)
        if store.meta(CANDIDATES_BEHIND) == "1":
            store.set_meta(CANDIDATES_BEHIND, "0")
    except (MemoryError, OSError, sqlite3.OperationalError) as exc:
        what = describe_os_error(exc) if isinstance(exc, OSError) else \
            (f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__)
        raise StepFailed(
            f"the note-similarity step failed ({what}); every document "
            "written is kept and the workspace is marked to finish the step: free memory or disk, then run "
            "`python -m workbench repair` (the next ingest or remove finishes it too)") from exc


def refresh_superseding(store: Store, changes: NoteChanges) -> bool:
    """Read the ``SUPERSEDES`` candidates from the notes' text again
    (:mod:`workbench.ingest.superseding`); only the chunks that use a superseding verb are read,
    and the notes' titles and dates only when there is one. The chunks that use one are kept in
    the record for the state of the notes they were found in: when ``changes`` starts from that
    state, only the chunks of the notes it names are searched again. True when the candidates changed."""
    from ..ingest.superseding import CUES_KEY, chunk_texts, cue_chunks, notes_for_superseding, superseding_candidates

    held = json.loads(store.meta(CUES_KEY) or "{}")
    cues: list[tuple[str, int, str]] | None = None
    if changes.before is not None and held.get("state") == changes.before:
        cues = sorted([*(tuple(cue) for cue in held["cues"] if cue[0] not in changes.leaving),
                       *cue_chunks(store.db, changes.fresh)])
        chunks = chunk_texts(store.db, cues)
        if len(chunks) < len(cues):
            cues = None  # a chunk went that no change named: search every chunk
    if cues is None:
        cues = cue_chunks(store.db)
        chunks = chunk_texts(store.db, cues)
    found = superseding_candidates(notes_for_superseding(store.db), chunks) if chunks else []
    # None found now nor last time: the stored ones are none already (only this step writes them).
    changed = bool(found or held.get("found", 1)) and store.replace_superseding_candidates(found)
    store.set_meta(CUES_KEY, json.dumps({"state": changes.after, "cues": cues, "found": len(found)}))
    return changed


def unresolved_note_targets(documents: Sequence[Document], store: Store) -> list[str]:
    """One line per declared relation of ``documents`` whose target is no stored note.

    The relation is kept (its target becomes an entity of its own, as written); the line says
    so, since a misspelt note name would otherwise make a phantom entity silently.
    """
    from ..context_graph.assemble import note_resolver

    if not any(doc.relations for doc in documents):
        return []
    notes = note_resolver(store.documents())
    lines = []
    for doc in documents:
        for declared in doc.relations:
            key = name_key(declared.target)
            if key and key not in notes:
                lines.append(f"{doc.id}: relation {declared.relation} names {declared.target!r}, which is no stored "
                             "note: kept as an entity of its own (check the name, or ingest that note)")
    return lines


def note_similarity_candidates(store: Store, embedder: Embedder, threshold: float, k: int = NEAREST_NOTES,
                               vectors: VectorIndex | None = None) -> list:
    """``SIMILAR_TO`` candidates between notes (text and Markdown documents) whose mean chunk
    vectors are at least ``threshold`` similar, each note in at most
    :data:`MAX_CANDIDATES_PER_NOTE`, found over the whole corpus at once: what
    :func:`refresh_candidates` keeps up to date write by write (and is tested against).

    Linear in the notes: chunks are read a page at a time and averaged per document as they
    come (a document's chunks are consecutive), and the pairs come from a blocked top-k search
    (:func:`~workbench.extract.notes.similar_note_candidates`), never an n x n matrix.
    """
    titles = {d.id: d.title for d in store.documents() if d.kind in NOTE_KINDS}
    if len(titles) < 2:
        return []
    means: dict[str, np.ndarray] = {}
    first_chunk: dict[str, str] = {}
    total: np.ndarray | None = None
    count, current = 0, ""
    after: tuple[str, int] | None = None
    while page := store.chunks_of_kinds(NOTE_KINDS, after, NOTE_PAGE_CHUNKS):
        found, _ = embed_cached([c.text for c in page], store, embedder, vectors)
        for chunk, vector in zip(page, found.astype(np.float64)):
            if chunk.document_id != current:
                if total is not None:
                    means[current] = (total / count).astype(np.float32)
                current, total, count = chunk.document_id, vector.copy(), 1
                first_chunk[current] = chunk.id
            else:
                total += vector
                count += 1
        after = (page[-1].document_id, page[-1].ordinal)
    if total is not None:
        means[current] = (total / count).astype(np.float32)
    if len(means) < 2:
        return []
    return best_per_note(similar_note_candidates(means, titles, threshold, first_chunk, k=k))


def discover_typed_relations(note_ids: Sequence[str], store: Store, vectors: VectorIndex, embedder: Embedder,
                             client, settings) -> list[str]:
    """Ask ``client`` how each new note relates to its candidate notes, in the eight declared
    relation types, and store what passes the checks as candidates (never facts). Returns the
    problem lines.

    A note's candidates are the other notes nearest its mean chunk vector (a Chroma top-k, at or
    above ``retrieval.min_vector_score``), at most ``extraction.typed_relation_candidates``; when
    none is, the most recent notes (by date, then id). One request per new note; a failed request
    is a problem line. Candidates cite the note's first chunk, so they go with it when it is
    re-ingested or removed.
    """
    if not note_ids:
        return []
    wanted = settings.extraction.typed_relation_candidates
    records = {d.id: d for d in store.documents() if d.kind in NOTE_KINDS}
    recent = sorted(records.values(), key=lambda d: (d.date or "", d.id), reverse=True)
    chunks_of: dict[str, list[Chunk]] = defaultdict(list)
    for chunk in store.chunks(store.chunk_ids_of(list(records))):
        chunks_of[chunk.document_id].append(chunk)
    problems: list[str] = []
    found: list[Triple] = []
    for note_id in note_ids:
        note, chunks = records.get(note_id), sorted(chunks_of.get(note_id, ()), key=lambda c: c.ordinal)
        if note is None or not chunks:
            continue
        vecs, _ = embed_cached([c.text for c in chunks], store, embedder, vectors)
        near: list[str] = []
        for match in vectors.query(CHUNKS, vecs.mean(axis=0), wanted * 8):
            document = (match.metadata or {}).get("document")
            if (match.similarity >= settings.retrieval.min_vector_score and document in records
                    and document != note_id and document not in near):
                near.append(document)
        chosen = near[:wanted] or [d.id for d in recent if d.id != note_id][:wanted]
        offered = [NoteCandidate(f"n{i}", records[d].title, chunks_of[d][0].text if chunks_of.get(d) else "")
                   for i, d in enumerate(chosen, 1)]
        if not offered:
            continue
        try:
            reply = client.chat(typed_relation_messages(note.title, "\n".join(c.text for c in chunks), offered))
        except LLMError as exc:
            problems.append(f"{note_id}: typed relation request failed: {exc}")
            continue
        triples, dropped = parse_typed_relations(reply, note.title, offered, chunks[0].id,
                                                 settings.extraction.typed_relation_min_confidence)
        found.extend(triples)
        problems.extend(f"{note_id}: {line}" for line in dropped)
    store.add_triples(found)
    return problems


def best_per_note(found: Sequence[Triple]) -> list[Triple]:
    """The candidates kept, best pairs first (as ``found`` comes), each note in at most
    :data:`MAX_CANDIDATES_PER_NOTE` of them, so near-identical notes stay linear."""
    return note_neighbours.best_per_note(found, MAX_CANDIDATES_PER_NOTE)
