"""The handbook of distinct text (workbench/bench/distinct_text.py) and its ``bench scale`` run."""

from __future__ import annotations

import json

from workbench.bench.distinct_text import chunk_texts, section, write_distinct_markdown
from workbench.embedding import text_hash

from tests.conftest import run_cli


def test_the_same_seed_writes_the_same_handbook_and_another_seed_another(tmp_path):
    first = write_distinct_markdown(tmp_path / "a.md", 0.05, seed=4).read_bytes()
    again = write_distinct_markdown(tmp_path / "b.md", 0.05, seed=4).read_bytes()
    other = write_distinct_markdown(tmp_path / "c.md", 0.05, seed=5).read_bytes()
    assert first == again
    assert first != other


def test_the_handbook_has_the_size_asked_for(tmp_path):
    for megabytes in (0.02, 0.3):
        size = write_distinct_markdown(tmp_path / f"{megabytes}.md", megabytes).stat().st_size
        target = int(megabytes * 2**20)
        assert target <= size < target + 2_000  # never more than one section over


def test_every_chunk_of_the_handbook_is_a_distinct_text(tmp_path, settings):
    path = write_distinct_markdown(tmp_path / "handbook.md", 0.3, seed=1)
    packed = settings.model_copy(deep=True)
    packed.chunking.pack_paragraphs = True  # as a file of a million characters is chunked
    for chosen in (settings, packed):
        texts = chunk_texts(path, chosen)
        assert len(texts) > 100
        assert len({text_hash(t) for t in texts}) == len(texts)
    assert len(chunk_texts(path, packed)) < len(chunk_texts(path, settings))


def test_sections_are_short_numbered_and_differ_in_their_names():
    texts = [section(0, 1, n) for n in range(1, 201)]
    assert all(t.startswith(f"## 1.{n} ") for n, t in zip(range(1, 201), texts))
    assert max(map(len, texts)) < 1_500
    # names come from open sets with a long tail: many distinct, a few recurring
    words = [w for t in texts for w in t.replace(".", " ").replace(";", " ").split() if w.istitle()]
    assert len(set(words)) > 200


def test_bench_scale_ingests_the_handbook_and_counts_every_chunk_embedded(tmp_path):
    result = run_cli("bench", "scale", "--copies", "0", "--distinct-mb", "0.05", "--embedder", "static",
                     "--cache-dir", tmp_path / "cache", "--json")
    assert result.returncode == 0, result.stderr[-2000:]
    run = json.loads(result.stdout)["distinct_text"]
    assert run["chunks"] > 20 and run["distinct_texts"] == run["chunks"]
    ingest = run["ingest"]
    assert ingest["chunks"] == ingest["embedded"] == run["chunks"]
    assert ingest["peak_rss_mb"] > 0 and ingest["workspace_mb"] > 0 and ingest["chunks_per_s"] > 0
    by_stage = ingest["peak_rss_by_stage_mb"]  # which step reached the peak
    assert {"ingest", "context graph"} <= set(by_stage) and max(by_stage.values()) == ingest["peak_rss_mb"]
    assert "model_alone" not in run  # the static embedder has no model's own rate to be set against
