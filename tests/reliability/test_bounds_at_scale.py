"""Nothing quadratic on the ingest path (issue 25): note-similarity candidates stay at most 3 per
note from a blocked top-k search in bounded memory, over generated corpora of many notes."""

from __future__ import annotations

import tracemalloc
import zlib
from collections import defaultdict

import numpy as np
import pytest

import workbench.extract.notes as notes_module
import workbench.workspace.note_links as note_links
import workbench.workspace.ingest_pipeline as ingest_module
from workbench.bench.notes_fixture import write_notes
from workbench.ingest.chunking import chunk_document
from workbench.embedding import text_hash
from workbench.extract.notes import NEAREST_NOTES, _similar_note_candidates_reference
from workbench.workspace.note_links import MAX_CANDIDATES_PER_NOTE, best_per_note, note_similarity_candidates
from workbench.ingest.loaders import load_paths
from workbench.record.store import Store


class HashedWordsEmbedder:
    """Deterministic bag-of-words vectors, each word a fixed random direction seeded by its hash:
    notes that share words are similar, as with a model (and no two notes tie), and 3,000 notes
    embed in well under a second."""

    name = "hashed-words-64"
    dimension = 64

    def __init__(self) -> None:
        self._words: dict[str, np.ndarray] = {}

    def _word(self, word: str) -> np.ndarray:
        if word not in self._words:
            self._words[word] = np.random.default_rng(zlib.crc32(word.encode())).normal(size=self.dimension)
        return self._words[word]

    def embed(self, texts):
        out = np.zeros((len(texts), self.dimension), dtype=np.float32)
        for row, text in enumerate(texts):
            for word in text.lower().split():
                out[row] += self._word(word)
        return out


def _per_note(triples) -> dict[str, int]:
    counts: dict[str, int] = defaultdict(int)
    for t in triples:
        counts[t.subject] += 1
        counts[t.object] += 1
    return counts


def _key(triples):
    return [(t.subject, t.object, t.chunk_id) for t in triples]


@pytest.fixture
def note_store(tmp_path):
    """``note_store(n)``: a record of ``n`` generated one-paragraph notes, their vectors cached
    by :class:`HashedWordsEmbedder` (no model, no Chroma: the similarity step alone)."""
    stores = []

    def make(n: int):
        folder = write_notes(tmp_path / f"notes{n}", n, seed=25)
        store = Store(tmp_path / f"record{n}.sqlite")
        stores.append(store)
        embedder = HashedWordsEmbedder()
        batch = []
        for doc in load_paths([folder]).documents:
            chunks = chunk_document(doc, 1000)
            batch.append((doc, chunks, [], [], [text_hash(c.text) for c in chunks]))
        store.replace_documents(batch)
        texts = [c.text for c in store.chunks()]
        store.cache_embeddings([text_hash(t) for t in texts], embedder.embed(texts), embedder.name)
        return store, embedder

    yield make
    for store in stores:
        store.close()


def test_candidates_of_3000_notes_are_at_most_3_per_note_and_those_of_the_dense_search(note_store, monkeypatch):
    store, embedder = note_store(3000)
    # Small pages and blocks, so paging and blocking both run many times.
    monkeypatch.setattr(note_links, "NOTE_PAGE_CHUNKS", 97)
    monkeypatch.setattr(notes_module, "BLOCK_ELEMENTS", 3000 * 50)
    found = note_similarity_candidates(store, embedder, 0.75)
    assert len(found) > 1000  # templated notes: many pairs above the threshold
    assert max(_per_note(found).values()) <= MAX_CANDIDATES_PER_NOTE

    # The same step through the dense n x n reference, restricted as the top-k search is.
    docs = {d.id: d for d in store.documents()}
    chunks_of = defaultdict(list)
    for chunk in store.chunks():
        chunks_of[chunk.document_id].append(chunk)
    means = {i: embedder.embed([c.text for c in chunks]).mean(axis=0) for i, chunks in chunks_of.items()}
    dense = _similar_note_candidates_reference(means, {i: d.title for i, d in docs.items()}, 0.75,
                                               {i: chunks[0].id for i, chunks in chunks_of.items()})
    assert len(dense) > len(found)
    ids = sorted(means)
    unit = np.vstack([means[i] / np.linalg.norm(means[i]) for i in ids]).astype(np.float64)
    similarity = unit @ unit.T
    np.fill_diagonal(similarity, -np.inf)
    position = {docs[i].title: n for n, i in enumerate(ids)}
    nearest = np.argsort(-similarity, axis=1, kind="stable")[:, :NEAREST_NOTES]
    in_top_k = [set(row.tolist()) for row in nearest]
    reachable = [t for t in dense if position[t.object] in in_top_k[position[t.subject]]
                 or position[t.subject] in in_top_k[position[t.object]]]
    assert _key(found) == _key(best_per_note(reachable))


def test_paging_averages_a_note_of_many_chunks_as_one_vector(tmp_path, monkeypatch):
    from workbench.model import Chunk, Document

    store = Store(tmp_path / "record.sqlite")
    embedder = HashedWordsEmbedder()
    long = Document("long.md", "/n/long.md", "Long", "markdown", "", "h1")
    short = Document("short.md", "/n/short.md", "Short", "markdown", "", "h2")
    long_chunks = [Chunk(f"l{i}", "long.md", i, f"redis kafka part {i}", 0, 1) for i in range(7)]
    short_chunks = [Chunk("s0", "short.md", 0, "redis kafka part 3", 0, 1)]
    store.replace_documents([(long, long_chunks, [], [], [text_hash(c.text) for c in long_chunks]),
                             (short, short_chunks, [], [], [text_hash(c.text) for c in short_chunks])])
    monkeypatch.setattr(note_links, "NOTE_PAGE_CHUNKS", 3)  # the long note spans three pages
    [triple] = note_similarity_candidates(store, embedder, 0.1)
    vectors = embedder.embed([c.text for c in long_chunks])
    mean, other = vectors.mean(axis=0), embedder.embed(["redis kafka part 3"])[0]
    cosine = float(mean @ other / np.linalg.norm(mean) / np.linalg.norm(other))
    assert (triple.subject, triple.object, triple.chunk_id) == ("Long", "Short", "l0")
    assert triple.confidence == pytest.approx(cosine, abs=1e-6)
    store.close()


class CachedOnly:
    """An embedder whose vectors are all in the record's cache: computing one is a failure."""

    name = "cached-only-384"
    dimension = 384

    def embed(self, texts):
        raise AssertionError(f"{len(texts)} texts were not in the cache")


def test_similarity_step_of_20000_notes_holds_no_n_by_n_matrix(tmp_path):
    """Peak traced memory of the whole step: the record paged through, the mean vectors, the
    blocked search, the candidates kept (the dense matrix alone was 20,000^2 x 8 B = 3.2 GB)."""
    from workbench.model import Chunk, Document

    n = 20_000
    store = Store(tmp_path / "record.sqlite")
    rng = np.random.default_rng(25)
    batch, hashes = [], []
    for i in range(n):
        text = f"note {i}"
        doc = Document(f"n{i:05d}.md", f"/n/n{i:05d}.md", f"Note {i}", "markdown", text, f"h{i}")
        batch.append((doc, [Chunk(f"c{i}", doc.id, 0, text, 0, len(text))], [], [], [text_hash(text)]))
        hashes.append(text_hash(text))
    store.replace_documents(batch)
    store.cache_embeddings(hashes, rng.normal(size=(n, 384)).astype(np.float32), CachedOnly.name)
    del batch
    tracemalloc.start()
    try:
        found = note_similarity_candidates(store, CachedOnly(), 0.2)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
        store.close()
    assert found and max(_per_note(found).values()) <= MAX_CANDIDATES_PER_NOTE
    assert peak < 300 * 2**20, f"peak {peak / 2**20:.0f} MB"


def test_a_few_hundred_real_notes_ingest_with_bounded_candidates(make_workspace, tmp_path, monkeypatch):
    corpus = write_notes(tmp_path / "notes", 300, seed=3)
    monkeypatch.setattr(notes_module, "BLOCK_ELEMENTS", 300 * 16)  # 16 rows a block: 19 blocks
    ws = make_workspace()
    report = ws.ingest([corpus])
    assert report.documents_added == 300 and report.chunks_embedded > 0
    candidates = ws.candidates()
    assert candidates, "the generated notes share services and templates: some are similar"
    assert max(_per_note(candidates).values()) <= MAX_CANDIDATES_PER_NOTE
    assert {t.relation for t in candidates} == {"SIMILAR_TO"} and {t.origin for t in candidates} == {"candidate"}
    assert ws.vectors.ids(ingest_module.CHUNKS) == ws.store.chunk_ids()


def test_write_notes_is_deterministic_in_its_seed_and_varied(tmp_path):
    a = write_notes(tmp_path / "a", 200, seed=1)
    b = write_notes(tmp_path / "b", 200, seed=1)
    c = write_notes(tmp_path / "c", 200, seed=2)
    texts = [p.read_text(encoding="utf-8") for p in sorted(a.iterdir())]
    assert texts == [p.read_text(encoding="utf-8") for p in sorted(b.iterdir())]
    assert texts != [p.read_text(encoding="utf-8") for p in sorted(c.iterdir())]
    assert len(set(texts)) == 200
    body = "\n".join(texts)
    assert "@" in body and " Service" in body and any(str(year) in body for year in (2023, 2024, 2025))
    assert all(t.startswith("# ") and t.count("\n\n") == 1 for t in texts)  # a title and one paragraph
