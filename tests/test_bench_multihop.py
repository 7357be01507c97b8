"""The multi-hop benchmark end to end on a tiny synthetic set in the bench format."""

from __future__ import annotations

import json

import pytest

from workbench.bench.multihop import (BASELINE_MODES, BenchError, available_modes, bench_workspace, load_bench,
                                      passage_of, recall_at, run_multihop)

PASSAGES = [
    ("p0", "Orlin Vask", "Orlin Vask is a glassblower who was born in the river town of Tessary."),
    ("p1", "Tessary", "Tessary is a river town whose mayor is Bendt Ulloran, elected in 2019."),
    ("p2", "Bendt Ulloran", "Bendt Ulloran studied marine biology before entering politics."),
    ("p3", "Quell Observatory", "The Quell Observatory stands on a granite ridge above the Marrow Valley."),
    ("p4", "Marrow Valley", "The Marrow Valley is drained by the Sable River, which freezes each winter."),
    ("p5", "Sable River", "The Sable River flows north for 340 kilometres into Lake Ondine."),
    ("p6", "Pemberly Jam", "Pemberly Jam is a fruit preserve made from cloudberries and sugar."),
    ("p7", "Cloudberry", "The cloudberry is a low plant of bogs and tundra with amber fruit."),
    ("p8", "Hattie Morrow", "Hattie Morrow founded the Pemberly preserve company in 1921."),
    ("p9", "Lake Ondine", "Lake Ondine is a deep cold lake known for its ice fishing festival."),
]
QUESTIONS = [
    ("q1", "Who is the mayor of the town where Orlin Vask was born?", ["p0", "p1"]),
    ("q2", "Which lake does the river that drains the valley below the Quell Observatory flow into?", ["p3", "p4", "p5"]),
    ("q3", "What fruit is Pemberly Jam made from?", ["p6"]),
]


@pytest.fixture
def bench_dir(tmp_path):
    folder = tmp_path / "tinyset"
    folder.mkdir()
    (folder / "corpus.jsonl").write_text(
        "".join(json.dumps({"id": i, "title": t, "text": x}) + "\n" for i, t, x in PASSAGES), encoding="utf-8")
    (folder / "queries.jsonl").write_text(
        "".join(json.dumps({"id": q, "question": text, "answer": "", "gold_ids": gold}) + "\n"
                for q, text, gold in QUESTIONS), encoding="utf-8")
    return folder


def test_recall_at_counts_distinct_passages_in_rank_order():
    assert recall_at(["a", "a", "b", "c"], ["b", "c"], 2) == 0.5
    assert recall_at(["x"], ["b", "c"], 5) == 0.0


def test_document_ids_map_back_to_passage_ids():
    assert passage_of("passages.jsonl#p7") == "p7" and passage_of("p7") == "p7"


def test_limit_keeps_the_first_questions_and_the_whole_corpus(bench_dir):
    bench = load_bench(bench_dir, limit=2)
    assert [q.id for q in bench.questions] == ["q1", "q2"] and len(bench.passages) == 10
    assert bench.name == "tinyset"


def test_gold_id_missing_from_corpus_is_an_error(bench_dir):
    with (bench_dir / "queries.jsonl").open("a", encoding="utf-8") as out:
        out.write(json.dumps({"id": "bad", "question": "q?", "gold_ids": ["nope"]}) + "\n")
    with pytest.raises(BenchError, match="line 4: gold ids not in the corpus: nope"):
        load_bench(bench_dir)


def test_registered_modes_list_the_baselines_first():
    modes = available_modes()
    assert tuple(modes[:3]) == BASELINE_MODES and len(modes) == len(set(modes))


def test_bench_runs_every_mode_end_to_end_and_caches_the_workspace(bench_dir, tmp_path, settings, embedder):
    bench = load_bench(bench_dir)
    ws = bench_workspace(bench, tmp_path / "cache", settings=settings, embedder=embedder)
    try:
        docs = {d.id: d for d in ws.store.documents()}
        assert sorted(passage_of(i) for i in docs) == [p[0] for p in PASSAGES]
        # Passage text is title + newline + text, as the reference figures use.
        [chunk] = ws.store.chunks(ws.store.chunk_ids_of(["passages.jsonl#p1"]))
        assert chunk.text.startswith("Tessary\nTessary is a river town")
        report = run_multihop(ws, bench, ["vector"])
        hashes = ws.store.document_hashes()
    finally:
        ws.close()
    payload = report.to_json()
    assert set(payload) == {"dataset", "questions", "passages", "results"}
    assert (payload["dataset"], payload["questions"], payload["passages"]) == ("tinyset", 3, 10)
    assert list(payload["results"]) == list(BASELINE_MODES)
    for scores in payload["results"].values():
        assert set(scores) == {"recall@2", "recall@5", "seconds", "modes_used"}
        assert sum(scores["modes_used"].values()) == payload["questions"]
        assert 0 <= scores["recall@2"] <= scores["recall@5"] <= 100
    # The single-hop jam question is easy: dense retrieval finds its one passage in the top 2.
    assert report.results["vector"].recall_at_2 >= 100 / 3
    # The second open finds the ingest marker and neither ingests nor takes the write lock.
    assert (tmp_path / "cache" / "ingested.sha256").exists()
    again = bench_workspace(bench, tmp_path / "cache", settings=settings, embedder=embedder)
    try:
        assert len(again.store.documents()) == 10
        assert again.store.document_hashes() == hashes
    finally:
        again.close()


def test_cli_bench_multihop_prints_the_json_shape(bench_dir, tmp_path, capsys):
    from workbench.cli import main

    code = main(["bench", "multihop", "--data", str(bench_dir), "--workspace", str(tmp_path / "ws"),
                 "--modes", "keyword", "--limit", "2", "--json"])
    assert code == 0
    payload = json.loads(capsys.readouterr().out)
    assert payload["questions"] == 2 and payload["passages"] == 10
    assert list(payload["results"]) == ["keyword", "vector", "hybrid"]
    # A new workspace: the first ingest is timed, every chunk embedded by the named embedder.
    assert payload["embedder"].startswith("all-MiniLM-L6-v2")
    ingest = payload["ingest"]
    assert ingest["chunks_embedded"] >= 10 and ingest["seconds"] > 0
    assert ingest["passages_per_second"] == pytest.approx(10 / ingest["seconds"], rel=0.05)


def test_cli_bench_multihop_times_no_ingest_when_the_workspace_is_cached(bench_dir, tmp_path, capsys):
    from workbench.cli import main

    arguments = ["bench", "multihop", "--data", str(bench_dir), "--workspace", str(tmp_path / "ws"),
                 "--modes", "keyword", "--limit", "1"]
    assert main(arguments + ["--json"]) == 0
    assert json.loads(capsys.readouterr().out)["ingest"] is not None
    assert main(arguments) == 0
    assert "the workspace was ingested before (no ingest timed)" in capsys.readouterr().out
