"""Relation triples from phrases and user regexes."""

import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from workbench.extract.patterns import RelationPatternExtractor
from workbench.model import Chunk, Document
from workbench.settings import ExtractionSettings, RelationPattern


def _run(extractor, text, chunk_id="c1"):
    document = Document("doc.md", "/tmp/doc.md", "Doc", "text", text, "hash")
    return extractor.extract(document, [Chunk(chunk_id, "doc.md", 0, text, 0, len(text))])


def _edges(extractor, text):
    return [(t.subject, t.relation, t.object) for t in _run(extractor, text).triples]


@pytest.fixture(scope="module")
def default_extractor():
    return RelationPatternExtractor(ExtractionSettings().relations, 1.0)


def test_depends_on_two_objects_gives_two_edges(default_extractor):
    assert _edges(default_extractor, "Checkout depends on Billing and Ledger.") == [
        ("Checkout", "depends_on", "Billing"),
        ("Checkout", "depends_on", "Ledger"),
    ]


def test_depends_on_list_gives_one_edge_per_object(default_extractor):
    assert _edges(default_extractor, "Checkout depends on Billing, Ledger and Inventory.") == [
        ("Checkout", "depends_on", "Billing"),
        ("Checkout", "depends_on", "Ledger"),
        ("Checkout", "depends_on", "Inventory"),
    ]


def test_reverse_phrase_swaps_subject_and_object(default_extractor):
    assert _edges(default_extractor, "The Platform team owns Redis.") == [("Redis", "owned_by", "Platform team")]


def test_subject_starts_at_clause_boundary(default_extractor):
    assert _edges(default_extractor, "In production, the auth service depends on the token cache.") == [
        ("auth service", "depends_on", "token cache")
    ]


def test_articles_and_fillers_are_stripped_from_both_ends(default_extractor):
    assert _edges(default_extractor, "And the gateway also uses an Envoy sidecar.") == [("gateway", "uses", "Envoy sidecar")]


def test_object_list_ends_at_clause_words(default_extractor):
    assert _edges(default_extractor, "The indexer reads from Kafka and S3 because of latency.") == [
        ("indexer", "reads_from", "Kafka"),
        ("indexer", "reads_from", "S3"),
    ]


@pytest.mark.parametrize("text, expected", [
    ("The Tax Service calls the Upload Worker over Nginx with a 400 ms budget.", ("Tax Service", "calls", "Upload Worker")),
    ("The exporter writes to S3 into the archive bucket.", ("exporter", "writes_to", "S3")),
    ("The gateway depends on Redis across regions.", ("gateway", "depends_on", "Redis")),
    ("The billing job depends on Kafka without retries.", ("billing job", "depends_on", "Kafka")),
])
def test_an_object_ends_at_a_preposition_after_it(default_extractor, text, expected):
    assert _edges(default_extractor, text) == [expected]


def test_a_passive_clause_after_the_objects_is_no_object(default_extractor):
    text = "A bad config in Cassandra caused the Notification Worker outage, fixed by @quinn."
    assert _edges(default_extractor, text) == [("Notification Worker outage", "caused_by", "bad config in Cassandra")]
    # a noun in -ed stays an object when it is not a clause of its own
    assert _edges(default_extractor, "The ranker depends on Kafka and the feed by default.") == [
        ("ranker", "depends_on", "Kafka"), ("ranker", "depends_on", "feed")]


def test_relative_clause_takes_the_noun_before_which(default_extractor):
    edges = _edges(default_extractor, "Traffic goes to the auth service, which depends on Redis.")
    assert ("auth service", "depends_on", "Redis") in edges


def test_subject_is_limited_to_its_last_six_words(default_extractor):
    [(subject, _, _)] = _edges(default_extractor, "one two three four five six seven eight relies on Vault.")
    assert subject == "three four five six seven eight"


def test_negated_phrase_gives_no_edge(default_extractor):
    assert _edges(default_extractor, "The billing service does not depend on Redis.") == []
    assert _edges(default_extractor, "The billing service doesn't use Kafka.") == []


def test_pronoun_subject_gives_no_edge(default_extractor):
    assert _edges(default_extractor, "It uses Redis.") == []


def test_two_phrases_in_one_sentence_split_the_list_between_them(default_extractor):
    assert _edges(default_extractor, "Checkout depends on Billing and Search uses Elasticsearch.") == [
        ("Checkout", "depends_on", "Billing"),
        ("Search", "uses", "Elasticsearch"),
    ]


def test_chinese_phrases_split_on_chinese_punctuation(default_extractor):
    assert _edges(default_extractor, "认证服务依赖于Redis和Kafka。订单服务使用Postgres，效果很好。") == [
        ("认证服务", "depends_on", "Redis"),
        ("认证服务", "depends_on", "Kafka"),
        ("订单服务", "uses", "Postgres"),
    ]


def test_triples_carry_type_chunk_origin_and_confidence():
    extractor = RelationPatternExtractor(
        [RelationPattern(relation="uses", phrases=["uses"])], 1.0, type_of=lambda n: "technology" if n == "Redis" else "concept"
    )
    [triple] = _run(extractor, "The cart uses Redis.", chunk_id="chunk-7").triples
    assert (triple.chunk_id, triple.origin, triple.confidence) == ("chunk-7", "pattern", 1.0)
    assert (triple.subject_type, triple.object_type) == ("concept", "technology")


def test_raw_regex_with_named_groups_gives_triples():
    extractor = RelationPatternExtractor(
        [RelationPattern(relation="alerts", regex=r"(?P<subject>[A-Z]\w+) pages (?P<object>@\w+)")], 1.0
    )
    assert _edges(extractor, "Grafana pages @oncall at night.") == [("Grafana", "alerts", "@oncall")]


def test_invalid_regex_is_a_value_error_naming_it():
    with pytest.raises(ValueError, match=r"\(unclosed"):
        RelationPatternExtractor([RelationPattern(relation="x", regex="(unclosed")], 1.0)


def test_regex_without_named_groups_is_a_value_error():
    with pytest.raises(ValueError, match="subject"):
        RelationPatternExtractor([RelationPattern(relation="x", regex=r"(\w+) is (\w+)")], 1.0)


def test_catastrophic_textbook_regex_does_not_hang():
    extractor = RelationPatternExtractor([RelationPattern(relation="x", regex=r"(?P<subject>(a+)+$)(?P<object>)")], 0.5)
    started = time.monotonic()
    _run(extractor, "a" * 40 + "b")
    assert time.monotonic() - started < 5


def test_catastrophic_regex_is_stopped_and_reported():
    pattern = r"(?P<subject>(?:a|aa)+)(?P<object>)$"
    extractor = RelationPatternExtractor([RelationPattern(relation="slow", regex=pattern)], 0.3)
    started = time.monotonic()
    result = _run(extractor, "a" * 60 + "b", chunk_id="c9")
    assert time.monotonic() - started < 5
    assert result.problems == [f"pattern slow '{pattern}' timed out on chunk c9 after 0.3 s; skipped"]
    assert result.triples == []


def test_timed_out_regex_does_not_stop_phrase_extraction():
    extractor = RelationPatternExtractor(
        [RelationPattern(relation="uses", phrases=["uses"]), RelationPattern(relation="slow", regex=r"(?P<subject>(?:a|aa)+)(?P<object>)$")],
        0.2,
    )
    result = _run(extractor, "Cart uses Redis. " + "a" * 60 + "b")
    assert [(t.subject, t.object) for t in result.triples] == [("Cart", "Redis")]
    assert len(result.problems) == 1


_word = st.sampled_from(["Alpha", "Beta", "Gamma", "Delta", "Omega", "Sigma", "Kappa"])


@settings(max_examples=60, deadline=None)
@given(st.lists(_word, min_size=1, max_size=5, unique=True))
def test_every_listed_object_gets_one_edge(objects):
    listed = objects[0] if len(objects) == 1 else ", ".join(objects[:-1]) + " and " + objects[-1]
    extractor = RelationPatternExtractor([RelationPattern(relation="depends_on", phrases=["depends on"])], 1.0)
    assert _edges(extractor, f"Checkout depends on {listed}.") == [("Checkout", "depends_on", o) for o in objects]


@settings(max_examples=60, deadline=None)
@given(st.text(max_size=300))
def test_any_text_extracts_without_error(text):
    result = _run(RelationPatternExtractor(ExtractionSettings().relations, 1.0), text)
    assert all(t.subject and t.object for t in result.triples)


def test_chinese_phrase_inside_a_longer_word_is_not_a_relation():
    from workbench.settings import Settings

    text = "内存使用率超过 80% 时告警。认证服务使用令牌缓存。"
    doc = Document(id="d", source_path="/d", title="t", kind="text", text=text, content_hash="h")
    found = RelationPatternExtractor(Settings().extraction.relations).extract(doc, [Chunk("c", "d", 0, text, 0, len(text))])
    assert [(t.subject, t.relation, t.object) for t in found.triples] == [("认证服务", "uses", "令牌缓存")]


def test_verbs_sharing_a_subject_each_give_an_edge():
    from workbench.settings import Settings

    text = "The inventory worker reads from Kafka, writes to S3 and calls the catalog service."
    doc = Document(id="d", source_path="/d", title="t", kind="text", text=text, content_hash="h")
    found = RelationPatternExtractor(Settings().extraction.relations).extract(doc, [Chunk("c", "d", 0, text, 0, len(text))])
    assert [(t.subject, t.relation, t.object) for t in found.triples] == [
        ("inventory worker", "reads_from", "Kafka"), ("inventory worker", "writes_to", "S3"),
        ("inventory worker", "calls", "catalog service")]
