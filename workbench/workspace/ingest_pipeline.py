"""The ingest pipeline: load -> chunk -> extract -> embed -> store, crash-safe.

Documents are processed in batches of about :data:`BATCH_CHUNKS` chunks, and a larger document
in windows of that many: each window is extracted, its chunks embedded in one model call (with
an embedding cache keyed by text hash, so nothing is embedded twice) and its rows inserted into
an SQLite transaction that stays open until the document's last window, then commits once (small
documents commit together, about :data:`VECTOR_BATCH` chunks at a time). The vectors are upserted
into Chroma by chunk id, :data:`VECTOR_BATCH` at a time and always before the commit. So a 30 MB file is never held extracted or
embedded whole, and a kill at any point leaves whole documents or none. Vector writes happen inside :func:`vector_writes`,
which marks the workspace until they are done; a writer that finds the mark left by a crash
runs :func:`reconcile_vectors` first, making Chroma agree with SQLite again. An ingest of an
unchanged corpus finds no mark and touches neither store.

A write killed before its commit (Ctrl-C, kill -9, a power cut) leaves in Chroma the vectors it
had sent, :data:`VECTOR_BATCH` chunks at a time: durable, though no row names them yet. The
ingest that follows keeps them (:func:`reconcile_vectors` with ``keep``) and reads back the
vector of every chunk it makes again under the same id (a chunk id hashes its document, place
and text), so a long first ingest interrupted half way embeds only the other half; the ones no
chunk claims are deleted at its end. Progress is told in characters of text, as vectors become
durable, so a bar's time left follows the measured rate even inside one large file.

Each embedder has a vector space of its own (its cache entries and its Chroma collections,
keyed by its name), and only the embedder in use is kept in step with SQLite. The meta key
``vectors_space`` names the space last kept in step; a writer with another embedder (after
``embedding.backend`` changed, say) reconciles its own space first, as after a crash: chunks
added or removed meanwhile are added or removed there, their vectors computed only for texts
its cache does not hold. So switching back to a backend used before re-embeds nothing but what
changed.
"""

from __future__ import annotations

import hashlib
import time
from collections import defaultdict
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Callable, Mapping, Sequence

import numpy as np


from ..text.name_keys import name_key
from ..embedding import Embedder, text_hash
from ..extract import EXTRACTION_VERSION, Extraction, Extractor, extract_windows, extractors_from_settings
from ..extract.llm import LLMError, client_from_settings
from ..model import Chunk, Document
from ..runtime.progress import DOCUMENTS
from ..record.document_writes import DocumentWrites
from ..record.store import Store
from ..vectors.index import CHUNKS, VectorIndex
from ..ingest.chunking import chunk_document, packs
from ..ingest.corpus_limits import check_corpus_size, file_sizes, limit_bytes, projected_text_bytes
from ..vectors.embedding_cache import embed_cached
from ..ingest.file_hashes import FileHashes
from ..ingest.loaders import CorpusWalk, LoadError, LoadProblem, WalkedFile, load_paths
from ..vectors.in_step import VECTORS_IN_FLIGHT, VECTORS_SPACE, vector_writes, vectors_behind
from .note_links import CANDIDATES_BEHIND, NOTE_KINDS, discover_typed_relations, refresh_candidates, unresolved_note_targets

__all__ = ["BATCH_CHUNKS", "DocumentIdCollision", "IngestReport", "Progress", "ingest_paths", "nameless_names",
           "pipeline_fingerprint", "reconcile_if_marked", "reconcile_vectors", "refuse_id_collisions",
           "refuse_too_large", "remove_documents"]

Progress = Callable[[str, int, int], None]
"""``progress(stage, done, total)``, called as work advances."""

BATCH_CHUNKS = 256
#: Chunk vectors sent to Chroma in one upsert, and so how many chunks of small documents are
#: committed together: Chroma inserts faster in larger upserts (the cost is its HNSW index,
#: CPU-bound).
VECTOR_BATCH = 1024



@dataclass
class IngestReport:
    """What an ingest did, with figures a person can check."""

    documents_seen: int = 0
    documents_added: int = 0
    documents_updated: int = 0
    documents_unchanged: int = 0
    documents_removed: int = 0
    files_redone_for_settings: int = 0
    """Unchanged files written again because the chunking or extraction settings changed."""
    chunks_written: int = 0
    chunks_embedded: int = 0
    """Chunks whose vectors had to be computed by the model (not found in the cache)."""
    vectors_repaired: int = 0
    """Vectors added or deleted to make Chroma agree with SQLite (after a crash)."""
    vector_slots_freed: int = 0
    """Slots of deleted vectors freed by rebuilding the chunk collection (:mod:`workbench.vectors.compaction`)."""
    problems: list[LoadProblem] = field(default_factory=list)
    extraction_problems: list[str] = field(default_factory=list)
    seconds: float = 0.0
    stage_seconds: dict[str, float] = field(default_factory=lambda: defaultdict(float))

    def to_json(self) -> dict:
        return {
            "documents_seen": self.documents_seen, "documents_added": self.documents_added,
            "documents_updated": self.documents_updated, "documents_unchanged": self.documents_unchanged,
            "documents_removed": self.documents_removed, "files_redone_for_settings": self.files_redone_for_settings,
            "chunks_written": self.chunks_written,
            "chunks_embedded": self.chunks_embedded, "vectors_repaired": self.vectors_repaired,
            "vector_slots_freed": self.vector_slots_freed,
            "problems": [str(p) for p in self.problems], "extraction_problems": list(self.extraction_problems),
            "seconds": round(self.seconds, 3), "stage_seconds": {k: round(v, 3) for k, v in self.stage_seconds.items()},
        }


def reconcile_vectors(store: Store, vectors: VectorIndex, embedder: Embedder, keep: set[str] | None = None) -> int:
    """Make the chunk collection of ``embedder``'s space hold exactly the chunks SQLite has
    (chunk ids hash their text, so equal ids are equal vectors), after finishing a rebuild of it
    cut short (:meth:`~workbench.vectors.index.VectorIndex.finish_rebuild`). Returns the vectors changed.

    With ``keep``, the vectors of chunks SQLite lacks (sent by a write killed before its commit)
    are not deleted but their ids added to ``keep``: the ingest resuming that write reads them
    back instead of embedding those chunks again, and deletes the rest."""
    vectors.finish_rebuild(CHUNKS)
    wanted = store.chunk_text_hashes()
    have = vectors.ids(CHUNKS)
    extra = sorted(have - wanted.keys())
    missing = sorted(wanted.keys() - have)
    if extra and keep is not None:
        keep.update(extra)
        extra = []
    if extra:
        vectors.delete(CHUNKS, extra)
    if missing:
        chunks = store.chunks(missing)
        vecs, _ = embed_cached([c.text for c in chunks], store, embedder, vectors)
        vectors.upsert(CHUNKS, [c.id for c in chunks], vecs, [{"document": c.document_id} for c in chunks])
    store.set_meta(VECTORS_SPACE, embedder.name)
    return len(extra) + len(missing)


def reconcile_if_marked(store: Store, vectors: VectorIndex, embedder: Embedder, keep: set[str] | None = None) -> int:
    """Reconcile the vectors when they may be behind (see :func:`vectors_behind`); with ``keep``
    (see :func:`reconcile_vectors`) the mark stays while vectors were kept, for their write to clear."""
    if not vectors_behind(store, embedder):
        return 0
    changed = reconcile_vectors(store, vectors, embedder, keep)
    if not keep:
        store.set_meta(VECTORS_IN_FLIGHT, "0")
    return changed


def remove_documents(ids: Sequence[str], store: Store, vectors: VectorIndex) -> int:
    """Delete documents, their chunks, mentions, triples and vectors."""
    if not ids:
        return 0
    chunk_ids = store.chunk_ids_of(ids)
    store.delete_documents(ids)
    vectors.delete(CHUNKS, chunk_ids)
    return len(ids)


def _removed_sources(paths: Sequence[Path], store: Store, source_of: Mapping[str, str], found: set[str]) -> list[str]:
    """Stored documents under the given paths whose file no longer exists (``source_of``: each
    stored document's file; ``found``: the real paths of the files the walk just found there,
    which exist without asking again)."""
    gone = []
    for p in paths:
        for doc_id in store.documents_under(str(p.resolve())):
            gone.append(doc_id)
    missing = {source for source in {source_of[d] for d in gone} if source not in found and not Path(source).exists()}
    return sorted(d for d in set(gone) if source_of[d] in missing)


def ingest_paths(paths: Sequence[str | Path], store: Store, vectors: VectorIndex, embedder: Embedder,
                 settings, progress: Progress | None = None, within: Sequence[str | Path] | None = None,
                 candidates: bool = True) -> IngestReport:
    """Bring the workspace up to date with the files under ``paths``; given ``within`` (the files
    and folders under them that changed, as a watch sees them), with those alone: only they are
    read, and only the documents of those that are gone are removed. Without ``candidates`` the
    ``SIMILAR_TO`` candidates are left behind (marked :data:`CANDIDATES_BEHIND`) for a later step:
    a watch brings them up to date once its folder is quiet, the next ingest does otherwise."""
    started = time.perf_counter()
    report = IngestReport()
    progress = progress or (lambda stage, done, total: None)
    stage = report.stage_seconds
    # Built first: a pattern that does not compile, or extraction.llm without a model, stops here.
    llm_client = client_from_settings(settings.llm) if settings.extraction.llm else None
    extractors = extractors_from_settings(settings.extraction, llm_client)
    typed_client = None
    if settings.extraction.typed_relations:
        typed_client = client_from_settings(settings.llm)
        if typed_client is None:
            raise LLMError("extraction.typed_relations is on but no language model is configured: set "
                           f"{settings.llm.base_url_env} and {settings.llm.model_env}, or turn extraction.typed_relations off")

    walk = CorpusWalk(paths, within)  # walked once: the size limit, the load and the removals read it
    refuse_too_large(walk, store, settings.ingest.max_corpus_mb)
    t = time.perf_counter()
    interrupted = vectors_behind(store, embedder)  # a write died midway, none ever ran, or the embedder changed
    leftovers: set[str] = set()  # vectors a write killed before its commit sent: read back, not embedded again
    report.vectors_repaired = reconcile_if_marked(store, vectors, embedder, keep=leftovers)
    stage["reconcile"] += time.perf_counter() - t

    # Stored hashes include the chunking and extraction settings: when those change, every
    # document is redone (its chunks' vectors are read back from Chroma: only new texts reach the model).
    pipeline = pipeline_fingerprint(settings)

    def keyed(digest: str) -> str:
        return hashlib.sha256(f"{digest}:{pipeline}".encode()).hexdigest()

    t = time.perf_counter()
    stored_digests = store.file_digests()
    digests: dict[str, str] = {}
    hashes = FileHashes(store.file_hashes())  # a file whose stat is unchanged is not read again

    def already_stored(file: WalkedFile) -> bool:
        source = file.source
        digest = hashes.digest(file.path, source, file.stat)
        if digest is None:
            return False
        digests[source] = keyed(digest)
        if stored_digests.get(source) == digests[source]:
            return True
        if source in stored_digests and hashes.known_digest(source) == digest:
            report.files_redone_for_settings += 1  # the same bytes, another chunking or extraction
        return False

    loaded = load_paths([Path(p) for p in paths], skip=already_stored, within=within, walk=walk)
    report.problems.extend(loaded.problems)
    stage["load"] += time.perf_counter() - t
    source_of = store.document_sources()
    refuse_id_collisions(loaded.documents, source_of)

    found = {file.source for file in walk.files if file.stat is not None}
    removed = _removed_sources([Path(p) for p in (paths if within is None else within)], store, source_of, found)
    known = store.document_hashes()
    if loaded.skipped_files:
        skipped = {file.source for file in loaded.skipped_files}
        unchanged = sum(1 for source in source_of.values() if source in skipped)
        report.documents_seen += unchanged
        report.documents_unchanged += unchanged
    todo: list[Document] = []
    for doc in loaded.documents:
        report.documents_seen += 1
        doc = replace(doc, content_hash=keyed(doc.content_hash))
        if known.get(doc.id) == doc.content_hash and source_of.get(doc.id) == doc.source_path:
            report.documents_unchanged += 1  # (a moved file is written again: its record names the new path)
        else:
            todo.append(doc)
    behind = store.meta(CANDIDATES_BEHIND) == "1"
    if removed or todo or interrupted or (behind and candidates):
        with vector_writes(store):  # candidates inside the mark: a crash before them redoes them
            # Removed after the writes: a renamed file's chunks are read back from the old ones' vectors.
            _ingest_documents(todo, known, store, vectors, embedder, settings, extractors, progress, report, leftovers)
            if leftovers:  # those no chunk of this ingest claimed
                vectors.delete(CHUNKS, sorted(leftovers))
                report.vectors_repaired += len(leftovers)
            written = {doc.id for doc in todo}
            report.documents_removed = remove_documents([d for d in removed if d not in written], store, vectors)
            report.extraction_problems.extend(unresolved_note_targets(todo, store))
            if typed_client is not None:
                t = time.perf_counter()
                report.extraction_problems.extend(discover_typed_relations(
                    [d.id for d in todo if d.kind in NOTE_KINDS], store, vectors, embedder, typed_client, settings))
                stage["typed_relations"] += time.perf_counter() - t
            t = time.perf_counter()
            if candidates:
                refresh_candidates(store, vectors, embedder, settings.extraction.similar_notes_threshold)
            elif not behind:
                store.set_meta(CANDIDATES_BEHIND, "1")
            stage["candidates"] += time.perf_counter() - t
    # A file stands for its documents once all of them are stored from a problem-free load.
    clean = {file.source for file in loaded.clean_files}
    fresh = {path: digest for path, digest in digests.items() if path in clean and stored_digests.get(path) != digest}
    if fresh or removed:
        store.record_file_digests(fresh)
    if hashes.reads or removed:
        store.record_file_hashes(hashes.read_now())
    report.seconds = time.perf_counter() - started
    return report


class DocumentIdCollision(LoadError):
    """Files of this ingest would take the ids of documents another file still holds."""


def refuse_too_large(walk: CorpusWalk, store: Store, max_corpus_mb: float | None) -> None:
    """:class:`~workbench.ingest.corpus_limits.CorpusTooLarge` when the text the workspace would hold
    after ingesting the files of ``walk`` is over the limit; reads only the files' sizes and the record."""
    limit = limit_bytes(max_corpus_mb)
    if limit is None:
        return
    stored = store.text_bytes_by_source()
    check_corpus_size([str(p) for p in walk.paths], projected_text_bytes(file_sizes(walk), stored),
                      sum(n for _, n in stored), limit)


def refuse_id_collisions(documents: Sequence[Document], source_of: dict[str, str]) -> None:
    """Refuse, before anything is written, documents whose id a stored document of *another*
    file holds while that file still exists (``ingest a/notes`` then ``ingest b/notes``: both
    give ``notes/x.md``). A file that moved (its old path is gone) takes its id over.

    ``source_of`` maps each stored document id to its file.

    Raises
    ------
    DocumentIdCollision
        Naming both paths of the first collisions and what to do.
    """
    clashes = [(doc.id, doc.source_path, source_of[doc.id]) for doc in documents
               if source_of.get(doc.id) not in (None, doc.source_path) and Path(source_of[doc.id]).exists()]
    if clashes:
        shown = "; ".join(f"{doc_id!r}: {new} would replace {old}" for doc_id, new, old in clashes[:3])
        more = f" (and {len(clashes) - 3} more)" if len(clashes) > 3 else ""
        raise DocumentIdCollision(
            f"{len(clashes)} document ids are already held by other files{more}: {shown}. Ids are paths relative "
            "to the folder above the one ingested, so two folders of one name give the same ids: ingest from a "
            "folder of another name, or remove the stored documents first (`remove <their folder>`); nothing was "
            "written")


def nameless_names(doc: Document, extraction) -> list[str]:
    """One line per name found in ``doc`` that has no letter or digit, so makes no entity."""
    return _nameless_lines(doc, _nameless(extraction))


def _nameless(extraction) -> set[str]:
    names = [m.surface for m in extraction.mentions]
    names += [n for t in extraction.triples for n in (t.subject, t.object)]
    return {n for n in names if n.strip() and not name_key(n)}


def _nameless_lines(doc: Document, names: set[str]) -> list[str]:
    return [f"{doc.id}: name {n!r} has no letter or digit: no entity made for it" for n in sorted(names)]


def pipeline_fingerprint(settings) -> str:
    """Hash of the settings (and the extractors' version) that decide what a document's chunks
    and extractions are. A relation pattern's ``any_of`` guard is left out: it only keeps the
    regex off chunks it cannot match (workspaces made before relations had guards keep their
    fingerprint, and are not extracted again for it); so is ``chunking.pack_paragraphs`` when off,
    which changes nothing then (nor are workspaces made before it chunked again), ``extraction.nlp``
    when off, and ``chunking.pack_from_chars`` when empty or when every document is packed anyway."""
    unread: dict = {"relations": {"__all__": {"any_of"}}}
    if not settings.extraction.nlp:
        unread["nlp"] = True  # off is how every workspace made before it was extracted
    extraction = settings.extraction.model_dump_json(exclude=unread)
    packing, unused = settings.chunking, set()
    if not packing.pack_paragraphs:
        unused.add("pack_paragraphs")
    if packing.pack_paragraphs or packing.pack_from_chars is None:
        unused.add("pack_from_chars")
    chunking = packing.model_dump_json(exclude=unused or None)
    parts = f"{EXTRACTION_VERSION}:" + chunking + extraction
    return hashlib.sha256(parts.encode("utf-8")).hexdigest()


def _ingest_documents(todo: list[Document], known: dict[str, str], store: Store, vectors: VectorIndex,
                      embedder: Embedder, settings, extractors: list[Extractor], progress: Progress,
                      report: IngestReport, leftovers: set[str] | None = None) -> None:
    """Write ``todo``: documents are extracted, embedded and written a window of at most
    :data:`BATCH_CHUNKS` chunks at a time (small documents share a window, a large one spans
    many), into an SQLite transaction committed only at a document's end, so a document is
    stored whole or not at all and a 30 MB file is never held extracted or embedded whole.

    ``leftovers``: ids of vectors Chroma holds for no stored chunk (see :func:`reconcile_vectors`);
    a chunk made again under one of them takes its vector, and its id leaves the set. Progress is
    told in characters of the documents' text whose vectors are durable."""
    stage = report.stage_seconds
    total = sum(len(doc.text) for doc in todo)
    progress(DOCUMENTS, 0, total)
    batch = _Batch(store, vectors, embedder, known, report, leftovers if leftovers is not None else set(),
                   lambda done: progress(DOCUMENTS, min(done, total), total))
    try:
        for doc in todo:
            t = time.perf_counter()
            chunks = chunk_document(doc, settings.chunking.max_chars,
                                    pack=packs(doc, settings.chunking.pack_paragraphs, settings.chunking.pack_from_chars))
            stage["chunk"] += time.perf_counter() - t
            nameless: set[str] = set()
            batch.begin(doc)
            t = time.perf_counter()
            for window, extraction in extract_windows(doc, chunks, extractors, BATCH_CHUNKS):
                stage["extract"] += time.perf_counter() - t
                report.extraction_problems.extend(f"{doc.id}: {p}" for p in extraction.problems)
                nameless |= _nameless(extraction)
                batch.add(doc, window, extraction)
                if batch.pending_chunks >= BATCH_CHUNKS:
                    batch.flush()
                t = time.perf_counter()
            stage["extract"] += time.perf_counter() - t
            report.extraction_problems.extend(_nameless_lines(doc, nameless))
            del chunks
            if batch.written_chunks + batch.pending_chunks >= VECTOR_BATCH:
                batch.commit()
        batch.commit()
        progress(DOCUMENTS, total, total)
    except BaseException:
        batch.rollback()
        raise


class _Batch:
    """Documents on their way into one SQLite transaction: windows of their chunks and
    extractions wait in ``pending`` until :meth:`flush` embeds them in one model call, upserts
    their vectors into Chroma and inserts their rows; :meth:`commit` ends the transaction
    (vectors go in before the commit: the next ingest reads them back after a crash, see
    :func:`reconcile_vectors`). ``durable(characters)`` is told the text whose vectors are in Chroma
    after each commit and, inside a document of many windows, after each send."""

    def __init__(self, store: Store, vectors: VectorIndex, embedder: Embedder, known: dict[str, str],
                 report: IngestReport, leftovers: set[str], durable: Callable[[int], None]):
        self.store, self.vectors, self.embedder, self.known, self.report = store, vectors, embedder, known, report
        self.leftovers, self.durable = leftovers, durable
        self.unsent_chars = 0
        self.durable_chars = 0
        self.writes: DocumentWrites | None = None
        self.pending: list[tuple[Sequence[Chunk], Extraction]] = []
        self.pending_chunks = 0
        self.unsent: list[tuple[list[str], np.ndarray, list[dict]]] = []  # embedded, not yet in Chroma
        self.unsent_chunks = 0
        self.written_chunks = 0
        self.documents: list[Document] = []
        self.started: set[str] = set()
        self.old_ids: set[str] = set()
        self.leaving: dict[str, str] = {}  # text hash -> an old chunk of a document replaced here
        self.new_ids: set[str] = set()
        self.documents_done = 0

    def begin(self, doc: Document) -> None:
        self.documents.append(doc)

    def add(self, doc: Document, window: Sequence[Chunk], extraction: Extraction) -> None:
        self.pending.append((window, extraction))
        self.pending_chunks += len(window)

    def flush(self) -> None:
        """Embed, upsert and insert the pending windows into the open transaction."""
        stage = self.report.stage_seconds
        if self.writes is None:
            self.writes = DocumentWrites(self.store)
        chunks = [c for window, _ in self.pending for c in window]
        fresh = [doc for doc in self.documents if doc.id not in self.started]
        for chunk_id, hashed in self.store.chunk_hashes_of([doc.id for doc in fresh if doc.id in self.known]):
            self.old_ids.add(chunk_id)  # their rows go with this flush; their vectors after the commit
            self.leaving.setdefault(hashed, chunk_id)
        resumed = {c.id for c in chunks if c.id in self.leftovers}
        for c in chunks:
            if c.id in resumed:  # sent by a write killed before its commit: Chroma holds it under this id
                self.leaving.setdefault(text_hash(c.text), c.id)
        t = time.perf_counter()
        vecs, computed = embed_cached([c.text for c in chunks], self.store, self.embedder, self.vectors, self.leaving)
        self.report.chunks_embedded += computed
        stage["embed"] += time.perf_counter() - t
        t = time.perf_counter()
        self.leftovers -= resumed
        unsent = [i for i, c in enumerate(chunks) if c.id not in resumed]  # the resumed ones are in Chroma
        self.unsent.append(([chunks[i].id for i in unsent], vecs[unsent],
                            [{"document": chunks[i].document_id} for i in unsent]))
        self.unsent_chunks += len(unsent)
        self.unsent_chars += sum(len(chunks[i].text) for i in unsent)
        self.durable_chars += sum(len(c.text) for c in chunks if c.id in resumed)
        # Told while the transaction stays open only inside a document of many windows (its commit
        # is far): a reader opening the record waits for an open transaction.
        spanning = bool(self.documents) and self.documents[-1].id in self.started
        if self.unsent_chunks >= VECTOR_BATCH and self._send() and spanning:
            self.durable(self.durable_chars)
        for doc in fresh:
            self.writes.document(doc)
            self.started.add(doc.id)
        for window, extraction in self.pending:
            self.writes.rows(window, [text_hash(c.text) for c in window], extraction.mentions, extraction.triples)
        self.new_ids.update(c.id for c in chunks)
        self.written_chunks += len(chunks)
        self.pending, self.pending_chunks = [], 0
        stage["store"] += time.perf_counter() - t

    def commit(self) -> None:
        """Flush, commit the documents begun, then drop the vectors of chunks they no longer have."""
        if self.pending or any(doc.id not in self.started for doc in self.documents):
            self.flush()
        if self.writes is None:
            return
        t = time.perf_counter()
        self._send()  # vectors go in before the commit (the next ingest reads them back after a crash)
        self.writes.commit()
        self.writes = None
        self.durable(self.durable_chars)
        stale = sorted(self.old_ids - self.new_ids)
        if stale:
            self.vectors.delete(CHUNKS, stale)
        self.report.stage_seconds["store"] += time.perf_counter() - t
        for doc in self.documents:
            if doc.id in self.known:
                self.report.documents_updated += 1
            else:
                self.report.documents_added += 1
        self.report.chunks_written += self.written_chunks
        self.documents_done += len(self.documents)
        self.documents, self.started, self.old_ids, self.new_ids, self.leaving = [], set(), set(), set(), {}
        self.written_chunks = 0

    def _send(self) -> bool:
        """Upsert the vectors embedded since the last send into Chroma, in one call; True when some were."""
        if not self.unsent:
            return False
        ids = [i for part in self.unsent for i in part[0]]
        metadatas = [m for part in self.unsent for m in part[2]]
        if ids:
            self.vectors.upsert(CHUNKS, ids, np.concatenate([part[1] for part in self.unsent]), metadatas)
        self.unsent, self.unsent_chunks = [], 0
        self.durable_chars += self.unsent_chars
        self.unsent_chars = 0
        return True

    def rollback(self) -> None:
        self.unsent, self.unsent_chunks, self.unsent_chars = [], 0, 0
        if self.writes is not None:
            self.writes.rollback()
            self.writes = None
