"""The Chroma client is let go after an ingest's vectors are written, and opened again on demand."""

from __future__ import annotations

import chromadb
import numpy as np
from chromadb.api.shared_system_client import SharedSystemClient
from chromadb.config import Settings as ChromaSettings

from tests.conftest import make_corpus
from workbench.retrieve import retrieve
from workbench.vectors.index import CHUNKS, VectorIndex


def _chroma_running(folder) -> bool:
    """Whether this process still runs Chroma's system (and holds its collections) for ``folder``."""
    return str(folder) in SharedSystemClient._identifier_to_system


def _maker(folder):
    return lambda: chromadb.PersistentClient(path=str(folder), settings=ChromaSettings(anonymized_telemetry=False))


def _unit(rows: int = 3, dim: int = 8) -> np.ndarray:
    vectors = np.random.default_rng(0).random((rows, dim)).astype(np.float32)
    return vectors / np.linalg.norm(vectors, axis=1, keepdims=True)


def test_an_ingest_closes_chroma_before_deriving_and_a_search_opens_it_again(make_workspace, tmp_path):
    ws = make_workspace()
    ws.ingest([make_corpus(tmp_path / "c", 1)])
    assert not _chroma_running(ws.path / "chroma")
    result = retrieve(ws, "What does service number 0 depend on?", mode="vector", k=1)
    assert [h.chunk_id for h in result.hits] == [c.id for c in ws.chunks()]
    assert _chroma_running(ws.path / "chroma")
    ws.close()
    assert not _chroma_running(ws.path / "chroma")


def test_release_waits_for_no_call_and_reopens(tmp_path):
    index = VectorIndex(_maker(tmp_path / "chroma"), "wb", "w1")
    vectors = _unit()
    index.upsert(CHUNKS, ["a", "b", "c"], vectors)
    with index._shared.using():  # a call under way in another thread
        assert index.release() is False
        assert _chroma_running(tmp_path / "chroma")
    assert index.release() is True
    assert not _chroma_running(tmp_path / "chroma")
    assert index.release() is False  # nothing open: nothing to close
    assert [m.id for m in index.query(CHUNKS, vectors[1], 1)] == ["b"]
    assert index.count(CHUNKS) == 3


def test_a_view_of_another_space_shares_the_client_and_its_release(tmp_path):
    index = VectorIndex(_maker(tmp_path / "chroma"), "wb", "w1")
    other = index.in_space("another-model")
    index.upsert(CHUNKS, ["a", "b", "c"], _unit())
    other.upsert(CHUNKS, ["x"], _unit(1))
    assert other.release() is True
    assert not _chroma_running(tmp_path / "chroma")
    assert (index.count(CHUNKS), other.count(CHUNKS)) == (3, 1)


def test_a_client_handed_in_is_never_closed(tmp_path):
    client = _maker(tmp_path / "chroma")()
    index = VectorIndex(client, "wb", "w1")
    index.upsert(CHUNKS, ["a", "b", "c"], _unit())
    assert index.release() is False
    assert client.count_collections() == 1
    client.close()
