"""Invariants over arbitrary input (hypothesis): loaders, canonicalization, fusion, remove/re-add."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from workbench.context_graph.canon import Canonicalizer
from workbench.text.name_keys import name_key
from workbench.ingest.loaders import SUPPORTED_EXTENSIONS, LoadError, LoadProblem, load_file, load_paths
from workbench.retrieve.fusion import rrf

_json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(
        st.sampled_from(["id", "title", "text", "speaker", "role", "content", "timestamp", "messages", "x"]),
        children, max_size=5),
    max_leaves=12,
)
# Raw bytes, and text that looks like what each loader expects (JSON lines, front matter).
_file_bytes = st.one_of(
    st.binary(max_size=400),
    st.text(max_size=300).map(lambda t: t.encode("utf-8", "surrogatepass")),
    st.lists(_json_values, max_size=5).map(lambda vs: "\n".join(json.dumps(v) for v in vs).encode()),
    st.tuples(st.text(max_size=80), st.text(max_size=80)).map(lambda p: f"---\n{p[0]}\n---\n{p[1]}".encode("utf-8", "surrogatepass")),
)


@settings(max_examples=300, deadline=None)
@given(data=_file_bytes, extension=st.sampled_from(SUPPORTED_EXTENSIONS))
def test_loaders_never_raise_on_arbitrary_bytes(data, extension):
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / f"input{extension}"
        path.write_bytes(data)
        documents, problems = load_file(path, path)  # anything but a LoadProblem is a bug
        assert all(isinstance(p, LoadProblem) and p.path.startswith("input") for p in problems)
        assert all(isinstance(d.text, str) and d.id.startswith("input") for d in documents)
        assert documents or any(p.skipped for p in problems)  # nothing vanishes without a word


def test_the_only_error_a_loader_raises_is_load_error_for_a_missing_path(tmp_path):
    try:
        load_paths([tmp_path / "missing"])
    except LoadError as exc:
        assert "missing" in str(exc)
    else:
        raise AssertionError("a missing path must raise LoadError")


@given(st.text())
def test_name_key_is_idempotent_and_total(name):
    key = name_key(name)
    assert isinstance(key, str)
    assert name_key(key) == key
    assert (key == "") == (not any(ch.isalnum() for ch in key))


_names = st.text(alphabet=st.sampled_from("abcAB -_.'s12"), min_size=1, max_size=8)


@given(aliases=st.dictionaries(_names, _names, max_size=6), surfaces=st.lists(_names, max_size=8))
def test_canonicalizer_is_total_idempotent_and_respects_name_keys(aliases, surfaces):
    canon = Canonicalizer(aliases=aliases)  # cycles included: they must end, not hang
    for surface in surfaces:
        key = canon.key(surface)
        assert isinstance(key, str)
        assert canon.key(key) == key  # a key is its own canonical form
        assert canon.key(name_key(surface)) == key  # ways of writing one name agree


@given(rankings=st.lists(st.lists(st.sampled_from("abcdefghij"), max_size=10), max_size=5),
       rrf_k=st.integers(0, 100), data=st.data())
def test_rrf_returns_every_input_hit_exactly_once(rankings, rrf_k, data):
    weights = data.draw(st.lists(st.floats(0, 5), min_size=len(rankings), max_size=len(rankings)))
    fused = rrf(rankings, rrf_k=rrf_k, weights=weights)
    ids = [i for i, _ in fused]
    assert sorted(ids) == sorted({i for r in rankings for i in r})
    assert [s for _, s in fused] == sorted((s for _, s in fused), reverse=True)


_SENTENCES = [
    "The {a} depends on the {b}.", "{a} uses {b} and {c}.", "The {a} is backed by {b}.",
    "{a} calls the {b} and the {c}.", "The {a} runs on {b}.",
]
_ENTITIES = ["auth service", "AuthService", "token cache", "Redis", "billing API", "Kafka", "payments worker"]


def _graph_state(ws) -> dict:
    stats = ws.stats()
    stats.pop("workspace")
    graph = ws.graph
    return {"stats": stats, "names": sorted((k, graph.name(k)) for k in graph.nx.nodes),
            "edges": sorted((e.source, e.relation, e.target, e.weight, e.chunk_ids, e.documents)
                            for e in graph.edges(include_comention=True))}


@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(docs=st.lists(st.lists(st.tuples(st.sampled_from(_SENTENCES), st.permutations(_ENTITIES)),
                              min_size=1, max_size=3), min_size=2, max_size=4),
       data=st.data())
def test_removing_a_document_then_adding_it_back_restores_the_graph_exactly(docs, data, embedder, settings):
    from workbench.workspace import Workspace

    victim = data.draw(st.integers(0, len(docs) - 1))
    with tempfile.TemporaryDirectory() as root:
        corpus = Path(root) / "corpus"
        corpus.mkdir()
        for i, sentences in enumerate(docs):
            text = " ".join(s.format(a=e[0], b=e[1], c=e[2]) for s, e in sentences)
            (corpus / f"doc{i}.md").write_text(text + "\n", encoding="utf-8")
        ws = Workspace(Path(root) / "ws", settings=settings, embedder=embedder)
        try:
            ws.ingest([corpus])
            before = _graph_state(ws)
            assert ws.remove(corpus / f"doc{victim}.md") == [f"corpus/doc{victim}.md"]
            ws.ingest([corpus])
            assert _graph_state(ws) == before
        finally:
            ws.close()
