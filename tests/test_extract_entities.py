"""Typed entity mentions, co-mention triples and extract_all's endpoint mentions."""

import time
from itertools import combinations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from workbench.text.name_keys import name_key
from workbench.extract import EntityExtractor, extract_all, extractors_from_settings
from workbench.extract.entities import _window_pairs_reference, window_pairs
from workbench.model import Chunk, Document
from workbench.settings import EntityPattern, ExtractionSettings


def _doc_and_chunks(*texts):
    text = "\n".join(texts)
    document = Document("doc.md", "/tmp/doc.md", "Doc", "text", text, "hash")
    chunks, offset = [], 0
    for i, part in enumerate(texts):
        chunks.append(Chunk(f"c{i}", "doc.md", i, part, offset, offset + len(part)))
        offset += len(part) + 1
    return document, chunks


@pytest.fixture(scope="module")
def default_entities():
    s = ExtractionSettings()
    return EntityExtractor(s.entity_patterns, s.pattern_timeout_seconds, comention=True)


def test_terms_match_case_insensitively_on_whole_words(default_entities):
    doc, chunks = _doc_and_chunks("We moved redis and POSTGRESQL off the Rediscover box.")
    found = default_entities.extract(doc, chunks)
    assert [(m.surface, m.entity_type, m.start) for m in found.mentions] == [
        ("redis", "technology", 9),
        ("POSTGRESQL", "technology", 19),
    ]


def test_common_word_terms_need_a_capital(default_entities):
    doc, chunks = _doc_and_chunks("We go live on Friday; the Go service is ready.")
    surfaces = [m.surface for m in default_entities.extract(doc, chunks).mentions]
    assert "go" not in surfaces and "Go service" in surfaces


def test_regex_types_services_and_people(default_entities):
    doc, chunks = _doc_and_chunks("@dana restarted the Payment Gateway.")
    found = default_entities.extract(doc, chunks)
    assert [(m.surface, m.entity_type) for m in found.mentions] == [("@dana", "person"), ("Payment Gateway", "service")]


def test_overlapping_matches_keep_the_longest():
    extractor = EntityExtractor(
        [EntityPattern(type="technology", terms=["Redis"]), EntityPattern(type="service", regex=r"Redis Cluster")], 1.0, False
    )
    doc, chunks = _doc_and_chunks("The Redis Cluster failed over.")
    assert [(m.surface, m.entity_type) for m in extractor.extract(doc, chunks).mentions] == [("Redis Cluster", "service")]


def test_type_of_uses_terms_then_regexes(default_entities):
    assert default_entities.type_of("the Kafka") == "technology"
    assert default_entities.type_of("Billing Service") == "service"
    assert default_entities.type_of("token budget") == "concept"


def test_comention_gives_one_pair_per_entity_pair_ordered_by_key(default_entities):
    doc, chunks = _doc_and_chunks("Redis, Kafka and PostgreSQL sit behind the Billing API. Redis again.")
    found = default_entities.extract(doc, chunks)
    pairs = [(t.subject, t.object) for t in found.triples]
    assert len(pairs) == 6  # 4 distinct entities: C(4, 2)
    assert all(name_key(a) < name_key(b) for a, b in pairs)
    assert {t.origin for t in found.triples} == {"comention"}
    assert {t.relation for t in found.triples} == {"co_mentioned"}


def test_comention_stays_within_a_chunk(default_entities):
    doc, chunks = _doc_and_chunks("Redis is fast.", "Kafka is durable.")
    assert default_entities.extract(doc, chunks).triples == []


def test_comention_is_capped_per_chunk_and_the_rest_counted():
    cap = ExtractionSettings().max_comention_pairs
    terms = [f"Tool{i:02d}" for i in range(cap)]  # one sentence: cap * (cap - 1) / 2 pairs within the window
    extractor = EntityExtractor([EntityPattern(type="technology", terms=terms)], 1.0, True)
    doc, chunks = _doc_and_chunks(" ".join(terms))
    found = extractor.extract(doc, chunks)
    pairs = cap * (cap - 1) // 2
    assert len(found.triples) == cap
    assert found.problems == [f"co-mention capped in 1 chunk(s): {pairs - cap} farther pair(s) counted, not stored "
                              f"(extraction.max_comention_pairs is {cap} per chunk)"]


def test_comention_pairs_only_entities_within_the_sentence_window():
    extractor = EntityExtractor([EntityPattern(type="technology", terms=["Redis", "Kafka", "Vault", "Nginx"])], 1.0, True,
                                comention_window=1)
    doc, chunks = _doc_and_chunks("Redis failed. Kafka lagged. Vault was fine.\nNginx restarted.")
    pairs = {(t.subject, t.object) for t in extractor.extract(doc, chunks).triples}
    assert pairs == {("Kafka", "Redis"), ("Kafka", "Vault"), ("Nginx", "Vault")}
    same_sentence = EntityExtractor([EntityPattern(type="technology", terms=["Redis", "Kafka"])], 1.0, True,
                                    comention_window=0)
    assert same_sentence.extract(*_doc_and_chunks("Redis failed. Kafka lagged.")).triples == []
    assert len(same_sentence.extract(*_doc_and_chunks("Redis failed and Kafka lagged.")).triples) == 1


def test_a_chat_message_links_every_pair_of_its_entities_bounded_per_message():
    """Seed 002: every two entities of one message are co-mentioned, however many sentences lie
    between them; the pairs past max_comention_pairs are counted, message by message."""
    terms = ["Redis", "Kafka", "Vault", "Nginx"]
    extractor = EntityExtractor([EntityPattern(type="technology", terms=terms)], 1.0, True, comention_window=0,
                                max_comention_pairs=5)
    message = "Redis failed. The team met.\nWe looked at graphs. Then Kafka lagged. Later Vault. And Nginx."
    text = message + "\n" + "Redis and Kafka."
    document = Document("chat.jsonl", "/tmp/chat.jsonl", "chat", "conversation", text, "hash")
    chunks = [Chunk("m1", "chat.jsonl", 0, message, 0, len(message)),
              Chunk("m2", "chat.jsonl", 1, "Redis and Kafka.", len(message) + 1, len(text))]
    found = extractor.extract(document, chunks)
    first = {(t.subject, t.object) for t in found.triples if t.chunk_id == "m1"}
    assert len(first) == 5 and first <= {tuple(sorted(pair)) for pair in combinations(terms, 2)}
    assert {(t.subject, t.object) for t in found.triples if t.chunk_id == "m2"} == {("Kafka", "Redis")}
    assert found.problems == ["co-mention capped in 1 chunk(s): 1 farther pair(s) counted, not stored "
                              "(extraction.max_comention_pairs is 5 per chunk)"]
    # The same text as a note keeps to the sentence window: no pair of two sentences.
    note = Document("note.md", "/tmp/note.md", "note", "text", text, "hash")
    assert [t.chunk_id for t in extractor.extract(note, chunks).triples] == ["m2"]


def test_comention_keeps_the_nearest_pairs_first():
    extractor = EntityExtractor([EntityPattern(type="technology", terms=["Redis", "Kafka", "Vault"])], 1.0, True,
                                comention_window=1, max_comention_pairs=1)
    doc, chunks = _doc_and_chunks("Vault is sealed. Redis and Kafka are fine.")
    found = extractor.extract(doc, chunks)
    assert [(t.subject, t.object) for t in found.triples] == [("Kafka", "Redis")]  # same sentence beats adjacent
    assert "2 farther pair(s) counted" in found.problems[0]


_sentence_sets = st.dictionaries(st.sampled_from([f"e{i}" for i in range(14)]),
                                 st.lists(st.integers(0, 9), min_size=1, max_size=4), max_size=14)


@settings(max_examples=300, deadline=None)
@given(_sentence_sets, st.integers(0, 4), st.integers(0, 40))
def test_window_pairs_agrees_with_the_pairwise_reference(sentences_of, window, cap):
    assert window_pairs(sentences_of, window, cap) == _window_pairs_reference(sentences_of, window, cap)


def test_window_pairs_of_a_crowded_sentence_lists_only_the_cap():
    sentences_of = {f"e{i:04d}": [0] for i in range(3000)}  # 4,498,500 pairs in one sentence
    pairs, dropped = window_pairs(sentences_of, 1, 40)
    assert len(pairs) == 40 and dropped == 3000 * 2999 // 2 - 40


def test_comention_can_be_switched_off():
    extractor = EntityExtractor([EntityPattern(type="technology", terms=["Redis", "Kafka"])], 1.0, comention=False)
    doc, chunks = _doc_and_chunks("Redis and Kafka.")
    assert extractor.extract(doc, chunks).triples == []


def test_slow_entity_regex_is_reported_not_fatal():
    extractor = EntityExtractor(
        [EntityPattern(type="technology", terms=["Redis"]), EntityPattern(type="slow", regex=r"(?:a|aa)+$")], 0.2, False
    )
    doc, chunks = _doc_and_chunks("Redis " + "a" * 60 + "b")
    started = time.monotonic()
    found = extractor.extract(doc, chunks)
    assert time.monotonic() - started < 5
    assert [m.surface for m in found.mentions] == ["Redis"]
    assert len(found.problems) == 1 and "timed out on chunk c0" in found.problems[0]


def test_invalid_entity_regex_is_a_value_error():
    with pytest.raises(ValueError, match="entity_patterns"):
        EntityExtractor([EntityPattern(type="x", regex="[unclosed")], 1.0, False)


def test_extract_all_mentions_every_triple_endpoint():
    extractors = extractors_from_settings(ExtractionSettings())
    doc, chunks = _doc_and_chunks("The ledger depends on the token budget.")
    found = extract_all(doc, chunks, extractors)
    mentioned = {(name_key(m.surface), m.chunk_id) for m in found.mentions}
    for triple in found.triples:
        assert (name_key(triple.subject), triple.chunk_id) in mentioned
        assert (name_key(triple.object), triple.chunk_id) in mentioned
    ledger = next(m for m in found.mentions if m.surface == "ledger")
    assert (ledger.entity_type, ledger.start) == ("concept", 4)


def test_extract_all_does_not_duplicate_typed_mentions():
    extractors = extractors_from_settings(ExtractionSettings())
    doc, chunks = _doc_and_chunks("Kafka depends on ZooKeeper.")
    found = extract_all(doc, chunks, extractors)
    assert sum(1 for m in found.mentions if name_key(m.surface) == "kafka") == 1


@settings(max_examples=40, deadline=None)
@given(st.lists(st.sampled_from(["Redis", "Kafka", "Docker", "Nginx", "Vault", "Consul", "etcd"]), max_size=12))
def test_comention_count_is_pairs_of_distinct_entities(names):
    extractor = EntityExtractor([EntityPattern(type="technology", terms=["Redis", "Kafka", "Docker", "Nginx", "Vault", "Consul", "etcd"])], 1.0, True)
    doc, chunks = _doc_and_chunks(" and ".join(names) + ".")
    triples = extractor.extract(doc, chunks).triples
    assert len(triples) == len(list(combinations(set(names), 2)))


def test_any_of_guard_keeps_a_regex_off_chunks_without_its_words():
    from workbench.extract.entities import EntityExtractor
    from workbench.model import Chunk, Document
    from workbench.settings import EntityPattern

    slow = EntityPattern(type="x", regex=r"(?:a|aa)+$", any_of=["zzz"])
    extractor = EntityExtractor([slow], timeout_seconds=0.2)
    for text, timed_out in (("a" * 60 + "b", False), ("zzz " + "a" * 60 + "b", True)):
        doc = Document("d", "/d", "d", "text", text, "h")
        found = extractor.extract(doc, [Chunk("c", "d", 0, text, 0, len(text))])
        assert any("timed out" in p for p in found.problems) is timed_out
