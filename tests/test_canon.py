"""Name keys, the canonicalizer (aliases, splits), merge records and merge suggestions."""

import unicodedata

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from workbench.context_graph.canon import Canonicalizer, build_merges, display_names
from workbench.context_graph.merge_suggestions import suggest_merges
from workbench.text.name_keys import display_form, name_key
from workbench.context_graph.merge_suggestions import _embedding_pairs, _string_pairs, _string_pairs_reference
from workbench.model import Mention


@pytest.mark.parametrize(
    "variant", ["The Auth Service", "auth-service", "auth_service", "AuthService", "auth service.", "AUTH SERVICE", "the auth service's"]
)
def test_name_variants_share_one_key(variant):
    assert name_key(variant) == "authservice"


def test_article_is_dropped_only_as_a_whole_word():
    assert name_key("theater") == "theater"
    assert name_key("Another Service") == "anotherservice"
    assert name_key("An API") == "api"


def test_a_lone_article_keeps_its_key():
    assert name_key("The") == "the"


def test_marks_that_belong_to_names_are_kept():
    assert name_key("C++") == "c++"
    assert name_key("C#") != name_key("C")


def test_dots_inside_names_are_folded():
    assert name_key("Node.js") == name_key("NodeJS") == "nodejs"


def test_cjk_names_pass_through_without_spaces():
    assert name_key("认证 服务") == "认证服务"


def test_display_form_keeps_case_and_drops_article_and_trailing_marks():
    assert display_form("  The  Auth   Service; ") == "Auth Service"


@settings(max_examples=400, deadline=None)
@given(st.text())
@example("㉠")  # a circled Hangul letter: not alphanumeric itself, NFKC makes it the letter
def test_name_key_is_idempotent_and_total(name):
    key = name_key(name)
    assert name_key(key) == key
    # Names are NFKC-folded before keying (NAME_KEY_VERSION 2): a key is empty exactly when the
    # folded name has no letter or digit.
    assert (key == "") == (not any(ch.isalnum() for ch in unicodedata.normalize("NFKC", name)))


@settings(max_examples=200, deadline=None)
@given(st.lists(st.sampled_from(["the", "a", "Auth", "service", "-", "_", ".", "X", "'s", "Redis", " "]), max_size=8))
def test_name_key_is_idempotent_on_name_like_text(parts):
    name = " ".join(parts)
    assert name_key(name_key(name)) == name_key(name)


@settings(max_examples=200, deadline=None)
@given(st.text())
def test_display_form_never_raises_and_is_stable(text):
    once = display_form(text)
    assert display_form(once) == once


def test_aliases_apply_transitively():
    canon = Canonicalizer(aliases={"pg": "postgres", "postgres": "PostgreSQL"})
    assert canon.key("PG") == canon.key("Postgres") == "postgresql"


def test_user_alias_overrides_settings_alias():
    canon = Canonicalizer(aliases={"cache": "Redis"}, user_aliases={"cache": "Memcached"})
    assert canon.key("the cache") == "memcached"
    assert canon.explain("cache") == ("alias (user)",)


def test_alias_cycle_does_not_hang_and_merges_the_cycle():
    canon = Canonicalizer(aliases={"a1": "b1", "b1": "c1", "c1": "a1", "d1": "b1"})
    assert {canon.key(n) for n in ["a1", "b1", "c1", "d1"]} == {"a1"}


def test_split_form_gets_a_key_of_its_own():
    canon = Canonicalizer(splits={"auth-service"})
    assert canon.key("Auth Service") == "authservice"
    assert canon.key("auth-service") != canon.key("Auth Service")
    assert canon.key("auth-service.") == canon.key("auth-service")


def test_split_form_is_not_aliased():
    canon = Canonicalizer(aliases={"auth service": "Identity"}, splits={"auth-service"})
    assert canon.key("Auth Service") == "identity"
    assert canon.key("auth-service").startswith("authservice~")


def test_merges_record_counts_and_chunks_most_frequent_first():
    mentions = [
        Mention("auth-service", "c1"),
        Mention("Auth Service", "c2"),
        Mention("The Auth Service", "c3"),
        Mention("Redis", "c1"),
    ]
    [merge] = build_merges(mentions, Canonicalizer())
    assert merge.key == "authservice"
    assert merge.canonical == "Auth Service"
    assert [(f.form, f.count, f.chunk_ids) for f in merge.surface_forms] == [
        ("Auth Service", 2, ("c2", "c3")),
        ("auth-service", 1, ("c1",)),
    ]
    assert merge.reasons == ["name key"]


def test_merge_canonical_ties_break_by_length_then_alphabet():
    mentions = [Mention("PG", "c1"), Mention("Postgres", "c2")]
    [merge] = build_merges(mentions, Canonicalizer(aliases={"pg": "postgres"}))
    assert merge.canonical == "Postgres"
    assert merge.reasons == ["alias (settings)"]


def test_merge_reasons_name_user_alias():
    mentions = [Mention("k8s", "c1"), Mention("Kubernetes", "c2"), Mention("kubernetes", "c3")]
    [merge] = build_merges(mentions, Canonicalizer(user_aliases={"k8s": "Kubernetes"}))
    assert merge.reasons == ["name key", "alias (user)"]


def test_split_undoes_a_merge():
    mentions = [Mention("auth-service", "c1"), Mention("Auth Service", "c2")]
    assert build_merges(mentions, Canonicalizer(splits={"auth-service"})) == []


def test_display_names_cover_unmerged_keys():
    mentions = [Mention("Redis", "c1"), Mention("redis", "c2"), Mention("Redis", "c3"), Mention("Kafka", "c1")]
    assert display_names(mentions, Canonicalizer()) == {"redis": "Redis", "kafka": "Kafka"}


def test_suggestions_find_near_duplicates_and_skip_shared_keys():
    suggestions = suggest_merges(["Payment Service", "Payments Service", "payment-service", "Kafka"])
    assert [(s.a, s.b) for s in suggestions] == [("Payment Service", "Payments Service")]
    assert suggestions[0].score >= 0.85


class _PairEmbedder:
    """Puts 'Postgres' and 'PostgreSQL' on one direction, everything else orthogonal."""

    def embed(self, texts):
        rows = []
        for i, text in enumerate(texts):
            row = np.zeros(len(texts) + 1)
            row[0 if text.lower().startswith("postgres") else i + 1] = 1.0
            rows.append(row)
        return np.array(rows)


def test_suggestions_use_embedding_similarity_when_given():
    suggestions = suggest_merges(["Postgres", "PostgreSQL", "Kafka"], embedder=_PairEmbedder(), threshold=0.9)
    assert [(s.a, s.b, s.reason) for s in suggestions] == [("Postgres", "PostgreSQL", "embedding similarity")]
    assert suggestions[0].score == pytest.approx(1.0)


def test_suggestions_in_a_large_name_list_find_pairs_differing_in_the_first_letter():
    names = [f"{chr(97 + i % 26)}{i * 7919 % 100003:06d}" for i in range(2100)] + ["zookeeper", "zookeepr", "kafkabroker",
                                                                                   "cafkabroker"]
    found = {(s.a, s.b) for s in suggest_merges(names, threshold=0.9)}
    assert ("zookeeper", "zookeepr") in found
    assert ("kafkabroker", "cafkabroker") in found  # the first-letter blocks of before never compared these


def _near_variants(draw_keys, alphabet):
    return st.lists(st.text(alphabet, min_size=1, max_size=14), max_size=draw_keys).flatmap(
        lambda base: st.tuples(st.just(base), st.lists(st.tuples(st.integers(0, max(len(base) - 1, 0)),
                                                                 st.integers(0, 13), st.sampled_from(alphabet),
                                                                 st.sampled_from("ids")), max_size=12)))


def _with_edits(base, edits):
    keys = list(base)
    for which, at, char, op in edits:
        if not base:
            break
        word = list(base[which])
        at = min(at, len(word))
        if op == "i":
            word.insert(at, char)
        elif op == "d" and len(word) > 1:
            word.pop(min(at, len(word) - 1))
        else:
            word[min(at, len(word) - 1)] = char
        keys.append("".join(word))
    return list(dict.fromkeys(keys))


@settings(max_examples=300, deadline=None)
@given(_near_variants(6, "abcde"), st.sampled_from([0.6, 0.7, 0.8, 0.85, 0.9, 0.95]))
def test_string_pairs_are_those_of_comparing_every_pair(drawn, threshold):
    keys = _with_edits(*drawn)
    assert _string_pairs(keys, threshold) == _string_pairs_reference(keys, threshold)


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 40), st.integers(1, 9), st.sampled_from([0.0, 0.5, 0.9]), st.integers(0, 2**31 - 1))
def test_embedding_pairs_are_those_of_the_dense_matrix(n, block_rows, threshold, seed):
    rng = np.random.default_rng(seed)
    vectors = rng.normal(size=(n, 3))
    vectors[rng.random(n) < 0.2] = vectors[0] if n else 0  # some names embed alike
    covered = rng.random(n) < 0.9
    unit = vectors / np.where(np.linalg.norm(vectors, axis=1, keepdims=True) == 0, 1, np.linalg.norm(vectors, axis=1, keepdims=True))
    dense = unit @ unit.T
    expected = {(i, j): dense[i, j] for i in range(n) for j in range(i + 1, n)
                if covered[i] and covered[j] and dense[i, j] >= threshold + 1e-9}
    found = _embedding_pairs(vectors, covered, threshold, block_rows=block_rows)
    assert set(expected) <= set(found)
    assert all(abs(found[p] - dense[p]) < 1e-12 and dense[p] >= threshold - 1e-9 for p in found)


def test_names_the_model_cannot_represent_are_not_suggested_by_embedding(embedder):
    # all-MiniLM-L6-v2 has no Chinese vocabulary: these distinct names embed identically.
    suggestions = suggest_merges(["令牌缓存", "认证服务", "登录流程"], embedder=embedder, threshold=0.85)
    assert suggestions == []
