"""A query reads one graph: inside ``pinned()`` a thread keeps the graph, the record version and
the retrieval indexes it first read, while another writer commits."""

from __future__ import annotations

import threading

from workbench.retrieve import retrieve
from workbench.retrieve.cache import indexes_for


def auth_corpus(tmp_path):
    """A folder of one note, the Auth Service depending on Redis."""
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    (corpus / "auth.md").write_text("# Auth\n\nThe Auth Service depends on Redis.\n")
    return corpus


def test_a_pinned_reader_keeps_its_graph_while_another_writer_commits(make_workspace, tmp_path):
    corpus = auth_corpus(tmp_path)
    reader = make_workspace("ws")
    reader.ingest([corpus])
    writer = make_workspace("ws")  # another handle on the same folder, as another process has
    with reader.pinned():
        graph, version = reader.graph, reader.version
        indexes = indexes_for(reader)
        assert indexes.relation_edges
        (corpus / "billing.md").write_text("# Billing\n\nThe Billing Service depends on Kafka.\n")
        writer.ingest([corpus])
        assert reader.store.version > version  # the record moved on under the reader
        seen_outside = []
        thread = threading.Thread(target=lambda: seen_outside.append("kafka" in reader.graph))
        thread.start()
        thread.join()
        assert seen_outside == [True]  # another thread, not pinned, reads the new graph
        assert reader.graph is graph and reader.version == version and "kafka" not in graph
        assert indexes_for(reader) is indexes
        assert all(e.source in graph and e.target in graph for edges in indexes.relation_edges.values() for e in edges)
        with reader.pinned():  # a block inside keeps the outer pin
            assert reader.graph is graph
    assert "kafka" in reader.graph and reader.version == reader.store.version
    assert indexes_for(reader) is not indexes


def test_a_query_reads_the_graph_once_pinned_and_the_pin_ends_with_it(sample_workspace, monkeypatch):
    derivations = []
    real = type(sample_workspace.derivation).current

    def counted(self):
        derivations.append(1)
        return real(self)

    monkeypatch.setattr(type(sample_workspace.derivation), "current", counted)
    result = retrieve(sample_workspace, "If Redis goes down, what breaks?", mode="graphrag")
    assert result.hits and len(derivations) == 1  # every read of the query came from one derivation
    assert not sample_workspace.pins.is_pinned()


def test_a_pinned_scope_keeps_its_graph_while_another_writer_commits(make_workspace, tmp_path):
    from workbench.workspace.scoped_view import scoped

    corpus = auth_corpus(tmp_path)
    ws = make_workspace("ws")
    ws.ingest([corpus])
    view = scoped(ws, [ws.documents()[0].id])
    with view.pinned():
        graph, version = view.graph, view.version
        (corpus / "auth.md").write_text("# Auth\n\nThe Auth Service depends on Memcached.\n")
        make_workspace("ws").ingest([corpus])
        assert view.graph is graph and view.version == version and "redis" in graph
    assert view.version > version  # out of the block, the record as it is now
