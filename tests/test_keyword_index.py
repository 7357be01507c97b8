"""BM25 keyword search: literal identifiers, Chinese among English, zero scores, edge cases."""

from __future__ import annotations

import math
import random
from collections import Counter

import pytest

from workbench.corpus.keyword_index import KeywordIndex, KeywordIndexError, KeywordMatch
from workbench.text.tokenize import tokenize

PASSAGES = {
    "redis-down": "The checkout service failed with ECONNREFUSED when Redis restarted.",
    "token-cache": "Tokens are cached in src/auth/token_cache.py for five minutes.",
    "postgres": "Postgres is the primary store; replicas serve read traffic.",
    "stampede": "发生缓存雪崩时，大量请求直接打到数据库，导致数据库过载。",
    "kafka": "Kafka consumers lag when the broker disk is full.",
}


@pytest.fixture()
def index():
    return KeywordIndex.build(list(PASSAGES), list(PASSAGES.values()))


def _reference_bm25(query: str, texts: dict[str, str], k1: float = 1.5, b: float = 0.75) -> dict[str, float]:
    """Lucene BM25 written out by hand, the formula bm25s implements by default."""
    docs = {i: tokenize(t) for i, t in texts.items()}
    n = len(docs)
    avg_len = sum(map(len, docs.values())) / n
    df = Counter(term for tokens in docs.values() for term in set(tokens))
    scores = {}
    for doc_id, tokens in docs.items():
        tf = Counter(tokens)
        score = 0.0
        for term in dict.fromkeys(tokenize(query)):
            if tf[term]:
                idf = math.log(1 + (n - df[term] + 0.5) / (df[term] + 0.5))
                score += idf * tf[term] / (k1 * ((1 - b) + b * len(tokens) / avg_len) + tf[term])
        if score > 0:
            scores[doc_id] = score
    return scores


def test_error_code_query_finds_the_chunk_that_contains_it(index):
    hits = index.search("ECONNREFUSED", k=3)
    assert [h.id for h in hits] == ["redis-down"]
    assert hits[0].matched_terms == ("econnrefused",)


def test_file_name_query_finds_the_chunk_with_its_full_path(index):
    hits = index.search("token_cache.py", k=3)
    assert hits[0].id == "token-cache"
    assert "token_cache.py" in hits[0].matched_terms


def test_words_of_an_identifier_find_it(index):
    assert index.search("token cache", k=1)[0].id == "token-cache"


def test_chinese_query_finds_the_chinese_chunk_among_english_ones(index):
    hits = index.search("缓存雪崩", k=5)
    assert [h.id for h in hits] == ["stampede"]
    assert set(hits[0].matched_terms) == set(tokenize("缓存雪崩"))


def test_stopword_only_query_returns_nothing(index):
    assert index.search("the is of when", k=5) == []


def test_documents_sharing_no_term_are_not_returned(index):
    hits = index.search("Redis replicas", k=5)
    assert {h.id for h in hits} == {"redis-down", "postgres"}
    assert all(h.score > 0 for h in hits)


def test_unknown_and_empty_queries_return_nothing(index):
    assert index.search("zookeeper", k=5) == []
    assert index.search("", k=5) == []
    assert index.search("   ", k=5) == []


def test_k_caps_the_results_and_zero_k_gives_none(index):
    assert len(index.search("Redis replicas", k=1)) == 1
    assert len(index.search("Redis replicas", k=100)) == 2
    assert index.search("Redis", k=0) == []


def test_matched_terms_are_the_query_terms_in_the_hit(index):
    hit = index.search("Kafka broker Postgres", k=5)
    by_id = {h.id: h.matched_terms for h in hit}
    assert by_id == {"kafka": ("kafka", "broker"), "postgres": ("postgres",)}


def test_scores_agree_with_hand_written_bm25(index):
    query = "Redis ECONNREFUSED Postgres replicas 数据库 Kafka"
    expected = _reference_bm25(query, PASSAGES)
    hits = index.search(query, k=10)
    assert hits and {h.id for h in hits} == set(expected)
    for hit in hits:
        assert hit.score == pytest.approx(expected[hit.id], rel=1e-5)
    assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)


def test_equal_scores_are_ordered_by_id():
    index = KeywordIndex.build(["c", "a", "b"], ["redis cache", "redis cache", "redis cache"])
    assert [h.id for h in index.search("redis", k=3)] == ["a", "b", "c"]


def test_repeated_query_word_scores_like_a_single_one(index):
    assert index.search("redis redis redis", k=1) == index.search("redis", k=1)


def test_single_document_index():
    index = KeywordIndex.build(["only"], ["Redis holds the sessions"])
    assert [h.id for h in index.search("sessions", k=5)] == ["only"]
    assert index.search("kafka", k=5) == []


def test_empty_index_returns_nothing():
    index = KeywordIndex.build([], [])
    assert len(index) == 0
    assert index.search("redis", k=5) == []


def test_index_of_stopword_only_texts_returns_nothing():
    index = KeywordIndex.build(["a", "b"], ["the of and", ""])
    assert index.search("the", k=5) == []


def test_empty_text_among_others_is_never_a_hit():
    index = KeywordIndex.build(["empty", "full"], ["", "redis"])
    assert [h.id for h in index.search("redis", k=5)] == ["full"]


def test_mismatched_ids_and_texts_are_rejected():
    with pytest.raises(KeywordIndexError, match="2 ids but 1 texts"):
        KeywordIndex.build(["a", "b"], ["text"])


def test_repeated_ids_are_rejected():
    with pytest.raises(KeywordIndexError, match="repeated ids \\['a'\\]"):
        KeywordIndex.build(["a", "b", "a"], ["x", "y", "z"])


def test_match_is_a_frozen_record(index):
    hit = index.search("Kafka", k=1)[0]
    assert isinstance(hit, KeywordMatch)
    with pytest.raises(AttributeError):
        hit.score = 0.0  # type: ignore[misc]


def test_six_thousand_passages_index_finds_each_literal_identifier():
    # Speed is measured by the perf benchmark, not here: this checks correctness at scale.
    rng = random.Random(0)
    words = ("redis postgres kafka cache token auth service gateway timeout retry queue worker "
             "database index shard replica leader follower deploy rollback").split()
    texts = [" ".join(rng.choice(words) for _ in range(rng.randint(60, 150))) + f" ERR{i} file_{i}.py" for i in range(6000)]
    ids = [f"c{i:05d}" for i in range(6000)]
    index = KeywordIndex.build(ids, texts)
    assert len(index) == 6000
    assert index.search("ERR4242", k=5)[0].id == "c04242"
    assert index.search("file_7.py", k=1)[0].id == "c00007"


def test_a_kept_index_answers_exactly_as_the_built_one(tmp_path):
    rng = random.Random(1)
    words = "redis postgres kafka 缓存 雪崩 token auth service gateway timeout ERR42 file_9.py".split()
    texts = [" ".join(rng.choice(words) for _ in range(rng.randint(3, 40))) for _ in range(500)]
    built = KeywordIndex.build([f"c{i:04d}" for i in range(500)], texts)
    built.save(tmp_path / "k.npz", "v1")
    loaded = KeywordIndex.load(tmp_path / "k.npz", "v1")
    queries = ["redis timeout", "缓存雪崩", "ERR42 gateway", "file_9.py", "kafka kafka auth", "nothing here"]
    for query in queries:
        assert loaded.search(query, 10) == built.search(query, 10)
    assert any(hit.matched_terms for hit in built.search("redis timeout", 10))


def test_matched_terms_are_the_query_terms_the_passage_holds():
    index = KeywordIndex.build(["a", "b"], ["redis cache timeout", "redis gateway"])
    found = {h.id: h.matched_terms for h in index.search("timeout redis gateway", 5)}
    assert found == {"a": ("timeout", "redis"), "b": ("redis", "gateway")}


def test_an_empty_index_is_kept_and_loaded(tmp_path):
    empty = KeywordIndex.build(["a"], ["   "])
    empty.save(tmp_path / "k.npz", "v1")
    assert KeywordIndex.load(tmp_path / "k.npz", "v1").search("anything", 3) == []


@pytest.mark.parametrize("damage", ["key", "bytes", "matrix", "tokens", "token starts"])
def test_a_stale_or_damaged_kept_index_is_refused(tmp_path, damage):
    import numpy as np

    from workbench.runtime.array_file import ArrayFileUnusable

    index = KeywordIndex.build(["a", "b"], ["redis cache", "kafka queue"])
    path = tmp_path / "k.npz"
    index.save(path, "v1")
    key = "v1"
    if damage == "key":
        key = "v2"
    elif damage == "bytes":
        data = bytearray(path.read_bytes())
        data[len(data) // 2] ^= 0xFF
        path.write_bytes(bytes(data))
    else:  # a consistent file whose matrix, or whose passages' tokens, point past its passages or words
        from workbench.runtime.array_file import from_text, read_array_file, write_array_file
        from workbench.corpus.keyword_index import _FORMAT, _KIND, _versioned

        manifest, arrays = read_array_file(path, _KIND, _FORMAT, _versioned("v1"))
        if damage == "matrix":
            arrays["indices"] = arrays["indices"] + 5
            assert np.all(arrays["indices"] >= 5)
        elif damage == "tokens":
            arrays["tokens"] = arrays["tokens"] + 100
        else:  # starts that run backwards
            arrays["token_starts"] = np.array([0, 5, 4], dtype=np.int64)
        write_array_file(path, _KIND, _FORMAT, _versioned("v1"), arrays)
        assert from_text(arrays["ids"]) == ["a", "b"]
    with pytest.raises(ArrayFileUnusable):
        KeywordIndex.load(path, key)
    earlier = KeywordIndex.load_earlier(path, "v")  # a stale one lends its tokens; a damaged one nothing
    assert (earlier is not None) == (damage == "key")


def _corpus(n: int, seed: int) -> tuple[list[str], list[str]]:
    rng = random.Random(seed)
    words = "redis postgres kafka 缓存 雪崩 token auth service gateway timeout ERR42 file_9.py queue".split()
    return ([f"c{seed}-{i:04d}" for i in range(n)],
            [" ".join(rng.choice(words) for _ in range(rng.randint(0, 30))) + f" only{seed}x{i}" for i in range(n)])


def test_a_build_lent_an_earlier_index_answers_as_a_fresh_one_and_tokenizes_only_new_passages(tmp_path, monkeypatch):
    import workbench.corpus.keyword_index as keyword_index

    old_ids, old_texts = _corpus(400, 1)
    new_ids, new_texts = _corpus(50, 2)
    KeywordIndex.build(old_ids, old_texts).save(tmp_path / "k.npz", "ws1:7")
    earlier = KeywordIndex.load_earlier(tmp_path / "k.npz", "ws1:")
    assert earlier is not None and KeywordIndex.load_earlier(tmp_path / "k.npz", "ws2:") is None
    ids, texts = old_ids[100:] + new_ids, old_texts[100:] + new_texts  # 100 passages gone, 50 new
    calls = []
    monkeypatch.setattr(keyword_index, "tokenize", lambda text: calls.append(text) or tokenize(text))
    lent = KeywordIndex.build(ids, texts, earlier=earlier)
    assert sorted(calls) == sorted(new_texts)
    monkeypatch.undo()
    fresh = KeywordIndex.build(ids, texts)
    queries = ["redis timeout", "缓存雪崩", "ERR42 gateway", "file_9.py", "only1x3 redis", "only1x300", "only2x7", "none"]
    for query in queries:
        assert lent.search(query, 20) == fresh.search(query, 20)
    assert lent.search("only1x3", 5) == [] and lent.search("only2x7", 1)[0].id == "c2-0007"
    lent.save(tmp_path / "k2.npz", "ws1:8")
    for query in queries:
        assert KeywordIndex.load(tmp_path / "k2.npz", "ws1:8").search(query, 20) == fresh.search(query, 20)


def test_an_earlier_index_that_lost_most_of_its_passages_lends_nothing(monkeypatch):
    import workbench.corpus.keyword_index as keyword_index

    old_ids, old_texts = _corpus(100, 1)
    earlier = KeywordIndex.build(old_ids, old_texts)
    calls = []
    monkeypatch.setattr(keyword_index, "tokenize", lambda text: calls.append(text) or tokenize(text))
    rebuilt = KeywordIndex.build(old_ids[:40], old_texts[:40], earlier=earlier)
    assert len(calls) == 40  # 40 of 100 kept: tokenized again, a vocabulary without the 60 others' words
    assert "only1x80" not in rebuilt._bm25.vocab_dict


def test_an_index_kept_by_the_earlier_format_answers_and_lends_no_tokens(tmp_path, monkeypatch):
    import workbench.corpus.keyword_index as keyword_index
    from workbench.runtime.array_file import read_array_file, write_array_file
    from workbench.corpus.keyword_index import _FORMAT, _KIND, _versioned

    ids, texts = _corpus(60, 3)
    built = KeywordIndex.build(ids, texts)
    built.save(tmp_path / "k.npz", "ws:1")
    _, arrays = read_array_file(tmp_path / "k.npz", _KIND, _FORMAT, _versioned("ws:1"))
    del arrays["tokens"], arrays["token_starts"]  # what format 1 kept
    write_array_file(tmp_path / "k.npz", _KIND, 1, _versioned("ws:1"), arrays)
    for query in ("redis timeout", "缓存雪崩", "only3x7"):
        assert KeywordIndex.load(tmp_path / "k.npz", "ws:1").search(query, 10) == built.search(query, 10)
    earlier = KeywordIndex.load_earlier(tmp_path / "k.npz", "ws:")
    calls = []
    monkeypatch.setattr(keyword_index, "tokenize", lambda text: calls.append(text) or tokenize(text))
    assert KeywordIndex.build(ids, texts, earlier=earlier).search("only3x7", 1)[0].id == "c3-0007"
    assert len(calls) == 60 + 1  # every passage tokenized, and the query
